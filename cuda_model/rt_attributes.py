"""CUDA's device and pointer attributes and versions (the runtime API reference's
"Device Management" and "Unified Addressing", the driver API's cuPointerGet/SetAttribute
and cuDeviceGetAttribute) on the GPU model, with the values measured on Hopper."""

from __future__ import annotations

from .api_types import (
    _CU_DEVICE_ATTRIBUTES,
    _DEVICE_ATTRIBUTES,
    CONTEXT_HANDLE,
    CUDA_VERSION,
    VA_SPACE_TOKEN,
    CUdevice_attribute,
    CUpointer_attribute,
    cudaDeviceAttr,
    cudaMemoryType,
    cudaPointerAttributes,
)
from .errors import CudaError, CUresult, cudaError
from .gpu import MemoryType


class AttributeApi:
    """Attribute calls of :class:`cuda_model.runtime.CudaRuntime` (its state and helpers are the
    runtime's)."""

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

    def cudaDeviceGetAttribute(self, attr: cudaDeviceAttr, device: int = 0) -> int:
        if device != 0:
            raise CudaError(cudaError.cudaErrorInvalidDevice, f"device {device}")
        try:
            return _DEVICE_ATTRIBUTES[cudaDeviceAttr(attr)]
        except (ValueError, KeyError):
            raise CudaError(cudaError.cudaErrorInvalidValue, f"attribute {attr}") from None

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
