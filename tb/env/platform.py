"""The driver model's :class:`~driver_model.platform.Platform` on the cocotbext-pcie system
(the bring-up the driver-level tests and demos share is :func:`tb.env.harness.bring_up`).

Host RAM is one region of the root complex's memory (so user pages and descriptor rings
are real bus addresses the FPGA reaches through the fabric), MMIO goes through the
enumerated BARs, MSIs come from the root complex, completions and locks are cocotb
triggers, and time is simulated time.
"""

from __future__ import annotations

import errno
from collections.abc import Awaitable, Callable

from cocotb.triggers import Event, Lock, SimTimeoutError, Timer, with_timeout
from cocotb.utils import get_sim_time
from cocotbext.pcie.core.caps import PciCapId

from cuda_model import PeerDevice
from driver_model.host import PAGE_SIZE, HostMemory
from driver_model.platform import (
    IORESOURCE_MEM,
    IORESOURCE_MEM_64,
    IORESOURCE_PREFETCH,
    PCI_IRQ_LEGACY,
    PCI_IRQ_MSI,
    PCI_IRQ_MSIX,
)

from .system import MSI_VECTORS, TB

HOST_RAM_SIZE = 64 << 20
MMIO_TIMEOUT_US = 100  # a register access that takes longer is a hung simulation

# configuration space (include/uapi/linux/pci_regs.h)
PCI_COMMAND = 0x04
PCI_COMMAND_MEMORY = 0x2
PCI_COMMAND_INTX_DISABLE = 0x400
PCI_BRIDGE_CONTROL = 0x3E
PCI_BRIDGE_CTL_BUS_RESET = 0x40
PCI_EXP_DEVCAP = 0x04
PCI_EXP_DEVCTL = 0x08
PCI_EXP_DEVCTL_BCR_FLR = 0x8000
PCI_EXP_DEVSTA = 0x0A
PCI_EXP_DEVSTA_TRPND = 0x20
PCI_EXP_DEVCTL2 = 0x28
PCI_EXP_DEVCTL2_COMP_TMOUT_DIS = 0x10
# a configuration access that takes longer has failed
CFG_TIMEOUT_NS = 100_000
# the dwords pci_reset_function saves and restores (header and capabilities)
CONFIG_SAVE_DWORDS = 64


class RegionPhys:
    """:class:`driver_model.host.PhysMemory` over a cocotbext-axi MemoryRegion."""

    def __init__(self, region) -> None:
        self.region = region
        self.base = region.get_absolute_address(0)
        self.size = len(region)

    def _off(self, addr: int, length: int) -> int:
        off = addr - self.base
        if off < 0 or off + length > self.size:
            raise ValueError(f"host physical {addr:#x}+{length:#x} outside host RAM")
        return off

    def read(self, addr: int, length: int) -> bytes:
        off = self._off(addr, length)
        return bytes(self.region.mem[off : off + length])

    def write(self, addr: int, data) -> None:
        off = self._off(addr, len(data))
        self.region.mem[off : off + len(data)] = bytes(data)

    def view(self, addr: int, length: int) -> memoryview:
        off = self._off(addr, length)
        return memoryview(self.region.mem)[off : off + length]


class CocotbCompletion:
    """``struct completion`` on a cocotb Event."""

    def __init__(self) -> None:
        self._ev = Event()

    def complete(self) -> None:
        self._ev.set()

    def reinit(self) -> None:
        self._ev.clear()

    @property
    def done(self) -> bool:
        return self._ev.is_set()

    async def wait(self, timeout_ns: float) -> bool:
        if self._ev.is_set():
            return True
        try:
            await with_timeout(self._ev.wait(), max(1, round(timeout_ns)), "ns")
        except SimTimeoutError:
            return False
        return True


