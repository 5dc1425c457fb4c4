"""The switch of the TLP-level fabric: cocotbext-pcie's ``Switch`` routing in the caller
and arbitrating in a lane instead of two coroutines per switch port. On the compiled
data path (``$PEVB_DATAPATH=compiled``) its queues and the order of its arbitration are
kept in the library (``tb/dp/switch.cpp``)."""

from __future__ import annotations

import functools
from collections import deque
from typing import Any

import cocotb
from cocotbext.pcie.core.tlp import TlpAttr, TlpType

from ..dp import NATIVE, NOT_SCHEDULED
from .native import fabric_of
from .timeline import CompiledTimeline, FlaggedLane, Lane, timeline

_POSTED_WRITES = frozenset({TlpType.MEM_WRITE, TlpType.MEM_WRITE_64})

# --- the switch --------------------------------------------------------------------------
# cocotbext-pcie's Switch (and RootComplex, a Switch) runs a routing and an arbitration
# coroutine per switch port: a TLP a bridge hands to the switch waits in the port's
# ingress queue for its routing coroutine, then in a queue per port pair for the egress
# port's arbitration coroutine. This switch routes in the bridge's own call (the same
# matches, in the same port order) and runs the egress port's arbitration (the same
# passes over the same queues) in a lane. A TLP no port takes goes to the switch's own
# routing coroutine, which warns and answers it as before.
#
# Relaxed ordering: with ``ro_passing`` set on an egress port (TB.set_relaxed_passing), a
# posted write with the RO attribute that finds posted writes waiting for that port goes
# ahead of them, as PCIe's ordering rules allow (a posted request with RO set may pass
# earlier posted requests): what can happen when the link is congested. Off, every
# posted write keeps its order.


class _Queue(deque):
    """The TLPs one switch port has routed to another, waiting for its arbitration."""

    def put(self, tlp, ro_passing: bool) -> None:
        """Queue ``tlp``: a relaxed-ordering posted write ahead of the posted writes
        waiting at the tail where the egress port lets it pass (``ro_passing``)."""
        if ro_passing and tlp.fmt_type in _POSTED_WRITES and tlp.attr & TlpAttr.RO:
            at = len(self)
            while at and self[at - 1].fmt_type in _POSTED_WRITES:
                at -= 1
            self.insert(at, tlp)
        else:
            self.append(tlp)


class _CompiledQueue:
    """A queue between two ports of a switch on the compiled data path: its TLPs wait
    in the library (``tb/dp/switch.cpp``) by handle."""

    __slots__ = ("_id", "_line", "_sw")

    def __init__(self, sw, line, to: int) -> None:
        self._sw, self._line = sw, line
        self._id = line.lib.dp_sw_add_queue(sw, to)

    @property
    def id(self) -> int:
        """Its number in the library's switch."""
        return self._id

    def put(self, tlp, ro_passing: bool) -> None:
        """:meth:`_Queue.put`, the passing done by the library."""
        posted = tlp.fmt_type in _POSTED_WRITES
        ro = bool(tlp.attr & TlpAttr.RO)
        self._line.lib.dp_sw_enqueue(
            self._sw, self._id, self._line.hold(tlp), posted, ro, ro_passing
        )

    def append(self, tlp) -> None:
        self.put(tlp, False)

    def __len__(self) -> int:
        return self._line.lib.dp_sw_len(self._sw, self._id)


class _CompiledSwitch:
    """The library's state of one switch (its queues and arbitration), freed with it."""

    def __init__(self, line) -> None:
        self.line = line
        self.sw = line.lib.dp_sw_new()

    def __del__(self) -> None:
        self.line.lib.dp_sw_free(self.sw)


def add_switch_port(self, port) -> None:
    """``Switch.add_switch_port`` for the TLP-level fabric: later ports of this switch are
    added the same way. On the compiled data path (a compiled timeline) the queues and
    the arbitration's order are kept in the library."""
    self.add_switch_port = add_switch_port.__get__(self)
    self.switch_ports.append(port)
    port.ro_passing = False
    port.native_egress = None  # where the library sends its own TLPs on (native.py)
    cocotb.start_soon(self._run_routing(port))  # what no port takes (see above)
    line = timeline()
    compiled = isinstance(line, CompiledTimeline)
    if compiled:
        if "_dp" not in self.__dict__:
            self._dp = _CompiledSwitch(line)
        sw = self._dp.sw
        port.dp_number = line.lib.dp_sw_add_port(sw)
        port.dp_index = fabric_of(line).add_port(port, self._dp, port.dp_number)
        port.arbiter = _EgressLane(
            lambda item: _arbitrate_compiled(port, self._dp, item),
            fabric_of(line).egress_flags(port),
        )
    else:
        port.arbiter = Lane(lambda _: _arbitrate(port))
    for other in self.switch_ports[:-1]:
        if compiled:
            to_other = _CompiledQueue(sw, line, other.dp_number)
            from_other = _CompiledQueue(sw, line, port.dp_number)
        else:
            to_other, from_other = _Queue(), _Queue()
        port.tx_queues.append((other, to_other))
        port.rx_queues.append(from_other)
        other.rx_queues.append(to_other)
        other.tx_queues.append((port, from_other))
        if compiled:  # the library routes its own TLPs the same way
            fabric_of(line).route(port, other, to_other.id)
            fabric_of(line).route(other, port, from_other.id)
    ingress = functools.partial(_route, port)
    if port.upstream:
        port.bridge.downstream_tx_handler = ingress
    else:
        port.bridge.upstream_tx_handler = ingress


