"""A function of the simulated fabric as a guest's PCI bus sees it
(:class:`tb.guest.virtpci.GuestPciDevice`): config accesses reach the function's real
configuration space through the root complex, BAR accesses go out as memory TLPs from the
root complex to the BARs enumeration placed in the fabric.

The BAR registers are shadowed. The guest sizes and places the BARs in its own window
(UML: 0xf0000000-0xffffffff), and its BAR accesses arrive by index and offset, so the
function keeps the addresses the fabric gave it: a guest's write to a BAR register is kept
here and its read answered from here (the size probe answered from the real BAR's size
and flags), and the expansion ROM register reads 0 (no ROM).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from cocotb.triggers import with_timeout

log = logging.getLogger("cocotb.guest")

BAR0 = 0x10
BAR_COUNT = 6
ROM_BAR = 0x30
IO_SPACE = 1
MEM_64 = 0x4
# a BAR access that gets no answer in this long fails (all-ones), as a CPU's would
ACCESS_TIMEOUT_US = 100


@dataclass
class Bar:
    """One implemented BAR: where the fabric placed it, its size, its low flag bits, and
    the value the guest last wrote to its register(s)."""

    index: int
    address: int
    size: int
    flags: int
    wide: bool
    shadow: int = 0

    def register(self, upper: bool) -> int:
        """What the guest reads from the BAR's register (the upper one of a 64-bit BAR
        when ``upper``)."""
        mask = ~(self.size - 1) & ((1 << 64) - 1 if self.wide else 0xFFFFFFFF)
        value = (self.shadow & mask) | self.flags
        return (value >> 32) & 0xFFFFFFFF if upper else value & 0xFFFFFFFF


class FabricFunction:
    """The function ``pci`` (a cocotbext-pcie ``Device`` found by enumeration) behind the
    root complex ``rc``, for a guest. :meth:`probe` reads its BARs once, before the guest
    starts. ``accesses`` counts what the guest did, by kind."""

    def __init__(self, rc, pci, name: str = "card") -> None:
        self.rc = rc
        self.pci = pci
        self.name = name
        self.bars: dict[int, Bar] = {}
        self._upper: dict[int, int] = {}  # register index of a 64-bit BAR's upper half -> BAR
        self.accesses = {"config_read": 0, "config_write": 0, "bar_read": 0, "bar_write": 0}
        self.failed_reads = 0

    async def probe(self) -> None:
        """Read the BARs the fabric assigned: address, size and flags of each."""
        self.bars.clear()
        self._upper.clear()
        i = 0
        while i < BAR_COUNT:
            reg = BAR0 + 4 * i
            value = await self._dword(reg)
            await self.rc.config_write(self.pci.pcie_id, reg, b"\xff\xff\xff\xff")
            probe = await self._dword(reg)
            await self.rc.config_write(self.pci.pcie_id, reg, value.to_bytes(4, "little"))
            if probe == 0 or value & IO_SPACE:
                i += 1
                continue
            wide = bool(value & MEM_64)
            mask, address = probe & ~0xF, value & ~0xF
            if wide:
                upper = await self._dword(reg + 4)
                await self.rc.config_write(self.pci.pcie_id, reg + 4, b"\xff\xff\xff\xff")
                mask |= (await self._dword(reg + 4)) << 32
                await self.rc.config_write(self.pci.pcie_id, reg + 4, upper.to_bytes(4, "little"))
                address |= upper << 32
            else:
                mask |= 0xFFFFFFFF00000000
            size = (~mask & ((1 << 64) - 1)) + 1
            self.bars[i] = Bar(i, address, size, value & 0xF, wide)
            log.info(
                "guest %s: BAR%d at 0x%x in the fabric, %d KiB%s",
                self.name,
                i,
                address,
                size >> 10,
                ", 64-bit" if wide else "",
            )
            if wide:
                self._upper[i + 1] = i
                i += 2
            else:
                i += 1

    async def _dword(self, offset: int) -> int:
        data = await self.rc.config_read(self.pci.pcie_id, offset, 4)
        return int.from_bytes(data, "little")

    def _bar_register(self, offset: int) -> tuple[Bar | None, bool] | None:
        """The BAR whose register holds config ``offset`` (None: not a BAR register)."""
        if offset == ROM_BAR or not BAR0 <= offset < BAR0 + 4 * BAR_COUNT:
            return None if offset != ROM_BAR else (None, False)
        index = (offset - BAR0) // 4
        if index in self._upper:
            return self.bars[self._upper[index]], True
        return self.bars.get(index), False

    async def config_read(self, offset: int, size: int) -> int:
        self.accesses["config_read"] += 1
        if self._bar_register(offset & ~3) is not None:
            value = self._shadow_read(offset & ~3)
            if size == 8:
                value |= self._shadow_read((offset & ~3) + 4) << 32
            return (value >> (8 * (offset & 3))) & ((1 << (8 * size)) - 1)
        data = await self.rc.config_read(self.pci.pcie_id, offset, size)
        return int.from_bytes(data, "little")

    def _shadow_read(self, reg: int) -> int:
        found = self._bar_register(reg)
        if found is None:
            return 0
        bar, upper = found
        return 0 if bar is None else bar.register(upper)

    async def config_write(self, offset: int, size: int, value: int) -> None:
        self.accesses["config_write"] += 1
        for i in range(0, size, 4) if size == 8 else (0,):
            part = (value >> (8 * i)) & 0xFFFFFFFF if size == 8 else value
            width = 4 if size == 8 else size
            reg = (offset + i) & ~3
            found = self._bar_register(reg)
            if found is None:
                data = part.to_bytes(width, "little")
                await self.rc.config_write(self.pci.pcie_id, offset + i, data)
                continue
            bar, upper = found
            if bar is None:
                continue
            shift = 8 * ((offset + i) & 3) + (32 if upper else 0)
            mask = ((1 << (8 * width)) - 1) << shift
            bar.shadow = (bar.shadow & ~mask) | ((part << shift) & mask)

    def fabric_address(self, bar: int, offset: int, size: int) -> int | None:
        """The fabric address of ``size`` bytes at ``offset`` in BAR ``bar`` (None: not in
        one of the function's BARs)."""
        b = self.bars.get(bar)
        if b is None or offset + size > b.size:
            return None
        return b.address + offset

    async def bar_read(self, bar: int, offset: int, size: int) -> bytes:
        self.accesses["bar_read"] += 1
        addr = self.fabric_address(bar, offset, size)
        if addr is None:
            log.warning(
                "guest %s: read of BAR%d+0x%x (%d bytes) outside its BARs",
                self.name,
                bar,
                offset,
                size,
            )
            self.failed_reads += 1
            return b"\xff" * size
        try:
            return bytes(await with_timeout(self.rc.mem_read(addr, size), ACCESS_TIMEOUT_US, "us"))
        except Exception as e:  # UR, CA, a completion timeout: the CPU reads all-ones
            log.warning(
                "guest %s: read of BAR%d+0x%x failed (%s): all-ones", self.name, bar, offset, e
            )
            self.failed_reads += 1
            return b"\xff" * size

    async def bar_write(self, bar: int, offset: int, data: bytes) -> None:
        self.accesses["bar_write"] += 1
        addr = self.fabric_address(bar, offset, len(data))
        if addr is None:
            log.warning(
                "guest %s: write of BAR%d+0x%x (%d bytes) outside its BARs: dropped",
                self.name,
                bar,
                offset,
                len(data),
            )
            return
        await self.rc.mem_write(addr, data)
