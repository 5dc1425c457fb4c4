"""The picoevb-rdma kernel driver, modelled against :class:`~driver_model.platform.Platform`.

Faithful to the original's uapi, argument checks, errno values and pinning; fixed where it
is weak (descriptor chains, double-buffered H2C2H, MSI, timeouts, a freed surface aborts
its DMA): see docs/internals.md. Ioctls return 0 or -errno (``PicoevbFile.ioctl``);
:func:`ioctl` is the user-space call that raises :class:`OSError`.

This module is the driver's lifetime: probe, the engine's bring-up, resets, remove, the
interrupt handlers and open. Its other parts are modules of their own, by the driver's
parts: the file operations (:mod:`.picoevb_fops`: :class:`PicoevbFile`, :func:`ioctl`),
pinning (:mod:`.picoevb_pin`), DMA (:mod:`.picoevb_dma`), the mailbox
(:mod:`.picoevb_mailbox`), and the constants and records they share
(:mod:`.picoevb_state`). The names users import are all importable from here.
"""

from __future__ import annotations

import collections
import errno
import logging

from . import regs
from .dmabuf import (
    DmaBufCore,
    DmaDevice,
)
from .host import UserProcess
from .picoevb_dma import DmaEngine
from .picoevb_fops import PicoevbFile, ioctl
from .picoevb_pin import PinCallbacks
from .picoevb_state import (
    MSI_VECTORS_WANTED,
    RESET_WAIT_NS,
    Channel,
    DriverConfig,
    ProbeError,
    RunRecord,
    Transfer,
)
from .platform import PCI_IRQ_LEGACY, Platform
from .regs import BAR_DMA, BAR_USER, Target
from .xdma import ALL_ONES, XdmaError

log = logging.getLogger(__name__)

__all__ = ["DriverConfig", "PicoevbFile", "PicoevbRdma", "ProbeError", "RunRecord", "ioctl"]


class PicoevbRdma(DmaEngine, PinCallbacks):
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
        self._chans: dict[Target, Channel] = {}
        self._by_vector: dict[int, list[Channel]] = {}
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
        self._transfers: set[Transfer] = set()
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
                    self._chans[d] = Channel(self, d, vec)
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

    # ------------------------------------------------------------------ DMA engine
