"""The lean link: cocotbext-pcie's ``SimPort`` with TLPs moved whole and no DLLP objects.

The exact model (``SimPort``) sends every ACK and every UpdateFC as a DLLP through the
same transmit loop, timer tasks and receive path as a TLP, and starts a task per packet
for the wire's delay. :class:`LeanPort` keeps what those DLLPs do to the TLPs and drops
the rest:

- serialization at the link's rate (the same step count per TLP as ``SimPort``) and the
  same port-to-port delay;
- the ACK and UpdateFC DLLPs' time on the wire: each is placed on its transmitter's wire
  when the exact model's latency timer would send it (ACKs lazily, before the next TLP
  that could be delayed by one), so a TLP waits for them as it would behind the real one;
- flow-control credits: the receiver consumes and releases them as ``SimPort`` does,
  and the credit limit reaches the transmitter when the UpdateFC would (the update
  latency timer, then the DLLP's serialization and the wire's delay); a transmitter out
  of credit waits for it in ``Port.send`` as before.

Left out: the FC initialization handshake (the credits are exchanged when the ports are
connected, at time 0), the ACK/NAK retry buffer (the simulated wire never corrupts), and
the 30 us refresh UpdateFCs sent on an idle link (three 8-byte DLLPs every 30 us: 0.01%
of a x1 link). docs/internals.md has the measured difference to the exact model.

Build a system with lean links by constructing its cocotbext-pcie objects inside
:func:`link_model` ``("lean")``.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterator

import cocotb
from cocotb.triggers import Event, Timer
from cocotb.utils import get_sim_time
from cocotbext.pcie.core import bridge as _bridge
from cocotbext.pcie.core import device as _device
from cocotbext.pcie.core.dllp import FcType
from cocotbext.pcie.core.port import SimPort
from cocotbext.pcie.core.tlp import Tlp

LINK_MODELS = ("lean", "exact")
DLLP_WIRE_BYTES = 8  # a DLLP on the wire: 6 bytes and its framing (Dllp.get_wire_size)


class LeanPort(SimPort):
    """A ``SimPort`` that moves whole TLPs and models its DLLPs by their effect only."""

    def __init__(self, fc_init=[[0] * 6] * 8, *args, **kwargs) -> None:
        # arrivals at this port's receiver, in order: (step, TLP or credit update)
        self._wire: deque[tuple[int, object]] = deque()
        self._wire_event = Event()
        self._free_at = 0  # the step this port's transmitter's wire is free again
        self._acks: deque[int] = deque()  # steps at which ACK DLLPs become due on it
        self._ack_end = -1
        self._dllp_steps = 1
        # DLLPs whose wire time was modelled (ACKs and UpdateFCs), for the record
        self.dllps = 0
        super().__init__(fc_init, *args, **kwargs)
        cocotb.start_soon(self._run_wire())

    # --- connection and flow-control initialization ---------------------------------------
    def _connect(self, port) -> None:
        if not isinstance(port, LeanPort):
            raise TypeError("a lean port connects only to another lean port")
        super()._connect(port)
        self._init_fc(port)
        port._init_fc(self)

    def _connect_int(self, port) -> None:
        super()._connect_int(port)
        self._dllp_steps = max(int(DLLP_WIRE_BYTES * self.symbol_period * self.time_scale), 1)

    def _init_fc(self, other: LeanPort) -> None:
        """The credits InitFC1/InitFC2 would have carried: the other receiver's initial
        allocation, infinite where it advertises 0."""
        for mine, theirs in zip(self.fc_state, other.fc_state, strict=True):
            if not mine.active:
                continue
            for kind in ("ph", "pd", "nph", "npd", "cplh", "cpld"):
                tx, rx = getattr(mine, kind), getattr(theirs, kind)
                tx.tx_initial_allocation = tx.tx_credit_limit = rx.rx_credits_allocated
            mine.fi1 = mine.fi1p = mine.fi1np = mine.fi1cpl = mine.fi2 = True
            mine.initialized.set()
        self.fc_initialized = True

    # --- the transmitter ------------------------------------------------------------------
    def _claim_wire(self, now: int, steps: int) -> int:
        """Put ``steps`` of transmission on the wire as early as possible from ``now``,
        after the ACKs due by then; its start step."""
        free = self._free_at
        acks = self._acks
        while acks and acks[0] <= max(now, free):
            free = max(free, acks.popleft()) + self._dllp_steps
            self.dllps += 1
        start = max(now, free)
        self._free_at = start + steps
        return start

    def _deliver(self, step: int, item: object) -> None:
        other = self.other
        if other is None:
            raise RuntimeError("port not connected")
        other._wire.append((step, item))
        other._wire_event.set()

    async def _run_transmit(self) -> None:
        queue = self.tx_queue
        while True:
            while queue.empty():
                self.tx_queue_sync.clear()
                await self.tx_queue_sync.wait()
            pkt = queue.get_nowait()
            now = get_sim_time("step")
            steps = max(int(pkt.get_wire_size() * self.symbol_period * self.time_scale), 1)
            start = self._claim_wire(now, steps)
            self._deliver(start + steps + max(self.link_delay_steps, 1), Tlp(pkt))
            # the next TLP leaves the queue when this one has left the wire
            await Timer(self._free_at - now, "step")

    # --- the receiver ---------------------------------------------------------------------
    async def _run_wire(self) -> None:
        wire = self._wire
        while True:
            while not wire:
                self._wire_event.clear()
                await self._wire_event.wait()
            step, item = wire[0]
            now = get_sim_time("step")
            if step > now:
                await Timer(step - now, "step")
                continue
            wire.popleft()
            if isinstance(item, Tlp):
                self._receive(now, item)
            else:
                self._update_credits(*item)

    def _receive(self, now: int, tlp: Tlp) -> None:
        if now >= self._ack_end:  # the ACK latency timer starts (SimPort.ext_recv)
            self._ack_end = now + max(self.max_latency_timer_steps, 1)
            self._acks.append(self._ack_end)  # sent back on this port's transmitter
        self.fc_state[self.classify_tlp_vc(tlp)].rx_process_tlp_fc(tlp)
        self.rx_queue.put_nowait(tlp)

    # --- flow-control updates -------------------------------------------------------------
    async def _run_fc_update_timer(self) -> None:
        await Timer(max(self.max_latency_timer_steps, 1), "step")
        now = get_sim_time("step")
        for vc, ch in enumerate(self.fc_state):
            if not ch.active:
                continue
            for fc_type, due, hdr, data in (
                (FcType.P, "next_fc_p_tx", ch.ph, ch.pd),
                (FcType.NP, "next_fc_np_tx", ch.nph, ch.npd),
                (FcType.CPL, "next_fc_cpl_tx", ch.cplh, ch.cpld),
            ):
                if getattr(ch, due) > now:
                    continue
                setattr(ch, due, now + self.fc_update_steps)
                start = self._claim_wire(now, self._dllp_steps)
                self.dllps += 1
                arrive = start + self._dllp_steps + max(self.link_delay_steps, 1)
                update = (vc, fc_type, hdr.rx_credits_allocated, data.rx_credits_allocated)
                self._deliver(arrive, update)

    def _update_credits(self, vc: int, fc_type: FcType, hdr: int, data: int) -> None:
        """An UpdateFC arrived: the transmitter's new credit limit (Port.handle_dllp)."""
        ch = self.fc_state[vc]
        if fc_type == FcType.P:
            ch.ph.tx_credit_limit, ch.pd.tx_credit_limit = hdr, data
            ch.fc_p_update.set()
        elif fc_type == FcType.NP:
            ch.nph.tx_credit_limit, ch.npd.tx_credit_limit = hdr, data
            ch.fc_np_update.set()
        else:
            ch.cplh.tx_credit_limit, ch.cpld.tx_credit_limit = hdr, data
            ch.fc_cpl_update.set()

    async def _run_fc_update_idle_timer(self) -> None:
        return  # no refresh UpdateFCs on an idle link (see the module text)


@contextlib.contextmanager
def link_model(kind: str) -> Iterator[None]:
    """Build cocotbext-pcie devices, switches and root complexes whose ports are lean
    (``"lean"``) or ``SimPort`` (``"exact"``) inside this block."""
    if kind not in LINK_MODELS:
        raise ValueError(f"unknown link model {kind!r}: {' or '.join(LINK_MODELS)}")
    cls = LeanPort if kind == "lean" else SimPort
    saved = _device.SimPort, _bridge.SimPort
    _device.SimPort = _bridge.SimPort = cls
    try:
        yield
    finally:
        _device.SimPort, _bridge.SimPort = saved
