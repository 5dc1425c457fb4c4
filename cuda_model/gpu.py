"""The GPU: VRAM, the GPU MMU with CUDA's allocation placement, and the BAR1 aperture.

Placement follows measurements on an H100 (``probes/pool_release.txt``): allocations below 2 MiB
are sub-allocated with 512 B granularity from 2 MiB pool chunks (so successive small
buffers share 64 KiB pages), larger ones get their own 2 MiB-aligned range. Each chunk
and each large range is one :class:`Backing`, what the resource manager allocated: a
chunk goes back when its last buffer is freed (``cuda_model/probes/pool_release.txt``).
The BAR1 aperture has its own page table with 64 KiB pages; nv-p2p pins
(``cuda_model.nv_p2p``) map VRAM pages into it and peers reach VRAM only through those
mappings. A pin lies inside one backing and lives as long as it does (NVIDIA's resource
manager registers and revokes third-party mappings per allocation, not per buffer).
"""

from __future__ import annotations

import bisect
import dataclasses
import enum
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .errors import EINVAL, ENOMEM
from .extents import ExtentAllocator
from .vram import PAGE_SHIFT, PAGE_SIZE, Vram, as_u8, page_pieces

if TYPE_CHECKING:
    from .bus import DeviceBus
    from .devtime import DeviceTime

log = logging.getLogger(__name__)

GPU_PAGE_SIZE = PAGE_SIZE  # nv-p2p / BAR1 page, 64 KiB
BIG_PAGE_SIZE = 2 << 20  # large allocations are 2 MiB aligned
# cuMemGetAllocationGranularity (minimum and recommended) on an H100 (probes/dmabuf.txt)
VMM_GRANULARITY = BIG_PAGE_SIZE
SMALL_ALLOC_GRANULE = 512  # sub-allocation granularity of small buffers
DEVICE_VA_BASE = 0x7F40_0000_0000  # where cudaMalloc pointers live (UVA)
DEVICE_VA_SPAN = 1 << 40
HOST_VA_BASE = 0x7F10_0000_0000  # cudaHostAlloc pointers
HOST_VA_SPAN = 1 << 38
BAR1_PIN_RESERVE = 36 << 20  # the driver keeps this much BAR1 free

# NV_PMC_BOOT_0 of a GH100 (architecture 0x18 in bits 28:20, implementation 0, rev A1)
NV_PMC_BOOT_0 = 0x0000_0000
GH100_BOOT_0 = 0x1800_00A1
# the GPU's PCI identity and BARs. NVIDIA's names BAR0 (registers), BAR1 (the aperture,
# sized by the model) and BAR3 (reads zero) are kept; on an H100 all three are 64-bit
# prefetchable (sysfs resource flags 0x14220c), so each takes two configuration slots:
# BAR0 slots 0-1, BAR1 slots 2-3, BAR3 slots 4-5 (Linux resources 0, 2 and 4). The
# constants are the first slot of each.
PCI_VENDOR_ID_NVIDIA = 0x10DE
GH100_DEVICE_ID = 0x2330
GH100_SUBSYSTEM_ID = 0x16C1
PCI_CLASS_3D_CONTROLLER = 0x030200
BAR0, BAR1, BAR3 = 0, 2, 4
BAR_NAMES = {BAR0: "BAR0", BAR1: "BAR1", BAR3: "BAR3"}
BAR0_SIZE = 16 << 20
BAR3_SIZE = 32 << 20


class MemoryType(enum.IntEnum):
    """``CUmemorytype`` (cuda.h), reported for CU_POINTER_ATTRIBUTE_MEMORY_TYPE."""

    CU_MEMORYTYPE_HOST = 1
    CU_MEMORYTYPE_DEVICE = 2


@dataclasses.dataclass(eq=False)
class Allocation:
    """One cudaMalloc or cudaHostAlloc buffer."""

    base: int
    size: int
    memory_type: MemoryType
    buffer_id: int
    sync_memops: bool = False
    host_buffer: bytearray | memoryview | None = None  # backing of host allocations
    backing: Backing | None = None  # device allocations: the chunk or own range
    reserved: int = 0  # bytes taken (size rounded to the granule)
    vmm: PhysAlloc | None = None  # a cuMemMap mapping: the cuMemCreate handle behind it

    @property
    def end(self) -> int:
        return self.base + self.size


@dataclasses.dataclass(eq=False)
class PhysAlloc:
    """A ``cuMemCreate`` handle: VRAM pages it owns until ``cuMemRelease`` and the end of
    its last mapping (CUDA keeps a released handle's memory while it is mapped)."""

    handle: int
    size: int
    phys: list[int]
    rdma_capable: bool
    mappings: int = 0
    released: bool = False


