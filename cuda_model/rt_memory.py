"""CUDA's memory management (the runtime API reference's "Memory Management", and the
driver API's cuMemGetAddressRange) on the GPU model: device allocations, the synchronous
and stream copies and memsets, the copy engine's reach into registered memory over the
bus, and the stream copies a remote host's commands make (the guest's GPU device)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .api_types import (
    cudaMemcpyKind,
)
from .bus import Access, BusError
from .devtime import DeviceTimeError
from .errors import CudaError, CUresult, cudaError
from .gpu import MemoryType
from .streams import Op


class MemoryApi:
    """Memory calls of :class:`cuda_model.runtime.CudaRuntime` (its state and helpers are the
    runtime's)."""

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

    def cudaMemGetInfo(self) -> tuple[int, int]:
        """(free, total) VRAM bytes. Memory goes back when its backing does: a large
        buffer at cudaFree, a pool chunk with its last buffer (pool_release.txt)."""
        self._check_sticky()
        return self.gpu.vram_free_bytes, self.gpu.vram.size

    def cuMemGetAddressRange(self, ptr: int) -> tuple[int, int]:
        """(base, size) of the allocation containing ``ptr`` (an interior pointer too;
        cudaHostAlloc memory too, which unified addressing maps); memory that is not
        allocated (freed, never) is CUDA_ERROR_NOT_FOUND."""
        a = self.gpu.find_allocation(ptr)
        if a is None:
            raise CudaError(CUresult.CUDA_ERROR_NOT_FOUND, f"{ptr:#x}")
        return a.base, a.size

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
