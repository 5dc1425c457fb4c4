"""Programming an XDMA channel over MMIO: start a descriptor chain, wait, collect status.

No simulator dependency: the bus is anything with the :class:`DmaBus` methods (the
testbench implements them on cocotbext-pcie; a unit test can fake them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from . import regs
from .desc import Chain
from .regs import Ctrl, Stat, Target

log = logging.getLogger(__name__)


class DmaBus(Protocol):
    """What the driver needs from the platform."""

    async def read32(self, offset: int) -> int:
        """Read a 32-bit register of the DMA BAR."""
        ...

    async def write32(self, offset: int, value: int) -> None:
        """Write a 32-bit register of the DMA BAR."""
        ...

    async def wait_interrupt(self, vector: int, timeout_ns: float) -> bool:
        """Wait for an MSI on ``vector``; False on timeout."""
        ...

    async def sleep_ns(self, ns: float) -> None:
        """Let ``ns`` of (simulated) time pass."""
        ...

    def now_ns(self) -> float:
        """The current (simulated) time."""
        ...


class XdmaError(RuntimeError):
    """The engine did not behave like an XDMA engine (identifiers, timeouts)."""


@dataclass
class ChannelResult:
    """What one chain run ended with."""

    status: int
    completed_count: int
    timed_out: bool
    elapsed_ns: float

    @property
    def errors(self) -> int:
        """Error bits of the status (descriptor/read/write errors, magic, align, length)."""
        return self.status & regs.STAT_ERROR_MASK

    @property
    def ok(self) -> bool:
        """No error bit and no timeout."""
        return not self.timed_out and not self.errors


class XdmaChannel:
    """One H2C or C2H channel of the DMA BAR."""

    def __init__(self, bus: DmaBus, direction: Target, channel: int = 0, vector: int = 0):
        if direction not in (Target.H2C, Target.C2H):
            raise ValueError(f"not a channel direction: {direction!r}")
        self.bus = bus
        self.direction = direction
        self.channel = channel
        self.vector = vector
        self.irq_bit = regs.chan_irq_bit(direction, channel)

    def reg(self, offset: int) -> int:
        """Offset of a channel register."""
        return regs.ch_reg(self.direction, offset, self.channel)

    def sgreg(self, offset: int) -> int:
        """Offset of an SGDMA register of this channel."""
        return regs.sg_reg(self.direction, offset, self.channel)

    async def identify(self) -> None:
        """Check the channel and SGDMA identifiers; raise :class:`XdmaError` otherwise."""
        for off, target in (
            (self.reg(regs.CH_IDENTIFIER), self.direction),
            (self.sgreg(regs.SG_IDENTIFIER),
             Target.H2C_SGDMA if self.direction == Target.H2C else Target.C2H_SGDMA),
        ):
            got = await self.bus.read32(off)
            want = regs.identifier(target, self.channel)
            if regs.ID_SUBSYSTEM.get(got) != regs.ID_SUBSYSTEM_VALUE or regs.ID_TARGET.get(
                got
            ) != int(target):
                raise XdmaError(f"identifier at {off:#06x} is {got:#010x}, expected {want:#010x}")

    async def status(self) -> int:
        """Status without clearing it (0x40)."""
        return await self.bus.read32(self.reg(regs.CH_STATUS))

    async def status_clear(self) -> int:
        """Status, clearing it (0x44)."""
        return await self.bus.read32(self.reg(regs.CH_STATUS_RC))

    async def completed_count(self) -> int:
        """Completed descriptor count (0x48)."""
        return await self.bus.read32(self.reg(regs.CH_COMPLETED_COUNT))

    async def start(
        self,
        chain: Chain,
        *,
        interrupt: bool = True,
        poll_wb_addr: int | None = None,
        control: int | None = None,
    ) -> None:
        """Program the first descriptor and start the channel (libxdma's sequence)."""
        await self.bus.write32(self.sgreg(regs.SG_DESC_LO), chain.first & 0xFFFFFFFF)
        await self.bus.write32(self.sgreg(regs.SG_DESC_HI), chain.first >> 32)
        await self.bus.write32(self.sgreg(regs.SG_DESC_ADJ), chain.first_adj)
        ctrl = int(regs.CTRL_IE_ALL | Ctrl.RUN) if control is None else control | Ctrl.RUN
        if poll_wb_addr is not None:
            await self.bus.write32(self.reg(regs.CH_POLL_WB_LO), poll_wb_addr & 0xFFFFFFFF)
            await self.bus.write32(self.reg(regs.CH_POLL_WB_HI), poll_wb_addr >> 32)
            ctrl |= Ctrl.POLLMODE_WB_ENABLE | Ctrl.IE_DESC_COMPLETED
        # clear what a previous run left in the status before interrupts are enabled
        await self.bus.read32(self.reg(regs.CH_STATUS_RC))
        mask = int(regs.CTRL_IE_ALL) if interrupt else 0
        await self.bus.write32(self.reg(regs.CH_INT_MASK), mask)
        if interrupt:
            await self.bus.write32(regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1S), self.irq_bit)
        await self.bus.write32(self.reg(regs.CH_PERF_CTRL), int(regs.Perf.RUN | regs.Perf.AUTO))
        await self.bus.write32(self.reg(regs.CH_CONTROL), int(ctrl))
        # a read flushes the posted writes
        await self.bus.read32(self.reg(regs.CH_STATUS))

    async def wait(self, *, timeout_ns: float, interrupt: bool = True,
                   poll_interval_ns: float = 500.0) -> tuple[int, bool]:
        """Wait until the channel is no longer busy; returns (status, timed_out)."""
        deadline = self.bus.now_ns() + timeout_ns
        got_irq = False
        while True:
            if interrupt and not got_irq:
                remaining = deadline - self.bus.now_ns()
                if remaining > 0:
                    got_irq = await self.bus.wait_interrupt(self.vector, remaining)
            else:
                # polling, or an interrupt came while the engine was still draining
                await self.bus.sleep_ns(poll_interval_ns)
            status = await self.status()
            if not status & Stat.BUSY:
                return status, False
            if self.bus.now_ns() >= deadline:
                return status, True

    async def stop(self) -> None:
        """Clear Run and mask the channel interrupt."""
        await self.bus.write32(self.reg(regs.CH_CONTROL_W1C), int(Ctrl.RUN))
        await self.bus.write32(regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1C), self.irq_bit)
        await self.bus.read32(self.reg(regs.CH_STATUS))

    async def run(self, chain: Chain, *, timeout_ns: float = 1e6, interrupt: bool = True,
                  poll_wb_addr: int | None = None, control: int | None = None) -> ChannelResult:
        """Start ``chain``, wait for the channel to go idle, stop it, collect the result."""
        t0 = self.bus.now_ns()
        await self.start(chain, interrupt=interrupt, poll_wb_addr=poll_wb_addr, control=control)
        status, timed_out = await self.wait(timeout_ns=timeout_ns, interrupt=interrupt)
        elapsed = self.bus.now_ns() - t0
        count = await self.completed_count()
        if timed_out:
            log.warning("%s channel %d timed out, status %#010x count %d",
                        self.direction.name, self.channel, status, count)
        await self.stop()
        return ChannelResult(status, count, timed_out, elapsed)
