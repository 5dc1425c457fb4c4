"""cocotb tests of the XDMA drop-in (``xdma_0``, hdl/dropin) as a user's design sees it:
the toplevel is the drop-in itself, with its ports named as on the Vivado IP; a
cocotbext-axi ``AxiRam`` on its AXI4 master and an ``AxiLiteRam`` on its AXI4-Lite master
stand for the user's design, and the testbench's hard-IP model drives the hard IP's user
interface inside (``dut.hip``). The plan builds it with two channels each way, channel 1
of each a stream.

The memory answers SLVERR or DECERR in error windows: each error stops its channel with
PG195's status bits and a good transfer follows on the same channel.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer, with_timeout
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiLiteRam
from cocotbext.axi.constants import AxiResp
from cocotbext.pcie.core.caps import PciCapId

from driver_model import regs
from driver_model.desc import C2H_RESULT_SIZE, C2hResult, Segment
from driver_model.regs import AxiErr, Stat, Target
from driver_model.xdma import Engine, MsixEntry, XdmaChannel, XdmaMsix, probe_engines
from tb.config.build import current_profile
from tb.config.options import xdma_ids
from tb.env.axi_mem import AxiError, ErrorAxiRam, ErrorWindow
from tb.env.backdoor import engine
from tb.env.cfg_mgmt import CfgMgmt
from tb.env.faults import FaultRule
from tb.env.harness import GUARD, Harness, Surface, check_ok, pattern, setup
from tb.env.streams import StatusPorts, c2h_source, clock_and_reset, h2c_sink
from tb.env.system import TB
from tb.regress.scoreboard import Scoreboard

# the user design's memory behind the AXI4 master, and the AXI4-Lite slave's
MEM_SIZE = 1 << 20
AXIL_SIZE = 1 << 12


@dataclass
class ParityCount:
    """Beats transferred on an interface, and those whose parity bits (odd, a bit per
    byte, checked on the valid bytes) were wrong."""

    beats: int = 0
    wrong: int = 0


async def count_parity(data, user, valid, ready, keep, clk, count: ParityCount) -> None:
    """Check PG195's Propagate Parity on each beat of an outgoing interface."""
    width = len(data) // 8
    while True:
        await RisingEdge(clk)
        if not (valid.value.is_resolvable and int(valid.value) and int(ready.value)):
            continue
        raw, par, en = int(data.value), int(user.value), int(keep.value)
        count.beats += 1
        for b in range(width):
            if en >> b & 1 and (bin(raw >> (8 * b) & 0xFF).count("1") + (par >> b & 1)) % 2 != 1:
                count.wrong += 1
                break


