"""A byte array standing for host RAM at a bus address (driver_model.host.PhysMemory)."""

from __future__ import annotations


class Ram:
    """``size`` bytes of RAM from bus address ``base``."""

    def __init__(self, base: int, size: int) -> None:
        self.base, self.mem = base, bytearray(size)

    def read(self, addr, n):
        return bytes(self.mem[addr - self.base : addr - self.base + n])

    def write(self, addr, data):
        self.mem[addr - self.base : addr - self.base + len(data)] = bytes(data)

    def view(self, addr, n):
        return memoryview(self.mem)[addr - self.base : addr - self.base + n]