@dataclasses.dataclass(eq=False)
class Backing:
    """One allocation of the resource manager: a 2 MiB pool chunk that small buffers are
    carved from (``blocks``), or the 2 MiB-aligned range of one large buffer. Its VA range
    is mapped from creation to release; nv-p2p pins lie inside one backing."""

    base: int
    span: int
    blocks: ExtentAllocator | None = None  # pool chunks: free 512 B granules

    @property
    def end(self) -> int:
        return self.base + self.span


def _nothing() -> None:
    return None


class PinStats:
    """Peer accesses that went through a pin's BAR1 pages: reads, bytes read, writes,
    bytes written. Each read of a figure first adds what a peer beside the model
    (:class:`PeerAccess`) has answered since (``settle``)."""

    __slots__ = ("_counts", "_settle")

    def __init__(self, settle: Callable[[], None] = _nothing) -> None:
        self._counts = [0, 0, 0, 0]
        self._settle = settle

    def add(self, reads: int, read_bytes: int, writes: int, write_bytes: int) -> None:
        """Count accesses."""
        c = self._counts
        c[0] += reads
        c[1] += read_bytes
        c[2] += writes
        c[3] += write_bytes

    def _figures(self) -> list[int]:
        self._settle()
        return self._counts

    @property
    def reads(self) -> int:
        return self._figures()[0]

    @property
    def read_bytes(self) -> int:
        return self._figures()[1]

    @property
    def writes(self) -> int:
        return self._figures()[2]

    @property
    def write_bytes(self) -> int:
        return self._figures()[3]

    def __repr__(self) -> str:
        r, rb, w, wb = self._figures()
        return f"PinStats(reads={r}, read_bytes={rb}, writes={w}, write_bytes={wb})"


class PinState(enum.Enum):
    LIVE = "live"
    # memory freed while pinned, and the free callback has not returned: it sleeps until
    # its device can no longer reach the pages (it returned a CallbackPending); BAR1
    # stays mapped to the freed pages, which nothing else gets until then
    REVOKING = "revoking"
    REVOKED = "revoked"  # memory freed while pinned: callback fired, BAR1 unmapped
    RELEASED = "released"  # put_pages


