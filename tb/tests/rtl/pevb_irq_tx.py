"""pevb_irq_tx alone: channel interrupt sources and events, user interrupt requests that
rise, wait for their acknowledge and fall, posted writes taken and handed on, and a model
of the hard IP's interrupt interfaces that answers each message after a random delay
(sent or failed, sometimes never: the timeout then frees the sender). Checked against
PG195's and PG213's rules, with MSI and with MSI-X:

- MSI: one message at a time (none before the last is answered or timed out), one vector
  bit per message, the vector its source's field holds; a channel's message only after
  an enabled event or its enable set while active, and only once every posted write
  taken before the latest event has been handed on (the write fence); every enabled event
  answered by a message (several pending for one channel make one); a user request sends
  one message per rise and is acknowledged once the hard IP answers;
- MSI-X: each message with its vector's table entry (address and data); a message for a
  masked entry (or while the function is masked) logged in the PBA instead and sent once
  unmasked, the bit cleared then; nothing is sent to a masked entry; every user request
  acknowledged, every pending entry sent once unmasked.

The legacy interrupt (INTx) path is left to the system's INTx tests (tb/tests/cocotb_intx.py).
"""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge, ValueChange

from tb.config import bench_params
from tb.env.rtl_bench import start

VECTOR_STRIDE = 8  # a vector field per byte of the vector registers
INPUTS = ("irq_src", "irq_event", "chan_int_en", "user_int_en", "chan_vec", "user_vec")
INPUTS += ("msix_masked", "msix_entry_addr", "msix_entry_data", "usr_irq_req", "wr_enter")
INPUTS += ("wr_leave", "cfg_interrupt_msi_enable", "cfg_interrupt_msi_mmenable")
INPUTS += ("cfg_interrupt_msi_sent", "cfg_interrupt_msi_fail", "cfg_interrupt_msix_enable")
INPUTS += ("cfg_interrupt_msix_mask", "cfg_interrupt_msix_sent", "cfg_interrupt_msix_fail")
INPUTS += ("cfg_interrupt_sent",)


def entry(v: int) -> tuple[int, int]:
    """MSI-X table entry ``v``: (address, data)."""
    return 0xFEE0_0000 + 16 * v + (v << 32), 0x4000 + v


