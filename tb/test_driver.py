"""cocotb tests of the picoevb-rdma driver model through the RTL: every ioctl's success and
error paths, host/CUDA combinations of H2C2H, odd surfaces, chains longer than the card
RAM, cudaFree during a transfer, a lost interrupt, poll mode."""

from __future__ import annotations

import ctypes
import errno
import random

import cocotb
import numpy as np
from cocotb.triggers import Timer

from cuda_model import CUpointer_attribute, cudaMemcpyKind
from driver_model import regs, uapi
from driver_model.host import PAGE_SIZE
from driver_model.picoevb import DriverConfig, ioctl
from driver_model.regs import Target

from .platform import Rig, bring_up

D2H = cudaMemcpyKind.cudaMemcpyDeviceToHost
H2D = cudaMemcpyKind.cudaMemcpyHostToDevice
SYNC = CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS
SRC_CUDA = uapi.PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA
DST_CUDA = uapi.PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA
GUARD = 0xA5


def pattern(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


async def expect_errno(coro, err: int, what: str) -> None:
    try:
        await coro
    except OSError as e:
        assert e.errno == err, f"{what}: errno {e.errno} ({e}), expected {err}"
        return
    raise AssertionError(f"{what}: succeeded, expected errno {err}")


class Side:
    """One side of a transfer: a malloc'd host buffer or a pinned cudaMalloc surface, with
    guard bytes around the ``length`` bytes at ``skew`` (an offset into the buffer)."""

    def __init__(self, rig: Rig, length: int, cuda: bool, skew: int = 0, fill: bytes = b"",
                 pad: int = 4096) -> None:
        self.rig, self.length, self.cuda, self.skew, self.pad = rig, length, cuda, skew, pad
        self.total = pad + skew + length + pad
        image = bytearray([GUARD]) * self.total
        if fill:
            image[pad + skew:pad + skew + length] = fill
        self.image = bytes(image)
        self.handle: int | None = None
        if cuda:
            rt = rig.cuda
            self.base = rt.cudaMalloc(self.total)
            rt.cuPointerSetAttribute(1, SYNC, self.base)
            rt.cudaMemcpy(self.base, self.image, self.total, H2D)
        else:
            self.base = rig.process.malloc(self.total)
            rig.process.write(self.base, self.image)

    @property
    def addr(self) -> int:
        """Address of the transfer's first byte."""
        return self.base + self.pad + self.skew

    async def pin(self) -> int:
        """Pin the transfer's range (not the guards' pages beyond it) and return the
        handle to pass as src/dst, or the user pointer for host memory."""
        if not self.cuda:
            return self.addr
        self.handle = await self.rig.fd.pin_cuda(self.addr, self.length)
        return self.handle

    def read_all(self) -> bytes:
        if self.cuda:
            out = bytearray(self.total)
            self.rig.cuda.cudaMemcpy(out, self.base, self.total, D2H)
            return bytes(out)
        return self.rig.process.read(self.base, self.total)

    def expect(self, data: bytes, what: str) -> None:
        """The transfer bytes equal ``data``, guards untouched."""
        got = self.read_all()
        want = bytearray(self.image)
        want[self.pad + self.skew:self.pad + self.skew + self.length] = data
        if got != bytes(want):
            first = next(i for i in range(self.total) if got[i] != want[i])
            raise AssertionError(f"{what}: byte {first - self.pad - self.skew:#x} of the "
                                 f"transfer is {got[first]:#04x}, expected {want[first]:#04x}")


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_probe_led_card_info(dut):
    """probe found the engine; LED and CARD_INFO through both call styles; bad ioctls."""
    rig = await bring_up(dut)
    tb, fd = rig.tb, rig.fd
    assert rig.drv.fpga_ram_size == tb.profile.ram_size
    assert rig.drv.nvec >= 2, "MSI vectors for H2C and C2H"
    assert all(a[:2] == (1, 1) for a in rig.drv.alignments.values())
    await ioctl(fd, uapi.PICOEVB_IOC_LED, 0x2)
    assert await tb.user_read32(regs.USER_LED) == 0x2      # the read flushes the posted write
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
    for cmd in (uapi.IOWR("P", 7, uapi.picoevb_rdma_h2c_dma),
                uapi.IOWR("P", 3, ctypes.c_uint64), uapi.IOR("Q", 4, ctypes.c_uint64)):
        await expect_errno(ioctl(fd, cmd, ptr), errno.EINVAL, f"ioctl {cmd:#x}")
    # a pointer to unmapped user memory
    await expect_errno(ioctl(fd, uapi.PICOEVB_IOC_CARD_INFO, 0x1000), errno.EFAULT,
                       "CARD_INFO to NULL page")
    await expect_errno(ioctl(fd, uapi.PICOEVB_IOC_PIN_CUDA, bytearray(8)), errno.EFAULT,
                       "PIN_CUDA with a short argument")


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_h2c2h_four_combinations(dut):
    """H2C2H host->host, host->CUDA, CUDA->host, CUDA->CUDA, longer than the card RAM,
    odd offsets; data, guards and dma_time_ns checked; chunks overlap."""
    rig = await bring_up(dut)
    ram = rig.drv.fpga_ram_size
    length = ram + 0x1234 + 12             # 3 chunks of half the card RAM, the last short
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
