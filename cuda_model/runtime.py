"""The CUDA runtime calls the picoevb applications use, on the GPU model.

The model follows CUDA 13.0 with the R580 driver branch (:data:`CUDA_VERSION`,
:data:`DRIVER_BRANCH`), as measured on an H100 (``cuda_model/probes/edge_cases.txt``).
Calls raise :class:`CudaError` carrying the ``cudaError_t`` a C program would get back;
the error of a failed launch is also what ``cudaGetLastError`` then returns.
Work is ordered like the default stream: kernel launches, cudaMemset and device-to-device
copies are asynchronous and complete at the next synchronisation point
(cudaDeviceSynchronize, a device-to-host copy, cudaFree), or at once on a buffer whose
``CU_POINTER_ATTRIBUTE_SYNC_MEMOPS`` is set. Host-to-device copies from pageable memory
return once staged and land at the next synchronisation point too. So a peer that reads
a surface before the application synchronised sees the old bytes, as on hardware.

:class:`CudaRuntime` holds a context's state and the helpers its calls share; the calls
are in one module per area of CUDA's API reference: memory (:mod:`.rt_memory`), virtual
memory management and dma-buf (:mod:`.rt_vmm`), host memory and registration
(:mod:`.rt_host`), streams, events and execution (:mod:`.rt_streams`), device and
pointer attributes (:mod:`.rt_attributes`), errors (:mod:`.rt_errors`); the API's types
and constants are in :mod:`.api_types`.
"""

from __future__ import annotations

from collections.abc import Callable

from .api_types import (  # the API's types, importable from here as before
    CONTEXT_HANDLE,
    CU_MEM_ACCESS_FLAGS_PROT_NONE,
    CU_MEM_ACCESS_FLAGS_PROT_READ,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    CU_MEM_ALLOC_GRANULARITY_MINIMUM,
    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED,
    CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE,
    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
    CUDA_VERSION,
    DRIVER_BRANCH,
    MAX_BLOCK_DIM,
    MAX_GRID_DIM,
    MAX_THREADS_PER_BLOCK,
    VA_SPACE_TOKEN,
    CUdevice_attribute,
    CUmemAllocationProp,
    CUpointer_attribute,
    cudaDeviceAttr,
    cudaHostAllocDefault,
    cudaMemcpyKind,
    cudaMemoryType,
    cudaPointerAttributes,
)
from .dmabuf import NvDmaBuf
from .errors import CudaError, cudaError
from .gpu import Allocation, Gpu, MemoryType
from .hostreg import (
    Registration,
    Registrations,
    UserMemory,
)
from .rt_attributes import AttributeApi
from .rt_errors import ErrorApi
from .rt_host import HostApi
from .rt_memory import MemoryApi
from .rt_streams import StreamApi
from .rt_vmm import VmmApi
from .streams import DeviceTiming, Op, StreamEngine

__all__ = [
    "CONTEXT_HANDLE",
    "CUDA_VERSION",
    "CU_MEM_ACCESS_FLAGS_PROT_NONE",
    "CU_MEM_ACCESS_FLAGS_PROT_READ",
    "CU_MEM_ACCESS_FLAGS_PROT_READWRITE",
    "CU_MEM_ALLOC_GRANULARITY_MINIMUM",
    "CU_MEM_ALLOC_GRANULARITY_RECOMMENDED",
    "CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE",
    "CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD",
    "DRIVER_BRANCH",
    "MAX_BLOCK_DIM",
    "MAX_GRID_DIM",
    "MAX_THREADS_PER_BLOCK",
    "VA_SPACE_TOKEN",
    "CUdevice_attribute",
    "CUmemAllocationProp",
    "CUpointer_attribute",
    "CudaRuntime",
    "cudaDeviceAttr",
    "cudaHostAllocDefault",
    "cudaMemcpyKind",
    "cudaMemoryType",
    "cudaPointerAttributes",
]


