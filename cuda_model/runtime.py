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
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import inspect
import logging
from collections.abc import Callable

import numpy as np

from . import memops
from .bus import Access, BusError
from .device import KernelContext
from .devtime import DeviceTimeError
from .dmabuf import HOST_PAGE_SIZE, NvDmaBuf
from .errors import CudaError, CUresult, cudaError
from .gpu import GPU_PAGE_SIZE, VMM_GRANULARITY, Allocation, Gpu, MemoryType, PhysAlloc
from .hostreg import (
    HOST_PAGE,
    Registration,
    Registrations,
    UserMemory,
    host_register,
    host_unregister,
)
from .streams import DeviceTiming, Op, StreamEngine, cudaStreamDefault

log = logging.getLogger(__name__)


# the CUDA version the model follows (cudaRuntimeGetVersion/cudaDriverGetVersion) and the
# driver branch whose nv-p2p it models
CUDA_VERSION = 13000
DRIVER_BRANCH = "580"
# what cuPointerGetAttribute gives for CONTEXT and the vaSpaceToken of P2P_TOKENS: opaque,
# non-zero on the H100 (the p2pToken it gives is 0)
CONTEXT_HANDLE = 0x5A5A_0000_1000
VA_SPACE_TOKEN = 0xCAFE_0001


class cudaMemoryType(enum.IntEnum):
    """``cudaPointerAttributes.type``."""

    cudaMemoryTypeUnregistered = 0
    cudaMemoryTypeHost = 1
    cudaMemoryTypeDevice = 2
    cudaMemoryTypeManaged = 3


@dataclasses.dataclass(frozen=True)
class cudaPointerAttributes:
    """What ``cudaPointerGetAttributes`` fills in."""

    type: cudaMemoryType
    device: int
    devicePointer: int
    hostPointer: int


class cudaMemcpyKind(enum.IntEnum):
    cudaMemcpyHostToHost = 0
    cudaMemcpyHostToDevice = 1
    cudaMemcpyDeviceToHost = 2
    cudaMemcpyDeviceToDevice = 3
    cudaMemcpyDefault = 4


class CUpointer_attribute(enum.IntEnum):
    CU_POINTER_ATTRIBUTE_CONTEXT = 1
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2
    CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3
    CU_POINTER_ATTRIBUTE_HOST_POINTER = 4
    CU_POINTER_ATTRIBUTE_P2P_TOKENS = 5
    CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6
    CU_POINTER_ATTRIBUTE_BUFFER_ID = 7
    CU_POINTER_ATTRIBUTE_IS_MANAGED = 8
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9


class CUdevice_attribute(enum.IntEnum):
    """``CUdevice_attribute`` values the model answers (cuda.h, CUDA 13)."""

    CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91
    CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 = 92
    CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1 = 93
    CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1 = 94
    CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES = 98
    CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99
    CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED = 113
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING = 118
    CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124
    CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED = 146


# what Hopper (driver 580, open kernel modules) answers: probes/dmabuf.txt (H100) and
# probes/h200-host-register.txt (H200), which agree; the registration attributes say
# the device pointer of registered memory is its host pointer, read-only registration
# works, and no stream memory operation may flush remote writes (cuda_model.memops)
_CU_DEVICE_ATTRIBUTES = {
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: 1,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1: 0,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1: 0,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1: 0,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES: 0,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: 1,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: 1,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: 1,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS: 1,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING: 100,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: 1,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED: 0,
}

# CUmemRangeHandleType and CUmemRangeFlags (cuda.h)
CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 0x1
CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE = 0x1
# CUmemAllocationGranularity_flags
CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0
CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1
# CUmemAccess_flags
CU_MEM_ACCESS_FLAGS_PROT_NONE = 0
CU_MEM_ACCESS_FLAGS_PROT_READ = 1
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3


@dataclasses.dataclass
class CUmemAllocationProp:
    """The fields of ``CUmemAllocationProp`` the model reads: pinned device memory on
    device ``location_id``, and ``allocFlags.gpuDirectRDMACapable``."""

    location_id: int = 0
    gpu_direct_rdma_capable: bool = False


class cudaDeviceAttr(enum.IntEnum):
    """``cudaDeviceAttr`` values the model answers (driver_types.h, CUDA 13); the driver
    API's ``CUdevice_attribute`` has the same numbers."""

    cudaDevAttrMaxThreadsPerBlock = 1
    cudaDevAttrMaxBlockDimX = 2
    cudaDevAttrMaxBlockDimY = 3
    cudaDevAttrMaxBlockDimZ = 4
    cudaDevAttrMaxGridDimX = 5
    cudaDevAttrMaxGridDimY = 6
    cudaDevAttrMaxGridDimZ = 7
    cudaDevAttrMaxSharedMemoryPerBlock = 8
    cudaDevAttrTotalConstantMemory = 9
    cudaDevAttrWarpSize = 10
    cudaDevAttrMaxRegistersPerBlock = 12
    cudaDevAttrClockRate = 13
    cudaDevAttrMultiProcessorCount = 16
    cudaDevAttrIntegrated = 18
    cudaDevAttrCanMapHostMemory = 19
    cudaDevAttrMemoryClockRate = 36
    cudaDevAttrGlobalMemoryBusWidth = 37
    cudaDevAttrL2CacheSize = 38
    cudaDevAttrMaxThreadsPerMultiProcessor = 39
    cudaDevAttrAsyncEngineCount = 40
    cudaDevAttrUnifiedAddressing = 41
    cudaDevAttrComputeCapabilityMajor = 75
    cudaDevAttrComputeCapabilityMinor = 76
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81
    cudaDevAttrConcurrentManagedAccess = 89
    cudaDevAttrMemoryPoolsSupported = 115
    cudaDevAttrGPUDirectRDMASupported = 116
    cudaDevAttrGPUDirectRDMAFlushWritesOptions = 117
    cudaDevAttrGPUDirectRDMAWritesOrdering = 118


