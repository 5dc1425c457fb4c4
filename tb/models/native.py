"""The fabric's hops on the compiled data path (``$PEVB_DATAPATH=compiled``, stage 3 of
docs/performance.md's design): a TLP of the library's own that reaches a bridge's link
end crosses the bridge and the switch's routing in the library (``tb/dp/fabric.cpp``)
and waits in its egress port's queue, with no Python TLP made for it.

Python keeps what makes that exact:
- each bridge's configuration as the library reads it (:class:`BridgeState`), written
  whenever Python changes the bridge (a watch on its attributes and BAR lists);
- each switch port and the queues it routes into, in the switch's order
  (:func:`add_port`, called by :mod:`tb.models.switch`), and its relaxed-ordering
  passing;
- each link end's conditions (:class:`End`): its receive handler must still be the one
  armed (a bridge's own, behind the taps and fault injectors it knows), the receive lane
  idle, every fault injector in front of it idle, and for each kind of TLP every
  observer that wants it there the compiled protocol checker, which the library runs,
  or a passive one; copied into the end's flags in the library whenever they change
  (:meth:`End.refresh`), so the library takes an arrival there itself;
- the egress port's arbitration, which the library runs after such an arrival while
  its lane is idle and its handlers are the ones armed (:class:`EgressFlags`), and
  hands to Python (``_arbitrate_compiled``) where it stops.

Which link ends the library may take is the TB's to say (:func:`tb.env.native.arm`).

``$PEVB_DP_NATIVE=0`` leaves every hop to Python (the compiled path of stages 1 and 2),
which the equivalence tests compare against.
"""

from __future__ import annotations

import abc
import ctypes
import logging
import os
import weakref
from collections.abc import Callable
from typing import Any

from cocotbext.pcie.core.tlp import TlpType

from ..dp import RQ_BUSY, RQ_FC, RQ_MODEL, RQ_NP, BridgeView, FunctionView
from ..dp import HipCpl as HipCplOut
from .compiled_link import WAITING, LaneWork
from .timeline import LibraryAlarm, read_write_call, steps

NATIVE_ENV = "PEVB_DP_NATIVE"
# the kinds of TLP the library moves across a hop (fabric.cpp's bits)
KINDS = (
    (1, (TlpType.MEM_READ, TlpType.MEM_READ_64)),
    (2, (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64)),
    (4, (TlpType.CPL_DATA,)),
)
FROM_SECONDARY, FROM_PRIMARY = 0, 1


def enabled() -> bool:
    """Whether the library takes the hops it can (``$PEVB_DP_NATIVE``, default 1)."""
    value = os.environ.get(NATIVE_ENV, "1")
    if value not in ("0", "1"):
        raise ValueError(f"{NATIVE_ENV}={value!r}: 0 (every hop in Python) or 1")
    return value == "1"


