"""cocotb tests of AXI4-Stream channels (the plan runs this module on a card whose
channel 1 streams in each direction while channel 0 stays memory-mapped on the card
RAM): identifiers, H2C packets on the stream with tkeep/tlast as XDMA sends them,
C2H packets from the stream filling descriptors with the length write-back, and the
memory-mapped channels moving their own data at the same time.
"""

from __future__ import annotations

import itertools
import random

import cocotb
from cocotb.triggers import with_timeout

from driver_model import regs
from driver_model.desc import C2H_RESULT_SIZE, C2hResult, Segment
from driver_model.regs import Ctrl, Target
from driver_model.xdma import Engine, XdmaChannel, probe_engines
from tb.env.harness import GUARD, UNMAPPED_HOST, Harness, check_ok, pattern, setup
from tb.env.streams import c2h_source, h2c_sink

# C2H stream result slots (C2hResult, libxdma's struct xdma_result), 32 bytes apart
RESULT_SIZE = 32
STREAM_CH = 1


def pauses(seed: int, ratio: float = 0.3, first: int = 0):
    """A cocotbext-axi pause generator: a stall of ``first`` cycles, then random stalls of
    about ``ratio`` of the cycles."""
    rng = random.Random(seed)
    rand = itertools.cycle([rng.random() < ratio for _ in range(997)])
    return itertools.chain(itertools.repeat(True, first), rand)


async def channels(h: Harness) -> dict[tuple[Target, int], XdmaChannel]:
    """Every channel on its own vector, by (direction, number)."""
    return {(ch.direction, ch.channel): ch for ch in await h.all_channels()}


async def mm_h2c_job(h: Harness, ch: XdmaChannel, seed: int):
    """A memory-mapped H2C chain for channel 0 (to run beside a stream one): its
    segments and a check of the card RAM afterwards."""
    segs, expect = [], []
    for i, n in enumerate((3000, 4096 + 5, 777)):
        # (a few bytes more than the chain reads: the root complex answers a read of
        # DWORDs past the end of its memory region with completer abort)
        addr, data = await h.host_source(n + 8, seed + i)
        data = data[:n]
        card = 0x1000 + i * 0x2800 + 3
        segs.append(Segment(addr, card, n))
        expect.append((card, data))

    def check() -> None:
        img = h.card_image()
        for card, data in expect:
            assert bytes(img[card : card + len(data)]) == data, f"card RAM at {card:#x}"

    return segs, check


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_stream_probe(dut):
    """The identifiers say which channels stream (bit 15): a libxdma-style probe finds
    channel 0 memory-mapped and channel 1 streaming, each way."""
    h = await setup(dut)
    found = await probe_engines(h.platform)
    want = [Engine(d, n, n == STREAM_CH) for d in (Target.H2C, Target.C2H) for n in range(2)]
    assert found == want, found


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_h2c_stream_packets(dut):
    """H2C packets on the stream as XDMA sends them: the bytes of a packet's descriptors
    packed together (descriptors ending mid-beat, odd source offsets, a packet longer
    than the engine's 4 KiB chunks), tkeep all ones but on the last beat of a packet,
    whose bytes sit in the low lanes, tlast there; with a sink that stalls for 4000
    cycles first and at random after, and a
    memory-mapped chain on channel 0 at the same time."""
    h = await setup(dut)
    chans = await channels(h)
    sink = h2c_sink(dut, STREAM_CH)
    sink.set_pause_generator(pauses(5, first=4000))  # long back-pressure first
    lanes = h.tb.profile.width // 8
    packets = [[100], [64, 7, 300], [1], [4096 + 17, 5000], [lanes * 3], [2, lanes + 1, 9]]
    segs, eops, want = [], [], []
    for p, pieces in enumerate(packets):
        whole = b""
        for i, n in enumerate(pieces):
            addr, data = await h.host_source(n + 5, 100 * p + i)
            segs.append(Segment(addr + (p + i) % 5, 0, n))
            whole += data[(p + i) % 5 :][:n]
        eops.append(len(segs) - 1)
        want.append(whole)
    mm_segs, mm_check = await mm_h2c_job(h, chans[Target.H2C, 0], 7)

    mm = cocotb.start_soon(h.run(chans[Target.H2C, 0], mm_segs, timeout_ns=20e6))
    res = await h.run(chans[Target.H2C, STREAM_CH], segs, eop=eops, timeout_ns=20e6)
    check_ok(res, len(segs), "H2C stream")
    check_ok(await mm, len(mm_segs), "H2C memory-mapped")
    mm_check()
    for i, whole in enumerate(want):
        frame = await with_timeout(sink.recv(compact=False), 200, "us")
        got = bytes(b for b, k in zip(frame.tdata, frame.tkeep, strict=True) if k)
        assert got == whole, f"packet {i}: {len(got)} bytes, want {len(whole)}"
        pad = len(frame.tkeep) - len(whole)
        assert 0 <= pad < lanes and frame.tkeep == [1] * len(whole) + [0] * pad, (
            f"packet {i}: tkeep not all ones but for the last beat's high lanes"
        )
    assert sink.empty(), "more packets than sent"


