"""One XDMA channel programmed over MMIO: start a descriptor chain, wait for it, halt it,
collect its result. The one place the driver model waits for the engine.

No simulator dependency: MMIO, completions and time come from a
:class:`~driver_model.platform.Platform` (the testbench implements it on cocotbext-pcie;
a unit test can fake it).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass

from . import regs
from .desc import Chain
from .platform import IORESOURCE_MEM_64, IORESOURCE_PREFETCH, Platform
from .regs import BAR_COUNT, BAR_DMA_SIZE, BarLayout, Ctrl, Stat, Target

log = logging.getLogger(__name__)


MAX_CHANNELS = 4  # per direction (PG195)


class XdmaError(RuntimeError):
    """The engine did not behave like an XDMA engine (identifiers)."""


@dataclass(frozen=True)
class Engine:
    """A channel a probe found: its direction, number, and whether it is a stream
    (AXI4-Stream) channel rather than a memory-mapped one."""

    direction: Target
    channel: int
    stream: bool


# the identifiers that mark the DMA register BAR, compared without their version bits
_ID_MASK = 0xFFFF0000


async def identify_bars(platform: Platform) -> BarLayout:
    """Find which BAR is which as libxdma does (``map_bars``, ``is_config_bar``,
    ``identify_bars``), so that a driver works with 32-bit and 64-bit BARs alike.

    The BARs the function implements are taken in order (the upper half of a 64-bit BAR
    is no BAR of its own: its length is 0). The DMA register BAR is the first one at
    least 64 KiB long whose IRQ block and config block identifiers both read right
    (version aside). Of the others, one before it is the user BAR (the AXI4-Lite
    master's) and one after it the bypass master's; the layout says which BARs are
    64-bit. Raises :class:`XdmaError` when no BAR holds the engine's registers, or the
    BARs around it are more than one each side."""
    bars = [b for b in range(BAR_COUNT) if platform.pci_resource_len(b)]
    dma = None
    for b in bars:
        if platform.pci_resource_len(b) < BAR_DMA_SIZE:
            continue
        irq_id = await platform.ioread32(b, regs.block_base(Target.IRQ))
        cfg_id = await platform.ioread32(b, regs.block_base(Target.CONFIG))
        if (irq_id & _ID_MASK) == (regs.identifier(Target.IRQ) & _ID_MASK) and (
            cfg_id & _ID_MASK
        ) == (regs.identifier(Target.CONFIG) & _ID_MASK):
            dma = b
            break
    if dma is None:
        raise XdmaError(f"no BAR of {bars} holds the DMA registers")
    pos = bars.index(dma)
    before, after = bars[:pos], bars[pos + 1 :]
    if len(before) > 1 or len(after) > 1:
        raise XdmaError(f"BARs {bars}: more than one BAR on a side of the DMA BAR {dma}")
    flags = {b: platform.pci_resource_flags(b) for b in bars}
    wide = frozenset(b for b in bars if flags[b] & IORESOURCE_MEM_64)
    pref = frozenset(b for b in bars if flags[b] & IORESOURCE_PREFETCH)
    return BarLayout(
        user=before[0] if before else None,
        dma=dma,
        axib=after[0] if after else None,
        wide=wide,
        prefetchable=pref,
    )


async def probe_engines(platform: Platform, bar: int | None = None) -> list[Engine]:
    """Find the engine's channels as libxdma does: in each direction, channel 0, 1, ...
    until the first whose channel block identifier does not name that target and
    channel, or whose SGDMA block disagrees with it; H2C channels first. ``bar``: the
    DMA BAR, the platform's by default."""
    if bar is None:
        bar = platform.bars.dma
    found = []
    for direction, sgdma in ((Target.H2C, Target.H2C_SGDMA), (Target.C2H, Target.C2H_SGDMA)):
        for n in range(MAX_CHANNELS):
            ident = await platform.ioread32(bar, regs.ch_reg(direction, regs.CH_IDENTIFIER, n))
            sg_ident = await platform.ioread32(bar, regs.sg_reg(direction, regs.SG_IDENTIFIER, n))
            stream = bool(regs.ID_STREAM.get(ident))
            if ident != regs.identifier(direction, n, stream) or sg_ident != regs.identifier(
                sgdma, n, stream
            ):
                break
            found.append(Engine(direction, n, stream))
    return found


class Outcome(enum.Enum):
    """How waiting for a chain ended."""

    DONE = "done"  # the channel went idle
    TIMEOUT = "timeout"  # the deadline passed with the channel busy
    ABORT = "abort"  # the caller's abort condition became true
    NO_ANSWER = "no answer"  # a status read returned all ones (the read failed)


# what a failed MMIO read returns (the root complex's answer to UR, CA or no completion)
ALL_ONES = 0xFFFFFFFF


@dataclass
class ChannelResult:
    """What one chain run ended with: the status and completed count read at its end (after
    a halt when it did not finish), how the wait ended, the simulated time it took, and
    whether the channel was still busy when it was given up on."""

    status: int
    completed_count: int
    outcome: Outcome
    elapsed_ns: float
    busy: bool = False

    @property
    def timed_out(self) -> bool:
        """The chain did not finish by its deadline."""
        return self.outcome is Outcome.TIMEOUT

    @property
    def errors(self) -> int:
        """Error bits of the status (descriptor/read/write errors, magic, align, length)."""
        return self.status & regs.STAT_ERROR_MASK

    @property
    def ok(self) -> bool:
        """Finished, with no error bit."""
        return self.outcome is Outcome.DONE and not self.errors


@dataclass
class WriteBack:
    """Poll-mode write-back: the bus address the engine writes ``{error, count}`` to, and
    how the host reads that word."""

    bus_addr: int
    read: Callable[[], int]


class XdmaChannel:
    """One H2C or C2H channel of the DMA BAR.

    Interrupt mode waits on :attr:`done`, a completion whoever receives the channel's MSI
    signals (:meth:`interrupt`: the driver's ISR, or the testbench's MSI handler).
    """

    def __init__(
        self,
        platform: Platform,
        direction: Target,
        channel: int = 0,
        vector: int = 0,
        bar: int | None = None,
        h2c_channels: int = 1,
    ) -> None:
        """``h2c_channels``: how many H2C channels the engine has (the C2H channels'
        interrupt bits follow theirs); ``bar``: the DMA BAR, the platform's by default."""
        if direction not in (Target.H2C, Target.C2H):
            raise ValueError(f"not a channel direction: {direction!r}")
        if not 0 <= channel < MAX_CHANNELS or not 1 <= h2c_channels <= MAX_CHANNELS:
            raise ValueError(f"no channel {channel} of {h2c_channels} H2C channels")
        self.platform = platform
        self.bar = platform.bars.dma if bar is None else bar
        self.direction = direction
        self.channel = channel
        self.vector = vector
        self.irq_bit = regs.chan_irq_bit(direction, channel, h2c_channels)
        self.done = platform.completion()

    @property
    def name(self) -> str:
        """``H2C0``, ``C2H1``, ..."""
        return f"{self.direction.name}{self.channel}"

    def reg(self, offset: int) -> int:
        """Offset of a channel register."""
        return regs.ch_reg(self.direction, offset, self.channel)

    def sgreg(self, offset: int) -> int:
        """Offset of an SGDMA register of this channel."""
        return regs.sg_reg(self.direction, offset, self.channel)

    async def read32(self, offset: int) -> int:
        """Read a register of the DMA BAR."""
        return await self.platform.ioread32(self.bar, offset)

    async def write32(self, offset: int, value: int) -> None:
        """Write a register of the DMA BAR (posted)."""
        await self.platform.iowrite32(self.bar, offset, value)

    def interrupt(self) -> None:
        """The channel's MSI arrived (or a waiter must re-check): wake :meth:`wait`."""
        self.done.complete()

    async def identify(self) -> None:
        """Check the channel and SGDMA identifiers; raise :class:`XdmaError` otherwise."""
        sgdma = Target.H2C_SGDMA if self.direction == Target.H2C else Target.C2H_SGDMA
        for off, target in (
            (self.reg(regs.CH_IDENTIFIER), self.direction),
            (self.sgreg(regs.SG_IDENTIFIER), sgdma),
        ):
            got = await self.read32(off)
            want = regs.identifier(target, self.channel)
            if regs.ID_SUBSYSTEM.get(got) != regs.ID_SUBSYSTEM_VALUE or regs.ID_TARGET.get(
                got
            ) != int(target):
                raise XdmaError(f"identifier at {off:#06x} is {got:#010x}, expected {want:#010x}")

    async def status(self) -> int:
        """Status without clearing it (0x40)."""
        return await self.read32(self.reg(regs.CH_STATUS))

    async def status_clear(self) -> int:
        """Status, clearing it (0x44)."""
        return await self.read32(self.reg(regs.CH_STATUS_RC))

    async def completed_count(self) -> int:
        """Completed descriptor count (0x48)."""
        return await self.read32(self.reg(regs.CH_COMPLETED_COUNT))

    async def start(
        self,
        chain: Chain | None,
        *,
        interrupt: bool = True,
        poll_wb_addr: int | None = None,
        control: int | None = None,
    ) -> None:
        """Program the first descriptor and start the channel (libxdma's sequence). A
        descriptor bypass channel takes no chain (``None``): its descriptors come from the
        user logic once Run is set."""
        self.done.reinit()
        if chain is not None:
            await self.write32(self.sgreg(regs.SG_DESC_LO), chain.first & 0xFFFFFFFF)
            await self.write32(self.sgreg(regs.SG_DESC_HI), chain.first >> 32)
            await self.write32(self.sgreg(regs.SG_DESC_ADJ), chain.first_adj)
        ctrl = int(regs.CTRL_IE_ALL | Ctrl.RUN) if control is None else control | Ctrl.RUN
        if poll_wb_addr is not None:
            await self.write32(self.reg(regs.CH_POLL_WB_LO), poll_wb_addr & 0xFFFFFFFF)
            await self.write32(self.reg(regs.CH_POLL_WB_HI), poll_wb_addr >> 32)
            # bit 26 alone enables the write-back, as libxdma programs it
            ctrl |= Ctrl.POLLMODE_WB_ENABLE
        # clear what a previous run left in the status before interrupts are enabled
        await self.read32(self.reg(regs.CH_STATUS_RC))
        mask = int(regs.CTRL_IE_ALL) if interrupt else 0
        await self.write32(self.reg(regs.CH_INT_MASK), mask)
        if interrupt:
            await self.write32(regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1S), self.irq_bit)
        await self.write32(self.reg(regs.CH_PERF_CTRL), int(regs.Perf.RUN | regs.Perf.AUTO))
        await self.write32(self.reg(regs.CH_CONTROL), int(ctrl))
        # a read flushes the posted writes
        await self.read32(self.reg(regs.CH_STATUS))

    async def wait(
        self,
        deadline_ns: float,
        *,
        interrupt: bool = True,
        writeback: WriteBack | None = None,
        expected: int = 0,
        aborted: Callable[[], bool] | None = None,
        poll_interval_ns: float = 500.0,
        status_every: int = 8,
    ) -> Outcome:
        """Wait until the channel is idle, ``deadline_ns`` (simulated time) passes, or
        ``aborted()`` becomes true.

        With ``interrupt`` the wait sleeps on :attr:`done` and checks the status when woken;
        once woken with the channel still busy (an interrupt raised while the engine
        drains, or one of another channel on a shared vector) it polls the status every
        ``poll_interval_ns``. Without it, it polls: the ``writeback`` word when there is
        one (the status every ``status_every`` polls, and whenever the word shows an error
        or ``expected`` descriptors), else the status.
        """
        p = self.platform
        polls = 0
        polling = not interrupt
        woken = False
        while True:
            if aborted is not None and aborted():
                return Outcome.ABORT
            polls += 1
            check = True
            if polling and writeback is not None:
                wb = writeback.read()
                written = regs.WB_ERROR.get(wb) or regs.WB_COUNT.get(wb) >= expected
                check = bool(written) or polls % status_every == 0
            if check:
                status = await self.status()
                if status == ALL_ONES:
                    return Outcome.NO_ANSWER
                if not status & Stat.BUSY:
                    return Outcome.DONE
                polling = polling or woken  # woken, yet busy: poll from now on
            remaining = deadline_ns - p.now_ns()
            if remaining <= 0:
                return Outcome.TIMEOUT
            if polling:
                await p.sleep_ns(min(poll_interval_ns, max(1.0, remaining)))
                continue
            if not await self.done.wait(remaining):
                return Outcome.ABORT if aborted is not None and aborted() else Outcome.TIMEOUT
            # re-arm before the status read, so an interrupt after the read is not lost
            self.done.reinit()
            woken = True

    async def wait_count(
        self,
        expected: int,
        deadline_ns: float,
        *,
        interrupt: bool = True,
        writeback: WriteBack | None = None,
        poll_interval_ns: float = 500.0,
    ) -> Outcome:
        """Wait until ``expected`` descriptors completed, the channel stopped on an error,
        or ``deadline_ns`` (simulated time) passes: how a descriptor bypass channel is
        waited on, whose busy flag falls whenever the user logic has nothing loaded.

        With ``interrupt`` it sleeps on :attr:`done` between checks (an interrupt of a
        descriptor with Completed, or of an error); otherwise it polls the ``writeback``
        word when there is one, else the completed count register.
        """
        p = self.platform
        while True:
            if writeback is not None and not interrupt:
                wb = writeback.read()
                if regs.WB_ERROR.get(wb) or regs.WB_COUNT.get(wb) >= expected:
                    return Outcome.DONE
            else:
                self.done.reinit()
                status = await self.status()
                if status == ALL_ONES:
                    return Outcome.NO_ANSWER
                if status & regs.STAT_ERROR_MASK or await self.completed_count() >= expected:
                    return Outcome.DONE
            remaining = deadline_ns - p.now_ns()
            if remaining <= 0:
                return Outcome.TIMEOUT
            if interrupt:
                # an interrupt between the reads and here is kept by ``done``
                await self.done.wait(min(remaining, 20 * poll_interval_ns))
            else:
                await p.sleep_ns(min(poll_interval_ns, max(1.0, remaining)))

    async def stop(self) -> None:
        """Clear Run and mask the channel interrupt."""
        await self.write32(self.reg(regs.CH_CONTROL_W1C), int(Ctrl.RUN))
        await self.write32(regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1C), self.irq_bit)
        await self.read32(self.reg(regs.CH_STATUS))

    async def drain(self, drain_ns: float) -> int:
        """Poll the status (intervals growing from 200 ns to 10 us) until the channel is
        not busy or ``drain_ns`` passed; the last status read (not cleared)."""
        p = self.platform
        end = p.now_ns() + drain_ns
        interval = 200.0
        status = await self.status()
        # a failed read (all ones) reads as busy: it proves nothing
        while status & Stat.BUSY and p.now_ns() < end:
            await p.sleep_ns(min(interval, max(1.0, end - p.now_ns())))
            interval = min(interval * 2, 10_000.0)
            status = await self.status()
        return status

    async def halt(self, drain_ns: float) -> tuple[int, int, bool]:
        """Stop the channel and wait (at most ``drain_ns``) for it to drain; returns the
        status (cleared; busy kept), the completed count, and whether it is still busy."""
        await self.stop()
        status = await self.drain(drain_ns)
        if status != ALL_ONES:
            await self.stop()  # again: the first may have been lost with failed reads
        status = await self.status_clear() | (status & Stat.BUSY)
        return status, await self.completed_count(), bool(status & Stat.BUSY)

    async def finish(
        self, outcome: Outcome, started_ns: float, drain_ns: float = 20_000.0
    ) -> ChannelResult:
        """Collect a chain's result after :meth:`wait`: a finished chain's status (cleared)
        and count, then stop the channel; an unfinished one (or one whose status could not
        be read) is halted first. A chain that stopped on an error may still have reads
        outstanding: it is drained too, and ``busy`` says whether it was still busy after
        ``drain_ns``."""
        status = await self.status_clear() if outcome is Outcome.DONE else ALL_ONES
        count = await self.completed_count() if status != ALL_ONES else ALL_ONES
        if ALL_ONES not in (status, count):
            await self.stop()
            busy = False
            if status & Stat.BUSY:
                last = await self.drain(drain_ns)
                busy = bool(last & Stat.BUSY)
                status = (status & ~Stat.BUSY) | (last & Stat.BUSY)
        else:
            if outcome is Outcome.DONE:
                outcome = Outcome.NO_ANSWER
            status, count, busy = await self.halt(drain_ns)
        return ChannelResult(status, count, outcome, self.platform.now_ns() - started_ns, busy)

    async def run(
        self,
        chain: Chain,
        *,
        timeout_ns: float = 1e6,
        interrupt: bool = True,
        poll_wb_addr: int | None = None,
        control: int | None = None,
    ) -> ChannelResult:
        """Start ``chain``, wait for the channel to go idle, stop it, collect the result."""
        t0 = self.platform.now_ns()
        await self.start(chain, interrupt=interrupt, poll_wb_addr=poll_wb_addr, control=control)
        outcome = await self.wait(t0 + timeout_ns, interrupt=interrupt)
        res = await self.finish(outcome, t0)
        if res.timed_out:
            log.warning(
                "%s timed out, status %#010x (%s), count %d%s",
                self.name,
                res.status,
                regs.describe_status(res.status, self.direction),
                res.completed_count,
                ", still busy after stop" if res.busy else "",
            )
        return res


