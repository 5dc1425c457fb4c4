"""The TLP-level link: ``SimPort`` with TLPs moved whole and no DLLP objects, its timed work on
the timeline and its receive handler in a lane (:mod:`tb.models.timeline`).

The exact model (``SimPort``) sends every ACK and every UpdateFC as a DLLP through the
same transmit loop, timer tasks and receive path as a TLP, and starts a task per packet
for the wire's delay. :class:`TlpPort` keeps what those DLLPs do to the TLPs and drops
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

The flow-control initialization (InitFC1/InitFC2 DLLPs, about 55 ns on a Gen2 x1 link)
runs as in ``SimPort``, by its own transmit loop, which has nothing to send after it.
Left out: the ACK/NAK retry buffer (the simulated wire never corrupts), and
the 30 us refresh UpdateFCs sent on an idle link (three 8-byte DLLPs every 30 us: 0.01%
of a x1 link). docs/internals.md has the measured difference to the exact model.
"""

from __future__ import annotations

from collections import deque

from cocotb.triggers import Event
from cocotbext.pcie.core.dllp import FcType
from cocotbext.pcie.core.port import SimPort
from cocotbext.pcie.core.tlp import Tlp

from .timeline import Lane, steps, timeline

DLLP_WIRE_BYTES = 8  # a DLLP on the wire: 6 bytes and its framing (Dllp.get_wire_size)


class TlpPort(SimPort):
    """A ``SimPort`` that moves whole TLPs and models its DLLPs by their effect only; its
    timed work runs on the fabric's timeline, its receive handler in a lane
    (:mod:`tb.models.timeline`)."""

    def __init__(self, fc_init=[[0] * 6] * 8, *args, **kwargs) -> None:
        self._timeline = timeline()
        self._free_at = 0  # the step this port's transmitter's wire is free again
        self._acks: deque[int] = deque()  # steps at which ACK DLLPs become due on it
        self._ack_end = -1
        self._dllp_steps = 1
        # DLLPs whose wire time was modelled (ACKs and UpdateFCs), for the record
        self.dllps = 0
        # the transmitter: a TLP on the wire, one waiting for it (SimPort's tx_queue of
        # one), and the senders waiting for that place, first come first served
        self._sending = False
        # the step the TLP on the wire has left it, and the place among that step's work
        # of the hand-over to the next TLP (put on the timeline only when one waits)
        self._end = 0
        self._end_slot = -1
        self._end_set = False
        self._next: Tlp | None = None
        self._senders: deque[Event] = deque()
        self._fc_timer_due = False
        self._rx_lane = Lane(self._handle_rx)
        super().__init__(fc_init, *args, **kwargs)

    # --- connection and flow-control initialization ---------------------------------------
    def _connect(self, port) -> None:
        if not isinstance(port, TlpPort):
            raise TypeError("a TLP-level port connects only to another TLP-level port")
        super()._connect(port)

    def _connect_int(self, port) -> None:
        super()._connect_int(port)
        self._dllp_steps = self._wire_steps(DLLP_WIRE_BYTES)

    def _wire_steps(self, nbytes: int) -> int:
        """Steps ``nbytes`` take on the wire (SimPort.handle_tx's serialization)."""
        return max(int(nbytes * self.symbol_period * self.time_scale), 1)

    async def handle_tx(self, pkt) -> None:
        # the exact transmitter's DLLPs (the FC initialization): their time on the wire
        now = steps()
        self._free_at = max(self._free_at, now) + self._wire_steps(pkt.get_wire_size())
        await super().handle_tx(pkt)

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

    def _deliver(self, sent: int, item: object) -> None:
        """``item`` (a TLP or a credit update) has left the wire at step ``sent``: it
        reaches the other port after the ports' delay."""
        other = self.other
        if other is None:
            raise RuntimeError("port not connected")
        self._timeline.at(sent + max(self.link_delay_steps, 1), other._arrive, item)

    async def send(self, pkt) -> None:
        """``Port.send`` into the TLP-level transmitter (SimPort's own transmit loop only
        initializes flow control)."""
        pkt.release_fc()
        fc = self.fc_state[self.classify_tlp_vc(pkt)]
        credit_type = pkt.get_fc_type()
        dc = pkt.get_data_credits()
        if fc.initialized.is_set() and fc.tx_has_credit(credit_type, dc):
            fc.tx_consume_fc(credit_type, dc)  # tx_tlp_fc_gate without a wait
        else:
            await fc.tx_tlp_fc_gate(pkt)
        while self._busy() and (self._next is not None or self._senders):
            ready = Event()
            self._senders.append(ready)
            await ready.wait()
            if self._next is None:
                break
        if self._busy():
            self._next = pkt
            if not self._end_set:  # the hand-over, in the place it was given
                self._end_set = True
                self._timeline.at_slot(self._end, self._end_slot, self._sent)
        else:
            self._put_on_wire(pkt)

    def _busy(self) -> bool:
        """Whether a TLP is on the wire: until the hand-over to the next, which is on the
        timeline only when a TLP waits; without one, the wire is free from the hand-over's
        place among the work of its step on (as if it had run there)."""
        if self._sending and not self._end_set and self._timeline.passed(self._end, self._end_slot):
            self._sending = False
        return self._sending

    def _put_on_wire(self, pkt) -> None:
        length = self._wire_steps(pkt.get_wire_size())
        self._deliver(self._claim_wire(steps(), length) + length, Tlp(pkt))
        self._sending = True
        # the next TLP goes when this one has left the wire: the hand-over's place among
        # that step's work is taken now, the work scheduled only if a TLP waits for it
        self._end = self._free_at
        self._end_slot = self._timeline.slot()
        self._end_set = False

    def _sent(self, _=None) -> None:
        self._end_set = False
        pkt, self._next = self._next, None
        if pkt is None:
            self._sending = False
        else:
            self._put_on_wire(pkt)
            if self._senders:  # its place is free: the first sender waiting takes it
                self._senders.popleft().set()

    # --- the receiver ---------------------------------------------------------------------
    def _arrive(self, item: object) -> None:
        if isinstance(item, Tlp):
            self._receive(steps(), item)
        else:
            self._update_credits(*item)

    def _receive(self, now: int, tlp: Tlp) -> None:
        if now >= self._ack_end:  # the ACK latency timer starts (SimPort.ext_recv)
            self._ack_end = now + max(self.max_latency_timer_steps, 1)
            self._acks.append(self._ack_end)  # sent back on this port's transmitter
        self.fc_state[self.classify_tlp_vc(tlp)].rx_process_tlp_fc(tlp)
        self._rx_lane.push(tlp)

    async def _handle_rx(self, tlp: Tlp) -> None:
        if self.rx_handler is None:
            raise Exception("Receive handler not set")
        await self.rx_handler(tlp)

    async def _run_receive(self) -> None:
        return  # received TLPs go through the receive lane instead

    # --- flow-control updates -------------------------------------------------------------
    def start_fc_update_timer(self) -> None:
        if not self._fc_timer_due:
            self._fc_timer_due = True
            due = steps() + max(self.max_latency_timer_steps, 1)
            self._timeline.at(due, self._send_fc_updates)

    def _send_fc_updates(self, _=None) -> None:
        self._fc_timer_due = False
        now = steps()
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
                update = (vc, fc_type, hdr.rx_credits_allocated, data.rx_credits_allocated)
                self._deliver(start + self._dllp_steps, update)

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
