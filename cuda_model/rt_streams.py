"""CUDA's streams, events and execution control (the runtime API reference's "Stream
Management", "Event Management" and "Execution Control", and the driver API's stream
memory operations) on the GPU model: kernels launched on streams, synchronisation in
zero time or awaited in simulated time, events' times, cuStreamWrite/WaitValue."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from . import memops
from .api_types import (
    MAX_BLOCK_DIM,
    MAX_GRID_DIM,
    MAX_THREADS_PER_BLOCK,
    _as_dim3,
)
from .device import KernelContext
from .errors import CudaError, cudaError
from .streams import Op, cudaStreamDefault


class StreamApi:
    """Stream calls of :class:`cuda_model.runtime.CudaRuntime` (its state and helpers are the
    runtime's)."""

    def cudaDeviceSynchronize(self) -> None:
        """Wait for every queued operation; raises a sticky error from earlier work."""
        self._check_sticky()
        self._drain()

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
