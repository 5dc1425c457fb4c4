"""The host side the driver lives on: physical page frames, a user process address space,
``get_user_pages`` and coherent DMA memory.

Physical memory is whatever implements :class:`PhysMemory` (the testbench backs it with
the root complex's memory, so every address here is a real bus address the FPGA can
reach). User buffers get their frames in short runs picked at random from a seeded free
list, so a buffer is scattered over non-contiguous pages with a few contiguous stretches,
as on a long-running machine: the driver's scatter-gather and coalescing are really
exercised. There is no IOMMU: a frame's DMA address is its physical address.
"""

from __future__ import annotations

import bisect
import collections
import errno
import random
from dataclasses import dataclass
from typing import Protocol

PAGE_SHIFT = 12
PAGE_SIZE = 1 << PAGE_SHIFT
PAGE_MASK = ~(PAGE_SIZE - 1)

# where a process's mmap area starts (x86-64 user space, below the CUDA VA range)
USER_MMAP_BASE = 0x0000_7000_0000_0000
# glibc serves large malloc()s with mmap and a 16-byte chunk header in front
MALLOC_HEADER = 16


class PhysMemory(Protocol):
    """Byte access to host physical memory by bus address."""

    def read(self, addr: int, length: int) -> bytes:
        """``length`` bytes at ``addr``."""
        ...

    def write(self, addr: int, data: bytes | bytearray | memoryview) -> None:
        """Store ``data`` at ``addr``."""
        ...

    def view(self, addr: int, length: int) -> memoryview:
        """The ``length`` bytes at ``addr`` as one writable view (they are contiguous)."""
        ...


class HostMemoryError(OSError):
    """A host memory operation failed; ``errno`` says how (ENOMEM, EFAULT, EINVAL)."""

    def __init__(self, err: int, what: str) -> None:
        super().__init__(err, what)


class FrameAllocator:
    """4 KiB frames of ``[base, base + size)``.

    ``alloc`` hands out frames in runs of 1..``max_run`` contiguous frames starting at
    random free frames (seeded); ``alloc_contiguous`` finds a physically contiguous block.
    """

    def __init__(self, base: int, size: int, seed: int = 1, max_run: int = 4) -> None:
        if base % PAGE_SIZE or size % PAGE_SIZE or size <= 0:
            raise ValueError(f"frame range {base:#x}+{size:#x} not page aligned")
        self.base = base
        self.nframes = size // PAGE_SIZE
        self.max_run = max_run
        self.rng = random.Random(seed)
        self._used = bytearray(self.nframes)
        self._candidates = list(range(self.nframes))
        self.rng.shuffle(self._candidates)
        self.free_frames = self.nframes

    def frame_address(self, index: int) -> int:
        """Bus address of frame ``index``."""
        return self.base + index * PAGE_SIZE

    def _take(self, i: int) -> int:
        self._used[i] = 1
        self.free_frames -= 1
        return self.frame_address(i)

    def alloc(self, n: int) -> list[int]:
        """``n`` frames, scattered in short contiguous runs; ENOMEM when too few are free."""
        if n > self.free_frames:
            raise HostMemoryError(errno.ENOMEM, f"{n} frames wanted, {self.free_frames} free")
        out: list[int] = []
        while len(out) < n:
            i = self._candidates.pop()
            if self._used[i]:
                continue  # taken as part of an earlier run (lazy deletion)
            run = self.rng.randint(1, self.max_run)
            while run and len(out) < n and i < self.nframes and not self._used[i]:
                out.append(self._take(i))
                i += 1
                run -= 1
        return out

    def alloc_contiguous(self, n: int) -> int:
        """``n`` physically contiguous frames (first fit); their base address."""
        run = 0
        for i in range(self.nframes):
            run = run + 1 if not self._used[i] else 0
            if run == n:
                first = i - n + 1
                for j in range(first, i + 1):
                    self._take(j)
                return self.frame_address(first)
        raise HostMemoryError(errno.ENOMEM, f"no {n} contiguous free frames")

    def free(self, frames: list[int]) -> None:
        """Return frames (freed frames are reused first, like a real page allocator)."""
        for addr in frames:
            i = (addr - self.base) // PAGE_SIZE
            if not 0 <= i < self.nframes or not self._used[i]:
                raise HostMemoryError(errno.EINVAL, f"frame {addr:#x} is not allocated")
            self._used[i] = 0
            self.free_frames += 1
            self._candidates.append(i)


