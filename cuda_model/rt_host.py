"""CUDA's host memory (the runtime API reference's cudaHostAlloc/cudaFreeHost, and
cudaHostRegister/Unregister with the driver API's cuMemHost* twins) on the GPU model:
page-locked memory of the process, registered for the GPU's copies and kernels."""

from __future__ import annotations

from .api_types import (
    _as_driver_error,
    cudaHostAllocDefault,
)
from .devtime import DeviceTimeError
from .errors import CudaError, cudaError
from .gpu import MemoryType
from .hostreg import (
    HOST_PAGE,
    Registration,
    host_register,
    host_unregister,
)


class HostApi:
    """Host calls of :class:`cuda_model.runtime.CudaRuntime` (its state and helpers are the
    runtime's)."""

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