class CudaRuntime(MemoryApi, VmmApi, HostApi, StreamApi, AttributeApi, ErrorApi):
    """One process's CUDA context on one GPU (device 0)."""

    def __init__(self, gpu: Gpu, timing: DeviceTiming | None = None) -> None:
        self.gpu = gpu
        self._last_error = cudaError.cudaSuccess
        # streams, events and the work queued on them; its ``failed`` is the context's
        # sticky error (a fault of asynchronous work)
        self.engine = StreamEngine(lambda: gpu.device_time, timing)
        # memory registered for the GPU (cudaHostRegister): kernels and copies reach it
        # over the bus
        self.registered = Registrations()
        # knobs of kernel accesses (cuda_model.device): the largest piece a plain store
        # becomes on the bus (4: no coalescing), the size an mmio load is widened to (0:
        # exact), and the relaxed-ordering attribute of the GPU's writes (NVIDIA's
        # driver: EnablePCIERelaxedOrderingMode 0, off)
        self.kernel_coalesce = 4
        self.kernel_widen_loads = 0
        self.relaxed_ordering = False
        # the longest an awaited synchronisation waits (simulated ns)
        self.sync_limit_ns = 100_000_000.0
        # the process whose memory cudaHostRegister pins and whose RAM cudaHostAlloc
        # takes (driver_model.host.UserProcess); without one, cudaHostAlloc memory is a
        # buffer of the model's own that only the host side reaches
        self.process: UserMemory | None = None
        self._locked: dict[int, Registration] = {}  # cudaHostAlloc'd, by pointer
        # the kernel's dma_buf_export + dma_buf_fd for cuMemGetHandleForAddressRange:
        # (exporter, size) -> fd (driver_model.dmabuf.DmaBufCore.export_fd); None: the
        # kernel has no dma-buf support
        self.dma_buf_export: Callable[[NvDmaBuf, int], int] | None = None
        self._exports = 0

    # ---------------------------------------------------------------- helpers
    def _check_sticky(self) -> None:
        if self._sticky is not None:
            raise self._sticky

    @property
    def _sticky(self) -> CudaError | None:
        return self.engine.failed

    def _drain(self) -> None:
        """Complete every queued operation now, in order (a synchronous synchronisation
        point: work that must wait in simulated time cannot; await
        :meth:`synchronize` for that)."""
        self.engine.drain_now()

    def _submit(self, what: str, op: Callable[[], None], sync: bool) -> Op:
        """Queue host-style work ``op`` on the legacy stream (at once with ``sync``)."""

        async def body() -> None:
            op()

        queued = self.engine.submit(0, what, "op", body)
        if sync:
            self._drain()
        return queued

    @property
    def pending(self) -> int:
        """Operations queued and not yet complete."""
        return self.engine.pending

    def _device_range(self, ptr: int, count: int, what: str) -> Allocation:
        """The live device allocation ``[ptr, ptr + count)`` lies in. Freed memory is
        cudaErrorInvalidValue even where the GPU MMU still maps it (a small buffer freed
        beside a live one: measured, pool_release.txt)."""
        a = self.gpu.find_allocation(ptr)
        if a is None or a.memory_type is not MemoryType.CU_MEMORYTYPE_DEVICE:
            raise CudaError(
                cudaError.cudaErrorInvalidValue, f"{what}: {ptr:#x} is not device memory"
            )
        end = a.end
        if a.vmm is not None:  # a reservation's mappings are one VA range to copies
            for m in self.gpu.vmm_mappings(a.end, max(ptr + count - a.end, 0)):
                if m.base != end:
                    break
                end = m.end
        if ptr + count > end:
            raise CudaError(
                cudaError.cudaErrorInvalidValue,
                f"{what}: {count} bytes at {ptr:#x} overrun the {a.size}-byte "
                f"allocation at {a.base:#x}",
            )
        return a

    def _host_view(self, obj, count: int, what: str, writable: bool) -> memoryview:
        if isinstance(obj, int):
            a = self.gpu.find_allocation(obj)
            if a is None or a.host_buffer is None:
                raise CudaError(
                    cudaError.cudaErrorInvalidValue,
                    f"{what}: {obj:#x} is not host memory known to CUDA",
                )
            off = obj - a.base
            if off + count > a.size:
                raise CudaError(cudaError.cudaErrorInvalidValue, f"{what}: overrun")
            return memoryview(a.host_buffer)[off : off + count]
        mv = memoryview(obj).cast("B")
        if len(mv) < count:
            raise CudaError(
                cudaError.cudaErrorInvalidValue, f"{what}: host buffer of {len(mv)} bytes < {count}"
            )
        if writable and mv.readonly:
            raise CudaError(cudaError.cudaErrorInvalidValue, f"{what}: host buffer is read-only")
        return mv[:count]

    def _is_device_side(self, obj) -> bool | None:
        """True for device memory, False for host memory (a buffer, cudaHostAlloc
        memory), None for an address CUDA knows nothing of."""
        if not isinstance(obj, int):
            return False
        a = self.gpu.find_allocation(obj)
        if a is None:
            return None
        return a.memory_type is MemoryType.CU_MEMORYTYPE_DEVICE

    # ---------------------------------------------------------------- a remote host's copies
    # The guest's runtime library (tb/guest/gpu.py) moves a process's bytes through the
    # GPU device's commands: host sides are bytes here, taken or handed over when the
    # operation runs on its stream.
