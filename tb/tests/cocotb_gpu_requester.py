"""The GPU as a PCIe requester (tb/env/gpu_requester.py): kernels and copy engines of the
CUDA model reach the card's BARs and host memory as TLPs from the GPU, in simulated time.

The first tests put ranges straight into the runtime's registration table (a process
range, the bus address of each page: what cudaHostRegister makes); the last goes the
whole way, from a mapping of the card's BAR through cudaHostRegister.
"""

from __future__ import annotations

import errno

import cocotb
import numpy as np
from cocotb.triggers import Timer
from cocotb.utils import get_sim_time

from cuda_model import CudaError, CudaRuntime, cudaError
from cuda_model.device import KernelContext
from cuda_model.hostreg import Registration
from cuda_model.hostreg import cudaHostRegisterIoMemory as IO
from cuda_model.runtime import cudaMemcpyKind
from driver_model import regs, uapi
from driver_model.devmem import mmap_dev_mem, mmap_resource
from driver_model.host import UserProcess
from driver_model.picoevb import ioctl
from driver_model.regs import Target
from tb.apps.programs import MARK_DONE, MARK_FIRST, MARK_LAST, AppEnv, run_demo
from tb.debug.records import tlp_label
from tb.debug.report import summarize
from tb.debug.trace import enable_trace
from tb.env.faults import UpRule
from tb.env.harness import Surface, bring_up, segments, setup
from tb.env.link import DOWN, MEM_READS, MEM_WRITES, UP
from tb.env.userbuf import expect_errno

DEFAULT = cudaMemcpyKind.cudaMemcpyDefault
USER_VA = 0x7F00_0000_0000  # where the process mapped the card's user BAR
DMA_VA = 0x7F00_0010_0000  # ... and its DMA BAR
HOST_VA = 0x7F00_0100_0000  # ... and ordinary pinned memory


def register(tb, va: int, bus: int, size: int, name: str, io: bool = True) -> int:
    pages = [bus + i for i in range(0, size, 4096)]
    tb.cuda.registered.add(Registration(va, size, pages, io=io, name=name))
    return va


def gpu_requests(tb, link: str = "gpu", direction: str = UP) -> list[tuple[str, int, int, int]]:
    """(MWr/MRd, address, bytes, tag) of every request of the GPU, as ``link`` carries it
    in ``direction`` (by default as the GPU sends them; ``"fpga", DOWN``: as the card
    receives them)."""
    seen: list[tuple[str, int, int, int]] = []
    gpu_id = tb.gpu_ep.pcie_id

    def observe(on: str, way: str, tlp) -> None:
        if on == link and way == direction and tlp.requester_id == gpu_id:
            n = tlp.get_be_byte_count()
            if tlp.fmt_type in MEM_WRITES:
                seen.append(("MWr", tlp.address, n, tlp.tag))
            elif tlp.fmt_type in MEM_READS:
                zero = tlp.length == 1 and tlp.first_be == 0  # a flush
                seen.append(("MRd", tlp.address, 0 if zero else n, tlp.tag))

    tb.links.add_observer(observe)
    return seen


