"""The nv-p2p kernel API (nv-p2p.h, dGPU flavour) on top of the GPU model.

Calls keep the kernel's shape: they return ``0`` or a negative errno, and the out
parameters come back in a tuple: ``rc, page_table = p2p.nvidia_p2p_get_pages(0, 0, va,
length, free_callback, data)``. Return codes follow NVIDIA's open kernel module
(open-gpu-kernel-modules, ``kernel-open/nvidia/nv-p2p.c``). Rules modelled (nv-p2p.h,
the GPUDirect RDMA guide, the resource manager's ``third_party_p2p.c``): 64 KiB
alignment of address and length, a non-NULL free callback, device memory from cudaMalloc
only, inside one allocation of the resource manager (a pool chunk or a large buffer:
``Gpu.pin``), the 36 MiB BAR1 reserve, shared BAR1 pages between overlapping pins,
non-contiguous BAR1 placement when the aperture is fragmented, free callbacks fired
synchronously, before the BAR1 mapping is torn down, when that allocation goes, and
persistent pins that never get a callback.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections.abc import Callable

from .errors import EINVAL, ENOTSUPP
from .gpu import GPU_PAGE_SIZE, Gpu, Pin, PinState
from .runtime import VA_SPACE_TOKEN

log = logging.getLogger(__name__)

NVIDIA_P2P_PAGE_TABLE_VERSION = 0x00020000
NVIDIA_P2P_DMA_MAPPING_VERSION = 0x00020003
NVIDIA_P2P_FLAGS_DEFAULT = 0
NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING = 1


class nvidia_p2p_page_size_type(enum.IntEnum):
    """``page_size`` of a page table (dGPUs always use 64 KiB)."""

    NVIDIA_P2P_PAGE_SIZE_4KB = 0
    NVIDIA_P2P_PAGE_SIZE_64KB = 1
    NVIDIA_P2P_PAGE_SIZE_128KB = 2


@dataclasses.dataclass
class nvidia_p2p_page:
    """One 64 KiB page: ``physical_address`` is its BAR1 bus address."""

    physical_address: int


@dataclasses.dataclass(eq=False)
class nvidia_p2p_page_table:
    """``struct nvidia_p2p_page_table``."""

    version: int
    page_size: nvidia_p2p_page_size_type
    pages: list[nvidia_p2p_page]
    entries: int
    gpu_uuid: bytes
    flags: int = 0


@dataclasses.dataclass(eq=False)
class nvidia_p2p_dma_mapping:
    """``struct nvidia_p2p_dma_mapping``: the addresses the peer puts in its TLPs."""

    version: int
    page_size_type: nvidia_p2p_page_size_type
    entries: int
    dma_addresses: list[int]
    pci_dev: object


def _tokens_ok(p2p_token: int, va_space: int) -> bool:
    """No tokens (0, 0: deprecated since CUDA 6.0), or the ones cuPointerGetAttribute
    (P2P_TOKENS) gives this process: p2pToken 0 and its vaSpaceToken."""
    return p2p_token == 0 and va_space in (0, VA_SPACE_TOKEN)


def page_table_version_compatible(pt: nvidia_p2p_page_table) -> bool:
    """NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE: same major, minor at least ours."""
    return (pt.version >> 16) == (NVIDIA_P2P_PAGE_TABLE_VERSION >> 16) and (
        pt.version & 0xFFFF
    ) >= (NVIDIA_P2P_PAGE_TABLE_VERSION & 0xFFFF)


@dataclasses.dataclass(eq=False)
class PeerDevice:
    """A peer PCIe function for dma_map_pages. ``iommu`` translates a bus address into
    the address the peer must use (an IOMMU not in pass-through); None means identity."""

    name: str
    iommu: Callable[[int], int] | None = None


class NvidiaP2P:
    """The nvidia.ko side of the API for one or more GPUs."""

    def __init__(self, gpus: Gpu | list[Gpu]) -> None:
        self.gpus = [gpus] if isinstance(gpus, Gpu) else list(gpus)
        self._tables: dict[int, tuple[Gpu, Pin]] = {}
        self._mappings: dict[int, tuple[nvidia_p2p_page_table, object]] = {}
        self._force_pcie: set[int] = set()  # tables pinned with FORCE_BAR1_MAPPING

    # ---------------------------------------------------------------- helpers
    def _owner(self, va: int) -> Gpu | None:
        # device memory is what the GPU MMU maps; host allocations never are
        return next((gpu for gpu in self.gpus if gpu.translate(va) is not None), None)

    def _lookup(self, page_table: object) -> tuple[Gpu, Pin] | None:
        return self._tables.get(id(page_table))

    def _pin(
        self,
        va: int,
        length: int,
        persistent: bool,
        cb: Callable | None,
        data: object,
        force_pcie: bool = False,
    ) -> tuple[int, nvidia_p2p_page_table | None]:
        if va % GPU_PAGE_SIZE or length % GPU_PAGE_SIZE or length <= 0:
            log.info("nvidia_p2p_get_pages: va %#x / length %#x not 64 KiB aligned", va, length)
            return -EINVAL, None
        gpu = self._owner(va)
        if gpu is None:
            log.info("nvidia_p2p_get_pages: %#x is not GPU memory", va)
            return -EINVAL, None
        table: list[nvidia_p2p_page_table] = []

        def on_free(d: object) -> object:
            # nv_p2p_mem_info_free_callback: the client's callback, then the page table
            # and every DMA mapping of it are freed (nv_p2p_free_platform_data); what the
            # callback returns (a CallbackPending: it still sleeps) goes to the GPU
            try:
                return cb(d)
            finally:
                self._unlink(table[0])

        pin = gpu.pin(va, length, persistent, on_free if cb is not None else None, data)
        if isinstance(pin, int):
            return -pin, None
        base = gpu.bar1_bus_address
        pt = nvidia_p2p_page_table(
            NVIDIA_P2P_PAGE_TABLE_VERSION,
            nvidia_p2p_page_size_type.NVIDIA_P2P_PAGE_SIZE_64KB,
            [nvidia_p2p_page(base + b * GPU_PAGE_SIZE) for b in pin.bar1_pages],
            len(pin.bar1_pages),
            gpu.uuid,
        )
        table.append(pt)
        pin.page_table = pt
        self._tables[id(pt)] = (gpu, pin)
        if force_pcie:
            self._force_pcie.add(id(pt))
        return 0, pt

    def _unlink(self, page_table: nvidia_p2p_page_table) -> None:
        """The table leaves the driver's tracker, with its DMA mappings."""
        self._tables.pop(id(page_table), None)
        self._force_pcie.discard(id(page_table))
        for key, (pt, _peer) in list(self._mappings.items()):
            if pt is page_table:
                del self._mappings[key]

    # ---------------------------------------------------------------- pinning
    def nvidia_p2p_get_pages(
        self,
        p2p_token: int,
        va_space: int,
        virtual_address: int,
        length: int,
        free_callback: Callable | None,
        data: object = None,
    ) -> tuple[int, nvidia_p2p_page_table | None]:
        """Pin device memory and map it through BAR1; ``free_callback(data)`` fires if the
        memory is freed while pinned (after it returns, the page table and its DMA
        mappings are freed by the driver). nv-p2p.c: no callback -> -EINVAL, then the
        64 KiB alignment -> -EINVAL."""
        if free_callback is None:
            return -EINVAL, None  # nvidia_p2p_get_pages: required since R535
        if not _tokens_ok(p2p_token, va_space):
            return -EINVAL, None  # not this process's tokens: the model's choice
        return self._pin(virtual_address, length, False, free_callback, data)

    def nvidia_p2p_put_pages(
        self,
        p2p_token: int,
        va_space: int,
        virtual_address: int,
        page_table: nvidia_p2p_page_table | None,
    ) -> int:
        """Unpin and free the page table. As nv-p2p.c: a NULL table is 0; a table the
        driver no longer tracks (released, freed after its free callback, a persistent
        one, a wrong address) is NV_ERR_OBJECT_NOT_FOUND, which nv_p2p_put_pages turns
        into 0 with no effect. Called from inside the free callback it is such a no-op
        too (logged: the GPUDirect RDMA guide forbids it)."""
        if page_table is None:
            return 0
        found = self._lookup(page_table)
        if found is None or not _tokens_ok(p2p_token, va_space):
            log.info("nvidia_p2p_put_pages: table not tracked (already released): 0")
            return 0
        gpu, pin = found
        if pin.persistent or pin.va != virtual_address:
            log.warning("nvidia_p2p_put_pages: no such non-persistent pin at %#x", virtual_address)
            return 0
        if pin.in_callback:
            log.error("nvidia_p2p_put_pages called from the free callback of pin #%d", pin.pin_id)
            return 0
        gpu.unpin(pin)
        self._unlink(page_table)
        return 0

    def nvidia_p2p_free_page_table(self, page_table: nvidia_p2p_page_table | None) -> int:
        """A no-op returning 0 in nv-p2p.c (the driver frees the table itself once the
        free callback returns); kept for the clients that call it from the callback."""
        return 0

    def nvidia_p2p_get_pages_persistent(
        self, virtual_address: int, length: int, flags: int = NVIDIA_P2P_FLAGS_DEFAULT
    ) -> tuple[int, nvidia_p2p_page_table | None]:
        """Pin without a callback: the memory stays mapped (and allocated in VRAM) until
        nvidia_p2p_put_pages_persistent, even across cudaFree. nv-p2p.c reads only
        NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING from ``flags`` (a table pinned with it cannot
        be DMA-mapped: -ENOTSUPP); other bits are ignored."""
        force = bool(flags & NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING)
        return self._pin(virtual_address, length, True, None, None, force_pcie=force)

    def nvidia_p2p_put_pages_persistent(
        self,
        virtual_address: int,
        page_table: nvidia_p2p_page_table | None,
        flags: int = NVIDIA_P2P_FLAGS_DEFAULT,
    ) -> int:
        """As nv-p2p.c: any ``flags`` -> -EINVAL (checked first); a NULL table -> 0; a
        table the driver does not hold as persistent -> -EINVAL (OBJECT_NOT_FOUND is
        not forgiven here). The address is not looked at."""
        if flags != 0:
            return -EINVAL
        if page_table is None:
            return 0
        found = self._lookup(page_table)
        if found is None or not found[1].persistent:
            return -EINVAL
        gpu, pin = found
        gpu.unpin(pin)
        self._unlink(page_table)
        return 0

    # ---------------------------------------------------------------- DMA mapping
    def nvidia_p2p_dma_map_pages(
        self, peer: object, page_table: nvidia_p2p_page_table | None
    ) -> tuple[int, nvidia_p2p_dma_mapping | None]:
        """Bus addresses of the pinned pages as ``peer`` must use them. NULL arguments
        -> -EINVAL, a FORCE_BAR1 table -> -ENOTSUPP (nv-p2p.c); a table no longer
        tracked (a use after free in the real driver) -> -EINVAL (the model's choice)."""
        if peer is None or page_table is None:
            return -EINVAL, None
        if id(page_table) in self._force_pcie:
            return -ENOTSUPP, None
        found = self._lookup(page_table)
        if found is None:
            return -EINVAL, None
        _gpu, pin = found
        if pin.state is not PinState.LIVE:
            return -EINVAL, None
        iommu = getattr(peer, "iommu", None)
        addrs = [
            iommu(p.physical_address) if iommu else p.physical_address for p in page_table.pages
        ]
        m = nvidia_p2p_dma_mapping(
            NVIDIA_P2P_DMA_MAPPING_VERSION, page_table.page_size, len(addrs), addrs, peer
        )
        self._mappings[id(m)] = (page_table, peer)
        return 0, m

    def nvidia_p2p_dma_unmap_pages(
        self,
        peer: object,
        page_table: nvidia_p2p_page_table | None,
        dma_mapping: nvidia_p2p_dma_mapping | None,
    ) -> int:
        """As nv-p2p.c: NULL arguments -> -EINVAL; a mapping not (or no longer) on the
        table's list -> 0 (so unmapping twice is 0); otherwise unmapped, 0 (a peer other
        than the mapping's is a WARN_ON there, logged here)."""
        if peer is None or page_table is None or dma_mapping is None:
            return -EINVAL
        owner = self._mappings.get(id(dma_mapping))
        if owner is None or owner[0] is not page_table:
            return 0
        if owner[1] is not peer:
            log.warning("nvidia_p2p_dma_unmap_pages: peer is not the mapping's (WARN_ON)")
        del self._mappings[id(dma_mapping)]
        return 0

    def nvidia_p2p_free_dma_mapping(self, dma_mapping: nvidia_p2p_dma_mapping | None) -> int:
        """A no-op returning 0 in nv-p2p.c: the driver frees a table's mappings with the
        table after the free callback."""
        return 0

    def live_mappings(self) -> int:
        """DMA mappings not yet unmapped or freed (leak check for driver tests)."""
        return len(self._mappings)

    def pin_of(self, page_table: nvidia_p2p_page_table) -> Pin | None:
        """The model's record of a page table's pin (state, BAR1 pages, access counts)."""
        found = self._lookup(page_table)
        return found[1] if found else None
