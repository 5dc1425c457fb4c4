"""The picoevb-rdma kernel driver, modelled against :class:`~driver_model.platform.Platform`.

Faithful to the original's uapi, argument checks, errno values and pinning; fixed where it
is weak (descriptor chains, double-buffered H2C2H, MSI, timeouts, a freed surface aborts
its DMA): see docs/internals.md. Ioctls return 0 or -errno (``PicoevbFile.ioctl``);
:func:`ioctl` is the user-space call that raises :class:`OSError`.
"""

from __future__ import annotations

import collections
import ctypes
import errno
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from cuda_model import CallbackPending

from . import regs, uapi
from .desc import DESC_SIZE, MAX_CHAIN, Segment, build_chain, pair_scatter, split_segments
from .dmabuf import (
    DMA_BIDIRECTIONAL,
    DmaBuf,
    DmaBufAttachment,
    DmaBufAttachOps,
    DmaBufCore,
    DmaDevice,
)
from .host import PAGE_MASK, PAGE_SIZE, UserProcess
from .p2p import p2p_chunks, pin_range
from .platform import PCI_IRQ_LEGACY, Platform
from .regs import BAR_DMA, BAR_USER, Stat, Target
from .sg import Scatter, overlaps, page_chunks, slice_scatter
from .xdma import ALL_ONES, Outcome, WriteBack, XdmaChannel, XdmaError

log = logging.getLogger(__name__)

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


class _Channel:
    """One XDMA channel with its descriptor ring and poll-mode write-back word."""

    def __init__(self, drv: PicoevbRdma, direction: Target, vector: int) -> None:
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
class _Transfer:
    """One DMA ioctl in flight: the surfaces it uses and why it was aborted, if it was."""

    drv: PicoevbRdma
    aborted: str | None = None
    waiting: set[_Channel] = field(default_factory=set)
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
class _Surface:
    """``struct pevb_cuda_surface``: a pinned CUDA range and its handle."""

    file: PicoevbFile
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
    transfers: set[_Transfer] = field(default_factory=set)
    # the free callback came while DMAs used the surface: it "returns" (done) once the
    # last of them has stopped its channel and let go of the surface
    revoking: CallbackPending | None = None


@dataclass(eq=False)
class _UserBuf:
    """``struct pevb_userbuf``: the coalesced bus chunks of one side of a DMA."""

    sg: Scatter
    surface: _Surface | None = None
    mapping: object = None
    xfer: _Transfer | None = None
    # pinned host pages (put_user_pages at release)
    frames: list[int] = field(default_factory=list)
    process: UserProcess | None = None

    def release(self, drv: PicoevbRdma) -> None:
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
            _dmabuf_put(drv, s)
        if self.mapping is not None and self.mapping in s.maps:
            s.maps.remove(self.mapping)
            rc = drv.p2p.nvidia_p2p_dma_unmap_pages(
                drv.platform.pci_dev, s.page_table, self.mapping
            )
            if rc:
                log.error("%s: nvidia_p2p_dma_unmap_pages: %d", drv.name, rc)
        self.mapping = None


def _dmabuf_put(drv: PicoevbRdma, surf: _Surface) -> None:
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


