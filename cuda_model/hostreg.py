"""Memory outside the GPU that CUDA has registered for it: host pages or a third-party
device's BAR (``cudaHostRegister``), each a range of the process's addresses with the bus
address of every 4 KiB page under it. A kernel's or a copy engine's access to such a
range leaves the GPU as PCIe requests to those bus addresses.
"""

from __future__ import annotations

import bisect
import dataclasses

from .bus import Piece

HOST_PAGE = 4096


@dataclasses.dataclass
class Registration:
    """``size`` bytes at ``va`` (the device pointer equals the host pointer, unified
    addressing); ``pages[i]`` is the bus address of the 4 KiB page holding
    ``(va & ~0xfff) + i * 4096``. ``io``: a device's BAR (``cudaHostRegisterIoMemory``);
    ``read_only``: the GPU may not write it."""

    va: int
    size: int
    pages: list[int]
    flags: int = 0
    io: bool = False
    read_only: bool = False
    name: str = ""

    @property
    def end(self) -> int:
        return self.va + self.size


class Registrations:
    """Every registered range of one context, sorted and never overlapping."""

    def __init__(self) -> None:
        self._bases: list[int] = []
        self._regs: list[Registration] = []

    def __iter__(self):
        return iter(self._regs)

    def find(self, ptr: int) -> Registration | None:
        """The registration holding ``ptr``."""
        i = bisect.bisect_right(self._bases, ptr) - 1
        if i >= 0 and ptr < self._regs[i].end:
            return self._regs[i]
        return None

    def overlaps(self, va: int, size: int) -> Registration | None:
        """A registration sharing a byte with ``[va, va + size)``."""
        i = bisect.bisect_left(self._bases, va + size) - 1
        if i >= 0 and self._regs[i].end > va:
            return self._regs[i]
        return None

    def add(self, reg: Registration) -> None:
        """Track ``reg`` (the caller checked it overlaps nothing)."""
        first = reg.va & ~(HOST_PAGE - 1)
        need = -(-(reg.end - first) // HOST_PAGE)
        if len(reg.pages) != need:
            raise ValueError(f"{need} page addresses needed, {len(reg.pages)} given")
        if self.overlaps(reg.va, reg.size):
            raise ValueError(f"{reg.va:#x}+{reg.size:#x} overlaps a registration")
        i = bisect.bisect_left(self._bases, reg.va)
        self._bases.insert(i, reg.va)
        self._regs.insert(i, reg)

    def remove(self, reg: Registration) -> None:
        i = self._regs.index(reg)
        del self._bases[i]
        del self._regs[i]

    def bus_pieces(self, ptr: int, n: int, write: bool) -> list[Piece] | None:
        """``[ptr, ptr + n)`` as bus pieces, each physically contiguous; None when it is
        not inside one registration, or a write to a read-only one."""
        reg = self.find(ptr)
        if reg is None or ptr + n > reg.end or (write and reg.read_only):
            return None
        first = reg.va & ~(HOST_PAGE - 1)
        pieces: list[Piece] = []
        at, left = ptr, n
        while left:
            page = (at - first) // HOST_PAGE
            off = at % HOST_PAGE
            take = min(left, HOST_PAGE - off)
            bus = reg.pages[page] + off
            last = pieces[-1] if pieces else None
            if last is not None and last.addr + last.length == bus:
                pieces[-1] = Piece(last.addr, last.length + take, True, reg.name)
            else:
                pieces.append(Piece(bus, take, True, reg.name))
            at += take
            left -= take
        return pieces
