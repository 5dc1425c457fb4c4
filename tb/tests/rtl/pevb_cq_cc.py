"""pevb_cq_cc alone: requests of every kind driven with cocotbext-pcie's CQ source (one-DWORD
reads and writes to the user and DMA BARs with any byte enables, longer reads and writes,
other BARs, I/O, locked reads and atomics), a register block model that acknowledges after
random delays, and cocotbext-pcie's CC sink under random back-pressure. Checked against
the completer's rules (PG213's CQ/CC descriptors, PCIe's completion fields):

- a one-DWORD read or write of the user or DMA BAR is one register access with its BAR,
  address, byte enables and data, in request order, each after the last's acknowledge;
- a read completes with the register's data, Successful, the requester ID, tag, function,
  traffic class and attributes, the lower address of its first enabled byte and the byte
  count its enables give;
- a longer read of those BARs completes with Completer Abort, any other non-posted
  request with Unsupported Request, neither with data nor a register access;
- a longer write, or a write to another BAR, is dropped.
"""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiStreamBus
from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpAttr, TlpTc, TlpType
from cocotbext.pcie.core.utils import PcieId
from cocotbext.pcie.xilinx.us.interface import CcSink, CqSource
from cocotbext.pcie.xilinx.us.tlp import Tlp_us

from driver_model.regs import BAR_DMA, BAR_USER
from tb.env.rtl_bench import pauses, start

INPUTS = ("reg_ack", "reg_rd_data")
COUNT = 400


def first_enabled(be: int) -> int:
    return next((k for k in range(4) if be >> k & 1), 0)


def byte_count(be: int) -> int:
    """Bytes a one-DWORD read with first byte enables ``be`` returns (PCIe's table)."""
    if be == 0:
        return 1
    hi = max(k for k in range(4) if be >> k & 1)
    return hi - first_enabled(be) + 1


def request(rng: random.Random) -> tuple[Tlp_us, str]:
    """A random request, and what should come of it: "read", "write", "ca", "ur", "drop"."""
    t = Tlp()
    kinds = ["read"] * 4 + ["write"] * 4 + ["long_read", "long_write", "other_bar", "io", "locked"]
    kind = rng.choice(kinds)
    bar = rng.choice([BAR_USER, BAR_DMA])
    addr = rng.randrange(1 << 16) & ~3
    if rng.random() < 0.3:
        addr |= rng.getrandbits(32) << 32
    long64 = addr >> 32 != 0
    if kind in ("read", "long_read", "other_bar"):
        t.fmt_type = TlpType.MEM_READ_64 if long64 else TlpType.MEM_READ
        if kind == "long_read":
            t.set_addr_be(addr, 4 * rng.randrange(2, 9))
        else:  # one DWORD: any bytes of it, or any byte enables at all
            off = rng.randrange(4)
            t.set_addr_be(addr + off, rng.randrange(1, 5 - off))
            if rng.random() < 0.5:
                t.first_be = rng.randrange(16)
        fate = {"read": "read", "long_read": "ca", "other_bar": "ur"}[kind]
        if kind == "other_bar":
            bar = rng.choice([b for b in range(6) if b not in (BAR_USER, BAR_DMA)])
    elif kind in ("write", "long_write"):
        t.fmt_type = TlpType.MEM_WRITE_64 if long64 else TlpType.MEM_WRITE
        n = 4 if kind == "write" else 4 * rng.randrange(2, 9)
        t.set_addr_be_data(addr, rng.randbytes(n))
        if kind == "write":
            t.first_be = rng.randrange(16)
        fate = "write" if kind == "write" else "drop"
        if kind == "write" and rng.random() < 0.15:
            bar, fate = rng.choice([2, 3, 4, 5]), "drop"
    elif kind == "io":
        t.fmt_type = rng.choice([TlpType.IO_READ, TlpType.IO_WRITE])
        if t.fmt_type == TlpType.IO_WRITE:
            t.set_addr_be_data(addr & 0xFFFF, rng.randbytes(4))
        else:
            t.set_addr_be(addr & 0xFFFF, 4)
        fate = "ur"
    else:
        t.fmt_type = TlpType.MEM_READ_LOCKED
        t.set_addr_be(addr & 0xFFFFFFFF, 4)
        fate = "ur"
    t.requester_id = PcieId(rng.randrange(256), rng.randrange(32), rng.randrange(8))
    t.completer_id = PcieId(0, 0, rng.randrange(8))
    t.tag = rng.randrange(256)
    t.tc = TlpTc(rng.randrange(8))
    t.attr = TlpAttr(rng.randrange(8))
    us = Tlp_us(t)
    us.bar_id = bar
    us.bar_aperture = 16
    return us, fate


