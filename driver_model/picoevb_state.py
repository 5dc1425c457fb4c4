"""The picoevb-rdma driver model's constants and records: its limits, configuration, the
record of each run, and the state of a channel, a transfer, a pinned surface and a
pinned user buffer, and letting go of an imported dma-buf (:mod:`driver_model.picoevb` is
the driver)."""

from __future__ import annotations

import errno
import logging
from dataclasses import dataclass, field
from typing import Any

from cuda_model import CallbackPending

from . import regs, uapi
from .desc import DESC_SIZE, MAX_CHAIN
from .dmabuf import DMA_BIDIRECTIONAL, DmaBuf, DmaBufAttachment
from .host import PAGE_SIZE, UserProcess
from .regs import BAR_DMA, Stat, Target
from .sg import Scatter
from .xdma import WriteBack, XdmaChannel

log = logging.getLogger("driver_model.picoevb")

# the driver and an open file of it as the records see them (driver_model.picoevb's
# PicoevbRdma and picoevb_fops's PicoevbFile, which import this module: named here
# without an import, so that no two of the driver's modules import each other)
Driver = Any
File = Any

# the original's longest descriptor (keeps lengths DWORD multiples when split)
DESC_CHUNK_MAX = 0x0FFFFFFC
# H2C2H chunk cap: a chunk's chain stays under MAX_CHAIN descriptors with 4 KiB pages
H2C2H_CHUNK_MAX = 4 << 20
INT_MAX = (1 << 31) - 1
# how long a DMA ioctl waits for a function reset in progress to end
RESET_WAIT_NS = 10_000_000.0
# the longest a MAILBOX_READ waits (2**50 ns, 13 days): a longer timeout_ns is taken as
# this, as a kernel's saturating conversion to jiffies would (and a simulator's timer
# counts its steps in 64 bits)
MAILBOX_MAX_WAIT_NS = 1 << 50
# status bits the original treats as a failed run
FAIL_BITS = regs.STAT_ERROR_MASK | int(Stat.IDLE_STOPPED)
H2C2H_FLAGS = uapi.PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA | uapi.PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA
# H2C on vector 0, C2H on vector 1, the mailbox's user interrupt on vector 2 (the last
# granted where fewer are)
MSI_VECTORS_WANTED = 3


class ProbeError(OSError):
    """probe() failed; ``errno`` says why (ENODEV: not our engine)."""


@dataclass
class DriverConfig:
    """Knobs a module parameter would set.

    The DMA timeout of a chain is ``timeout_base_ns + bytes * timeout_ns_per_byte`` of
    simulated time (about 4x a Gen2 x1 transfer by default).
    """

    poll_mode: bool = False
    poll_interval_ns: float = 1000.0
    # in poll mode, read the status register every this many polls (catches a stop that
    # wrote no write-back)
    poll_status_every: int = 8
    timeout_base_ns: float = 200_000.0
    timeout_ns_per_byte: float = 10.0
    # how long a stopped (or failed) channel may take to go idle before the driver resets
    # the function: longer than the completion timeouts that end its reads (the hard
    # IP's default range, 200 us in the model, and the engine's own, 131072 cycles: 1 ms
    # at 125 MHz)
    stop_drain_ns: float = 1_500_000.0
    # the interrupt taken: "msi" (MSI-X where the card has it, else MSI) or "intx" (the
    # legacy interrupt, as NVIDIA's picoevb-rdma does)
    interrupts: str = "msi"


@dataclass(frozen=True)
class RunRecord:
    """One chain run, for tests and reports: direction, start/end (ns), descriptors,
    bytes, and the result (0 or -errno)."""

    direction: Target
    start_ns: float
    end_ns: float
    descriptors: int
    nbytes: int
    rc: int


class Channel:
    """One XDMA channel with its descriptor ring and poll-mode write-back word."""

    def __init__(self, drv: Driver, direction: Target, vector: int) -> None:
        self.direction = direction
        self.vector = vector
        # the picoevb's BARs are fixed, as the original driver maps them
        self.xdma = XdmaChannel(drv.platform, direction, vector=vector, bar=BAR_DMA)
        self.ring = drv.platform.host.dma_alloc_coherent(MAX_CHAIN * DESC_SIZE)
        self.wb = drv.platform.host.dma_alloc_coherent(PAGE_SIZE)
        self.writeback = WriteBack(
            self.wb.bus, lambda: int.from_bytes(self.wb.read(0, 4), "little")
        )
        self.expected = 0
        self.nbytes = 0
        self.t_start = 0.0
        self.epoch = 0  # the driver's reset epoch the running chain was started in

    @property
    def name(self) -> str:
        return self.direction.name


