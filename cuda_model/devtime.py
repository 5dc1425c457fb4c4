"""Simulated time for the GPU's own work: what a stream waits on and how it runs.

The model's device work (streams, kernels, copies) is written as coroutines that await
only what a :class:`DeviceTime` gives them. The GPU's PCIe endpoint in the testbench gives
one on cocotb's clock; :class:`VirtualTime` is a small discrete-event loop that runs the
same coroutines in plain Python (unit tests, no simulator); without either the runtime
runs its work at synchronisation points in zero time, as a host-only program sees it.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Protocol


class DeviceTimeError(RuntimeError):
    """Device work needs simulated time where there is none: an operation that waits
    (on the bus, on a flag, on time itself) was run at a synchronous synchronisation
    point, or one was already running in simulated time there."""


class DeviceEvent(Protocol):
    """A level-set flag device work can wait on."""

    def set(self) -> None: ...
    def clear(self) -> None: ...
    def is_set(self) -> bool: ...
    def wait(self) -> Awaitable[Any]: ...


class DeviceTask(Protocol):
    """Something :meth:`DeviceTime.spawn` started."""

    def done(self) -> bool: ...


class DeviceTime(Protocol):
    """The clock and scheduler device work runs on."""

    def now_ns(self) -> float:
        """The simulated time, in ns."""
        ...

    def sleep(self, ns: float) -> Awaitable[Any]:
        """Resume ``ns`` later (``ns`` > 0)."""
        ...

    def event(self) -> DeviceEvent:
        """A new flag, clear."""
        ...

    def wait_for(self, ev: DeviceEvent, ns: float) -> Awaitable[bool]:
        """Until ``ev`` is set (True) or ``ns`` have passed (False)."""
        ...

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> DeviceTask:
        """Run ``coro`` beside the caller; it starts after the caller next waits."""
        ...


def run_now(coro: Coroutine[Any, Any, Any], what: str) -> Any:
    """Run ``coro`` to its end here, in zero time: it must not wait on anything.
    :class:`DeviceTimeError` (the coroutine closed) when it does."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise DeviceTimeError(
        f"{what} waits on the bus or on time: await it in simulated time "
        "(the GPU endpoint's stream workers, or the runtime's async synchronisation)"
    )


# --- a discrete-event loop for unit tests ------------------------------------------------


class _Wait:
    """What a VirtualTime coroutine yields: resume at a time, when an event is set, or
    at whichever of the two comes first."""

    __slots__ = ("at", "event", "fired", "task")

    def __init__(self, at: float | None = None, event: _VEvent | None = None) -> None:
        self.at = at
        self.event = event
        self.fired = False
        self.task: _VTask | None = None

    def __await__(self) -> Generator[_Wait, None, None]:
        yield self

    def fire(self, loop: VirtualTime) -> None:
        if not self.fired and self.task is not None:
            self.fired = True
            loop._ready(self.task)


class _VEvent:
    def __init__(self, loop: VirtualTime) -> None:
        self._loop = loop
        self._set = False
        self._waiters: list[_Wait] = []

    def set(self) -> None:
        self._set = True
        waiters, self._waiters = self._waiters, []
        for w in waiters:
            w.fire(self._loop)

    def clear(self) -> None:
        self._set = False

    def is_set(self) -> bool:
        return self._set

    async def wait(self) -> None:
        if not self._set:
            await _Wait(event=self)


class _VTask:
    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.coro = coro
        self.result: Any = None
        self.error: BaseException | None = None
        self.finished = False

    def done(self) -> bool:
        return self.finished


class VirtualTime:
    """A discrete-event loop on a virtual clock: device coroutines run here in plain
    Python, their sleeps taking no wall-clock time. Every run is bounded
    (``limit_ns``); a run whose tasks all wait on events nobody sets stops with
    :class:`DeviceTimeError` naming the deadlock."""

    def __init__(self) -> None:
        self._now = 0.0
        self._timers: list[tuple[float, int, _Wait]] = []
        self._queue: list[_VTask] = []
        self._seq = itertools.count()
        self.tasks: list[_VTask] = []

    def now_ns(self) -> float:
        return self._now

    def sleep(self, ns: float) -> Awaitable[Any]:
        return _Wait(at=self._now + max(0.0, ns))

    def event(self) -> _VEvent:
        return _VEvent(self)

    async def wait_for(self, ev: _VEvent, ns: float) -> bool:
        if not ev.is_set():
            await _Wait(at=self._now + max(0.0, ns), event=ev)
        return ev.is_set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> _VTask:
        t = _VTask(coro)
        self.tasks.append(t)
        self._ready(t)
        return t

    def _ready(self, t: _VTask) -> None:
        self._queue.append(t)

    def _step(self, t: _VTask) -> None:
        try:
            w = t.coro.send(None)
        except StopIteration as stop:
            t.finished, t.result = True, stop.value
            return
        except BaseException as e:  # (kept for the caller of run())
            t.finished, t.error = True, e
            return
        if not isinstance(w, _Wait):
            t.coro.close()
            t.finished, t.error = True, DeviceTimeError(f"awaited {w!r}, not VirtualTime's")
            return
        w.task = t
        if w.event is not None:
            if w.event.is_set():
                w.fire(self)
                return
            w.event._waiters.append(w)
        if w.at is not None:
            heapq.heappush(self._timers, (w.at, next(self._seq), w))

    def run(self, coro: Coroutine[Any, Any, Any], limit_ns: float = 1e9) -> Any:
        """Run ``coro`` (and whatever it spawns) until it ends; its result, or its
        exception raised here. A spawned task that failed is raised too."""
        main = self.spawn(coro)
        while not main.finished:
            self.advance(limit_ns, until=main.done)
            if not main.finished:
                raise DeviceTimeError(f"deadlock at {self._now} ns: every task waits")
        for t in self.tasks:
            if t.error is not None and t is not main:
                raise t.error
        if main.error is not None:
            raise main.error
        return main.result

    def advance(self, limit_ns: float, until: Callable[[], bool] | None = None) -> None:
        """Run until nothing is left to do, ``until()`` holds, or the clock would pass
        ``limit_ns`` (then :class:`DeviceTimeError`)."""
        while True:
            while self._queue:
                self._step(self._queue.pop(0))
                if until is not None and until():
                    return
            if not self._timers:
                return
            at, _, w = heapq.heappop(self._timers)
            if w.fired:
                continue
            if at > limit_ns:
                raise DeviceTimeError(f"still running at the {limit_ns} ns limit")
            self._now = max(self._now, at)
            w.fire(self)
