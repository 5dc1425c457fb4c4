"""The TLP-level link on the compiled data path (``$PEVB_DATAPATH=compiled``, stage 2 of
docs/performance.md's design): :class:`tb.models.link.TlpPort`'s rules with its state
and timed work in the library (``tb/dp/link.cpp``), so the TLPs Python sends and the ones the
library moves share one wire, one set of credits and one order of work.

What stays in Python is what must: the TLP objects (the library holds a handle and the
TLP's credits), the senders' events, the receive lane and its handler, and the
flow-control initialization (cocotbext-pcie's InitFC DLLPs), which writes the credit
counters in the library's memory through :class:`Credits`.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Awaitable, Callable
from typing import Any

from cocotb.triggers import Event
from cocotbext.pcie.core.port import FcChannelState, SimPort

from .link import TlpPort
from .timeline import CompiledTimeline, FlaggedLane, steps

_NATIVE = 1 << 62  # tb.dp.NATIVE


WAITING = 2  # what a port end's cross says when its work must wait (the lane holds)


class LaneWork:
    """Work of the library's own that takes its turn in a port's receive lane: the
    TLPs received after it wait until ``run`` is done, as they would behind the
    handler of the TLP it stands for (:class:`tb.models.native.GpuServe`)."""

    __slots__ = ("run",)

    def __init__(self, run: Callable[[], Awaitable[None]]) -> None:
        self.run = run


class Credits(ctypes.Structure):
    """One credit type's counters in the library's memory (``dp_credits``), with the
    names and rules of cocotbext-pcie's ``FcStateData``: a 12-bit counter for headers,
    16-bit for data, an initial allocation of 0 meaning infinite."""

    _fields_ = [
        ("tx_initial_allocation", ctypes.c_int64),
        ("tx_credits_consumed", ctypes.c_int64),
        ("tx_credit_limit", ctypes.c_int64),
        ("rx_initial_allocation", ctypes.c_int64),
        ("rx_credits_allocated", ctypes.c_int64),
        ("rx_credits_received", ctypes.c_int64),
    ]
    field_size = 16

    @property
    def tx_field_mask(self) -> int:
        return (1 << self.field_size) - 1

    rx_field_mask = tx_field_mask

    def reset(self) -> None:
        self.tx_initial_allocation = self.tx_credits_consumed = self.tx_credit_limit = 0
        self.rx_credits_allocated = self.rx_initial_allocation
        self.rx_credits_received = 0

    def tx_is_infinite(self) -> bool:
        return self.tx_initial_allocation == 0

    def rx_is_infinite(self) -> bool:
        return self.rx_initial_allocation == 0

    @property
    def tx_credits_available(self) -> int:
        if self.tx_is_infinite():
            return self.tx_field_mask
        return (self.tx_credit_limit - self.tx_credits_consumed) & self.tx_field_mask

    @property
    def rx_credits_available(self) -> int:
        if self.rx_is_infinite():
            return self.rx_field_mask
        return (self.rx_credits_allocated - self.rx_credits_received) & self.rx_field_mask

    def tx_consume_fc(self, fc: int) -> None:
        if not self.tx_is_infinite():
            self.tx_credits_consumed = (self.tx_credits_consumed + fc) & self.tx_field_mask

    def rx_consume_fc(self, fc: int) -> None:
        if not self.rx_is_infinite():
            self.rx_credits_received = (self.rx_credits_received + fc) & self.rx_field_mask

    def rx_release_fc(self, fc: int) -> None:
        if not self.rx_is_infinite():
            self.rx_credits_allocated = (self.rx_credits_allocated + fc) & self.rx_field_mask


class HeaderCredits(Credits):
    """Header credits: 12-bit counters."""

    field_size = 12


class _Channel(ctypes.Structure):
    """``dp_channel``: six counters (P, NP, CPL; header then data), the UpdateFC due
    steps, whether the channel is active."""

    _fields_ = [
        ("fc", ctypes.c_int64 * 36),
        ("next_fc_tx", ctypes.c_int64 * 3),
        ("active", ctypes.c_int64),
    ]


_NAMES = ("ph", "pd", "nph", "npd", "cplh", "cpld")
_DUE = ("next_fc_p_tx", "next_fc_np_tx", "next_fc_cpl_tx")


def _due(i: int) -> property:
    return property(
        lambda self: self._c.next_fc_tx[i],
        lambda self, v: self._c.next_fc_tx.__setitem__(i, v),
    )


class ChannelState(FcChannelState):
    """A virtual channel's flow-control state (cocotbext-pcie's ``FcChannelState``) with
    its counters, UpdateFC due steps and active flag in the library's memory, copied
    there from ``old`` (the state the port was made with)."""

    next_fc_p_tx = _due(0)
    next_fc_np_tx = _due(1)
    next_fc_cpl_tx = _due(2)
    active = property(
        lambda self: bool(self._c.active),
        lambda self, v: setattr(self._c, "active", int(bool(v))),
    )

    def __init__(self, channel: _Channel, old: FcChannelState) -> None:
        self._c = channel
        base = ctypes.addressof(channel)
        size = ctypes.sizeof(Credits)
        for i, name in enumerate(_NAMES):
            kind = HeaderCredits if i % 2 == 0 else Credits
            counters = kind.from_address(base + i * size)
            before = getattr(old, name)
            for field, _ in Credits._fields_:
                setattr(counters, field, getattr(before, field))
            self.__dict__[name] = counters
        for name, value in vars(old).items():
            if name not in _NAMES:
                setattr(self, name, value)
        # (the update events a sender waits on, by credit type)
        self.updates = (self.fc_p_update, self.fc_np_update, self.fc_cpl_update)


class _Initialized(Event):
    """A link's "flow control initialized" event (cocotbext-pcie's
    ``FcChannelState.initialized``) that tells the port's ``fc_listeners`` when it is
    set or cleared."""

    def __init__(self, old: Event, port: Any) -> None:
        super().__init__()
        self._port = port
        if old.is_set():
            super().set()

    def set(self, data: object | None = None) -> None:
        super().set(data)
        for listener in self._port.fc_listeners:
            listener()

    def clear(self) -> None:
        super().clear()
        for listener in self._port.fc_listeners:
            listener()


class CompiledTlpPort(TlpPort):
    """:class:`tb.models.link.TlpPort` with its wire, credits and timed work in the
    library: a TLP sent is a handle there until it reaches the other port's receive
    lane; the flow-control initialization runs as in cocotbext-pcie, on the library's
    counters."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        line = self._timeline
        if not isinstance(line, CompiledTimeline):
            raise RuntimeError("a compiled link needs the compiled data path's timeline")
        self._line = line
        self._lib = line.lib
        self._p = self._lib.dp_port_new(line.calendar)
        self.dp_id = self._lib.dp_port_id(self._p)
        # a bridge's end, where the library may move its own TLPs on (tb/models/native.py)
        self.native_end: Any = None
        self._dc, self._wire = ctypes.c_uint64(), ctypes.c_uint64()
        line.ports.append(self)  # by the library's port number
        channels = ctypes.cast(self._lib.dp_port_channels(self._p), ctypes.POINTER(_Channel))
        self.fc_state = [ChannelState(channels[vc], old) for vc, old in enumerate(self.fc_state)]
        for ch in self.fc_state:
            ch.start_fc_update_timer = self.start_fc_update_timer
        # told when the link's flow control (virtual channel 0) comes up or goes down
        self.fc_listeners: list[Callable[[], None]] = []
        self.fc_state[0].initialized = _Initialized(self.fc_state[0].initialized, self)
        # the receive lane tells the end the library takes arrivals at when it is busy
        self._rx_lane = FlaggedLane(self._handle_rx, self._lane_busy)

    @property
    def rx_handler(self) -> Any:
        """The receive handler (cocotbext-pcie's); the end the library takes arrivals at
        is told when it is replaced."""
        return self._rx_handler

    @rx_handler.setter
    def rx_handler(self, handler: Any) -> None:
        self._rx_handler = handler
        end = self.__dict__.get("native_end")
        if end is not None:
            end.refresh()

    def _lane_busy(self, busy: bool) -> None:
        end = self.native_end
        if end is not None:
            end.lane_busy(busy)

    def _connect(self, port) -> None:
        if not isinstance(port, CompiledTlpPort):
            raise TypeError("a compiled link connects only to another compiled link")
        super()._connect(port)

    def _connect_int(self, port) -> None:
        super()._connect_int(port)
        self._lib.dp_port_connect(
            self._p,
            port._p,
            float(self.symbol_period),
            float(self.time_scale),
            int(self.link_delay_steps),
            int(self.max_latency_timer_steps),
            int(self.fc_update_steps),
        )

    async def handle_tx(self, pkt) -> None:
        self._lib.dp_port_occupy(self._p, steps(), pkt.get_wire_size())
        await SimPort.handle_tx(self, pkt)

    async def send(self, pkt) -> None:
        """``TlpPort.send``: the credit gate, the wait for the wire's next place, then
        the TLP into the library."""
        pkt.release_fc()
        vc = self.classify_tlp_vc(pkt)
        kind = pkt.get_fc_type().value
        dc = pkt.get_data_credits()
        await self._gate(vc, kind, dc)
        line = self._line
        handle = line.carry(pkt)
        self._lib.dp_port_send(self._p, steps(), handle, pkt.get_wire_size(), vc, kind, dc)
        line.poke()

    async def send_released(self, handle: int) -> None:
        """:meth:`send` of the library's own TLP ``handle``, which a hop in the library
        hands on with its last receiver's credits released: the same credit gate and
        wait for the wire, then onto the wire; no Python TLP made."""
        line, lib = self._line, self._lib
        dc, wire = self._dc, self._wire
        kind = lib.dp_tlp_fc(line.calendar, handle, ctypes.byref(dc), ctypes.byref(wire))
        await self._gate(0, kind, dc.value)
        lib.dp_port_send(self._p, steps(), handle, wire.value, 0, kind, dc.value)
        line.poke()

    @property
    def fc_ready(self) -> bool:
        """Whether the link's flow control (virtual channel 0) is initialized."""
        return self.fc_state[0].initialized.is_set()

    async def _gate(self, vc: int, kind: int, dc: int) -> None:
        """Take a TLP's credits (``kind``: P, NP, CPL; ``dc`` data credits on ``vc``),
        waiting for an update while there are none, then wait for the wire's next place
        while it is taken (``TlpPort.send``'s loops)."""
        lib, p = self._lib, self._p
        fc = self.fc_state[vc]
        if not (fc.initialized.is_set() and lib.dp_port_take_credit(p, vc, kind, dc)):
            await fc.initialized.wait()
            while not lib.dp_port_take_credit(p, vc, kind, dc):
                update = fc.updates[kind]
                update.clear()
                lib.dp_port_wait_credit(p, vc, kind)
                await update.wait()
        while lib.dp_port_must_wait(p, steps()):
            ready = Event()
            self._senders.append(ready)
            lib.dp_port_add_sender(p)
            await ready.wait()
            if not lib.dp_port_has_next(p):
                break

    # --- what the library reports -----------------------------------------------------------
    def received(self, handle: int, receipt: int) -> None:
        """A TLP has reached this port (the ``receipt``-th): past the port's end in the
        library where it can (:mod:`tb.models.native`: across the bridge and switch, to
        the GPU's BAR1, to the card), else into the receive lane, its credits released
        when it is passed on. An end that ``defers`` takes its turn in the lane for the
        library's TLPs that arrive while the lane is busy."""
        end = self.native_end
        if end is not None and handle & _NATIVE:
            if not self._rx_lane.busy:
                got = end.cross(handle, receipt)
                if got:
                    if got == WAITING:  # the end's work waits: the lane holds behind it
                        self._rx_lane.push(LaneWork(end.rest))
                    return
            elif end.defers:
                self._rx_lane.push(LaneWork(functools.partial(self._later, handle, receipt)))
                return
        tlp = self._line.take(handle)
        tlp.release_fc_cb = functools.partial(self._release, receipt)
        self._rx_lane.push(tlp)

    async def _later(self, handle: int, receipt: int) -> None:
        """The library's TLP ``handle``, which arrived while the receive lane was busy,
        in its turn: past the port's end in the library where it can, else to the
        port's receive handler."""
        end = self.native_end
        got = end.cross(handle, receipt)
        if got == WAITING:
            await end.rest()
        elif not got:
            tlp = self._line.take(handle)
            tlp.release_fc_cb = functools.partial(self._release, receipt)
            await super()._handle_rx(tlp)

    async def _handle_rx(self, tlp: Any) -> None:
        if type(tlp) is LaneWork:
            await tlp.run()
            return
        await super()._handle_rx(tlp)

    def _release(self, receipt: int) -> None:
        self._lib.dp_port_release(self._p, steps(), receipt)
        self._line.poke()

    def wake(self) -> None:
        """The wire's next place is free: the first sender waiting takes it."""
        self._senders.popleft().set()

    def credit(self, vc: int, kind: int) -> None:
        """Credit of ``kind`` on ``vc`` has come, which a sender waits for."""
        self.fc_state[vc].updates[kind].set()

    def start_fc_update_timer(self) -> None:
        raise RuntimeError(
            "a compiled link releases credits through the TLP (Tlp.release_fc), "
            "not the channel state"
        )
