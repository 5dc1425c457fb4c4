"""cocotb tests of the PCIe-to-DMA bypass master (PG195 "Host-to-Card Bypass Master",
``m_axib_*``) on the XDMA drop-in: host reads and writes to the bypass BAR become AXI4
bursts on a cocotbext-axi ``AxiRam`` standing for the user's design. The plan builds the
drop-in with the bypass BAR (Vivado's axist_bypass_en) of 64 KiB whose first byte is AXI
address 0x40000 (pciebar2axibar_axist_bypass), three times: with the 32-bit BARs (BAR0,
1, 2), with 64-bit ones, prefetchable, and MSI-X (BAR0, 2, 4), and with no AXI4-Lite
master and a 64-bit DMA BAR (BAR0, 2), so that every test also holds where the BARs move.

What the tests hold the RTL to, TLP by TLP (taken from the link, as the host sent it):
one INCR burst of full-width beats per write TLP, from its DWORD address, with the TLP's
byte enables on the strobes; read data in chunks that end on max-payload-size
boundaries, one burst and one completion per chunk; every byte the host wrote read back
and in the memory, and no byte beside it touched. SLVERR on a read answers Completer
Abort, DECERR Unsupported Request (PG195's bridge), completions already sent stand, and a
write the slave refuses changes nothing and holds nothing up. The protocol checker sees
every completion.
"""

from __future__ import annotations

import random

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge, Timer, with_timeout
from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteRam, AxiRam
from cocotbext.pcie.core.caps import PciCapId
from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpAttr, TlpType

from cuda_model.hostreg import Registration
from cuda_model.runtime import cudaMemcpyKind
from driver_model.desc import Segment
from driver_model.platform import IORESOURCE_MEM_64, IORESOURCE_PREFETCH
from driver_model.regs import BarLayout, Target, block_base
from driver_model.xdma import identify_bars, probe_engines
from tb.config.build import current_profile
from tb.env.axi_mem import AxiError, Burst, ErrorAxiRam, ErrorWindow
from tb.env.harness import Harness, check_ok, setup
from tb.env.link import DOWN, UP
from tb.env.streams import clock_and_reset

MEM_SIZE = 1 << 20
INCR = 1

_READS = (TlpType.MEM_READ, TlpType.MEM_READ_64)
_WRITES = (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64)
_COMPLETIONS = (TlpType.CPL, TlpType.CPL_DATA)