async def arrived(seen: list, count: int) -> None:
    """Until ``count`` requests were seen (bounded): a kernel's posted writes may still be
    on their way when its stream is done, as on hardware."""
    for _ in range(1000):
        if len(seen) >= count:
            return
        await Timer(100, "ns")
    raise AssertionError(f"{len(seen)} of {count} requests arrived: {seen}")


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_a_kernel_writes_and_reads_the_card_registers(dut):
    """A kernel's 32-bit st.mmio to the card's LED register is one 1-DW MWr from the GPU,
    the host reads the value back; its ld.mmio is one MRd whose completion brings it; the
    trace names both by the kernel and the registered range."""
    h = await setup(dut)
    tb, rt = h.tb, h.tb.cuda
    records: list[dict] = []
    enable_trace(tb, records.append)
    seen = gpu_requests(tb, "fpga", DOWN)
    bar = register(tb, USER_VA, tb.pci.bar_addr[tb.bars.user], 4096, "card user BAR")
    out = rt.cudaMalloc(4096)

    async def mailbox(k: KernelContext, value: int) -> None:
        await k.st32(bar + regs.USER_LED, value)
        got = await k.ld32(bar + regs.USER_LED)
        await k.st32(out, got, mmio=False)
        await k.st32(out + 4, await k.ld32(bar + regs.USER_RAM_SIZE))

    rt.launch(mailbox, 1, 1, 0x5)
    await rt.synchronize()
    assert await tb.user_read32(regs.USER_LED) == 0x5, "the kernel's store reached the card"
    words = rt.gpu.read_va(out, 8).view("<u4")
    assert words[0] == 0x5, "the kernel's load brought the register back"
    assert words[1] == tb.profile.ram_size, "the RAM size register, read by the kernel"
    base = tb.pci.bar_addr[tb.bars.user]
    assert [(op, a - base, n) for op, a, n, _ in seen] == [
        ("MWr", regs.USER_LED, 4),
        ("MRd", regs.USER_LED, 4),
        ("MRd", regs.USER_RAM_SIZE, 4),
    ]
    named = [
        r
        for r in records
        if r.get("by") == "kernel mailbox" and r["link"] == "fpga" and r["type"] != "CplD"
    ]
    assert [r["type"] for r in named] == ["MWr", "MRd", "MRd"], named
    assert all(r["range"] == "card user BAR" for r in named)
    assert named[0]["target"]["label"] == "FPGA LED"
    # the completions, the transfer report, Perfetto's and the waves' labels name it too
    answers = [r for r in records if r["type"] == "CplD" and r["link"] == "gpu"]
    assert [r.get("by") for r in answers] == ["kernel mailbox"] * 2, answers
    assert tlp_label(named[0]).endswith("-> FPGA LED [kernel mailbox]"), tlp_label(named[0])
    got = summarize(records)["gpu_requests"]
    assert got == {
        "kernel mailbox -> card user BAR": {
            "writes": 1,
            "write_bytes": 4,
            "reads": 2,
            "read_bytes": 8,
        }
    }, got
    assert rt.cudaGetLastError() == cudaError.cudaSuccess


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_a_64_bit_store_to_an_xdma_register_is_dropped(dut):
    """The hazard: the XDMA register BAR takes only 32-bit accesses (PG195). A kernel's
    64-bit store is one 2-DW MWr that the engine drops; two 32-bit stores take; a 64-bit
    load is completed with Completer Abort, a sticky kernel error. The checker names
    each ("xdma-register-width")."""
    h = await setup(dut)
    tb, rt = h.tb, h.tb.cuda
    seen = gpu_requests(tb, "fpga", DOWN)
    dma = register(tb, DMA_VA, tb.pci.bar_addr[tb.bars.dma], 64 << 10, "card DMA BAR")
    reg = regs.ch_reg(Target.H2C, regs.CH_POLL_WB_LO)
    assert await tb.dma_read32(reg) == 0

    async def wide(k: KernelContext) -> None:
        await k.st64(dma + reg, 0x0000_0001_0000_1000)

    async def narrow(k: KernelContext) -> None:
        await k.st32(dma + reg, 0x2000)
        await k.st32(dma + reg + 4, 0x1)

    with tb.checker.expecting("fpga", DOWN) as named:
        rt.launch(wide, 1, 1)
        await rt.synchronize()
        await arrived(seen, 1)
    assert seen[-1][2] == 8, "one 2-DW write reached the card"
    assert [v.rule for v in named.seen] == ["xdma-register-width"], named.seen
    assert "dropped" in named.seen[0].message and named.seen[0].time_ns > 0
    assert await tb.dma_read32(reg) == 0, "the engine dropped the 64-bit write"
    assert await tb.dma_read32(reg + 4) == 0
    rt.launch(narrow, 1, 1)
    await rt.synchronize()
    await arrived(seen, 3)
    assert await tb.dma_read32(reg) == 0x2000 and await tb.dma_read32(reg + 4) == 1

    async def wide_load(k: KernelContext) -> None:
        await k.ld64(dma + reg)

    with tb.checker.expecting("fpga", DOWN) as named:
        rt.launch(wide_load, 1, 1)
        try:
            await rt.synchronize()
        except CudaError as e:
            assert e.code == cudaError.cudaErrorIllegalAddress and "CA" in str(e), e
        else:
            raise AssertionError("a 64-bit register load did not fail")
    assert [v.rule for v in named.seen] == ["xdma-register-width"], named.seen
    assert rt.cudaGetLastError() == cudaError.cudaErrorIllegalAddress, "sticky"


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_copy_engine_to_and_from_pinned_host_memory(dut):
    """cudaMemcpyAsync between device memory and registered host memory: MPS-sized
    writes and MRRS-sized reads that never cross 4 KiB, several reads outstanding, the
    bytes exact both ways; the stream's events time it."""
    h = await setup(dut)
    tb, rt = h.tb, h.tb.cuda
    seen = gpu_requests(tb)
    n = 20_000
    buf = tb.alloc_host(24 << 10, "pinned")
    bus = buf.get_absolute_address(0)
    buf[0 : 24 << 10] = bytes([0xEE]) * (24 << 10)
    host = register(tb, HOST_VA, bus, 24 << 10, "pinned", io=False)
    data = np.random.default_rng(5).integers(0, 256, n, dtype=np.uint8)
    dev = rt.cudaMalloc(n)
    back = rt.cudaMalloc(n)
    rt.gpu.write_va(dev, data)
    s = rt.cudaStreamCreate()
    a, b = rt.cudaEventCreate(), rt.cudaEventCreate()
    rt.cudaEventRecord(a, s)
    rt.cudaMemcpyAsync(host + 100, dev, n, DEFAULT, s)
    rt.cudaMemcpyAsync(back, host + 100, n, DEFAULT, s)
    rt.cudaEventRecord(b, s)
    await rt.stream_synchronize(s)
    assert bytes(buf[100 : 100 + n]) == data.tobytes()
    assert bytes(buf[0:100]) == bytes([0xEE]) * 100 and buf[100 + n] == 0xEE
    assert (rt.gpu.read_va(back, n) == data).all()
    mps, mrrs = tb.profile.mps, tb.profile.mrrs
    writes = [(adr, m) for op, adr, m, _ in seen if op == "MWr"]
    reads = [(adr, m) for op, adr, m, _ in seen if op == "MRd"]
    assert sum(m for _, m in writes) == n and sum(m for _, m in reads) == n
    for adr, m in writes + reads:
        assert adr // 4096 == (adr + m - 1) // 4096, f"{adr:#x}+{m} crosses 4 KiB"
    assert max(m for _, m in writes) <= mps and max(m for _, m in reads) <= mrrs
    assert sum(1 for _, m in writes if m == mps) >= n // mps - 6, "writes are MPS-sized"
    assert len({t for op, *_, t in seen if op == "MRd"}) > 1, "several tags in flight"
    ms = rt.cudaEventElapsedTime(a, b)
    assert 0 < ms < 1, ms


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_host_alloc_memory_is_reached_through_the_root_complex(dut):
    """cudaHostAlloc memory is the process's host RAM: copies to and from it, a kernel's
    stores and a stream write are the GPU's TLPs to the root complex, to the bus
    addresses of the RAM the host's view shows, named by the range; the host sees the
    bytes exact once the stream is done, and the guards around them unchanged."""
    rig = await bring_up(dut)
    tb, rt = rig.tb, rig.cuda
    seen = gpu_requests(tb)
    records: list[dict] = []
    enable_trace(tb, records.append)
    n = 9_000
    h = rt.cudaHostAlloc(16 << 10)
    view = rt.host_buffer(h)
    view[:] = bytes([0xEE]) * len(view)
    (piece,) = rt.registered.bus_pieces(h, 16 << 10, write=True)
    assert tb.peek_host(piece.addr, 16 << 10) == bytes(view), "the view is the RAM"
    data = np.random.default_rng(7).integers(0, 256, n, dtype=np.uint8)
    dev, back = rt.cudaMalloc(n), rt.cudaMalloc(n)
    rt.gpu.write_va(dev, data)

    async def marks(k: KernelContext) -> None:
        await k.st32(h + 0x3000, 0xD00D)

    s = rt.cudaStreamCreate()
    rt.cudaMemcpyAsync(h + 100, dev, n, DEFAULT, s)
    rt.cudaMemcpyAsync(back, h + 100, n, DEFAULT, s)
    rt.cudaLaunchKernel(marks, 1, 32, (), s)
    rt.cuStreamWriteValue32(s, h + 0x3004, 0xF1A6)
    await rt.stream_synchronize(s)
    assert bytes(view[100 : 100 + n]) == data.tobytes()
    assert bytes(view[:100]) == bytes([0xEE]) * 100 and view[100 + n] == 0xEE
    assert bytes(view[0x3000:0x3008]) == bytes.fromhex("0dd00000a6f10000")
    assert bytes(view[0x3008:]) == bytes([0xEE]) * (len(view) - 0x3008)
    assert (rt.gpu.read_va(back, n) == data).all()
    lo, hi = piece.addr, piece.addr + piece.length
    writes = [(adr, m) for op, adr, m, _ in seen if op == "MWr"]
    reads = [(adr, m) for op, adr, m, _ in seen if op == "MRd" and m]
    assert sum(m for _, m in writes) == n + 8 and sum(m for _, m in reads) == n
    assert all(lo <= adr and adr + m <= hi for adr, m in writes + reads), "only its RAM"
    ranges = {r.get("range") for r in records if r.get("by") and "range" in r}
    assert ranges == {"cudaHostAlloc"}, ranges
    rt.cudaFreeHost(h)
    assert rt.registered.find(h) is None


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_the_card_and_the_gpu_meet_in_host_alloc_memory(dut):
    """The staged path without GPUDirect: the card's DMA (the driver pins cudaHostAlloc
    memory as any user buffer) writes into one cudaHostAlloc buffer from another, the
    GPU's copy engine then reads it into device memory through the root complex, and a
    kernel writes a result back there that the card's DMA carries off. The bytes are
    exact at each stop, and the card's writes land where the GPU reads."""
    rig = await bring_up(dut)
    rt, fd = rig.cuda, rig.fd
    n = 10_000
    src, mid, out = rt.cudaHostAlloc(n), rt.cudaHostAlloc(n + 64), rt.cudaHostAlloc(n)
    data = np.random.default_rng(11).integers(0, 256, n, dtype=np.uint8).tobytes()
    rt.host_buffer(src)[:n] = data
    rt.host_buffer(mid)[:] = bytes([0xEE]) * (n + 64)
    assert await fd.h2c2h_dma(src, mid, n) > 0  # (the DMA time; errors raise)
    assert bytes(rt.host_buffer(mid)[:n]) == data, "the card's DMA into cudaHostAlloc memory"
    assert bytes(rt.host_buffer(mid)[n:]) == bytes([0xEE]) * 64
    dev = rt.cudaMalloc(n)
    s = rt.cudaStreamCreate()
    rt.cudaMemcpyAsync(dev, mid, n, DEFAULT, s)

    async def invert(k: KernelContext) -> None:
        await k.store(mid, bytes(b ^ 0xFF for b in await k.load(dev, n)))

    rt.cudaLaunchKernel(invert, 1, 32, (), s)
    await rt.stream_synchronize(s)
    assert rt.gpu.read_va(dev, n).tobytes() == data, "the GPU's copy of the card's bytes"
    await fd.h2c2h_dma(mid, out, n)
    assert bytes(rt.host_buffer(out)[:n]) == bytes(b ^ 0xFF for b in data)
    for p in (src, mid, out):
        rt.cudaFreeHost(p)
    assert rig.platform.host.pinned_pages == 0, "the driver unpinned every page"


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_the_card_bar_registered_as_the_notes_do(dut):
    """The notes' path: the process maps the card's BAR (the driver's mmap, the sysfs
    resource file, /dev/mem), registers it with cudaHostRegister(IoMemory), takes the
    device pointer, and a kernel's stores reach the card. An unprivileged process, a
    mapping of RAM through /dev/mem, the GPU's own BAR and pinning the mapping's pages
    are refused as Linux and CUDA refuse them."""
    rig = await bring_up(dut)
    tb, rt, proc, fd, p = rig.tb, rig.cuda, rig.process, rig.fd, rig.platform
    seen = gpu_requests(tb, "fpga", DOWN)

    # the driver's mmap of the user BAR
    user = fd.mmap(4096, regs.BAR_USER << uapi.PICOEVB_MMAP_BAR_SHIFT)
    assert user > 0, fd.last_error
    assert fd.mmap(8192, regs.BAR_USER << uapi.PICOEVB_MMAP_BAR_SHIFT) == -errno.EINVAL
    assert fd.mmap(4096, 5 << uapi.PICOEVB_MMAP_BAR_SHIFT) == -errno.EINVAL
    rt.cudaHostRegister(user, 4096, IO)
    led = rt.cudaHostGetDevicePointer(user) + regs.USER_LED

    async def light(k: KernelContext, value: int) -> None:
        await k.st32(led, value)

    rt.launch(light, 1, 1, 0x2)
    await rt.synchronize()
    await arrived(seen, 1)
    assert await p.ioread32(regs.BAR_USER, regs.USER_LED) == 0x2

    # the sysfs resource file of the DMA BAR; a 32-bit store to a RW register takes
    dma = mmap_resource(p, proc, regs.BAR_DMA, 64 << 10)
    assert dma > 0
    rt.cudaHostRegister(dma, 64 << 10, IO)
    wb = regs.ch_reg(Target.C2H, regs.CH_POLL_WB_LO)

    async def poke(k: KernelContext) -> None:
        await k.st32(dma + wb, 0x4000)

    rt.launch(poke, 1, 1)
    await rt.synchronize()
    await arrived(seen, 2)
    assert await p.ioread32(regs.BAR_DMA, wb) == 0x4000

    # /dev/mem: the card's BAR yes, RAM no, the GPU's own BAR1 is refused by CUDA
    assert mmap_dev_mem(proc, p.host, p.host.base, 4096) == -errno.EPERM
    gpu_bar1 = mmap_dev_mem(proc, p.host, tb.gpu_ep.bar1_bus_address(), 1 << 16)
    assert gpu_bar1 > 0
    with pytest_raises(CudaError) as e:
        rt.cudaHostRegister(gpu_bar1, 1 << 16, IO)
    assert e.code == cudaError.cudaErrorInvalidValue and "GPU's BAR" in e.text

    # the device mapping has no pages to pin: an ioctl with a user buffer there fails
    await expect_errno(
        ioctl(fd, uapi.PICOEVB_IOC_H2C_DMA, _h2c_arg(proc, user, 256)), errno.EFAULT, "H2C"
    )

    # an unprivileged process may map nothing from sysfs and register no I/O memory
    other = UserProcess(p.host, "user", privileged=False)
    assert mmap_resource(p, other, regs.BAR_DMA, 4096) == -errno.EPERM
    theirs = CudaRuntime(tb.gpu)  # (its own context)
    theirs.process = other
    mine = rig.drv.open(other).mmap(4096, regs.BAR_USER << uapi.PICOEVB_MMAP_BAR_SHIFT)
    with pytest_raises(CudaError) as e:
        theirs.cudaHostRegister(mine, 4096, IO)
    assert e.code == cudaError.cudaErrorNotPermitted
    tb.gpu.peer_mapping_override = True
    theirs.cudaHostRegister(mine, 4096, IO)