class TbPlatform:
    """The machine the driver is loaded on: the FPGA function of ``tb``, host RAM, MSIs.

    The one adapter between the driver model and the testbench: the driver and the test
    harness's :class:`~driver_model.xdma.XdmaChannel` both reach the engine through it.
    Host RAM (``host_size`` bytes of root-complex memory) is taken on first use.
    """

    def __init__(self, tb: TB, host_size: int = HOST_RAM_SIZE, seed: int = 1) -> None:
        self.tb = tb
        self.pci_dev = PeerDevice("picoevb")
        self.bars = tb.bars
        self._host_size = host_size
        self._seed = seed
        self._host: HostMemory | None = None
        self._msix_vectors = 0
        self._legacy = False  # vector 0 is the card's INTx line
        self._reset_handlers: tuple | None = None
        self.function_resets = 0
        self.bus_resets = 0
        self.link_recoveries = 0
        self._probe_state: list[int] | None = None
        self.failed_reads = 0  # MMIO reads that returned all ones
        # pci_reset_function's waits: for outstanding transactions (bounded), and after
        # the FLR before touching the function (Linux: 100 ms)
        self.flr_pending_wait_ns = 10_000.0
        self.flr_wait_ns = 10_000.0
        # how long pci_reset_bus holds Secondary Bus Reset (Linux: 2 ms), and how long
        # link recovery waits for the link
        self.sbr_hold_ns = 2_000.0
        self.link_wait_ns = 1_000_000.0

    @property
    def host(self) -> HostMemory:
        """Kernel memory and user pages, in a region of the root complex's memory."""
        if self._host is None:
            region = self.tb.alloc_host(self._host_size + PAGE_SIZE, "host RAM")
            phys = RegionPhys(region)
            base = -(-phys.base // PAGE_SIZE) * PAGE_SIZE
            self._host = HostMemory(phys, base, self._host_size, self._seed)
        return self._host

    async def pci_enable_device(self) -> None:
        await self.tb.pci.enable_device()

    async def pci_set_master(self) -> None:
        await self.tb.pci.set_master()

    async def pci_alloc_irq_vectors(
        self, min_vecs: int, max_vecs: int, flags: int = PCI_IRQ_MSI
    ) -> int:
        max_vecs = min(max_vecs, MSI_VECTORS)
        nvec = -1
        if flags & PCI_IRQ_MSIX and self.tb.profile.msix:
            nvec = await self.tb.enable_msi(min_vecs, max_vecs, msix=True)
            if nvec >= 1:
                self._msix_vectors = nvec
        if nvec < 1 and flags & PCI_IRQ_MSI:
            nvec = await self.tb.enable_msi(min_vecs, max_vecs)
        if nvec < 1 and flags & PCI_IRQ_LEGACY and self.tb.dev.functions[0].interrupt_pin:
            # pci_intx(pdev, 1): Interrupt Disable cleared, the line taken
            cmd = await self.tb.pci.config_read_word(PCI_COMMAND, timeout=CFG_TIMEOUT_NS)
            if cmd & PCI_COMMAND_INTX_DISABLE:
                await self.tb.pci.config_write_word(
                    PCI_COMMAND, cmd & ~PCI_COMMAND_INTX_DISABLE, timeout=CFG_TIMEOUT_NS
                )
            self._legacy = True
            self.tb.enable_intx()
            nvec = 1
        return nvec

    @property
    def irq_legacy(self) -> bool:
        return self._legacy

    def set_reset_handlers(
        self, prepare: Callable[[], Awaitable[None]], done: Callable[[int], Awaitable[None]]
    ) -> None:
        self._reset_handlers = (prepare, done)

    async def pci_reset_function(self) -> int:
        return await self._reset(self._flr)

    async def pci_reset_bus(self) -> int:
        """``pci_reset_bus``: a hot reset of the card (the Secondary Bus Reset of the
        bridge above it), with the driver's reset_prepare/reset_done around it and the
        function's config state saved and restored. 0 or -errno."""
        return await self._reset(self._hot_reset)

    async def pci_save_state(self) -> None:
        self._probe_state = await self._save_state()

    async def pcie_link_recovery(self) -> int:
        """What the kernel's error recovery (AER/DPC, or pciehp's link-up) does after the
        card's link went down and came back: the driver's reset_prepare, the link awaited
        (bounded), the state the driver saved at probe restored, reset_done. 0 or
        -errno (ENODEV: the link did not come back)."""

        async def restore() -> int:
            end = self.now_ns() + self.link_wait_ns
            while self.tb.dev.link_down:
                if self.now_ns() >= end:
                    return -errno.ENODEV
                await self.sleep_ns(1000)
            await self.sleep_ns(self.flr_wait_ns)
            if self._probe_state is None:
                return -errno.EINVAL
            rc = await self._restore_state(self._probe_state)
            self.link_recoveries += rc == 0
            return rc

        return await self._reset(restore)

    async def _reset(self, how: Callable[[], Awaitable[int]]) -> int:
        prepare, done = self._reset_handlers or (None, None)
        if prepare is not None:
            await prepare()
        rc = -errno.ENODEV
        try:
            rc = await how()
        finally:
            if done is not None:
                await done(rc)
        return rc

    async def _save_state(self) -> list[int]:
        """pci_save_state: the header and the capabilities."""
        return await self.tb.pci.config_read_dwords(0, CONFIG_SAVE_DWORDS, timeout=CFG_TIMEOUT_NS)

    async def _restore_state(self, saved: list[int]) -> int:
        """pci_restore_state once the function answers: BARs and capabilities first, the
        Command register last, then the MSI-X table (it lives in a BAR the reset cleared)."""
        pci = self.tb.pci
        to = {"timeout": CFG_TIMEOUT_NS}
        if await pci.config_read_word(0, **to) == 0xFFFF:
            return -errno.ENODEV
        for i in range(4, CONFIG_SAVE_DWORDS):
            await pci.config_write_dword(4 * i, saved[i], **to)
        await pci.config_write_word(PCI_COMMAND, saved[1] & 0xFFFF, **to)
        if self._msix_vectors:
            await self.tb.enable_msi(self._msix_vectors, self._msix_vectors, msix=True)
        return 0

    async def _flr(self) -> int:
        pci = self.tb.pci
        to = {"timeout": CFG_TIMEOUT_NS}
        exp = pci.get_capability_offset(PciCapId.EXP)
        if exp is None or not (await pci.config_read_dword(exp + PCI_EXP_DEVCAP, **to)) >> 28 & 1:
            return -errno.ENOTTY
        saved = await self._save_state()
        # pci_dev_save_and_disable: no bus mastering, no INTx
        await pci.config_write_word(PCI_COMMAND, PCI_COMMAND_INTX_DISABLE, **to)
        # pci_wait_for_pending_transaction (bounded)
        end = self.now_ns() + self.flr_pending_wait_ns
        while await pci.config_read_word(exp + PCI_EXP_DEVSTA, **to) & PCI_EXP_DEVSTA_TRPND:
            if self.now_ns() >= end:
                break
            await self.sleep_ns(1000)
        devctl = await pci.config_read_word(exp + PCI_EXP_DEVCTL, **to)
        await pci.config_write_word(exp + PCI_EXP_DEVCTL, devctl | PCI_EXP_DEVCTL_BCR_FLR, **to)
        # Linux sleeps 100 ms here; the model's function is back within flr_wait_ns
        await self.sleep_ns(self.flr_wait_ns)
        rc = await self._restore_state(saved)
        self.function_resets += rc == 0
        return rc

    async def _hot_reset(self) -> int:
        pci = self.tb.pci
        bridge = pci.upstream_bridge()
        if bridge is None:
            return -errno.ENOTTY
        to = {"timeout": CFG_TIMEOUT_NS}
        saved = await self._save_state()
        await pci.config_write_word(PCI_COMMAND, PCI_COMMAND_INTX_DISABLE, **to)
        # pci_reset_secondary_bus: Secondary Bus Reset held (Linux: 2 ms), released, and
        # the link trained again before the function is touched (Linux: up to 1 s)
        ctl = await bridge.config_read_word(PCI_BRIDGE_CONTROL, **to)
        await bridge.config_write_word(PCI_BRIDGE_CONTROL, ctl | PCI_BRIDGE_CTL_BUS_RESET, **to)
        await self.sleep_ns(self.sbr_hold_ns)
        await bridge.config_write_word(PCI_BRIDGE_CONTROL, ctl, **to)
        await self.sleep_ns(self.flr_wait_ns)
        rc = await self._restore_state(saved)
        self.bus_resets += rc == 0
        return rc

    def request_irq(self, vector: int, handler: Callable[[], Awaitable[None] | None]) -> None:
        if self._legacy:
            if vector != 0:
                raise ValueError(f"vector {vector}: the legacy interrupt is vector 0")
            self.tb.intx_handlers.append(handler)
        else:
            self.tb.irq_handlers[vector].append(handler)

    def irq_count(self, vector: int) -> int:
        return self.tb.intx_count if self._legacy else self.tb.msi_count[vector]

    def pci_resource_len(self, bar: int) -> int:
        sizes = self.tb.pci.bar_size
        return (sizes[bar] or 0) if 0 <= bar < len(sizes) else 0

    def pci_resource_start(self, bar: int) -> int:
        if not self.pci_resource_len(bar):
            return 0
        return self.tb.pci.bar_addr[bar] or 0

    def pci_resource_flags(self, bar: int) -> int:
        if not self.pci_resource_len(bar):
            return 0
        raw = self.tb.pci.bar_raw[bar] or 0
        if raw & 1:
            return 0  # an I/O BAR: the FPGA function has none
        flags = IORESOURCE_MEM
        flags |= IORESOURCE_MEM_64 if raw & 4 else 0
        flags |= IORESOURCE_PREFETCH if raw & 8 else 0
        return flags

    def _window(self, bar: int):
        if not self.pci_resource_len(bar):
            raise ValueError(f"BAR{bar} is not implemented by the FPGA")
        return self.tb.pci.bar_window[bar]

    async def ioread32(self, bar: int, offset: int) -> int:
        window = self._window(bar)
        try:
            return await with_timeout(window.read_dword(offset), MMIO_TIMEOUT_US, "us")
        except Exception as e:
            # the read failed (UR, CA, no completion): the CPU sees all ones
            self.failed_reads += 1
            self.tb.log.warning("MMIO read of BAR%d %#x failed (%s): all ones", bar, offset, e)
            return 0xFFFFFFFF

    async def iowrite32(self, bar: int, offset: int, value: int) -> None:
        window = self._window(bar)
        await with_timeout(window.write_dword(offset, value & 0xFFFFFFFF), MMIO_TIMEOUT_US, "us")

    def completion(self) -> CocotbCompletion:
        return CocotbCompletion()

    def mutex(self) -> Lock:
        return Lock()

    async def sleep_ns(self, ns: float) -> None:
        await Timer(max(1, round(ns)), "ns")

    def now_ns(self) -> float:
        return get_sim_time("ns")
