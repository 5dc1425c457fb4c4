"""The CUDA API's types and constants the runtime model uses (CUDA 13.0's values, as in
its headers' documentation and as measured: ``cuda_model/probes/``): memory types and
copy kinds, pointer and device attributes (``cudaDeviceAttr`` with the values measured on
an H200, ``CUdevice_attribute``), the virtual memory management's properties and flags,
the launch limits, and the version the model follows."""

from __future__ import annotations

import contextlib
import dataclasses
import enum

from .errors import CudaError, CUresult, cudaError

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
