"""The GPU side: VRAM, GPU MMU, CUDA runtime and nv-p2p page tables, in plain Python (no
simulator; the testbench's PCIe endpoint is ``tb.env.gpu_endpoint``). Typical use::

    gpu = Gpu(vram_size=80 << 30, bar1_size=128 << 30)
    rt = CudaRuntime(gpu)
    p2p = NvidiaP2P(gpu)
    buf = rt.cudaMalloc(4 << 20)
    rc, page_table = p2p.nvidia_p2p_get_pages(0, 0, buf, 4 << 20, callback, data)
"""

from .errors import CudaError, CUresult, cudaError
from .gpu import GPU_PAGE_SIZE, Bar1Fault, CallbackPending, Gpu, MemoryType, Pin, PinState
from .kernels import fill_surface, surface_word
from .nv_p2p import (
    NVIDIA_P2P_FLAGS_DEFAULT,
    NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING,
    NvidiaP2P,
    PeerDevice,
    nvidia_p2p_dma_mapping,
    nvidia_p2p_page_table,
)
from .runtime import (
    CUDA_VERSION,
    DRIVER_BRANCH,
    CudaRuntime,
    CUpointer_attribute,
    cudaDeviceAttr,
    cudaMemcpyKind,
    cudaMemoryType,
    cudaPointerAttributes,
)

__all__ = [
    "CUDA_VERSION",
    "DRIVER_BRANCH",
    "GPU_PAGE_SIZE",
    "NVIDIA_P2P_FLAGS_DEFAULT",
    "NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING",
    "Bar1Fault",
    "CUpointer_attribute",
    "CUresult",
    "CallbackPending",
    "CudaError",
    "CudaRuntime",
    "Gpu",
    "MemoryType",
    "NvidiaP2P",
    "PeerDevice",
    "Pin",
    "PinState",
    "cudaDeviceAttr",
    "cudaError",
    "cudaMemcpyKind",
    "cudaMemoryType",
    "cudaPointerAttributes",
    "fill_surface",
    "nvidia_p2p_dma_mapping",
    "nvidia_p2p_page_table",
    "surface_word",
]