class DropIn:
    """The drop-in under test: the harness (libxdma-style channels over the DMA BAR), the
    AXI memory and AXI-Lite memory of the user's design, and monitors of the status
    ports."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.tb = tb = h.tb
        dut = tb.dut
        clk, rst, level = clock_and_reset(dut)
        self.mem = ErrorAxiRam(dut, clk, rst, level, MEM_SIZE)
        self.axil = AxiLiteRam(AxiLiteBus.from_prefix(dut, "m_axil"), clk, rst, level, AXIL_SIZE)
        self.clk = clk
        # per status port: descriptor-done and packet-done pulses, and cycles with Run and busy
        self.sts = StatusPorts(dut, clk, h.h2c_channels, h.c2h_channels).counts
        # Propagate Parity on the DMA's outgoing data: beats seen, beats with a wrong bit
        self.parity = {name: ParityCount() for name in ("m_axi_w", "m_axis_h2c_0", "m_axis_h2c_1")}
        cocotb.start_soon(
            count_parity(
                dut.m_axi_wdata,
                dut.m_axi_wuser,
                dut.m_axi_wvalid,
                dut.m_axi_wready,
                dut.m_axi_wstrb,
                clk,
                self.parity["m_axi_w"],
            )
        )
        for n in (0, 1):
            cocotb.start_soon(
                count_parity(
                    getattr(dut, f"m_axis_h2c_tdata_{n}"),
                    getattr(dut, f"m_axis_h2c_tuser_{n}"),
                    getattr(dut, f"m_axis_h2c_tvalid_{n}"),
                    getattr(dut, f"m_axis_h2c_tready_{n}"),
                    getattr(dut, f"m_axis_h2c_tkeep_{n}"),
                    clk,
                    self.parity[f"m_axis_h2c_{n}"],
                )
            )

    def channel(self, direction: Target, n: int) -> XdmaChannel:
        return XdmaChannel(self.h.platform, direction, n, h2c_channels=self.h.h2c_channels)


async def boot(dut) -> DropIn:
    """The TB on the drop-in's hard-IP port, and the user's design around it."""
    h = await setup(dut, hip=dut.hip)
    return DropIn(h)


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_dropin_ports(dut):
    """The IP's global ports: link up, axi_aresetn released, msi_enable and
    msi_vector_width as the host granted, msix_enable low (MSI-X built, the host chose
    MSI); the MSI-X table at its PG195 reset values (address and data 0, every vector
    masked, nothing pending); a libxdma-style probe finds the channels built, stream or
    memory-mapped each; the status ports of idle channels are zero."""
    d = await boot(dut)
    tb, h = d.tb, d.h
    assert int(dut.user_lnk_up.value) == 1
    assert int(dut.axi_aresetn.value) == 1
    assert int(dut.msi_enable.value) == 1
    granted = await tb.pci.capability_read_word(PciCapId.MSI, 0x02)  # message control
    assert int(dut.msi_vector_width.value) == (granted >> 4) & 7
    assert int(dut.msix_enable.value) == 0
    msix = XdmaMsix(h.platform)
    for v in (0, 17, regs.MSIX_VECTORS - 1):
        assert await msix.entry(v) == MsixEntry(0, 0, True), f"MSI-X entry {v}"
    assert await msix.pending() == 0
    cfg = await tb.dma_read32(regs.cfg_reg(regs.CFG_MSI_ENABLE))
    assert regs.CFG_MSI_FIELD.get(cfg) and not regs.CFG_MSIX_FIELD.get(cfg), f"{cfg:#x}"
    found = await probe_engines(h.platform)
    p = tb.profile
    want = [Engine(Target.H2C, n, bool(p.h2c_stream >> n & 1)) for n in range(h.h2c_channels)]
    want += [Engine(Target.C2H, n, bool(p.c2h_stream >> n & 1)) for n in range(h.c2h_channels)]
    assert found == want, f"probe found {found}"
    for n in range(4):
        assert int(getattr(dut, f"h2c_sts_{n}").value) == 0
        assert int(getattr(dut, f"c2h_sts_{n}").value) == 0


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_ids_as_built(dut):
    """The host reads the IDs the build configuration gives the drop-in (Vivado's
    defaults, each replaced by the build's ID option: ``make test XDMA="PF0_DEVICE_ID=..."``)
    from the function's configuration space; ``$PEVB_EXPECT_IDS`` (JSON: vendor, device,
    revision, subsystem vendor, subsystem, class code), where a test sets it, names them."""
    d = await boot(dut)
    tb = d.tb
    ids = xdma_ids(current_profile())
    if os.environ.get("PEVB_EXPECT_IDS"):
        assert list(ids) == json.loads(os.environ["PEVB_EXPECT_IDS"]), ids
    fpga = tb.pci.pcie_id

    async def host_cfg(reg: int) -> int:
        return await with_timeout(tb.rc.config_read_dword(fpga, reg), 100, "us")

    vendor, device, revision, sub_vendor, sub_id, class_code = ids
    assert await host_cfg(0x00) == device << 16 | vendor
    assert await host_cfg(0x08) == class_code << 8 | revision
    assert await host_cfg(0x2C) == sub_id << 16 | sub_vendor


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_axiram_h2c_c2h(dut):
    """H2C chains land in the user's AxiRam at the descriptors' AXI addresses (odd
    offsets and lengths, a burst crossing 4 KiB), C2H chains read them back to host
    memory; bytes around each piece untouched. The status ports count one
    descriptor-done pulse per descriptor and show Run while the channel runs."""
    d = await boot(dut)
    tb, h = d.tb, d.h
    d.mem.write(0, bytes([GUARD]) * 0x8000)
    pieces = [(0x0003, 1500), (0x1FF0, 4096 + 37), (0x5001, 77)]
    src = tb.alloc_host(0x8000)
    dst = tb.alloc_host(0x8000)
    dst[0:0x8000] = bytes([GUARD]) * 0x8000
    sa, da = src.get_absolute_address(0), dst.get_absolute_address(0)
    h2c_segs, c2h_segs = [], []
    for i, (addr, n) in enumerate(pieces):
        data = pattern(n, 10 + i)
        src[addr : addr + n] = data
        h2c_segs.append(Segment(sa + addr, addr, n))
        c2h_segs.append(Segment(addr, da + addr, n))
    res = await h.run(h.h2c, h2c_segs, timeout_ns=5e6)
    check_ok(res, len(pieces), "H2C")
    image = bytearray([GUARD]) * 0x8000
    for i, (addr, n) in enumerate(pieces):
        image[addr : addr + n] = pattern(n, 10 + i)
    assert d.mem.read(0, 0x8000) == bytes(image), "AxiRam contents after H2C"
    res = await h.run(h.c2h, c2h_segs, timeout_ns=5e6)
    check_ok(res, len(pieces), "C2H")
    assert bytes(dst[0:0x8000]) == bytes(image), "host buffer after C2H"
    for key in ((Target.H2C, 0), (Target.C2H, 0)):
        c = d.sts[key]
        assert c["desc"] == len(pieces), f"{key}: {c['desc']} descriptor-done pulses"
        assert c["pkt"] == 0, f"{key}: packet-done on a memory-mapped channel"
        assert c["run"] > 0 and c["busy"] > 0, f"{key}: status port never showed Run/busy"
    w = d.parity["m_axi_w"]
    assert w.beats > 0 and w.wrong == 0, f"m_axi_wuser parity: {w}"


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_axi_error_responses(dut):
    """SLVERR and DECERR from the user's AXI slave, on H2C writes and C2H reads: each stops
    its channel with PG195's bits (H2C write_error, C2H read_error: 1 decode, 2 slave),
    nothing lands in host memory for a failed read, memory outside the window keeps its
    bytes, and a good transfer follows on the same channel."""
    d = await boot(dut)
    tb, h = d.tb, d.h
    n = 3000
    src = tb.alloc_host(0x4000)
    dst = tb.alloc_host(0x4000)
    sa, da = src.get_absolute_address(0), dst.get_absolute_address(0)
    for case, resp in enumerate((AxiError.SLVERR, AxiError.DECERR)):
        want_bit = AxiErr.SLAVE if resp == AxiError.SLVERR else AxiErr.DECODE
        base = 0x10000 * (case + 1)
        # H2C: the second half of the piece's AXI range answers with an error
        d.mem.write(base, bytes([GUARD]) * 0x4000)
        data = pattern(n, 30 + case)
        src[0:n] = data
        d.mem.windows = [ErrorWindow(base + 0x800, 0x800, resp, reads=False)]
        d.mem.answered.clear()
        res = await h.run(h.h2c, [Segment(sa, base, n)], timeout_ns=5e6)
        assert not res.timed_out and not res.busy, f"H2C {resp.name}: {res}"
        assert regs.STAT_WRITE_ERROR.get(res.status) == want_bit, (
            f"H2C {resp.name}: {regs.describe_status(res.status, Target.H2C)}"
        )
        assert res.completed_count == 0
        assert (True, resp) in d.mem.answered, f"no {resp.name} answered"
        assert d.mem.read(base + 0x800, 0x800) == bytes([GUARD]) * 0x800, "window written"
        assert d.mem.read(base + n, 0x4000 - n) == bytes([GUARD]) * (0x4000 - n)
        # C2H: a read of the window fails, nothing reaches the host buffer
        d.mem.windows = [ErrorWindow(base + 0x2000, 0x100, resp, writes=False)]
        dst[0:0x4000] = bytes([GUARD]) * 0x4000
        res = await h.run(h.c2h, [Segment(base + 0x2000, da, 512)], timeout_ns=5e6)
        assert not res.timed_out and not res.busy, f"C2H {resp.name}: {res}"
        assert regs.STAT_READ_ERROR.get(res.status) == want_bit, (
            f"C2H {resp.name}: {regs.describe_status(res.status, Target.C2H)}"
        )
        assert (False, resp) in d.mem.answered, f"no {resp.name} read answered"
        assert bytes(dst[0:0x4000]) == bytes([GUARD]) * 0x4000, "C2H wrote after its error"
        # both channels recover: the same transfers with the windows gone
        d.mem.windows = []
        res = await h.run(h.h2c, [Segment(sa, base, n)], timeout_ns=5e6)
        check_ok(res, 1, f"H2C after {resp.name}")
        assert d.mem.read(base, n) == data
        res = await h.run(h.c2h, [Segment(base, da, n)], timeout_ns=5e6)
        check_ok(res, 1, f"C2H after {resp.name}")
        assert bytes(dst[0:n]) == data
        assert not (await h.h2c.status()) & Stat.BUSY


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_axil_user_bar(dut):
    """The user BAR reaches the user's AXI4-Lite slave: host writes land at their offsets
    (one DWORD each, byte strobes kept for narrower writes), host reads return what the
    slave holds."""
    d = await boot(dut)
    tb = d.tb
    for i, off in enumerate((0x0, 0x4, 0x100, 0xFFC)):
        await tb.user_write32(off, 0x1234_5600 + i)
    await tb.user_read32(0)  # flush
    for i, off in enumerate((0x0, 0x4, 0x100, 0xFFC)):
        assert d.axil.read_dword(off) == 0x1234_5600 + i, f"AXI-Lite {off:#x}"
    d.axil.write_dword(0x80, 0xCAFEF00D)
    assert await tb.user_read32(0x80) == 0xCAFEF00D
    # a one-byte write changes one byte
    await tb.user_bar.write(0x102, b"\xee")
    await tb.user_read32(0)
    assert d.axil.read_dword(0x100) == (0x1234_5602 & 0xFF00FFFF) | 0xEE << 16


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_stream_channels(dut):
    """Channel 1 of each direction streams: an H2C chain with EOP on its last descriptor
    comes out of m_axis_h2c_*_1 as one packet; a C2H packet into s_axis_c2h_*_1 fills a
    descriptor and writes its length back; each status port pulses packet-done once."""
    d = await boot(dut)
    tb, h = d.tb, d.h
    sink = h2c_sink(dut, 1)
    source = c2h_source(dut, 1)
    n = 2500
    data = pattern(n, 5)
    src = tb.alloc_host(0x4000)
    src[0:n] = data
    sa = src.get_absolute_address(0)
    h2c1 = d.channel(Target.H2C, 1)
    tb.irq_handlers[h2c1.vector].append(h2c1.interrupt)
    res = await h2c1.run(
        h.place_chain([Segment(sa, 0, 1000), Segment(sa + 1000, 0, n - 1000)], eop=[1])
    )
    check_ok(res, 2, "H2C stream")
    frame = await sink.recv()
    assert bytes(frame.tdata) == data
    c2h1 = d.channel(Target.C2H, 1)
    tb.irq_handlers[c2h1.vector].append(c2h1.interrupt)
    out = tb.alloc_host(0x4000)
    oa = out.get_absolute_address(0)
    out[0:0x4000] = bytes([GUARD]) * 0x4000
    pkt = pattern(700, 6)
    await source.send(pkt)
    res = await c2h1.run(h.place_chain([Segment(oa + 0x2000, oa, 4096)]))
    check_ok(res, 1, "C2H stream")
    assert bytes(out[0:700]) == pkt
    assert bytes(out[700:0x2000]) == bytes([GUARD]) * (0x2000 - 700)
    assert C2hResult.parse(bytes(out[0x2000:0x2008])) == C2hResult(700, True)
    assert d.sts[(Target.H2C, 1)]["pkt"] == 1 and d.sts[(Target.H2C, 1)]["desc"] == 2
    assert d.sts[(Target.C2H, 1)]["pkt"] == 1 and d.sts[(Target.C2H, 1)]["desc"] == 1
    t = d.parity["m_axis_h2c_1"]
    assert t.beats > 0 and t.wrong == 0, f"m_axis_h2c_tuser_1 parity: {t}"


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_frame_grabber_into_cuda_surface(dut):
    """The classic GPUDirect RDMA design: a camera (a cocotbext-axi AxiStreamSource on C2H
    stream channel 1, stalling at random) sends frames with tlast at each frame's end;
    the host pins a cudaMalloc'd surface through nvidia_p2p and points a C2H chain at its
    BAR1 pages, a frame per slot of the surface. Each frame lands in its slot (read back
    with cudaMemcpy), the descriptors' results give each one's length and the EOP of
    its frame, and nothing lands between frames."""
    d = await boot(dut)
    tb, h = d.tb, d.h
    camera = c2h_source(dut, 1)
    stalls = random.Random(7)
    camera.set_pause_generator(iter(lambda: int(stalls.random() < 0.3), 2))
    frame_bytes, slot, desc_len = 6 * 1024 + 100, 8 * 1024, 4096
    frames = [pattern(frame_bytes, 70 + f) for f in range(3)]
    surf = Surface(tb, 3 * slot, xor_val=0x5A5A5A5A, width=128)
    before = surf.read(0, 3 * slot)
    results = tb.alloc_host(4096)
    results[0:4096] = bytes([GUARD]) * 4096
    rbase = results.get_absolute_address(0)
    segs, fill = [], []
    for f in range(3):
        left = frame_bytes
        for addr, n in surf.chunks(f * slot, slot):
            pos = 0
            while pos < n and left > 0:
                take = min(desc_len, n - pos)
                segs.append(Segment(rbase + 32 * len(segs), addr + pos, take))
                fill.append(min(take, left))
                left -= fill[-1]
                pos += take
    for frame in frames:
        await camera.send(frame)
    c2h1 = d.channel(Target.C2H, 1)
    tb.irq_handlers[c2h1.vector].append(c2h1.interrupt)
    res = await c2h1.run(h.place_chain(segs), timeout_ns=30e6)
    check_ok(res, len(segs), "frame grabber")
    after = surf.read(0, 3 * slot)
    for f, frame in enumerate(frames):
        assert after[f * slot : f * slot + frame_bytes] == frame, f"frame {f}"
        gap = slice(f * slot + frame_bytes, (f + 1) * slot)
        assert after[gap] == before[gap], f"written between frame {f} and the next"
    got = [C2hResult.parse(bytes(results[32 * i :][:C2H_RESULT_SIZE])) for i in range(len(segs))]
    ends = {i for i, n in enumerate(fill) if sum(fill[: i + 1]) % frame_bytes == 0}
    want = [C2hResult(n, i in ends) for i, n in enumerate(fill)]
    assert got == want, f"results {got}"
    assert d.sts[(Target.C2H, 1)]["pkt"] == 3


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_axil_slave_programs_a_channel(dut):
    """User logic (a cocotbext-axi AxiLiteMaster on s_axil_*) reaches the DMA registers
    as PG195 gives them, the same space as the DMA BAR: it reads the channel
    identifiers, programs H2C channel 0 with a chain the host placed, sets Run, polls the
    status until the channel is idle (while the host reads the same registers over the
    BAR) and reads the completed count; the data lands in the AxiRam. An address beyond
    the register space is answered DECERR and changes nothing."""
    d = await boot(dut)
    tb, h = d.tb, d.h
    user = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), d.clk, dut.axi_aresetn, False)
    ident = await user.read_dword(regs.ch_reg(Target.H2C, regs.CH_IDENTIFIER, 1))
    assert ident == regs.identifier(Target.H2C, 1, stream=True), f"{ident:#x}"
    ident = await user.read_dword(regs.ch_reg(Target.C2H, regs.CH_IDENTIFIER, 0))
    assert ident == regs.identifier(Target.C2H, 0), f"{ident:#x}"
    n = 5000
    data = pattern(n, 61)
    src = tb.alloc_host(0x2000)
    src[0:n] = data
    d.mem.write(0x4000, bytes([GUARD]) * 0x2000)
    sa = src.get_absolute_address(0)
    chain = h.place_chain([Segment(sa, 0x4000, 3000), Segment(sa + 3000, 0x4000 + 3000, n - 3000)])
    ch = h.h2c
    await user.write_dword(ch.sgreg(regs.SG_DESC_LO), chain.first & 0xFFFFFFFF)
    await user.write_dword(ch.sgreg(regs.SG_DESC_HI), chain.first >> 32)
    await user.write_dword(ch.sgreg(regs.SG_DESC_ADJ), chain.first_adj)
    assert await tb.dma_read32(ch.sgreg(regs.SG_DESC_LO)) == chain.first & 0xFFFFFFFF
    await user.write_dword(ch.reg(regs.CH_CONTROL), int(regs.Ctrl.RUN))
    status = int(Stat.BUSY)
    for _ in range(2000):
        status = await user.read_dword(ch.reg(regs.CH_STATUS))
        host_view = await ch.completed_count()
        assert 0 <= host_view <= 2
        if not status & Stat.BUSY:
            break
    assert not status & Stat.BUSY and not status & regs.STAT_ERROR_MASK, regs.describe_status(
        status, Target.H2C
    )
    assert await user.read_dword(ch.reg(regs.CH_COMPLETED_COUNT)) == 2
    assert await ch.completed_count() == 2
    await user.write_dword(ch.reg(regs.CH_CONTROL), 0)
    assert d.mem.read(0x4000, n) == data
    assert d.mem.read(0x4000 + n, 0x2000 - n) == bytes([GUARD]) * (0x2000 - n)
    # beyond the register space: DECERR, read data 0, no register written
    control = ch.reg(regs.CH_CONTROL)
    wr = await user.write(0x1_0000 + control, int(regs.Ctrl.RUN).to_bytes(4, "little"))
    assert wr.resp == AxiResp.DECERR
    rd = await user.read(0x1_0000 + ch.reg(regs.CH_IDENTIFIER), 4)
    assert rd.resp == AxiResp.DECERR and bytes(rd.data) == bytes(4)
    assert await tb.dma_read32(control) == 0, "a DECERR write reached the control register"


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_dma_bridge_reset(dut):
    """dma_bridge_resetn (built with soft_reset_en), asserted by the user after the
    transfers have ended, as PG195 asks: while it is low the DMA and axi_aresetn are in
    reset and the link stays up; after it the DMA registers read their reset values, the
    configuration space (BARs, MSI) is as the host left it, and the driver, which
    programs a channel afresh for each chain, moves data again on every channel."""
    d = await boot(dut)
    tb, h = d.tb, d.h
    src = tb.alloc_host(0x2000)
    sa = src.get_absolute_address(0)
    first, second = pattern(3000, 71), pattern(3000, 72)
    src[0:3000] = first
    res = await h.run(h.h2c, [Segment(sa, 0x100, 3000)], timeout_ns=5e6)
    check_ok(res, 1, "H2C before the reset")
    await tb.dma_write32(h.h2c.reg(regs.CH_INT_MASK), 0x1F)
    await tb.dma_write32(regs.irq_reg(regs.IRQ_USER_INT_EN), 0x3)
    assert await tb.dma_read32(regs.irq_reg(regs.IRQ_USER_INT_EN)) == 0x3
    dut.dma_bridge_resetn.value = 0
    # the streams are held at packet boundaries first, then the reset
    for _ in range(50):
        await RisingEdge(d.clk)
        if not int(dut.axi_aresetn.value):
            break
    for _ in range(100):
        await RisingEdge(d.clk)
        assert int(dut.axi_aresetn.value) == 0, "axi_aresetn during the reset"
        assert int(dut.user_lnk_up.value) == 1, "the link went down"
    dut.dma_bridge_resetn.value = 1
    for _ in range(100):
        await RisingEdge(d.clk)
        if int(dut.axi_aresetn.value):
            break
    assert int(dut.axi_aresetn.value) == 1, "axi_aresetn still low after the reset"
    assert await tb.dma_read32(h.h2c.reg(regs.CH_INT_MASK)) == 0
    assert await tb.dma_read32(regs.irq_reg(regs.IRQ_USER_INT_EN)) == 0
    assert await h.h2c.completed_count() == 0
    assert await tb.dma_read32(h.h2c.sgreg(regs.SG_DESC_LO)) == 0
    assert int(dut.msi_enable.value) == 1, "MSI enable lost"
    # the driver's next chains run on both directions
    src[0:3000] = second
    res = await h.run(h.h2c, [Segment(sa, 0x100, 3000)], timeout_ns=5e6)
    check_ok(res, 1, "H2C after the reset")
    assert d.mem.read(0x100, 3000) == second
    dst = tb.alloc_host(0x2000)
    da = dst.get_absolute_address(0)
    res = await h.run(h.c2h, [Segment(0x100, da, 3000)], timeout_ns=5e6)
    check_ok(res, 1, "C2H after the reset")
    assert bytes(dst[0:3000]) == second


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_cfg_mgmt(dut):
    """Configuration management (built with cfg_mgmt_if): the user logic reads the
    function's configuration space as the host enumerated it (IDs, the BARs the host
    assigned, the Command register) and writes it: a byte-enabled write lands in its
    byte alone, the host reads it back; the type-1 access bit opens no read-only field
    on an Endpoint; clearing Memory Space Enable shuts the BARs to the host until the
    user logic sets it again; a function the core lacks reads 0."""
    d = await boot(dut)
    tb = d.tb
    mgmt = CfgMgmt(dut, d.clk)
    fpga = tb.pci.pcie_id

    async def host_cfg(reg: int) -> int:
        return await with_timeout(tb.rc.config_read_dword(fpga, reg * 4), 100, "us")

    f0 = tb.dev.functions[0]
    ids = f0.device_id << 16 | f0.vendor_id  # the Vivado IP's defaults
    assert f0.vendor_id == 0x10EE
    assert await mgmt.read(0) == await host_cfg(0) == ids
    for bar in (regs.BAR_USER, regs.BAR_DMA):
        got = await mgmt.read(4 + bar)
        assert got & ~0xF == tb.pci.bar_addr[bar], f"BAR{bar}: {got:#x}"
    command = await mgmt.read(1)
    assert command & 0x6 == 0x6, f"Command {command:#x}: memory space and bus master on"
    # Interrupt Line (0x3C byte 0) is read-write; Interrupt Pin (byte 1) is read-only
    line_pin = await host_cfg(0x3C // 4)
    await mgmt.write(0x3C // 4, 0xFFFF_FF5A, byte_enable=0b0001)
    assert await host_cfg(0x3C // 4) == (line_pin & ~0xFF) | 0x5A
    assert await mgmt.read(0x3C // 4) == (line_pin & ~0xFF) | 0x5A
    await mgmt.write(0, 0x1234_5678, type1=True)
    assert await host_cfg(0) == ids, "the type-1 bit opened the IDs on an Endpoint"
    # Memory Space Enable off: the DMA BAR answers the host no more, until it is back on
    ident = await tb.dma_read32(regs.block_base(Target.H2C))
    await mgmt.write(1, command & ~0x2, byte_enable=0b0011)
    assert await host_cfg(1) & 0x2 == 0
    try:
        shut = await tb.dma_read32(regs.block_base(Target.H2C))
    except Exception as e:  # cocotbext-pcie raises on the UR completion
        assert "Unsuccessful" in str(e), e
    else:
        raise AssertionError(f"the DMA BAR answered {shut:#x} with Memory Space Enable off")
    await mgmt.write(1, command, byte_enable=0b0011)
    assert await tb.dma_read32(regs.block_base(Target.H2C)) == ident
    assert await mgmt.read(0, function=1) == 0


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_cfg_ext(dut):
    """Configuration extend (built with cfg_ext_if and both user ranges): the host finds
    the user's vendor-specific capability at 0xB0 at the end of the capability list and
    its VSEC at 0x480 at the end of the extended list, both answered by the user logic;
    a byte write lands in its byte alone; every request to a core register is shown for
    exactly one cycle with its register and function; a user read left unanswered reads
    0 and is counted."""
    d = await boot(dut)
    tb = d.tb
    user, ext = tb.user_cfg, tb.cfg_ext
    assert user is not None and ext is not None, "the build has no cfg_ext"
    fpga = tb.pci.pcie_id

    async def host_read(addr: int) -> int:
        return await with_timeout(tb.rc.config_read_dword(fpga, addr), 100, "us")

    async def host_write(addr: int, data: bytes) -> None:
        await with_timeout(tb.rc.config_write(fpga, addr, data), 100, "us")

    # the legacy list ends with the user's capability (ID 0x09, 16 bytes)
    caps, ptr = [], await host_read(0x34) & 0xFC
    while ptr:
        header = await host_read(ptr)
        caps.append((header & 0xFF, ptr))
        ptr = header >> 8 & 0xFC
    assert caps[-1] == (0x09, 0xB0), [(hex(i), hex(p)) for i, p in caps]
    assert await host_read(0xB0) >> 16 & 0xFF == 16
    # the extended list ends with the user's VSEC (ID 0x000B), its header the user's
    ext_caps, ptr = [], 0x100
    while ptr:
        header = await host_read(ptr)
        ext_caps.append((header & 0xFFFF, ptr))
        ptr = header >> 20 & 0xFFC
    assert ext_caps[-1] == (0x000B, 0x480), [(hex(i), hex(p)) for i, p in ext_caps]
    assert await host_read(0x484) == 0x80 << 20 | 1 << 16 | 0x1DE
    # writes: a whole DWORD in the legacy range, one byte in the extended range
    await host_write(0xB4, (0x1234_5678).to_bytes(4, "little"))
    assert await host_read(0xB4) == 0x1234_5678
    await host_write(0x489, b"\xab")
    wrote = user.seen[-1]
    assert (wrote.kind, wrote.register, wrote.byte_enable) == ("write", 0x488 // 4, 0b0010)
    assert wrote.data >> 8 & 0xFF == 0xAB
    assert await host_read(0x488) == 0x0000_AB00
    # the header is the user's, read-only: a write leaves it
    await host_write(0x484, b"\x00\x00\x00\x00")
    assert await host_read(0x484) == 0x80 << 20 | 1 << 16 | 0x1DE
    # a core register: shown for one cycle, answered by the core
    before = len(user.seen)
    f0 = tb.dev.functions[0]
    assert await host_read(0) == f0.device_id << 16 | f0.vendor_id
    assert [(s.kind, s.function, s.register, s.cycles) for s in user.seen[before:]] == [
        ("read", 0, 0, 1)
    ]
    # every request the model showed, the user logic saw (and no other)
    assert [(s.kind, s.function, s.register) for s in user.seen] == ext.shown
    # an unanswered user read: 0, counted; the next one is answered again
    user.answering = False
    assert await host_read(0xB4) == 0
    assert ext.timeouts == 1
    user.answering = True
    assert await host_read(0xB4) == 0x1234_5678


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_config_status_ports(dut):
    """The configuration status ports as the hard IP drives them: LTSSM in L0 with the
    link up; per function the Command register's I/O, memory and bus master enables and
    INTx disable, following a change the host makes; function 0's max payload and read
    request sizes as Device Control holds them. The DRP answers each access one drp_clk
    cycle later with data 0."""
    d = await boot(dut)
    tb = d.tb
    fpga = tb.pci.pcie_id

    async def host_read(addr: int) -> int:
        return await with_timeout(tb.rc.config_read_dword(fpga, addr), 100, "us")

    def status(command: int) -> int:
        return (command & 0x7) | (command >> 10 & 1) << 3

    assert int(dut.cfg_ltssm_state.value) == 0x10
    command = await host_read(0x04) & 0xFFFF
    await RisingEdge(d.clk)
    assert int(dut.cfg_function_status.value) == status(command), hex(command)
    await with_timeout(tb.rc.config_write_word(fpga, 0x04, command & ~0x4 | 0x400), 100, "us")
    for _ in range(4):
        await RisingEdge(d.clk)
    assert int(dut.cfg_function_status.value) == status(command & ~0x4 | 0x400)
    await with_timeout(tb.rc.config_write_word(fpga, 0x04, command), 100, "us")
    devctl = await tb.pci.capability_read_word(PciCapId.EXP, 0x08)
    await RisingEdge(d.clk)
    assert int(dut.cfg_max_payload.value) == devctl >> 5 & 0x7
    assert int(dut.cfg_max_read_req.value) == devctl >> 12 & 0x7
    assert int(dut.cfg_vf_flr_in_process.value) == 0
    # DRP: one access, ready one drp_clk cycle later
    cocotb.start_soon(Clock(dut.drp_clk, 10, "ns").start())
    dut.drp_we.value = 0
    dut.drp_addr.value = 0x10
    dut.drp_di.value = 0
    dut.drp_en.value = 0
    await RisingEdge(dut.drp_clk)
    await RisingEdge(dut.drp_clk)
    assert int(dut.drp_rdy.value) == 0
    dut.drp_en.value = 1
    await RisingEdge(dut.drp_clk)  # the edge that takes the access
    dut.drp_en.value = 0
    await Timer(1, "ns")
    assert int(dut.drp_rdy.value) == 1 and int(dut.drp_do.value) == 0
    await RisingEdge(dut.drp_clk)
    await Timer(1, "ns")
    assert int(dut.drp_rdy.value) == 0


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_pcie_id_ports(dut):
    """The PCIe ID interface (built with pcie_id_if): the host reads the vendor, device,
    revision, subsystem vendor and subsystem IDs the user logic drives, and a change of
    them at once; the class code beside the revision is the core's own."""
    d = await boot(dut)
    tb = d.tb
    fpga = tb.pci.pcie_id

    async def host_read(addr: int) -> int:
        return await with_timeout(tb.rc.config_read_dword(fpga, addr), 100, "us")

    f0 = tb.dev.functions[0]
    assert (f0.vendor_id, f0.subsystem_id) == (0x10EE, 0x0007), "Vivado's defaults"
    ids = f0.device_id << 16 | f0.vendor_id
    assert await host_read(0x00) == ids, "the TB's IDs, driven on the ports"
    class_rev = await host_read(0x08)
    dut.cfg_vend_id.value = 0x10EE
    dut.cfg_dev_id_pf0.value = 0x9034
    dut.cfg_rev_id_pf0.value = 0x5A
    dut.cfg_subsys_vend_id.value = 0x1BAD
    dut.cfg_subsys_id_pf0.value = 0xCAFE
    await RisingEdge(d.clk)
    assert await host_read(0x00) == 0x9034_10EE
    assert await host_read(0x08) == (class_rev & ~0xFF) | 0x5A
    assert await host_read(0x2C) == 0xCAFE_1BAD


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_random_axi_errors(dut):
    """Seeded random chains on the drop-in's memory-mapped channel 0 (``REGRESS_SEED``),
    some hitting a window of the user's AXI memory that answers SLVERR or DECERR (every
    kind both ways in each seed, the rest at random): a faulted chain stops with PG195's
    bits (H2C write_error, C2H read_error: 1 decode, 2 slave) before its faulted
    descriptor completes, and the window's bytes are never written; a clean one lands
    whole. The host buffer and the AXI memory are checked whole after every chain (a
    faulted chain's descriptors from the failing one on may have landed in part), and
    the next chain runs on the same channel."""
    seed = int(os.environ.get("REGRESS_SEED", "1"))
    d = await boot(dut)
    tb, h = d.tb, d.h
    rng = random.Random(seed)
    host_size, axi_base, axi_size = 0x10000, 0x20000, 0x10000
    host = tb.alloc_host(host_size)
    host[0:host_size] = rng.randbytes(host_size)
    d.mem.write(axi_base, rng.randbytes(axi_size))
    ha = host.get_absolute_address(0)
    sb = Scoreboard()
    sb.load("host", host[0:host_size])
    sb.load("axi", d.mem.read(axi_base, axi_size))
    kinds = [(dn, resp) for dn in ("h2c", "c2h") for resp in (AxiError.SLVERR, AxiError.DECERR)]
    plan = kinds + [(rng.choice(("h2c", "c2h")), rng.choice((None, *(r for _, r in kinds))))
                    for _ in range(8)]  # fmt: skip
    rng.shuffle(plan)
    tb.log.info("random AXI errors, seed %d: %s", seed, plan)
    for step, (direction, resp) in enumerate(plan):
        n_desc = rng.randint(1, 6)
        lengths = [rng.randint(1, 3000) for _ in range(n_desc)]
        total = sum(lengths)
        host_off = rng.randint(0, host_size - total)
        axi_off = rng.randint(0, axi_size - total - 128)
        descs, h_pos, a_pos = [], host_off, axi_off
        for n in lengths:
            descs.append((h_pos, a_pos, n))
            h_pos += n
            a_pos += n + rng.choice((0, 0, 1, 64))  # gaps on the AXI side
        if a_pos > axi_size:
            descs = [(hp, ap - (a_pos - axi_size), n) for hp, ap, n in descs]
        window = None
        if resp is not None:
            # 64 B aligned (a beat of the widest bus), inside one descriptor's AXI range
            k = rng.randrange(len(descs))
            _, ap, n = descs[k]
            lo = (ap + 63) // 64 * 64
            if lo + 64 > ap + n:  # too short for a whole beat: widen the descriptor's range
                lo = ap // 64 * 64
            window = ErrorWindow(axi_base + lo, 64, resp, reads=direction == "c2h",
                                 writes=direction == "h2c")  # fmt: skip
            d.mem.windows = [window]
        else:
            d.mem.windows = []
        d.mem.answered.clear()
        sb.begin_step()
        if direction == "h2c":
            segs = [Segment(ha + hp, axi_base + ap, n) for hp, ap, n in descs]
            res = await h.run(h.h2c, segs, timeout_ns=5e6)
        else:
            segs = [Segment(axi_base + ap, ha + hp, n) for hp, ap, n in descs]
            res = await h.run(h.c2h, segs, timeout_ns=5e6)
        d.mem.windows = []
        what = f"seed {seed} step {step}: {direction} {len(descs)} desc {resp}"
        assert not res.timed_out and not res.busy, f"{what}: {res}"
        hit = bool(d.mem.answered)
        assert hit == (resp is not None), f"{what}: the window answered {d.mem.answered}"
        if resp is not None:
            bits = AxiErr.SLAVE if resp == AxiError.SLVERR else AxiErr.DECODE
            field = regs.STAT_WRITE_ERROR if direction == "h2c" else regs.STAT_READ_ERROR
            got = field.get(res.status)
            ch = h.h2c if direction == "h2c" else h.c2h
            assert got == bits, f"{what}: {regs.describe_status(res.status, ch.direction)}"
            assert res.completed_count < len(descs), f"{what}: count {res.completed_count}"
        else:
            check_ok(res, len(descs), what)
        count = res.completed_count
        for i, (hp, ap, n) in enumerate(descs):
            state = "done" if i < count else "maybe"
            if direction == "h2c":
                sb.copy("host", hp, "axi", ap, n, state)
            else:
                sb.copy("axi", ap, "host", hp, n, state)
        if window is not None and direction == "h2c":
            sb.hole("axi", window.base - axi_base, window.size)  # never written
        for name, actual in (("host", host[0:host_size]), ("axi", d.mem.read(axi_base, axi_size))):
            msg = sb.check(name, actual)
            assert msg is None, f"{what}: {msg}"
        sb.end_step()
    assert sum(1 for _, r in plan if r is not None) >= 4