class BridgeState(ctypes.Structure):
    """A bridge as the library's hops read it (``dp_bridge``): its own function's view,
    its windows and bus range, whether it is a host bridge."""

    _fields_ = [
        ("fn", FunctionView),
        ("win", BridgeView),
        ("root", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
    ]


class _Watched(list):
    """A BAR list that tells its bridge when an entry is written."""

    def __init__(self, items, changed: Callable[[], None]) -> None:
        super().__init__(items)
        self._changed = changed

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self._changed()


_WATCHED_CLASSES: dict[type, type] = {}


def _changed(obj: Any, name: str | None = None) -> None:
    """Tell the watchers of ``obj`` that its attribute ``name`` (None: its BAR lists)
    has changed."""
    for names, hook in obj.__dict__.get("_dp_hooks", ()):
        if names is None or name is None or name in names:
            hook()


def _watch(obj: Any, changed: Callable[[], None], names: frozenset[str] | None = None) -> None:
    """Call ``changed()`` after every attribute of ``obj`` is set (only those of
    ``names``, when given) and, for a bridge or function, every write into its BAR
    lists: the object's class is swapped for a subclass that says so (once; a later
    watcher is added to the first)."""
    hooks = obj.__dict__.get("_dp_hooks")
    if hooks is not None:
        hooks.append((names, changed))
        return
    cls = type(obj)
    sub = _WATCHED_CLASSES.get(cls)
    if sub is None:

        def __setattr__(self, name: str, value: Any) -> None:
            if name in ("bar", "bar_mask") and not isinstance(value, _Watched):
                value = _Watched(value, lambda: _changed(self))
            object.__setattr__(self, name, value)
            if name != "_dp_hooks":
                _changed(self, name)

        sub = type(cls.__name__, (cls,), {"__setattr__": __setattr__, "__module__": cls.__module__})
        _WATCHED_CLASSES[cls] = sub
    obj.__class__ = sub
    object.__setattr__(obj, "_dp_hooks", [(names, changed)])
    if hasattr(obj, "bar"):
        obj.bar = obj.bar
        obj.bar_mask = obj.bar_mask


class WatchedList(list):
    """A list that calls ``changed()`` after each change (for the compiled data path's
    copies of what depends on it)."""

    def __init__(self, items: Any, changed: Callable[[], None]) -> None:
        super().__init__(items)
        self._changed = changed

    def append(self, rule: Any) -> None:
        super().append(rule)
        self._changed()

    def extend(self, rules: Any) -> None:
        super().extend(rules)
        self._changed()

    def insert(self, index: Any, rule: Any) -> None:
        super().insert(index, rule)
        self._changed()

    def remove(self, rule: Any) -> None:
        super().remove(rule)
        self._changed()

    def pop(self, index: Any = -1) -> Any:
        out = super().pop(index)
        self._changed()
        return out

    def clear(self) -> None:
        super().clear()
        self._changed()

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        self._changed()

    def __delitem__(self, index: Any) -> None:
        super().__delitem__(index)
        self._changed()

    def __iadd__(self, rules: Any) -> WatchedList:
        super().__iadd__(rules)
        self._changed()
        return self


_LOG_LISTENERS: list[weakref.WeakMethod] = []


def _on_log_levels(listener: Callable[[], None]) -> None:
    """Call ``listener()`` (a bound method, held weakly) whenever a logger's level may
    have changed: :mod:`logging` clears its loggers' level caches then
    (``Manager._clear_cache``, from ``Logger.setLevel`` and ``logging.disable``)."""
    manager = logging.Logger.manager
    if "_clear_cache" not in vars(manager):
        original = manager._clear_cache

        def clear_cache() -> None:
            original()
            for ref in list(_LOG_LISTENERS):
                method = ref()
                if method is None:
                    _LOG_LISTENERS.remove(ref)
                else:
                    method()

        manager._clear_cache = clear_cache
    _LOG_LISTENERS.append(weakref.WeakMethod(listener))


class ServeFlags(ctypes.Structure):
    """What the root complex's answers in the library take (``fabric.cpp``'s
    ``ServeFlags``): whether they are the library's, and the root complex's Max Payload
    Size code, read completion boundary of 128 bytes and split at every boundary."""

    _fields_ = [(name, ctypes.c_uint32) for name in ("live", "mps", "rcb_128", "split")]


class EndFlags(ctypes.Structure):
    """Why Python decides an arrival at a bridge's end or the card's (``dp.h``'s
    ``dp_end_flags``: the ``HOLD_`` bits), whether the checker there stops at its first
    broken rule, and the step before which a fault injector's stall in front may still
    hold a TLP."""

    _fields_ = [("holds", ctypes.c_uint32), ("stop", ctypes.c_int32), ("until", ctypes.c_uint64)]


class EgressFlags(ctypes.Structure):
    """What a switch port's egress arbitration needs of Python's state (``fabric.cpp``'s
    ``EgressFlags``): its lane runs, and it is the library's to run; and what the library
    writes: a sender of its own holds it (it waits for the wire's next place, or has
    handed the arbitration to Python, whose lane has not taken it yet)."""

    _fields_ = [("busy", ctypes.c_uint32), ("live", ctypes.c_uint32), ("held", ctypes.c_uint32)]


# dp.h's reasons an arrival at a link end is Python's: its receive handler is not the one
# armed, its receive lane is busy, a gate stands in front (or the model is not ready), a
# passive observer is shown what arrives, not armed
HOLD_HANDLER, HOLD_LANE, HOLD_GATES, HOLD_SHOWN, HOLD_OFF = 1, 2, 4, 8, 16


def checker_at(checker: Any, link: str | None, direction: str | None) -> tuple[Any, int, int]:
    """What the library's hops pass for the compiled checker ``checker`` (None: none)
    seeing ``link`` travelling ``direction``: its library state, the link's number, and
    the direction (0 up, 1 down)."""
    way = 0 if direction == "up" else 1
    if checker is None:
        return None, 0, way
    return checker.ck, checker.link_number(link), way


def fabric_of(line: Any) -> Fabric:
    """The :class:`Fabric` of compiled timeline ``line``, made on first use."""
    if line._fabric is None:
        line._fabric = Fabric(line)
    return line._fabric


class Fabric:
    """The library's side of the switches' ports, bridges and link ends of one
    compiled timeline."""

    def __init__(self, line: Any) -> None:
        self.line = line
        self.lib = line.lib
        self.fab = self.lib.dp_fab_new()
        self.ports: list[Any] = []  # the switch ports, by the fabric's number
        self.crossings = 0  # hops the library took: into a switch, out onto a link
        self.bar1_answers = 0  # of those, requests to the GPU's BAR1 it answered
        self.card_cpls = 0  # and completions it took for the card
        self.gpu: Any = None  # the GPU's end (GpuServe), which answers on arrival too
        self.cards: list[Any] = []  # the cards' ends (CardCpl), which take them too
        # and completions the library's RC loop wrote for the RTL, the waits for room it
        # made, the times Python's loop took over from it
        self.rc_turns = self.rc_waits = self.rc_adopted = 0
        # the cards' ends that drain their sinks (CardEnd.drain), the posted writes they
        # sent, the memory reads they issued, their drains and of those the ones that
        # called Python
        self.drains: list[Any] = []
        self.rq_writes = self.rq_reads = self.rq_drains = self.rq_handed = 0
        self.rq_waited = 0  # of the writes those sent after a wait for the link
        self.rq_adopted = 0  # writes the model's RQ logic handed to the library
        self._states: dict[int, tuple[Any, BridgeState]] = {}

    def __del__(self) -> None:
        fab, self.fab = getattr(self, "fab", None), None
        if fab is not None:
            self.lib.dp_fab_free(fab)

    def bridge(self, bridge: Any) -> int:
        """The library's view of ``bridge`` (its address), kept up to date from now."""
        known = self._states.get(id(bridge))
        if known is not None:
            return ctypes.addressof(known[1])
        address = self.lib.dp_fab_bridge(self.fab)
        state = BridgeState.from_address(address)
        self._states[id(bridge)] = (bridge, state)

        def changed() -> None:
            # (the bridge keeps this fabric, and the library's memory, alive with it)
            if self.fab is None:
                return
            state.fn = FunctionView.of(bridge)
            state.win = BridgeView.of(bridge)
            state.root = int(bool(getattr(bridge, "root", False)))

        _watch(bridge, changed)
        changed()
        return address

    def add_port(self, port: Any, switch: Any, number: int) -> int:
        """Switch port ``port`` (number ``number`` of ``switch``'s library state): its
        number in the fabric."""
        index = self.lib.dp_fab_port(
            self.fab, self.bridge(port.bridge), switch.sw, number, int(bool(port.upstream))
        )
        self.ports.append(port)
        return index

    def egress_flags(self, port: Any) -> EgressFlags:
        """Switch port ``port``'s egress flags in the library (:class:`EgressFlags`),
        which Python keeps: not the library's to run until an :class:`Egress` says so."""
        return EgressFlags.from_address(self.lib.dp_fab_egress_flags(self.fab, port.dp_index))

    def take_crossings(self) -> int:
        """The hops taken on arrival with no Python since the last call (added to
        :attr:`crossings`)."""
        self.crossings += self.lib.dp_fab_crossings(self.fab)
        if self.gpu is not None:
            answered = self.gpu.answered()
            self.crossings += answered
            self.bar1_answers += answered
        for card in self.cards:  # (the completions the model moved on by in the library)
            moved = self.lib.dp_card_end_turns(card.end)
            self.crossings += moved
            self.card_cpls += moved
            waits, adopted = ctypes.c_uint64(), ctypes.c_uint64()
            self.rc_turns += self.lib.dp_rc_loop_turns(
                card.loop, ctypes.byref(waits), ctypes.byref(adopted)
            )
            self.rc_waits += waits.value
            self.rc_adopted += adopted.value
        for end in self.drains:
            sent, waited, adopted, reads, drains, handed = end.counts()
            self.crossings += sent + reads
            self.rq_writes += sent
            self.rq_waited += waited
            self.rq_adopted += adopted
            self.rq_reads += reads
            self.rq_drains += drains
            self.rq_handed += handed
        return self.crossings

    def route(self, source: Any, to: Any, queue: int) -> None:
        """``source`` routes into ``queue`` towards ``to`` next (after what it has)."""
        self.lib.dp_fab_route(self.fab, source.dp_index, to.dp_index, queue)

    def ro_passing(self, port: Any) -> None:
        """``port``'s relaxed-ordering passing, as Python has set it."""
        self.lib.dp_fab_ro_passing(self.fab, port.dp_index, int(bool(port.ro_passing)))


class PortEnd(abc.ABC):
    """A link port's end the library may take its own TLPs past (the port's
    ``native_end``; :meth:`tb.models.compiled_link.CompiledTlpPort.received` calls
    :meth:`cross`): which kinds and the checker that sees them there are
    :func:`tb.env.native.arm`'s plan (:meth:`set`), and a bench's meter may stand in
    for its Python observer there (``meter_observer``). An end that ``defers`` takes
    its turn in the port's receive lane for what arrives while the lane is busy."""

    defers = False

    def __init__(self) -> None:
        self.checker: Any = None
        self.link: str | None = None
        self.direction: str | None = None
        self.tap: tuple[str, str] | None = None  # (link, direction) of the port's tap
        self.meter_observer: Any = None
        # what shows the tap's passive observers the TLPs taken here (from the trace
        # ring), called as each is taken; None: none looks
        self.show: Callable[[], None] | None = None
        # the library's copy of what decides an arrival here, where it decides one
        # (``holds`` and ``stop`` first; None: it decides none)
        self.flags: Any = None

    def set(
        self,
        kinds: int,
        checker: Any,
        link: str | None,
        direction: str | None,
        reads: ReadLog | None = None,
    ) -> None:
        """What may be taken here (:data:`KINDS`' bits) and the compiled checker that
        sees it (None: none) on ``link`` travelling ``direction``; the reads that cross
        are recorded in ``reads`` (None: nowhere; only a bridge's end records them)."""
        self.checker, self.link, self.direction = checker, link, direction
        self._set(kinds, *checker_at(checker, link, direction), reads)

    @abc.abstractmethod
    def _set(self, kinds: int, ck: Any, link: int, way: int, reads: ReadLog | None) -> None:
        """:meth:`set` in the library (``ck``, ``link``, ``way``: :func:`checker_at`'s)."""

    @abc.abstractmethod
    def cross(self, handle: int, receipt: int) -> int:
        """Take the library's TLP ``handle`` (the ``receipt``-th received at the port)
        past this end: 0 when Python must (nothing done), else taken (``WAITING``: with
        work left for :meth:`rest`, in the lane's order)."""

    async def rest(self) -> None:  # noqa: B027  (an end that never leaves work waiting)
        """What :meth:`cross` left waiting: nothing, unless the end says otherwise."""

    def refresh(self) -> None:  # noqa: B027  (an end the library takes nothing at alone)
        """The port's receive handler has changed: tell the library, where it reads it."""

    def lane_busy(self, busy: bool) -> None:
        """The port's receive lane has become busy (or idle): its bit in the end's flags
        in the library, where it has them."""
        flags = self.flags
        if flags is not None:
            flags.holds = flags.holds | HOLD_LANE if busy else flags.holds & ~HOLD_LANE

    def _stop(self) -> int:
        """Whether the checker here ends at its first broken rule (as the library's
        ``stop`` flag)."""
        checker = self.checker
        return int(checker is not None and checker.stops_at_first(self.link, self.direction))

    def _port_holds(self) -> int:
        """The ``HOLD_`` bits every end with flags has: the port's receive handler not the
        one armed (``expected``), its receive lane busy, a passive observer shown here."""
        port, holds = self.port, 0
        if port.rx_handler is not self.expected:
            holds |= HOLD_HANDLER
        if port._rx_lane.busy:
            holds |= HOLD_LANE
        if self.show is not None:
            holds |= HOLD_SHOWN
        return holds


class End(PortEnd):
    """A bridge's link end whose TLPs of the library's own may cross in the library:
    armed with the receive handler it has now (``wrappers``: the taps and fault
    injectors in front of the bridge's own handler, outermost first, each a (handler,
    inner handler) pair)."""

    def __init__(self, fabric: Fabric, link_port: Any, switch_port: Any, side: int) -> None:
        super().__init__()
        self.fabric = fabric
        self.lib, self.cal = fabric.lib, fabric.line.calendar
        self.port = link_port
        self.port_id = link_port.dp_id
        self.end = self.lib.dp_fab_end(fabric.fab, switch_port.dp_index, side)
        self.expected = link_port.rx_handler
        # the fault injectors in front (tb.env.faults.UpstreamFaultInjector: idle(),
        # holding(), until_steps()), which tell the end when those change
        self.gates: list[Any] = []
        self._to = ctypes.c_uint32()
        self.meter: int | None = None  # the library's meter here (Meter), if any
        # what the library reads to take an arrival here itself (fabric.cpp's
        # dp_fab_arrive): Python's reasons to decide it, kept as they change
        self.flags = EndFlags.from_address(self.lib.dp_fab_end_flags(self.end))
        link_port.native_end = self
        self.lib.dp_port_end(link_port._p, fabric.fab, self.end)

    def _set(self, kinds: int, ck: Any, link: int, way: int, reads: ReadLog | None) -> None:
        self.lib.dp_fab_end_set(self.end, kinds, ck, link, way)
        self.lib.dp_fab_end_reads(self.end, reads.reads if reads is not None else None)
        self.refresh()

    def refresh(self) -> None:
        """Tell the library the conditions it takes an arrival here by, as they are."""
        holds = self._port_holds()
        until = 0
        for gate in self.gates:
            if gate.holding():
                holds |= HOLD_GATES
            until = max(until, gate.until_steps())
        self.flags.until = until
        self.flags.stop = self._stop()
        self.flags.holds = holds

    def checked(self, handle: int, receipt: int) -> None:
        """The library took its TLP ``handle`` (the ``receipt``-th received here) past
        this end on its arrival, and the checker has something to say first: said, then
        moved on as :meth:`cross` moves it."""
        self._report_and_finish(handle, receipt)
        self._start_egress()

    def cross(self, handle: int, receipt: int) -> bool:
        """Move the library's TLP ``handle`` (the ``receipt``-th received here) across
        the bridge and the switch into its egress queue, and start that port's
        arbitration as the switch would: whether it did (else Python moves it)."""
        if self.port.rx_handler is not self.expected:
            return False
        for gate in self.gates:
            if not gate.idle():
                return False
        stop = self._stop()
        lib, to = self.lib, self._to
        cal, fab, end, port = self.cal, self.fabric.fab, self.end, self.port_id
        got = lib.dp_fab_cross(
            cal, fab, end, handle, port, receipt, stop, steps(), ctypes.byref(to)
        )
        if got < 0:
            return False
        if got == 1:  # the checker has something to say first
            self._report_and_finish(handle, receipt)
        self.fabric.crossings += 1
        if self.show is not None:
            self.show()
        self._start_egress()
        return True

    def _report_and_finish(self, handle: int, receipt: int) -> None:
        """The checker's records of the library's TLP ``handle`` (the ``receipt``-th
        received here) said, then the crossing the library left for them finished."""
        self.checker.report_records(self.link, self.direction, self.fabric.line.peek(handle))
        self.lib.dp_fab_finish(
            self.cal, self.fabric.fab, self.end, handle, self.port_id, receipt, steps(),
            ctypes.byref(self._to),
        )  # fmt: skip

    def _start_egress(self) -> None:
        """Start the arbitration of the egress port the last crossing queued at, as the
        switch's routing does (a running one finds the TLP itself)."""
        arbiter = self.fabric.ports[self._to.value].arbiter
        if not arbiter.busy:
            arbiter.push(None)


class CardEnd:
    """The card's hard-IP model's end of its link (``port``) in the library
    (``tb/dp/card.cpp``): the posted writes the RTL hands RQ that the model would send
    at once, sent by the library (:meth:`write`) with no Python TLP made; the model
    decides when (:meth:`tb.models.hardip.PevbUspDevice._rq_write_now`). Where the
    model's sinks allow it, the library drains them itself (:meth:`drain`), and holds
    the writes that must wait for the link, with the frames after them, until they go
    or are Python's (:meth:`told`)."""

    MAX_DWORDS = 4 + 1024  # the descriptor, then the largest payload

    def __init__(self, fabric: Fabric, port: Any) -> None:
        self.fabric, self.lib, self.cal = fabric, fabric.lib, fabric.line.calendar
        self.port = port
        self.writes = 0  # posted writes the library sent
        self._words = (ctypes.c_uint32 * self.MAX_DWORDS)()
        self._dc = ctypes.c_uint64()
        self._dc_ref = ctypes.byref(self._dc)
        self.dev: Any = None
        self.rq: Any = None  # the library's drain of the model's sinks (rqdrain.cpp)

    def __del__(self) -> None:
        rq, self.rq = getattr(self, "rq", None), None
        if rq is not None:
            self.lib.dp_rq_drain_free(rq)

    def drain(self, dev: Any, group: Any) -> bool:
        """Take the drain of the hard-IP model ``dev``'s sinks (``group``, a
        :class:`tb.models.transactors._SinkGroup`) into the library
        (``tb/dp/rqdrain.cpp``), where the group allows it and the library keeps the
        calendar's alarm: each posted write the model would send at once sent there, the
        rest handed to the group's Python in order; each memory read the model would
        issue at once issued there too. Whether it did."""
        line = self.fabric.line
        alarm = line._alarm
        if not isinstance(alarm, LibraryAlarm):
            return False
        snk = group.to_library()
        if snk is None:
            return False
        self.dev, self._snk = dev, snk

        def after(left: int) -> None:
            group.after_library(self.rq, left)

        self._call = read_write_call(line, after)  # (kept while the library may call it)
        self._rq_sink = group.sinks[0]
        self.rq = self.lib.dp_rq_drain_new(
            ctypes.addressof(snk),
            ctypes.addressof(dev._hip),
            self.cal,
            self.port._p,
            alarm._a,
            ctypes.cast(self._call, ctypes.c_void_p),
        )
        dev.link_state_listeners.append(self.refresh)
        self.port.fc_listeners.append(self.refresh)
        _on_log_levels(self.refresh)
        self.port.rq_end = self
        self.fabric.drains.append(self)
        self.refresh()
        return True

    def refresh(self) -> None:
        """Tell the library whether the model would send a posted write from RQ at once
        for reasons of its own (:meth:`tb.models.hardip.PevbUspDevice._rq_writes_held`,
        the port's sending replaced, a logger that logs each frame) and whether the
        link's flow control is initialized; its RQ logic holding frames the model tells
        itself."""
        dev, port = self.dev, self.port
        model = (
            dev._rq_writes_held()
            or "send" in port.__dict__
            or dev.rq_sink.log.isEnabledFor(logging.INFO)
        )
        hip = dev._hip
        hip.rq_blocks = (
            (hip.rq_blocks & (RQ_BUSY | RQ_NP))
            | (RQ_MODEL if model else 0)
            | (0 if port.fc_ready else RQ_FC)
        )

    def stop(self) -> None:
        """The test ended: the library's drain stops."""
        if self.rq is not None:
            self.lib.dp_rq_drain_stop(self.rq)

    def counts(self) -> tuple[int, int, int, int, int, int]:
        """The posted writes the library's drain sent, those of them sent after a wait
        for the link and the writes the model's RQ logic handed it, the memory reads it
        issued, the drains it made and those that called Python, since the last call."""
        if self.rq is None:
            return 0, 0, 0, 0, 0, 0
        got = [ctypes.c_uint64() for _ in range(5)]
        sent = self.lib.dp_rq_drain_counts(self.rq, *map(ctypes.byref, got))
        waited, adopted, reads, drains, handed = (c.value for c in got)
        return sent, waited, adopted, reads, drains, handed

    def adopt(self, frame: Any) -> int:
        """The model's RQ logic hands over the posted write of RQ frame ``frame``, which
        must wait for the link: 1 when the library holds it (waiting for the link as the
        RQ logic would, in its gate), after which the RQ logic hands over the frames
        queued behind it (:meth:`adopt_more`); 2 when the library sent it; 0 when it
        did not take it (nothing done: the RQ logic waits in its gate)."""
        if self.rq is None:
            return 0
        words, size = self._frame_words(frame)
        return self.lib.dp_rq_adopt(self.rq, words, size, steps())

    def adopt_more(self, frame: Any) -> None:
        """RQ frame ``frame``, queued in the model's sink behind the one :meth:`adopt`
        took, held behind it."""
        self.lib.dp_rq_adopt_more(self.rq, *self._frame_words(frame))

    @staticmethod
    def _frame_words(frame: Any) -> tuple[Any, int]:
        """An RQ frame as the library's unpacker leaves it (``rqdrain.cpp``): dwords,
        byte enables, sequence number, discontinue, then the dwords and their parity."""
        data = list(frame.data)
        parity = list(getattr(frame, "parity", None) or [0] * len(data))
        head = [len(data), frame.first_be, frame.last_be, frame.seq_num, int(frame.discontinue)]
        words = head + data + parity
        return (ctypes.c_uint32 * len(words))(*words), len(words)

    def told(self, count: int) -> None:
        """What the library's drain tells of the RQ frames it holds (``rqdrain.cpp``):
        one has passed, which a task of the model's waits for (``count`` 0); or, from
        the first it does not send on, the ``count`` frames it held, which the model
        receives as they came (its RQ logic takes them in order)."""
        if not count:
            self.dev._rq_moved.set()
            return
        sink = self._rq_sink
        sink._take(sink._unpacker_lib.left(self.rq, count))

    def resume(self, credit: int) -> None:
        """The held frames resumed from cocotb's event loop in their turn: the first had
        the wire's next place, or (``credit``) the credit it waited for has come."""
        self.lib.dp_rq_resume_at(self.rq, credit, steps())

    def drop_held(self) -> None:
        """The card's user side reset: the frames the library holds are lost, but the
        first where it waits for the link (as the frame in the model's credit gate)."""
        if self.rq is not None:
            self.lib.dp_rq_drop(self.rq)

    def write(self, frame: Any, bus: int, gated: bool = False) -> int:
        """Send the posted write of RQ frame ``frame`` (its requester's bus ``bus``
        where the descriptor leaves it to the core) on the link now: 1 when the library
        has; 0 when it is not one the library moves; 2 when it must wait for credit or
        the wire (nothing done): after :meth:`gate`, send it again with ``gated``."""
        data = frame.data
        n = len(data)
        port = self.port
        if n > self.MAX_DWORDS or (not gated and "send" in port.__dict__):
            return 0  # (once gated, its credits are taken: it goes)
        words = self._words
        words[:n] = data
        got = self.lib.dp_rq_write(
            self.cal,
            port._p,
            words,
            n,
            frame.first_be,
            frame.last_be,
            bus,
            port.fc_ready,
            gated,
            steps(),
            self._dc_ref,
        )
        if got == 1:
            self.fabric.line.poke()
            self.writes += 1
            self.fabric.crossings += 1
        return got

    async def gate(self) -> None:
        """The link's credit gate for the posted write :meth:`write` last found waiting
        (``CompiledTlpPort._gate``): its credits taken and the wire's place free."""
        await self.port._gate(0, POSTED, self._dc.value)


POSTED = 0  # the credit type of a posted request (cocotbext-pcie's FcType.P)


class MeterFigures(ctypes.Structure):
    """What a :class:`Meter` has counted (``reads.cpp``'s ``dp_meter_figures``): whether
    a write was seen, the first and last one's step, the first one's bytes and all
    bytes, the last one's header size, the largest payload."""

    _fields_ = [
        (name, ctypes.c_uint64)
        for name in ("seen", "first", "last", "first_bytes", "bytes", "header", "largest")
    ]


class Meter:
    """A bench's meter of one buffer's data crossing a link end the library takes
    (``reads.cpp``), standing in there for ``observer``, a Python observer of the same
    TLPs (:class:`tb.bench.engine.DataClock`), which sees those Python moves: the memory
    writes into the buffer and the tags of the memory reads from it (Python's tagged by
    :meth:`tag`), and the completions of those reads where the library takes them at
    the card (:meth:`CardCpl.count_in`)."""

    def __init__(self, end: End, observer: Any = None) -> None:
        self.lib = end.lib
        self.meter = self.lib.dp_meter_new()
        self._figures = MeterFigures()
        self.lib.dp_fab_end_meter(end.end, self.meter)
        self._end = end  # (the end's library state outlives the meter)
        end.meter = self.meter  # the end's meter (a later one replaces it)
        end.meter_observer = observer

    def __del__(self) -> None:
        meter, self.meter = getattr(self, "meter", None), None
        if meter is not None:
            if self._end.meter == meter:  # not replaced meanwhile
                self.lib.dp_fab_end_meter(self._end.end, None)
                self._end.meter = None
                self._end.meter_observer = None
            self.lib.dp_meter_free(meter)

    def reset(self, lo: int, hi: int) -> None:
        """Count anew, the buffer at ``[lo, hi)``."""
        self.lib.dp_meter_reset(self.meter, lo, hi)

    def figures(self) -> MeterFigures:
        """What it has counted so far (steps for times)."""
        self.lib.dp_meter_figures_of(self.meter, ctypes.byref(self._figures))
        return self._figures

    def tagged(self, tag: int) -> bool:
        """Whether a read of the buffer went out under ``tag``."""
        return bool(self.lib.dp_meter_tagged(self.meter, tag))

    def untag(self, tag: int) -> None:
        """The read under ``tag`` has had its last completion."""
        self.lib.dp_meter_untag(self.meter, tag)

    def tag(self, tag: int) -> None:
        """A read of the buffer went out under ``tag`` (seen in Python)."""
        self.lib.dp_meter_tag(self.meter, tag)


class ReadLog:
    """The read requests a fault injector keeps track of, by tag, in the library
    (``tb/dp/reads.cpp``): where the library moves a read across the link end the
    injector watches, it records it here itself (:meth:`End.set`), and Python records
    the reads it moves (:meth:`put`). A read is (number, address of its first enabled
    byte, bytes it asks for); its number grows with each read recorded, so a read of a
    reused tag is told from the one before."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib
        self.reads = lib.dp_reads_new()
        self._address = ctypes.c_uint64()
        self._nbytes = ctypes.c_uint32()
        self._started = ctypes.c_uint32()

    def __del__(self) -> None:
        reads, self.reads = getattr(self, "reads", None), None
        if reads is not None:
            self.lib.dp_reads_free(reads)

    def put(self, tag: int, address: int, nbytes: int) -> int:
        """Record a read under ``tag`` (replacing any): its number."""
        return self.lib.dp_reads_put(self.reads, tag, address, nbytes)

    def get(self, tag: int) -> tuple[int, int, int, bool] | None:
        """The read under ``tag``: (number, address, bytes, whether a completion of it
        has come past the injector in the library), or None."""
        number = self.lib.dp_reads_get(
            self.reads,
            tag,
            ctypes.byref(self._address),
            ctypes.byref(self._nbytes),
            ctypes.byref(self._started),
        )
        if not number:
            return None
        return number, self._address.value, self._nbytes.value, bool(self._started.value)

    def drop(self, tag: int) -> None:
        """Forget the read under ``tag``."""
        self.lib.dp_reads_drop(self.reads, tag)

    def tags(self) -> list[int]:
        """The tags with a read, in order."""
        out, tag = [], self.lib.dp_reads_next(self.reads, 0)
        while tag < TAGS:
            out.append(tag)
            tag = self.lib.dp_reads_next(self.reads, tag + 1)
        return out


TAGS = 1024  # reads.cpp's table: 10-bit tags


class Egress:
    """A switch port whose bridge sends the library's TLPs from the switch onto its link
    (``link``) in the library, while its handlers are the ones armed."""

    def __init__(self, fabric: Fabric, switch_port: Any, link: Any, holder: Any, name: str):
        self.fabric, self.lib, self.cal = fabric, fabric.lib, fabric.line.calendar
        self.switch_port, self.link = switch_port, link
        self.index = switch_port.dp_index
        self.tx = switch_port.tx_handler  # the bridge's receive from the switch's side
        self._holder, self._name = holder, name  # where the bridge keeps its link's send
        self.send = getattr(holder, name)
        switch_port.native_egress = self
        self._handle, self._sent = ctypes.c_uint64(), ctypes.c_uint64()
        self._handle_ref, self._sent_ref = ctypes.byref(self._handle), ctypes.byref(self._sent)
        # the library runs the arbitration itself on an arrival while it may (fabric.cpp's
        # dp_fab_arrive): its handlers the ones armed, its link's flow control up
        self.flags = fabric.egress_flags(switch_port)
        self.lib.dp_fab_egress_link(fabric.fab, self.index, link._p)
        _watch(holder, self.refresh)
        _watch(switch_port, self.refresh)
        link.fc_listeners.append(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Tell the library whether the arbitration here is its own to run."""
        self.flags.live = int(self.armed() and self.link.fc_ready)

    def armed(self) -> bool:
        """Whether the bridge's handlers are the ones armed."""
        return (
            self.switch_port.tx_handler is self.tx
            and getattr(self._holder, self._name) is self.send
        )

    def arbitrate(self, handle: int, sw: int, number: int) -> tuple[int, int]:
        """The switch port's arbitration (switch ``sw``'s port ``number``) from the
        library's TLP ``handle`` it has just handed on, in the library: each TLP of its
        own that crosses onto the link sent there, pass after pass, while none must wait
        (``dp_fab_arbitrate``). (0, 0) when the queues are empty; else where it stopped
        and the TLP's handle: 1, a TLP for Python to move; 2, one of the library's, its
        credits released, for :meth:`CompiledTlpPort.send_released`; 3, one of the
        library's that waits for the wire as a sender of the library's own, which holds
        the arbitration from here (the lane has nothing else to run)."""
        self._handle.value = handle
        self._sent.value = 0
        link = self.link
        got = self.lib.dp_fab_arbitrate(
            self.cal,
            self.fabric.fab,
            sw,
            number,
            self.index,
            link._p,
            link.fc_ready,
            steps(),
            self._handle_ref,
            self._sent_ref,
            int(not self.switch_port.arbiter.backlog),
        )
        sent = self._sent.value
        if sent or got >= 2:
            self.fabric.line.poke()
            self.fabric.crossings += sent + (got >= 2)
        return got, self._handle.value


def _layout(space: Any) -> tuple:
    """What says whether ``space``'s regions (nested ones included) have changed."""
    out: list = [id(space.regions), len(space.regions)]
    for _, _, _, region in space.regions:
        if hasattr(region, "regions"):
            out.append(_layout(region))
    return tuple(out)


class RootServe:
    """The root complex's host bridge port, where the library answers the memory
    requests of its own that its RAM holds whole (``dp_rc_serve``): the completions go
    into their egress queues one at a time, each egress's arbitration started after its
    completion as the root complex's sends would; anything else Python answers."""

    link = None  # (not a link: the root complex)

    def __init__(self, fabric: Fabric, rc: Any, host_port: Any) -> None:
        from ..dp import Memory

        self.fabric, self.lib, self.cal = fabric, fabric.lib, fabric.line.calendar
        self.rc, self.port = rc, host_port
        self.index = host_port.dp_index
        self.tx = host_port.tx_handler
        self.up = rc.upstream_bridge.upstream_tx_handler
        self.handlers = {t: rc.rx_tlp_handler.get(t) for t in _MEMORY_TYPES}
        self.memory = Memory()
        self._layout: tuple | None = None
        self._to = ctypes.c_uint32()
        host_port.native_egress = self
        # the library answers in the host port's arbitration itself (fabric.cpp's
        # serve) while what ready() reads and the RAM's layout stay as they were:
        # told of each change (the handlers, the root complex's attributes, a logger's
        # level, a region list)
        self.flags = ServeFlags.from_address(
            self.lib.dp_fab_serve(fabric.fab, self.index, self.memory.mem)
        )
        rc.rx_tlp_handler = _WatchedDict(rc.rx_tlp_handler, self.refresh)
        for obj in (host_port, rc.upstream_bridge):
            _watch(obj, self.refresh)
        # (not every attribute: the root complex sets its next tag per request it makes)
        _watch(rc, self._rc_changed, _RC_READ)
        _on_log_levels(self.refresh)
        self._watch_regions(rc.mem_address_space)
        self._mirror()

    def _rc_changed(self) -> None:
        """An attribute of the root complex that its answers read was set."""
        rc = self.rc
        if not isinstance(rc.rx_tlp_handler, _WatchedDict):  # (a new dict: watched too)
            rc.rx_tlp_handler = _WatchedDict(rc.rx_tlp_handler, self.refresh)
        self._watch_regions(rc.mem_address_space)
        self.refresh()

    def _watch_regions(self, space: Any) -> None:
        """Be told of each change to ``space``'s regions and its nested spaces'."""
        if not isinstance(space.regions, WatchedList):
            space.regions = WatchedList(space.regions, self._regions_changed)
        for _, _, _, region in space.regions:
            if hasattr(region, "regions"):
                self._watch_regions(region)

    def _regions_changed(self) -> None:
        self._watch_regions(self.rc.mem_address_space)
        self.refresh()

    def _mirror(self) -> None:
        """The library's copy of the root complex's RAM made as it is now."""
        space = self.rc.mem_address_space
        self.memory.mirror(space)
        self._layout = _layout(space)
        self.refresh()

    def refresh(self) -> None:
        """Tell the library whether it answers here itself, and with what."""
        rc, flags = self.rc, self.flags
        flags.mps = rc.max_payload_size
        flags.rcb_128 = int(bool(rc.read_completion_boundary))
        flags.split = int(bool(rc.split_on_all_rcb))
        flags.live = int(self.ready() and self._layout == _layout(rc.mem_address_space))

    def ready(self) -> bool:
        """Whether the root complex's handlers are the ones armed and it logs no
        request (cocotbext-pcie logs each at INFO)."""
        rc = self.rc
        if (
            self.port.tx_handler is not self.tx
            or rc.upstream_bridge.upstream_tx_handler is not self.up
        ):
            return False
        handlers = rc.rx_tlp_handler
        if any(handlers.get(t) is not h for t, h in self.handlers.items()):
            return False
        return not rc.log.isEnabledFor(logging.INFO)

    def serve(self, handle: int) -> bool:
        """Answer the library's request ``handle`` here: whether the library did."""
        if not self.ready():
            return False
        if _layout(self.rc.mem_address_space) != self._layout:
            self._mirror()
        rc, lib, line = self.rc, self.lib, self.fabric.line
        got = lib.dp_rc_serve(
            self.cal,
            self.fabric.fab,
            self.memory.mem,
            self.index,
            handle,
            rc.max_payload_size,
            int(bool(rc.read_completion_boundary)),
            int(bool(rc.split_on_all_rcb)),
            steps(),
        )
        if got < 0:
            return False
        line.poke()
        self.fabric.crossings += 1
        ports, to = self.fabric.ports, self._to
        while lib.dp_rc_next(self.fabric.fab, self.cal, ctypes.byref(to)):
            arbiter = ports[to.value].arbiter
            if not arbiter.busy:
                arbiter.push(None)
        return True


_MEMORY_TYPES = (TlpType.MEM_READ, TlpType.MEM_READ_64, TlpType.MEM_WRITE, TlpType.MEM_WRITE_64)


# the root complex's attributes its answers read (RootServe.ready and refresh)
_RC_READ = frozenset(
    {
        "rx_tlp_handler",
        "log",
        "mem_address_space",
        "max_payload_size",
        "read_completion_boundary",
        "split_on_all_rcb",
    }
)


class _WatchedDict(dict):
    """A dict that calls ``changed()`` after each change."""

    def __init__(self, items: Any, changed: Callable[[], None]) -> None:
        super().__init__(items)
        self._changed = changed

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self._changed()

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self._changed()

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        self._changed()

    def pop(self, *args: Any) -> Any:
        out = super().pop(*args)
        self._changed()
        return out

    def setdefault(self, key: Any, default: Any = None) -> Any:
        out = super().setdefault(key, default)
        self._changed()
        return out

    def clear(self) -> None:
        super().clear()
        self._changed()


class GpuCounts(ctypes.Structure):
    """A BAR1 page's accesses the library answered (``gpu.cpp``'s ``dp_gpu_counts``)."""

    _fields_ = [
        (name, ctypes.c_uint64) for name in ("page", "reads", "read_bytes", "writes", "write_bytes")
    ]


class GpuTable:
    """The library's view of a GPU model (``gpu.cpp``'s ``dp_gpu``) for the requests to
    BAR1 it answers: the GPU's function as configured (:meth:`view`), and as the
    model's peer (:class:`cuda_model.gpu.PeerAccess`) the BAR1 page table and VRAM's
    backing as they change, with the accesses it answered per BAR1 page."""

    def __init__(self, lib: Any, gpu: Any) -> None:
        self.lib, self.gpu = lib, gpu
        self.g = lib.dp_gpu_new(gpu.bar1_size, gpu.vram.uninit_byte)
        self._fn = lib.dp_gpu_fn(self.g)
        self._counts = (GpuCounts * 64)()

    def __del__(self) -> None:
        g, self.g = getattr(self, "g", None), None
        if g is not None:
            self.lib.dp_gpu_free(g)

    def view(self, fn: Any) -> None:
        """The GPU's function is cocotbext-pcie function ``fn`` as it is now."""
        view = FunctionView.of(fn)
        ctypes.memmove(self._fn, ctypes.byref(view), ctypes.sizeof(view))

    def mapped(self, page: int, phys: int | None) -> None:
        """BAR1 page ``page`` maps VRAM page ``phys`` (None: unmapped)."""
        self.lib.dp_gpu_map(self.g, page, -1 if phys is None else phys)

    def backing(self, page: int, data: Any) -> None:
        """VRAM page ``page`` is held in numpy array ``data`` (None: never written)."""
        self.lib.dp_gpu_backing(self.g, page, None if data is None else data.ctypes.data)

    def take_counts(self) -> list[tuple[int, int, int, int, int]]:
        """The accesses the library answered since the last call, per BAR1 page."""
        out = []
        counts = self._counts
        while True:
            n = self.lib.dp_gpu_counts_take(self.g, counts, len(counts))
            out += [(c.page, c.reads, c.read_bytes, c.writes, c.write_bytes) for c in counts[:n]]
            if n < len(counts):
                return out


class GpuFlags(ctypes.Structure):
    """What the library reads to answer a request at the GPU's end as it arrives
    (``gpu.cpp``'s ``GpuFlags``): Python's reasons to decide it (the ``HOLD_`` bits),
    whether the checker there stops at its first broken rule, the function's Max Payload
    Size code, and whether the link's flow control is initialized."""

    _fields_ = [
        ("holds", ctypes.c_uint32),
        ("stop", ctypes.c_int32),
        ("mps", ctypes.c_uint32),
        ("fc_ready", ctypes.c_uint32),
    ]


class GpuServe(PortEnd):
    """The GPU's end of its link (its device's port), where the library answers the
    memory requests of its own for BAR1 from VRAM through the live BAR1 page table
    (``tb/dp/gpu.cpp``, :class:`GpuTable`) as :class:`tb.env.gpu_endpoint.GpuEndpoint`
    would: as they arrive (``dp_gpu_arrive``), while what :meth:`ready` and the answer
    read stays as it was, which Python copies into the library's flags whenever it
    changes (the port's receive handler and lane, the endpoint's handler dict, a
    logger's level, the function's Max Payload Size, the link's flow control, the
    checker, a passive observer shown the request); else when the port hands Python the
    request (:meth:`cross`). A read's completions that must wait for the link hold the
    port's receive lane until Python's gate has sent them, as the endpoint's handler
    would. Anything the library does not answer Python does."""

    defers = True

    def __init__(self, fabric: Fabric, dev: Any, ep: Any) -> None:
        super().__init__()
        self.fabric, self.lib, self.cal = fabric, fabric.lib, fabric.line.calendar
        self.line = fabric.line
        self.dev, self.ep = dev, ep
        self.port = dev.upstream_port
        self.table = GpuTable(self.lib, ep.gpu)
        self.g = self.table.g
        self.expected = self.port.rx_handler
        self.handlers = {t: ep.rx_tlp_handler.get(t) for t in _MEMORY_TYPES}
        table = self.table
        _watch(ep, lambda: table.view(ep))
        table.view(ep)
        ep.gpu.attach_peer(table)
        self.flags = GpuFlags.from_address(self.lib.dp_gpu_flags(self.g))
        self._armed = False
        ep.rx_tlp_handler = _WatchedDict(ep.rx_tlp_handler, self.refresh)
        self._cap = ep.pcie_cap
        _watch(ep, self._ep_changed, frozenset({"rx_tlp_handler", "pcie_cap"}))
        _watch(ep.pcie_cap, self.refresh, frozenset({"max_payload_size"}))
        _on_log_levels(self.refresh)
        self.port.fc_listeners.append(self.refresh)
        self.port.native_end = self
        self.lib.dp_port_gpu(self.port._p, self.g)
        fabric.gpu = self

    def _ep_changed(self) -> None:
        """The endpoint's handler dict or capability was replaced: watched too."""
        ep = self.ep
        if not isinstance(ep.rx_tlp_handler, _WatchedDict):
            ep.rx_tlp_handler = _WatchedDict(ep.rx_tlp_handler, self.refresh)
        if ep.pcie_cap is not self._cap:
            self._cap = ep.pcie_cap
            _watch(ep.pcie_cap, self.refresh, frozenset({"max_payload_size"}))
        self.refresh()

    def _set(self, kinds: int, ck: Any, link: int, way: int, reads: ReadLog | None) -> None:
        self.lib.dp_gpu_set(self.g, kinds & 3, ck, link, way)  # (reads and writes)
        self._armed = True
        self.refresh()

    def refresh(self) -> None:
        """Tell the library the conditions it answers an arrival here by, as they are."""
        flags = self.flags
        holds = self._port_holds() | (0 if self._armed else HOLD_OFF)
        if not self.ready():
            holds |= HOLD_GATES
        flags.stop = self._stop()
        flags.mps = self.ep.pcie_cap.max_payload_size
        flags.fc_ready = int(self.port.fc_ready)
        flags.holds = holds

    def ready(self) -> bool:
        """Whether the endpoint's memory handlers are the ones armed and neither it nor
        its device logs each request (cocotbext-pcie logs them at INFO and DEBUG)."""
        handlers = self.ep.rx_tlp_handler
        if any(handlers.get(t) is not h for t, h in self.handlers.items()):
            return False
        return not (
            self.ep.log.isEnabledFor(logging.INFO) or self.dev.log.isEnabledFor(logging.DEBUG)
        )

    def cross(self, handle: int, receipt: int) -> int:
        """Answer the library's request ``handle`` (the ``receipt``-th received at the
        port): 0 when Python's endpoint must (nothing done), 1 when answered, ``WAITING``
        when answered with completions left for :meth:`rest` (in the lane's order)."""
        port = self.port
        if port.rx_handler is not self.expected or not self.ready():
            return 0
        stop = self._stop()
        mps = self.ep.pcie_cap.max_payload_size
        lib, cal, g, p = self.lib, self.cal, self.g, port._p
        got = lib.dp_gpu_serve(cal, g, p, handle, receipt, mps, stop, port.fc_ready, steps())
        if got < 0:
            return 0
        if got == 1:  # the checker has something to say first
            got = self._report_and_finish(handle, receipt)
        self.line.poke()
        self.fabric.crossings += 1
        self.fabric.bar1_answers += 1
        if self.show is not None:
            self.show()
        return WAITING if got == 2 else 1  # (completions waiting hold the receive lane)

    def checked(self, handle: int, receipt: int) -> None:
        """The library took the request ``handle`` (the ``receipt``-th received here) on
        its arrival, and the checker has something to say first: said, then answered as
        :meth:`cross` answers it."""
        if self._report_and_finish(handle, receipt) == 2:
            self.rest_later()
        self.fabric.crossings += 1
        self.fabric.bar1_answers += 1

    def _report_and_finish(self, handle: int, receipt: int) -> int:
        """The checker's records of request ``handle`` said, then the request answered:
        ``dp_gpu_finish``'s 0, or 2 with completions waiting."""
        self.checker.report_records(self.link, self.direction, self.line.peek(handle))
        port = self.port
        got = self.lib.dp_gpu_finish(
            self.cal, self.g, port._p, handle, receipt, self.ep.pcie_cap.max_payload_size,
            port.fc_ready, steps(),
        )  # fmt: skip
        if got < 0:
            raise RuntimeError("the GPU's request changed while the checker reported")
        return got

    def rest_later(self) -> None:
        """The library answered a request here with completions waiting for Python's
        gate: they hold the port's receive lane (:meth:`rest`)."""
        self.port._rx_lane.push(LaneWork(self.rest))

    def answered(self) -> int:
        """The requests the library answered on arrival since the last call."""
        return self.lib.dp_gpu_answered(self.g)

    async def rest(self) -> None:
        """The completions the library could not send at once, through the port's credit
        gate one after another (``CompiledTlpPort.send_released``)."""
        lib, g, port = self.lib, self.g, self.port
        while True:
            handle = lib.dp_gpu_next(g)
            if not handle:
                return
            await port.send_released(handle)


class CardCpl(PortEnd):
    """The card's end of its link, receiving (``port``, the hard-IP model ``dev``'s): the
    completions for the card's memory reads that the model takes with every check passed
    (an active read of one of its functions, fields that match, successful, the lower
    address owed, room in its receive buffer) are taken in the library
    (``tb/dp/hip.cpp``, ``dp_hip_receive``) past the fault injector in front of it while
    that has no rule armed and is not stalled, and past the protocol checker: their
    credits go back, the model's requester state (kept in the library's table: see
    :class:`tb.models.hardip.PevbUspDevice`) moves on, and each joins the library's queue
    for RC, its place in the model's RC queue held by a marker that the model's RC loop
    pushes in its turn. The library takes them as they arrive (``dp_card_arrive``) while
    what :meth:`ready` reads stays as it was, which Python copies into the library's
    flags whenever it changes (the injector's rules and stall, the link's state, a
    logger's level, the port's handler and lane, the checker, a passive observer), and
    tells Python what the model moves on by (:meth:`took`); else when the port hands
    Python the completion (:meth:`cross`). Anything else Python's model takes."""

    defers = True

    def __init__(self, fabric: Fabric, dev: Any, faults: Any, reads: ReadLog | None) -> None:
        from .hardip import LIBRARY_CPL

        super().__init__()
        self.fabric, self.lib, self.cal = fabric, fabric.lib, fabric.line.calendar
        self.line = fabric.line
        self.dev, self.faults, self.reads = dev, faults, reads
        self.port = dev.upstream_port
        self.queue = self.lib.dp_rcq_new()
        self.expected = self.port.rx_handler
        self.kinds = 0
        # a bench's meter of the completions taken here (Meter), standing in for its
        # Python observer at the port's tap (which sees those Python takes)
        self.meter: Any = None
        self._meter: Meter | None = None
        self._ck: Any = None
        self._ck_link = self._ck_dir = 0
        self._marker = LIBRARY_CPL
        self._hip = ctypes.byref(dev._hip)
        self._out = HipCplOut()
        self._out_ref = ctypes.byref(self._out)
        self.end = self.lib.dp_card_end_new(ctypes.addressof(dev._hip), self.queue)
        self.loop = self.lib.dp_card_end_loop(self.end)  # the model's RC loop's, there
        self._adopted = (ctypes.c_uint64(), ctypes.c_uint32(), ctypes.c_uint32())
        self.flags = EndFlags.from_address(self.lib.dp_card_end_flags(self.end))
        faults.listeners.append(self.refresh)
        dev.link_state_listeners.append(self.refresh)
        _on_log_levels(self.refresh)
        self.port.native_end = self
        self.lib.dp_port_card(self.port._p, self.end)
        dev.card_cpl = self
        fabric.cards.append(self)

    def __del__(self) -> None:
        end, self.end = getattr(self, "end", None), None
        if end is not None:
            self.lib.dp_card_end_free(end)
        queue, self.queue = getattr(self, "queue", None), None
        if queue is not None:
            self.lib.dp_rcq_free(queue)

    def count_in(self, meter: Meter | None, observer: Any = None) -> None:
        """Count the completions taken here in ``meter`` (None: none) in place of
        ``observer``, a Python observer of them at the port's tap."""
        self._meter = meter
        self.meter = meter.meter if meter is not None else None
        self.meter_observer = observer
        self._end_set()

    def clear(self) -> None:
        """The link went down: what the library queued for RC is lost."""
        self.lib.dp_rcq_clear(self.queue)

    def _set(self, kinds: int, ck: Any, link: int, way: int, reads: ReadLog | None) -> None:
        self.kinds = kinds  # (the CplD bit; the injector's read log came at construction)
        self._ck, self._ck_link, self._ck_dir = ck, link, way
        self._end_set()

    def _end_set(self) -> None:
        """What sees the completions the library takes here, in the library."""
        reads = self.reads.reads if self.reads is not None else None
        self.lib.dp_card_end_set(self.end, self._ck, self._ck_link, self._ck_dir, reads, self.meter)
        self.refresh()

    def refresh(self) -> None:
        """Tell the library the conditions it takes an arrival here by, as they are."""
        faults, flags = self.faults, self.flags
        holds = self._port_holds() | (0 if self.kinds & 4 else HOLD_OFF)
        if faults.holding() or not self._model_ready():
            holds |= HOLD_GATES
        flags.until = faults.until_steps()
        flags.stop = self._stop()
        flags.holds = holds
        # the RC source the library's RC loop may write the model's completions into
        self.lib.dp_rc_loop_source(self.loop, getattr(self.dev.rc_source, "rc_state", None))

    def ready(self) -> bool:
        """Whether a completion arriving now may be taken in the library: the injector
        in front idle with no rule armed, the link up, the model and its RC source not
        logging each TLP, and the RC source one the library packs for."""
        return self.faults.idle() and self._model_ready()

    def _model_ready(self) -> bool:
        """:meth:`ready`'s terms of the model: the link up, no logging of each TLP, an
        RC source the library packs for."""
        dev = self.dev
        if dev.link_down:
            return False
        source = dev.rc_source
        return (
            getattr(source, "_rc_stream", None) is not None
            and not source.log.isEnabledFor(logging.INFO)
            and not dev.log.isEnabledFor(logging.DEBUG)
        )

    def adopt(self) -> tuple[int, int, int, int] | None:
        """The model's RC loop handed back from the library where it stands
        (``dp_rc_adopt``): the point its wait is for, the wait's phase (1: while the
        queue is full, 2: for room), the payload dwords of the completion it holds, and
        how many it queued after that one; None where the loop is not the library's."""
        point, phase, ndw = self._adopted
        refs = (ctypes.byref(point), ctypes.byref(phase), ctypes.byref(ndw))
        queued = self.lib.dp_rc_adopt(self.loop, *refs)
        return None if queued < 0 else (point.value, phase.value, ndw.value, queued)

    def took(self, tag: int, completed: int) -> None:
        """The library took a completion for the card's read of ``tag`` (which it ended
        when ``completed``, in its table, which the model's active requests read
        through): the model's Python moves on as :meth:`cross` moves it."""
        self.fabric.crossings += 1
        self.fabric.card_cpls += 1
        dev = self.dev
        dev.cpld_credit_released.set()
        dev.rc_queue.put_nowait(self._marker)

    def checked(self, handle: int, receipt: int) -> None:
        """The library took the completion ``handle`` (the ``receipt``-th received here)
        on its arrival, and the checker has something to say first: said, then taken as
        :meth:`cross` takes it."""
        self._report_and_finish(handle, receipt)
        self.took(self._out.tag, self._out.request_completed)

    def _report_and_finish(self, handle: int, receipt: int) -> None:
        """The checker's records of completion ``handle`` said, then the completion
        taken (``dp_hip_receive_finish``)."""
        self.checker.report_records(self.link, self.direction, self.line.peek(handle))
        reads = self.reads.reads if self.reads is not None else None
        self.lib.dp_hip_receive_finish(
            self.cal, self._hip, self.queue, self.port._p, handle, receipt, reads,
            self.meter, steps(), self._out_ref,
        )  # fmt: skip

    def cross(self, handle: int, receipt: int) -> bool:
        """Take the library's completion ``handle`` (the ``receipt``-th received at the
        port) for the card: whether the library did (else Python's model takes it)."""
        if not self.kinds & 4 or self.port.rx_handler is not self.expected or not self.ready():
            return False
        lib, stop = self.lib, self._stop()
        reads = self.reads.reads if self.reads is not None else None
        p, q, now = self.port._p, self.queue, steps()
        got = lib.dp_hip_receive(
            self.cal, self._hip, q, p, handle, receipt, self._ck, self._ck_link, self._ck_dir,
            stop, reads, self.meter, now, self._out_ref,
        )  # fmt: skip
        if got < 0:
            return False
        if got == 1:  # the checker has something to say first
            self._report_and_finish(handle, receipt)
        self.line.poke()
        if self.show is not None:
            self.show()
        self.took(self._out.tag, self._out.request_completed)
        return True
