"""The function's BAR layout from the XDMA IP's PCIe BARs options, and the driver finding
it the way libxdma does (``identify_bars``)."""

from __future__ import annotations

import asyncio

import pytest

from driver_model import regs
from driver_model.platform import IORESOURCE_MEM, IORESOURCE_MEM_64, IORESOURCE_PREFETCH
from driver_model.regs import BarLayout, Target
from driver_model.xdma import XdmaChannel, XdmaError, identify_bars


def test_32bit_layout_is_pg195s_table():
    """PG195 "Target Bridge", table "32-Bit BARs": the AXI4-Lite master, the DMA and the
    bypass master in BAR0, 1, 2; the DMA moves down to BAR0 without the AXI4-Lite master."""
    assert BarLayout.vivado() == BarLayout(user=0, dma=1)
    assert BarLayout.vivado(axib=True) == BarLayout(user=0, dma=1, axib=2)
    assert BarLayout.vivado(axil_master=False) == BarLayout(user=None, dma=0)
    assert BarLayout.vivado(axil_master=False, axib=True) == BarLayout(None, 0, 1)


def test_64bit_layout_is_pg195s_table():
    """Table "64-Bit BARs": BAR0, BAR2, BAR4, each with the next BAR as its upper half."""
    got = BarLayout.vivado(axil_master_64bit=True, dma_64bit=True, axib=True, axib_64bit=True)
    assert (got.user, got.dma, got.axib) == (0, 2, 4)
    assert got.wide == {0, 2, 4}
    assert got.of(1) is None and got.of(3) is None and got.of(5) is None


@pytest.mark.parametrize(
    "opts, want",
    [
        # a 64-bit BAR takes the next even pair: Vivado's MSI-X BIR "BAR_3:2" for a
        # 32-bit AXI4-Lite master before a 64-bit DMA BAR
        ({"dma_64bit": True}, (0, 2, None)),
        # a 64-bit AXI4-Lite master and a 32-bit DMA BAR: the DMA's BIR is "BAR_2"
        ({"axil_master_64bit": True, "axib": True}, (0, 2, 3)),
        ({"axil_master_64bit": True, "axib": True, "axib_64bit": True}, (0, 2, 4)),
        ({"axib": True, "axib_64bit": True}, (0, 1, 2)),
        ({"axil_master": False, "dma_64bit": True, "axib": True}, (None, 0, 2)),
    ],
)
def test_mixed_layouts(opts, want):
    got = BarLayout.vivado(**opts)
    assert (got.user, got.dma, got.axib) == want


def test_prefetchable_marks_the_bar():
    got = BarLayout.vivado(dma_64bit=True, dma_prefetchable=True, axil_master_prefetchable=True)
    assert got.prefetchable == {0, 2}
    assert got.wide == {2}


class BarsPlatform:
    """A function with BARs as a layout gives them: the DMA BAR answers with the engine's
    identifiers, every other BAR with a pattern; reads are recorded."""

    def __init__(self, layout: BarLayout, dma_ids: bool = True) -> None:
        self.layout = layout
        self.bars = BarLayout()  # what the driver assumes until it looks
        self.dma_ids = dma_ids
        self.reads: list[tuple[int, int]] = []
        self.sizes = {layout.user: 4 << 10, layout.dma: 64 << 10, layout.axib: 1 << 20}
        self.sizes.pop(None, None)

    def pci_resource_len(self, bar: int) -> int:
        return self.sizes.get(bar, 0)

    def pci_resource_flags(self, bar: int) -> int:
        if bar not in self.sizes:
            return 0
        flags = IORESOURCE_MEM
        flags |= IORESOURCE_MEM_64 if bar in self.layout.wide else 0
        return flags | (IORESOURCE_PREFETCH if bar in self.layout.prefetchable else 0)

    async def ioread32(self, bar: int, offset: int) -> int:
        assert bar in self.sizes and offset < self.sizes[bar], (bar, offset)
        self.reads.append((bar, offset))
        if bar == self.layout.dma and self.dma_ids:
            # a later IP version's identifiers differ only in their version byte
            if offset == regs.block_base(Target.IRQ):
                return regs.identifier(Target.IRQ) ^ 0x03
            if offset == regs.block_base(Target.CONFIG):
                return regs.identifier(Target.CONFIG)
        return 0x1FC30000 if bar != self.layout.dma else 0


ALL_LAYOUTS = [
    BarLayout.vivado(
        axil_master=bool(k & 1),
        axil_master_64bit=bool(k & 2),
        dma_64bit=bool(k & 4),
        axib=bool(k & 8),
        axib_64bit=bool(k & 16),
        dma_prefetchable=bool(k & 32),
    )
    for k in range(64)
]


@pytest.mark.parametrize("layout", ALL_LAYOUTS, ids=lambda b: f"u{b.user}-d{b.dma}-a{b.axib}")
def test_identify_bars_finds_every_layout(layout):
    """libxdma's rule finds each space whatever the widths: the DMA BAR by its IRQ and
    config block identifiers (version aside), the user BAR before it, the bypass after."""
    p = BarsPlatform(layout)
    got = asyncio.run(identify_bars(p))  # type: ignore[arg-type]
    assert got == layout
    # only BARs big enough to be the DMA BAR were read, none beyond the DMA BAR
    assert all(p.sizes[bar] >= regs.BAR_DMA_SIZE and bar <= layout.dma for bar, _ in p.reads)


def test_identify_bars_without_the_engine_fails():
    p = BarsPlatform(BarLayout.vivado(axib=True), dma_ids=False)
    with pytest.raises(XdmaError, match="no BAR"):
        asyncio.run(identify_bars(p))  # type: ignore[arg-type]


def test_identify_bars_refuses_a_layout_it_cannot_name():
    """Two BARs before the DMA BAR: which is the user's? libxdma cannot say either."""
    layout = BarLayout(user=1, dma=2)
    p = BarsPlatform(layout)
    p.sizes[0] = 4 << 10
    with pytest.raises(XdmaError, match="more than one BAR on a side"):
        asyncio.run(identify_bars(p))  # type: ignore[arg-type]


def test_channels_use_the_platforms_dma_bar():
    p = BarsPlatform(BarLayout.vivado(dma_64bit=True))
    p.bars = p.layout
    p.completion = lambda: None  # type: ignore[method-assign]
    assert XdmaChannel(p, Target.C2H).bar == 2  # type: ignore[arg-type]
    assert XdmaChannel(p, Target.C2H, bar=1).bar == 1  # type: ignore[arg-type]
