"""nvidia.ko's dma-buf exporter (``kernel-open/nvidia/nv-dmabuf.c``) on the GPU model.

``cuMemGetHandleForAddressRange(..., CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, ...)`` makes one
:class:`NvDmaBuf` per call: the exporter's private state and its ``dma_buf_ops``. The
kernel's dma-buf core (``driver_model.dmabuf``) owns the ``struct dma_buf`` around it and
calls these ops. What the open module does, and the model with it:

- The export duplicates the memory's handles (``nv_dma_buf_dup_mem_handles``): the
  exported VRAM stays allocated until the dma-buf is released, whatever ``cudaFree`` or
  ``cuMemRelease`` does meanwhile, and no free callback exists (measured on an H100:
  ``probes/dmabuf.txt``, "cudaFree with the dma-buf open ... vram back 0 KiB"). The export
  itself takes no VRAM.
- The ops have no ``attach``, ``pin``, ``unpin`` nor ``move_notify`` use: the exporter is
  not dynamic, so the core maps a dynamic importer's attachment at attach time, and the
  mapping never moves.
- ``map_dma_buf`` (``nv_dma_buf_map``) refuses a dynamic attachment without
  ``peer2peer`` on a non-coherent GPU ("NVRM: failed to map dynamic attachment with no
  P2P support"; it returns NULL, which the core turns into -ENOMEM). Otherwise it maps
  the memory into BAR1 on the first mapping of the export (``phys_refcount``; BAR1
  accounted as for nv-p2p pins, a shortage fails the map) and returns an ``sg_table``
  of BAR1 bus addresses with no ``struct page`` (``nv_dma_buf_map_pfns``), each BAR1
  run split at the importer's maximum segment size rounded down to 4 KiB; below 4 KiB
  there is no table (NULL).
- ``unmap_dma_buf`` drops the BAR1 mapping with the export's last mapping; ``release``
  drops the handles; ``mmap`` returns -ENOTSUPP (measured: errno 524).
"""

from __future__ import annotations

import dataclasses
import logging

from .errors import ENOTSUPP
from .gpu import GPU_PAGE_SIZE, Gpu, Pin
from .vram import PAGE_SHIFT

log = logging.getLogger(__name__)

# enum dma_data_direction (include/linux/dma-direction.h)
DMA_BIDIRECTIONAL = 0
DMA_TO_DEVICE = 1
DMA_FROM_DEVICE = 2
# the kernel's PAGE_SIZE: dma-buf ranges and segments are counted in it
HOST_PAGE_SIZE = 4096


@dataclasses.dataclass(frozen=True)
class SgEntry:
    """One mapped scatterlist entry: ``sg_dma_address``/``sg_dma_len``; ``page`` is None
    for peer MMIO (BAR1 has no ``struct page``)."""

    dma_address: int
    length: int
    page: object | None = None


@dataclasses.dataclass(eq=False)
class SgTable:
    """``struct sg_table`` after DMA mapping."""

    entries: list[SgEntry]

    @property
    def nents(self) -> int:
        return len(self.entries)

    @property
    def length(self) -> int:
        return sum(e.length for e in self.entries)


class NvDmaBuf:
    """One export: the range's VRAM pages, held until :meth:`release`, and the ops.

    ``va``/``size``: the exported range (4 KiB aligned; the runtime checked it);
    ``phys``: the VRAM page (64 KiB) behind each 64 KiB page the range touches;
    ``held``: every page of the memory objects the range lies in, which the duplicated
    handles keep (a whole pool chunk, a whole cuMemCreate allocation).
    """

    # not a dynamic exporter: no pin/unpin; the core caches dynamic importers' maps
    attach = None
    detach = None
    pin = None
    unpin = None
    cache_sgt_mapping = False

    def __init__(
        self, gpu: Gpu, va: int, size: int, phys: list[int], held: list[int], export_id: int
    ) -> None:
        self.gpu = gpu
        self.va = va
        self.size = size
        self.phys = phys
        self.held = held
        self.export_id = export_id
        self.name = f"dmabuf#{export_id}"
        self.map_count = 0  # phys_refcount: mappings sharing the BAR1 mapping
        self.bar1: Pin | None = None
        self.released = False
        self.refused_maps = 0
        gpu.hold_phys(held)  # the duplicated handles keep the memory

    # ------------------------------------------------------------------ dma_buf_ops
    def map_dma_buf(self, attach, direction: int) -> SgTable | None:
        """``nv_dma_buf_map``: the attachment's sg_table, or None (the core: -ENOMEM)."""
        if attach.importer_ops is not None and not attach.peer2peer:
            log.error("NVRM: failed to map dynamic attachment with no P2P support")
            self.refused_maps += 1
            return None
        max_seg = (attach.dev.max_seg_size // HOST_PAGE_SIZE) * HOST_PAGE_SIZE
        if max_seg < HOST_PAGE_SIZE:
            log.error("%s: importer's max segment size %d: no sg_table", self.name, max_seg)
            return None
        if self.map_count == 0:
            first = self.va & ~(GPU_PAGE_SIZE - 1)
            span = len(self.phys) * GPU_PAGE_SIZE
            pin = self.gpu.map_phys(first, span, self.phys, "dmabuf")
            if not isinstance(pin, Pin):
                log.error("%s: no BAR1 space for %d bytes", self.name, span)
                return None
            pin.data = self
            self.bar1 = pin
        self.map_count += 1
        return SgTable(self._entries(max_seg))

    def unmap_dma_buf(self, attach, sgt: SgTable, direction: int) -> None:
        """``nv_dma_buf_unmap``: the export's last mapping takes its BAR1 pages back."""
        self.map_count -= 1
        if self.map_count == 0 and self.bar1 is not None:
            self.gpu.unpin(self.bar1)
            self.bar1 = None

    def release(self, dmabuf) -> None:
        """``nv_dma_buf_release``: the handles go, and with them the VRAM if it was freed."""
        if self.map_count:
            log.warning("%s: released with %d mappings (WARN_ON)", self.name, self.map_count)
        if not self.released:
            self.released = True
            self.gpu.drop_phys(self.held)

    def mmap(self, dmabuf, vma) -> int:
        """``nv_dma_buf_mmap``: not supported."""
        return -ENOTSUPP

    # ------------------------------------------------------------------ helpers
    def _entries(self, max_seg: int) -> list[SgEntry]:
        """The range's BAR1 runs (pages contiguous in BAR1 merge), split at ``max_seg``."""
        assert self.bar1 is not None
        base = self.gpu.bar1_bus_address
        runs: list[list[int]] = []
        pos = self.va
        end = self.va + self.size
        first_page = self.va >> PAGE_SHIFT
        while pos < end:
            page = pos >> PAGE_SHIFT
            n = min(end, (page + 1) << PAGE_SHIFT) - pos
            bar1 = self.bar1.bar1_pages[page - first_page]
            addr = base + (bar1 << PAGE_SHIFT) + (pos & (GPU_PAGE_SIZE - 1))
            if runs and runs[-1][0] + runs[-1][1] == addr:
                runs[-1][1] += n
            else:
                runs.append([addr, n])
            pos += n
        out = []
        for addr, n in runs:
            while n:
                k = min(n, max_seg)
                out.append(SgEntry(addr, k))
                addr += k
                n -= k
        return out
