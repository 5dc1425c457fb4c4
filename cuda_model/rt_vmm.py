"""CUDA's virtual memory management (the driver API reference's "Virtual Memory
Management": cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess...) and the
dma-buf export of a range (cuMemGetHandleForAddressRange) on the GPU model."""

from __future__ import annotations

from .api_types import (
    CU_MEM_ACCESS_FLAGS_PROT_READ,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    CU_MEM_ALLOC_GRANULARITY_MINIMUM,
    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED,
    CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE,
    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
    CUmemAllocationProp,
)
from .dmabuf import HOST_PAGE_SIZE, NvDmaBuf
from .errors import CudaError, CUresult
from .gpu import GPU_PAGE_SIZE, VMM_GRANULARITY, MemoryType, PhysAlloc


class VmmApi:
    """Vmm calls of :class:`cuda_model.runtime.CudaRuntime` (its state and helpers are the
    runtime's)."""

    def cuMemGetAllocationGranularity(self, prop: CUmemAllocationProp, option: int) -> int:
        """2 MiB, minimum and recommended alike (probes/dmabuf.txt)."""
        if option not in (CU_MEM_ALLOC_GRANULARITY_MINIMUM, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED):
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"granularity option {option}")
        return VMM_GRANULARITY

    def cuMemCreate(self, size: int, prop: CUmemAllocationProp, flags: int = 0) -> int:
        """A physical allocation of ``size`` bytes (a granularity multiple); its handle."""
        if prop.location_id != 0 or flags != 0:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, "cuMemCreate: device 0, flags 0")
        if size <= 0 or size % VMM_GRANULARITY:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"cuMemCreate({size:#x})")
        h = self.gpu.vmm_create(size, prop.gpu_direct_rdma_capable)
        if h is None:
            raise CudaError(CUresult.CUDA_ERROR_OUT_OF_MEMORY, f"cuMemCreate({size:#x})")
        return h.handle

    def _handle(self, handle: int) -> PhysAlloc:
        h = self.gpu.vmm_handles.get(handle)
        if h is None or h.released:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"no allocation handle {handle}")
        return h

    def cuMemRelease(self, handle: int) -> None:
        """Release a handle; its memory goes once no mapping uses it."""
        self.gpu.vmm_release(self._handle(handle))

    def cuMemAddressReserve(self, size: int, alignment: int = 0, addr: int = 0) -> int:
        """Reserve ``size`` bytes of VA (a granularity multiple; the model places it)."""
        if size <= 0 or size % VMM_GRANULARITY or (alignment and alignment > VMM_GRANULARITY):
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"cuMemAddressReserve({size:#x})")
        va = self.gpu.vmm_reserve(size)
        if va is None:
            raise CudaError(CUresult.CUDA_ERROR_OUT_OF_MEMORY, f"cuMemAddressReserve({size:#x})")
        return va

    def cuMemAddressFree(self, ptr: int, size: int) -> None:
        """Free a whole reservation; nothing may be mapped in it."""
        if self.gpu.reservation_size(ptr) != size or self.gpu.vmm_mapped(ptr, size):
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"cuMemAddressFree({ptr:#x})")
        self.gpu.vmm_free_reservation(ptr)

    def cuMemMap(self, ptr: int, size: int, offset: int, handle: int, flags: int = 0) -> None:
        """Map ``[offset, offset + size)`` of a handle at ``ptr``, inside a reservation
        and over nothing mapped; all granularity aligned."""
        h = self._handle(handle)
        aligned = not (ptr % VMM_GRANULARITY or size % VMM_GRANULARITY or offset % VMM_GRANULARITY)
        if (
            flags
            or size <= 0
            or not aligned
            or offset + size > h.size
            or self.gpu.vmm_reservation_of(ptr, size) is None
        ):
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"cuMemMap({ptr:#x}, {size:#x})")
        if self.gpu.vmm_mapped(ptr, size):
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"cuMemMap({ptr:#x}): mapped")
        self.gpu.vmm_map(ptr, size, offset, h)

    def cuMemSetAccess(self, ptr: int, size: int, flags: int, location_id: int = 0) -> None:
        """Make a mapped range accessible from device ``location_id`` (the model's one
        device): every byte must be mapped."""
        pieces = self.gpu.vmm_mappings(ptr, size)
        if (
            location_id != 0
            or flags not in (CU_MEM_ACCESS_FLAGS_PROT_READ, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            or sum(min(a.end, ptr + size) - max(a.base, ptr) for a in pieces) != size
        ):
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"cuMemSetAccess({ptr:#x})")

    def cuMemUnmap(self, ptr: int, size: int) -> None:
        """Unmap whole mappings covering exactly ``[ptr, ptr + size)``."""
        maps = self.gpu.vmm_mappings(ptr, size)
        if not maps or maps[0].base != ptr or sum(a.size for a in maps) != size:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"cuMemUnmap({ptr:#x}, {size:#x})")
        self._drain()
        for a in maps:
            self.gpu.vmm_unmap(a)

    def cuMemGetHandleForAddressRange(
        self, dptr: int, size: int, handle_type: int, flags: int = 0
    ) -> int:
        """Export ``[dptr, dptr + size)`` of device memory as a dma-buf; its fd.

        The rules an H100 shows (probes/dmabuf.txt): the type must be DMA_BUF_FD; the
        pointer and size aligned to the host page (4 KiB) and the size non-zero; every
        byte in live device memory (cudaMalloc buffers, cuMemMap mappings: one range may
        cross from one mapping into the next, with or without gpuDirectRDMACapable);
        page-locked host, pageable and managed memory refused (the device reports
        HOST_ALLOC_DMA_BUF_SUPPORTED 0). Each is CUDA_ERROR_INVALID_VALUE, and so is an
        unknown flag; the PCIe mapping-type flag is CUDA_ERROR_NOT_SUPPORTED (it is for
        coherent platforms). The fd comes from ``dma_buf_export``, the kernel's side."""
        self._check_sticky()
        bad = CUresult.CUDA_ERROR_INVALID_VALUE
        what = f"cuMemGetHandleForAddressRange({dptr:#x}, {size:#x}, {handle_type}, {flags:#x})"
        if handle_type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD:
            raise CudaError(bad, f"{what}: handle type")
        if flags & ~CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE:
            raise CudaError(bad, f"{what}: unknown flags")
        if flags & CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE:
            raise CudaError(CUresult.CUDA_ERROR_NOT_SUPPORTED, f"{what}: PCIe mapping type")
        if size <= 0 or dptr % HOST_PAGE_SIZE or size % HOST_PAGE_SIZE:
            raise CudaError(bad, f"{what}: not 4 KiB aligned")
        pos = dptr
        held: dict[int, None] = {}
        while pos < dptr + size:
            a = self.gpu.find_allocation(pos)
            if a is None or a.memory_type is not MemoryType.CU_MEMORYTYPE_DEVICE:
                raise CudaError(bad, f"{what}: {pos:#x} is not device memory")
            held.update(dict.fromkeys(self.gpu.memory_object_pages(a)))
            pos = a.end
        self._drain()  # the export sees the memory as the stream left it
        first = dptr & ~(GPU_PAGE_SIZE - 1)
        phys = []
        for page in range(first, dptr + size, GPU_PAGE_SIZE):
            pa = self.gpu.translate(page)
            assert pa is not None
            phys.append(pa // GPU_PAGE_SIZE)
        if self.dma_buf_export is None:
            raise CudaError(CUresult.CUDA_ERROR_NOT_SUPPORTED, f"{what}: no dma-buf in the kernel")
        self._exports += 1
        exporter = NvDmaBuf(self.gpu, dptr, size, phys, list(held), self._exports)
        return self.dma_buf_export(exporter, size)