def set_ro_passing(port, on: bool) -> None:
    """Relaxed-ordering passing at egress ``port`` on or off (see above), for the
    library's routing too."""
    port.ro_passing = on
    if getattr(port, "dp_index", None) is not None:
        fabric_of(timeline()).ro_passing(port)


class _EgressLane(FlaggedLane):
    """A compiled switch port's arbitration lane: its state copied into the library's
    egress flags (``flags``, :class:`tb.models.native.EgressFlags`), and busy too while a
    sender of the library's own holds the arbitration (``flags.held``), which the lane
    takes over when the library hands the arbitration to it."""

    __slots__ = ("_flags",)

    def __init__(self, work: Any, flags: Any) -> None:
        super().__init__(work, self._copy)
        self._flags = flags

    def _copy(self, busy: bool) -> None:
        flags = self._flags
        flags.busy = int(busy)
        if busy:
            flags.held = 0

    @property
    def busy(self) -> bool:
        return self._busy or bool(self._flags.held)


async def _route(port, tlp) -> None:
    """Where the switch's routing coroutine sends a TLP that ``port``'s bridge hands it."""
    tlp.ingress_port = port.bridge
    for other, queue in port.tx_queues:
        bridge = other.bridge
        if (
            bridge.match_tlp(tlp)
            or (other.upstream and not bridge.match_tlp_secondary(tlp))
            or (not other.upstream and bridge.match_tlp_secondary(tlp))
        ):
            queue.put(tlp, other.ro_passing)
            if not other.arbiter.busy:  # a running arbiter finds it on its next pass
                other.arbiter.push(None)
            return
    await port.ingress_queue.put(tlp)


async def _arbitrate(port) -> None:
    """The switch's arbitration for egress ``port``: passes over the queues from the
    other ports, one TLP from each that holds one, until a pass finds none."""
    queues = port.rx_queues
    moved = True
    while moved:
        moved = False
        for queue in queues:
            if queue:
                await port.tx_handler(queue.popleft())
                moved = True


async def _arbitrate_compiled(
    port, switch: _CompiledSwitch, item: tuple[int, int] | None = None
) -> None:
    """:func:`_arbitrate`, the order of the passes kept by the library; a TLP of the
    library's own crosses the port's bridge onto its link there too, where it can
    (:class:`tb.models.native.Egress`), and waits for the wire there as a sender of the
    library's own, which holds the arbitration from then on. ``item``: where the
    library's own arbitration handed it to Python: the TLP it stopped at and why (0,
    the next the loop takes; 1, a TLP for Python to move; 2, one of the library's to
    send through the credit gate)."""
    lib, sw, line, number = switch.line.lib, switch.sw, switch.line, port.dp_number
    if item is None:
        handle = lib.dp_sw_next(sw, number)
    else:
        handle, got = item
        if got:
            if got == 2:
                await port.native_egress.link.send_released(handle)
            else:
                await port.tx_handler(line.take(handle))
            handle = lib.dp_sw_next(sw, number)
    while handle != NOT_SCHEDULED:
        egress = port.native_egress
        if egress is not None and handle & NATIVE:
            if egress.link is None:
                if egress.serve(handle):  # the root complex's answer, in the library
                    handle = lib.dp_sw_next(sw, number)
                    continue
            elif egress.armed():
                # onto the link in the library, it and the passes after it while what
                # they hand on is the library's own and need not wait
                got, handle = egress.arbitrate(handle, sw, number)
                if got == 0 or got == 3:  # (3: a sender of the library's holds it)
                    return
                if got == 2:  # to wait for credit or the wire, here
                    await egress.link.send_released(handle)
                    handle = lib.dp_sw_next(sw, number)
                    continue
        await port.tx_handler(line.take(handle))
        handle = lib.dp_sw_next(sw, number)