@cocotb.test()
async def test_requests_of_every_kind(dut):
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)
    source = CqSource(AxiStreamBus.from_prefix(dut, "s_axis_cq"), dut.clk, dut.rst)
    sink = CcSink(AxiStreamBus.from_prefix(dut, "m_axis_cc"), dut.clk, dut.rst)
    sink.set_pause_generator(pauses(rng, 0.4))

    regs: dict[tuple[int, int], int] = {}
    reqs = [request(rng) for _ in range(COUNT)]
    accesses: list = []  # (we, bar, addr, data, be) seen
    returned: list[int] = []  # what each read access returned
    completions: list = []

    async def register_block() -> None:
        """Acknowledge each access after a random delay; read data with the ack."""
        while True:
            await RisingEdge(dut.clk)
            dut.reg_ack.value = 0
            await ReadOnly()
            if not int(dut.reg_req_valid.value):
                continue
            we, bar = int(dut.reg_req_we.value), int(dut.reg_req_bar.value)
            addr, be = int(dut.reg_req_addr.value), int(dut.reg_req_be.value)
            data = int(dut.reg_req_wdata.value) if we else None  # (a read's: undefined)
            accesses.append((we, bar, addr, data, be))
            await RisingEdge(dut.clk)
            for _ in range(rng.choice([0, 0, 1, 3, 7])):
                await RisingEdge(dut.clk)
            key = (bar, addr)
            if we:
                old = regs.get(key, 0)
                mask = sum(0xFF << 8 * k for k in range(4) if be >> k & 1)
                regs[key] = old & ~mask | data & mask
            else:
                value = regs.setdefault(key, rng.getrandbits(32))
                dut.reg_rd_data.value = value
                returned.append(value)
            dut.reg_ack.value = 1

    async def collect() -> None:
        while True:
            frame = await sink.recv()
            completions.append(Tlp_us.unpack_us_cc(frame))

    cocotb.start_soon(register_block())
    cocotb.start_soon(collect())
    want_access, want_cpl = [], []
    for us, _ in reqs:
        await source.send(us.pack_us_cq())
    # the model, in request order (one at a time: the same order the block sees)
    for us, fate in reqs:
        key = (us.bar_id, us.address & 0xFFFF)
        if fate == "write":
            data = int.from_bytes(us.data[:4], "little")
            want_access.append((1, us.bar_id, key[1], data, us.first_be))
        elif fate == "read":
            want_access.append((0, us.bar_id, key[1], None, us.first_be))
        if fate in ("read", "ca", "ur"):
            want_cpl.append((us, fate))
    expect_cpl = len(want_cpl)
    for _ in range(200000):
        await RisingEdge(dut.clk)
        if len(completions) == expect_cpl and len(accesses) == len(want_access) and source.empty():
            break
    for _ in range(50):
        await RisingEdge(dut.clk)
    for k, (got, exp) in enumerate(zip(accesses, want_access, strict=False)):
        assert got == exp, f"access {k}: {got}, not {exp}"
    assert len(accesses) == len(want_access), f"{len(accesses)} of {len(want_access)} accesses"
    assert len(completions) == expect_cpl, f"{len(completions)} of {expect_cpl} completions"
    reads = iter(returned)
    for cpl, (us, fate) in zip(completions, want_cpl, strict=True):
        status = {"read": CplStatus.SC, "ca": CplStatus.CA, "ur": CplStatus.UR}[fate]
        assert cpl.status == status, f"{us.fmt_type.name} ({fate}): status {cpl.status}"
        assert (cpl.requester_id, cpl.tag) == (us.requester_id, us.tag)
        assert cpl.completer_id.function == us.completer_id.function
        assert (int(cpl.tc), int(cpl.attr)) == (int(us.tc), int(us.attr))
        if fate == "read":
            assert cpl.lower_address == (us.address & 0x7C) + first_enabled(us.first_be)
            assert cpl.byte_count == byte_count(us.first_be)
            assert cpl.length == 1 and int.from_bytes(cpl.data, "little") == next(reads)
        else:
            assert cpl.length == 0, f"{fate}: a completion with data"
            want_bc = us.length * 4 if us.length > 1 else byte_count(us.first_be)
            assert cpl.byte_count == want_bc, f"{fate}: byte count {cpl.byte_count}"