async def c2h_stream_chain(h: Harness, n_desc: int, desc_len: int):
    """Destination buffers (guard-filled) and result slots for a C2H stream chain of
    ``n_desc`` descriptors of ``desc_len`` bytes: the segments (source = result slot)
    and the two buffers."""
    dst = h.tb.alloc_host(n_desc * desc_len + 64)
    dst[0 : n_desc * desc_len + 64] = bytes([GUARD]) * (n_desc * desc_len + 64)
    results = h.tb.alloc_host(n_desc * RESULT_SIZE)
    results[0 : n_desc * RESULT_SIZE] = bytes([GUARD]) * (n_desc * RESULT_SIZE)
    rbase, dbase = results.get_absolute_address(0), dst.get_absolute_address(0)
    segs = [
        Segment(rbase + i * RESULT_SIZE, dbase + 3 + i * desc_len, desc_len) for i in range(n_desc)
    ]
    return segs, dst, results


def expected_fill(frames: list[int], desc_len: int) -> list[tuple[int, int, bool]]:
    """How XDMA fills descriptors from packets: (packet, length, EOP) per descriptor."""
    out = []
    for p, size in enumerate(frames):
        while size > desc_len:
            out.append((p, desc_len, False))
            size -= desc_len
        out.append((p, size, True))
    return out


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_c2h_stream_packets(dut):
    """C2H packets from the stream fill descriptors in order: a packet longer than a
    descriptor continues in the next one, a shorter one ends its descriptor early, and
    each descriptor's result {0x52B4 << 16 | EOP, length} is written to its source
    address before it completes; nothing beyond a descriptor's bytes is written. With a
    source idle for 4000 cycles first and stalling at random after, and a memory-mapped
    C2H chain on channel 0 at the same time. Then with stream write-back disabled
    (control bit 27), no result is written."""
    h = await setup(dut)
    chans = await channels(h)
    src = c2h_source(dut, STREAM_CH)
    src.set_pause_generator(pauses(9, first=4000))  # a long idle first
    lanes = h.tb.profile.width // 8
    desc_len = 2048
    frames = [100, 4096 + 300, 64, 1, 2 * 4096 + 5, lanes, desc_len]
    fill = expected_fill(frames, desc_len)
    payload = [pattern(n, 50 + i) for i, n in enumerate(frames)]
    segs, dst, results = await c2h_stream_chain(h, len(fill), desc_len)
    for data in payload:
        await src.send(data)

    mm_dst = h.tb.alloc_host(3 * 4096)
    mm_segs = [
        Segment(0x100 + i * 4099, mm_dst.get_absolute_address(i * 4096), 3000) for i in range(3)
    ]
    card = h.card_image()
    mm = cocotb.start_soon(h.run(chans[Target.C2H, 0], mm_segs, timeout_ns=20e6))
    res = await h.run(chans[Target.C2H, STREAM_CH], segs, timeout_ns=20e6)
    check_ok(res, len(segs), "C2H stream")
    check_ok(await mm, len(mm_segs), "C2H memory-mapped")
    for i, s in enumerate(mm_segs):
        got = bytes(mm_dst[i * 4096 : i * 4096 + 3000])
        assert got == bytes(card[s.src : s.src + 3000]), f"memory-mapped C2H piece {i}"

    offset = {}
    for i, (p, n, eop) in enumerate(fill):
        got = C2hResult.parse(bytes(results[i * RESULT_SIZE :][:C2H_RESULT_SIZE]))
        assert got == C2hResult(n, eop), f"descriptor {i}: {got}"
        rest = RESULT_SIZE - C2H_RESULT_SIZE
        after = bytes(results[i * RESULT_SIZE + C2H_RESULT_SIZE :][:rest])
        assert after == bytes([GUARD]) * rest, f"descriptor {i}: slot written past the result"
        start = offset.get(p, 0)
        offset[p] = start + n
        base = 3 + i * desc_len
        assert bytes(dst[base : base + n]) == payload[p][start : start + n], f"descriptor {i}"
        tail = bytes(dst[base + n : base + desc_len])
        assert tail == bytes([GUARD]) * (desc_len - n), f"descriptor {i}: written past its length"
    assert bytes(dst[:3]) == bytes([GUARD]) * 3

    # write-back disabled: the data lands, the result slots stay untouched
    segs, dst, results = await c2h_stream_chain(h, 2, desc_len)
    await src.send(payload[0])
    await src.send(payload[2])
    ctrl = int(regs.CTRL_IE_ALL | Ctrl.STREAM_WB_DISABLE)
    res = await h.run(chans[Target.C2H, STREAM_CH], segs, timeout_ns=20e6, control=ctrl)
    check_ok(res, 2, "C2H stream, write-back disabled")
    assert bytes(results[0 : 2 * RESULT_SIZE]) == bytes([GUARD]) * (2 * RESULT_SIZE)
    assert bytes(dst[3 : 3 + 100]) == payload[0]
    assert bytes(dst[3 + desc_len : 3 + desc_len + 64]) == payload[2]


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_h2c_stream_error_truncates(dut):
    """An H2C stream read failing in the middle of a packet (an unmapped host address,
    UR) stops the channel with read_error; the packets before it arrive whole, the
    failing packet's bytes already fetched stay held until the restart ends the packet
    there (tlast), and the next run's packet follows clean."""
    h = await setup(dut)
    chans = await channels(h)
    ch = chans[Target.H2C, STREAM_CH]
    sink = h2c_sink(dut, STREAM_CH)
    a0, p0 = await h.host_source(300 + 8, 1)
    a1, p1 = await h.host_source(200 + 8, 2)
    a3, _ = await h.host_source(50 + 8, 3)
    segs = [
        Segment(a0, 0, 300),
        Segment(a1, 0, 200),
        Segment(UNMAPPED_HOST, 0, 100),
        Segment(a3, 0, 50),
    ]
    res = await h.run(ch, segs, eop=[0, 3], timeout_ns=20e6)
    assert not res.timed_out and res.errors, f"status {res.status:#010x}"
    assert regs.describe_status(res.status, Target.H2C).count("read_error"), res.status
    assert res.completed_count == 2, res.completed_count
    frame = await with_timeout(sink.recv(), 100, "us")
    assert bytes(frame.tdata) == p0[:300]
    await h.platform.sleep_ns(5000)
    assert sink.empty(), "the failing packet ended before the restart"

    a4, p4 = await h.host_source(128 + 8, 4)
    res = await h.run(ch, [Segment(a4, 0, 128)], timeout_ns=20e6)
    check_ok(res, 1, "H2C stream after the error")
    frame = await with_timeout(sink.recv(), 100, "us")
    assert bytes(frame.tdata) == p1[:200], "the truncated packet: the bytes fetched"
    frame = await with_timeout(sink.recv(), 100, "us")
    assert bytes(frame.tdata) == p4[:128]
    assert sink.empty()
