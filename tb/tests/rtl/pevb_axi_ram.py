"""pevb_axi_ram alone, behind cocotbext-axi's AXI4 master: random writes and reads of
random addresses and lengths (unaligned starts and ends: strobes from the byte offsets),
in full-width beats as the engine issues them (the RAM takes no narrow bursts: it ignores
AxSIZE), several in flight at once, with back-pressure on every channel; every read
checked against a byte model of the RAM, which starts at zero. The beats of a burst past
the RAM's end answer DECERR and store nothing."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiBus, AxiMaster, AxiResp

from tb.config import bench_params
from tb.env.rtl_bench import start

OPS = 300


def pause(rng: random.Random, p: float):
    """A pause generator: paused with probability ``p`` each cycle."""
    while True:
        yield rng.random() < p


@cocotb.test()
async def test_random_accesses_against_a_byte_model(dut):
    prm = bench_params()
    width = prm.get("DATA_WIDTH", 64)
    size = prm.get("SIZE", 65536)
    lanes = width // 8
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, [])
    axi = AxiMaster(AxiBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
    axi.write_if.b_channel.set_pause_generator(pause(rng, 0.3))
    axi.read_if.r_channel.set_pause_generator(pause(rng, 0.3))
    axi.write_if.aw_channel.set_pause_generator(pause(rng, 0.2))
    axi.write_if.w_channel.set_pause_generator(pause(rng, 0.2))
    for _ in range(5):
        await RisingEdge(dut.clk)
    model = bytearray(size)

    # sequential, each checked at once
    for _ in range(OPS):
        n = rng.choice([1, rng.randrange(1, 64), rng.randrange(1, 16 * lanes)])
        addr = rng.randrange(0, size - n + 1)
        if rng.random() < 0.5:
            data = bytes(rng.getrandbits(8) for _ in range(n))
            assert (await axi.write(addr, data)).resp == AxiResp.OKAY
            model[addr : addr + n] = data
        else:
            got = await axi.read(addr, n)
            assert got.resp == AxiResp.OKAY
            assert got.data == model[addr : addr + n], f"read {n} at {addr:#x}"
    # many at once, on disjoint ranges (their order is the slave's), then all read back
    slots = sorted(rng.sample(range(size // 256), 24))
    writes = []
    for s in slots:
        addr = s * 256 + rng.randrange(64)
        n = rng.randrange(1, 192)
        data = bytes(rng.getrandbits(8) for _ in range(n))
        model[addr : addr + n] = data
        writes.append(axi.init_write(addr, data))
    for w in writes:
        await w.wait()
        assert w.data.resp == AxiResp.OKAY
    reads = [(s * 256, axi.init_read(s * 256, 256)) for s in slots]
    for addr, r in reads:
        await r.wait()
        assert r.data.data == model[addr : addr + 256], f"read back at {addr:#x}"
    # past the end: DECERR, nothing stored, nothing wrapped to address 0
    first = bytes(model[:64])
    tail = size - lanes
    w = await axi.write(tail, bytes(range(3 * lanes)))
    assert w.resp == AxiResp.DECERR, f"a write past the end answered {w.resp}"
    model[tail:size] = bytes(range(lanes))
    r = await axi.read(tail, 3 * lanes)
    assert r.resp == AxiResp.DECERR
    assert (await axi.read(tail, lanes)).data == model[tail:size], "the beat inside was stored"
    assert (await axi.read(0, 64)).data == first, "a beat past the end wrapped to 0"
