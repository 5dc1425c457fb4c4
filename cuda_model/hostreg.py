"""Memory outside the GPU that CUDA has registered for it: host pages or a third-party
device's BAR (``cudaHostRegister``), each a range of the process's addresses with the bus
address of every 4 KiB page under it. A kernel's or a copy engine's access to such a
range leaves the GPU as PCIe requests to those bus addresses.

:func:`host_register` follows what was measured on an H200 with CUDA 13
(cuda_model/probes/h200-host-register.txt, cuda_model/probes/io_register.txt) and, for
device memory, NVIDIA's open kernel modules (RmCreateOsDescriptor, os_lookup_user_io_memory,
osCreateOsDescriptorFromIoMemory; reference/gpu-requester.md):

- flags beyond Portable (1), Mapped (2), IoMemory (4) and ReadOnly (8), a NULL pointer or
  a size of 0: cudaErrorInvalidValue (measured);
- memory CUDA allocated itself: cudaErrorInvalidValue (measured for managed and
  cudaHostAlloc memory, host_alloc.txt; the model's choice for device memory); a range
  sharing a byte with a registered one: cudaErrorHostMemoryAlreadyRegistered (712,
  measured);
- the range is first pinned as ordinary pages (``get_user_pages``, for writing unless
  ReadOnly): on ordinary memory IoMemory is refused (measured), and so is a read-only
  mapping without ReadOnly (measured); pointer and size need no alignment (measured);
- where pinning fails on a device mapping (``VM_IO | VM_PFNMAP``) the I/O path is taken:
  IoMemory must be given, the whole range must lie in that one mapping, its frames
  contiguous, the mapping uncached, and no byte of it in any GPU's BAR (the full-duplex
  BAR1 deadlock); these refusals are cudaErrorInvalidValue, the model's choice (the lent
  GPU machine maps no device: not measured). A process that is not root is refused
  with cudaErrorNotPermitted (CUDA's documentation) unless the GPU's driver has
  ``PeerMappingOverride`` set.
"""

from __future__ import annotations

import bisect
import dataclasses
from typing import Any, Protocol

from .bus import Piece
from .errors import CudaError, cudaError

HOST_PAGE = 4096
cudaHostRegisterDefault = 0
cudaHostRegisterPortable = 1
cudaHostRegisterMapped = 2
cudaHostRegisterIoMemory = 4
cudaHostRegisterReadOnly = 8
_FLAGS = 0xF


class UserMemory(Protocol):
    """The registering process's address space, as the GPU driver sees it
    (driver_model.host.UserProcess is one)."""

    privileged: bool

    def vma(self, addr: int) -> Any:
        """The mapping holding ``addr`` (``start``, ``end``, ``frames``, ``writable``,
        ``io``, ``cached``), or None."""
        ...

    def get_user_pages(self, start: int, nr_pages: int, write: bool = False) -> list[int]:
        """Pin pages from page-aligned ``start``; a short list where pinning stops."""
        ...

    def put_user_pages(self, frames: list[int]) -> None: ...

    def alloc_locked(self, size: int, name: str = "") -> tuple[int, Any]:
        """Zeroed page-locked memory a driver maps into the process: its address and a
        buffer with ``bus`` (its first page's bus address; the pages follow
        contiguously), ``size`` and ``view()``; an ``OSError`` when memory runs out."""
        ...

    def free_locked(self, addr: int) -> None: ...


@dataclasses.dataclass
class Registration:
    """``size`` bytes at ``va`` (the device pointer equals the host pointer, unified
    addressing); ``pages[i]`` is the bus address of the 4 KiB page holding
    ``(va & ~0xfff) + i * 4096``. ``io``: a device's BAR (``cudaHostRegisterIoMemory``);
    ``read_only``: the GPU may not write it; ``owned``: CUDA's own page-locked memory
    (``cudaHostAlloc``), which only ``cudaFreeHost`` gives back."""

    va: int
    size: int
    pages: list[int]
    flags: int = 0
    io: bool = False
    read_only: bool = False
    name: str = ""
    owned: bool = False

    @property
    def end(self) -> int:
        return self.va + self.size


class Registrations:
    """Every registered range of one context, sorted and never overlapping."""

    def __init__(self) -> None:
        self._bases: list[int] = []
        self._regs: list[Registration] = []
        # bus page -> the (first, end) bus bytes of it each registration holds
        self._by_bus: dict[int, list[tuple[int, int, Registration]]] = {}

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
        for page, lo, hi in self._bus_spans(reg):
            self._by_bus.setdefault(page, []).append((lo, hi, reg))

    def remove(self, reg: Registration) -> None:
        i = self._regs.index(reg)
        del self._bases[i]
        del self._regs[i]
        for page, _lo, _hi in self._bus_spans(reg):
            left = [e for e in self._by_bus[page] if e[2] is not reg]
            if left:
                self._by_bus[page] = left
            else:
                del self._by_bus[page]

    @staticmethod
    def _bus_spans(reg: Registration):
        """(bus page, first bus byte, end) of each page of ``reg``."""
        first = reg.va & ~(HOST_PAGE - 1)
        for i, bus in enumerate(reg.pages):
            va = first + i * HOST_PAGE
            lo = max(va, reg.va) - va
            hi = min(va + HOST_PAGE, reg.end) - va
            yield bus & ~(HOST_PAGE - 1), bus + lo, bus + hi

    def at_bus(self, addr: int, n: int) -> Registration | None:
        """The registration whose bus bytes hold ``[addr, addr + n)`` within one page
        (what a request of the GPU may reach; it never crosses 4 KiB), or None."""
        for lo, hi, reg in self._by_bus.get(addr & ~(HOST_PAGE - 1), ()):
            if lo <= addr and addr + n <= hi:
                return reg
        return None

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
                pieces[-1] = Piece(last.addr, last.length + take, True, reg.name, reg.io)
            else:
                pieces.append(Piece(bus, take, True, reg.name, reg.io))
            at += take
            left -= take
        return pieces