class XdmaUserIrq:
    """The engine's user interrupts (the user logic's ``usr_irq_req`` lines) as libxdma
    handles them: vector numbers in the IRQ block's user vector registers, one enable bit
    each."""

    def __init__(self, platform: Platform, count: int = 16, bar: int | None = None) -> None:
        if not 1 <= count <= regs.IRQ_USER_INT_FIELD.width:
            raise ValueError(f"user interrupts are 1 to 16, not {count}")
        self.platform = platform
        self.count = count
        self.bar = platform.bars.dma if bar is None else bar

    def _check(self, irq: int) -> None:
        if not 0 <= irq < self.count:
            raise ValueError(f"no user interrupt {irq} of {self.count}")

    async def set_vectors(self, vectors: dict[int, int]) -> None:
        """Route user interrupt ``irq`` to MSI vector ``vectors[irq]`` (the others keep
        theirs)."""
        placed: dict[int, list[tuple[regs.Field, int]]] = {}
        for irq, vector in vectors.items():
            self._check(irq)
            reg, field = regs.vector_field(irq)
            # (a vector wider than the field raises here, before any register is written)
            placed.setdefault(reg, []).append((field, field.put(vector)))
        for reg, fields in placed.items():
            off = regs.irq_reg(regs.IRQ_USER_VECTOR[reg])
            word = await self.platform.ioread32(self.bar, off)
            for field, bits in fields:
                word = word & ~field.mask | bits
            await self.platform.iowrite32(self.bar, off, word)

    async def enable(self, mask: int) -> None:
        """Enable the user interrupts of ``mask`` (W1S)."""
        await self.platform.iowrite32(self.bar, regs.irq_reg(regs.IRQ_USER_INT_EN_W1S), mask)

    async def disable(self, mask: int) -> None:
        """Disable the user interrupts of ``mask`` (W1C)."""
        await self.platform.iowrite32(self.bar, regs.irq_reg(regs.IRQ_USER_INT_EN_W1C), mask)

    async def requests(self) -> int:
        """The user logic's requests as the engine sees them now."""
        return await self.platform.ioread32(self.bar, regs.irq_reg(regs.IRQ_USER_INT_REQ))

    async def pending(self) -> int:
        """Requests whose interrupt is enabled."""
        return await self.platform.ioread32(self.bar, regs.irq_reg(regs.IRQ_USER_INT_PEND))