class PicoevbRdma:
    """The driver instance bound to one picoevb function (``struct pevb``).

    ``p2p`` is the nvidia.ko side (:class:`cuda_model.NvidiaP2P`); ``platform`` is the
    machine. Call :meth:`probe` once, then :meth:`open` per user-space ``open()``.
    """

    def __init__(
        self,
        platform: Platform,
        p2p,
        config: DriverConfig | None = None,
        name: str = "picoevb0",
        dmabuf: DmaBufCore | None = None,
    ) -> None:
        self.platform = platform
        self.p2p = p2p
        # the kernel's dma-buf core, for PIN_DMABUF (None: a kernel without dma-buf)
        self.dmabuf = dmabuf
        # the function's struct device as dma-buf sees it: dma_set_max_seg_size to the
        # longest descriptor, rounded down to a page (a model extension's choice)
        self.dma_dev = DmaDevice(name, max_seg_size=0x0FFF_F000)
        self.config = config or DriverConfig()
        self.name = name
        self.fpga_ram_size = 0
        self.alignments: dict[Target, tuple[int, int, int]] = {}
        self.nvec = 0
        self._chans: dict[Target, _Channel] = {}
        self._by_vector: dict[int, list[_Channel]] = {}
        self.dma_lock = platform.mutex()
        self.files: list[PicoevbFile] = []
        self.runs: collections.deque[RunRecord] = collections.deque(maxlen=100_000)
        self.probed = False
        # function-level resets done to recover the engine; bumping the epoch tells the
        # chains started before a reset that they are gone
        self.resets = 0
        self.epoch = 0
        # why the device cannot be used (a reset failed); DMA ioctls fail with EIO
        self.dead: str | None = None
        # the DMA ioctls in flight, and the end of a function reset in progress
        self._transfers: set[_Transfer] = set()
        self._reset_over = platform.completion()
        self._reset_over.complete()
        # remove() has begun: ioctls fail with ENODEV from then on (once an ioctl has the
        # file's lock it checks again, so none queued behind a running DMA starts one)
        self.removed = False
        # ioctls inside the driver now, over every file, and their all having left
        self._in_ioctl = 0
        self._ioctls_out = platform.completion()
        self._ioctls_out.complete()
        # the card's mailbox (not in the original driver): its user interrupt's vector,
        # how many came, and a completion each completes
        self.mbox_vector = 0
        self.mbox_irqs = 0
        self.mbox_event = platform.completion()
        # one reader at a time looks at the status and takes the value it counted, over
        # every file (two readers of one value: one gets it, the other waits on)
        self.mbox_lock = platform.mutex()
        # the legacy interrupt is taken instead of MSI (cfg.interrupts), and how often its
        # handler found nothing of the card's pending
        self.intx = False
        self.intx_spurious = 0

    # ------------------------------------------------------------------ probe / remove
    async def probe(self) -> None:
        """Enable the function, bus mastering and MSI; check the engine; read the card."""
        p = self.platform
        await p.pci_enable_device()
        await p.pci_set_master()
        if self.config.interrupts == "intx":
            self.nvec = await p.pci_alloc_irq_vectors(1, 1, PCI_IRQ_LEGACY)
        elif self.config.interrupts == "msi":
            self.nvec = await p.pci_alloc_irq_vectors(1, MSI_VECTORS_WANTED)
        else:
            raise ProbeError(errno.EINVAL, f"interrupts={self.config.interrupts!r}: msi or intx")
        if self.nvec < 1:
            raise ProbeError(errno.ENODEV, f"{self.name}: no interrupt ({self.nvec})")
        self.intx = p.irq_legacy
        if self.intx:
            p.request_irq(0, self._intx_isr)
        else:
            for v in range(self.nvec):
                p.request_irq(v, self._make_isr(v))
        await self._init_engine()
        p.set_reset_handlers(self.reset_prepare, self.reset_done)
        await p.pci_save_state()  # for error recovery after a link loss
        self.probed = True
        log.info(
            "%s: probed: %d MSI vectors, card RAM %d bytes, alignments %s",
            self.name,
            self.nvec,
            self.fpga_ram_size,
            {d.name: a for d, a in self.alignments.items()},
        )

    async def _init_engine(self) -> None:
        """Check the engine's identifiers, stop and clear its channels, program their
        interrupt vectors, read the card: at probe and after a reset."""
        p = self.platform
        try:
            for target in (Target.IRQ, Target.CONFIG, Target.SGDMA_COMMON):
                base = regs.block_base(target)
                got = await p.ioread32(BAR_DMA, base)
                if got != regs.identifier(target):
                    raise XdmaError(f"{target.name} identifier {got:#010x}")
            for d in (Target.H2C, Target.C2H):
                if d not in self._chans:
                    vec = 0 if d == Target.H2C or self.nvec < 2 else 1
                    self._chans[d] = _Channel(self, d, vec)
                    self._by_vector.setdefault(vec, []).append(self._chans[d])
                await self._chans[d].xdma.identify()
        except XdmaError as e:
            raise ProbeError(errno.ENODEV, f"{self.name}: not an XDMA engine: {e}") from e
        for d, ch in self._chans.items():
            a = await p.ioread32(BAR_DMA, ch.xdma.reg(regs.CH_ALIGNMENTS))
            self.alignments[d] = (
                regs.ALIGN_ADDR.get(a) or 1,
                regs.ALIGN_LEN_GRANULARITY.get(a) or 1,
                regs.ALIGN_ADDR_BITS.get(a),
            )
            if self.alignments[d][2] < 64:
                log.warning(
                    "%s: %s addresses only %d bits", self.name, d.name, self.alignments[d][2]
                )
            await ch.xdma.stop()
            await ch.xdma.status_clear()
        # H2C0 and C2H0 are interrupt bits 0 and 1, both in the first vector register
        vectors = 0
        for i, ch in enumerate((self._chans[Target.H2C], self._chans[Target.C2H])):
            reg, field = regs.vector_field(i)
            vectors |= field.put(ch.vector)
        await p.iowrite32(BAR_DMA, regs.irq_reg(regs.IRQ_CHAN_VECTOR[reg]), vectors)
        # the mailbox's user interrupt: its vector, enabled
        self.mbox_vector = min(2, self.nvec - 1)
        reg, field = regs.vector_field(regs.MAILBOX_IRQ)
        await p.iowrite32(
            BAR_DMA, regs.irq_reg(regs.IRQ_USER_VECTOR[reg]), field.put(self.mbox_vector)
        )
        await p.iowrite32(BAR_DMA, regs.irq_reg(regs.IRQ_USER_INT_EN_W1S), 1 << regs.MAILBOX_IRQ)
        self.fpga_ram_size = await p.ioread32(BAR_USER, regs.USER_RAM_SIZE)
        if self.fpga_ram_size == 0:
            raise ProbeError(errno.ENODEV, f"{self.name}: card RAM size register reads 0")

    async def reset_engine(self, why: str) -> int:
        """Recover an engine that does not go idle: a function-level reset (which ends
        every DMA of the function; :meth:`reset_prepare` and :meth:`reset_done` run
        around it), then the engine set up again as at probe. 0, or -errno; after a
        failure the device is dead until removed."""
        log.error("%s: resetting the function: %s", self.name, why)
        self.resets += 1
        rc = await self.platform.pci_reset_function()
        if rc and not self.dead:
            self.dead = f"function reset failed ({rc}) after: {why}"
        return rc

    async def reset_prepare(self) -> None:
        """``err_handler->reset_prepare``: the function is about to be reset (by this
        driver, or by someone else: ``/sys/bus/pci/devices/.../reset``). Every DMA in
        flight is aborted; none returns before :meth:`reset_done`, when the reset has
        ended whatever the engine was doing."""
        self.epoch += 1
        self._reset_over.reinit()
        for xfer in list(self._transfers):
            xfer.abort("function reset", errno.EIO)

    async def reset_done(self, rc: int) -> None:
        """``err_handler->reset_done``: set the engine up again (a reset that failed, or an
        engine that does not come back, leaves the device dead)."""
        try:
            if rc:
                self.dead = f"function reset failed ({rc})"
            else:
                try:
                    await self._init_engine()
                except ProbeError as e:
                    self.dead = f"engine not back after the function reset: {e.strerror}"
            if self.dead:
                log.error("%s: device unusable: %s", self.name, self.dead)
        finally:
            self._reset_over.complete()

    async def _reset_ended(self) -> None:
        """Wait (bounded) until a function reset in progress has ended."""
        if not await self._reset_over.wait(RESET_WAIT_NS):
            self.dead = "function reset did not end"
            log.error("%s: device unusable: %s", self.name, self.dead)

    async def remove(self) -> None:
        """The device goes (unbind, hot unplug): later ioctls fail with ENODEV; a DMA in
        flight stops its channel after the chain running (the descriptors in flight end)
        and fails with ENODEV, starting no further chain; one queued behind it fails with
        ENODEV once it has its file's lock. remove() waits (bounded) for every ioctl to
        leave the driver, then puts every open file's pins, stops the channels and frees
        the rings. The files stay open until their owners close them."""
        self.removed = True
        # a DMA in flight starts no further chain: it stops its channel and fails
        for x in list(self._transfers):
            x.abort("the device is being removed", errno.ENODEV)
        self.mbox_event.complete()  # a mailbox reader waiting wakes and fails (ENODEV)
        if not await self._ioctls_out.wait(RESET_WAIT_NS):
            log.error("%s: remove: %d ioctls still in the driver", self.name, self._in_ioctl)
        for f in list(self.files):
            await f.release_resources()
        for ch in self._chans.values():
            await ch.xdma.stop()
            self.platform.host.dma_free_coherent(ch.ring)
            self.platform.host.dma_free_coherent(ch.wb)
        self._chans.clear()
        self.probed = False

    def _ioctl_enter(self) -> None:
        if self._in_ioctl == 0:
            self._ioctls_out.reinit()
        self._in_ioctl += 1

    def _ioctl_leave(self) -> None:
        self._in_ioctl -= 1
        if self._in_ioctl == 0:
            self._ioctls_out.complete()

    def open(self, process: UserProcess) -> PicoevbFile:
        """``open("/dev/picoevb")`` by ``process``: a new file with its own handles."""
        if not self.probed:
            raise OSError(errno.ENODEV, f"{self.name} is not probed")
        f = PicoevbFile(self, process)
        self.files.append(f)
        return f

    async def _intx_isr(self) -> None:
        """The legacy interrupt's handler, as Xilinx's XDMA driver does it: the line is
        shared, so read which enabled sources are pending (the IRQ block's pending
        registers), mask them (channel and user interrupt enables, W1C) so the card
        deasserts the line, and wake their waiters. A channel is enabled again when it
        next starts, the mailbox when a reader looks at it."""
        p = self.platform
        irq = regs.irq_reg
        chan = await p.ioread32(BAR_DMA, irq(regs.IRQ_CHAN_INT_PEND))
        user = await p.ioread32(BAR_DMA, irq(regs.IRQ_USER_INT_PEND))
        if chan == ALL_ONES or user == ALL_ONES or not (chan or user):
            self.intx_spurious += 1  # not ours (IRQ_NONE), or the card is gone
            return
        if chan:
            await p.iowrite32(BAR_DMA, irq(regs.IRQ_CHAN_INT_EN_W1C), chan)
        if user:
            await p.iowrite32(BAR_DMA, irq(regs.IRQ_USER_INT_EN_W1C), user)
        for ch in self._chans.values():
            if chan & ch.xdma.irq_bit:
                ch.xdma.interrupt()
        if user >> regs.MAILBOX_IRQ & 1:
            self.mbox_irqs += 1
            self.mbox_event.complete()

    def _make_isr(self, vector: int):
        def isr() -> None:
            for ch in self._by_vector.get(vector, ()):
                ch.xdma.interrupt()
            if vector == self.mbox_vector:
                self.mbox_irqs += 1
                self.mbox_event.complete()

        return isr

    # ------------------------------------------------------------------ free callback
    def _dmabuf_move_notify(self, attach: DmaBufAttachment) -> None:
        """``move_notify`` of a pinned importer: nv-dmabuf never moves its memory, and a
        pinned attachment may not be moved, so this is a bug somewhere: logged."""
        log.error("%s: move_notify on a pinned dma-buf attachment (%s)", self.name, attach)

    def _p2p_free_callback(self, surf: _Surface) -> CallbackPending | None:
        """nvidia.ko frees the memory behind a pin (cudaFree while pinned): drop the handle,
        free the page table and any live DMA mapping, abort DMAs using it. NVIDIA's
        contract: the callback returns only once the device can no longer touch the
        pages (the GPU unmaps the BAR1 pages, and may give them to another pin, when it
        returns). With DMAs in flight on the surface it sleeps until each has stopped its
        channel: the returned :class:`CallbackPending` is done when the last lets go."""
        f = surf.file
        if f.surfaces.get(surf.handle) is surf:
            del f.surfaces[surf.handle]
        for m in surf.maps:
            self.p2p.nvidia_p2p_free_dma_mapping(m)
        surf.maps.clear()
        rc = self.p2p.nvidia_p2p_free_page_table(surf.page_table)
        if rc:
            log.error("%s: nvidia_p2p_free_page_table: %d", self.name, rc)
        log.info(
            "%s: surface handle %d (va %#x) freed by the GPU driver",
            self.name,
            surf.handle,
            surf.va + surf.offset,
        )
        if not surf.transfers:
            return None
        surf.revoking = CallbackPending()
        for x in list(surf.transfers):
            x.abort(f"CUDA surface handle {surf.handle} freed during the transfer")
        return surf.revoking

    # ------------------------------------------------------------------ DMA engine
    def timeout_ns(self, nbytes: int) -> float:
        """The timeout of a chain moving ``nbytes``."""
        return self.config.timeout_base_ns + nbytes * self.config.timeout_ns_per_byte

    def _check_alignment(self, ch: _Channel, segs: Sequence[Segment]) -> bool:
        addr_align, len_gran, _bits = self.alignments[ch.direction]
        return all(
            s.src % addr_align == 0 and s.dst % addr_align == 0 and s.length % len_gran == 0
            for s in segs
        )

    async def _start(self, ch: _Channel, segs: list[Segment], xfer: _Transfer) -> None:
        chain = build_chain(segs, ch.ring.bus, max_len=DESC_CHUNK_MAX)
        for addr, data in chain.blocks().items():
            ch.ring.write(addr - ch.ring.bus, data)
        ch.expected = len(chain)
        ch.nbytes = sum(s.length for s in chain.segments)
        poll = self.config.poll_mode
        if poll:
            ch.wb.write(0, bytes(4))
        xfer.waiting.add(ch)
        ch.t_start = self.platform.now_ns()
        ch.epoch = self.epoch
        await ch.xdma.start(chain, interrupt=not poll, poll_wb_addr=ch.wb.bus if poll else None)

    async def _dump(self, ch: _Channel, status: int, count: int, why: str) -> None:
        p = self.platform
        x = ch.xdma
        desc = (await p.ioread32(BAR_DMA, x.sgreg(regs.SG_DESC_HI)) << 32) | await p.ioread32(
            BAR_DMA, x.sgreg(regs.SG_DESC_LO)
        )
        control = await p.ioread32(BAR_DMA, x.reg(regs.CH_CONTROL))
        req = await p.ioread32(BAR_DMA, regs.irq_reg(regs.IRQ_CHAN_INT_REQ))
        log.warning(
            "%s: %s %s: status %#010x (%s), completed %d of %d descriptors, "
            "control %#010x, first descriptor %#x, channel irq request %#x, "
            "MSIs on vector %d: %d",
            self.name,
            ch.name,
            why,
            status,
            regs.describe_status(status, ch.direction),
            count,
            ch.expected,
            control,
            desc,
            req,
            ch.vector,
            p.irq_count(ch.vector),
        )

    async def _finish(self, ch: _Channel, xfer: _Transfer) -> int:
        """Wait for the chain on ``ch``, stop the channel, check it: 0 or -errno. The
        channel is idle when this returns: one that does not drain is reset."""
        cfg = self.config
        outcome = Outcome.ABORT
        try:
            # (a reset for the other channel may already have ended this chain)
            if ch.epoch == self.epoch:
                outcome = await ch.xdma.wait(
                    ch.t_start + self.timeout_ns(ch.nbytes),
                    interrupt=not cfg.poll_mode,
                    writeback=ch.writeback if cfg.poll_mode else None,
                    expected=ch.expected,
                    aborted=lambda: xfer.aborted is not None,
                    poll_interval_ns=cfg.poll_interval_ns,
                    status_every=cfg.poll_status_every,
                )
        finally:
            xfer.waiting.discard(ch)
        if ch.epoch != self.epoch:
            # the function was or is being reset under this chain: the reset ends it
            await self._reset_ended()
            log.warning("%s: %s chain ended by a function reset", self.name, ch.name)
            return self._record(ch, xfer.fail(errno.EIO, f"{ch.name} ended by a function reset"))
        res = await ch.xdma.finish(outcome, ch.t_start, cfg.stop_drain_ns)
        status, count, outcome = res.status, res.completed_count, res.outcome
        if outcome is Outcome.DONE and ALL_ONES not in (status, count):
            if xfer.aborted:
                rc = -xfer.err
            elif status & FAIL_BITS:
                await self._dump(ch, status, count, "failed")
                rc = xfer.fail(errno.EIO, f"the {ch.name} engine reported an error ({status:#x})")
            elif count != ch.expected:
                why = f"{ch.name} completed {count} of {ch.expected} descriptors"
                await self._dump(ch, status, count, why)
                rc = xfer.fail(errno.EIO, why)
            else:
                rc = 0
        elif outcome is Outcome.NO_ANSWER or ALL_ONES in (res.status, res.completed_count):
            # a register read failed: what the engine did cannot be known
            log.error(
                "%s: %s: a register read returned all ones (the device did not answer); "
                "after stop: status %#010x, completed %#x",
                self.name,
                ch.name,
                status,
                count,
            )
            rc = xfer.fail(errno.EIO, f"{ch.name}: the device did not answer a register read")
        elif outcome is Outcome.TIMEOUT:
            hint = (
                "still busy after stop"
                if res.busy
                else "engine idle: the interrupt was lost"
                if count == ch.expected
                else "engine stopped early"
            )
            await self._dump(
                ch, status, count, f"timed out after {self.timeout_ns(ch.nbytes):.0f} ns ({hint})"
            )
            # an engine that stopped on an error whose interrupt never came failed (EIO)
            err = errno.EIO if status & regs.STAT_ERROR_MASK and not res.busy else errno.ETIMEDOUT
            rc = xfer.fail(err, f"{ch.name} timed out ({hint})")
        else:
            log.warning(
                "%s: %s stopped after %d of %d descriptors: %s",
                self.name,
                ch.name,
                count,
                ch.expected,
                xfer.aborted,
            )
            rc = -xfer.err
        if res.busy and ch.epoch == self.epoch:
            # its reads may still land: the buffers must not be given back before it stops
            why = f"{ch.name} still busy {cfg.stop_drain_ns:.0f} ns after it was stopped"
            await self.reset_engine(why)
            rc = rc or xfer.fail(errno.EIO, why)
        elif ch.epoch != self.epoch:
            # someone reset the function while this chain was being stopped
            await self._reset_ended()
            rc = rc or xfer.fail(errno.EIO, f"{ch.name} ended by a function reset")
        return self._record(ch, rc)

    def _record(self, ch: _Channel, rc: int) -> int:
        p = self.platform
        self.runs.append(
            RunRecord(ch.direction, ch.t_start, p.now_ns(), ch.expected, ch.nbytes, rc)
        )
        return rc

    async def _run(self, direction: Target, segs: list[Segment], xfer: _Transfer) -> int:
        """Move ``segs`` on one channel as chains of at most MAX_CHAIN descriptors."""
        ch = self._chans[direction]
        segs = split_segments(segs, DESC_CHUNK_MAX)
        if not self._check_alignment(ch, segs):
            return xfer.fail(errno.EINVAL, f"breaks the {ch.name} engine's alignment")
        for i in range(0, len(segs), MAX_CHAIN):
            if xfer.aborted:
                return -xfer.err
            await self._start(ch, segs[i : i + MAX_CHAIN], xfer)
            rc = await self._finish(ch, xfer)
            if rc:
                return rc
        return 0

    async def _h2c2h(self, src: Scatter, dst: Scatter, length: int, xfer: _Transfer) -> int:
        """Source -> card RAM -> destination in chunks of half the card RAM, the H2C of
        chunk k+1 overlapping the C2H of chunk k. Where source and destination share
        bytes, that would read source bytes an earlier chunk already overwrote at another
        time than the original does: copy as the original does instead."""
        if overlaps(src, dst):
            return await self._h2c2h_in_order(src, dst, xfer)
        half = min(self.fpga_ram_size // 2, H2C2H_CHUNK_MAX)
        chunks = [
            (off, min(half, length - off), (k % 2) * half)
            for k, off in enumerate(range(0, length, half))
        ]
        h2c_segs = [
            pair_scatter(slice_scatter(src, off, n), [(card, n)]) for off, n, card in chunks
        ]
        c2h_segs = [
            pair_scatter([(card, n)], slice_scatter(dst, off, n)) for off, n, card in chunks
        ]
        h2c, c2h = self._chans[Target.H2C], self._chans[Target.C2H]
        if not all(self._check_alignment(h2c, s) for s in h2c_segs) or not all(
            self._check_alignment(c2h, s) for s in c2h_segs
        ):
            return xfer.fail(errno.EINVAL, "breaks the engines' alignment")
        if xfer.aborted:
            return -xfer.err
        await self._start(h2c, h2c_segs[0], xfer)
        rc = await self._finish(h2c, xfer)
        for k in range(len(chunks)):
            if rc:
                return rc
            if xfer.aborted:
                return -xfer.err
            await self._start(c2h, c2h_segs[k], xfer)
            more = k + 1 < len(chunks)
            if more:
                await self._start(h2c, h2c_segs[k + 1], xfer)
            rc_c2h = await self._finish(c2h, xfer)
            rc_h2c = await self._finish(h2c, xfer) if more else 0
            rc = rc_c2h or rc_h2c
        return rc

    async def _h2c2h_in_order(self, src: Scatter, dst: Scatter, xfer: _Transfer) -> int:
        """The original's H2C2H: chunks no longer than a source run, a destination run
        and the card RAM, each copied to card RAM offset 0 and back before the next one
        is read."""
        h2c, c2h = self._chans[Target.H2C], self._chans[Target.C2H]
        limit = min(self.fpga_ram_size, DESC_CHUNK_MAX)
        for piece in split_segments(pair_scatter(src, dst), limit):
            h2c_segs = [Segment(piece.src, 0, piece.length)]
            c2h_segs = [Segment(0, piece.dst, piece.length)]
            if not self._check_alignment(h2c, h2c_segs) or not self._check_alignment(c2h, c2h_segs):
                return xfer.fail(errno.EINVAL, "breaks the engines' alignment")
            for ch, segs in ((h2c, h2c_segs), (c2h, c2h_segs)):
                if xfer.aborted:
                    return -xfer.err
                await self._start(ch, segs, xfer)
                rc = await self._finish(ch, xfer)
                if rc:
                    return rc
        return 0


class PicoevbFile:
    """One open file of ``/dev/picoevb``: its process, its CUDA surface handles (an IDR)
    and its lock. ``ioctl`` is the kernel entry point (0 or -errno)."""

    def __init__(self, drv: PicoevbRdma, process: UserProcess) -> None:
        self.drv = drv
        self.process = process
        self.surfaces: dict[int, _Surface] = {}
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
    def _idr_alloc(self, surf: _Surface) -> int:
        h = 0
        while h in self.surfaces:
            h += 1
        self.surfaces[h] = surf
        return h

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

    def _get_userbuf(
        self, ptr: int, length: int, is_cuda: bool, xfer: _Transfer, write: bool = False
    ) -> tuple[int, _UserBuf | None]:
        """The bus chunks of a host pointer or a CUDA handle, ``length`` bytes; host pages
        the device writes (``write``) are pinned for writing (FOLL_WRITE)."""
        if is_cuda:
            if ptr > INT_MAX:
                return xfer.fail(errno.EINVAL, f"handle {ptr} is above INT_MAX"), None
            surf = self.surfaces.get(ptr)
            if surf is None:  # unknown, or dropped by the free callback
                why = f"no CUDA surface has handle {ptr} (never pinned, unpinned, or freed)"
                return xfer.fail(errno.EINVAL, why), None
            if length > surf.length:
                why = f"length {length} exceeds CUDA surface {ptr} ({surf.length} bytes)"
                return xfer.fail(errno.EINVAL, why), None
            if surf.dmabuf is not None:  # mapped at pin time, never moved nor revoked
                surf.transfers.add(xfer)
                return 0, _UserBuf(slice_scatter(surf.chunks, 0, length), surf, None, xfer)
            rc, mapping = self.drv.p2p.nvidia_p2p_dma_map_pages(
                self.drv.platform.pci_dev, surf.page_table
            )
            if rc:
                return xfer.fail(-rc, f"nvidia_p2p_dma_map_pages of handle {ptr}: {rc}"), None
            surf.maps.append(mapping)
            surf.transfers.add(xfer)
            sg = p2p_chunks(mapping.dma_addresses, surf.offset, length)
            return 0, _UserBuf(sg, surf, mapping, xfer)
        start = ptr & PAGE_MASK
        offset = ptr - start
        npages = (offset + length + PAGE_SIZE - 1) // PAGE_SIZE
        frames = self.process.get_user_pages(start, npages, write=write)
        if len(frames) != npages:
            self.process.put_user_pages(frames)  # the pages a short count did pin
            why = f"{length} bytes at {ptr:#x} are not all mapped in the process"
            return xfer.fail(errno.EFAULT, why), None
        return 0, _UserBuf(
            page_chunks(frames, PAGE_SIZE, offset, length), frames=frames, process=self.process
        )

    async def _dma(
        self, src: tuple[int, bool] | None, dst: tuple[int, bool] | None, card: int, length: int
    ) -> tuple[int, int]:
        """Run one DMA ioctl's transfer; (rc, dma_time_ns)."""
        drv = self.drv
        xfer = _Transfer(drv)
        drv._transfers.add(xfer)
        bufs: list[_UserBuf] = []
        try:
            sides = []
            for side, write in ((src, False), (dst, True)):
                if side is None:
                    sides.append(None)
                    continue
                rc, buf = self._get_userbuf(side[0], length, side[1], xfer, write)
                if rc:
                    return rc, 0
                bufs.append(buf)
                sides.append(buf.sg)
            async with drv.dma_lock:
                await drv._reset_ended()
                if drv.dead:
                    log.error("%s: DMA refused: %s", drv.name, drv.dead)
                    return xfer.fail(errno.EIO, f"the device is dead ({drv.dead})"), 0
                t0 = drv.platform.now_ns()
                if sides[0] is not None and sides[1] is not None:
                    rc = await drv._h2c2h(sides[0], sides[1], length, xfer)
                elif sides[0] is not None:
                    rc = await drv._run(Target.H2C, pair_scatter(sides[0], [(card, length)]), xfer)
                else:
                    rc = await drv._run(Target.C2H, pair_scatter([(card, length)], sides[1]), xfer)
                t1 = drv.platform.now_ns()
            return rc, round(t1 - t0)
        finally:
            if xfer.why:
                self.last_error = xfer.why
            drv._transfers.discard(xfer)
            for b in bufs:
                b.release(drv)

    def _card_range_error(self, offset: int, length: int) -> str:
        """Why ``length`` bytes at card RAM ``offset`` are out of range ("" when fine)."""
        ram = self.drv.fpga_ram_size
        if length == 0:
            return "length 0"
        if length > ram:
            return f"length {length} exceeds the card RAM ({ram} bytes)"
        if offset > ram - length:
            return f"{length} bytes at card offset {offset:#x} run past the card RAM ({ram} bytes)"
        return ""

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

    async def _mailbox_read(self, m: uapi.picoevb_rdma_mailbox):
        """The oldest value of the card's mailbox, waiting up to ``timeout_ns`` for its
        interrupt when it is empty: -EAGAIN (no wait asked), -ETIMEDOUT, -EINVAL for
        non-zero padding, -ENODEV once remove() has begun (a reader waiting wakes, and
        touches the card no more). The status read and the read of the value it counted
        are one step under the driver's mailbox lock, so two readers never take one
        value (nor the 0 an empty mailbox reads)."""
        if m.pad:
            return self._fail(errno.EINVAL, "non-zero padding"), None
        p, drv = self.drv.platform, self.drv
        # (a longer timeout waits this long, as the kernel's saturating jiffies would)
        end = p.now_ns() + min(m.timeout_ns, MAILBOX_MAX_WAIT_NS)
        while True:
            drv.mbox_event.reinit()  # (before the status read: no wake-up is lost)
            async with drv.mbox_lock:
                if drv.removed:
                    return self._fail(errno.ENODEV, "the device has been removed"), None
                if drv.intx:
                    # the legacy handler masked the mailbox's interrupt: enable it again
                    # (a value still queued raises the line at once)
                    await p.iowrite32(
                        BAR_DMA, regs.irq_reg(regs.IRQ_USER_INT_EN_W1S), 1 << regs.MAILBOX_IRQ
                    )
                status = await p.ioread32(BAR_USER, regs.USER_MAILBOX_STATUS)
                if status == 0xFFFFFFFF:
                    return self._fail(errno.EIO, "the card does not answer"), None
                if status & regs.MAILBOX_OVERFLOW:
                    await p.iowrite32(BAR_USER, regs.USER_MAILBOX_STATUS, regs.MAILBOX_OVERFLOW)
                    m.flags |= uapi.PICOEVB_MAILBOX_OVERFLOWED
                count = regs.MAILBOX_COUNT_FIELD.get(status)
                if count:
                    m.value = await p.ioread32(BAR_USER, regs.USER_MAILBOX)
                    m.left = count - 1
                    return 0, m
            left = end - p.now_ns()
            if m.timeout_ns == 0:
                return self._fail(errno.EAGAIN, "the mailbox is empty"), None
            if left <= 0:
                return self._fail(errno.ETIMEDOUT, "no mailbox value came"), None
            await drv.mbox_event.wait(left)

    async def _pin_cuda(self, p: uapi.picoevb_rdma_pin_cuda):
        if p.size == 0:
            return self._fail(errno.EINVAL, "size 0"), None
        va, offset, aligned_len = pin_range(p.va, p.size)
        surf = _Surface(self, va, offset, p.size)
        rc, pt = self.drv.p2p.nvidia_p2p_get_pages(
            0, 0, va, aligned_len, self.drv._p2p_free_callback, surf
        )
        if rc:
            why = (
                f"nvidia_p2p_get_pages({va:#x}, {aligned_len:#x}): {rc} (not memory from "
                "cudaMalloc, or past the allocation it starts in)"
                if rc == -errno.EINVAL
                else f"nvidia_p2p_get_pages({va:#x}, {aligned_len:#x}): {rc}"
            )
            return self._fail(-rc, why), None
        surf.page_table = pt
        surf.handle = self._idr_alloc(surf)
        p.handle = surf.handle
        log.info(
            "%s: pinned va %#x + %#x as handle %d (%d pages)",
            self.drv.name,
            p.va,
            p.size,
            surf.handle,
            aligned_len >> 16,
        )
        return 0, p

    async def _pin_dmabuf(self, p: uapi.picoevb_rdma_pin_dmabuf):
        """PIN_DMABUF (an extension): import a dma-buf as a surface, pinned and mapped
        for good, as an RDMA driver's pinned import does: a dynamic attachment allowing
        peer-to-peer (the exporter refuses one without), dma_buf_pin and the map under
        the reservation lock. The handle shares the CUDA handles' IDR, so the DMA
        ioctls and UNPIN_CUDA take it."""
        if p.pad:
            # (a new ioctl's rule: unused fields must be zero, so they can mean something later)
            return self._fail(errno.EINVAL, f"padding {p.pad:#x} is not zero"), None
        core = self.drv.dmabuf
        if core is None:
            return self._fail(errno.EOPNOTSUPP, "this kernel has no dma-buf"), None
        buf = core.dma_buf_get(self.process, p.fd)
        if isinstance(buf, int):
            return self._fail(-buf, f"dma_buf_get({p.fd}): {buf}"), None
        ops = DmaBufAttachOps(move_notify=self.drv._dmabuf_move_notify, allow_peer2peer=True)
        att = core.dma_buf_dynamic_attach(buf, self.drv.dma_dev, ops)
        if isinstance(att, int):
            core.dma_buf_put(buf)
            return self._fail(-att, f"dma_buf_dynamic_attach of fd {p.fd}: {att}"), None
        core.dma_resv_lock(buf)
        rc = core.dma_buf_pin(att)
        sgt = core.dma_buf_map_attachment(att, DMA_BIDIRECTIONAL) if rc == 0 else rc
        if isinstance(sgt, int) and rc == 0:
            core.dma_buf_unpin(att)
        core.dma_resv_unlock(buf)
        if isinstance(sgt, int):
            core.dma_buf_detach(buf, att)
            core.dma_buf_put(buf)
            return self._fail(-sgt, f"mapping dma-buf fd {p.fd}: {sgt}"), None
        surf = _Surface(self, 0, 0, buf.size, dmabuf=buf, attachment=att, sgt=sgt)
        surf.chunks = [(e.dma_address, e.length) for e in sgt.entries]
        surf.handle = self._idr_alloc(surf)
        p.handle, p.size = surf.handle, buf.size
        log.info(
            "%s: imported dma-buf fd %d (%s, %d bytes, %d segments) as handle %d",
            self.drv.name,
            p.fd,
            buf.name,
            buf.size,
            sgt.nents,
            surf.handle,
        )
        return 0, p

    async def _put(self, surf: _Surface) -> int:
        if surf.dmabuf is not None:
            # DMAs still on it keep the mapping: the last to end lets it go
            if surf.transfers:
                surf.put_pending = True
            else:
                _dmabuf_put(self.drv, surf)
            return 0
        rc = self.drv.p2p.nvidia_p2p_put_pages(0, 0, surf.va, surf.page_table)
        if rc:
            log.error("%s: nvidia_p2p_put_pages(handle %d): %d", self.drv.name, surf.handle, rc)
        return rc

    async def _unpin_cuda(self, p: uapi.picoevb_rdma_unpin_cuda):
        surf = self.surfaces.pop(p.handle, None)
        if surf is None:
            why = f"no CUDA surface has handle {p.handle} (never pinned, unpinned, or freed)"
            return self._fail(errno.EINVAL, why), None
        return await self._put(surf), None

    async def _card_info(self, p: uapi.picoevb_rdma_card_info):
        p.fpga_ram_size = self.drv.fpga_ram_size
        return 0, p

    async def _h2c2h_dma(self, p: uapi.picoevb_rdma_h2c2h_dma):
        if p.flags & ~H2C2H_FLAGS:
            return self._fail(errno.EINVAL, f"unknown flags {p.flags:#x}"), None
        if p.len == 0:
            return self._fail(errno.EINVAL, "length 0"), None
        rc, t = await self._dma(
            (p.src, bool(p.flags & uapi.PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA)),
            (p.dst, bool(p.flags & uapi.PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA)),
            0,
            p.len,
        )
        p.dma_time_ns = t
        return rc, p

    async def _h2c_dma(self, p: uapi.picoevb_rdma_h2c_dma):
        src_cuda = uapi.PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA
        if p.flags & ~src_cuda:
            return self._fail(errno.EINVAL, f"unknown flags {p.flags:#x}"), None
        if why := self._card_range_error(p.dst, p.len):
            return self._fail(errno.EINVAL, why), None
        rc, t = await self._dma((p.src, bool(p.flags & src_cuda)), None, p.dst, p.len)
        p.dma_time_ns = t
        return rc, p

    async def _c2h_dma(self, p: uapi.picoevb_rdma_c2h_dma):
        dst_cuda = uapi.PICOEVB_C2H_DMA_FLAG_DST_IS_CUDA
        if p.flags & ~dst_cuda:
            return self._fail(errno.EINVAL, f"unknown flags {p.flags:#x}"), None
        if why := self._card_range_error(p.src, p.len):
            return self._fail(errno.EINVAL, why), None
        rc, t = await self._dma(None, (p.dst, bool(p.flags & dst_cuda)), p.src, p.len)
        p.dma_time_ns = t
        return rc, p

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