# values an H100 reports (probes/edge_cases.txt) and the rest as an H200 reports them
# (probes/device_query.txt; the two are GH100 parts with 132 SMs)
_DEVICE_ATTRIBUTES = {
    cudaDeviceAttr.cudaDevAttrMaxThreadsPerBlock: 1024,
    cudaDeviceAttr.cudaDevAttrMaxBlockDimX: 1024,
    cudaDeviceAttr.cudaDevAttrMaxBlockDimY: 1024,
    cudaDeviceAttr.cudaDevAttrMaxBlockDimZ: 64,
    cudaDeviceAttr.cudaDevAttrMaxGridDimX: 2**31 - 1,
    cudaDeviceAttr.cudaDevAttrMaxGridDimY: 65535,
    cudaDeviceAttr.cudaDevAttrMaxGridDimZ: 65535,
    cudaDeviceAttr.cudaDevAttrMaxSharedMemoryPerBlock: 49152,
    cudaDeviceAttr.cudaDevAttrTotalConstantMemory: 65536,
    cudaDeviceAttr.cudaDevAttrWarpSize: 32,
    cudaDeviceAttr.cudaDevAttrMaxRegistersPerBlock: 65536,
    cudaDeviceAttr.cudaDevAttrClockRate: 1980000,
    cudaDeviceAttr.cudaDevAttrMultiProcessorCount: 132,
    cudaDeviceAttr.cudaDevAttrIntegrated: 0,
    cudaDeviceAttr.cudaDevAttrCanMapHostMemory: 1,
    cudaDeviceAttr.cudaDevAttrMemoryClockRate: 3201000,
    cudaDeviceAttr.cudaDevAttrGlobalMemoryBusWidth: 6016,
    cudaDeviceAttr.cudaDevAttrL2CacheSize: 62914560,
    cudaDeviceAttr.cudaDevAttrMaxThreadsPerMultiProcessor: 2048,
    cudaDeviceAttr.cudaDevAttrAsyncEngineCount: 3,
    cudaDeviceAttr.cudaDevAttrUnifiedAddressing: 1,
    cudaDeviceAttr.cudaDevAttrComputeCapabilityMajor: 9,
    cudaDeviceAttr.cudaDevAttrComputeCapabilityMinor: 0,
    cudaDeviceAttr.cudaDevAttrMaxSharedMemoryPerMultiprocessor: 233472,
    cudaDeviceAttr.cudaDevAttrConcurrentManagedAccess: 1,
    cudaDeviceAttr.cudaDevAttrMemoryPoolsSupported: 1,
    cudaDeviceAttr.cudaDevAttrGPUDirectRDMASupported: 1,
    cudaDeviceAttr.cudaDevAttrGPUDirectRDMAFlushWritesOptions: 1,  # host
    cudaDeviceAttr.cudaDevAttrGPUDirectRDMAWritesOrdering: 100,  # owner
}

cudaHostAllocDefault = 0

MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)


@contextlib.contextmanager
def _as_driver_error():
    """Runtime errors as the driver API's CUresult of the same number."""
    try:
        yield
    except CudaError as e:
        if isinstance(e.code, cudaError) and int(e.code) in CUresult._value2member_map_:
            raise CudaError(CUresult(int(e.code)), str(e)) from None
        raise


def _as_dim3(d: int | tuple[int, ...]) -> tuple[int, int, int]:
    t = (d,) if isinstance(d, int) else tuple(d)
    if not 1 <= len(t) <= 3:
        raise CudaError(cudaError.cudaErrorInvalidValue, f"bad dim3 {d!r}")
    return (*t, *(1,) * (3 - len(t)))  # type: ignore[return-value]


