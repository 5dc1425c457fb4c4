"""pevb_axil_master alone: single-DWORD register accesses (any byte enables, any BAR
offset) handed to it one at a time as the completer hands them, into cocotbext-axi's
AXI4-Lite RAM with random back-pressure on every channel. Checked against a byte model:
each write lands at BASE_ADDR plus the offset with the byte enables as strobes, each read
returns the RAM's word with its acknowledge, and every access is acknowledged once."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteRam

from tb.config import bench_params
from tb.env.rtl_bench import pauses, start

INPUTS = ("req_valid", "req_we", "req_addr", "req_wdata", "req_be")
ACCESSES = 600


@cocotb.test()
async def test_accesses_reach_the_ram(dut):
    p = bench_params()
    width = p.get("BAR_ADDR_WIDTH", 12)
    base = p.get("BASE_ADDR", 0)
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)
    size = base + (1 << width)
    ram = AxiLiteRam(AxiLiteBus.from_prefix(dut, "m_axil"), dut.clk, dut.rst, size=size)
    for channel in (ram.write_if.aw_channel, ram.write_if.w_channel, ram.write_if.b_channel):
        channel.set_pause_generator(pauses(rng, 0.4))
    for channel in (ram.read_if.ar_channel, ram.read_if.r_channel):
        channel.set_pause_generator(pauses(rng, 0.4))
    background = rng.randbytes(size)
    ram.write(0, background)
    model = bytearray(background)
    reads = 0
    for _ in range(ACCESSES):
        we = rng.random() < 0.5
        offset = rng.randrange(1 << width) & ~3
        data, be = rng.getrandbits(32), rng.choice([0xF, rng.randrange(16)])
        await RisingEdge(dut.clk)
        dut.req_valid.value = 1
        dut.req_we.value, dut.req_addr.value = int(we), offset
        dut.req_wdata.value, dut.req_be.value = data, be
        await RisingEdge(dut.clk)
        dut.req_valid.value = 0  # a one-cycle pulse; the rest held until the ack
        for _ in range(1000):
            await ReadOnly()
            if int(dut.ack.value):
                break
            await RisingEdge(dut.clk)
        else:
            raise AssertionError(f"no acknowledge for {'write' if we else 'read'} {offset:#x}")
        addr = base + offset
        if we:
            for k in range(4):
                if be >> k & 1:
                    model[addr + k] = data >> (8 * k) & 0xFF
        else:
            want = int.from_bytes(model[addr : addr + 4], "little")
            assert int(dut.rd_data.value) == want, f"read {offset:#x}: {int(dut.rd_data.value):#x}"
            reads += 1
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert not int(dut.ack.value), "acknowledged twice"
    for _ in range(20):
        await RisingEdge(dut.clk)
    assert ram.read(0, size) == bytes(model), "the RAM differs from the writes"
    assert reads > ACCESSES // 4
