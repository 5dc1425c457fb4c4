"""What the guest bridge's unit tests and fuzz targets give it in place of a simulation:
a device that records what reaches it, the memory space of a root complex, and the
guest's RAM as a device on its bus reaches it."""

from __future__ import annotations

from cocotbext.axi.address_space import AddressSpace, Region

from tb.guest.vhost_user import GuestMemoryError


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


class GuestRam:
    """``size`` bytes of guest RAM at ``base`` as a guest device reaches it (GuestMemory's
    ``read`` and ``write``), recording every write; outside it, GuestMemoryError."""

    def __init__(self, base: int, size: int) -> None:
        self.base = base
        self.buf = bytearray(size)
        self.writes: list[tuple[int, int]] = []

    def _off(self, addr: int, n: int) -> int:
        if not self.base <= addr <= addr + n <= self.base + len(self.buf):
            raise GuestMemoryError(f"0x{addr:x}+{n}: outside the memory the guest shared")
        return addr - self.base

    def read(self, addr: int, n: int) -> bytes:
        o = self._off(addr, n)
        return bytes(self.buf[o : o + n])

    def write(self, addr: int, data: bytes) -> None:
        o = self._off(addr, len(data))
        self.buf[o : o + len(data)] = data
        self.writes.append((addr, len(data)))