@dataclass(frozen=True)
class MsixEntry:
    """One entry of the engine's MSI-X table: where its message goes, what it carries,
    and whether the vector is masked."""

    address: int
    data: int
    masked: bool


class XdmaMsix:
    """The engine's MSI-X table and pending bit array in the DMA BAR (PG195: 32 entries at
    0x8000, the PBA at 0x8FE0), as the kernel's MSI-X code programs them."""

    def __init__(self, platform: Platform, bar: int | None = None) -> None:
        self.platform = platform
        self.bar = platform.bars.dma if bar is None else bar

    async def entry(self, vector: int) -> MsixEntry:
        """Read table entry ``vector``."""
        p, b = self.platform, self.bar
        lo = await p.ioread32(b, regs.msix_reg(vector, regs.MSIX_ADDR_LO))
        hi = await p.ioread32(b, regs.msix_reg(vector, regs.MSIX_ADDR_HI))
        data = await p.ioread32(b, regs.msix_reg(vector, regs.MSIX_DATA))
        ctrl = await p.ioread32(b, regs.msix_reg(vector, regs.MSIX_CTRL))
        return MsixEntry(hi << 32 | lo, data, bool(regs.MSIX_CTRL_MASKED.get(ctrl)))

    async def program(self, vector: int, address: int, data: int) -> None:
        """Write entry ``vector``'s message address (DWORD aligned) and data (flushed)."""
        if address & 3:
            raise ValueError(f"MSI-X message address {address:#x} is not DWORD aligned")
        p, b = self.platform, self.bar
        await p.iowrite32(b, regs.msix_reg(vector, regs.MSIX_ADDR_LO), address & 0xFFFFFFFF)
        await p.iowrite32(b, regs.msix_reg(vector, regs.MSIX_ADDR_HI), address >> 32)
        await p.iowrite32(b, regs.msix_reg(vector, regs.MSIX_DATA), data & 0xFFFFFFFF)
        await p.ioread32(b, regs.msix_reg(vector, regs.MSIX_DATA))  # flush the writes

    async def mask(self, vector: int, masked: bool = True) -> None:
        """Mask (or unmask) ``vector``: a masked vector's messages wait in the PBA. The
        write is flushed by a read, as Linux's MSI-X masking does."""
        off = regs.msix_reg(vector, regs.MSIX_CTRL)
        await self.platform.iowrite32(self.bar, off, regs.MSIX_CTRL_MASKED.put(int(masked)))
        await self.platform.ioread32(self.bar, off)

    async def pending(self) -> int:
        """The pending bit array: bit n, vector n has a message waiting."""
        return await self.platform.ioread32(self.bar, regs.MSIX_PBA_OFFSET)
