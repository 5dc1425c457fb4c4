"""pevb_axil_slave alone: cocotbext-axi's AXI4-Lite master reading and writing from several
tasks at once (any strobes, addresses inside and outside the register space), and a
register-file model that takes each request in a cycle of its choosing, read data with
the acknowledge. Checked: every access inside the space reaches the register file once
with its address, data and strobes, and is answered OKAY with the data the register file
gave; one outside it reaches nothing and is answered DECERR (a read with 0)."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadWrite, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp

from tb.config import bench_params
from tb.env.rtl_bench import start

INPUTS = ("req_ack", "rd_data")
TASKS = 4
PER_TASK = 120


@cocotb.test()
async def test_accesses_from_several_tasks(dut):
    p = bench_params()
    width = p.get("ADDR_WIDTH", 16)
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)
    master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
    regs: dict[int, int] = {}
    taken: list = []  # (we, addr, data, be) the register file took
    given: dict[int, list[int]] = {}  # read data it gave, by address, in order

    async def register_file() -> None:
        while True:
            await RisingEdge(dut.clk)
            await ReadWrite()  # the registered request of this cycle
            ack = int(dut.req_valid.value) and rng.random() < 0.5
            dut.req_ack.value = int(ack)
            if not ack:
                continue
            we, addr = int(dut.req_we.value), int(dut.req_addr.value)
            if we:
                data, be = int(dut.req_wdata.value), int(dut.req_be.value)
                mask = sum(0xFF << 8 * k for k in range(4) if be >> k & 1)
                regs[addr] = regs.get(addr, 0) & ~mask | data & mask
                taken.append((1, addr, data, be))
            else:
                value = regs.setdefault(addr, rng.getrandbits(32))
                dut.rd_data.value = value
                given.setdefault(addr, []).append(value)
                taken.append((0, addr, None, None))

    async def accesses(seed: int, results: list) -> None:
        r = random.Random(seed)
        for _ in range(PER_TASK):
            inside = r.random() < 0.85
            addr = r.randrange(1 << width) if inside else r.randrange(1 << width, 1 << 32)
            addr &= ~3
            if r.random() < 0.5:
                n = r.choice([4, 4, 1, 2, 3])
                lane = r.randrange(5 - n)
                data = r.randbytes(n)
                resp = await master.write(addr + lane, data)
                strb = ((1 << n) - 1) << lane
                word = int.from_bytes(bytes(lane) + data + bytes(4 - n - lane), "little")
                # (the request carries the byte address; registers ignore its low bits)
                results.append(("w", addr + lane, word, strb, resp.resp, inside))
            else:
                resp = await master.read(addr, 4)
                results.append(("r", addr, int.from_bytes(resp.data, "little"), resp.resp, inside))

    cocotb.start_soon(register_file())
    results: list[list] = [[] for _ in range(TASKS)]
    tasks = [cocotb.start_soon(accesses(rng.getrandbits(32), results[k])) for k in range(TASKS)]
    for t in tasks:
        await t
    mask = (1 << width) - 1
    writes_in = [
        (1, r[1] & mask, r[2], r[3]) for res in results for r in res if r[0] == "w" and r[5]
    ]
    assert sorted(w for w in taken if w[0]) == sorted(writes_in), "writes reaching the registers"
    reads_in = sorted(r[1] & mask for res in results for r in res if r[0] == "r" and r[4])
    assert sorted(t[1] for t in taken if not t[0]) == reads_in, "reads reaching the registers"
    for res in results:
        for r in res:
            resp = r[3] if r[0] == "r" else r[4]
            inside = r[-1]
            assert resp == (AxiResp.OKAY if inside else AxiResp.DECERR), r
            if r[0] == "r":
                if inside:
                    assert r[2] in given[r[1] & mask], f"read {r[1]:#x}: {r[2]:#x} never given"
                else:
                    assert r[2] == 0, f"read outside the space returned {r[2]:#x}"
