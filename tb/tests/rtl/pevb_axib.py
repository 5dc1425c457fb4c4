"""pevb_axib alone: host requests to the bypass BAR from cocotbext-pcie's CQ source (writes
and reads of any length and byte enables, I/O and locked reads), cocotbext-axi's AXI4 RAM
behind the master with random back-pressure on every channel, completions on
cocotbext-pcie's CC sink under back-pressure, at every programmed max payload size.
Checked against PG195's bypass master and PCIe's completion rules:

- a write lands at AXI_BASE plus its offset in the BAR, its enabled bytes only;
- a read returns the memory as the writes before it left it (a read never passes a
  posted write), in completions that end on the max payload size's boundaries, each
  with the lower address of its first byte, the bytes left, its requester ID and tag;
- a non-posted request other than a memory read gets Unsupported Request and reaches no
  slave.
"""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiBus, AxiRam, AxiStreamBus
from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpType
from cocotbext.pcie.core.utils import PcieId
from cocotbext.pcie.xilinx.us.interface import CcSink, CqSource
from cocotbext.pcie.xilinx.us.tlp import Tlp_us

from tb.config import bench_params
from tb.env.rtl_bench import pauses, start

INPUTS = ("cfg_max_payload",)


@cocotb.test()
async def test_requests_to_the_bypass_bar(dut):
    p = bench_params()
    bar_width = p.get("BAR_ADDR_WIDTH", 20)
    base = p.get("AXI_BASE", 0)
    max_payload = p.get("MAX_PAYLOAD", 1024)
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)
    source = CqSource(AxiStreamBus.from_prefix(dut, "s_axis_cq"), dut.clk, dut.rst)
    sink = CcSink(AxiStreamBus.from_prefix(dut, "m_axis_cc"), dut.clk, dut.rst)
    sink.set_pause_generator(pauses(rng))
    size = 1 << bar_width
    ram = AxiRam(AxiBus.from_prefix(dut, "m_axib"), dut.clk, dut.rst, size=base + size)
    for ch in (ram.write_if.aw_channel, ram.write_if.b_channel):
        ch.set_pause_generator(pauses(rng))
    # (a slow W channel: a read that did not wait for an earlier write would see old data)
    ram.write_if.w_channel.set_pause_generator(pauses(rng, 0.7))
    for ch in (ram.read_if.ar_channel, ram.read_if.r_channel):
        ch.set_pause_generator(pauses(rng))

    async def no_read_passes_a_write() -> None:
        """Every read burst goes out after the B response of every write before it."""
        writes = answered = 0
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.m_axib_arvalid.value) and int(dut.m_axib_arready.value):
                assert answered == writes, f"a read went out with {writes - answered} writes open"
            writes += int(dut.m_axib_awvalid.value) and int(dut.m_axib_awready.value)
            answered += int(dut.m_axib_bvalid.value) and int(dut.m_axib_bready.value)

    cocotb.start_soon(no_read_passes_a_write())
    model = bytearray(rng.randbytes(size))
    ram.write(base, bytes(model))
    for phase in range(3):
        mps_enc = rng.randrange(min(max_payload.bit_length() - 8, 4))
        mps = 128 << mps_enc
        dut.cfg_max_payload.value = mps_enc
        expected = []  # (request, [(lower address, byte count, data)], status)
        last_write = None
        for _ in range(60):
            t = Tlp()
            kind = rng.choice(["write", "write", "read", "read", "io", "locked"])
            length = rng.choice([1, 2, 3, 4, 8, 64, 200, mps, rng.randrange(1, 1025)])
            offset = rng.randrange(size - length)
            offset = min(offset, (offset | 0xFFF) - length + 1)  # within a 4 KiB page
            t.requester_id = PcieId(rng.randrange(256), rng.randrange(32), rng.randrange(8))
            t.tag = rng.randrange(256)
            if kind == "write":  # (a write's payload is within the max payload size)
                length = min(length, mps)
                offset = min(offset, (offset | 0xFFF) - length + 1)
                t.fmt_type = TlpType.MEM_WRITE
                data = rng.randbytes(length)
                t.set_addr_be_data(offset, data)
                model[offset : offset + length] = data
                last_write = (offset, length)
            elif kind == "read":
                if last_write is not None and rng.random() < 0.5:  # what was just written
                    offset, length = last_write
                t.fmt_type = TlpType.MEM_READ
                t.set_addr_be(offset, length)
                cpls = []
                lo, end = offset, offset + length
                while lo < end:
                    boundary = (lo // mps + 1) * mps  # chunks end on MPS boundaries
                    hi = min(end, boundary)
                    dw0, dw1 = lo & ~3, -(-hi // 4) * 4
                    cpls.append((lo & 0x7F, end - lo, bytes(model[dw0:dw1])))
                    lo = hi
                expected.append((t, cpls, CplStatus.SC))
            else:
                t.fmt_type = TlpType.IO_READ if kind == "io" else TlpType.MEM_READ_LOCKED
                t.set_addr_be(offset & ~3, 4)
                expected.append((t, [(None, None, None)], CplStatus.UR))
            us = Tlp_us(t)
            us.bar_id, us.bar_aperture = 2, bar_width
            await source.send(us.pack_us_cq())
        for req, cpls, status in expected:
            for la, bc, data in cpls:
                cpl = Tlp_us.unpack_us_cc(await sink.recv())
                assert (cpl.requester_id, cpl.tag) == (req.requester_id, req.tag), "whose"
                assert cpl.status == status, f"{req.fmt_type.name}: status {cpl.status}"
                if status != CplStatus.SC:
                    continue
                assert (cpl.lower_address, cpl.byte_count) == (la, bc), (
                    f"read {req.address:#x}: lower address {cpl.lower_address:#x}, "
                    f"byte count {cpl.byte_count}, not {la:#x}, {bc}"
                )
                assert bytes(cpl.data) == data, f"read {req.address:#x}: data"
        for _ in range(40):  # the last posted writes land (their W beats are slow)
            if ram.read(base, size) == bytes(model):
                break
            for _ in range(100):
                await RisingEdge(dut.clk)
        assert ram.read(base, size) == bytes(model), f"phase {phase}: memory differs"