class Rig:
    """The drop-in with an ``ErrorAxiRam`` on its bypass master, the bypass BAR's window,
    and the TLPs to and from the FPGA."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.tb = tb = h.tb
        dut = tb.dut
        clk, rst, level = clock_and_reset(dut)
        self.mem = ErrorAxiRam(dut, clk, rst, level, MEM_SIZE, prefix="m_axib")
        extra = tb.profile.extra
        self.bar_size = 1 << extra.get("AXIB_BAR_ADDR_WIDTH", 20)
        self.axi_base = extra.get("AXIB_AXI_BASE", 0)
        assert tb.bars.axib is not None, "the build has no bypass BAR"
        self.bar = tb.pci.bar_window[tb.bars.axib]
        self.bar_addr = tb.pci.bar_addr[tb.bars.axib]
        self.width = len(dut.m_axib_wdata) // 8
        self.mps = tb.profile.mps
        # requests to the bypass BAR, and the FPGA's completions, as on the link
        self.requests: list[Tlp] = []
        self.completions: list[Tlp] = []
        tb.links.add_observer(self._observe, links=("fpga",))

    def _observe(self, link: str, direction: str, tlp: Tlp) -> None:
        if link != "fpga":
            return
        if direction == DOWN and tlp.fmt_type in (*_READS, *_WRITES):
            if self.bar_addr <= tlp.address < self.bar_addr + self.bar_size:
                self.requests.append(tlp)
        elif direction == UP and tlp.fmt_type in _COMPLETIONS:
            self.completions.append(tlp)

    async def write(self, offset: int, data: bytes) -> None:
        """A host write to the bypass BAR (posted: returns once sent)."""
        await with_timeout(self.bar.write(offset, data), 200, "us")

    async def read(self, offset: int, length: int) -> bytes:
        """A host read of the bypass BAR."""
        return await with_timeout(self.bar.read(offset, length), 200, "us")

    def axi(self, offset: int) -> int:
        """The AXI address of a BAR offset."""
        return self.axi_base + offset

    def reset_log(self) -> None:
        self.requests.clear()
        self.completions.clear()
        self.mem.bursts.clear()
        self.mem.wstrbs.clear()

    def expected(self) -> tuple[list[Burst], list[int]]:
        """The bursts and write strobes the logged requests must have become."""
        bursts: list[Burst] = []
        strobes: list[int] = []
        lanes = self.width // 4
        size = self.width.bit_length() - 1
        for t in self.requests:
            dw_addr = (t.address - self.bar_addr) & ~3
            if t.fmt_type in _WRITES:
                if t.length == 1 and t.first_be == 0:
                    continue  # a zero-length write reaches no slave
                lane = (dw_addr // 4) % lanes
                beats = (lane + t.length + lanes - 1) // lanes
                bursts.append(Burst(True, self.axi(dw_addr), beats - 1, size, INCR))
                be = [0xF] * t.length
                be[-1] = t.last_be if t.length > 1 else t.first_be
                be[0] = t.first_be
                lane_be = [0] * lanes * beats
                for i, b in enumerate(be):
                    lane_be[lane + i] = b
                for k in range(beats):
                    strobes.append(sum(lane_be[k * lanes + j] << (4 * j) for j in range(lanes)))
            else:
                left = t.length
                while left:
                    room = (self.mps - dw_addr % self.mps) // 4
                    n = min(left, room)
                    lane = (dw_addr // 4) % lanes
                    beats = (lane + n + lanes - 1) // lanes
                    bursts.append(Burst(False, self.axi(dw_addr), beats - 1, size, INCR))
                    dw_addr += 4 * n
                    left -= n
        return bursts, strobes

    def check_bursts(self, what: str) -> None:
        bursts, strobes = self.expected()
        assert self.mem.bursts == bursts, f"{what}: bursts {self.mem.bursts} != {bursts}"
        assert self.mem.wstrbs == strobes, f"{what}: strobes {self.mem.wstrbs} != {strobes}"

    def check_read_completions(self, what: str) -> None:
        """Each read got one successful completion per chunk, the chunks ending on max
        payload size boundaries."""
        for t in [t for t in self.requests if t.fmt_type in _READS]:
            cpls = [c for c in self.completions if c.tag == t.tag]
            assert all(c.status == CplStatus.SC for c in cpls), f"{what}: {cpls}"
            addr, left, sizes = (t.address - self.bar_addr) & ~3, t.length, []
            while left:
                sizes.append(min(left, (self.mps - addr % self.mps) // 4))
                addr, left = addr + 4 * sizes[-1], left - sizes[-1]
            assert [c.length for c in cpls] == sizes, f"{what}: completions {cpls}"
            for c in cpls:
                self.completions.remove(c)


async def boot(dut) -> Rig:
    return Rig(await setup(dut, hip=dut.hip))


def _pieces(width: int, mps: int, mrrs: int) -> list[tuple[int, int]]:
    """(offset, length) of the accesses: every byte offset of a bus word and into the next
    with the short lengths, and lengths around the bus width, the max payload size and the read
    request size from chosen offsets, a 4 KiB crossing and a whole page."""
    out = [(off, n) for off in range(width + 5) for n in (1, 2, 3, 4, 5, 7)]
    longs = [
        width - 1,
        width,
        width + 1,
        2 * width + 3,
        mps - 1,
        mps,
        mps + 1,
        2 * mps + 5,
        mrrs + 7,
        1500,
    ]
    for off in (0, 1, 3, 4, width - 1, width + 2, mps - 4, 0x1000 - 9):
        out += [(off, n) for n in longs]
    out += [(0x3000, 4096), (0x2FF0 + 3, 64)]
    return out


@cocotb.test()
async def test_every_size_and_offset(dut):
    """Writes and reads of every short length at every byte offset of two bus words, and
    longer ones around the bus width, MPS and MRRS: the data round-trips, the memory
    holds it and nothing beside it, and each TLP became the bursts it should."""
    rig = await boot(dut)
    rng = random.Random(34)
    assert rig.bar_addr is not None and rig.tb.pci.bar_size[rig.tb.bars.axib] == rig.bar_size
    model = bytearray(rng.randbytes(rig.bar_size))
    rig.mem.write(rig.axi(0), bytes(model))
    for off, n in _pieces(rig.width, rig.mps, rig.tb.profile.mrrs):
        what = f"{n} bytes at {off:#x}"
        data = rng.randbytes(n)
        rig.reset_log()
        await rig.write(off, data)
        model[off : off + n] = data
        got = await rig.read(off, n)
        assert got == data, f"{what}: read back {got.hex()} != {data.hex()}"
        lo, hi = max(0, off - rig.width), min(rig.bar_size, off + n + rig.width)
        mem = rig.mem.read(rig.axi(lo), hi - lo)
        assert mem == model[lo:hi], f"{what}: memory around it differs"
        rig.check_bursts(what)
        rig.check_read_completions(what)
    assert not rig.mem.answered


@cocotb.test()
async def test_reads_wait_for_posted_writes(dut):
    """Writes sent back to back and a read right behind them: the read returns every
    write's data (a read never passes a posted write), and the writes stream without
    waiting for each other's B responses."""
    rig = await boot(dut)
    rng = random.Random(7)
    blobs = [(i * 0x88 + 0x100, rng.randbytes(0x40 + i)) for i in range(12)]
    for off, data in blobs:
        await rig.write(off, data)
    for off, data in blobs:
        assert await rig.read(off, len(data)) == data, f"write at {off:#x} lost"
    writes = [b for b in rig.mem.bursts if b.write]
    assert len(writes) == len(blobs)