@dataclass
class CoherentBuffer:
    """``dma_alloc_coherent`` memory: physically contiguous, CPU and device see the same
    bytes. ``bus`` is the device address."""

    host: HostMemory
    bus: int
    size: int

    def read(self, offset: int, length: int) -> bytes:
        """CPU read."""
        self._check(offset, length)
        return self.host.phys.read(self.bus + offset, length)

    def write(self, offset: int, data: bytes | bytearray | memoryview) -> None:
        """CPU write."""
        self._check(offset, len(data))
        self.host.phys.write(self.bus + offset, data)

    def view(self) -> memoryview:
        """The whole buffer as the CPU sees it, one writable view."""
        return self.host.phys.view(self.bus, self.size)

    def _check(self, offset: int, length: int) -> None:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise HostMemoryError(
                errno.EINVAL,
                f"{length} bytes at {offset:#x} outside a {self.size}-byte coherent buffer",
            )


class HostMemory:
    """Host RAM: frames for user pages and coherent DMA buffers."""

    def __init__(self, phys: PhysMemory, base: int, size: int, seed: int = 1) -> None:
        self.phys = phys
        self.base = base
        self.size = size
        self.frames = FrameAllocator(base, size, seed)
        # frames pinned by get_user_pages (a count per frame), and the unmapped ones that
        # stay allocated until their last pin goes (the kernel's page reference)
        self.pins: collections.Counter[int] = collections.Counter()
        self._orphans: set[int] = set()

    @property
    def pinned_pages(self) -> int:
        """Page pins held (``get_user_pages`` not yet matched by ``put_user_pages``)."""
        return sum(self.pins.values())

    def pin_frames(self, frames: list[int]) -> None:
        """Take a pin on each frame."""
        self.pins.update(frames)

    def unpin_frames(self, frames: list[int]) -> None:
        """Drop a pin on each frame; an unmapped frame's last pin frees it."""
        for f in frames:
            if self.pins[f] <= 0:
                raise HostMemoryError(errno.EINVAL, f"unpin of frame {f:#x}: not pinned")
            self.pins[f] -= 1
            if not self.pins[f]:
                del self.pins[f]
                if f in self._orphans:
                    self._orphans.discard(f)
                    self.frames.free([f])

    def release_frames(self, frames: list[int]) -> None:
        """Frames of an unmapped range: free now, or at their last unpin."""
        pinned = {f for f in frames if self.pins[f]}
        self._orphans |= pinned
        self.frames.free([f for f in frames if f not in pinned])

    def dma_alloc_coherent(self, size: int) -> CoherentBuffer:
        """Physically contiguous, page-granular DMA memory, zeroed."""
        n = max(1, -(-size // PAGE_SIZE))
        bus = self.frames.alloc_contiguous(n)
        self.phys.write(bus, bytes(n * PAGE_SIZE))
        return CoherentBuffer(self, bus, n * PAGE_SIZE)

    def dma_free_coherent(self, buf: CoherentBuffer) -> None:
        """Give a coherent buffer back."""
        self.frames.free([buf.bus + i * PAGE_SIZE for i in range(buf.size // PAGE_SIZE)])


@dataclass
class Vma:
    """One mapping of a process (a ``vm_area_struct``): ``frames`` holds the physical
    (bus) address of each page. ``io``: a device mapping (``VM_IO | VM_PFNMAP``, made by
    ``remap_pfn_range``: no ``struct page`` behind it, so ``get_user_pages`` refuses it);
    ``cached``: mapped write-back (False: uncached, as device memory is mapped)."""

    start: int
    frames: list[int]
    writable: bool = True
    io: bool = False
    cached: bool = True
    name: str = ""

    @property
    def end(self) -> int:
        return self.start + len(self.frames) * PAGE_SIZE


class KernelFile(Protocol):
    """A ``struct file`` as a descriptor table holds it: ``fput`` drops a reference."""

    def fput(self) -> None: ...


class UserProcess:
    """One process's address space: anonymous mappings backed by scattered frames.

    ``read``/``write`` are the process's own loads and stores (memcpy); the kernel side
    uses ``copy_from_user``/``copy_to_user`` (errno instead of an exception) and
    ``get_user_pages``.
    """

    def __init__(self, host: HostMemory, name: str = "app", privileged: bool = True) -> None:
        self.host = host
        self.name = name
        # runs as root (CAP_SYS_ADMIN, CAP_SYS_RAWIO): may map /dev/mem and sysfs
        # resources, and register I/O memory with CUDA
        self.privileged = privileged
        self._maps: list[Vma] = []  # sorted by start
        self._next = USER_MMAP_BASE
        self._malloc: dict[int, int] = {}  # malloc pointer -> mapping start
        # the file descriptor table: fd -> file (0-2 are the standard streams)
        self.files: dict[int, KernelFile] = {}

    # ----------------------------------------------------------------- files
    def fd_install(self, file: KernelFile) -> int:
        """``fd_install`` at the lowest free descriptor (from 3); the table holds one
        reference of ``file``, taken by the caller."""
        fd = 3
        while fd in self.files:
            fd += 1
        self.files[fd] = file
        return fd

    def fget(self, fd: int) -> KernelFile | None:
        """The file behind ``fd`` (no reference taken), or None."""
        return self.files.get(fd)

    def close(self, fd: int) -> int:
        """``close(fd)``: 0, or -EBADF; the table's reference is put."""
        file = self.files.pop(fd, None)
        if file is None:
            return -errno.EBADF
        file.fput()
        return 0

    # ----------------------------------------------------------------- mappings
    def _map(self, m: Vma) -> int:
        """Place mapping ``m`` (its ``start`` unset) at the next free address, a guard
        page after the one before; its address."""
        m.start = self._next
        self._next = m.end + PAGE_SIZE
        bisect.insort(self._maps, m, key=lambda x: x.start)
        return m.start

    def mmap(self, size: int, writable: bool = True) -> int:
        """Map ``size`` bytes (rounded up to pages) of fresh zeroed memory, read-only
        unless ``writable``; its address."""
        if size <= 0:
            raise HostMemoryError(errno.EINVAL, f"mmap of {size} bytes")
        n = -(-size // PAGE_SIZE)
        frames = self.host.frames.alloc(n)
        for f in frames:
            self.host.phys.write(f, bytes(PAGE_SIZE))
        return self._map(Vma(0, frames, writable))

    def mmap_io(
        self, phys: int, size: int, writable: bool = True, cached: bool = False, name: str = ""
    ) -> int:
        """A device mapping of ``size`` bytes (rounded up to pages) of bus addresses from
        page-aligned ``phys`` (what a driver's ``mmap`` makes with ``io_remap_pfn_range``:
        ``VM_IO | VM_PFNMAP``, contiguous frames, uncached unless ``cached``); its address.
        The process's own loads and stores through it are MMIO, not modelled here
        (:meth:`read` and :meth:`write` refuse them)."""
        if size <= 0 or phys % PAGE_SIZE:
            raise HostMemoryError(errno.EINVAL, f"mmap of {size} device bytes at {phys:#x}")
        n = -(-size // PAGE_SIZE)
        return self._map(
            Vma(0, [phys + i * PAGE_SIZE for i in range(n)], writable, True, cached, name)
        )

    def vma(self, addr: int) -> Vma | None:
        """The mapping holding ``addr`` (``find_vma``, exact), or None."""
        return self._find(addr)

    def mprotect(self, addr: int, writable: bool) -> None:
        """Make the mapping starting at ``addr`` read-only (or writable again)."""
        for m in self._maps:
            if m.start == addr:
                m.writable = writable
                return
        raise HostMemoryError(errno.EINVAL, f"no mapping at {addr:#x}")

    def munmap(self, addr: int) -> None:
        """Unmap the mapping starting at ``addr``."""
        for i, m in enumerate(self._maps):
            if m.start == addr:
                del self._maps[i]
                if not m.io:  # (a device mapping's frames are the device's)
                    self.host.release_frames(m.frames)
                return
        raise HostMemoryError(errno.EINVAL, f"no mapping at {addr:#x}")

    def alloc_locked(self, size: int, name: str = "") -> tuple[int, CoherentBuffer]:
        """Page-locked memory a driver allocates and maps into the process, as NVIDIA's
        driver does for ``cudaHostAlloc``: zeroed, never swapped, one physically
        contiguous run here (an H200 gave runs of up to 2 MiB:
        cuda_model/probes/host_alloc.txt). Its address in the process and the buffer.
        The mapping is of ordinary pages, so ``get_user_pages`` pins them (another
        driver may DMA to it). ENOMEM when no run of frames that long is free."""
        buf = self.host.dma_alloc_coherent(size)
        frames = [buf.bus + i * PAGE_SIZE for i in range(buf.size // PAGE_SIZE)]
        return self._map(Vma(0, frames, True, name=name)), buf

    def free_locked(self, addr: int) -> None:
        """Unmap and free :meth:`alloc_locked` memory at ``addr``; pages another driver
        still pins stay allocated until their last unpin."""
        self.munmap(addr)

    def malloc(self, size: int) -> int:
        """A large ``malloc``: an mmap'd block behind a 16-byte header, so the pointer is
        16 bytes past a page boundary (as glibc returns it)."""
        start = self.mmap(size + MALLOC_HEADER)
        ptr = start + MALLOC_HEADER
        self._malloc[ptr] = start
        return ptr

    def free(self, ptr: int) -> None:
        """``free`` a :meth:`malloc` pointer."""
        start = self._malloc.pop(ptr, None)
        if start is None:
            raise HostMemoryError(errno.EINVAL, f"free of {ptr:#x}: not a malloc pointer")
        self.munmap(start)

    def _find(self, addr: int) -> Vma | None:
        i = bisect.bisect_right(self._maps, addr, key=lambda x: x.start) - 1
        if i >= 0 and self._maps[i].start <= addr < self._maps[i].end:
            return self._maps[i]
        return None

    def translate(self, addr: int) -> int | None:
        """Physical address of a user address, or None when unmapped."""
        m = self._find(addr)
        if m is None:
            return None
        page, off = divmod(addr - m.start, PAGE_SIZE)
        return m.frames[page] + off

    def _pieces(self, addr: int, length: int, write: bool = False):
        pos = addr
        end = addr + length
        while pos < end:
            m = self._find(pos)
            if m is None:
                raise HostMemoryError(errno.EFAULT, f"user address {pos:#x} is not mapped")
            if m.io:
                raise HostMemoryError(
                    errno.EFAULT, f"user address {pos:#x} maps a device: MMIO, not memory"
                )
            if write and not m.writable:
                raise HostMemoryError(errno.EFAULT, f"user address {pos:#x} is read-only")
            phys = self.translate(pos)
            assert phys is not None
            n = min(PAGE_SIZE - (pos & (PAGE_SIZE - 1)), end - pos)
            yield pos - addr, phys, n
            pos += n

    # ----------------------------------------------------------------- the process's access
    def read(self, addr: int, length: int) -> bytes:
        """Load ``length`` bytes from user memory (EFAULT when unmapped)."""
        out = bytearray(length)
        for o, phys, n in self._pieces(addr, length):
            out[o : o + n] = self.host.phys.read(phys, n)
        return bytes(out)

    def write(self, addr: int, data: bytes | bytearray | memoryview) -> None:
        """Store ``data`` into user memory (EFAULT when unmapped or read-only)."""
        mv = memoryview(data).cast("B")
        pieces = list(self._pieces(addr, len(mv), write=True))  # fault before writing
        for o, phys, n in pieces:
            self.host.phys.write(phys, mv[o : o + n])

    # ----------------------------------------------------------------- the kernel's access
    def copy_from_user(self, addr: int, length: int) -> bytes | None:
        """The kernel's copy_from_user: the bytes, or None (the caller returns -EFAULT)."""
        try:
            return self.read(addr, length)
        except HostMemoryError:
            return None

    def copy_to_user(self, addr: int, data: bytes) -> bool:
        """The kernel's copy_to_user: False when the destination is not mapped or not
        writable."""
        try:
            self.write(addr, data)
        except HostMemoryError:
            return False
        return True

    def get_user_pages(self, start: int, nr_pages: int, write: bool = False) -> list[int]:
        """Pin ``nr_pages`` pages from page-aligned ``start``; their frames. Stops at the
        first unmapped page, or with ``write`` (FOLL_WRITE: the device will write them) at
        the first read-only one (a short count, as the kernel call returns). Every frame
        returned is pinned, a short count's too: :meth:`put_user_pages` each. A device
        mapping (``VM_IO | VM_PFNMAP``) has no pages to pin: the count stops there too
        (Linux fails it with -EFAULT)."""
        if start % PAGE_SIZE:
            raise HostMemoryError(errno.EINVAL, f"get_user_pages at unaligned {start:#x}")
        out: list[int] = []
        for i in range(nr_pages):
            m = self._find(start + i * PAGE_SIZE)
            if m is None or m.io or (write and not m.writable):
                break
            phys = self.translate(start + i * PAGE_SIZE)
            assert phys is not None
            out.append(phys)
        self.host.pin_frames(out)
        return out

    def put_user_pages(self, frames: list[int]) -> None:
        """``unpin_user_pages``: drop the pins :meth:`get_user_pages` took."""
        self.host.unpin_frames(frames)
