"""CUDA's error handling (the runtime API reference's "Error Handling") on the GPU model:
the last error of a launch, and the sticky error of a fault in asynchronous work."""

from __future__ import annotations

from .errors import cudaError


class ErrorApi:
    """Error calls of :class:`cuda_model.runtime.CudaRuntime` (its state and helpers are the
    runtime's)."""

    def raise_sticky(self) -> None:
        """Raise the context's sticky error, if asynchronous work failed."""
        self._check_sticky()

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
