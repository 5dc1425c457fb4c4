"""What the driver needs from the machine it is loaded on: PCI config and MMIO of its
function, MSI vectors, coherent DMA memory, sleeping locks and completions, and time.

The testbench implements :class:`Platform` on cocotbext-pcie (``tb.platform``); nothing
here imports a simulator.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from .host import HostMemory
from .regs import BarLayout

# pci_alloc_irq_vectors flags (include/linux/pci.h): the kinds of interrupt a driver
# accepts; MSI-X is tried before MSI, the legacy interrupt (INTx) last
PCI_IRQ_LEGACY = 1 << 0
PCI_IRQ_MSI = 1 << 1
PCI_IRQ_MSIX = 1 << 2
# pci_resource_flags bits (include/linux/ioport.h): a memory BAR, prefetchable, 64-bit
IORESOURCE_MEM = 0x00000200
IORESOURCE_PREFETCH = 0x00002000
IORESOURCE_MEM_64 = 0x00100000


class Completion(Protocol):
    """``struct completion``: ``complete()`` wakes the waiter; ``reinit()`` re-arms it."""

    def complete(self) -> None:
        """Signal (stays signalled until :meth:`reinit`)."""
        ...

    def reinit(self) -> None:
        """Forget an earlier signal."""
        ...

    @property
    def done(self) -> bool:
        """Signalled and not yet re-armed."""
        ...

    async def wait(self, timeout_ns: float) -> bool:
        """``wait_for_completion_timeout``: False when ``timeout_ns`` passed first."""
        ...


class Mutex(Protocol):
    """A sleeping lock, used as ``async with``."""

    async def __aenter__(self) -> None: ...

    async def __aexit__(self, *exc: object) -> None: ...


class Platform(Protocol):
    """The kernel services and the bound PCI function."""

    host: HostMemory
    # the handle the GPU driver knows the function by (``struct pci_dev *`` for
    # ``nvidia_p2p_dma_map_pages``)
    pci_dev: object
    # where the function's address spaces are: the picoevb's fixed layout until a driver
    # that finds them (:func:`~driver_model.xdma.identify_bars`) stores what it found
    bars: BarLayout

    async def pci_enable_device(self) -> None:
        """Enable memory decoding of the function."""
        ...

    async def pci_set_master(self) -> None:
        """Enable bus mastering."""
        ...

    async def pci_reset_function(self) -> int:
        """``pci_reset_function``: the bound driver's reset_prepare, save the function's
        config state, disable bus mastering, wait (bounded) for its transactions to
        finish, function-level reset, wait for the function, restore the state (and the
        MSI-X table), the driver's reset_done(rc). 0, or -ENOTTY when the function cannot
        be reset, -ENODEV when it does not come back."""
        ...

    async def pci_reset_bus(self) -> int:
        """``pci_reset_bus``: a hot reset (Secondary Bus Reset) of the slot, with the
        driver's reset_prepare/reset_done around it and the config state restored. 0 or
        -errno."""
        ...

    async def pci_save_state(self) -> None:
        """``pci_save_state`` at probe: what error recovery restores after the link was
        lost (the function's own config is gone then)."""
        ...

    async def pcie_link_recovery(self) -> int:
        """The kernel's recovery after the link went down and came back (AER/DPC slot
        reset): reset_prepare, the state saved at probe restored, reset_done. 0 or
        -errno."""
        ...

    def set_reset_handlers(
        self, prepare: Callable[[], Awaitable[None]], done: Callable[[int], Awaitable[None]]
    ) -> None:
        """The bound driver's ``err_handler->reset_prepare`` and ``reset_done``, called
        around every reset of the function, whoever asks for it."""
        ...

    async def pci_alloc_irq_vectors(
        self, min_vecs: int, max_vecs: int, flags: int = PCI_IRQ_MSI
    ) -> int:
        """Enable MSI-X or MSI (as ``flags`` allow, MSI-X first) with up to ``max_vecs``
        vectors, or with ``PCI_IRQ_LEGACY`` the function's legacy interrupt (one vector,
        0) where neither is granted; the number granted (< 1: failure)."""
        ...

    @property
    def irq_legacy(self) -> bool:
        """Vector 0 is the legacy interrupt (INTx), not a message."""
        ...

    def request_irq(self, vector: int, handler: Callable[[], Awaitable[None] | None]) -> None:
        """Call ``handler()`` whenever interrupt vector ``vector`` arrives. On the legacy
        interrupt the handler runs while the line is asserted, the line masked until it
        returns (it may await: a threaded handler with IRQF_ONESHOT); it must clear or
        mask its source."""
        ...

    def irq_count(self, vector: int) -> int:
        """Interrupts delivered on ``vector`` so far (``/proc/interrupts``)."""
        ...

    def pci_resource_len(self, bar: int) -> int:
        """``pci_resource_len``: the size of BAR ``bar`` in bytes; 0 where the function
        has no BAR (the upper half of a 64-bit BAR included)."""
        ...

    def pci_resource_start(self, bar: int) -> int:
        """``pci_resource_start``: the bus address BAR ``bar`` was given (0 if none)."""
        ...

    def pci_resource_flags(self, bar: int) -> int:
        """``pci_resource_flags``: ``IORESOURCE_*`` bits of BAR ``bar`` (0 if none)."""
        ...

    async def ioread32(self, bar: int, offset: int) -> int:
        """A 32-bit MMIO read of BAR ``bar`` (non-posted: returns the register value)."""
        ...

    async def iowrite32(self, bar: int, offset: int, value: int) -> None:
        """A 32-bit MMIO write (posted)."""
        ...

    def completion(self) -> Completion:
        """A new completion."""
        ...

    def mutex(self) -> Mutex:
        """A new sleeping lock."""
        ...

    async def sleep_ns(self, ns: float) -> None:
        """Sleep (simulated time)."""
        ...

    def now_ns(self) -> float:
        """ktime (simulated), in ns."""
        ...