def _h2c_arg(proc, src: int, n: int) -> int:
    arg = proc.mmap(4096)
    proc.write(arg, bytes(uapi.picoevb_rdma_h2c_dma(src=src, dst=0, len=n)))
    return arg


class pytest_raises:
    """``with pytest_raises(E) as e``: the block raises E (code and text kept)."""

    def __init__(self, kind: type[Exception]) -> None:
        self.kind = kind
        self.code = None
        self.text = ""

    def __enter__(self) -> pytest_raises:
        return self

    def __exit__(self, kind, value, tb) -> bool:
        assert kind is not None and issubclass(kind, self.kind), f"no {self.kind.__name__}"
        self.code = getattr(value, "code", None)
        self.text = str(value)
        return True


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_gpu_started_dma(dut):
    """GPU-started DMA: the host builds an H2C chain (GPU surface -> card RAM) and a C2H
    chain (card RAM -> another surface), each with poll-mode write-back into GPU memory,
    and leaves Run clear. One kernel starts each channel with a 32-bit store to its
    control register, spins on the write-back in its own memory, and checks the copy. No
    request from the host reaches the card between the launch and the result."""
    h = await setup(dut)
    tb, rt = h.tb, h.tb.cuda
    n = 24 << 10
    src = Surface(tb, 64 << 10, xor_val=0x5A5A_0000)
    dst = Surface(tb, 64 << 10, xor_val=0x0000_A5A5)
    wb = Surface(tb, 64 << 10)
    rt.cudaMemset(wb.va, 0, 128)  # the write-back words start at 0
    rt.cudaDeviceSynchronize()
    result = rt.cudaMalloc(64)
    wb_bus = {d: wb.chunks(off, 4)[0][0] for d, off in ((Target.H2C, 0), (Target.C2H, 64))}
    chains = {
        Target.H2C: h.place_chain(segments(src.chunks(0, n), 0, True)),
        Target.C2H: h.place_chain(segments(dst.chunks(0, n), 0, False)),
    }
    for ch in (h.h2c, h.c2h):  # everything but Run, as the driver leaves it
        chain = chains[ch.direction]
        await ch.write32(ch.sgreg(regs.SG_DESC_LO), chain.first & 0xFFFFFFFF)
        await ch.write32(ch.sgreg(regs.SG_DESC_HI), chain.first >> 32)
        await ch.write32(ch.sgreg(regs.SG_DESC_ADJ), chain.first_adj)
        await ch.write32(ch.reg(regs.CH_POLL_WB_LO), wb_bus[ch.direction] & 0xFFFFFFFF)
        await ch.write32(ch.reg(regs.CH_POLL_WB_HI), wb_bus[ch.direction] >> 32)
        await ch.write32(ch.reg(regs.CH_INT_MASK), 0)
    await tb.dma_read32(regs.ch_reg(Target.H2C, regs.CH_STATUS))  # (flushes the writes)
    dma = register(tb, DMA_VA, tb.pci.bar_addr[tb.bars.dma], 64 << 10, "card DMA BAR")
    run = int(regs.CTRL_IE_ALL | regs.Ctrl.RUN | regs.Ctrl.POLLMODE_WB_ENABLE)
    host_requests: list[str] = []
    window = [False]

    def watch(link: str, direction: str, tlp) -> None:
        if window[0] and link == "fpga" and direction == DOWN and not tlp.is_completion():
            if tlp.requester_id != tb.gpu_ep.pcie_id:
                host_requests.append(f"{tlp.fmt_type.name} {tlp.address:#x}")

    tb.links.add_observer(watch)

    async def start_and_check(k: KernelContext) -> None:
        for d, count in ((Target.H2C, len(chains[Target.H2C].descriptors)), (Target.C2H, None)):
            count = count or len(chains[Target.C2H].descriptors)
            await k.st32(dma + regs.ch_reg(d, regs.CH_CONTROL), run)
            word = wb.va + (0 if d == Target.H2C else 64)
            for _ in range(20_000):
                got = await k.ld32(word, mmio=False)
                if got >> 31 or (got & 0xFFFFFF) >= count:
                    break
                await k.nanosleep(500)
            if got >> 31 or (got & 0xFFFFFF) < count:
                await k.st32(result, 0xBAD0_0000 | int(d), mmio=False)
                return
        same = await k.load(src.va, n) == await k.load(dst.va, n)
        await k.st32(result, 0x600D if same else 0xBAD2, mmio=False)

    window[0] = True
    rt.launch(start_and_check, 1, 1)
    await rt.synchronize()
    window[0] = False
    assert int(rt.gpu.read_va(result, 4).view("<u4")[0]) == 0x600D
    assert not host_requests, f"the host reached the card meanwhile: {host_requests[:4]}"
    assert dst.read(0, n) == src.read(0, n)
    assert dst.read(n, 64) != src.read(n, 64), "past the copy the surfaces still differ"


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_gpudirect_async_doorbell_and_flag(dut):
    """GPUDirect Async on one stream: a kernel fills a surface, cuStreamWriteValue32 rings
    the H2C channel's Run bit (the doorbell, after the kernel), cuStreamWaitValue32 holds
    the stream until the engine's write-back in GPU memory counts the descriptors (the
    flag the card writes), then a kernel reads the card's copy back over the bus. The
    doorbell leaves the GPU only once the kernel before it is done."""
    h = await setup(dut)
    tb, rt = h.tb, h.tb.cuda
    n = 8 << 10
    src = Surface(tb, 64 << 10, xor_val=0x1111_0000)
    flag = Surface(tb, 64 << 10)
    rt.cudaMemset(flag.va, 0, 64)
    rt.cudaDeviceSynchronize()
    chain = h.place_chain(segments(src.chunks(0, n), 0x1000, True))
    ch = h.h2c
    await ch.write32(ch.sgreg(regs.SG_DESC_LO), chain.first & 0xFFFFFFFF)
    await ch.write32(ch.sgreg(regs.SG_DESC_HI), chain.first >> 32)
    await ch.write32(ch.sgreg(regs.SG_DESC_ADJ), chain.first_adj)
    await ch.write32(ch.reg(regs.CH_POLL_WB_LO), flag.chunks(0, 4)[0][0] & 0xFFFFFFFF)
    await ch.write32(ch.reg(regs.CH_POLL_WB_HI), flag.chunks(0, 4)[0][0] >> 32)
    await ch.write32(ch.reg(regs.CH_INT_MASK), 0)
    await tb.dma_read32(ch.reg(regs.CH_STATUS))
    dma = register(tb, DMA_VA, tb.pci.bar_addr[tb.bars.dma], 64 << 10, "card DMA BAR")
    events: list[tuple[str, float]] = []

    async def fill(k: KernelContext) -> None:
        await k.store(src.va, np.full(n // 4, 0xC0DE_0000, dtype="<u4"))
        await k.nanosleep(5_000)
        events.append(("filled", get_sim_time("ns")))

    def doorbell(link: str, direction: str, tlp) -> None:
        if link == "fpga" and direction == DOWN and tlp.requester_id == tb.gpu_ep.pcie_id:
            assert tlp.fmt_type in MEM_WRITES, "the GPU reads nothing of the card here"
            events.append(("doorbell", get_sim_time("ns")))

    tb.links.add_observer(doorbell)
    s = rt.cudaStreamCreate()
    run = int(regs.CTRL_IE_ALL | regs.Ctrl.RUN | regs.Ctrl.POLLMODE_WB_ENABLE)
    rt.cudaLaunchKernel(fill, 1, 256, (), s)
    rt.cuStreamWriteValue32(s, dma + regs.ch_reg(Target.H2C, regs.CH_CONTROL), run)
    rt.cuStreamWaitValue32(s, flag.va, len(chain.descriptors), 0)  # GEQ
    await rt.stream_synchronize(s)
    assert [e for e, _ in events] == ["filled", "doorbell"], events
    assert rt.cudaStreamQuery(s) == cudaError.cudaSuccess
    status = await ch.status()
    assert status & regs.Stat.DESC_COMPLETED and not status & regs.STAT_ERROR_MASK, hex(status)
    # the card holds what the kernel wrote: back to GPU memory through C2H and compare
    back = Surface(tb, 64 << 10)
    res = await h.run(h.c2h, segments(back.chunks(0, n), 0x1000, False))
    assert res.ok, res
    assert back.read(0, n) == np.full(n // 4, 0xC0DE_0000, dtype="<u4").tobytes()


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_the_card_mailbox(dut):
    """The card's mailbox register (not on the original card): each value written is
    queued and raises one user interrupt; the driver's MAILBOX_READ takes them in order;
    a write that finds it full (16) is dropped and sets the sticky overflow bit, which
    the read reports and clears; an empty mailbox reads 0, and the read waits bounded."""
    rig = await bring_up(dut)
    tb, fd, p, drv = rig.tb, rig.fd, rig.platform, rig.drv
    vector = drv.mbox_vector
    assert vector == 2, "the mailbox has a vector of its own"
    before = tb.msi_count[vector]
    for i in range(regs.MAILBOX_DEPTH + 1):
        await p.iowrite32(regs.BAR_USER, regs.USER_MAILBOX, 0x100 + i)
    status = await p.ioread32(regs.BAR_USER, regs.USER_MAILBOX_STATUS)
    assert status == regs.MAILBOX_OVERFLOW | regs.MAILBOX_DEPTH, hex(status)
    for _ in range(200):  # one interrupt per value queued, none for the dropped one
        if tb.msi_count[vector] - before == regs.MAILBOX_DEPTH:
            break
        await Timer(1, "us")
    await Timer(5, "us")
    assert tb.msi_count[vector] - before == regs.MAILBOX_DEPTH
    got = []
    for i in range(regs.MAILBOX_DEPTH):
        m = uapi.picoevb_rdma_mailbox(timeout_ns=0)
        await ioctl(fd, uapi.PICOEVB_IOC_MAILBOX_READ, m)
        assert m.flags == (uapi.PICOEVB_MAILBOX_OVERFLOWED if i == 0 else 0), (i, m.flags)
        assert m.left == regs.MAILBOX_DEPTH - 1 - i
        got.append(m.value)
    assert got == [0x100 + i for i in range(regs.MAILBOX_DEPTH)], "in order, the 17th dropped"
    assert await p.ioread32(regs.BAR_USER, regs.USER_MAILBOX_STATUS) == 0
    assert await p.ioread32(regs.BAR_USER, regs.USER_MAILBOX) == 0, "empty reads 0"
    await expect_errno(
        ioctl(fd, uapi.PICOEVB_IOC_MAILBOX_READ, uapi.picoevb_rdma_mailbox(timeout_ns=0)),
        errno.EAGAIN,
        "empty",
    )
    t0 = get_sim_time("ns")
    await expect_errno(
        ioctl(fd, uapi.PICOEVB_IOC_MAILBOX_READ, uapi.picoevb_rdma_mailbox(timeout_ns=20_000)),
        errno.ETIMEDOUT,
        "timeout",
    )
    assert get_sim_time("ns") - t0 >= 20_000
    await expect_errno(
        ioctl(fd, uapi.PICOEVB_IOC_MAILBOX_READ, uapi.picoevb_rdma_mailbox(pad=1)),
        errno.EINVAL,
        "padding",
    )

    # a value that comes while the read waits wakes it through the interrupt
    async def later() -> None:
        await Timer(30, "us")
        await p.iowrite32(regs.BAR_USER, regs.USER_MAILBOX, 0xABCD)

    cocotb.start_soon(later())
    m = uapi.picoevb_rdma_mailbox(timeout_ns=1_000_000)
    t0 = get_sim_time("ns")
    await ioctl(fd, uapi.PICOEVB_IOC_MAILBOX_READ, m)
    assert m.value == 0xABCD and 30_000 <= get_sim_time("ns") - t0 < 100_000


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_mailbox_readers_race_and_remove(dut):
    """Two MAILBOX_READs against one value, from two files and twice on one file: one
    gets it, the other waits on and times out (never a 0 the card did not send).
    remove() with a reader waiting inside (its timeout the longest a u64 holds): the reader
    fails with ENODEV before remove() returns, and nothing reads the card's BARs
    afterwards."""
    rig = await bring_up(dut)
    fd, p, drv = rig.fd, rig.platform, rig.drv
    second = drv.open(rig.process)
    results: list[int] = []

    async def read(f, timeout_ns: int) -> None:
        m = uapi.picoevb_rdma_mailbox(timeout_ns=timeout_ns)
        try:
            await ioctl(f, uapi.PICOEVB_IOC_MAILBOX_READ, m)
            results.append(m.value)
        except OSError as e:
            results.append(-e.errno)

    for a, b in ((fd, second), (fd, fd)):
        results.clear()
        readers = [cocotb.start_soon(read(f, 60_000)) for f in (a, b)]
        await Timer(5, "us")
        await p.iowrite32(regs.BAR_USER, regs.USER_MAILBOX, 0x5150)
        for r in readers:
            await r
        assert sorted(results) == [-errno.ETIMEDOUT, 0x5150], results

    results.clear()
    # (found by the ioctl fuzz: a timeout past what a simulator's timer counts raised
    # OverflowError; the longest wait is MAILBOX_MAX_WAIT_NS)
    reader = cocotb.start_soon(read(fd, 2**64 - 1))
    await Timer(10, "us")
    reads: list[float] = []
    ioread32 = p.ioread32

    async def watched(bar: int, offset: int) -> int:
        reads.append(get_sim_time("ns"))
        return await ioread32(bar, offset)

    p.ioread32 = watched
    await drv.remove()
    removed_at = get_sim_time("ns")
    assert reader.done() and results == [-errno.ENODEV], results
    await Timer(2100, "us")
    assert not [t for t in reads if t > removed_at], "the card's BAR read after remove()"


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_the_notes_mailbox_demo(dut):
    """The gpu-mailbox demo (make sim DEMO=gpu-mailbox) on a small surface: the three
    marks in order, each an interrupt of the mailbox's vector, the surface processed."""
    rig = await bring_up(dut)
    lines: list[str] = []
    env = AppEnv(
        open=rig.open, cuda=rig.cuda, process=rig.process, out=lines.append, err=lines.append
    )
    vector = rig.drv.mbox_vector
    before = rig.tb.msi_count[vector]
    assert await run_demo(env, "gpu-mailbox", ["64x32"]) == 0, lines
    assert [ln.split()[1] for ln in lines[:3]] == [
        f"{m:#010x}" for m in (MARK_FIRST, MARK_LAST, MARK_DONE)
    ], lines
    irqs = env.results["mailbox_irqs"]
    assert irqs == sorted(irqs) and irqs[-1] == 3, f"an interrupt per mark: {irqs}"
    assert rig.tb.msi_count[vector] - before == 3


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_failed_gpu_loads_are_sticky_kernel_errors(dut):
    """A kernel's load that nothing claims comes back UR; one whose completion the card's
    link loses times out (1 ms): each a sticky cudaErrorIllegalAddress of its context
    naming the status, the checker told of the abandoned request. The other context
    goes on working."""
    h = await setup(dut)
    tb = h.tb
    for why in ("UR", "timeout"):
        rt = CudaRuntime(tb.gpu)  # (a context of its own: the error is sticky)
        out = rt.cudaMalloc(4096)
        if why == "UR":
            ptr = register_in(rt, 0x7F00_0900_0000, 0xD0_0000_0000, 4096, "nothing")
        else:
            ptr = register_in(rt, USER_VA, tb.pci.bar_addr[tb.bars.user], 4096, "card")
            tb.up_faults.add(UpRule("drop", tlp="completion"))

        async def load(k: KernelContext, out: int, ptr: int) -> None:
            await k.st32(out, await k.ld32(ptr + regs.USER_LED), mmio=False)

        rt.launch(load, 1, 1, out, ptr)
        try:
            await rt.synchronize()
        except CudaError as e:
            assert e.code == cudaError.cudaErrorIllegalAddress and why in str(e), e
        else:
            raise AssertionError(f"a load answered {why} did not fail")
        assert rt.cudaGetLastError() == cudaError.cudaErrorIllegalAddress
        tb.up_faults.clear()
    assert not tb.checker.outstanding(), tb.checker.outstanding()
    # the testbench's own context still works
    assert tb.cuda.cudaGetLastError() == cudaError.cudaSuccess
    tb.cuda.cudaMalloc(4096)


def register_in(rt, va: int, bus: int, size: int, name: str) -> int:
    pages = [bus + i for i in range(0, size, 4096)]
    rt.registered.add(Registration(va, size, pages, io=True, name=name))
    return va
