"""cocotb tests of descriptor bypass (PG195) on the XDMA drop-in (``xdma_0``): the user
logic, a :class:`~tb.env.bypass.DescBypass` driver per channel, loads descriptors
straight into the channels on the ``h2c_dsc_byp_*_n``/``c2h_dsc_byp_*_n`` ports while
the host only sets Run and waits. The plan builds the drop-in with two channels each
way, channel 1 of each a stream, and every channel bypassed (Vivado's dsc_bypass_rd and
dsc_bypass_wr both "0011").

What PG195 says and these tests hold the engine to: the channel takes descriptors only
with Run set; ``ready`` falls when the buffer is nearly full and one more load is still
taken; the next-pointer, adjacent and magic fields play no part; every descriptor
loaded runs, Stop included; the completed count, the status bits, the status ports, the
interrupts and the poll-mode write-back behave as for fetched descriptors; an error
stops the channel with its bit and a Run toggle recovers.
"""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ClockCycles

from driver_model import regs
from driver_model.desc import C2hResult
from driver_model.regs import PcieErr, Stat, Target
from driver_model.xdma import Outcome, WriteBack, XdmaChannel
from tb.env.axi_mem import ErrorAxiRam
from tb.env.bypass import BypassDesc, DescBypass
from tb.env.harness import GUARD, UNMAPPED_HOST, Harness, Surface, pattern, setup
from tb.env.streams import StatusPorts, c2h_source, clock_and_reset, h2c_sink

MEM_SIZE = 1 << 20


class Rig:
    """The drop-in with a bypass driver on every channel, the user's AxiRam, and counts of
    the status ports' descriptor-done and packet-done pulses."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.tb = tb = h.tb
        dut = tb.dut
        clk, rst, level = clock_and_reset(dut)
        self.clk = clk
        self.mem = ErrorAxiRam(dut, clk, rst, level, MEM_SIZE)
        self.byp = {
            (d, n): DescBypass(dut, clk, d, n)
            for d, count in ((Target.H2C, h.h2c_channels), (Target.C2H, h.c2h_channels))
            for n in range(count)
        }
        self.sts = StatusPorts(dut, clk, h.h2c_channels, h.c2h_channels).counts

    def channel(self, direction: Target, n: int) -> XdmaChannel:
        """A driver-model channel on its own MSI vector handler."""
        ch = XdmaChannel(self.h.platform, direction, n, h2c_channels=self.h.h2c_channels)
        self.tb.irq_handlers[ch.vector].append(ch.interrupt)
        return ch

    def deadline(self, ns: float) -> float:
        """The simulated time ``ns`` from now."""
        return self.h.platform.now_ns() + ns

    def host(self, size: int, fill: int = GUARD):
        """A host buffer filled with ``fill``, and its bus address."""
        buf = self.tb.alloc_host(size)
        buf[0:size] = bytes([fill]) * size
        return buf, buf.get_absolute_address(0)


async def boot(dut) -> Rig:
    """The TB on the drop-in's hard-IP port, and the user logic around it."""
    return Rig(await setup(dut, hip=dut.hip))


