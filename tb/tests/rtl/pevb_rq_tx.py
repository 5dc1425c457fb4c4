"""pevb_rq_tx alone: read commands and write commands (payload from a model of
pevb_axi_rd's buffer, read like a RAM a beat ahead, or one or two immediate DWORDs) with
random valid patterns, and the RQ stream taken by cocotbext-pcie's RQ sink under random
back-pressure. Checked against PG213's RQ descriptor and PCIe's request rules:

- each read becomes one memory read with its address, DWORD count and byte enables
  (first and last, from the address's and the end's low bits) and its tag, in order;
- each write one memory write with its address, count, byte enables and its bytes at
  their DWORD lanes (immediate data at the DWORD-aligned address), in order;
- every write's id comes back on m_wr_done once its last beat is taken, in order;
- the payload is read beat by beat from the write's own id, one beat ahead;
- with both kinds waiting, reads and writes take turns (a read first after reset).
"""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiStreamBus
from cocotbext.pcie.core.tlp import TlpType
from cocotbext.pcie.xilinx.us.interface import RqSink
from cocotbext.pcie.xilinx.us.tlp import Tlp_us

from tb.config import bench_params
from tb.env.rtl_bench import pauses, start

INPUTS = ("s_rd_valid", "s_rd_addr", "s_rd_len", "s_rd_tag", "s_wr_valid", "s_wr_addr")
INPUTS += ("s_wr_len", "s_wr_imm", "s_wr_imm_data", "s_wr_id", "pay_rd_data")


def enables(addr: int, length: int) -> tuple[int, int, int]:
    """(DWORD count, first BE, last BE) of ``length`` bytes at ``addr`` (PCIe's rules)."""
    end = (addr & 3) + length
    count = (end + 3) // 4
    first = 0xF << (addr & 3) & 0xF
    last = 0xF if end & 3 == 0 else ~(0xF << (end & 3)) & 0xF
    if count == 1:
        return 1, first & last, 0
    return count, first, last


@cocotb.test()
async def test_reads_and_writes_onto_rq(dut):
    p = bench_params()
    nbytes = p.get("AXIS_PCIE_DATA_WIDTH", 64) // 8
    payload_beat = 16 // nbytes
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)
    sink = RqSink(AxiStreamBus.from_prefix(dut, "m_axis_rq"), dut.clk, dut.rst)
    sink.set_pause_generator(pauses(rng))
    frames: list = []

    async def collect() -> None:
        while True:
            frames.append(Tlp_us.unpack_us_rq(await sink.recv()))

    cocotb.start_soon(collect())

    def page_addr(length: int) -> int:
        a = rng.getrandbits(rng.choice([32, 64]))
        return a - (a & 0xFFF) + rng.randrange(0x1000 - length + 1)

    reads = deque()
    for _ in range(150):
        length = rng.choice([1, 4, 64, 128, 512, rng.randrange(1, 4097)])
        reads.append((page_addr(length), length, rng.randrange(256)))
    writes = deque()
    for k in range(150):
        if rng.random() < 0.25:
            length = rng.choice([4, 8])
            addr = page_addr(length) & ~3
            writes.append((addr, length, True, rng.getrandbits(64), k % 16))
        else:
            length = rng.choice([1, 3, 4, 64, 256, rng.randrange(1, 4097)])
            writes.append((page_addr(length), length, False, rng.randbytes(length), k % 16))
    want_reads, want_writes = list(reads), list(writes)
    # the payload buffer: each write's beats in TLP layout from beat payload_beat on
    buffers: dict[int, deque] = {}
    for addr, _, imm, data, wid in writes:
        if imm:
            continue
        lane = 16 + (addr & 3)
        raw = bytes(lane) + data
        raw += bytes(-len(raw) % nbytes)
        beats = [int.from_bytes(raw[k : k + nbytes], "little") for k in range(0, len(raw), nbytes)]
        buffers.setdefault(wid, deque()).extend(beats[payload_beat:])
    done: list[int] = []
    prefer_wr = False  # whose turn it is when both wait (reads first after reset)
    turns = 0
    next_data = 0
    for _ in range(300000):
        dut.pay_rd_data.value = next_data
        rd = reads[0] if reads and rng.random() < 0.7 else None
        wr = writes[0] if writes and rng.random() < 0.7 else None
        dut.s_rd_valid.value = int(rd is not None)
        if rd is not None:
            dut.s_rd_addr.value, dut.s_rd_len.value, dut.s_rd_tag.value = rd
        dut.s_wr_valid.value = int(wr is not None)
        if wr is not None:
            addr, length, imm, data, wid = wr
            dut.s_wr_addr.value, dut.s_wr_len.value = addr, length
            dut.s_wr_imm.value, dut.s_wr_id.value = int(imm), wid
            dut.s_wr_imm_data.value = data if imm else 0
        await ReadOnly()
        took_rd = rd is not None and int(dut.s_rd_ready.value)
        took_wr = wr is not None and int(dut.s_wr_ready.value)
        assert not (took_rd and took_wr), "a read and a write taken in one cycle"
        if took_rd or took_wr:
            if rd is not None and wr is not None:  # both waited: the turn decides
                assert took_wr == prefer_wr, f"{'read' if took_rd else 'write'} out of turn"
                prefer_wr = not took_wr
                turns += 1
            (writes if took_wr else reads).popleft()
        if int(dut.pay_rd_en.value):
            next_data = buffers[int(dut.pay_rd_id.value)].popleft()
        if int(dut.m_wr_done_valid.value):
            done.append(int(dut.m_wr_done_id.value))
        await RisingEdge(dut.clk)
        if not reads and not writes and len(frames) == len(want_reads) + len(want_writes):
            break
    else:
        raise AssertionError(f"{len(frames)} TLPs of {len(want_reads) + len(want_writes)}")
    got_reads = [t for t in frames if t.fmt_type in (TlpType.MEM_READ, TlpType.MEM_READ_64)]
    got_writes = [t for t in frames if t not in got_reads]
    for t, (addr, length, tag) in zip(got_reads, want_reads, strict=True):
        count, first, last = enables(addr, length)
        assert (t.address, t.length, t.tag) == (addr & ~3, count, tag), f"read {addr:#x}"
        assert (t.first_be, t.last_be) == (first, last), f"read {addr:#x}+{length}: enables"
    for t, (addr, length, imm, data, _) in zip(got_writes, want_writes, strict=True):
        assert t.fmt_type in (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64), t.fmt_type
        count, first, last = enables(addr, length)
        assert (t.address, t.length) == (addr & ~3, count), f"write {addr:#x}+{length}"
        assert (t.first_be, t.last_be) == (first, last), f"write {addr:#x}+{length}: enables"
        body = data.to_bytes(8, "little")[:length] if imm else data
        got = bytes(t.data)[addr & 3 : (addr & 3) + length]
        assert got == body, f"write {addr:#x}+{length}: data"
    assert done == [w[4] for w in want_writes], "write done ids out of order"
    assert all(not b for b in buffers.values()), "payload beats left unread"
    assert turns > 20, f"reads and writes waited together only {turns} times"
