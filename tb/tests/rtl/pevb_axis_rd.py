"""pevb_axis_rd alone: descriptors cut into write-TLP commands (the first of each marked)
filled from packets of random lengths on the AXI4-Stream input (cocotbext-axi's source,
random gaps), the payloads read out as the requester reads them. Checked against a model
of XDMA's C2H stream rules:

- a packet fills descriptors in order; each TLP takes its command's length, or the
  bytes to the packet's end when that comes first (the TLP is cut short there and ends
  the packet), and the rest of that descriptor's TLPs are dropped with nothing written;
  a descriptor that ends inside a packet leaves the rest to the next descriptor;
- every TLP comes out once, in order, with its PCIe address, length, owner and the
  packet's bytes at its first payload lane, whole before it is offered;
- each TLP not dropped for a closed descriptor reports its byte count and whether it
  ended the packet.
"""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from tb.config import bench_params
from tb.env.rtl_bench import PayloadReader, pauses, start

INPUTS = ("s_cmd_valid", "s_cmd_pcie_addr", "s_cmd_len", "s_cmd_slot", "s_cmd_first")
INPUTS += ("m_tlp_ready", "pay_rd_en")


def descriptors(rng: random.Random, count: int) -> list[list[tuple[int, int, int, int]]]:
    """``count`` descriptors, each its TLP commands: (PCIe address, length, slot, first)."""
    out = []
    for _ in range(count):
        length = rng.choice([1, 7, 64, 256, 1000, 4096, rng.randrange(1, 12000)])
        slot = rng.randrange(4)
        addr = rng.getrandbits(48)
        chunk = rng.choice([128, 256, 512, 4096])
        cmds = []
        done = 0
        while done < length:
            a = addr + done
            n = min(length - done, chunk - (a % chunk))  # never across a chunk (or 4 KiB)
            cmds.append((a, n, slot, int(done == 0)))
            done += n
        out.append(cmds)
    return out


def expected(descs: list, stream: bytes, ends: list[int]) -> tuple[list, list]:
    """What the descriptors take from ``stream`` (packets ending at ``ends``): the TLPs
    and drops in order, and the (slot, bytes, end of packet) each reports."""
    out, reports = [], []
    pos = 0
    marks = deque(ends)
    for cmds in descs:
        closed = False
        for addr, length, slot, _ in cmds:
            if closed:
                out.append(("drop", slot, 0))
                continue
            to_end = marks[0] - pos
            take = min(length, to_end)
            eop = to_end <= length
            out.append(("tlp", addr, take, slot, stream[pos : pos + take]))
            reports.append((slot, take, int(eop)))
            pos += take
            if eop:
                marks.popleft()
                closed = True
    return out, reports


@cocotb.test()
async def test_packets_fill_descriptors(dut):
    p = bench_params()
    nbytes = p.get("DATA_WIDTH", 64) // 8
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
    source.set_pause_generator(pauses(rng))

    descs = descriptors(rng, 60)
    need = sum(n for cmds in descs for _, n, _, _ in cmds)
    packets = []
    total = 0
    while total < need + 1:  # enough for every descriptor, its last packet ended
        size = rng.choice([1, 3, 100, 1500, 4096, rng.randrange(1, 20000)])
        packets.append(rng.randbytes(size))
        total += size
    stream = b"".join(packets)
    ends = []
    for pkt in packets:
        ends.append((ends[-1] if ends else 0) + len(pkt))
    want, want_reports = expected(descs, stream, ends)
    for pkt in packets:
        await source.send(AxiStreamFrame(pkt))

    out: list = []
    reports: list = []
    reader = PayloadReader(dut, nbytes, rng, out)
    cmds = deque(c for cmds in descs for c in cmds)
    for _ in range(400000):
        cmd = cmds[0] if cmds and rng.random() < 0.7 else None
        dut.s_cmd_valid.value = int(cmd is not None)
        if cmd is not None:
            addr, length, slot, first = cmd
            dut.s_cmd_pcie_addr.value, dut.s_cmd_len.value = addr, length
            dut.s_cmd_slot.value, dut.s_cmd_first.value = slot, first
        reader.drive()
        await ReadOnly()
        if cmd is not None and int(dut.s_cmd_ready.value):
            cmds.popleft()
        if int(dut.m_end_valid.value):
            reports.append(
                (int(dut.m_end_slot.value), int(dut.m_end_len.value), int(dut.m_end_eop.value))
            )
        reader.sample()
        await RisingEdge(dut.clk)
        if len(out) == len(want) and reader.idle:
            break
    else:
        raise AssertionError(f"{len(out)} of {len(want)} TLPs out")
    for k, (got, exp) in enumerate(zip(out, want, strict=True)):
        assert got == exp, f"TLP {k}: {got[:4]}, not {exp[:4]}"
    assert reports == want_reports, "byte counts or packet ends reported differ"
    assert any(o[0] == "drop" for o in out) and any(r[2] for r in reports)
