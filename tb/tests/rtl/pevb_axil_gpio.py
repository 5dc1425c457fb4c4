"""pevb_axil_gpio alone: cocotbext-axi's AXI4-Lite master reading and writing the user
BAR's registers (the LED register, the card RAM size, the mailbox and its status) at
random, any strobes and address bits above the decoded width, and a model of XDMA's user
interrupt handshake answering each request after a random delay. Checked against the
register map (driver_model/regs.py) and XDMA's protocols:

- LED: active low, reset to 7, written only with strobe 0; the RAM size read-only; other
  offsets read 0 and ignore writes;
- mailbox: values queued in order, 16 deep, a write that finds it full dropped with the
  sticky overflow bit (a write of it clears it), a read taking the oldest (0 when empty),
  the status holding the count;
- MSI/MSI-X: one request per value queued, held until its acknowledge, then low for at
  least a cycle; legacy: a level while values are queued, held until its first
  acknowledge and the mailbox's emptying, raised again only after its second.
"""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from driver_model import regs as R
from tb.config import bench_params
from tb.env.rtl_bench import start

INPUTS = ("irq_ack", "legacy")


class Handshake:
    """The hard IP's side of usr_irq_req/usr_irq_ack, checked as it goes."""

    def __init__(self, dut, rng: random.Random, legacy: bool) -> None:
        self.dut, self.rng, self.legacy = dut, rng, legacy
        self.acks = 0  # first acknowledges (one per request in MSI mode)
        self.seconds = 0  # legacy: second acknowledges

    async def run(self) -> None:
        dut, rng = self.dut, self.rng
        was_high, just_acked = False, False
        owed_second = False
        wait = None
        while True:
            await RisingEdge(dut.clk)
            dut.irq_ack.value = 0
            await ReadOnly()
            high = bool(int(dut.irq_req.value))
            if not self.legacy:
                assert not (just_acked and high), "the request did not fall after its ack"
            else:
                assert not (high and not was_high and owed_second), "raised before its 2nd ack"
            rising = high and not was_high
            falling = was_high and not high
            was_high, just_acked = high, False
            if rising:
                wait = rng.randrange(1, 6)
            if self.legacy and falling:  # (late: new values may come meanwhile)
                owed_second, wait = True, rng.randrange(1, 40)
            if wait is not None:
                wait -= 1
                if wait == 0:
                    wait = None
                    await RisingEdge(dut.clk)  # (the ack is driven for the next edge)
                    dut.irq_ack.value = 1
                    if owed_second and not high:
                        owed_second = False
                        self.seconds += 1
                    else:
                        self.acks += 1
                        just_acked = True


async def _session(dut, legacy: bool, seed: int) -> None:
    rng = random.Random(seed)
    width = bench_params().get("ADDR_WIDTH", 12)
    ram_size = bench_params().get("RAM_SIZE", 65536)
    await start(dut, INPUTS)
    dut.legacy.value = int(legacy)
    master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
    hs = Handshake(dut, rng, legacy)
    cocotb.start_soon(hs.run())
    led, mailbox, overflow, pushed = R.LED_RESET_VALUE, deque(), False, 0
    for _ in range(400):
        ofs = rng.choice([R.USER_LED, R.USER_RAM_SIZE, R.USER_MAILBOX, R.USER_MAILBOX_STATUS])
        ofs = ofs if rng.random() < 0.9 else rng.randrange(16, 1 << width) & ~3
        addr = ofs | rng.randrange(4) << width if rng.random() < 0.2 else ofs  # aliases
        if rng.random() < 0.5:
            value, strb = rng.getrandbits(32), rng.choice([0xF, 0xF, rng.randrange(16)])
            data = bytes((value >> 8 * k) & 0xFF for k in range(4))
            lanes = [k for k in range(4) if strb >> k & 1]
            if not lanes:
                continue
            lo, hi = lanes[0], lanes[-1] + 1
            await master.write(addr + lo, data[lo:hi])
            strb = ((1 << (hi - lo)) - 1) << lo  # (the master's strobes cover lo..hi)
            if ofs == R.USER_LED and strb & 1:
                led = value & 7
            elif ofs == R.USER_MAILBOX:
                if len(mailbox) == R.MAILBOX_DEPTH:
                    overflow = True
                else:
                    mailbox.append(value & ((1 << 8 * hi) - 1) & ~((1 << 8 * lo) - 1))
                    pushed += 1
            elif ofs == R.USER_MAILBOX_STATUS and value & R.MAILBOX_OVERFLOW and strb >> 3 & 1:
                overflow = False
        else:
            got = int.from_bytes((await master.read(addr, 4)).data, "little")
            if ofs == R.USER_LED:
                want = led
            elif ofs == R.USER_RAM_SIZE:
                want = ram_size
            elif ofs == R.USER_MAILBOX:
                want = mailbox.popleft() if mailbox else 0
            elif ofs == R.USER_MAILBOX_STATUS:
                want = len(mailbox) | (R.MAILBOX_OVERFLOW if overflow else 0)
            else:
                want = 0
            assert got == want, f"read {ofs:#x}: {got:#x}, not {want:#x}"
        assert int(dut.led.value) == led
    # a burst that fills the mailbox: the overflow, then its clearing
    for k in range(R.MAILBOX_DEPTH + 3):
        await master.write(R.USER_MAILBOX, k.to_bytes(4, "little"))
        if len(mailbox) < R.MAILBOX_DEPTH:
            mailbox.append(k)
            pushed += 1
    status = int.from_bytes((await master.read(R.USER_MAILBOX_STATUS, 4)).data, "little")
    assert status == R.MAILBOX_DEPTH | R.MAILBOX_OVERFLOW, f"status {status:#x} when full"
    await master.write(R.USER_MAILBOX_STATUS, R.MAILBOX_OVERFLOW.to_bytes(4, "little"))
    status = int.from_bytes((await master.read(R.USER_MAILBOX_STATUS, 4)).data, "little")
    assert status == R.MAILBOX_DEPTH, f"status {status:#x} after clearing the overflow"
    while mailbox:  # empty it: the requests all end
        assert (
            int.from_bytes((await master.read(R.USER_MAILBOX, 4)).data, "little")
            == mailbox.popleft()
        )
    for _ in range(200):
        await RisingEdge(dut.clk)
    assert not int(dut.irq_req.value), "a request left up with nothing queued"
    if legacy:
        assert hs.acks == hs.seconds and hs.acks >= 1, (hs.acks, hs.seconds)
    else:
        assert hs.acks == pushed and pushed > 10, f"{hs.acks} requests for {pushed} values"


@cocotb.test()
async def test_msi(dut):
    await _session(dut, False, cocotb.RANDOM_SEED)


@cocotb.test()
async def test_legacy(dut):
    await _session(dut, True, cocotb.RANDOM_SEED + 1)
