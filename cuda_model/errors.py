"""Error codes of the CUDA runtime and driver APIs, and the kernel errno values nv-p2p uses."""

from __future__ import annotations

import enum
import errno


class cudaError(enum.IntEnum):
    """``cudaError_t`` values (driver_types.h) the model returns."""

    cudaSuccess = 0
    cudaErrorInvalidValue = 1
    cudaErrorMemoryAllocation = 2
    cudaErrorInvalidConfiguration = 9
    cudaErrorInvalidDevicePointer = 17
    cudaErrorInvalidMemcpyDirection = 21
    cudaErrorInvalidDeviceFunction = 98
    cudaErrorInvalidDevice = 101
    cudaErrorInvalidResourceHandle = 400
    cudaErrorNotReady = 600
    cudaErrorIllegalAddress = 700
    cudaErrorHostMemoryAlreadyRegistered = 712
    cudaErrorHostMemoryNotRegistered = 713
    cudaErrorNotPermitted = 800


class CUresult(enum.IntEnum):
    """``CUresult`` values (cuda.h) of the driver-API calls the model offers."""

    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_INVALID_HANDLE = 400
    CUDA_ERROR_NOT_FOUND = 500
    CUDA_ERROR_ILLEGAL_ADDRESS = 700
    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712
    CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713
    CUDA_ERROR_NOT_PERMITTED = 800
    CUDA_ERROR_NOT_SUPPORTED = 801


class CudaError(Exception):
    """A CUDA call failed; ``code`` is the ``cudaError_t`` or ``CUresult`` it returned."""

    def __init__(self, code: cudaError | CUresult, detail: str = "") -> None:
        self.code = code
        super().__init__(f"{code.name} ({int(code)}){': ' + detail if detail else ''}")


# Linux errno values returned (negated) by the nv-p2p kernel API
EINVAL = errno.EINVAL
ENOMEM = errno.ENOMEM
# the kernel's ENOTSUPP (include/linux/errno.h; not the user-space ENOTSUP)
ENOTSUPP = 524
EIO = errno.EIO
EFAULT = errno.EFAULT
ENOTSUPP = 524  # kernel-internal, include/linux/errno.h