async def moving(d: DropIn, limit: int = 100_000) -> None:
    """Until both directions move data on the AXI4 master (a write beat of H2C and a read
    beat of C2H taken) and a read is outstanding at the hard IP (bounded)."""
    dut, wrote, read = d.tb.dut, False, False
    for _ in range(limit):
        await RisingEdge(d.clk)
        wrote = wrote or bool(int(dut.m_axi_wvalid.value) and int(dut.m_axi_wready.value))
        read = read or bool(int(dut.m_axi_rvalid.value) and int(dut.m_axi_rready.value))
        if wrote and read and any(d.tb.dev.active_request):
            return
    raise AssertionError(f"no data moving with reads outstanding: AXI writes {wrote}, reads {read}")


async def bridge_reset(d: DropIn, cycles: int) -> None:
    """dma_bridge_resetn low for ``cycles`` clocks, then until axi_aresetn is released."""
    dut = d.tb.dut
    dut.dma_bridge_resetn.value = 0
    for _ in range(cycles):
        await RisingEdge(d.clk)
    dut.dma_bridge_resetn.value = 1
    for _ in range(1000):
        await RisingEdge(d.clk)
        if int(dut.axi_aresetn.value):
            return
    raise AssertionError("axi_aresetn still low after the reset")


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_dma_bridge_reset_mid_transfer(dut):
    """dma_bridge_resetn in the middle of an H2C and a C2H (misuse: PG195 asks to stop
    transfers first, but the engine must survive it), held 60 clocks (reads still
    outstanding at the hard IP when it ends), 1 us and 3 us. The user's memory is reset
    by axi_aresetn. Nothing of the aborted transfers reaches the next ones: no tag the
    hard IP still tracks is used again (the hard-IP model stops on one), no late write
    lands in the aborted C2H's host buffer, and the next H2C and C2H on the same
    channels, started at once, are byte-exact with their guard bytes, though the aborted
    C2H's source is still in the AXI memory."""
    d = await boot(dut)
    tb, h = d.tb, d.h
    n = 5000
    for k, cycles in enumerate((60, 125, 400)):
        old, new, back = (pattern(n, 81 + 4 * k + j) for j in range(3))
        # (the aborted H2C is long, so it still reads when the C2H moves data)
        src = tb.alloc_host(0x8000)
        src[0:0x7000] = pattern(0x7000, 80 + 4 * k)
        d.mem.write(0x8000, old)
        aborted = tb.alloc_host(0x2000)
        aborted[:] = bytes([GUARD]) * 0x2000
        sa, aa = src.get_absolute_address(0), aborted.get_absolute_address(0)
        if cycles == 60:
            # three of the H2C's reads stay unanswered across the reset: their tags are
            # still in flight at the hard IP when the next transfers start
            tb.faults.add(FaultRule("hold", target="host", skip=2, count=3))
        await h.h2c.start(h.place_chain([Segment(sa, 0x100, 0x7000)]), interrupt=False)
        await h.c2h.start(h.place_chain([Segment(0x8000, aa + 7, n)]), interrupt=False)
        await moving(d)
        assert any(tb.dev.active_request), "no read outstanding at the reset"
        await bridge_reset(d, cycles)
        held = [tag for tag, req in enumerate(tb.dev.active_request) if req is not None]
        assert held or cycles != 60, "the reads ended during the reset"
        seen = bytes(aborted[:])
        # the next transfers, each way, with new data in the same places
        src[0:n] = new
        d.mem.write(0x100 + n, bytes([GUARD]) * 64)
        res = await h.run(h.h2c, [Segment(sa, 0x100, n)], timeout_ns=5e6)
        check_ok(res, 1, f"H2C after a {cycles}-clock reset")
        assert d.mem.read(0x100, n + 64) == new + bytes([GUARD]) * 64, "H2C after the reset"
        d.mem.write(0x8000, back)
        dst = tb.alloc_host(0x2000)
        dst[:] = bytes([GUARD]) * 0x2000
        da = dst.get_absolute_address(0)
        res = await h.run(h.c2h, [Segment(0x8000, da + 5, n)], timeout_ns=5e6)
        check_ok(res, 1, f"C2H after a {cycles}-clock reset")
        got = bytes(dst[:])
        want = bytes([GUARD]) * 5 + back + bytes([GUARD]) * (0x2000 - 5 - n)
        if got != want:
            bad = [i for i in range(len(got)) if got[i] != want[i]]
            stale = got[5 : 5 + n] == old
            raise AssertionError(
                f"C2H after a {cycles}-clock reset: byte {bad[0] - 5} wrong"
                f"{' (the aborted C2H source)' if stale else ''}, {len(bad)} bytes in all"
            )
        assert bytes(aborted[:]) == seen, "a write landed in the aborted C2H's buffer"
        if cycles == 60:
            # the next transfers ran beside the three reads still in flight
            live = [tag for tag, req in enumerate(tb.dev.active_request) if req is not None]
            assert len(live) == 3 and set(live) <= set(held), f"in flight: {live} of {held}"
            assert await tb.faults.release_held() >= 3  # (completions of the three reads)
            tb.faults.clear()
            await Timer(5, "us")
            assert not any(tb.dev.active_request), "the held reads' completions were lost"
            dead = engine(dut).rc_rx_inst.dead_reg.value
            assert int(dead) == 0, f"tags still kept out of use after their completions: {dead}"


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_status_write_keeps_events(dut):
    """The channel status register (0x40) is RW1C (PG195): user logic writing 0 to H2C
    0's status through s_axil back to back (AW and W held valid, B always ready: a write
    whenever the port takes one) while 24 one-descriptor chains end clears nothing, and
    no event is lost to a write in the same clock: each chain ends with
    descriptor_stopped and descriptor_completed logged and a count of 1. The host's
    reads of the same register through the BAR are answered throughout, and a write of
    ones clears exactly the bits written."""
    d = await boot(dut)
    tb, h = d.tb, d.h
    status_reg = h.h2c.reg(regs.CH_STATUS)
    writes = 0

    async def count_writes() -> None:
        nonlocal writes
        while True:
            await RisingEdge(d.clk)
            writes += int(dut.s_axil_bvalid.value)

    dut.s_axil_awaddr.value = status_reg
    dut.s_axil_awprot.value = 0
    dut.s_axil_wdata.value = 0
    dut.s_axil_wstrb.value = 0xF
    dut.s_axil_bready.value = 1
    dut.s_axil_awvalid.value = 1
    dut.s_axil_wvalid.value = 1
    counter = cocotb.start_soon(count_writes())
    n = 64
    chains = 24
    data = pattern(n * chains, 91)
    src = tb.alloc_host(len(data))
    src[0 : len(data)] = data
    sa = src.get_absolute_address(0)
    logged = int(Stat.DESC_STOPPED | Stat.DESC_COMPLETED)
    for k in range(chains):
        before = writes
        chain = h.place_chain([Segment(sa + k * n, 0x2000 + k * n, n)])
        await h.h2c.start(chain, interrupt=False)
        status = int(Stat.BUSY)
        for _ in range(200):
            status = await tb.dma_read32(status_reg)
            if not status & Stat.BUSY:
                break
        assert not status & Stat.BUSY, f"chain {k}: still busy, status {status:#x}"
        assert status & logged == logged, f"chain {k}: status {status:#x} lost an event"
        assert await h.h2c.completed_count() == 1
        assert writes > before + 10, f"chain {k}: the user wrote {writes - before} times"
        await h.h2c.write32(h.h2c.reg(regs.CH_CONTROL), 0)
    dut.s_axil_awvalid.value = 0
    dut.s_axil_wvalid.value = 0
    for _ in range(10):
        await RisingEdge(d.clk)
    counter.cancel()
    assert d.mem.read(0x2000, len(data)) == data
    # a write of ones clears the bits written, and only those
    user = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), d.clk, dut.axi_aresetn, False)
    assert await tb.dma_read32(status_reg) & logged == logged
    await user.write_dword(status_reg, int(Stat.DESC_STOPPED))
    assert await tb.dma_read32(status_reg) & logged == int(Stat.DESC_COMPLETED)


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_legacy_interrupts(dut):
    """With MSI and MSI-X off the drop-in interrupts on INTA (its Interrupt Pin): a user
    request is acknowledged twice, as PG195 says (once the Assert is sent; once it has
    fallen and the Deassert is sent), and may not interrupt again before the second; two
    requests share the line (no Deassert until both fell); a channel's run wakes a
    handler that masks it, as Xilinx's driver does, and its data is in host memory when
    the handler runs; ``msi_enable`` and ``msix_enable`` stay low."""
    tb = TB(dut, hip=dut.hip)
    await tb.init(irq="intx")
    d = DropIn(Harness(tb))
    h = d.h
    assert await tb.pci.config_read_byte(0x3D) == 1, "Interrupt Pin: INTA"
    assert int(dut.msi_enable.value) == 0 and int(dut.msix_enable.value) == 0
    acks = [0] * 4

    async def count_acks() -> None:
        while True:
            await RisingEdge(d.clk)
            v = dut.usr_irq_ack.value
            if v.is_resolvable:
                for b in range(4):
                    acks[b] += int(v) >> b & 1

    cocotb.start_soon(count_acks())
    line = lambda: tb.intx.level(tb.intx_line)  # noqa: E731
    await tb.dma_write32(regs.irq_reg(regs.IRQ_USER_INT_EN_W1S), 0b0110)

    async def until(what, ns: int = 20_000) -> None:
        for _ in range(ns // 50):
            if what():
                return
            await Timer(50, "ns")
        raise AssertionError("timed out waiting")

    dut.usr_irq_req.value = 0b0010
    await until(lambda: acks[1] == 1 and line())
    assert tb.dev.intx_messages == 1
    dut.usr_irq_req.value = 0b0110  # request 2 on the line already up: its first ack
    await until(lambda: acks[2] == 1)
    assert tb.dev.intx_messages == 1, "the line was already up"
    dut.usr_irq_req.value = 0b0100  # 1 falls: its second ack, the line held by 2
    await until(lambda: acks[1] == 2)
    await Timer(1_000, "ns")
    assert line() and tb.dev.intx_messages == 1
    dut.usr_irq_req.value = 0b0000  # 2 falls: Deassert, then its second ack
    await until(lambda: acks[2] == 2 and not line())
    assert tb.dev.intx_messages == 2
    assert acks == [0, 2, 2, 0], acks
    # a channel on INTx: the handler reads the pending channel interrupts, masks them
    # (W1C) so the line falls, and wakes the channel; the data is already in place
    seen: list[bytes] = []
    dst = tb.alloc_host(0x1000)
    d.mem.write(0x100, pattern(0x300, 3))

    async def handler() -> None:
        pend = await tb.dma_read32(regs.irq_reg(regs.IRQ_CHAN_INT_PEND))
        if pend:
            await tb.dma_write32(regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1C), pend)
            seen.append(bytes(dst[0:0x300]))
            for ch in (h.h2c, h.c2h):
                if pend & ch.irq_bit:
                    ch.interrupt()

    tb.intx_handlers.append(handler)
    before = tb.intx_count
    res = await h.run(h.c2h, [Segment(0x100, dst.get_absolute_address(0), 0x300)], timeout_ns=5e6)
    check_ok(res, 1, "C2H on INTx")
    assert seen == [pattern(0x300, 3)], "the handler ran before the data landed"
    await until(lambda: not line())
    assert tb.intx_count == before + 1 and tb.intx_storms == 0
    assert tb.dev.intx_messages == 4