@cocotb.test()
async def test_slverr_and_decerr(dut):
    """A read the slave answers with SLVERR completes with Completer Abort, DECERR with
    Unsupported Request; in a read of several chunks the chunks before the error
    complete and none after; a refused write changes nothing, and the next accesses
    work."""
    rig = await boot(dut)
    mps = rig.mps
    rig.mem.write(rig.axi(0), bytes(range(256)) * (0x4000 // 256))
    rig.mem.windows = [
        ErrorWindow(rig.axi(0x1100), 0x100, AxiError.SLVERR, writes=False),
        ErrorWindow(rig.axi(0x2100), 0x100, AxiError.DECERR, writes=False),
        ErrorWindow(rig.axi(0x3100), 0x100, AxiError.SLVERR, reads=False),
    ]
    # (the windows start off 4 KiB boundaries: a read from a chunk before one is one request)
    for off, status in ((0x1100, CplStatus.CA), (0x2100, CplStatus.UR)):
        for start, n in ((off + 8, 16), (off - mps, 2 * mps)):
            rig.reset_log()
            try:
                await rig.read(start, n)
            except Exception as e:  # cocotbext-pcie: "Unsuccessful completion"
                assert "Unsuccessful" in str(e)
            else:
                raise AssertionError(f"read at {start:#x} succeeded")
            (req,) = rig.requests
            cpls = [c for c in rig.completions if c.tag == req.tag]
            good = (off - start) // mps if start < off else 0
            assert [c.status for c in cpls] == [CplStatus.SC] * good + [status], cpls
            assert cpls[-1].length == 0
            assert cpls[-1].byte_count == n - good * mps
    before = rig.mem.read(rig.axi(0x3100), 0x100)
    await rig.write(0x3110, b"\xee" * 32)
    assert await rig.read(0x3400, 8) == rig.mem.read(rig.axi(0x3400), 8)
    assert rig.mem.read(rig.axi(0x3100), 0x100) == before
    assert (True, AxiError.SLVERR) in rig.mem.answered
    await rig.write(0x3800, b"\x5a" * 40)
    assert await rig.read(0x3800, 40) == b"\x5a" * 40


@cocotb.test()
async def test_beside_the_dma_bar(dut):
    """Reads of the bypass BAR and of the DMA registers at once: each gets its own
    completions (the completer streams merged a TLP at a time), and the engine's
    identifier reads right while long bypass reads are in flight."""
    rig = await boot(dut)
    rng = random.Random(3)
    data = rng.randbytes(0x2000)
    await rig.write(0, data)
    dma = rig.tb.pci.bar_window[rig.tb.bars.dma]
    ident = await dma.read_dword(block_base(Target.H2C))

    async def bypass_reads() -> None:
        for k in range(4):
            assert await rig.read(k * 0x800, 0x800) == data[k * 0x800 : (k + 1) * 0x800]

    async def register_reads() -> None:
        for _ in range(40):
            got = await with_timeout(dma.read_dword(block_base(Target.H2C)), 100, "us")
            assert got == ident

    tasks = [cocotb.start_soon(bypass_reads()), cocotb.start_soon(register_reads())]
    for t in tasks:
        await t


@cocotb.test()
async def test_bar_layout(dut):
    """The BARs where the build's PCIe BARs options put them (PG195 "Target Bridge"), in
    the configuration space as the host reads it: 64-bit ones typed so with the next BAR
    their upper half, prefetchable ones marked, the MSI-X table's BIR the DMA BAR. A
    driver finds them as libxdma does; each space answers at its BAR (the RTL routes on
    the same BAR ids): the AXI4-Lite master's, the DMA registers (a chain each way, its
    interrupt an MSI-X one when built with it) and the bypass master's."""
    x = current_profile().extra
    h = await setup(dut, irq="msix" if x.get("MSIX") else "msi", hip=dut.hip)
    tb = h.tb
    bars = tb.bars
    assert bars == BarLayout.vivado(
        axil_master=bool(x.get("AXIL_MASTER", 1)),
        axil_master_64bit=bool(x.get("AXIL_MASTER_64BIT")),
        dma_64bit=bool(x.get("PCIE_64BIT")),
        dma_prefetchable=bool(x.get("PCIE_PREFETCHABLE")),
        axib=True,
        axib_64bit=bool(x.get("AXIB_64BIT")),
        axib_prefetchable=bool(x.get("AXIB_PREFETCHABLE")),
    )
    for b in (bars.user, bars.dma, bars.axib):
        if b is None:
            continue
        lo = await tb.pci.config_read_dword(0x10 + 4 * b)
        assert lo & 1 == 0, f"BAR{b} is not a memory BAR"
        assert (lo >> 1 & 3) == (2 if b in bars.wide else 0), f"BAR{b} type {lo:#x}"
        assert bool(lo & 8) == (b in bars.prefetchable), f"BAR{b} prefetchable bit {lo:#x}"
        addr = tb.pci.bar_addr[b]
        assert lo & ~0xF == addr & 0xFFFFFFF0
        if b in bars.wide:
            assert await tb.pci.config_read_dword(0x10 + 4 * (b + 1)) == addr >> 32
    if x.get("MSIX"):
        cap = await _find_cap(tb, PciCapId.MSIX)
        assert cap is not None, "no MSI-X capability"
        table = await tb.pci.config_read_dword(cap + 4)
        pba = await tb.pci.config_read_dword(cap + 8)
        assert table & 7 == bars.dma and pba & 7 == bars.dma, (table, pba)
    # the driver's view: lengths, flags, and libxdma's identification
    p = h.platform
    for b in range(6):
        f = p.pci_resource_flags(b)
        assert bool(f & IORESOURCE_MEM_64) == (b in bars.wide)
        assert bool(f & IORESOURCE_PREFETCH) == (b in bars.prefetchable)
    assert await identify_bars(p) == bars
    assert len(await probe_engines(p)) == 2
    # the AXI4-Lite master answers at its BAR; without one (axilite_master_en off) the
    # DMA BAR is BAR0 and m_axil_* stays idle
    clk, rst, level = clock_and_reset(dut)
    if bars.user is not None:
        axil = AxiLiteRam(AxiLiteBus.from_prefix(dut, "m_axil"), clk, rst, level, 1 << 12)
        await p.iowrite32(bars.user, 0x40, 0x5EB0A11C)
        assert await p.ioread32(bars.user, 0x40) == 0x5EB0A11C
        assert axil.read(0x40, 4) == (0x5EB0A11C).to_bytes(4, "little")
    else:
        assert bars.dma == 0 and p.pci_resource_len(0) == 64 << 10
        awake = [0]

        async def watch_axil() -> None:
            while True:
                await RisingEdge(clk)
                awake[0] += int(dut.m_axil_awvalid.value) + int(dut.m_axil_arvalid.value)

        watcher = cocotb.start_soon(watch_axil())
    # a chain each way through the DMA BAR, to the AXI memory and back
    mem = AxiRam(AxiBus.from_prefix(dut, "m_axi"), clk, rst, level, size=1 << 16)
    data = random.Random(7).randbytes(3000)
    src, dst = tb.alloc_host(4096), tb.alloc_host(4096)
    src[0:3000] = data
    sa, da = src.get_absolute_address(0), dst.get_absolute_address(0)
    check_ok(await h.run(h.h2c, [Segment(sa, 0x100, 3000)], timeout_ns=5e6), 1, "H2C")
    assert mem.read(0x100, 3000) == data
    check_ok(await h.run(h.c2h, [Segment(0x100, da, 3000)], timeout_ns=5e6), 1, "C2H")
    assert bytes(dst[0:3000]) == data
    # the bypass master at its BAR
    rig = Rig(h)
    await rig.write(0x20, b"bar layout")
    assert await rig.read(0x20, 10) == b"bar layout"
    assert rig.mem.read(rig.axi(0x20), 10) == b"bar layout"
    if bars.user is None:
        watcher.cancel()
        assert awake[0] == 0, "m_axil_* moved with no AXI4-Lite master"


async def _find_cap(tb, cap_id: int) -> int | None:
    """The offset of capability ``cap_id`` in the FPGA function's list, read as a host does."""
    ptr = (await tb.pci.config_read_dword(0x34)) & 0xFC
    for _ in range(48):
        if not ptr:
            return None
        head = await tb.pci.config_read_dword(ptr)
        if head & 0xFF == cap_id:
            return ptr
        ptr = (head >> 8) & 0xFC
    return None


@cocotb.test()
async def test_gpu_copy_engine_through_the_bypass_bar(dut):
    """cudaMemcpyAsync from GPU memory into the bypass BAR registered with
    cudaHostRegister(IoMemory), and back: the GPU's MPS-sized writes and MRRS-sized reads
    become bursts and completions as the host's do, the bytes land in the user's memory
    at the BAR's AXI address and come back exact, nothing beside them touched."""
    rig = await boot(dut)
    tb, rt = rig.tb, rig.tb.cuda
    va, n, off = 0x7F00_0200_0000, 24 << 10, 0x1000 + 12
    pages = [rig.bar_addr + i for i in range(0, rig.bar_size, 4096)]
    rt.registered.add(Registration(va, rig.bar_size, pages, io=True, name="bypass BAR"))
    data = np.random.default_rng(9).integers(0, 256, n, dtype=np.uint8)
    dev, back = rt.cudaMalloc(n), rt.cudaMalloc(n)
    tb.gpu.write_va(dev, data)
    rig.mem.write(rig.axi(0), b"\xee" * (off + n + 64))
    rig.reset_log()
    s = rt.cudaStreamCreate()
    rt.cudaMemcpyAsync(va + off, dev, n, cudaMemcpyKind.cudaMemcpyDefault, s)
    rt.cudaMemcpyAsync(back, va + off, n, cudaMemcpyKind.cudaMemcpyDefault, s)
    await rt.stream_synchronize(s)
    got = rig.mem.read(rig.axi(0), off + n + 64)
    assert got == b"\xee" * off + data.tobytes() + b"\xee" * 64
    assert bytes(tb.gpu.read_va(back, n)) == data.tobytes()
    gpu_id = tb.gpu_ep.pcie_id
    assert rig.requests and all(t.requester_id == gpu_id for t in rig.requests)
    writes = [t for t in rig.requests if t.fmt_type in _WRITES]
    reads = [t for t in rig.requests if t.fmt_type in _READS]
    assert (
        max(t.length * 4 for t in writes) == rig.mps
        and sum(t.get_be_byte_count() for t in writes) == n
    )
    assert max(t.length * 4 for t in reads) <= tb.profile.mrrs
    rig.check_bursts("the GPU's copies")
    rig.check_read_completions("the GPU's copies")


@cocotb.test()
async def test_gpu_data_then_doorbell_in_order(dut):
    """One kernel's data stores into the bypass BAR, then its 32-bit doorbell, while the
    card's link is congested (its receiver stalls 3 us: credits run out, writes wait in
    the switch). With relaxed ordering off (NVIDIA's default) PCIe keeps posted writes
    in order: the doorbell reaches the card after every data write. With the model's
    knob on, the GPU's writes carry RO (Device Control allows it), and a fabric that
    lets RO writes pass (TB.set_relaxed_passing, PCIe's rules allow it) delivers the
    doorbell before data still waiting: what can pass what. The data lands either way."""
    rig = await boot(dut)
    tb, rt = rig.tb, rig.tb.cuda
    va = 0x7F00_0300_0000
    pages = [rig.bar_addr + i for i in range(0, rig.bar_size, 4096)]
    rt.registered.add(Registration(va, rig.bar_size, pages, io=True, name="bypass BAR"))
    rt.kernel_coalesce = 128
    n, bell = 8 << 10, 0x8000
    try:
        tb.set_relaxed_passing(False)
        passing = True
    except ValueError:
        passing = False  # (the exact model's switches: RO changes nothing there)

    async def produce(k, value: int) -> None:
        await k.store(va, np.full(n // 4, value, dtype="<u4"))
        await k.st32(va + bell, value)

    for relaxed in (False, True):
        rt.relaxed_ordering = relaxed
        if passing:
            tb.set_relaxed_passing(relaxed)
        rig.reset_log()
        tb.faults.stall.start(3_000)
        rt.launch(produce, 1, 32, 0x1000 + relaxed)
        await rt.synchronize()
        for _ in range(200):
            if len(rig.requests) == n // 128 + 1:
                break
            await Timer(1, "us")
        addrs = [t.address - rig.bar_addr for t in rig.requests]
        assert len(addrs) == n // 128 + 1, len(addrs)
        if relaxed and passing:
            assert addrs[-1] != bell, "with RO passing the doorbell overtook waiting data"
        else:
            assert addrs[-1] == bell, "the doorbell came last"
        assert rig.mem.read(rig.axi(0), n) == np.full(n // 4, 0x1000 + relaxed, "<u4").tobytes()
        # the GPU's writes carry RO as it sent them (the switch passes the attribute on)
        assert all(bool(t.attr & TlpAttr.RO) == relaxed for t in rig.requests)
    if passing:
        tb.set_relaxed_passing(False)