def _bad(what: str) -> CudaError:
    return CudaError(cudaError.cudaErrorInvalidValue, what)


def host_register(
    regs: Registrations,
    process: UserMemory | None,
    ptr: int,
    size: int,
    flags: int,
    cuda_owned: bool,
    gpu_bars: list[tuple[int, int]],
    peer_mapping_override: bool,
) -> Registration:
    """``cudaHostRegister(ptr, size, flags)``: the registration, added to ``regs``; see
    the module's docstring for the rules. ``cuda_owned``: the range touches memory CUDA
    allocated itself; ``gpu_bars``: every GPU BAR's (bus address, size)."""
    what = f"cudaHostRegister({ptr:#x}, {size}, {flags:#x})"
    if flags & ~_FLAGS or not ptr or size <= 0:
        raise _bad(what)
    other = regs.overlaps(ptr, size)
    if cuda_owned or (other is not None and other.owned):
        raise _bad(f"{what}: memory CUDA allocated")
    if other is not None:
        raise CudaError(cudaError.cudaErrorHostMemoryAlreadyRegistered, what)
    if process is None:
        raise _bad(f"{what}: no process address space known to the runtime")
    read_only = bool(flags & cudaHostRegisterReadOnly)
    first = ptr & ~(HOST_PAGE - 1)
    n = -(-(ptr + size - first) // HOST_PAGE)
    frames = process.get_user_pages(first, n, write=not read_only)
    if len(frames) == n:
        if flags & cudaHostRegisterIoMemory:
            process.put_user_pages(frames)
            raise _bad(f"{what}: IoMemory on ordinary memory")
        reg = Registration(ptr, size, frames, flags, io=False, read_only=read_only)
        regs.add(reg)
        return reg
    stop = first + len(frames) * HOST_PAGE
    process.put_user_pages(frames)
    vma = process.vma(stop)
    if vma is None or not vma.io:
        why = "not mapped" if vma is None else "read-only (ReadOnly not given)"
        raise _bad(f"{what}: page {stop:#x} is {why}")
    # the I/O path: one device mapping holds it all
    vma = process.vma(ptr)
    if vma is None or not vma.io or ptr + size > vma.end:
        raise _bad(f"{what}: not inside one device mapping")
    if not flags & cudaHostRegisterIoMemory:
        raise _bad(f"{what}: device memory without IoMemory")
    if not vma.writable and not read_only:
        raise _bad(f"{what}: a read-only device mapping without ReadOnly")
    if vma.cached:
        raise _bad(f"{what}: I/O memory must be mapped uncached")
    base = (first - vma.start) // HOST_PAGE
    pages = list(vma.frames[base : base + n])
    if any(b != pages[0] + i * HOST_PAGE for i, b in enumerate(pages)):
        raise _bad(f"{what}: the device mapping's frames are not contiguous")
    lo, hi = pages[0] + (ptr - first), pages[0] + (ptr - first) + size
    for bar, bar_size in gpu_bars:
        if lo < bar + bar_size and bar < hi:
            raise _bad(f"{what}: inside a GPU's BAR at {bar:#x}")
    if not process.privileged and not peer_mapping_override:
        raise CudaError(cudaError.cudaErrorNotPermitted, f"{what}: I/O memory needs root")
    reg = Registration(ptr, size, pages, flags, io=True, read_only=read_only, name=vma.name)
    regs.add(reg)
    return reg


def host_unregister(regs: Registrations, process: UserMemory | None, ptr: int) -> None:
    """``cudaHostUnregister(ptr)``: ``ptr`` must be where a registration starts
    (measured: an interior pointer or NULL is cudaErrorInvalidValue, a pointer not
    registered, or unregistered twice, cudaErrorHostMemoryNotRegistered). The runtime
    refuses cudaHostAlloc memory before this (CUDA's own allocations)."""
    reg = regs.find(ptr) if ptr else None
    if not ptr or (reg is not None and reg.va != ptr):
        raise _bad(f"cudaHostUnregister({ptr:#x})")
    if reg is None:
        raise CudaError(cudaError.cudaErrorHostMemoryNotRegistered, f"{ptr:#x}")
    regs.remove(reg)
    if not reg.io and process is not None:
        process.put_user_pages(reg.pages)