@dataclass(eq=False)
class Transfer:
    """One DMA ioctl in flight: the surfaces it uses and why it was aborted, if it was."""

    drv: Driver
    aborted: str | None = None
    waiting: set[Channel] = field(default_factory=set)
    # the errno an aborted transfer returns: EFAULT (its memory went away), EIO (reset)
    err: int = errno.EFAULT
    # why the transfer failed, in words, for the ioctl's caller (the first reason given)
    why: str = ""

    def fail(self, err: int, why: str) -> int:
        """Note why the transfer fails (the first reason stays); returns ``-err``."""
        self.why = self.why or why
        return -err

    def abort(self, why: str, err: int = errno.EFAULT) -> None:
        if self.aborted is None:
            self.aborted = why
            self.err = err
            self.why = self.why or why
            log.warning("%s: DMA aborted: %s", self.drv.name, why)
        for ch in self.waiting:
            ch.xdma.interrupt()


@dataclass(eq=False)
class Surface:
    """``struct pevb_cuda_surface``: a pinned CUDA range and its handle."""

    file: File
    va: int
    offset: int
    length: int
    handle: int = -1
    page_table: object = None
    # a dma-buf surface (PIN_DMABUF): its buffer, attachment and bus chunks, mapped at
    # pin time (a pinned importer, as RDMA's ib_umem_dmabuf_get_pinned)
    dmabuf: DmaBuf | None = None
    attachment: DmaBufAttachment | None = None
    sgt: object = None
    chunks: Scatter = field(default_factory=list)
    # unpinned while DMAs used it: the import is let go when the last of them ends
    put_pending: bool = False
    # DMA mappings taken by DMAs in flight, and those DMAs
    maps: list = field(default_factory=list)
    transfers: set[Transfer] = field(default_factory=set)
    # the free callback came while DMAs used the surface: it "returns" (done) once the
    # last of them has stopped its channel and let go of the surface
    revoking: CallbackPending | None = None


@dataclass(eq=False)
class UserBuf:
    """``struct pevb_userbuf``: the coalesced bus chunks of one side of a DMA."""

    sg: Scatter
    surface: Surface | None = None
    mapping: object = None
    xfer: Transfer | None = None
    # pinned host pages (put_user_pages at release)
    frames: list[int] = field(default_factory=list)
    process: UserProcess | None = None

    def release(self, drv: Driver) -> None:
        if self.process is not None:
            self.process.put_user_pages(self.frames)
            self.process = None
        s = self.surface
        if s is None:
            return
        s.transfers.discard(self.xfer)
        if not s.transfers and s.revoking is not None:
            # the channels this surface's DMAs ran on are stopped: the free callback
            # returns, and the GPU may hand the BAR1 pages to another pin
            s.revoking.done()
        if not s.transfers and s.put_pending:
            s.put_pending = False
            dmabuf_put(drv, s)
        if self.mapping is not None and self.mapping in s.maps:
            s.maps.remove(self.mapping)
            rc = drv.p2p.nvidia_p2p_dma_unmap_pages(
                drv.platform.pci_dev, s.page_table, self.mapping
            )
            if rc:
                log.error("%s: nvidia_p2p_dma_unmap_pages: %d", drv.name, rc)
        self.mapping = None


def dmabuf_put(drv: Driver, surf: Surface) -> None:
    """Let go of an imported dma-buf: unmap and unpin under the reservation lock,
    detach, and drop the reference ``dma_buf_get`` took."""
    core, buf, att = drv.dmabuf, surf.dmabuf, surf.attachment
    assert core is not None and buf is not None and att is not None
    core.dma_resv_lock(buf)
    core.dma_buf_unmap_attachment(att, surf.sgt, DMA_BIDIRECTIONAL)
    core.dma_buf_unpin(att)
    core.dma_resv_unlock(buf)
    core.dma_buf_detach(buf, att)
    core.dma_buf_put(buf)
