"""What the guest bridge's unit tests and fuzz targets give it in place of a simulation:
a device that records what reaches it, and the memory space of a root complex."""

from __future__ import annotations

from cocotbext.axi.address_space import AddressSpace, Region


class Device:
    """A device that counts what reaches it (every access, in order)."""

    def __init__(self) -> None:
        self.seen: list[tuple] = []

    async def config_read(self, offset: int, size: int) -> int:
        self.seen.append(("config_read", offset, size))
        return 0

    async def config_write(self, offset: int, size: int, value: int) -> None:
        self.seen.append(("config_write", offset, size))

    async def bar_read(self, bar: int, offset: int, size: int) -> bytes:
        self.seen.append(("bar_read", bar, offset, size))
        return bytes(size)

    async def bar_write(self, bar: int, offset: int, data: bytes) -> None:
        self.seen.append(("bar_write", bar, offset, len(data)))


class RootComplex:
    """What the bridge uses of a root complex: its memory space (host memory below
    0x80000000 as a pool, the MSI region at 0x80000000, as cocotbext-pcie's)."""

    def __init__(self) -> None:
        self.mem_address_space = AddressSpace(2**64)
        self.mem_pool = self.mem_address_space.create_pool(0, 0x8000_0000)
        self.msi_region = Region(0x1000)
        self.mem_address_space.register_region(self.msi_region, 0x8000_0000)