class CudaRuntime:
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

    def raise_sticky(self) -> None:
        """Raise the context's sticky error, if asynchronous work failed."""
        self._check_sticky()

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

    # ---------------------------------------------------------------- memory
    def cudaMalloc(self, size: int) -> int:
        """Allocate device memory; returns the device pointer. Size 0 succeeds with NULL
        (0), as CUDA 13 does; a negative size is a huge ``size_t``: out of memory."""
        self._check_sticky()
        if size == 0:
            return 0
        if size < 0:
            raise CudaError(cudaError.cudaErrorMemoryAllocation, f"cudaMalloc({size})")
        a = self.gpu.alloc_device(size)
        if a is None:
            raise CudaError(cudaError.cudaErrorMemoryAllocation, f"cudaMalloc({size})")
        return a.base

    def cudaFree(self, ptr: int) -> None:
        """Free device memory (synchronises first). Pins on it are revoked: their free
        callbacks run, then their BAR1 mappings go. ``cudaFree(0)`` does nothing."""
        self._check_sticky()
        if ptr == 0:
            return
        a = self.gpu.find_allocation(ptr)
        if (
            a is None
            or a.base != ptr
            or a.memory_type is not MemoryType.CU_MEMORYTYPE_DEVICE
            or a.vmm is not None  # cuMemMap'd: cuMemUnmap frees it
        ):
            raise CudaError(cudaError.cudaErrorInvalidValue, f"cudaFree({ptr:#x})")
        self._drain()
        self.gpu.free_allocation(a)

    def cudaHostAlloc(self, size: int, flags: int = cudaHostAllocDefault) -> int:
        """Page-locked host memory; returns its (host) pointer, which is also its device
        pointer (measured: host_alloc.txt). Read and write it with :meth:`host_buffer`.
        Not valid for nvidia_p2p_get_pages.

        With a :attr:`process`, the memory is host RAM mapped into that process (in a
        simulation, the root complex's memory), at the pointer: kernels, stream memory
        operations and asynchronous copies reach it over the bus as PCIe requests, and
        another driver can pin its pages and DMA to it. Without one it is a buffer only
        the host side sees."""
        self._check_sticky()
        if size < 0 or flags & ~0x7:  # Portable, Mapped, WriteCombined
            raise CudaError(cudaError.cudaErrorInvalidValue, f"cudaHostAlloc({size}, {flags})")
        if size == 0:
            return 0  # as cudaMalloc: success, NULL
        if self.process is None:
            a = self.gpu.alloc_host(size)
            if a is None:
                raise CudaError(cudaError.cudaErrorMemoryAllocation, f"cudaHostAlloc({size})")
            return a.base
        try:
            va, locked = self.process.alloc_locked(size, "cudaHostAlloc")
        except OSError:
            raise CudaError(
                cudaError.cudaErrorMemoryAllocation, f"cudaHostAlloc({size}): host RAM"
            ) from None
        a = self.gpu.alloc_host(size, locked.view()[:size], base=va)
        assert a is not None  # (at the process's own address: no range of ours to run out)
        pages = [locked.bus + i * HOST_PAGE for i in range(-(-size // HOST_PAGE))]
        reg = Registration(va, size, pages, flags & 0x3, name="cudaHostAlloc", owned=True)
        self.registered.add(reg)
        self._locked[va] = reg
        return va

    def cudaFreeHost(self, ptr: int) -> None:
        """Free cudaHostAlloc memory; NULL does nothing. Anything else (an interior or
        device pointer, twice) is cudaErrorInvalidValue."""
        self._check_sticky()
        if ptr == 0:
            return
        a = self.gpu.find_allocation(ptr)
        if a is None or a.base != ptr or a.memory_type is not MemoryType.CU_MEMORYTYPE_HOST:
            raise CudaError(cudaError.cudaErrorInvalidValue, f"cudaFreeHost({ptr:#x})")
        self._drain()
        self.gpu.free_allocation(a)
        reg = self._locked.pop(ptr, None)
        if reg is not None:
            self.registered.remove(reg)
            a.host_buffer = None  # (the view goes before the RAM does)
            assert self.process is not None
            self.process.free_locked(ptr)

    def host_buffer(self, ptr: int) -> memoryview:
        """The bytes of a cudaHostAlloc buffer (what the C program reaches through ptr)."""
        a = self.gpu.find_allocation(ptr)
        if a is None or a.host_buffer is None:
            raise CudaError(
                cudaError.cudaErrorInvalidValue, f"{ptr:#x} is not cudaHostAlloc memory"
            )
        return memoryview(a.host_buffer)[ptr - a.base :]

    def cudaMemcpy(self, dst, src, count: int, kind: cudaMemcpyKind) -> None:
        """Copy ``count`` bytes. Host sides are buffers (bytearray, numpy array) or
        cudaHostAlloc pointers; device sides are cudaMalloc pointers."""
        self._check_sticky()
        if count < 0:
            raise CudaError(cudaError.cudaErrorInvalidValue, "negative count")
        try:
            kind = cudaMemcpyKind(kind)
        except ValueError:
            raise CudaError(cudaError.cudaErrorInvalidMemcpyDirection, str(kind)) from None
        # with unified addressing the pointers decide: a side whose pointer is known to be
        # device (or host) memory is that, whatever the kind says (CUDA 13 copies a
        # "host-to-device" copy from a device pointer with cudaSuccess); a side the
        # pointer says nothing about (freed memory) keeps the kind's
        declared = {
            cudaMemcpyKind.cudaMemcpyHostToHost: (False, False),
            cudaMemcpyKind.cudaMemcpyHostToDevice: (False, True),
            cudaMemcpyKind.cudaMemcpyDeviceToHost: (True, False),
            cudaMemcpyKind.cudaMemcpyDeviceToDevice: (True, True),
            cudaMemcpyKind.cudaMemcpyDefault: (None, None),
        }[kind]
        s_dev = self._is_device_side(src)
        d_dev = self._is_device_side(dst)
        s_dev = declared[0] if s_dev is None else s_dev
        d_dev = declared[1] if d_dev is None else d_dev
        kind = cudaMemcpyKind(
            {(False, False): 0, (False, True): 1, (True, False): 2, (True, True): 3}[
                (bool(s_dev), bool(d_dev))
            ]
        )
        if count == 0:
            return
        gpu = self.gpu
        if kind is cudaMemcpyKind.cudaMemcpyHostToDevice:
            a = self._device_range(dst, count, "cudaMemcpy dst")
            data = np.frombuffer(
                self._host_view(src, count, "cudaMemcpy src", False), dtype=np.uint8
            ).copy()  # staged: the caller may reuse src
            self._submit("cudaMemcpy H2D", lambda: gpu.write_va(dst, data), a.sync_memops)
        elif kind is cudaMemcpyKind.cudaMemcpyDeviceToHost:
            self._device_range(src, count, "cudaMemcpy src")
            out = self._host_view(dst, count, "cudaMemcpy dst", True)
            self._drain()  # synchronous for the host
            out[:] = gpu.read_va(src, count).tobytes()
        elif kind is cudaMemcpyKind.cudaMemcpyDeviceToDevice:
            a = self._device_range(dst, count, "cudaMemcpy dst")
            self._device_range(src, count, "cudaMemcpy src")
            self._submit(
                "cudaMemcpy D2D", lambda: gpu.write_va(dst, gpu.read_va(src, count)), a.sync_memops
            )
        else:
            out = self._host_view(dst, count, "cudaMemcpy dst", True)
            out[:] = self._host_view(src, count, "cudaMemcpy src", False)

    def cudaMemset(self, ptr: int, value: int, count: int) -> None:
        """Fill device memory with a byte value (asynchronous unless SYNC_MEMOPS). A
        count of 0 does nothing; freed memory is cudaErrorInvalidValue."""
        self._check_sticky()
        if count == 0:
            return
        a = self._device_range(ptr, count, "cudaMemset")
        self._submit(
            "cudaMemset", lambda: self.gpu.fill_va(ptr, count, value & 0xFF), a.sync_memops
        )

    def cudaGetLastError(self) -> cudaError:
        """The last error of a launch (then reset to cudaSuccess), or the sticky error
        of a fault, which stays."""
        if self._sticky is not None:
            return cudaError(self._sticky.code)
        err, self._last_error = self._last_error, cudaError.cudaSuccess
        return err

    def cudaPeekAtLastError(self) -> cudaError:
        """As :meth:`cudaGetLastError`, without resetting it."""
        if self._sticky is not None:
            return cudaError(self._sticky.code)
        return self._last_error

    def cudaRuntimeGetVersion(self) -> int:
        return CUDA_VERSION

    def cudaDriverGetVersion(self) -> int:
        return CUDA_VERSION

    def cudaPointerGetAttributes(self, ptr: int) -> cudaPointerAttributes:
        """What CUDA knows of ``ptr``. Memory it does not know (NULL, malloc'd, freed)
        is cudaMemoryTypeUnregistered with cudaSuccess, as CUDA 13 answers."""
        self._check_sticky()
        a = self.gpu.find_allocation(ptr) if ptr else None
        if a is None and ptr and self.registered.find(ptr) is not None:
            # registered memory: host memory whose device pointer is its host pointer
            return cudaPointerAttributes(cudaMemoryType.cudaMemoryTypeHost, 0, ptr, ptr)
        if a is None:  # (measured: device -2, the host pointer given back; host_alloc.txt)
            return cudaPointerAttributes(cudaMemoryType.cudaMemoryTypeUnregistered, -2, 0, ptr)
        if a.memory_type is MemoryType.CU_MEMORYTYPE_HOST:
            return cudaPointerAttributes(cudaMemoryType.cudaMemoryTypeHost, 0, ptr, ptr)
        return cudaPointerAttributes(cudaMemoryType.cudaMemoryTypeDevice, 0, ptr, 0)

    # ---------------------------------------------------------------- registration
    def cudaHostRegister(self, ptr: int, size: int, flags: int = 0) -> None:
        """Page-lock ``[ptr, ptr + size)`` of the process (or register a device's BAR
        mapped there, with ``cudaHostRegisterIoMemory``) for the GPU: its kernels and
        copies reach it over the bus, at the same pointer. Rules: cuda_model.hostreg."""
        self._check_sticky()
        owned = any(
            self.gpu.find_allocation(p) is not None for p in (ptr, ptr + max(size, 1) - 1) if p
        )
        host_register(
            self.registered,
            self.process,
            ptr,
            size,
            flags,
            owned,
            self.gpu.bar_ranges(),
            self.gpu.peer_mapping_override,
        )

    def cudaHostUnregister(self, ptr: int) -> None:
        """Undo :meth:`cudaHostRegister`: its pages are unpinned, once every queued
        operation has run (the H200 waits for all of the context's work, a stream wait
        on those pages and a kernel elsewhere alike: probes/queued_work.txt), so nothing
        queued reaches the pages after they go. The synchronous form runs the queued work
        now; where it must run in simulated time, await :meth:`host_unregister`.
        cudaHostAlloc memory is cudaErrorInvalidValue (measured: host_alloc.txt)."""
        self._check_unregister(ptr)
        if self.engine.time is not None and self.engine.pending:
            raise DeviceTimeError(
                f"cudaHostUnregister({ptr:#x}): {self.engine.pending} operations still queued"
                " run in simulated time; await host_unregister"
            )
        self._drain()
        host_unregister(self.registered, self.process, ptr)

    async def host_unregister(self, ptr: int) -> None:
        """``cudaHostUnregister`` awaited: until every queued operation has run (bounded
        by :attr:`sync_limit_ns`), then the pages go."""
        self._check_unregister(ptr)
        ops = self.engine.tails()
        await self.engine.wait_ops(ops, "cudaHostUnregister", self.sync_limit_ns)
        host_unregister(self.registered, self.process, ptr)

    def _check_unregister(self, ptr: int) -> None:
        self._check_sticky()
        a = self.gpu.find_allocation(ptr) if ptr else None
        if a is not None and a.memory_type is MemoryType.CU_MEMORYTYPE_HOST:
            raise CudaError(
                cudaError.cudaErrorInvalidValue, f"cudaHostUnregister({ptr:#x}): cudaHostAlloc"
            )

    def cudaHostGetDevicePointer(self, ptr: int, flags: int = 0) -> int:
        """The device pointer of registered or cudaHostAlloc memory: the host pointer
        (unified addressing, measured). Flags must be 0."""
        self._check_sticky()
        a = self.gpu.find_allocation(ptr) if ptr else None
        known = self.registered.find(ptr) is not None if ptr else False
        known = known or (a is not None and a.memory_type is MemoryType.CU_MEMORYTYPE_HOST)
        if flags or not known:
            raise CudaError(
                cudaError.cudaErrorInvalidValue, f"cudaHostGetDevicePointer({ptr:#x}, {flags})"
            )
        return ptr

    def cuMemHostRegister(self, ptr: int, size: int, flags: int = 0) -> None:
        """The driver API's :meth:`cudaHostRegister` (``CU_MEMHOSTREGISTER_*`` are the
        same bits); CUresult codes."""
        with _as_driver_error():
            self.cudaHostRegister(ptr, size, flags)

    def cuMemHostUnregister(self, ptr: int) -> None:
        with _as_driver_error():
            self.cudaHostUnregister(ptr)

    async def cu_mem_host_unregister(self, ptr: int) -> None:
        """``cuMemHostUnregister`` awaited (:meth:`host_unregister`)."""
        with _as_driver_error():
            await self.host_unregister(ptr)

    def cuMemHostGetDevicePointer(self, ptr: int, flags: int = 0) -> int:
        with _as_driver_error():
            return self.cudaHostGetDevicePointer(ptr, flags)

    def cudaDeviceSynchronize(self) -> None:
        """Wait for every queued operation; raises a sticky error from earlier work."""
        self._check_sticky()
        self._drain()

    def cudaMemGetInfo(self) -> tuple[int, int]:
        """(free, total) VRAM bytes. Memory goes back when its backing does: a large
        buffer at cudaFree, a pool chunk with its last buffer (pool_release.txt)."""
        self._check_sticky()
        return self.gpu.vram_free_bytes, self.gpu.vram.size

    def cudaDeviceGetAttribute(self, attr: cudaDeviceAttr, device: int = 0) -> int:
        if device != 0:
            raise CudaError(cudaError.cudaErrorInvalidDevice, f"device {device}")
        try:
            return _DEVICE_ATTRIBUTES[cudaDeviceAttr(attr)]
        except (ValueError, KeyError):
            raise CudaError(cudaError.cudaErrorInvalidValue, f"attribute {attr}") from None

    # ---------------------------------------------------------------- driver API pieces
    def cuPointerSetAttribute(self, value: int, attribute: CUpointer_attribute, ptr: int) -> None:
        """Only CU_POINTER_ATTRIBUTE_SYNC_MEMOPS can be set (as in CUDA)."""
        a = self.gpu.find_allocation(ptr)
        if a is None:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{ptr:#x} is not CUDA memory")
        if attribute != CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
            raise CudaError(
                CUresult.CUDA_ERROR_INVALID_VALUE, f"attribute {attribute} is read-only"
            )
        a.sync_memops = bool(value)

    def cuPointerGetAttribute(self, attribute: CUpointer_attribute, ptr: int):
        """The attribute of the allocation holding ``ptr``, as the H100 answers
        (edge_cases.txt): an int, or for P2P_TOKENS a ``(p2pToken, vaSpaceToken)`` pair.
        Memory CUDA does not know, HOST_POINTER of device memory and P2P_TOKENS of host
        memory are CUDA_ERROR_INVALID_VALUE. Getting P2P_TOKENS sets SYNC_MEMOPS on the
        buffer, as it did before CUDA 6.0 and still does (pool_release.txt)."""
        a = self.gpu.find_allocation(ptr)
        if a is None:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{ptr:#x} is not CUDA memory")
        attr = CUpointer_attribute(attribute)
        host = a.memory_type is MemoryType.CU_MEMORYTYPE_HOST
        values = {
            CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT: CONTEXT_HANDLE,
            CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE: int(a.memory_type),
            CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER: ptr,
            CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: int(a.sync_memops),
            CUpointer_attribute.CU_POINTER_ATTRIBUTE_BUFFER_ID: a.buffer_id,
            CUpointer_attribute.CU_POINTER_ATTRIBUTE_IS_MANAGED: 0,
            CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: 0,
        }
        if host:
            values[CUpointer_attribute.CU_POINTER_ATTRIBUTE_HOST_POINTER] = ptr
        elif attr is CUpointer_attribute.CU_POINTER_ATTRIBUTE_P2P_TOKENS:
            a.sync_memops = True
            return 0, VA_SPACE_TOKEN
        if attr not in values:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"{attr.name} of {ptr:#x}")
        return values[attr]

    def cuMemGetAddressRange(self, ptr: int) -> tuple[int, int]:
        """(base, size) of the allocation containing ``ptr`` (an interior pointer too;
        cudaHostAlloc memory too, which unified addressing maps); memory that is not
        allocated (freed, never) is CUDA_ERROR_NOT_FOUND."""
        a = self.gpu.find_allocation(ptr)
        if a is None:
            raise CudaError(CUresult.CUDA_ERROR_NOT_FOUND, f"{ptr:#x}")
        return a.base, a.size

    # ---------------------------------------------------------------- VMM
    def cuDeviceGetAttribute(self, attrib: CUdevice_attribute, dev: int = 0) -> int:
        """The driver API's device attributes the model knows, as an H100 answers them."""
        if dev != 0:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"device {dev}")
        if attrib in _CU_DEVICE_ATTRIBUTES:
            return _CU_DEVICE_ATTRIBUTES[attrib]
        try:  # the attributes both APIs have, by the same numbers
            return _DEVICE_ATTRIBUTES[cudaDeviceAttr(attrib)]
        except (ValueError, KeyError):
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"attribute {attrib}") from None

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

    # ---------------------------------------------------------------- dma-buf
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

    # ---------------------------------------------------------------- kernels
    def launch(self, kernel: Callable[..., object], grid, block, *args) -> Op:
        """``kernel<<<grid, block>>>(args...)`` on the legacy default stream; see
        :meth:`cudaLaunchKernel`."""
        return self.cudaLaunchKernel(kernel, grid, block, args, 0)

    def cudaLaunchKernel(self, kernel: Callable[..., object], grid, block, args=(), stream=0):
        """``kernel<<<grid, block, 0, stream>>>(args...)``: a kernel of the device API,
        ``async def kernel(k: KernelContext, *args)`` (cuda_model.device), or a
        host-only one, ``kernel(rt, grid, block, *args)``. The configuration is checked
        now; the kernel runs on the stream. A bad configuration is cudaErrorInvalidValue
        under CUDA 13 (older toolkits said cudaErrorInvalidConfiguration), raised and
        left for cudaGetLastError; it is not sticky."""
        self._check_sticky()
        try:
            g, b = _as_dim3(grid), _as_dim3(block)
        except CudaError as e:
            self._last_error = cudaError(e.code)
            raise
        if (
            min(g) < 1
            or min(b) < 1
            or b[0] * b[1] * b[2] > MAX_THREADS_PER_BLOCK
            or any(x > m for x, m in zip(b, MAX_BLOCK_DIM, strict=True))
            or any(x > m for x, m in zip(g, MAX_GRID_DIM, strict=True))
        ):
            self._last_error = cudaError.cudaErrorInvalidValue
            raise CudaError(cudaError.cudaErrorInvalidValue, f"grid {g} block {b}")
        return self._launch(kernel, g, b, tuple(args), stream)

    def _launch(self, kernel, g, b, args: tuple, stream: int) -> Op:
        name = getattr(kernel, "__name__", "kernel")
        if inspect.iscoroutinefunction(kernel):

            async def body() -> None:
                ctx = KernelContext(self, name, g, b)
                await kernel(ctx, *args)
                await ctx.finish()

        else:

            async def body() -> None:
                kernel(self, g, b, *args)

        return self.engine.submit(stream, f"kernel {name}", "kernel", body)

    # ---------------------------------------------------------------- streams, events
    def cudaStreamCreate(self) -> int:
        """A new blocking stream (it synchronises with the legacy default stream)."""
        return self.cudaStreamCreateWithFlags(cudaStreamDefault)

    def cudaStreamCreateWithFlags(self, flags: int) -> int:
        """A new stream; ``cudaStreamNonBlocking`` (1) keeps it apart from stream 0."""
        self._check_sticky()
        return self.engine.create_stream(flags)

    def cudaStreamDestroy(self, stream: int) -> None:
        """Destroy a stream; work already on it still runs."""
        self.engine.destroy_stream(stream)

    def cudaStreamQuery(self, stream: int = 0) -> cudaError:
        """cudaSuccess when everything on the stream has run, else cudaErrorNotReady."""
        self._check_sticky()
        s = self.engine.stream(stream)
        return cudaError.cudaErrorNotReady if s.ops else cudaError.cudaSuccess

    def cudaStreamSynchronize(self, stream: int = 0) -> None:
        """The synchronous form: runs the queued work now, in zero time (see
        :meth:`_drain`); in a simulation await :meth:`stream_synchronize`."""
        self._check_sticky()
        self.engine.stream(stream)
        self._drain()

    async def stream_synchronize(self, stream: int = 0) -> None:
        """Until everything now on ``stream`` has run, in simulated time (bounded by
        :attr:`sync_limit_ns`); raises the sticky error of failed work."""
        self._check_sticky()
        s = self.engine.stream(stream)
        ops = [s.last] if s.last is not None else []
        await self.engine.wait_ops(ops, "cudaStreamSynchronize", self.sync_limit_ns)
        self._check_sticky()

    async def synchronize(self) -> None:
        """``cudaDeviceSynchronize`` awaited: until every stream's work has run."""
        self._check_sticky()
        ops = self.engine.tails()
        await self.engine.wait_ops(ops, "cudaDeviceSynchronize", self.sync_limit_ns)
        self._check_sticky()

    def cudaEventCreate(self, flags: int = 0) -> int:
        """A new event; flag 2 (cudaEventDisableTiming) keeps no time."""
        if flags & ~0x7:
            raise CudaError(cudaError.cudaErrorInvalidValue, f"event flags {flags:#x}")
        return self.engine.create_event(timing=not flags & 0x2)

    def cudaEventDestroy(self, event: int) -> None:
        self.engine.destroy_event(event)

    def cudaEventRecord(self, event: int, stream: int = 0) -> None:
        """Capture the stream's work so far; the event completes after it, taking the
        simulated time it ran at."""
        self._check_sticky()
        ev = self.engine.event(event)

        async def body() -> None:
            ev.time_ns = self.engine.now()

        ev.time_ns = None
        ev.op = self.engine.submit(stream, "cudaEventRecord", "event", body)

    def cudaEventQuery(self, event: int) -> cudaError:
        """cudaSuccess once the captured work ran (or nothing was captured)."""
        ev = self.engine.event(event)
        if ev.op is None or ev.op.done:
            return cudaError.cudaSuccess
        return cudaError.cudaErrorNotReady

    def cudaEventSynchronize(self, event: int) -> None:
        """The synchronous form (zero time, as :meth:`cudaStreamSynchronize`)."""
        self._check_sticky()
        self.engine.event(event)
        self._drain()

    async def event_synchronize(self, event: int) -> None:
        """Until the event's captured work has run, in simulated time."""
        ev = self.engine.event(event)
        if ev.op is not None:
            await self.engine.wait_ops([ev.op], "cudaEventSynchronize", self.sync_limit_ns)
        self._check_sticky()

    def cudaEventElapsedTime(self, start: int, end: int) -> float:
        """Milliseconds between two completed events (simulated time)."""
        a, b = self.engine.event(start), self.engine.event(end)
        if not (a.timing and b.timing) or a.op is None or b.op is None:
            raise CudaError(cudaError.cudaErrorInvalidResourceHandle, "event without time")
        if a.time_ns is None or b.time_ns is None:
            raise CudaError(cudaError.cudaErrorNotReady, "event not yet complete")
        return (b.time_ns - a.time_ns) / 1e6

    def cudaStreamWaitEvent(self, stream: int, event: int, flags: int = 0) -> None:
        """Later work on ``stream`` waits for the event's captured work."""
        self._check_sticky()
        if flags:
            raise CudaError(cudaError.cudaErrorInvalidValue, f"flags {flags:#x}")
        ev = self.engine.event(event)

        async def body() -> None:
            return None

        self.engine.submit(stream, "cudaStreamWaitEvent", "wait", body, [ev.op] if ev.op else [])

    # ---------------------------------------------------------------- stream memory operations
    def cuStreamWriteValue32(self, stream: int, addr: int, value: int, flags: int = 0) -> Op:
        """Write a 32-bit value after the stream's earlier work (cuda_model.memops)."""
        self._check_sticky()
        return memops.write_value(self, stream, addr, value, 4, flags)

    def cuStreamWriteValue64(self, stream: int, addr: int, value: int, flags: int = 0) -> Op:
        """Write a 64-bit value after the stream's earlier work (cuda_model.memops)."""
        self._check_sticky()
        return memops.write_value(self, stream, addr, value, 8, flags)

    def cuStreamWaitValue32(self, stream: int, addr: int, value: int, flags: int = 0) -> Op:
        """Hold the stream until a 32-bit location meets the condition (memops)."""
        self._check_sticky()
        return memops.wait_value(self, stream, addr, value, 4, flags)

    def cuStreamWaitValue64(self, stream: int, addr: int, value: int, flags: int = 0) -> Op:
        """Hold the stream until a 64-bit location meets the condition (memops)."""
        self._check_sticky()
        return memops.wait_value(self, stream, addr, value, 8, flags)

    # ---------------------------------------------------------------- asynchronous copies
    def cudaMemsetAsync(self, ptr: int, value: int, count: int, stream: int = 0) -> Op | None:
        """cudaMemset on a stream: of device memory, or of registered or cudaHostAlloc
        memory (measured: host_alloc.txt), which the GPU writes over the bus. The
        operation (None for a count of 0)."""
        self._check_sticky()
        if count == 0:
            return None
        if self.registered.find(ptr) is not None:
            pieces = self._copy_side(ptr, count, True, True, "cudaMemsetAsync")
            fill = bytes([value & 0xFF]) * count

            async def on_bus() -> None:
                await self._copy_write(pieces, fill, "cudaMemsetAsync")

            return self.engine.submit(stream, "cudaMemsetAsync", "memset", on_bus)
        self._device_range(ptr, count, "cudaMemsetAsync")
        rate = self.engine.timing.local_bytes_per_ns

        async def body() -> None:
            await self._local_time(count, rate)
            self.gpu.fill_va(ptr, count, value & 0xFF)

        return self.engine.submit(stream, "cudaMemsetAsync", "memset", body)

    def cudaMemcpyAsync(self, dst, src, count: int, kind: cudaMemcpyKind, stream: int = 0):
        """A copy on a stream: between device memory, host buffers, and memory registered
        with CUDA. A side in registered memory is reached by the copy engine over the bus
        (writes of up to the GPU's MPS, reads of up to its MRRS, several outstanding);
        other host sides are staged now, as cudaMemcpy's."""
        self._check_sticky()
        if count < 0:
            raise CudaError(cudaError.cudaErrorInvalidValue, "negative count")
        s_reg = isinstance(src, int) and self.registered.find(src) is not None
        d_reg = isinstance(dst, int) and self.registered.find(dst) is not None
        if not (s_reg or d_reg):
            raise CudaError(
                cudaError.cudaErrorInvalidValue,
                "cudaMemcpyAsync of the model copies to or from registered memory; "
                "use cudaMemcpy for the rest",
            )
        if count == 0:
            return None
        src_pieces = self._copy_side(src, count, s_reg, write=False)
        dst_pieces = self._copy_side(dst, count, d_reg, write=True)
        who = f"cudaMemcpyAsync {'D2R' if d_reg and not s_reg else 'R2D' if s_reg else 'R2R'}"

        async def body() -> None:
            data = await self._copy_read(src_pieces, who)
            await self._copy_write(dst_pieces, data, who)

        return self.engine.submit(stream, who, "memcpy", body)

    # ---------------------------------------------------------------- a remote host's copies
    # The guest's runtime library (tb/guest/gpu.py) moves a process's bytes through the
    # GPU device's commands: host sides are bytes here, taken or handed over when the
    # operation runs on its stream.
    def memcpy_to_device(self, dst: int, data: bytes, stream: int = 0) -> Op:
        """Queue a copy of ``data`` (staged now, as from pageable memory) to device
        memory at ``dst`` on ``stream``; the operation."""
        self._check_sticky()
        self._device_range(dst, len(data), "cudaMemcpy dst")
        staged = np.frombuffer(bytes(data), dtype=np.uint8)
        rate = self.engine.timing.local_bytes_per_ns

        async def body() -> None:
            await self._local_time(len(staged), rate)
            self.gpu.write_va(dst, staged)

        return self.engine.submit(stream, "cudaMemcpy H2D", "memcpy", body)

    def memcpy_from_device(
        self, src: int, count: int, stream: int, sink: Callable[[bytes], None]
    ) -> Op:
        """Queue a copy of ``count`` bytes of device memory at ``src`` on ``stream``;
        ``sink`` gets them when it runs. The operation."""
        self._check_sticky()
        self._device_range(src, count, "cudaMemcpy src")
        rate = self.engine.timing.local_bytes_per_ns

        async def body() -> None:
            await self._local_time(count, rate)
            sink(self.gpu.read_va(src, count).tobytes())

        return self.engine.submit(stream, "cudaMemcpy D2H", "memcpy", body)

    def memcpy_device_to_device(self, dst: int, src: int, count: int, stream: int = 0) -> Op:
        """Queue a copy between device allocations on ``stream``; the operation."""
        self._check_sticky()
        self._device_range(dst, count, "cudaMemcpy dst")
        self._device_range(src, count, "cudaMemcpy src")
        rate = self.engine.timing.local_bytes_per_ns

        async def body() -> None:
            await self._local_time(count, rate)
            self.gpu.write_va(dst, self.gpu.read_va(src, count))

        return self.engine.submit(stream, "cudaMemcpy D2D", "memcpy", body)

    def sync_memops(self, ptr: int) -> bool:
        """Whether the allocation holding ``ptr`` has CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
        copies and memsets to it are synchronous."""
        a = self.gpu.find_allocation(ptr)
        return a is not None and a.sync_memops

    async def _local_time(self, count: int, rate: float) -> None:
        t = self.gpu.device_time
        if t is not None and count / rate >= 1:
            await t.sleep(count / rate)

    def _copy_side(
        self, ptr, count: int, registered: bool, write: bool, what: str = "cudaMemcpyAsync"
    ):
        if registered:
            pieces = self.registered.bus_pieces(ptr, count, write)
            if pieces is None:
                raise CudaError(
                    cudaError.cudaErrorInvalidValue,
                    f"{what}: {count} bytes at {ptr:#x} leave the registered range"
                    + (" or it is read-only" if write else ""),
                )
            return pieces
        self._device_range(ptr, count, what)
        return [(ptr, count)]

    async def _copy_read(self, pieces, who: str) -> bytes:
        out = bytearray()
        for p in pieces:
            if isinstance(p, tuple):
                out += self.gpu.read_va(p[0], p[1]).tobytes()
                continue
            try:
                out += await self._need_bus(who).read(p.addr, p.length, Access(who, p.range))
            except BusError as e:
                raise CudaError(cudaError.cudaErrorIllegalAddress, f"{who}: {e}") from None
        return bytes(out)

    async def _copy_write(self, pieces, data: bytes, who: str) -> None:
        off = 0
        last = None
        for p in pieces:
            if isinstance(p, tuple):
                self.gpu.write_va(p[0], np.frombuffer(data[off : off + p[1]], dtype=np.uint8))
                off += p[1]
                continue
            access = Access(who, p.range, self.relaxed_ordering)
            await self._need_bus(who).write(p.addr, data[off : off + p.length], access)
            off += p.length
            last = None if p.io else (p.addr + p.length - 1, access)
        if last is not None:  # the copy is done once its writes to host memory landed
            try:
                await self._need_bus(who).flush(*last)
            except BusError as e:
                raise CudaError(cudaError.cudaErrorIllegalAddress, f"{who}: {e}") from None

    def _need_bus(self, who: str):
        bus = self.gpu.bus
        if bus is None:
            raise DeviceTimeError(f"{who}: registered memory needs the GPU on a bus")
        return bus

    def kernel_write(self, ptr: int, data: np.ndarray) -> None:
        """Store from a kernel: an address outside any allocation is an illegal address."""
        a = self.gpu.find_allocation(ptr)
        n = data.nbytes
        if a is None or a.memory_type is not MemoryType.CU_MEMORYTYPE_DEVICE or ptr + n > a.end:
            raise CudaError(
                cudaError.cudaErrorIllegalAddress, f"kernel store of {n} bytes at {ptr:#x}"
            )
        self.gpu.write_va(ptr, data)