def sts_port(rig: Rig, direction: Target, n: int) -> int:
    """The status port's value now."""
    d = "h2c" if direction == Target.H2C else "c2h"
    return int(getattr(rig.tb.dut, f"{d}_sts_{n}").value)


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_bypass_mm_roundtrip(dut):
    """H2C channel 0 copies host pieces into the user's AxiRam from descriptors the user
    logic loads (odd addresses and lengths, one crossing 4 KiB), and C2H channel 0 copies
    them back, each in poll mode with the write-back on: the bytes land and nothing
    around them changes; the completed count is the number of descriptors loaded, the
    write-back word says so, the descriptor-done pulses count them, descriptor_completed
    is set, and busy falls with Run still set once the last one is done."""
    rig = await boot(dut)
    pieces = [(0x0003, 1500), (0x1FF0, 4096 + 37), (0x5001, 77), (0x6000, 8)]
    rig.mem.write(0, bytes([GUARD]) * 0x8000)
    src, sa = rig.host(0x8000)
    dst, da = rig.host(0x8000)
    wb, wba = rig.host(64, 0)
    image = bytearray([GUARD]) * 0x8000
    for i, (addr, n) in enumerate(pieces):
        data = pattern(n, 40 + i)
        src[addr : addr + n] = data
        image[addr : addr + n] = data
    for direction, buf_base in ((Target.H2C, sa), (Target.C2H, da)):
        ch = rig.channel(direction, 0)
        wb[0:8] = bytes(8)
        await ch.start(None, interrupt=False, poll_wb_addr=wba)
        descs = [
            BypassDesc(buf_base + a, a, n, completed=True)
            if direction == Target.H2C
            else BypassDesc(a, buf_base + a, n, completed=True)
            for a, n in pieces
        ]
        rig.byp[(direction, 0)].load(*descs)
        word = WriteBack(wba, lambda: int.from_bytes(bytes(wb[0:4]), "little"))
        outcome = await ch.wait_count(
            len(pieces), rig.deadline(5e6), interrupt=False, writeback=word
        )
        assert outcome is Outcome.DONE, f"{ch.name}: {outcome}"
        assert regs.WB_COUNT.get(word.read()) == len(pieces) and not regs.WB_ERROR.get(word.read())
        await ClockCycles(rig.clk, 20)
        status = await ch.status()
        assert status & Stat.DESC_COMPLETED and not status & regs.STAT_ERROR_MASK, (
            regs.describe_status(status, direction)
        )
        assert not status & Stat.BUSY, "busy with nothing loaded"
        assert sts_port(rig, direction, 0) >> 6 & 1, "status port: Run"
        assert await ch.completed_count() == len(pieces)
        assert rig.sts[(direction, 0)]["desc"] == len(pieces)
        assert rig.sts[(direction, 0)]["pkt"] == 0
        await ch.stop()
    assert rig.mem.read(0, 0x8000) == bytes(image), "AxiRam after H2C"
    assert bytes(dst[0:0x8000]) == bytes(image), "host buffer after C2H"


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_bypass_ready_and_the_extra_load(dut):
    """Forty small descriptors loaded as fast as the port allows, one a clock, while each
    takes a host read round trip of hundreds of clocks: ready falls while the buffer is
    nearly full, the driver uses the one load PG195 allows after it falls, and every
    descriptor still runs in order (each writes its own bytes; a lost or repeated one
    shows in the memory and the count). The interrupt of the last descriptor (the only
    one with Completed) wakes the host."""
    rig = await boot(dut)
    n, size = 40, 96
    src, sa = rig.host(n * size)
    data = pattern(n * size, 9)
    src[0 : n * size] = data
    rig.mem.write(0, bytes([GUARD]) * (2 * n * size))
    ch = rig.channel(Target.H2C, 0)
    await ch.start(None)
    byp = rig.byp[(Target.H2C, 0)]
    # every other piece of memory, so a descriptor run twice or out of place shows
    byp.load(
        *(BypassDesc(sa + i * size, 2 * i * size, size, completed=i == n - 1) for i in range(n))
    )
    await byp.idle(5e6)
    assert byp.loaded == n
    outcome = await ch.wait_count(n, rig.deadline(10e6))
    status = await ch.status()
    assert outcome is Outcome.DONE, (
        f"{outcome}: {byp.loaded} loaded, {await ch.completed_count()} completed, "
        f"status {regs.describe_status(status, Target.H2C)}"
    )
    assert await ch.completed_count() == n
    assert byp.loaded == n and byp.allowance_loads > 0, (byp.loaded, byp.allowance_loads)
    for i in range(n):
        got = rig.mem.read(2 * i * size, 2 * size)
        assert got[:size] == data[i * size : (i + 1) * size], f"descriptor {i}"
        assert got[size:] == bytes([GUARD]) * size, f"written after descriptor {i}"
    await ch.stop()


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_bypass_streams(dut):
    """Stream channel 1 each way: H2C descriptors with EOP on the last of each packet
    come out of m_axis_h2c_*_1 as those packets; a C2H packet fills the descriptor the
    user logic loads (its source is where the result goes) and the result gives the
    length and EOP. Stop on a descriptor reports descriptor_stopped and the channel
    goes on with the next one. The status ports pulse packet-done once per packet."""
    rig = await boot(dut)
    sink = h2c_sink(dut, 1)
    source = c2h_source(dut, 1)
    src, sa = rig.host(0x4000)
    packets = [pattern(1000, 1), pattern(2100, 2)]
    src[0:1000] = packets[0]
    src[0x1000 : 0x1000 + 2100] = packets[1]
    h2c = rig.channel(Target.H2C, 1)
    await h2c.start(None)
    rig.byp[(Target.H2C, 1)].load(
        BypassDesc(sa, 0, 1000, eop=True, stop=True),
        BypassDesc(sa + 0x1000, 0, 600),
        BypassDesc(sa + 0x1000 + 600, 0, 1500, eop=True, completed=True),
    )
    assert await h2c.wait_count(3, rig.deadline(5e6)) is Outcome.DONE
    for want in packets:
        frame = await sink.recv()
        assert bytes(frame.tdata) == want
    status = await h2c.status()
    assert status & Stat.DESC_STOPPED and status & Stat.DESC_COMPLETED, regs.describe_status(
        status, Target.H2C
    )
    await h2c.stop()
    c2h = rig.channel(Target.C2H, 1)
    out, oa = rig.host(0x4000)
    await c2h.start(None)
    pkt = pattern(700, 3)
    await source.send(pkt)
    rig.byp[(Target.C2H, 1)].load(BypassDesc(oa + 0x2000, oa, 4096, completed=True))
    assert await c2h.wait_count(1, rig.deadline(5e6)) is Outcome.DONE
    await ClockCycles(rig.clk, 20)
    assert bytes(out[0:700]) == pkt
    assert bytes(out[700:0x2000]) == bytes([GUARD]) * (0x2000 - 700)
    assert C2hResult.parse(bytes(out[0x2000:0x2008])) == C2hResult(700, True)
    await c2h.stop()
    assert (rig.sts[(Target.H2C, 1)]["desc"], rig.sts[(Target.H2C, 1)]["pkt"]) == (3, 2)
    assert (rig.sts[(Target.C2H, 1)]["desc"], rig.sts[(Target.C2H, 1)]["pkt"]) == (1, 1)


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_bypass_errors_and_recovery(dut):
    """What the channel refuses, and how it recovers:
    - a load with Run clear is ignored (ready is low; nothing runs when Run is set later);
    - a descriptor whose source no host region decodes (the read completes with UR)
      stops the channel with read_error = UR; ready stays low and later loads are
      ignored; busy falls;
    - a zero-length descriptor stops it with invalid_length;
    - after each, a Run toggle (the driver's stop and start) recovers: a good
      descriptor copies its bytes and the completed count starts again from zero."""
    rig = await boot(dut)
    byp = rig.byp[(Target.H2C, 0)]
    src, sa = rig.host(0x2000)
    rig.mem.write(0, bytes([GUARD]) * 0x4000)
    ch = rig.channel(Target.H2C, 0)
    # Run clear: the load is ignored
    assert not int(dut.h2c_dsc_byp_ready_0.value)
    byp.force_load(BypassDesc(sa, 0x3000, 64, completed=True))
    await ClockCycles(rig.clk, 5)
    await ch.start(None)
    await ClockCycles(rig.clk, 200)
    assert await ch.completed_count() == 0
    assert rig.mem.read(0x3000, 64) == bytes([GUARD]) * 64, "a load with Run clear ran"
    assert int(dut.h2c_dsc_byp_ready_0.value), "ready with Run set"
    await ch.stop()
    cases = [
        (BypassDesc(UNMAPPED_HOST, 0x1000, 256, completed=True), "ur"),
        (BypassDesc(sa, 0x1000, 0, completed=True), "len0"),
    ]
    for k, (bad, what) in enumerate(cases):
        good = pattern(300, 20 + k)
        src[0:300] = good
        await ch.start(None)
        byp.load(bad)
        outcome = await ch.wait_count(1, rig.deadline(5e6))
        assert outcome is Outcome.DONE, f"{what}: {outcome}"
        await ClockCycles(rig.clk, 50)
        status = await ch.status()
        if what == "ur":
            assert regs.STAT_READ_ERROR.get(status) == PcieErr.UNSUPPORTED_REQUEST, (
                regs.describe_status(status, Target.H2C)
            )
        else:
            assert status & Stat.INVALID_LENGTH, regs.describe_status(status, Target.H2C)
        assert not status & Stat.BUSY, f"{what}: busy after the error"
        assert not int(dut.h2c_dsc_byp_ready_0.value), f"{what}: ready after the error"
        assert await ch.completed_count() == 0
        # stopped: a load now is ignored
        ignored = 0x3800 + 0x200 * k
        byp.force_load(BypassDesc(sa, ignored, 300, completed=True))
        await ClockCycles(rig.clk, 100)
        assert rig.mem.read(ignored, 300) == bytes([GUARD]) * 300, f"{what}: ran while stopped"
        # the Run toggle
        await ch.stop()
        await ch.status_clear()
        await ch.start(None)
        byp.load(BypassDesc(sa, 0x2000 + 0x400 * k, 300, completed=True))
        assert await ch.wait_count(1, rig.deadline(5e6)) is Outcome.DONE
        status = await ch.status()
        assert not status & regs.STAT_ERROR_MASK, regs.describe_status(status, Target.H2C)
        assert await ch.completed_count() == 1
        assert rig.mem.read(0x2000 + 0x400 * k, 300) == good, f"{what}: recovery"
        await ch.stop()


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_bypass_frames_into_cuda_surface(dut):
    """A camera on C2H stream channel 1 and user logic that holds the BAR1 bus addresses
    of a pinned CUDA surface (from nvidia_p2p) loads one descriptor per page run of each
    frame's slot, with no host work per frame: each frame lands in its slot (read back
    with cudaMemcpy), nothing lands between frames, and the results give each
    descriptor's length and its frame's end."""
    rig = await boot(dut)
    tb = rig.tb
    camera = c2h_source(dut, 1)
    stalls = random.Random(11)
    camera.set_pause_generator(iter(lambda: int(stalls.random() < 0.3), 2))
    frame_bytes, slot = 5000, 8192
    frames = [pattern(frame_bytes, 80 + f) for f in range(3)]
    surf = Surface(tb, 3 * slot, xor_val=0x3C3C3C3C, width=128)
    before = surf.read(0, 3 * slot)
    results, ra = rig.host(4096)
    c2h = rig.channel(Target.C2H, 1)
    await c2h.start(None, control=int(regs.CTRL_IE_ALL))
    # 2 KiB descriptors over each slot's page runs until the frame is covered; the
    # frame's end closes its last descriptor early
    descs, fill = [], []
    for f in range(3):
        left = frame_bytes
        for addr, n in surf.chunks(f * slot, slot):
            pos = 0
            while pos < n and left > 0:
                take = min(2048, n - pos)
                descs.append(BypassDesc(ra + 32 * len(descs), addr + pos, take, completed=True))
                fill.append(min(take, left))
                left -= fill[-1]
                pos += take
    rig.byp[(Target.C2H, 1)].load(*descs)
    for frame in frames:
        await camera.send(frame)
    assert await c2h.wait_count(len(descs), rig.deadline(30e6)) is Outcome.DONE
    await ClockCycles(rig.clk, 50)
    status = await c2h.status()
    assert not status & regs.STAT_ERROR_MASK, regs.describe_status(status, Target.C2H)
    after = surf.read(0, 3 * slot)
    for f, frame in enumerate(frames):
        assert after[f * slot : f * slot + frame_bytes] == frame, f"frame {f}"
        gap = slice(f * slot + frame_bytes, (f + 1) * slot)
        assert after[gap] == before[gap], f"written between frame {f} and the next"
    got = [C2hResult.parse(bytes(results[32 * i : 32 * i + 8])) for i in range(len(descs))]
    ends = {i for i, n in enumerate(fill) if sum(fill[: i + 1]) % frame_bytes == 0}
    assert got == [C2hResult(n, i in ends) for i, n in enumerate(fill)], got
    assert rig.sts[(Target.C2H, 1)]["pkt"] == 3
    await c2h.stop()
    await ClockCycles(rig.clk, 5)
    assert not int(dut.c2h_dsc_byp_ready_1.value), "ready with Run clear"
