"""Streams and events: the ordered queues of work a GPU runs.

Every operation (a kernel, a copy, a memset, an event record, a wait on an event) goes on
a stream and runs after the one before it on that stream. With a :class:`DeviceTime`
(the GPU endpoint gives one in a simulation, :class:`~cuda_model.devtime.VirtualTime` in
unit tests) each stream has a worker that starts its next operation
:attr:`DeviceTiming.kernel_launch_ns` (or ``op_launch_ns``) after the later of its
submission and the end of the one before, and runs it in simulated time. Without one,
operations run at synchronisation points in zero time, as a host-only program sees them.

The legacy default stream (handle 0) waits for earlier work of every blocking stream and
blocks them in turn, as CUDA's does; streams created with ``cudaStreamNonBlocking`` do
not synchronise with it.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from .devtime import DeviceEvent, DeviceTask, DeviceTime, DeviceTimeError, run_now
from .errors import CudaError, cudaError

log = logging.getLogger(__name__)

cudaStreamDefault = 0
cudaStreamNonBlocking = 1


@dataclasses.dataclass(frozen=True)
class DeviceTiming:
    """How long the GPU takes to start work (cuda_model/probes/stream_timing.txt, an
    H200 with driver 580): ``kernel_launch_ns`` from the later of a kernel's submission
    and the end of the work before it to its start (the median gap between the starts
    of back-to-back kernels in one stream, 4.5 us), ``op_launch_ns`` for any other
    operation (an event record right after another takes 1.3 us); device memory moves at
    ``local_bytes_per_ns`` in copies and memsets (HBM3: a model figure)."""

    kernel_launch_ns: float = 4_500.0
    op_launch_ns: float = 1_300.0
    local_bytes_per_ns: float = 1_000.0


Body = Callable[[], Coroutine[Any, Any, None]]


class Op:
    """One operation on a stream: ``body`` runs it; ``after`` are operations of other
    streams it waits for (the legacy stream's implicit synchronisation, an event)."""

    def __init__(self, what: str, kind: str, body: Body, after: list[Op], launch_ns: float):
        self.what = what
        self.kind = kind
        self.body = body
        self.after = after
        self.launch_ns = launch_ns
        self.submitted_ns = 0.0
        self.started_ns: float | None = None
        self.ended_ns: float | None = None
        self.done = False
        self.event: DeviceEvent | None = None  # set when done (with simulated time)

    def finish(self, now: float) -> None:
        self.done, self.ended_ns = True, now
        if self.event is not None:
            self.event.set()

    def __repr__(self) -> str:
        return f"<Op {self.what} {'done' if self.done else 'pending'}>"


class Stream:
    """A stream's queue; ``handle`` is what ``cudaStream_t`` holds."""

    def __init__(self, handle: int, blocking: bool = True) -> None:
        self.handle = handle
        self.blocking = blocking
        self.ops: collections.deque[Op] = collections.deque()
        self.running: Op | None = None
        self.last: Op | None = None  # the latest submitted
        self.last_end_ns = 0.0
        self.worker: DeviceTask | None = None
        self.destroyed = False


class CudaEvent:
    """A ``cudaEvent_t``: the record operation it last captured and when that ran."""

    def __init__(self, handle: int, timing: bool = True) -> None:
        self.handle = handle
        self.timing = timing
        self.op: Op | None = None
        self.time_ns: float | None = None


class StreamEngine:
    """Every stream and event of one context, and the workers that run them.
    :attr:`failed` is the context's sticky error: the first operation's that failed.
    After it no operation starts; one already running on another stream ends as it
    would, and a synchronisation reports the error once none runs. So on an H200 a
    ``cuStreamWaitValue32`` that waits on another stream polls on until its value comes,
    and the faulting stream's synchronisation returns only then
    (cuda_model/probes/queued_work.txt; the H200 also ran the write queued behind that
    wait, which the model, starting nothing after the error, does not)."""

    def __init__(
        self, time: Callable[[], DeviceTime | None], timing: DeviceTiming | None = None
    ) -> None:
        self._time = time
        self.timing = timing or DeviceTiming()
        self.streams: dict[int, Stream] = {0: Stream(0)}
        self.events: dict[int, CudaEvent] = {}
        self._next = 0x1000
        self.failed: CudaError | None = None

    @property
    def time(self) -> DeviceTime | None:
        return self._time()

    def now(self) -> float:
        t = self.time
        return t.now_ns() if t is not None else 0.0

    # --------------------------------------------------------------- handles
    def create_stream(self, flags: int = cudaStreamDefault) -> int:
        if flags & ~cudaStreamNonBlocking:
            raise CudaError(cudaError.cudaErrorInvalidValue, f"stream flags {flags:#x}")
        self._next += 0x10
        self.streams[self._next] = Stream(self._next, blocking=not flags & cudaStreamNonBlocking)
        return self._next

    def stream(self, handle: int) -> Stream:
        s = self.streams.get(handle)
        if s is None or s.destroyed:
            raise CudaError(cudaError.cudaErrorInvalidResourceHandle, f"stream {handle:#x}")
        return s

    def destroy_stream(self, handle: int) -> None:
        """Work already on it still runs (cudaStreamDestroy returns at once)."""
        if handle == 0:
            raise CudaError(cudaError.cudaErrorInvalidResourceHandle, "the default stream")
        s = self.stream(handle)
        s.destroyed = True
        if not s.ops:
            del self.streams[handle]

    def create_event(self, timing: bool = True) -> int:
        self._next += 0x10
        self.events[self._next] = CudaEvent(self._next, timing)
        return self._next

    def event(self, handle: int) -> CudaEvent:
        ev = self.events.get(handle)
        if ev is None:
            raise CudaError(cudaError.cudaErrorInvalidResourceHandle, f"event {handle:#x}")
        return ev

    def destroy_event(self, handle: int) -> None:
        self.event(handle)
        del self.events[handle]

    # --------------------------------------------------------------- submission
    def submit(self, handle: int, what: str, kind: str, body: Body, after: list[Op] = ()) -> Op:
        """Put an operation on a stream; it runs after everything before it there."""
        s = self.stream(handle)
        deps = list(after)
        if handle == 0:  # the legacy stream waits for every blocking stream's work
            deps += [t.last for t in self.streams.values() if t.blocking and t.handle and t.last]
        elif s.blocking and self.streams[0].last is not None:
            deps.append(self.streams[0].last)  # (and blocks theirs)
        launch = self.timing.kernel_launch_ns if kind == "kernel" else self.timing.op_launch_ns
        op = Op(what, kind, body, [o for o in deps if not o.done], launch)
        t = self.time
        op.submitted_ns = self.now()
        if t is not None:
            op.event = t.event()
        s.ops.append(op)
        s.last = op
        if t is not None and (s.worker is None or s.worker.done()):
            s.worker = t.spawn(self._work(s))
        return op

    def tails(self) -> list[Op]:
        """The latest operation submitted to each stream (all of them: every earlier one
        on its stream has run once these have)."""
        return [s.last for s in self.streams.values() if s.last is not None]

    @property
    def pending(self) -> int:
        return sum(len(s.ops) for s in self.streams.values())

    def _fail(self, s: Stream, op: Op, e: CudaError) -> None:
        self.failed = self.failed or e
        log.error("asynchronous %s failed: %s", op.what, e)

    async def _run(self, s: Stream, op: Op) -> None:
        s.running = op
        op.started_ns = self.now()
        try:
            if self.failed is None:  # after a sticky error nothing more starts
                await op.body()
        except CudaError as e:
            self._fail(s, op, e)
        finally:
            s.running = None
            s.last_end_ns = self.now()
            if s.ops and s.ops[0] is op:
                s.ops.popleft()
            op.finish(s.last_end_ns)
            if s.destroyed and not s.ops:
                self.streams.pop(s.handle, None)

    async def _work(self, s: Stream) -> None:
        """A stream's worker: each operation in turn, after its launch latency and the
        operations it waits for."""
        t = self.time
        assert t is not None
        while s.ops:
            op = s.ops[0]
            start = max(op.submitted_ns, s.last_end_ns) + op.launch_ns
            if t.now_ns() < start:
                await t.sleep(start - t.now_ns())
                continue  # (a synchronous drain may have run it meanwhile)
            waiting = [o for o in op.after if not o.done]
            if waiting:
                assert waiting[0].event is not None
                await waiting[0].event.wait()
                continue
            await self._run(s, op)

    # --------------------------------------------------------------- synchronisation
    def drain_now(self, what: str = "synchronisation") -> None:
        """Run every pending operation here, in zero time, in an order each stream and
        dependency allows. :class:`DeviceTimeError` when one is already running in
        simulated time or needs to wait; the first failure is raised (sticky)."""
        for s in self.streams.values():
            if s.running is not None:
                raise DeviceTimeError(
                    f"{what}: {s.running.what} is running in simulated time; await the "
                    "runtime's async synchronisation instead"
                )
        progress = True
        while progress:
            progress = False
            for s in list(self.streams.values()):
                while s.ops and all(o.done for o in s.ops[0].after):
                    op = s.ops[0]
                    run_now(self._run(s, op), f"{what}: {op.what}")
                    progress = True
        stuck = [s.ops[0] for s in self.streams.values() if s.ops]
        if stuck:
            raise DeviceTimeError(f"{what}: {stuck[0].what} waits on work that never ends")
        if self.failed is not None:
            raise self.failed

    async def wait_ops(self, ops: list[Op], what: str, limit_ns: float) -> None:
        """Until every one of ``ops`` has run (in simulated time when there is some,
        else now). :class:`DeviceTimeError` past ``limit_ns`` of simulated time."""
        t = self.time
        if t is None:
            self.drain_now(what)
            return
        end = t.now_ns() + limit_ns
        for op in ops:
            if not op.done:
                assert op.event is not None
                left = end - t.now_ns()
                if left <= 0 or not await t.wait_for(op.event, left):
                    raise DeviceTimeError(f"{what}: {op.what} still not done after {limit_ns} ns")
        if self.failed is not None:
            # the error is reported once what still runs elsewhere has ended
            for s in list(self.streams.values()):
                op = s.running
                if op is None or op.done:
                    continue
                assert op.event is not None
                left = end - t.now_ns()
                if left <= 0 or not await t.wait_for(op.event, left):
                    raise DeviceTimeError(
                        f"{what}: the context's error ({self.failed}) waits for {op.what},"
                        f" still running after {limit_ns} ns"
                    )
            raise self.failed
