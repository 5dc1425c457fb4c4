"""pevb_h2c_stream alone: packets of random lengths cut into chunks at consecutive stream
positions (a packet's end leaving a gap to the next beat, as pevb_h2c_rd hands them out),
each chunk's bytes written into the ring as completions land (several chunks at once,
their words in any order, with byte strobes, never past the room the drain's position
leaves), each chunk reported complete in order; the stream taken by cocotbext-axi's
sink under random back-pressure. Checked: every packet comes out whole and in order, its
bytes those written (cocotbext-axi's sink takes a frame's bytes from the kept lanes, and
tlast ends it); at the end the complete position is the last chunk's end and the drain
has passed it."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamSink

from tb.config import bench_params
from tb.env.rtl_bench import pauses, start

INPUTS = ("wr_en", "wr_word", "wr_data", "wr_strb", "seg_valid", "seg_end", "seg_eop")
INPUTS += ("truncate",)


@cocotb.test()
async def test_packets_through_the_ring(dut):
    p = bench_params()
    nbytes = p.get("DATA_WIDTH", 64) // 8
    ring = p.get("RING_BYTES", 16384)
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)
    sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
    sink.set_pause_generator(pauses(rng))

    packets = [
        rng.randbytes(rng.choice([1, 7, 64, 300, rng.randrange(1, 5000)])) for _ in range(40)
    ]
    # the chunks: (start position, bytes, end of packet)
    chunks = []
    pos = 0
    for pkt in packets:
        off = 0
        while off < len(pkt):
            # (chunks that end inside a beat: the next one completes it later)
            n = min(len(pkt) - off, rng.choice([64, 256, rng.randrange(1, 700), ring // 8]))
            chunks.append((pos + off, pkt[off : off + n], off + n == len(pkt)))
            off += n
        pos += len(pkt)
        pos = -(-pos // nbytes) * nbytes  # the next packet from the next beat
    # per chunk, the words to write: (word index, data, strobes)
    writes = []
    for start_pos, data, _ in chunks:
        words: dict[int, list] = {}
        for k, b in enumerate(data):
            w, lane = divmod(start_pos + k, nbytes)
            words.setdefault(w, [0, 0])
            words[w][0] |= b << (8 * lane)
            words[w][1] |= 1 << lane
        order = list(words.items())
        rng.shuffle(order)
        writes.append(order)
    next_chunk = 0  # the next chunk to start writing
    active: list[int] = []  # chunks being written
    reported = 0  # chunks reported complete (in order)
    written = set()
    got: list[bytes] = []

    async def collect() -> None:
        while True:
            frame = await sink.recv()
            got.append(bytes(frame.tdata))

    cocotb.start_soon(collect())
    for _ in range(400000):
        rd_pos = int(dut.rd_pos.value)
        # start chunks whose bytes fit the ring's room (up to four in flight) while the
        # packet ends have room (marks_ok), as the mover does
        while next_chunk < len(chunks) and len(active) < 4 and int(dut.marks_ok.value):
            s, data, _ = chunks[next_chunk]
            if s + len(data) - rd_pos > ring - nbytes:
                break
            active.append(next_chunk)
            next_chunk += 1
            break  # (one a cycle: marks_ok is seen again before the next)
        # a word of a chunk in flight, in any order among them
        busy = [c for c in active if writes[c]]
        if busy and rng.random() < 0.7:
            c = rng.choice(busy)
            w, (data, strb) = writes[c].pop()
            dut.wr_en.value, dut.wr_word.value = 1, w % (ring // nbytes)
            dut.wr_data.value, dut.wr_strb.value = data, strb
            if not writes[c]:
                written.add(c)
        else:
            dut.wr_en.value = 0
        # the oldest chunk fully written is reported complete
        report = reported in written and reported in active and rng.random() < 0.8
        dut.seg_valid.value = int(report)
        if report:
            s, data, eop = chunks[reported]
            dut.seg_end.value, dut.seg_eop.value = s + len(data), int(eop)
            active.remove(reported)
            reported += 1
        await ReadOnly()
        await RisingEdge(dut.clk)
        if reported == len(chunks) and len(got) == len(packets):
            break
    else:
        raise AssertionError(f"{len(got)} of {len(packets)} packets out")
    for k, (a, b) in enumerate(zip(got, packets, strict=True)):
        assert a == b, f"packet {k}: {len(a)} bytes out of {len(b)}, or other bytes"
    end = chunks[-1][0] + len(chunks[-1][1])
    await RisingEdge(dut.clk)
    assert int(dut.done_pos.value) == end, f"complete position {int(dut.done_pos.value)}, not {end}"
    assert int(dut.rd_pos.value) >= end, "the drain behind the last packet's end"
