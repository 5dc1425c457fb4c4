"""GPU video memory with backing storage allocated lazily, one 64 KiB page at a time.

Untouched pages read as ``uninit_byte`` and cost nothing, so an 80 GB card is free until
a test writes to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

PAGE_SHIFT = 16
PAGE_SIZE = 1 << PAGE_SHIFT


def page_pieces(addr: int, length: int):
    """Split ``[addr, addr + length)`` at 64 KiB page boundaries: yields
    ``(address, position in the range, byte count)``."""
    pos = 0
    while pos < length:
        n = min(PAGE_SIZE - ((addr + pos) & (PAGE_SIZE - 1)), length - pos)
        yield addr + pos, pos, n
        pos += n


def as_u8(data) -> np.ndarray:
    """A flat uint8 view of bytes-like data or a numpy array (no copy)."""
    if isinstance(data, np.ndarray):
        return data.view(np.uint8).reshape(-1)
    return np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)


class Vram:
    """Physical VRAM addressed by byte offset."""

    def __init__(self, size: int, uninit_byte: int = 0) -> None:
        if size <= 0 or size % PAGE_SIZE:
            raise ValueError(f"VRAM size must be a positive multiple of 64 KiB, not {size:#x}")
        self.size = size
        self.uninit_byte = uninit_byte
        self._pages: dict[int, np.ndarray] = {}
        # told each page's backing as it is made and dropped (a peer that reads and
        # writes it in place: cuda_model.gpu.PeerAccess)
        self.on_backing: Callable[[int, np.ndarray | None], None] | None = None

    @property
    def resident_pages(self) -> int:
        """Pages that have backing storage (were written)."""
        return len(self._pages)

    def _check(self, offset: int, length: int) -> None:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ValueError(f"VRAM access {offset:#x}+{length:#x} outside {self.size:#x}")

    def _chunks(self, offset: int, length: int):
        for addr, pos, n in page_pieces(offset, length):
            page, po = divmod(addr, PAGE_SIZE)
            yield page, po, pos, n

    def read(self, offset: int, length: int) -> np.ndarray:
        """A copy of ``length`` bytes as a uint8 array."""
        self._check(offset, length)
        out = np.empty(length, dtype=np.uint8)
        for page, po, pos, n in self._chunks(offset, length):
            backing = self._pages.get(page)
            if backing is None:
                out[pos : pos + n] = self.uninit_byte
            else:
                out[pos : pos + n] = backing[po : po + n]
        return out

    def write(self, offset: int, data) -> None:
        """Store bytes (anything numpy can view as uint8)."""
        arr = as_u8(data)
        self._check(offset, len(arr))
        for page, po, pos, n in self._chunks(offset, len(arr)):
            self._page(page)[po : po + n] = arr[pos : pos + n]

    def fill(self, offset: int, length: int, value: int) -> None:
        self._check(offset, length)
        for page, po, _pos, n in self._chunks(offset, length):
            if value == self.uninit_byte and page not in self._pages and n == PAGE_SIZE:
                continue
            self._page(page)[po : po + n] = value

    def backings(self) -> Iterator[tuple[int, np.ndarray]]:
        """Each page that has backing storage, and its bytes."""
        return iter(list(self._pages.items()))

    def release(self, page: int) -> None:
        """Drop a page's backing (it was freed); it reads as uninitialised again."""
        if self._pages.pop(page, None) is not None and self.on_backing is not None:
            self.on_backing(page, None)

    def _page(self, page: int) -> np.ndarray:
        backing = self._pages.get(page)
        if backing is None:
            backing = np.full(PAGE_SIZE, self.uninit_byte, dtype=np.uint8)
            self._pages[page] = backing
            if self.on_backing is not None:
                self.on_backing(page, backing)
        return backing