class CallbackPending:
    """What a free callback returns when it must sleep before returning: in the kernel
    ``nvidia_p2p_get_pages``'s callback may block until the device has stopped using the
    pages, and ``cudaFree`` waits for it. The model's ``cudaFree`` returns at once, but
    the pin's BAR1 pages and the physical pages behind them stay as they are, reserved,
    until the client calls :meth:`done`: no other allocation or pin gets them before the
    callback has (in the kernel's terms) returned."""

    def __init__(self) -> None:
        self._done = False
        self._then: list[Callable[[], None]] = []

    @property
    def is_done(self) -> bool:
        """Whether :meth:`done` has been called."""
        return self._done

    def on_done(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` when the callback is done (now, if it is)."""
        if self._done:
            fn()
        else:
            self._then.append(fn)

    def done(self) -> None:
        """The callback returns: the device no longer touches the pages."""
        if self._done:
            return
        self._done = True
        for fn in self._then:
            fn()
        self._then.clear()


class PeerAccess(Protocol):
    """Something beside the model that answers peers' BAR1 accesses from the same VRAM
    (the compiled data path's library, ``tb/models/native.py``'s ``GpuServe``): told
    each BAR1 page's VRAM page and each VRAM page's backing as they change, it counts
    the accesses it answers per BAR1 page and hands the counts over on request."""

    def mapped(self, page: int, phys: int | None) -> None:
        """BAR1 page ``page`` maps VRAM page ``phys`` from now on (None: unmapped)."""

    def backing(self, page: int, data: np.ndarray | None) -> None:
        """VRAM page ``page`` is held in ``data`` from now on (None: never written)."""

    def take_counts(self) -> Iterable[tuple[int, int, int, int, int]]:
        """The accesses answered since the last call: (BAR1 page, reads, bytes read,
        writes, bytes written) per page that had any."""
        ...


@dataclasses.dataclass(eq=False)
class Pin:
    """A range of device memory mapped into BAR1 by nvidia_p2p_get_pages[_persistent]."""

    pin_id: int
    va: int
    length: int
    bar1_pages: list[int]
    phys_pages: list[int]
    persistent: bool
    free_callback: Callable | None
    data: object
    state: PinState = PinState.LIVE
    stats: PinStats = dataclasses.field(default_factory=PinStats)
    page_table: object = None
    revoked_by: str = ""
    in_callback: bool = False
    # who mapped it: "p2p" (nv-p2p) or "dmabuf" (an nv-dmabuf mapping of an export)
    kind: str = "p2p"

    @property
    def label(self) -> str:
        """How traces name it: ``pin#N`` for an nv-p2p pin, the export's name
        (``dmabuf#N``) for a dma-buf's BAR1 mapping."""
        if self.kind == "dmabuf":
            return str(getattr(self.data, "name", f"dmabuf(pin#{self.pin_id})"))
        return f"pin#{self.pin_id}"


@dataclasses.dataclass(frozen=True)
class Bar1Fault:
    """A peer access that BAR1 could not serve."""

    time_ns: float
    op: str  # "read" or "write"
    offset: int  # offset inside BAR1
    length: int
    # "unmapped", "revoked (pin #n: ...)", "driver-reserved", "poisoned: data discarded"
    reason: str


@dataclasses.dataclass
class _Bar1Entry:
    phys_page: int
    pins: set[int]


class Gpu:
    """A GPU: VRAM, MMU, allocations and the BAR1 aperture. Plain Python, no simulator.

    ``vram_size`` and ``bar1_size`` are bytes (BAR1 a power of two from 64 MiB to
    128 GiB); ``bar1_driver_bytes`` is the part the driver keeps for itself (32 MiB on
    256 MiB consumer apertures, 1 MiB on large resizable ones). ``clock`` returns the
    current simulated time for the fault log.
    """

    def __init__(
        self,
        vram_size: int = 16 << 30,
        bar1_size: int = 256 << 20,
        bar1_driver_bytes: int | None = None,
        uninit_byte: int = 0,
        clock: Callable[[], float] | None = None,
        name: str = "gpu0",
    ) -> None:
        if bar1_size & (bar1_size - 1) or not (64 << 20) <= bar1_size <= (128 << 30):
            raise ValueError(f"BAR1 size must be a power of two, 64 MiB..128 GiB: {bar1_size:#x}")
        self.name = name
        self.vram = Vram(vram_size, uninit_byte)
        self.bar1_size = bar1_size
        self.clock = clock or (lambda: 0.0)
        self.bar1_base_provider: Callable[[], int] = lambda: 0
        self.uuid = bytes(range(0x10, 0x20))
        self._phys = ExtentAllocator(vram_size >> PAGE_SHIFT)
        self._dev_va = ExtentAllocator(DEVICE_VA_SPAN // BIG_PAGE_SIZE)
        self._host_va = ExtentAllocator(HOST_VA_SPAN >> 12)
        # MMU: sorted VA page segments -> physical pages
        self._seg_va: list[int] = []
        self._seg_phys: dict[int, list[int]] = {}
        self._seg_backing: dict[int, Backing] = {}
        self._allocs: list[Allocation] = []  # sorted by base
        self._alloc_bases: list[int] = []
        self._chunks: list[Backing] = []
        self._next_buffer_id = 1
        # physical pages kept alive by persistent pins after their memory was freed
        self._phys_holds: dict[int, int] = {}
        self._phys_orphans: set[int] = set()
        # BAR1
        if bar1_driver_bytes is None:
            bar1_driver_bytes = (32 << 20) if bar1_size <= (256 << 20) else (1 << 20)
        self.bar1_driver_pages = -(-bar1_driver_bytes // GPU_PAGE_SIZE)
        self._bar1 = ExtentAllocator(bar1_size >> PAGE_SHIFT)
        if self.bar1_driver_pages:
            self._bar1.reserve(0, self.bar1_driver_pages)
        self._bar1_map: dict[int, _Bar1Entry] = {}
        self._phys_to_bar1: dict[int, int] = {}
        self._bar1_tomb: dict[int, int] = {}
        self.pins: dict[int, Pin] = {}
        self._next_pin = 1
        self.fault_log: list[Bar1Fault] = []
        self.peer: PeerAccess | None = None  # answers peers' BAR1 accesses beside the model
        # simulated time and the bus, given by the GPU's PCIe endpoint in a simulation
        # (cuda_model.devtime, cuda_model.device); None: work runs at synchronisation
        # points and nothing leaves the GPU
        self.device_time: DeviceTime | None = None
        self.bus: DeviceBus | None = None
        # every BAR of this GPU as (bus address, size), given by its endpoint: registering
        # a range in one is refused (cuda_model.hostreg); and nvidia.ko's
        # PeerMappingOverride registry key (non-root processes may register I/O memory)
        self.bar_ranges: Callable[[], list[tuple[int, int]]] = lambda: []
        self.peer_mapping_override = False
        # virtual memory management: cuMemCreate handles, cuMemAddressReserve ranges
        self.vmm_handles: dict[int, PhysAlloc] = {}
        self._next_vmm = 1
        self._reservations: dict[int, int] = {}  # base -> size

    # ------------------------------------------------------------------ allocations
    def find_allocation(self, ptr: int) -> Allocation | None:
        """The live allocation containing ``ptr`` (device or host)."""
        i = bisect.bisect_right(self._alloc_bases, ptr) - 1
        if i >= 0:
            a = self._allocs[i]
            if a.base <= ptr < a.base + max(a.size, 1):
                return a
        return None

    def _insert(self, a: Allocation) -> Allocation:
        i = bisect.bisect_right(self._alloc_bases, a.base)
        self._allocs.insert(i, a)
        self._alloc_bases.insert(i, a.base)
        self._next_buffer_id += 1
        return a

    def alloc_device(self, size: int) -> Allocation | None:
        """Place a device allocation like CUDA does; None when VRAM or VA runs out."""
        if size < BIG_PAGE_SIZE:
            granules = max(1, -(-size // SMALL_ALLOC_GRANULE))
            for chunk in self._chunks:
                assert chunk.blocks is not None
                off = chunk.blocks.alloc(granules)
                if off is not None:
                    break
            else:
                new = self._map_new(BIG_PAGE_SIZE, chunk=True)
                if new is None:
                    return None
                chunk = new
                self._chunks.append(chunk)
                assert chunk.blocks is not None
                off = chunk.blocks.alloc(granules)
                assert off is not None
            base, reserved = chunk.base + off * SMALL_ALLOC_GRANULE, granules * SMALL_ALLOC_GRANULE
        else:
            span = -(-size // BIG_PAGE_SIZE) * BIG_PAGE_SIZE
            new = self._map_new(span)
            if new is None:
                return None
            chunk, base, reserved = new, new.base, span
        return self._insert(
            Allocation(
                base,
                size,
                MemoryType.CU_MEMORYTYPE_DEVICE,
                self._next_buffer_id,
                backing=chunk,
                reserved=reserved,
            )
        )

    def _map_new(self, span: int, chunk: bool = False) -> Backing | None:
        """A new backing: 2 MiB-aligned VA over physical pages (any placement)."""
        npages = span >> PAGE_SHIFT
        phys = self._phys.alloc_scatter(npages)
        if phys is None:
            return None
        slot = self._dev_va.alloc(span // BIG_PAGE_SIZE)
        if slot is None:
            for p in phys:
                self._phys.free(p)
            return None
        b = Backing(
            DEVICE_VA_BASE + slot * BIG_PAGE_SIZE,
            span,
            ExtentAllocator(span // SMALL_ALLOC_GRANULE) if chunk else None,
        )
        vpage = b.base >> PAGE_SHIFT
        i = bisect.bisect_right(self._seg_va, vpage)
        self._seg_va.insert(i, vpage)
        self._seg_phys[vpage] = phys
        self._seg_backing[vpage] = b
        return b

    def _unmap(self, b: Backing) -> None:
        vpage = b.base >> PAGE_SHIFT
        phys = self._seg_phys.pop(vpage)
        del self._seg_backing[vpage]
        self._seg_va.remove(vpage)
        self._dev_va.free((b.base - DEVICE_VA_BASE) // BIG_PAGE_SIZE, b.span // BIG_PAGE_SIZE)
        self.orphan_or_release(phys)

    def backing_at(self, va: int) -> Backing | None:
        """The live backing (pool chunk or large range) whose VA range holds ``va``."""
        vpage = va >> PAGE_SHIFT
        i = bisect.bisect_right(self._seg_va, vpage) - 1
        if i < 0:
            return None
        b = self._seg_backing[self._seg_va[i]]
        return b if va < b.end else None

    def _release_phys(self, p: int) -> None:
        self.vram.release(p)
        self._phys.free(p)

    def alloc_host(
        self, size: int, backing: bytearray | memoryview | None = None, base: int | None = None
    ) -> Allocation | None:
        """Page-locked host memory (cudaHostAlloc), backed by ``backing`` (``size`` bytes
        of host RAM) or by a fresh buffer: at ``base`` (where the process mapped it), or
        in an address range of its own."""
        pages = max(1, -(-size // 4096))
        if base is None:
            slot = self._host_va.alloc(pages)
            if slot is None:
                return None
            base = HOST_VA_BASE + slot * 4096
        return self._insert(
            Allocation(
                base,
                size,
                MemoryType.CU_MEMORYTYPE_HOST,
                self._next_buffer_id,
                host_buffer=bytearray(size) if backing is None else backing,
                reserved=pages * 4096,
            )
        )

    # ------------------------------------------------------------------ VMM
    def vmm_create(self, size: int, rdma_capable: bool) -> PhysAlloc | None:
        """``cuMemCreate``: ``size`` bytes of VRAM (a multiple of :data:`VMM_GRANULARITY`,
        checked by the caller), any placement; None when VRAM runs out."""
        phys = self._phys.alloc_scatter(size >> PAGE_SHIFT)
        if phys is None:
            return None
        h = PhysAlloc(self._next_vmm, size, phys, rdma_capable)
        self._next_vmm += 1
        self.vmm_handles[h.handle] = h
        return h

    def vmm_reserve(self, size: int) -> int | None:
        """``cuMemAddressReserve``: a VA range of ``size`` bytes (granularity multiple),
        2 MiB aligned, beside cudaMalloc's ranges; None when VA runs out."""
        slot = self._dev_va.alloc(size // BIG_PAGE_SIZE)
        if slot is None:
            return None
        base = DEVICE_VA_BASE + slot * BIG_PAGE_SIZE
        self._reservations[base] = size
        return base

    def vmm_reservation_of(self, va: int, size: int) -> int | None:
        """The base of the reservation holding ``[va, va + size)``, or None."""
        for base, span in self._reservations.items():
            if base <= va and va + size <= base + span:
                return base
        return None

    def vmm_mapped(self, va: int, size: int) -> bool:
        """Whether any byte of ``[va, va + size)`` is mapped."""
        return any(
            a.base < va + size and va < a.end
            for a in self._allocs
            if a.memory_type is MemoryType.CU_MEMORYTYPE_DEVICE
        )

    def vmm_mappings(self, va: int, size: int) -> list[Allocation]:
        """The cuMemMap mappings overlapping ``[va, va + size)``, lowest first."""
        return [a for a in self._allocs if a.vmm is not None and a.base < va + size and va < a.end]

    def memory_object_pages(self, a: Allocation) -> list[int]:
        """The VRAM pages of the resource manager's memory object behind ``a``: a
        cuMemCreate allocation whole, or the pool chunk or range of a cudaMalloc buffer."""
        if a.vmm is not None:
            return list(a.vmm.phys)
        assert a.backing is not None
        return list(self._seg_phys[a.backing.base >> PAGE_SHIFT])

    def reservation_size(self, base: int) -> int | None:
        """The size of the reservation starting at ``base``, or None."""
        return self._reservations.get(base)

    def vmm_free_reservation(self, base: int) -> None:
        """``cuMemAddressFree`` of a whole reservation with nothing mapped in it."""
        span = self._reservations.pop(base)
        self._dev_va.free((base - DEVICE_VA_BASE) // BIG_PAGE_SIZE, span // BIG_PAGE_SIZE)

    def vmm_map(self, va: int, size: int, offset: int, h: PhysAlloc) -> Allocation:
        """``cuMemMap``: the handle's pages ``[offset, offset + size)`` at ``va`` (the
        caller checked alignment, the reservation and that nothing is mapped there)."""
        b = Backing(va, size)
        vpage = va >> PAGE_SHIFT
        i = bisect.bisect_right(self._seg_va, vpage)
        self._seg_va.insert(i, vpage)
        self._seg_phys[vpage] = h.phys[offset >> PAGE_SHIFT : (offset + size) >> PAGE_SHIFT]
        self._seg_backing[vpage] = b
        h.mappings += 1
        return self._insert(
            Allocation(
                va,
                size,
                MemoryType.CU_MEMORYTYPE_DEVICE,
                self._next_buffer_id,
                backing=b,
                reserved=size,
                vmm=h,
            )
        )

    def vmm_unmap(self, a: Allocation) -> None:
        """``cuMemUnmap`` of one mapping: callback pins on it are revoked first, as when
        cudaFree takes a buffer; the VA stays reserved and the pages stay with their
        handle (or go, when it was released and this was its last mapping). The
        caller has completed the work that uses it."""
        b, h = a.backing, a.vmm
        assert b is not None and h is not None
        for pin in [
            p
            for p in self.pins.values()
            if p.state is PinState.LIVE and not p.persistent and b.base <= p.va < b.end
        ]:
            self._revoke(pin, f"cuMemUnmap({a.base:#x})")
        i = self._allocs.index(a)
        del self._allocs[i], self._alloc_bases[i]
        vpage = b.base >> PAGE_SHIFT
        del self._seg_phys[vpage], self._seg_backing[vpage]
        self._seg_va.remove(vpage)
        h.mappings -= 1
        if h.released and not h.mappings:
            self._vmm_free(h)

    def vmm_release(self, h: PhysAlloc) -> None:
        """``cuMemRelease``: the pages go with the handle's last mapping."""
        h.released = True
        if not h.mappings:
            self._vmm_free(h)

    def _vmm_free(self, h: PhysAlloc) -> None:
        del self.vmm_handles[h.handle]
        self.orphan_or_release(h.phys)

    def orphan_or_release(self, phys: list[int]) -> None:
        """Pages nobody maps any more: released, or kept while something holds them."""
        for p in phys:
            if self._phys_holds.get(p):
                self._phys_orphans.add(p)
            else:
                self._release_phys(p)

    def hold_phys(self, phys: list[int]) -> None:
        """Keep VRAM pages from reuse until :meth:`drop_phys` (an export's reference)."""
        for p in phys:
            self._phys_holds[p] = self._phys_holds.get(p, 0) + 1

    def drop_phys(self, phys: list[int]) -> None:
        """Drop a :meth:`hold_phys` reference; pages whose memory was freed meanwhile go."""
        for p in phys:
            self._phys_holds[p] -= 1
            if not self._phys_holds[p]:
                del self._phys_holds[p]
                if p in self._phys_orphans:
                    self._phys_orphans.discard(p)
                    self._release_phys(p)

    def free_allocation(self, a: Allocation) -> None:
        """Release an allocation. A large buffer's backing goes with it; a small buffer's
        pool chunk only with its last buffer (measured: pool_release.txt). Callback pins
        inside a backing that goes are revoked first (their callbacks run, then their
        BAR1 pages are unmapped), and only then is the memory released. Pins on a chunk
        that stays keep their mapping, over freed bytes a later allocation may reuse.
        The caller has completed the work that uses it (a context synchronises first)."""
        b = a.backing
        goes = b is not None and (
            b.blocks is None
            or b.blocks.free_units + a.reserved // SMALL_ALLOC_GRANULE == b.blocks.total
        )
        if b is not None:
            inside = [
                p
                for p in self.pins.values()
                if p.state is PinState.LIVE and not p.persistent and b.base <= p.va < b.end
            ]
            for pin in inside:
                if goes:
                    self._revoke(pin, f"cudaFree({a.base:#x})")
                elif pin.va < a.end and a.base < pin.va + pin.length:
                    log.warning(
                        "%s: cudaFree(%#x) leaves pin #%d mapped: its pool chunk is still in"
                        " use, so peer accesses reach the freed bytes",
                        self.name,
                        a.base,
                        pin.pin_id,
                    )
        i = self._allocs.index(a)
        del self._allocs[i], self._alloc_bases[i]
        if a.memory_type is MemoryType.CU_MEMORYTYPE_HOST:
            if HOST_VA_BASE <= a.base < HOST_VA_BASE + HOST_VA_SPAN:
                self._host_va.free((a.base - HOST_VA_BASE) // 4096, a.reserved // 4096)
            return
        assert b is not None
        if b.blocks is not None:
            b.blocks.free(
                (a.base - b.base) // SMALL_ALLOC_GRANULE, a.reserved // SMALL_ALLOC_GRANULE
            )
            if not goes:
                return
            self._chunks.remove(b)
        self._unmap(b)

    # ------------------------------------------------------------------ MMU
    def translate(self, va: int) -> int | None:
        """VRAM byte offset behind a device VA, or None when unmapped."""
        vpage = va >> PAGE_SHIFT
        i = bisect.bisect_right(self._seg_va, vpage) - 1
        if i < 0:
            return None
        start = self._seg_va[i]
        phys = self._seg_phys[start]
        if vpage - start >= len(phys):
            return None
        return (phys[vpage - start] << PAGE_SHIFT) | (va & (PAGE_SIZE - 1))

    def _va_chunks(self, va: int, length: int):
        for addr, pos, n in page_pieces(va, length):
            pa = self.translate(addr)
            if pa is None:
                raise ValueError(f"device address {addr:#x} is not mapped")
            yield pa, pos, n

    def read_va(self, va: int, length: int) -> np.ndarray:
        """Bytes at a device VA range (must be mapped)."""
        out = np.empty(length, dtype=np.uint8)
        for pa, pos, n in self._va_chunks(va, length):
            out[pos : pos + n] = self.vram.read(pa, n)
        return out

    def write_va(self, va: int, data) -> None:
        arr = as_u8(data)
        for pa, pos, n in self._va_chunks(va, len(arr)):
            self.vram.write(pa, arr[pos : pos + n])

    def fill_va(self, va: int, length: int, value: int) -> None:
        for pa, _pos, n in self._va_chunks(va, length):
            self.vram.fill(pa, n, value)

    # ------------------------------------------------------------------ BAR1
    @property
    def bar1_bus_address(self) -> int:
        """Bus address of BAR1 as the root complex assigned it (0 before enumeration)."""
        return self.bar1_base_provider()

    @property
    def vram_free_bytes(self) -> int:
        """VRAM not taken by any backing (nor held by a persistent pin after its free)."""
        return self._phys.free_units * PAGE_SIZE

    @property
    def bar1_free_bytes(self) -> int:
        return self._bar1.free_units * GPU_PAGE_SIZE

    def bar1_lookup(self, offset: int) -> tuple[int, int] | None:
        """(VRAM offset, BAR1 page) behind a BAR1 offset, or None when unmapped."""
        page = offset >> PAGE_SHIFT
        entry = self._bar1_map.get(page)
        if entry is None:
            return None
        return (entry.phys_page << PAGE_SHIFT) | (offset & (PAGE_SIZE - 1)), page

    def bar1_page_pins(self, page: int) -> list[Pin]:
        """The live pins mapping BAR1 page ``page``, oldest first (pins may share a page)."""
        entry = self._bar1_map.get(page)
        return [] if entry is None else [self.pins[i] for i in sorted(entry.pins)]

    def pin(
        self, va: int, length: int, persistent: bool, free_callback: Callable | None, data: object
    ) -> Pin | int:
        """Map ``[va, va + length)`` (64 KiB aligned, device memory) into BAR1.

        Returns the Pin or a positive errno (EINVAL / ENOMEM); nv_p2p checks the
        arguments' alignment before calling this. The range must lie inside one backing
        (a pool chunk or a large buffer's range), as the resource manager requires of the
        registered allocation it looks up (``CliGetThirdPartyP2PVidmemInfoFromAddress``:
        a range running past its end is NV_ERR_INVALID_ARGUMENT); the bytes need not be
        allocated now (a small buffer's pin rounds out over its neighbours)."""
        b = self.backing_at(va)
        if b is None:
            return EINVAL  # not device memory from cudaMalloc (or freed with its backing)
        if va + length > b.end:
            log.info(
                "%s: pin of %#x bytes at %#x runs past its allocation (%#x..%#x)",
                self.name,
                length,
                va,
                b.base,
                b.end,
            )
            return EINVAL
        phys: list[int] = []
        for off in range(0, length, GPU_PAGE_SIZE):
            pa = self.translate(va + off)
            assert pa is not None  # a backing is mapped whole
            phys.append(pa >> PAGE_SHIFT)
        return self._map_bar1(va, length, phys, persistent, free_callback, data)

    def map_phys(self, va: int, length: int, phys: list[int], kind: str) -> Pin | int:
        """Map VRAM pages ``phys`` into BAR1 for an exporter that holds them itself (an
        nv-dmabuf mapping): no free callback, never revoked by a free. ``va`` and
        ``length`` describe the range for logs and the trace. The Pin, or ENOMEM when
        BAR1 is short (the reserve counts as for pins)."""
        pin = self._map_bar1(va, length, phys, True, None, None)
        if isinstance(pin, Pin):
            pin.kind = kind
        return pin

    def _map_bar1(
        self,
        va: int,
        length: int,
        phys: list[int],
        persistent: bool,
        free_callback: Callable | None,
        data: object,
    ) -> Pin | int:
        new = [p for p in dict.fromkeys(phys) if p not in self._phys_to_bar1]
        need = len(new) * GPU_PAGE_SIZE
        if self.bar1_free_bytes < BAR1_PIN_RESERVE + need:
            log.info(
                "%s: BAR1 pin of %#x bytes refused: %#x free, %#x reserve",
                self.name,
                need,
                self.bar1_free_bytes,
                BAR1_PIN_RESERVE,
            )
            return ENOMEM
        # BAR1 pages come lowest-first: a fragmented aperture scatters a pin's pages
        pages = self._bar1.alloc_lowest(len(new)) if new else []
        assert pages is not None
        self._settle_peer()  # (a page shared with the new pin counts for it from now on)
        for p, b in zip(new, pages, strict=True):
            self._bar1_map[b] = _Bar1Entry(p, set())
            self._phys_to_bar1[p] = b
            self._bar1_tomb.pop(b, None)
            if self.peer is not None:
                self.peer.mapped(b, p)
        pin = Pin(
            self._next_pin,
            va,
            length,
            [self._phys_to_bar1[p] for p in phys],
            phys,
            persistent,
            free_callback,
            data,
            stats=PinStats(self._settle_peer),
        )
        self._next_pin += 1
        for b in pin.bar1_pages:
            self._bar1_map[b].pins.add(pin.pin_id)
        if persistent:
            self._hold(pin)
        self.pins[pin.pin_id] = pin
        return pin

    def unpin(self, pin: Pin, state: PinState = PinState.RELEASED) -> None:
        """Drop the pin's BAR1 mappings (pages shared with other pins stay mapped)."""
        self._settle_peer()
        for b in dict.fromkeys(pin.bar1_pages):
            entry = self._bar1_map.get(b)
            if entry is None:
                continue
            entry.pins.discard(pin.pin_id)
            if not entry.pins:
                del self._bar1_map[b]
                if self.peer is not None:
                    self.peer.mapped(b, None)
                del self._phys_to_bar1[entry.phys_page]
                self._bar1.free(b)
                self._bar1_tomb[b] = pin.pin_id
        if (pin.persistent and pin.state is PinState.LIVE) or pin.state is PinState.REVOKING:
            self._drop_holds(pin)
        pin.state = state

    def _hold(self, pin: Pin) -> None:
        self.hold_phys(pin.phys_pages)

    def _drop_holds(self, pin: Pin) -> None:
        self.drop_phys(pin.phys_pages)

    def _revoke(self, pin: Pin, why: str) -> None:
        """Memory under a callback pin goes away: callback first, then unmap. A callback
        that returns a :class:`CallbackPending` has not returned yet in the kernel's
        terms: the pin stays mapped (REVOKING) over its physical pages, held from reuse,
        until the pending is done."""
        pin.revoked_by = why
        log.info("%s: pin #%d revoked by %s, calling its free callback", self.name, pin.pin_id, why)
        pin.in_callback = True
        pending = None
        try:
            if pin.free_callback is not None:
                pending = pin.free_callback(pin.data)
        finally:
            pin.in_callback = False
            if isinstance(pending, CallbackPending) and not pending.is_done:
                log.info("%s: pin #%d: free callback waits for its device", self.name, pin.pin_id)
                self._hold(pin)
                pin.state = PinState.REVOKING
                pending.on_done(lambda: self.unpin(pin, PinState.REVOKED))
            else:
                self.unpin(pin, PinState.REVOKED)

    # ------------------------------------------------------------------ peer access
    def _fault(self, op: str, offset: int, length: int) -> None:
        page = offset >> PAGE_SHIFT
        if page < self.bar1_driver_pages:
            reason = "driver-reserved"
        elif page in self._bar1_tomb:
            pin = self.pins.get(self._bar1_tomb[page])
            reason = (
                (
                    f"revoked (pin #{pin.pin_id} {pin.state.value}"
                    f"{' by ' + pin.revoked_by if pin.revoked_by else ''})"
                )
                if pin
                else "revoked"
            )
        else:
            reason = "unmapped"
        fault = Bar1Fault(self.clock(), op, offset, length, reason)
        self.fault_log.append(fault)
        log.warning(
            "%s: BAR1 %s of %d bytes at offset %#x: %s", self.name, op, length, offset, reason
        )

    def bar1_poisoned_write(self, offset: int, length: int) -> None:
        """A peer's write to BAR1 arrived poisoned (EP set): the model discards its data
        (PCIe lets a completer drop poisoned write data or store it marked; this model
        drops it) and records it in ``fault_log``."""
        fault = Bar1Fault(self.clock(), "write", offset, length, "poisoned: data discarded")
        self.fault_log.append(fault)
        log.warning(
            "%s: BAR1 write of %d bytes at offset %#x poisoned: data discarded",
            self.name,
            length,
            offset,
        )

    def bar1_readable(self, offset: int, length: int) -> bool:
        """Whether a peer read of BAR1 can be served; if not, the fault is recorded (the
        endpoint then completes the request with Unsupported Request)."""
        if offset < 0 or offset + length > self.bar1_size:
            self._fault("read", offset, length)
            return False
        for off, _pos, n in page_pieces(offset, length):
            if self.bar1_lookup(off) is None:
                self._fault("read", off, n)
                return False
        return True

    def bar1_read(self, offset: int, length: int) -> bytes | None:
        """A peer reads BAR1; None (and a fault record) if any byte is not mapped."""
        if not self.bar1_readable(offset, length):
            return None
        out = bytearray(length)
        for off, pos, n in page_pieces(offset, length):
            pa, page = self.bar1_lookup(off)
            out[pos : pos + n] = self.vram.read(pa, n).tobytes()
            for pid in self._bar1_map[page].pins:
                self.pins[pid].stats.add(1, n, 0, 0)
        return bytes(out)

    def bar1_write(self, offset: int, data: bytes) -> bool:
        """A peer writes BAR1; unmapped parts are dropped and recorded. True if all landed."""
        if offset < 0 or offset + len(data) > self.bar1_size:
            self._fault("write", offset, len(data))
            return False
        ok = True
        for off, pos, n in page_pieces(offset, len(data)):
            hit = self.bar1_lookup(off)
            if hit is None:
                self._fault("write", off, n)
                ok = False
                continue
            pa, page = hit
            self.vram.write(pa, data[pos : pos + n])
            for pid in self._bar1_map[page].pins:
                self.pins[pid].stats.add(0, 0, 1, n)
        return ok

    def attach_peer(self, peer: PeerAccess) -> None:
        """Let ``peer`` answer peers' BAR1 accesses beside the model: it is told the BAR1
        page table and VRAM's backing as they are now and each change from now on, and
        the accesses it counts go to the pins of their pages before the table changes
        and whenever a pin's ``stats`` are read."""
        self._settle_peer()
        self.peer = peer
        for page, entry in self._bar1_map.items():
            peer.mapped(page, entry.phys_page)
        self.vram.on_backing = peer.backing
        for page, data in self.vram.backings():
            peer.backing(page, data)

    def _settle_peer(self) -> None:
        """Add the accesses the peer answered to the pins mapping their pages now."""
        if self.peer is None:
            return
        for page, reads, read_bytes, writes, write_bytes in self.peer.take_counts():
            for pid in self._bar1_map[page].pins:
                self.pins[pid].stats.add(reads, read_bytes, writes, write_bytes)

    def bar0_read(self, offset: int, length: int) -> bytes:
        """Register BAR: NV_PMC_BOOT_0 identifies the chip; everything else reads zero."""
        regs = {NV_PMC_BOOT_0: GH100_BOOT_0}
        out = bytearray(length)
        for i in range(length):
            a = offset + i
            out[i] = (regs.get(a & ~3, 0) >> (8 * (a & 3))) & 0xFF
        return bytes(out)