class Bench:
    def __init__(self, dut, rng: random.Random, mode: str) -> None:
        p = bench_params()
        self.dut, self.rng, self.mode = dut, rng, mode
        self.nc, self.nu = p.get("CHAN_IRQS", 2), p.get("USER_IRQS", 1)
        self.timeout = p.get("MSI_TIMEOUT_CYCLES", 65536)
        # one vector per source: channels 0.., users after them
        self.vec = list(range(1, self.nc + self.nu + 1))
        self.chan_vec = sum(self.vec[k] << (VECTOR_STRIDE * k) for k in range(self.nc))
        self.user_vec = sum(
            self.vec[self.nc + u] << (VECTOR_STRIDE * (u % 4) + 32 * (u // 4))
            for u in range(self.nu)
        )
        self.src = 0
        self.en = 0
        self.en_prev = 0
        self.owed = [False] * self.nc  # an enabled event (or enable) not yet answered
        self.req = [False] * self.nu
        self.sent_since_rise = [False] * self.nu
        self.fell = [-10] * self.nu  # the cycle each request last fell
        self.acks = [0] * self.nu
        self.enters = self.leaves = 0
        self.last_event_enters = 0  # writes taken before the latest channel event
        self.flight: list | None = None  # [start cycle, answer cycle or None]
        self.masked = 0
        self.fmask = 0
        self.pba = 0
        self.messages = 0
        self.fence_at_decision = True
        self.trig_then = 0
        self.masked_then = self.fmask_then = 0

    async def _table(self) -> None:
        """The register file's MSI-X table read port: the entry of msix_vec, as soon as it
        changes (within the cycle: the sender takes it on the next edge)."""
        dut = self.dut
        while True:
            dut.msix_entry_addr.value, dut.msix_entry_data.value = entry(int(dut.msix_vec.value))
            await ValueChange(dut.msix_vec)

    def source_of(self, v: int) -> int:
        return self.vec.index(v)

    async def run(self, cycles: int) -> None:
        dut, rng = self.dut, self.rng
        msi, msix = self.mode == "msi", self.mode == "msix"
        dut.cfg_interrupt_msi_enable.value = int(msi or msix)  # MSI-X takes precedence
        dut.cfg_interrupt_msi_mmenable.value = 5
        dut.cfg_interrupt_msix_enable.value = int(msix)
        dut.chan_vec.value, dut.user_vec.value = self.chan_vec, self.user_vec
        dut.user_int_en.value = (1 << self.nu) - 1
        quiet = cycles - 400  # the last cycles: no new causes, everything owed answered
        cocotb.start_soon(self._table())
        for cycle in range(cycles):
            busy = cycle < quiet
            # the sources and enables
            if busy and rng.random() < 0.05:
                self.src = rng.getrandbits(self.nc)
            if busy and rng.random() < 0.02:
                self.en = rng.getrandbits(self.nc)
            if not busy:
                self.en = (1 << self.nc) - 1
            event = rng.getrandbits(self.nc) if busy and rng.random() < 0.08 else 0
            dut.irq_src.value, dut.irq_event.value, dut.chan_int_en.value = self.src, event, self.en
            trig = (event & self.en) | (self.src & self.en & ~self.en_prev)
            # posted writes: taken, and handed on in order (never more than taken)
            # (at most 8 in flight: the requester's depth; the fence counts in 4 bits)
            enter = int(busy and self.enters - self.leaves < 8 and rng.random() < 0.2)
            leave = int(self.leaves < self.enters and rng.random() < 0.25)
            dut.wr_enter.value, dut.wr_leave.value = enter, leave
            # user requests: rise at random, fall a while after their acknowledge
            for u in range(self.nu):
                low = cycle > self.fell[u] + 1  # low at one edge at least: a new request
                if not self.req[u] and low and busy and rng.random() < 0.02:
                    self.req[u], self.sent_since_rise[u] = True, False
            dut.usr_irq_req.value = sum(int(r) << u for u, r in enumerate(self.req))
            # MSI-X masks
            if msix and busy and rng.random() < 0.02:
                self.masked = rng.getrandbits(32)
            if msix and not busy:
                self.masked = 0
            self.fmask = (
                int(msix and busy and rng.random() < 0.05) if cycle % 50 == 0 else self.fmask
            )
            dut.msix_masked.value, dut.cfg_interrupt_msix_mask.value = self.masked, self.fmask
            # the hard IP's answers
            answer = self.flight is not None and self.flight[1] == cycle
            ok = rng.random() < 0.8
            dut.cfg_interrupt_msi_sent.value = int(answer and ok and msi)
            dut.cfg_interrupt_msi_fail.value = int(answer and not ok and msi)
            dut.cfg_interrupt_msix_sent.value = int(answer and ok and msix)
            dut.cfg_interrupt_msix_fail.value = int(answer and not ok and msix)
            await ReadOnly()
            self.check(cycle, trig, event, enter, leave, answer)
            self.en_prev = self.en
            await RisingEdge(dut.clk)
        # everything owed was answered
        if self.mode == "msi":
            assert not any(self.owed), f"channels owed a message at the end: {self.owed}"
        assert not any(self.req), f"user requests never acknowledged: {self.req}"
        assert self.pba == 0 and int(dut.msix_pba.value) == 0, "messages left pending"
        assert self.messages > 20, f"only {self.messages} messages"

    def check(self, cycle: int, trig: int, event: int, enter: int, leave: int, answer: bool):
        dut = self.dut
        mode = self.mode
        # the fence's state before this cycle's edge
        fence_ok = self.leaves >= self.last_event_enters
        sent_vec = None
        if mode == "msi":
            bits = int(dut.cfg_interrupt_msi_int.value)
            if bits:
                assert bits & (bits - 1) == 0, f"cycle {cycle}: several vectors {bits:#x}"
                sent_vec = bits.bit_length() - 1
        elif mode == "msix" and int(dut.cfg_interrupt_msix_int.value):
            addr, data = (
                int(dut.cfg_interrupt_msix_address.value),
                int(dut.cfg_interrupt_msix_data.value),
            )
            sent_vec = data - 0x4000
            assert entry(sent_vec) == (addr, data), f"cycle {cycle}: not a table entry"
            masked = self.masked_then >> sent_vec & 1 or self.fmask_then  # when it was decided
            assert not masked, f"cycle {cycle}: a message to a masked entry"
        if sent_vec is not None:  # (the output shows the message decided last cycle)
            assert self.flight is None, f"cycle {cycle}: a message while one is in flight"
            self.messages += 1
            self.flight = [
                cycle,
                cycle + self.rng.randrange(1, 12) if self.rng.random() < 0.95 else None,
            ]
            if self.pba >> sent_vec & 1:  # a pending entry unmasked
                self.pba &= ~(1 << sent_vec)
            elif mode == "msi":
                self.took(cycle, self.source_of(sent_vec), fence_was=self.fence_at_decision)
            else:  # (MSI-X: what each message answers is told apart in MSI mode only)
                self.mark_user(self.source_of(sent_vec))
        pba = int(dut.msix_pba.value) if mode == "msix" else 0
        new_pba = pba & ~self.pba
        for v in range(32):
            if new_pba >> v & 1:  # logged pending: only for a masked entry
                masked = self.masked_then >> v & 1 or self.fmask_then
                assert masked, f"cycle {cycle}: entry {v} logged pending while unmasked"
                self.pba |= 1 << v
                self.mark_user(self.source_of(v))
        assert pba == self.pba or mode != "msix", f"cycle {cycle}: PBA {pba:#x}, {self.pba:#x}"
        # the message in flight: answered, or timed out
        if self.flight is not None:
            start, due = self.flight
            if answer or (due is None and cycle - start >= self.timeout + 1):
                self.flight = None
        # user acknowledges
        acks = int(dut.usr_irq_ack.value)
        for u in range(self.nu):
            if acks >> u & 1:
                # (MSI-X: a request logged for an entry already pending shows nothing else)
                pending = mode == "msix" and self.pba >> self.vec[self.nc + u] & 1
                assert self.sent_since_rise[u] or pending, f"cycle {cycle}: user {u} acked unsent"
                self.acks[u] += 1
                self.req[u] = False  # the user logic lowers its request after the ack
                self.fell[u] = cycle
        # this cycle's causes, for the next decisions
        for c in range(self.nc):
            if trig >> c & 1:
                self.owed[c] = True
        if event:
            self.last_event_enters = self.enters + 0
        self.fence_at_decision = fence_ok
        self.trig_then = trig
        self.masked_then, self.fmask_then = self.masked, self.fmask
        self.enters += enter
        self.leaves += leave

    def mark_user(self, k: int) -> None:
        """Source ``k``'s message went (MSI-X): a user request's is sent."""
        if k >= self.nc:
            self.sent_since_rise[k - self.nc] = True

    def took(self, cycle: int, k: int, fence_was: bool) -> None:
        if k < self.nc:
            assert self.owed[k], f"cycle {cycle}: a message for channel {k}, which owed none"
            assert fence_was, f"cycle {cycle}: channel {k}'s message before the writes"
            # (a cause in the cycle it was decided stays owed)
            self.owed[k] = bool(self.trig_then >> k & 1)
        else:
            u = k - self.nc
            assert self.req[u] and not self.sent_since_rise[u], f"cycle {cycle}: user {u} again"
            self.sent_since_rise[u] = True


@cocotb.test()
async def test_msi(dut):
    bench = Bench(dut, random.Random(cocotb.RANDOM_SEED), "msi")
    await start(dut, INPUTS)
    await bench.run(6000)


@cocotb.test()
async def test_msix(dut):
    if not bench_params().get("MSIX", 0):
        return
    bench = Bench(dut, random.Random(cocotb.RANDOM_SEED + 1), "msix")
    await start(dut, INPUTS)
    await bench.run(6000)
