"""cocotb tests of the picoevb-rdma driver model through the RTL: every ioctl's success and
error paths, host/CUDA combinations of H2C2H, odd surfaces, chains longer than the card
RAM, cudaFree during a transfer, a lost interrupt, poll mode."""

from __future__ import annotations

import collections
import ctypes
import errno
import json
import os
import random
from pathlib import Path

import cocotb
from cocotb.triggers import Timer

from cuda_model import PinState
from driver_model import regs, uapi
from driver_model.picoevb import DriverConfig, ioctl
from driver_model.regs import Target
from tb.env.harness import GUARD, PAGE, Rig, bring_up, pattern
from tb.env.userbuf import D2H, H2D, SYNC, Side, expect_errno

SRC_CUDA = uapi.PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA
DST_CUDA = uapi.PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_probe_led_card_info(dut):
    """probe found the engine; LED and CARD_INFO through both call styles; bad ioctls."""
    rig = await bring_up(dut)
    tb, fd = rig.tb, rig.fd
    assert rig.drv.fpga_ram_size == tb.profile.ram_size
    assert rig.drv.nvec >= 2, "MSI vectors for H2C and C2H"
    assert all(a[:2] == (1, 1) for a in rig.drv.alignments.values())
    await ioctl(fd, uapi.PICOEVB_IOC_LED, 0x2)
    assert await tb.user_read32(regs.USER_LED) == 0x2  # the read flushes the posted write
    assert int(dut.led.value) == 0x2
    await fd.led(0x5)
    assert await tb.user_read32(regs.USER_LED) == 0x5
    # CARD_INFO through a user pointer (the C way) and through a struct
    ptr = rig.process.malloc(64)
    rig.process.write(ptr, b"\xee" * 8)
    await ioctl(fd, uapi.PICOEVB_IOC_CARD_INFO, ptr)
    assert int.from_bytes(rig.process.read(ptr, 8), "little") == tb.profile.ram_size
    assert await fd.card_info() == tb.profile.ram_size
    # unknown ioctls: wrong number, wrong size, wrong magic
    for cmd in (
        uapi.IOWR("P", 7, uapi.picoevb_rdma_h2c_dma),
        uapi.IOWR("P", 3, ctypes.c_uint64),
        uapi.IOR("Q", 4, ctypes.c_uint64),
    ):
        await expect_errno(ioctl(fd, cmd, ptr), errno.EINVAL, f"ioctl {cmd:#x}")
    # a pointer to unmapped user memory
    await expect_errno(
        ioctl(fd, uapi.PICOEVB_IOC_CARD_INFO, 0x1000), errno.EFAULT, "CARD_INFO to NULL page"
    )
    await expect_errno(
        ioctl(fd, uapi.PICOEVB_IOC_PIN_CUDA, bytearray(8)),
        errno.EFAULT,
        "PIN_CUDA with a short argument",
    )


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_h2c2h_four_combinations(dut):
    """H2C2H host->host, host->CUDA, CUDA->host, CUDA->CUDA, longer than the card RAM,
    odd offsets; data, guards and dma_time_ns checked; chunks overlap."""
    rig = await bring_up(dut)
    ram = rig.drv.fpga_ram_size
    length = ram + 0x1234 + 12  # 3 chunks of half the card RAM, the last short
    for i, flags in enumerate((0, DST_CUDA, SRC_CUDA, SRC_CUDA | DST_CUDA)):
        data = pattern(length, 10 + i)
        src = Side(rig, length, bool(flags & SRC_CUDA), skew=0x1234 + 3 * i, fill=data)
        dst = Side(rig, length, bool(flags & DST_CUDA), skew=0x10000 - 0x40 + i)
        s, d = await src.pin(), await dst.pin()
        before = len(rig.drv.runs)
        t = await rig.fd.h2c2h_dma(s, d, length, flags)
        dst.expect(data, f"H2C2H flags {flags}")
        src.expect(data, f"H2C2H flags {flags} source")
        runs = list(rig.drv.runs)[before:]
        h2c = [r for r in runs if r.direction == Target.H2C]
        c2h = [r for r in runs if r.direction == Target.C2H]
        nchunks = -(-length // (ram // 2))
        assert len(h2c) == len(c2h) == nchunks, f"{len(h2c)}/{len(c2h)} runs, {nchunks} chunks"
        assert all(r.rc == 0 for r in runs)
        assert sum(r.nbytes for r in h2c) == sum(r.nbytes for r in c2h) == length
        # double buffering: each H2C after the first overlaps the previous chunk's C2H
        for k in range(1, nchunks):
            assert h2c[k].start_ns < c2h[k - 1].end_ns, f"chunk {k}: no overlap"
        span = runs[-1].end_ns - runs[0].start_ns
        assert 0 < t and abs(t - span) < span * 0.5, f"dma_time_ns {t} vs runs {span:.0f}"
        if not flags & SRC_CUDA:
            # host source: scattered 4 KiB pages, so chains of several descriptors
            assert max(r.descriptors for r in h2c) > 1
        for side in (src, dst):
            if side.handle is not None:
                await rig.fd.unpin_cuda(side.handle)
    assert rig.tb.p2p.live_mappings() == 0, "DMA mappings leaked"


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def test_ioctl_errors(dut):
    """Every argument check returns its errno and moves no data; handles are per file and
    lowest-free; double unpin, closed file, close with pins outstanding."""
    rig = await bring_up(dut)
    fd, rt, tb = rig.fd, rig.cuda, rig.tb
    ram = rig.drv.fpga_ram_size
    surf = rt.cudaMalloc(256 << 10)
    host = rig.process.malloc(64 << 10)
    runs_before = len(rig.drv.runs)
    bar1_free = tb.gpu.bar1_free_bytes
    # PIN_CUDA
    await expect_errno(fd.pin_cuda(surf, 0), errno.EINVAL, "pin of 0", "PIN_CUDA: EINVAL: size 0")
    await expect_errno(fd.pin_cuda(host, 4096), errno.EINVAL, "pin of host memory")
    gone = rt.cudaMalloc(2 << 20)
    rt.cudaFree(gone)
    await expect_errno(
        fd.pin_cuda(gone, 4096), errno.EINVAL, "pin of freed memory", "not memory from cudaMalloc"
    )
    await expect_errno(fd.pin_cuda(surf, 4 << 20), errno.EINVAL, "pin past the allocation")
    h0 = await fd.pin_cuda(surf + 0x100, 100 << 10)
    h1 = await fd.pin_cuda(surf, 256 << 10)
    assert (h0, h1) == (0, 1), "IDR handles start at 0"
    # UNPIN
    await fd.unpin_cuda(h0)
    await expect_errno(fd.unpin_cuda(h0), errno.EINVAL, "double unpin")
    await expect_errno(
        fd.unpin_cuda(77), errno.EINVAL, "unpin unknown handle", "no CUDA surface has handle 77"
    )
    assert await fd.pin_cuda(surf + 0x100, 100 << 10) == 0, "lowest free handle reused"
    # H2C2H
    both = SRC_CUDA | DST_CUDA
    await expect_errno(
        fd.h2c2h_dma(0, 1, 64, 1 << 2), errno.EINVAL, "H2C2H bad flag", "unknown flags 0x4"
    )
    await expect_errno(fd.h2c2h_dma(0, 1, 0, both), errno.EINVAL, "H2C2H of 0 bytes")
    await expect_errno(fd.h2c2h_dma(0, 9, 64, both), errno.EINVAL, "H2C2H unknown dst handle")
    await expect_errno(fd.h2c2h_dma(1 << 32, 1, 64, both), errno.EINVAL, "handle > INT_MAX")
    await expect_errno(
        fd.h2c2h_dma(0, 1, (100 << 10) + 1, both),
        errno.EINVAL,
        "H2C2H longer than the source surface",
    )
    await expect_errno(
        fd.h2c2h_dma(0x1000, host, 64, 0), errno.EFAULT, "unmapped source", "not all mapped"
    )
    mapping_end = host - 16 + (17 << 12)  # malloc: 16-byte header, 17 pages mapped
    await expect_errno(
        fd.h2c2h_dma(host, mapping_end - 8, 64, 0),
        errno.EFAULT,
        "destination runs past its mapping",
    )
    # H2C / C2H against the card RAM
    await expect_errno(fd.h2c_dma(host, 0, 64, 2), errno.EINVAL, "H2C bad flag")
    await expect_errno(fd.c2h_dma(host, 0, 64, 2), errno.EINVAL, "C2H bad flag")
    await expect_errno(
        fd.h2c_dma(host, 0, ram + 1),
        errno.EINVAL,
        "H2C past the card RAM",
        f"H2C_DMA: EINVAL: length {ram + 1} exceeds the card RAM ({ram} bytes)",
    )
    for card, n in ((0, ram + 1), (ram - 63, 64), (ram, 1), ((1 << 64) - 1, 2), (0, 0)):
        await expect_errno(fd.h2c_dma(host, card, n), errno.EINVAL, f"H2C {n} at {card:#x}")
        await expect_errno(fd.c2h_dma(host, card, n), errno.EINVAL, f"C2H {n} at {card:#x}")
    await expect_errno(fd.h2c_dma(5, 0, 64, 1), errno.EINVAL, "H2C unknown handle")
    assert len(rig.drv.runs) == runs_before, "a rejected ioctl started the engine"
    assert tb.p2p.live_mappings() == 0
    # handles belong to their file
    fd2 = rig.open()
    await expect_errno(fd2.unpin_cuda(1), errno.EINVAL, "another file's handle")
    assert await fd2.pin_cuda(surf, 64 << 10) == 0
    # close with pins outstanding releases them; the closed file refuses ioctls
    pins = [p for p in tb.gpu.pins.values() if p.state.name == "LIVE"]
    assert len(pins) == 3, pins
    await fd2.release()
    await fd.release()
    assert all(p.state.name == "RELEASED" for p in pins), [p.state for p in pins]
    assert tb.gpu.bar1_free_bytes == bar1_free, "BAR1 pages leaked by release"
    await expect_errno(fd.card_info(), errno.EBADF, "ioctl on a closed file")
    rt.cudaFree(surf)
    # small buffers share a pool chunk: freeing the neighbour leaves the pin (no
    # allocation of NVIDIA's resource manager goes); freeing the chunk's last buffer
    # fires the free callback, which drops the handle; the file still works afterwards
    fd3 = rig.open()
    a, b = rt.cudaMalloc(1000), rt.cudaMalloc(1000)
    ha = await fd3.pin_cuda(a, 1000)
    rt.cudaFree(b)
    assert [p.state.name for p in tb.gpu.pins.values()][-1] == "LIVE"
    rt.cudaFree(a)
    await expect_errno(fd3.unpin_cuda(ha), errno.EINVAL, "unpin after the chunk's release")
    c = rt.cudaMalloc(1000)
    assert await fd3.pin_cuda(c, 1000) == ha
    # remove() releases the open files; the device cannot be opened afterwards
    await rig.drv.remove()
    assert not [p for p in tb.gpu.pins.values() if p.state.name == "LIVE"]
    try:
        rig.open()
    except OSError as e:
        assert e.errno == errno.ENODEV
    else:
        raise AssertionError("open() after remove() succeeded")


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def test_h2c_c2h_and_odd_surfaces(dut):
    """H2C and C2H ioctls at card offsets (host and CUDA sides, full card RAM), and
    H2C2H of surfaces at odd VAs with odd sizes across 64 KiB pages."""
    rig = await bring_up(dut)
    fd = rig.fd
    ram = rig.drv.fpga_ram_size
    # whole card: CUDA -> card, card -> host
    data = pattern(ram, 3)
    src = Side(rig, ram, True, skew=0x8765, fill=data)
    back = Side(rig, ram, False, skew=0x321)
    t = await fd.h2c_dma(await src.pin(), 0, ram, uapi.PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA)
    assert t > 0
    await fd.c2h_dma(await back.pin(), 0, ram)
    back.expect(data, "card -> host, whole card")
    # host -> card at an odd offset, card -> CUDA from there
    data2 = pattern(5000, 4)
    hsrc = Side(rig, 5000, False, skew=0xFFD, fill=data2)
    cdst = Side(rig, 5000, True, skew=0xFFF3)
    await fd.h2c_dma(await hsrc.pin(), 0x1003, 5000)
    await fd.c2h_dma(await cdst.pin(), 0x1003, 5000, uapi.PICOEVB_C2H_DMA_FLAG_DST_IS_CUDA)
    cdst.expect(data2, "host -> card+0x1003 -> CUDA")
    # odd surfaces: pinned range starts anywhere in a 64 KiB page, odd lengths
    for i, (skew, n) in enumerate(
        ((0xFFFF - 0x1000, 3), (0x1, 0x10001), (0xFFF0, 0x20), (0x7FFF, 0x18000 + 5))
    ):
        d = pattern(n, 20 + i)
        a = Side(rig, n, True, skew=skew, fill=d)
        b = Side(rig, n, True, skew=(skew * 7) & 0xFFFF)
        await fd.h2c2h_dma(await a.pin(), await b.pin(), n, SRC_CUDA | DST_CUDA)
        b.expect(d, f"odd surface {i}: {n} bytes at page offset {skew:#x}")
        await fd.unpin_cuda(a.handle)
        await fd.unpin_cuda(b.handle)
    assert rig.tb.p2p.live_mappings() == 0


async def wait_for_run(rig: Rig, direction: Target, budget_us: int = 5000) -> None:
    for _ in range(budget_us):
        if any(r.direction == direction for r in rig.drv.runs):
            return
        await Timer(1, "us")
    raise AssertionError(f"no {direction.name} run finished within {budget_us} us")


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_cudafree_during_transfer(dut):
    """cudaFree of the destination, then of the source, while H2C2H runs: the ioctl fails
    with EFAULT (no hang), the handle is gone, the free callback has returned (its pin
    unmapped) by the time the ioctl does, no byte reaches the freed VRAM after that, and
    the device works afterwards."""
    rig = await bring_up(dut)
    fd, rt, gpu = rig.fd, rig.cuda, rig.tb.gpu
    ram = rig.drv.fpga_ram_size
    length = 3 * ram + 100
    for victim in ("dst", "src"):
        rig.drv.runs.clear()
        data = pattern(length, 5)
        src = Side(rig, length, True, skew=0x40, fill=data, own_pages=True)
        dst = Side(rig, length, True, skew=0x80, own_pages=True)
        hs, hd = await src.pin(), await dst.pin()
        side = dst if victim == "dst" else src
        phys = [gpu.translate(side.base + off) for off in range(0, side.total, 4096)]
        task = cocotb.start_soon(fd.h2c2h_dma(hs, hd, length, SRC_CUDA | DST_CUDA))
        await wait_for_run(rig, Target.C2H)
        # fires the free callback, which sleeps until the channel has stopped: the GPU
        # unmaps the pages when it is done
        rt.cudaFree(side.base)
        await expect_errno(task, errno.EFAULT, f"H2C2H with the {victim} freed")
        assert not [p for p in gpu.pins.values() if p.state.name == "REVOKING"], (
            "the free callback still sleeps after the DMA ioctl returned"
        )
        freed = [bytes(gpu.vram.read(p, 4096)) for p in phys]
        await Timer(20, "us")  # let anything in flight land
        assert [bytes(gpu.vram.read(p, 4096)) for p in phys] == freed, (
            f"bytes reached the freed {victim} after the callback returned"
        )
        assert all(r.rc in (0, -errno.EFAULT) for r in rig.drv.runs)
        gone = side.handle
        await expect_errno(fd.unpin_cuda(gone), errno.EINVAL, "unpin of a revoked handle")
        await expect_errno(fd.h2c_dma(gone, 0, 64, 1), errno.EINVAL, "DMA on a revoked handle")
        other = src if victim == "dst" else dst
        await fd.unpin_cuda(other.handle)
        rt.cudaFree(other.base)
        assert rig.tb.p2p.live_mappings() == 0
    # the device still works
    data = pattern(ram + 7, 6)
    a = Side(rig, ram + 7, False, fill=data)
    b = Side(rig, ram + 7, True, skew=0x10)
    await fd.h2c2h_dma(await a.pin(), await b.pin(), ram + 7, DST_CUDA)
    b.expect(data, "transfer after the revocations")


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def test_lost_interrupt_times_out(dut):
    """A masked MSI: the ioctl returns ETIMEDOUT after the driver timeout (the original
    hung), the engine is stopped, and the next transfers work."""
    cfg = DriverConfig(timeout_base_ns=30_000, timeout_ns_per_byte=5)
    rig = await bring_up(dut, cfg)
    fd, tb = rig.fd, rig.tb
    data = pattern(8192, 7)
    src = Side(rig, 8192, False, fill=data)
    for vec in range(rig.drv.nvec):
        tb.mask_msi(vec)
    t0 = rig.platform.now_ns()
    await expect_errno(fd.h2c_dma(await src.pin(), 0, 8192), errno.ETIMEDOUT, "lost MSI")
    waited = rig.platform.now_ns() - t0
    assert rig.drv.timeout_ns(8192) <= waited < rig.drv.timeout_ns(8192) + 20_000, waited
    assert sum(tb.msi_lost) >= 1, "the engine never raised the interrupt"
    h2c = rig.drv._chans[Target.H2C].xdma
    assert not await h2c.status() & regs.Stat.BUSY
    for vec in range(rig.drv.nvec):
        tb.mask_msi(vec, False)
    back = Side(rig, 8192, False, skew=3)
    await fd.h2c_dma(src.addr, 0, 8192)
    await fd.c2h_dma(await back.pin(), 0, 8192)
    back.expect(data, "round trip after the timeout")


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def test_poll_mode_and_engine_error(dut):
    """Poll-mode write-back completes transfers with no MSI at all; an IOMMU sending the
    engine to a dead address makes the H2C fail with EIO, and recovery works."""
    rig = await bring_up(dut, DriverConfig(poll_mode=True))
    fd, tb = rig.fd, rig.tb
    ram = rig.drv.fpga_ram_size
    msis = sum(tb.msi_count)
    data = pattern(ram + 999, 8)
    a = Side(rig, ram + 999, True, skew=0x333, fill=data)
    b = Side(rig, ram + 999, False, skew=0x444)
    await fd.h2c2h_dma(await a.pin(), await b.pin(), ram + 999, SRC_CUDA)
    b.expect(data, "poll-mode H2C2H")
    assert sum(tb.msi_count) == msis, "poll mode took interrupts"
    # a broken IOMMU mapping: BAR1 reads go to an address nobody decodes (UR)
    rig.platform.pci_dev.iommu = lambda addr: addr | (1 << 46)
    await expect_errno(fd.h2c_dma(a.handle, 0, 4096, 1), errno.EIO, "H2C from a dead address")
    rig.platform.pci_dev.iommu = None
    c = Side(rig, 4096, False)
    await fd.h2c_dma(a.handle, 0, 4096, 1)
    await fd.c2h_dma(await c.pin(), 0, 4096)
    c.expect(data[:4096], "after the error")


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_failed_copy_back_and_read_only_buffers(dut):
    """An ioctl whose result cannot be written back to the caller releases what it took:
    PIN_CUDA with its argument in read-only memory fails with EFAULT and leaves no pin
    and no handle (the next pin gets handle 0, cudaFree calls no free callback). A DMA
    into read-only host memory fails with EFAULT before the engine runs (its pages are
    pinned for writing) and stores nothing; the device works afterwards."""
    rig = await bring_up(dut)
    fd, rt, proc, gpu = rig.fd, rig.cuda, rig.process, rig.tb.gpu
    size = 64 << 10
    surf = rt.cudaMalloc(size)
    arg = proc.mmap(ctypes.sizeof(uapi.picoevb_rdma_pin_cuda))
    proc.write(arg, bytes(uapi.picoevb_rdma_pin_cuda(va=surf, size=size)))
    proc.mprotect(arg, False)

    def live_pins() -> int:
        return sum(p.state is PinState.LIVE for p in gpu.pins.values())

    await expect_errno(ioctl(fd, uapi.PICOEVB_IOC_PIN_CUDA, arg), errno.EFAULT, "PIN_CUDA")
    assert live_pins() == 0, "the failed PIN_CUDA left its pin live"
    assert not fd.surfaces, f"the failed PIN_CUDA left handles {sorted(fd.surfaces)}"
    handle = await fd.pin_cuda(surf, size)
    assert handle == 0, f"the next pin got handle {handle}: the failed one kept 0"
    await fd.unpin_cuda(handle)
    assert live_pins() == 0

    # DMA into read-only host memory: EFAULT, nothing stored, no engine run
    host = proc.malloc(PAGE)
    proc.write(host, pattern(PAGE, 4))
    ro = proc.mmap(2 * PAGE)
    proc.write(ro, bytes([GUARD]) * 2 * PAGE)
    proc.mprotect(ro, False)
    runs = len(rig.drv.runs)
    await expect_errno(fd.c2h_dma(ro, 0, PAGE), errno.EFAULT, "C2H into read-only")
    await expect_errno(fd.h2c2h_dma(host, ro + 16, 1000), errno.EFAULT, "H2C2H")
    assert len(rig.drv.runs) == runs, "the engine ran for a refused ioctl"
    assert proc.read(ro, 2 * PAGE) == bytes([GUARD]) * 2 * PAGE, "bytes reached read-only"
    # reading from read-only memory is fine, and the device works
    await fd.h2c2h_dma(ro, host, 1000)
    assert proc.read(host, 1000) == bytes([GUARD]) * 1000


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_error_paths_release_what_they_took(dut):
    """The leak audit of every ioctl path: each failure after something was acquired
    (host pages pinned by get_user_pages, a CUDA surface's DMA mapping, a pin and its
    handle) gives it all back: page pins, nv-p2p DMA mappings, live GPU pins, handles and
    the surfaces' mapping lists are as before the call."""
    rig = await bring_up(dut)
    fd, rt, proc, tb = rig.fd, rig.cuda, rig.process, rig.tb
    host_mem = rig.platform.host

    def held() -> tuple[int, ...]:
        return (
            host_mem.pinned_pages,
            tb.p2p.live_mappings(),
            sum(p.state is PinState.LIVE for p in tb.gpu.pins.values()),
            len(fd.surfaces),
            sum(len(s.maps) + len(s.transfers) for s in fd.surfaces.values()),
        )

    async def fails(coro, err: int, what: str) -> None:
        before = held()
        await expect_errno(coro, err, what)
        assert held() == before, f"{what}: held {held()} after, {before} before"

    size = 64 << 10
    surf = rt.cudaMalloc(size)
    handle = await fd.pin_cuda(surf, size)
    host = proc.malloc(size)
    tail = host - 16 + 17 * PAGE  # malloc: a 16-byte header, 17 pages mapped
    ro = proc.mmap(2 * PAGE)
    proc.mprotect(ro, False)
    # PIN_CUDA: the GPU refuses (host memory), no handle; UNPIN of an unknown handle
    await fails(fd.pin_cuda(host, 4096), errno.EINVAL, "PIN_CUDA of host memory")
    await fails(fd.unpin_cuda(handle + 5), errno.EINVAL, "UNPIN of an unknown handle")
    # CARD_INFO whose result cannot be copied out
    await fails(ioctl(fd, uapi.PICOEVB_IOC_CARD_INFO, ro), errno.EFAULT, "CARD_INFO")
    # a host range that ends in the guard page: the pages before it were pinned
    await fails(fd.h2c_dma(tail - 3 * PAGE, 0, 4 * PAGE), errno.EFAULT, "H2C past the map")
    await fails(fd.c2h_dma(ro, 0, 2 * PAGE), errno.EFAULT, "C2H into read-only pages")
    # H2C2H: the source acquired (pages, or a DMA mapping), then the destination fails
    await fails(fd.h2c2h_dma(host, 9, 64, DST_CUDA), errno.EINVAL, "host -> unknown handle")
    await fails(fd.h2c2h_dma(handle, tail - 8, 64, SRC_CUDA), errno.EFAULT, "CUDA -> unmapped")
    await fails(fd.h2c2h_dma(handle, ro, 64, SRC_CUDA), errno.EFAULT, "CUDA -> read-only")
    await fails(
        fd.h2c2h_dma(handle, handle, size + 1, SRC_CUDA | DST_CUDA),
        errno.EINVAL,
        "CUDA -> CUDA longer than the surface",
    )
    # the engine fails the transfer (reads to an address nobody decodes): EIO
    rig.platform.pci_dev.iommu = lambda addr: addr | (1 << 46)
    await fails(fd.h2c_dma(handle, 0, 4096, 1), errno.EIO, "H2C from a dead address")
    rig.platform.pci_dev.iommu = None
    # the transfer ran, but its result (dma_time_ns) cannot be copied out
    arg = proc.mmap(PAGE)
    proc.write(arg, bytes(uapi.picoevb_rdma_h2c_dma(src=host, dst=0, len=4096)))
    proc.mprotect(arg, False)
    await fails(ioctl(fd, uapi.PICOEVB_IOC_H2C_DMA, arg), errno.EFAULT, "H2C copy-back")
    # nothing is stuck: the pin is released, the device works
    await fd.unpin_cuda(handle)
    assert held() == (0, 0, 0, 0, 0), held()
    data = pattern(4096, 12)
    proc.write(host, data)
    back = Side(rig, 4096, False)
    await fd.h2c2h_dma(host, await back.pin(), 4096)
    back.expect(data, "after the failures")
    assert host_mem.pinned_pages == 0


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def test_h2c2h_overlapping(dut):
    """H2C2H with source and destination sharing bytes copies as the original driver
    does (chunks each read, landed in card RAM and written back before the next is read),
    not with the double-buffered chunks, whose reads would race the writes: a CUDA
    surface onto itself shifted by 32 KiB, 37 KiB long (one chunk: the source as it was,
    as memmove gives), and a host buffer shifted by 64 KiB, 100 KiB long (chunks no longer
    than the card RAM, hence than the shift: the result of a forward copy)."""
    rig = await bring_up(dut)
    fd, rt, proc = rig.fd, rig.cuda, rig.process
    both = uapi.PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA | uapi.PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA
    span, shift, length = 128 << 10, 32 << 10, 37 << 10
    base = rt.cudaMalloc(2 << 20)
    rt.cuPointerSetAttribute(1, SYNC, base)
    image = pattern(span, 11)
    rt.cudaMemcpy(base, image, span, H2D)
    src = await fd.pin_cuda(base, length)
    dst = await fd.pin_cuda(base + shift, length)
    await fd.h2c2h_dma(src, dst, length, both)
    got = bytearray(span)
    rt.cudaMemcpy(got, base, span, D2H)
    want = bytearray(image)
    want[shift : shift + length] = image[:length]
    assert got == want, "overlapping CUDA H2C2H"
    await fd.unpin_cuda(src)
    await fd.unpin_cuda(dst)

    span, shift, length = 200 << 10, 64 << 10, 100 << 10
    assert rig.drv.fpga_ram_size <= shift, "the expectation needs chunks <= the shift"
    ptr = proc.malloc(span)
    image = pattern(span, 12)
    proc.write(ptr, image)
    await fd.h2c2h_dma(ptr, ptr + shift, length)
    want = bytearray(image)
    for off in range(0, length, shift):  # a forward copy, a shift's worth at a time
        n = min(shift, length - off)
        want[shift + off : shift + off + n] = want[off : off + n]
    assert proc.read(ptr, span) == bytes(want), "overlapping host H2C2H"
    # a copy that does not overlap still runs double-buffered, and right
    out = proc.malloc(length)
    await fd.h2c2h_dma(ptr, out, length)
    assert proc.read(out, length) == bytes(want[:length])


async def _two_host_buffers(rig: Rig, length: int) -> tuple[int, int, Side, bytes]:
    data = pattern(length, 8)
    a, b = Side(rig, length, False, fill=data), Side(rig, length, False)
    return await a.pin(), await b.pin(), b, data


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_close_with_an_ioctl_queued(dut):
    """close() while a DMA ioctl runs on the file and a PIN_CUDA comes after it (issue
    35, race 3): the descriptor goes at once, so the pin fails with EBADF instead of
    pinning into a closed file; the file's release waits for the running DMA to leave,
    which finishes with its data; no pin and no BAR1 page is left."""
    rig = await bring_up(dut)
    gpu = rig.tb.gpu
    length = 3 * rig.drv.fpga_ram_size + 100
    bar1_free = gpu.bar1_free_bytes
    sa, sb, b, data = await _two_host_buffers(rig, length)
    surf = rig.cuda.cudaMalloc(1 << 16)
    fd2 = rig.open()
    dma = cocotb.start_soon(fd2.h2c2h_dma(sa, sb, length))
    await Timer(2, "us")  # the DMA ioctl holds the file's lock
    close = cocotb.start_soon(fd2.release())
    pin = cocotb.start_soon(fd2.pin_cuda(surf, 1 << 16))
    await expect_errno(pin, errno.EBADF, "PIN_CUDA issued after close()")
    await close
    assert not fd2.released, "release ran under a running ioctl"
    await dma
    b.expect(data, "the DMA running across close()")
    assert fd2.released and fd2 not in rig.drv.files
    assert not [p for p in gpu.pins.values() if p.state.name == "LIVE"], "a pin outlived close"
    assert gpu.bar1_free_bytes == bar1_free, "BAR1 pages held after close"


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_remove_with_an_ioctl_queued(dut):
    """remove() while a DMA ioctl runs and another ioctl waits behind it on the same file
    (issue 35, race 2): the running DMA stops its channel and fails with ENODEV, the
    queued ioctl fails with ENODEV once it has the lock, and no chain starts after
    remove() began; remove returns only after both left; every file's later ioctls fail
    with ENODEV; nothing stays pinned."""
    rig = await bring_up(dut)
    gpu = rig.tb.gpu
    length = 3 * rig.drv.fpga_ram_size + 100
    bar1_free = gpu.bar1_free_bytes
    sa, sb, _b, _data = await _two_host_buffers(rig, length)
    fd3 = rig.open()
    await fd3.pin_cuda(rig.cuda.cudaMalloc(1 << 16), 1 << 16)
    rig.drv.runs.clear()
    what = "the DMA running across remove()"
    dma = cocotb.start_soon(expect_errno(fd3.h2c2h_dma(sa, sb, length), errno.ENODEV, what))
    await Timer(2, "us")
    what = "an ioctl queued across remove()"
    queued = cocotb.start_soon(expect_errno(fd3.c2h_dma(sb, 0, 4096), errno.ENODEV, what))
    t_remove = rig.platform.now_ns()
    remove = cocotb.start_soon(rig.drv.remove())
    await Timer(1, "us")
    assert not remove.done(), "remove() returned with a DMA ioctl in the driver"
    await queued
    await dma
    await remove
    late = [r for r in rig.drv.runs if r.start_ns > t_remove]
    assert not late, f"chains started after remove() began: {late}"
    await expect_errno(fd3.card_info(), errno.ENODEV, "ioctl after remove()")
    await expect_errno(rig.fd.card_info(), errno.ENODEV, "the first file after remove()")
    assert gpu.bar1_free_bytes == bar1_free, "BAR1 pages held after remove()"


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_cudafree_then_repin_gets_no_stale_writes(dut):
    """cudaFree of a 2 MiB own-range destination right after the first C2H chunk of a
    host -> CUDA H2C2H landed, and at once a second file pins a new 2 MiB buffer
    (issue 35, race 1). The free callback sleeps until the channel has stopped: until
    then the freed pages stay mapped and reserved, so the new pin gets other BAR1 pages
    and other memory, and not a byte of the aborted transfer reaches the new buffer; the
    ioctl fails with EFAULT; the pages come back once the callback is done."""
    rig = await bring_up(dut)
    fd, rt, gpu = rig.fd, rig.cuda, rig.tb.gpu
    length = 192 << 10
    data = pattern(length, 9)
    src = Side(rig, length, False, fill=data)
    dst = Side(rig, length, True, own_pages=True)
    hs, hd = await src.pin(), await dst.pin()
    old_pages = set(next(p for p in gpu.pins.values() if p.state.name == "LIVE").bar1_pages)
    fd2 = rig.open()
    what = "H2C2H into a surface freed under it"
    task = cocotb.start_soon(
        expect_errno(fd.h2c2h_dma(hs, hd, length, DST_CUDA), errno.EFAULT, what)
    )
    await wait_for_run(rig, Target.C2H)
    rt.cudaFree(dst.base)  # the callback aborts the DMA and sleeps until it has stopped
    size = 2 << 20
    fresh = rt.cudaMalloc(size)
    rt.cuPointerSetAttribute(1, SYNC, fresh)
    rt.cudaMemcpy(fresh, b"\x77" * size, size, H2D)
    await fd2.pin_cuda(fresh, size)
    new_pin = [p for p in gpu.pins.values() if p.state.name == "LIVE"][-1]
    assert not old_pages & set(new_pin.bar1_pages), "the new pin got the freed BAR1 pages"
    await task
    await Timer(20, "us")  # let anything in flight land
    got = bytearray(size)
    rt.cudaMemcpy(got, fresh, size, D2H)
    assert got == b"\x77" * size, "the aborted transfer wrote into the new surface"
    revoked = [p for p in gpu.pins.values() if p.state.name == "REVOKED"]
    assert len(revoked) == 1 and not set(revoked[0].bar1_pages) & set(new_pin.bar1_pages)


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_dmabuf_pin_and_dma(dut):
    """PIN_DMABUF (the model's extension): CUDA memory exported with
    cuMemGetHandleForAddressRange and imported by fd moves data both ways like a pinned
    handle. Unlike nv-p2p, cudaFree does not revoke it: a DMA after the free still lands
    in the exported memory, and the VRAM comes back only when the handle is unpinned and
    the fd closed (nv-dmabuf.c; measured, probes/dmabuf.txt). Bad fds fail cleanly."""
    rig = await bring_up(dut)
    fd, rt, tb, gpu = rig.fd, rig.cuda, rig.tb, rig.tb.gpu
    n = 3 * 64 * 1024 + 4096  # four BAR1 pages, the last one partly
    base_used = gpu.vram.size - gpu.vram_free_bytes
    surf = rt.cudaMalloc(2 << 20)
    dmabuf_fd = rt.cuMemGetHandleForAddressRange(surf + 64 * 1024, n, 1, 0)
    handle, size = await fd.pin_dmabuf(dmabuf_fd)
    assert size == n
    sg = fd.surfaces[handle].chunks
    assert sum(k for _a, k in sg) == n and all(0 < k <= 0x0FFFF000 for _a, k in sg)
    # host -> card -> CUDA and back, through the handle
    data = pattern(n, 5)
    host = rig.process.malloc(n)
    rig.process.write(host, data)
    await fd.h2c2h_dma(host, handle, n, DST_CUDA)
    assert bytes(gpu.read_va(surf + 64 * 1024, n)) == data
    back = rig.process.malloc(n)
    await fd.h2c2h_dma(handle, back, n, SRC_CUDA)
    assert rig.process.read(back, n) == data
    # cudaFree: nothing is revoked, a DMA still reaches the exported pages through BAR1
    rt.cudaFree(surf)
    assert tb.gpu.fault_log == []
    data2 = pattern(n, 6)
    rig.process.write(host, data2)
    await fd.h2c2h_dma(host, handle, n, DST_CUDA)
    got = b"".join(gpu.bar1_read(a - gpu.bar1_bus_address, k) for a, k in sg)
    assert got == data2, "the DMA after cudaFree missed the exported memory"
    assert gpu.vram.size - gpu.vram_free_bytes - base_used == 2 << 20
    await fd.unpin_cuda(handle)
    assert gpu.vram.size - gpu.vram_free_bytes - base_used == 2 << 20, "the fd still holds it"
    assert rig.process.close(dmabuf_fd) == 0
    assert gpu.vram.size - gpu.vram_free_bytes == base_used
    assert not tb.dmabuf.warnings and not tb.dmabuf.live
    # bad fds: none, and a file that is not a dma-buf
    await expect_errno(fd.pin_dmabuf(dmabuf_fd), errno.EBADF, "PIN_DMABUF of a closed fd")

    class NotADmaBuf:
        def fput(self) -> None:
            pass

    other = rig.process.fd_install(NotADmaBuf())
    await expect_errno(fd.pin_dmabuf(other), errno.EINVAL, "PIN_DMABUF of another file")
    # padding that is not zero: -EINVAL before anything is imported, so the field can be
    # given a meaning later (Documentation/process/botching-up-ioctls.rst)
    surf = rt.cudaMalloc(2 << 20)
    dmabuf_fd = rt.cuMemGetHandleForAddressRange(surf, 64 * 1024, 1, 0)
    padded = uapi.picoevb_rdma_pin_dmabuf(fd=dmabuf_fd, pad=0xDEADBEEF)
    await expect_errno(
        ioctl(fd, uapi.PICOEVB_IOC_PIN_DMABUF, padded), errno.EINVAL, "PIN_DMABUF", "padding"
    )
    assert not fd.surfaces and padded.handle == 0 and padded.size == 0
    assert [len(b.attachments) for b in tb.dmabuf.live] == [0], "the refused pin attached"
    handle, size = await fd.pin_dmabuf(dmabuf_fd)
    assert size == 64 * 1024
    await fd.unpin_cuda(handle)
    assert rig.process.close(dmabuf_fd) == 0
    rt.cudaFree(surf)
    assert gpu.vram.size - gpu.vram_free_bytes == base_used


@cocotb.test(timeout_time=60_000, timeout_unit="ms")
async def test_ioctl_fuzz(dut):
    """The ioctl surface fuzzed against the RTL: ``PEVB_FUZZ_EXAMPLES`` calls (60 in the
    suite; ``make fuzz`` runs more) of every ioctl and of unknown numbers, with arguments
    drawn from SEED: each field a value at an edge (a buffer's start and end, a guard
    page, a read-only page, an unmapped address, handles live and gone, lengths of 0, a
    page, the card RAM and past it) or random bits, passed as a pointer, a struct,
    random bytes, or bytes of the wrong size. Each call returns 0 or a named errno and
    never raises; no byte outside the buffers a call names changes; once the file is
    closed nothing stays pinned, mapped or handed out, and a transfer after it all is
    exact."""
    rig = await bring_up(dut)
    fd, rt, proc, tb = rig.fd, rig.cuda, rig.process, rig.tb
    host_mem = rig.platform.host
    rng = random.Random(int(os.environ.get("SEED", "1")) * 7919 + 1)
    examples = int(os.environ.get("PEVB_FUZZ_EXAMPLES", "60"))
    ram = rig.drv.fpga_ram_size
    size = 64 << 10
    surf = rt.cudaMalloc(size)
    host = proc.malloc(size)
    canary = proc.malloc(4 * PAGE)
    proc.write(canary, pattern(4 * PAGE, 99))
    ro = proc.mmap(2 * PAGE)
    proc.mprotect(ro, False)
    handles = [await fd.pin_cuda(surf, size)]
    pointers = [host, host + 1, host + size - 1, host - 16 + 17 * PAGE, ro, canary - 4096, 0]
    lengths = [0, 1, 3, 64, PAGE - 1, PAGE, 2 * PAGE + 5, size, size + 1, ram, ram + 1]
    offsets = [0, 1, ram - 1, ram - PAGE, ram, ram + 4096]
    allowed = {
        errno.EINVAL,
        errno.EFAULT,
        errno.ENOMEM,
        errno.EBADF,
        errno.EAGAIN,
        errno.ETIMEDOUT,
        errno.ENOTTY,
        errno.E2BIG,
        errno.ENOSPC,
    }

    def value(name: str) -> int:
        if rng.random() < 0.15:
            return rng.getrandbits(64)
        if name in ("src", "dst", "va"):
            return rng.choice(pointers + handles + offsets)
        if name in ("len", "size"):
            return rng.choice(lengths)
        if name == "handle":
            return rng.choice([*handles, 77, 2**31, 2**32 - 1])
        if name == "flags":
            return rng.choice([0, 1, 2, 3, 4])
        if name == "timeout_ns":
            return rng.choice([0, 1000, 20_000])
        if name == "fd":
            return rng.choice([-1, 0, 3, 1000])
        return rng.choice([0, 1, rng.getrandbits(32)])

    def valid(cmd: int, ctype):
        """A call that would succeed: the fuzz changes some of its fields."""
        s = ctype()
        n = rng.choice([1, 5, 64, 1000, PAGE, 3 * PAGE + 7])
        card = rng.randrange(0, ram - n)
        cuda = rng.random() < 0.3 and handles
        if cmd in (uapi.PICOEVB_IOC_H2C_DMA, uapi.PICOEVB_IOC_C2H_DMA):
            s.len, s.flags = n, 1 if cuda else 0
            ptr = rng.choice(handles) if cuda else host + rng.randrange(0, size - n)
            s.src, s.dst = (ptr, card) if cmd == uapi.PICOEVB_IOC_H2C_DMA else (card, ptr)
        elif cmd == uapi.PICOEVB_IOC_H2C2H_DMA:
            s.src, s.dst, s.len = host + rng.randrange(0, size - n), host, n
        elif cmd == uapi.PICOEVB_IOC_PIN_CUDA:
            s.va, s.size = surf + PAGE * rng.randrange(0, 8), rng.choice([PAGE, 8 * PAGE])
        elif cmd == uapi.PICOEVB_IOC_UNPIN_CUDA and handles:
            s.handle = rng.choice(handles)
        elif cmd == uapi.PICOEVB_IOC_MAILBOX_READ:
            s.timeout_ns = 0
        return s

    cmds = [*uapi.ARG_TYPES, 0xC0DE, uapi.PICOEVB_IOC_PIN_CUDA + 0x100]
    counts: collections.Counter[str] = collections.Counter()
    for _ in range(examples):
        cmd = rng.choice(cmds)
        ctype = uapi.ARG_TYPES.get(cmd)
        if ctype is None:
            arg = value("value")
        else:
            s = valid(cmd, ctype)
            fields = [f for f, _t in ctype._fields_]
            for fname in rng.sample(fields, min(len(fields), rng.choice([0, 1, 1, 2, 9]))):
                bits = ctypes.sizeof(dict(ctype._fields_)[fname]) * 8
                setattr(s, fname, value(fname) & ((1 << bits) - 1))
            if cmd == uapi.PICOEVB_IOC_MAILBOX_READ:
                # (a wait of simulated time, up to 2**50 ns: kept short, so that N calls
                # stay within the test's bound)
                s.timeout_ns %= 50_000
            how = rng.random()
            if how < 0.5:
                arg = s
            elif how < 0.8:  # a pointer to it in the process
                arg = proc.malloc(ctypes.sizeof(ctype))
                proc.write(arg, bytes(s))
            elif how < 0.85:
                arg = bytearray(bytes(s)[: rng.randrange(ctypes.sizeof(ctype))])
            elif how < 0.9:  # random bytes, of the struct's size (a mailbox wait kept short)
                arg = bytearray(rng.randbytes(ctypes.sizeof(ctype)))
                if cmd == uapi.PICOEVB_IOC_MAILBOX_READ:
                    arg[:8] = (int.from_bytes(arg[:8], "little") % 50_000).to_bytes(8, "little")
            else:
                arg = rng.choice([ro, 0, canary - 4096, rng.getrandbits(64)])
        try:
            rc = await fd.ioctl(cmd, arg)
        except Exception as e:  # (the invariant: nothing raises)
            raise AssertionError(f"ioctl {cmd:#x} with {arg!r} raised {e!r}") from e
        name = uapi.IOCTL_NAMES.get(cmd, "unknown")
        assert rc == 0 or -rc in allowed, f"{name} returned {rc} ({fd.last_error})"
        counts[f"{name} {'ok' if rc == 0 else errno.errorcode[-rc]}"] += 1
        if cmd == uapi.PICOEVB_IOC_PIN_CUDA and rc == 0:
            got = arg if isinstance(arg, uapi._Struct) else None
            if isinstance(arg, int):
                got = uapi.picoevb_rdma_pin_cuda.from_bytes(proc.read(arg, ctypes.sizeof(ctype)))
            if got is not None:
                handles.append(got.handle)
        assert proc.read(canary, 4 * PAGE) == pattern(4 * PAGE, 99), f"{name} wrote the canary"
    tb.log.info("ioctl fuzz: %d calls: %s", examples, dict(sorted(counts.items())))
    report = os.environ.get("PEVB_FUZZ_REPORT")
    if report:
        path = Path(report)
        old = json.loads(path.read_text()) if path.exists() else {}
        entry = old.setdefault("driver ioctls (RTL)", {"tried": 0, "refused": 0})
        entry["tried"] += examples
        entry["refused"] += sum(n for k, n in counts.items() if not k.endswith(" ok"))
        path.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n")
    await fd.release()
    assert host_mem.pinned_pages == 0, "pages still pinned after close"
    assert tb.p2p.live_mappings() == 0, "nv-p2p mappings left after close"
    assert not any(p.state is PinState.LIVE for p in tb.gpu.pins.values()), "GPU pins left"
    # the device still moves data exactly
    fd2 = rig.drv.open(proc)
    data = pattern(8192, 5)
    proc.write(host, data)
    await fd2.h2c_dma(host, 0, 8192)
    back = proc.malloc(8192)
    await fd2.c2h_dma(back, 0, 8192)
    assert proc.read(back, 8192) == data, "the card after the fuzz"
