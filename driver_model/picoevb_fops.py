"""The picoevb-rdma driver model's file operations: an open file of the card (its
helpers, mmap of the card's user BAR, the ioctl dispatch with its checks, release) and the
friendly API the demos call; and :func:`ioctl`, the user-space call. Each ioctl's body is in
the module of its part (:mod:`.picoevb_pin`, :mod:`.picoevb_dma`, :mod:`.picoevb_mailbox`)."""

from __future__ import annotations

import ctypes
import errno
import logging
import os
from typing import Any

from . import regs, uapi
from .host import PAGE_SIZE, UserProcess
from .picoevb_dma import DmaIoctls
from .picoevb_mailbox import MailboxIoctls
from .picoevb_pin import PinIoctls
from .picoevb_state import (
    Surface,
)
from .regs import BAR_USER

log = logging.getLogger("driver_model.picoevb")

# the driver (driver_model.picoevb's PicoevbRdma, which imports this module)
Driver = Any


class PicoevbFile(PinIoctls, DmaIoctls, MailboxIoctls):
    """One open file of ``/dev/picoevb``: its process, its CUDA surface handles (an IDR)
    and its lock. ``ioctl`` is the kernel entry point (0 or -errno)."""

    def __init__(self, drv: Driver, process: UserProcess) -> None:
        self.drv = drv
        self.process = process
        self.surfaces: dict[int, Surface] = {}
        self.lock = drv.platform.mutex()
        # close() has dropped the descriptor: new ioctls fail with EBADF
        self.closed = False
        # the file's references besides the descriptor: one per ioctl inside the driver
        # (Linux's fdget); ``release`` runs when the last goes, never under an ioctl
        self.refs = 0
        # release has run: the pins are put
        self.released = False
        # why the last ioctl failed, in words (what the driver would dev_dbg)
        self.last_error = ""

    def _fail(self, err: int, why: str) -> int:
        """An ioctl fails with ``err`` because of ``why``: noted, logged; ``-err``."""
        self.last_error = why
        log.info("%s: %s: %s", self.drv.name, errno.errorcode.get(err, err), why)
        return -err

    # ------------------------------------------------------------------ helpers

    def _copy_from_user(self, arg, ctype: type[uapi._Struct]):
        size = ctypes.sizeof(ctype)
        if isinstance(arg, int):
            data = self.process.copy_from_user(arg, size)
        elif isinstance(arg, ctypes.Structure | bytearray | memoryview | bytes):
            data = bytes(arg)
            if len(data) != size:
                data = None
        else:
            data = None
        return None if data is None else ctype.from_bytes(data)

    def _copy_to_user(self, arg, value: uapi._Struct) -> bool:
        data = value.to_bytes()
        if isinstance(arg, int):
            return self.process.copy_to_user(arg, data)
        if isinstance(arg, ctypes.Structure) and ctypes.sizeof(arg) == len(data):
            ctypes.memmove(ctypes.addressof(arg), data, len(data))
            return True
        if isinstance(arg, bytearray | memoryview) and len(arg) == len(data):
            arg[:] = data
            return True
        return False

    # ------------------------------------------------------------------ mmap
    def mmap(self, length: int, offset: int = 0, writable: bool = True) -> int:
        """``mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset)``: BAR
        ``offset >> PICOEVB_MMAP_BAR_SHIFT`` from the offset's low bits, mapped into the
        process uncached with ``io_remap_pfn_range`` (``VM_IO | VM_PFNMAP``); its address,
        or -EINVAL (no such BAR, an offset not page aligned, a range past the BAR's end),
        -EBADF on a closed file, -ENODEV after remove."""
        if self.closed:
            return self._fail(errno.EBADF, "the file is closed")
        if self.drv.removed:
            return self._fail(errno.ENODEV, "the device has been removed")
        bar = offset >> uapi.PICOEVB_MMAP_BAR_SHIFT
        off = offset & ((1 << uapi.PICOEVB_MMAP_BAR_SHIFT) - 1)
        p = self.drv.platform
        size = p.pci_resource_len(bar) if bar < 6 else 0
        if not size or off % PAGE_SIZE or length <= 0 or off + length > size:
            return self._fail(
                errno.EINVAL, f"mmap of {length} bytes at offset {offset:#x}: BAR{bar} is {size}"
            )
        name = {p.bars.user: "card user BAR", p.bars.dma: "card DMA BAR"}.get(bar, f"BAR{bar}")
        return self.process.mmap_io(p.pci_resource_start(bar) + off, length, writable, name=name)

    # ------------------------------------------------------------------ ioctls
    async def ioctl(self, cmd: int, arg) -> int:
        """``unlocked_ioctl``: 0 or a negative errno (why: :attr:`last_error`)."""
        self.last_error = ""
        if self.closed:
            return self._fail(errno.EBADF, "the file is closed")
        if self.drv.removed:
            return self._fail(errno.ENODEV, "the device has been removed")
        self.refs += 1
        self.drv._ioctl_enter()
        try:
            return await self._ioctl(cmd, arg)
        finally:
            self.drv._ioctl_leave()
            self.refs -= 1
            if self.refs == 0 and self.closed:
                await self.release_resources()

    async def _ioctl(self, cmd: int, arg) -> int:
        if cmd not in uapi.ARG_TYPES:
            return self._fail(errno.EINVAL, f"unknown ioctl {cmd:#010x}")
        if cmd == uapi.PICOEVB_IOC_LED:
            if not isinstance(arg, int):
                return self._fail(errno.EINVAL, "the LED value is not a number")
            await self.drv.platform.iowrite32(BAR_USER, regs.USER_LED, arg & 0xFFFFFFFF)
            return 0
        ctype = uapi.ARG_TYPES[cmd]
        assert ctype is not None
        params = self._copy_from_user(arg, ctype)
        if params is None:
            return self._fail(errno.EFAULT, f"cannot read the {ctype.__name__} argument")
        if cmd == uapi.PICOEVB_IOC_MAILBOX_READ:  # waits for the card: not under the lock
            rc, out = await self._mailbox_read(params)
            if rc == 0 and not self._copy_to_user(arg, out):
                rc = self._fail(errno.EFAULT, "cannot write the mailbox result back")
            return rc
        async with self.lock:
            if self.drv.removed:  # removed while this ioctl waited for the lock
                return self._fail(errno.ENODEV, "the device has been removed")
            handler = {
                uapi.PICOEVB_IOC_PIN_DMABUF: self._pin_dmabuf,
                uapi.PICOEVB_IOC_PIN_CUDA: self._pin_cuda,
                uapi.PICOEVB_IOC_UNPIN_CUDA: self._unpin_cuda,
                uapi.PICOEVB_IOC_CARD_INFO: self._card_info,
                uapi.PICOEVB_IOC_H2C2H_DMA: self._h2c2h_dma,
                uapi.PICOEVB_IOC_H2C_DMA: self._h2c_dma,
                uapi.PICOEVB_IOC_C2H_DMA: self._c2h_dma,
            }[cmd]
            rc, out = await handler(params)
            if rc == 0 and out is not None and not self._copy_to_user(arg, out):
                rc = self._fail(errno.EFAULT, f"cannot write the {ctype.__name__} result back")
                if cmd in (uapi.PICOEVB_IOC_PIN_CUDA, uapi.PICOEVB_IOC_PIN_DMABUF):
                    # the caller never learns the handle: release the pin and the handle,
                    # as the original driver does
                    surf = self.surfaces.pop(out.handle)
                    await self._put(surf)
            return rc

    async def _card_info(self, p: uapi.picoevb_rdma_card_info):
        p.fpga_ram_size = self.drv.fpga_ram_size
        return 0, p

    async def release(self) -> None:
        """``close()``: the descriptor goes (later ioctls fail with EBADF); the file's
        ``release``, which unpins every surface still pinned, runs now if no ioctl holds
        the file, else when the last one leaves."""
        if self.closed:
            return
        self.closed = True
        if self.refs == 0:
            await self.release_resources()

    async def release_resources(self) -> None:
        """The file's ``release`` (also what ``remove()`` does to a file still open):
        every surface still pinned is put; once."""
        if self.released:
            return
        self.released = True
        async with self.lock:
            for h in sorted(self.surfaces):
                surf = self.surfaces.pop(h)
                log.info("%s: release unpins handle %d", self.drv.name, h)
                await self._put(surf)
        if self in self.drv.files:
            self.drv.files.remove(self)

    # ------------------------------------------------------------------ friendly API
    async def led(self, value: int) -> None:
        """Set the LEDs (active low: 0 lights all three)."""
        await ioctl(self, uapi.PICOEVB_IOC_LED, value)

    async def pin_cuda(self, va: int, size: int) -> int:
        """Pin a CUDA range; its handle."""
        p = uapi.picoevb_rdma_pin_cuda(va=va, size=size)
        await ioctl(self, uapi.PICOEVB_IOC_PIN_CUDA, p)
        return p.handle

    async def pin_dmabuf(self, fd: int) -> tuple[int, int]:
        """Import a dma-buf fd (the extension ioctl); (handle, size)."""
        p = uapi.picoevb_rdma_pin_dmabuf(fd=fd)
        await ioctl(self, uapi.PICOEVB_IOC_PIN_DMABUF, p)
        return p.handle, p.size

    async def unpin_cuda(self, handle: int) -> None:
        """Unpin a handle."""
        await ioctl(self, uapi.PICOEVB_IOC_UNPIN_CUDA, uapi.picoevb_rdma_unpin_cuda(handle))

    async def card_info(self) -> int:
        """The card RAM size in bytes."""
        p = uapi.picoevb_rdma_card_info()
        await ioctl(self, uapi.PICOEVB_IOC_CARD_INFO, p)
        return p.fpga_ram_size

    async def mailbox_read(self, m: uapi.picoevb_rdma_mailbox | None = None) -> int:
        """The oldest value of the card's mailbox (the extension ioctl; waits up to
        ``m.timeout_ns``, 1 ms when no struct is given)."""
        m = m if m is not None else uapi.picoevb_rdma_mailbox(timeout_ns=1_000_000)
        await ioctl(self, uapi.PICOEVB_IOC_MAILBOX_READ, m)
        return m.value

    async def _timed(self, cmd: int, p) -> int:
        await ioctl(self, cmd, p)
        return p.dma_time_ns

    async def h2c2h_dma(self, src: int, dst: int, length: int, flags: int = 0) -> int:
        """Source -> card -> destination; the DMA time in ns."""
        return await self._timed(
            uapi.PICOEVB_IOC_H2C2H_DMA,
            uapi.picoevb_rdma_h2c2h_dma(src=src, dst=dst, len=length, flags=flags),
        )

    async def h2c_dma(self, src: int, card: int, length: int, flags: int = 0) -> int:
        """Source -> card RAM at ``card``; the DMA time in ns."""
        return await self._timed(
            uapi.PICOEVB_IOC_H2C_DMA,
            uapi.picoevb_rdma_h2c_dma(src=src, dst=card, len=length, flags=flags),
        )

    async def c2h_dma(self, dst: int, card: int, length: int, flags: int = 0) -> int:
        """Card RAM at ``card`` -> destination; the DMA time in ns."""
        return await self._timed(
            uapi.PICOEVB_IOC_C2H_DMA,
            uapi.picoevb_rdma_c2h_dma(dst=dst, src=card, len=length, flags=flags),
        )


async def ioctl(fd: PicoevbFile, request: int, arg=0) -> int:
    """User-space ``ioctl(2)``: returns 0, or raises :class:`OSError` with the errno."""
    rc = await fd.ioctl(request, arg)
    if rc < 0:
        name = uapi.IOCTL_NAMES.get(request, f"{request:#x}").removeprefix("PICOEVB_IOC_")
        why = fd.last_error or os.strerror(-rc)
        raise OSError(-rc, f"{name}: {errno.errorcode.get(-rc, -rc)}: {why}")
    return rc
