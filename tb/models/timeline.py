"""The timeline: every TLP-level link's and switch's timed work on one schedule, and
their handlers run in the caller until they must wait.

cocotbext-pcie gives every port three coroutines (transmit, wire, receive) and every
switch port two (routing, arbitration), each woken through cocotb's scheduler for every
TLP that passes: about 20 task resumes per TLP between the FPGA and the GPU, which cost
more wall time than the TLP's own work. Here the same steps happen at the same simulated
times, with fewer wake-ups:

- :class:`Timeline`: the times at which a TLP-level link has work (a TLP or credit update
  arriving, a transmitter's wire free again, a flow-control update timer expiring) are
  kept in one heap. One simulator timer callback, set for the earliest, runs everything
  due at that time in the order it was scheduled; no task is resumed for it. Work that
  may not be needed (the hand-over of the wire to a next TLP, when none may wait) keeps
  its place in that order (:meth:`Timeline.slot`) and is scheduled there only if needed.
- :class:`Lane`: the handlers that ran in a receive or arbitration coroutine (one TLP at
  a time, in order) run directly in whoever hands the work over, and move to a task only
  when one must wait (a full transmit queue, no credit); what arrives meanwhile waits
  behind it in order, as it waited in the coroutine's queue.

Both live as long as the test that made them: a test's end cancels the timeline's
anchor task, which drops what was still scheduled. An exception raised by scheduled work
is raised in that task, so it fails the test as it did in the coroutines.
"""

from __future__ import annotations

import ctypes
import functools
import heapq
import itertools
import logging
import os
import struct
import traceback
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

import cocotb
import cocotb._event_loop
import cocotb.task as _task_module
from cocotb import _gpi_triggers, simulator
from cocotb import handle as _handle_module
from cocotb._base_triggers import _Event
from cocotb._gpi_triggers import GPITrigger
from cocotb._profiling import profiling_context
from cocotb.triggers import Event, ReadWrite
from cocotbext.pcie.core.tlp import Tlp as _Tlp
from cocotbext.pcie.core.tlp import TlpType

from ..dp import (
    ARBITRATE,
    CHECKED,
    CREDIT,
    NONE,
    NOT_SCHEDULED,
    PY,
    REST,
    RESUME,
    RQ,
    RQ_RESUME,
    RX,
    TOOK,
    WAKE,
)


def steps() -> int:
    """The simulated time in steps (cocotb's ``get_sim_time("step")``, unchecked)."""
    high, low = simulator.get_sim_time()
    return high << 32 | low


class Alarm(GPITrigger):
    """A simulator timer callback at an absolute step, moved earlier without a new
    trigger (:meth:`move`)."""

    def __init__(self, fire: Callable[[], None]) -> None:
        super().__init__()
        self.step = -1
        self._register(fire)  # kept: re-registered by _react for the next time

    def _prime(self) -> None:
        if self.step >= 0:
            delay = self.step - steps()
            self._cbhdl = simulator.register_timed_callback(max(delay, 1), self._react)

    def _unprime(self) -> None:
        if self._cbhdl is not None:
            self._cbhdl.deregister()
            self._cbhdl = None

    def _react(self) -> None:
        self._cbhdl = None
        fire = self._callbacks
        super()._react()  # runs the callback, then cocotb's event loop
        self._callbacks = fire  # stay registered for the next time

    def move(self, step: int) -> None:
        """Fire at ``step`` (absolute) instead."""
        self._unprime()
        self.step = step
        self._prime()

    def rearm(self, step: int, now: int) -> None:
        """Fire at ``step`` (absolute), from a call of its own callback at ``now`` (so
        not set: it has just fired)."""
        self.step = step
        self._cbhdl = simulator.register_timed_callback(max(step - now, 1), self._react)

    def stop(self) -> None:
        self._unprime()
        self.step = -1


class LibraryAlarm(GPITrigger):
    """:class:`Alarm` kept by the compiled data path's library (``calendar.cpp``'s
    ``dp_alarm``): registered through cocotb's GPI where and when :class:`Alarm` would
    be, so the simulator orders it alike; when it fires, the library runs the links' own
    work due and calls ``wake(kind)`` only for a step with work of Python's (the first
    report in ``out``), re-arming itself for a step without. ``wake`` runs as cocotb runs
    a trigger's callbacks (:meth:`GPITrigger._react`): profiled, as the current trigger,
    then cocotb's event loop."""

    def __init__(self, lib: Any, cal: Any, out: Any, wake: Callable[[int], None]) -> None:
        super().__init__()
        self._lib = lib
        self._wake = wake

        def fired(kind: int) -> int:
            try:
                with profiling_context:
                    _gpi_triggers._current_gpi_trigger = self
                    wake(kind)
                    cocotb._event_loop._inst.run()
            except BaseException:  # as cocotb's callback: printed, and the simulation ends
                traceback.print_exc()
                return -1
            return 0

        self._fired = _FIRE(fired)  # (kept alive as long as the library may call it)
        gpi = _gpi()
        self._a = lib.dp_alarm_new(
            cal,
            ctypes.byref(out),
            ctypes.cast(gpi.gpi_register_timed_callback, ctypes.c_void_p),
            ctypes.cast(gpi.gpi_remove_cb, ctypes.c_void_p),
            ctypes.cast(gpi.gpi_get_sim_time, ctypes.c_void_p),
            ctypes.cast(self._fired, ctypes.c_void_p),
        )
        self._step = ctypes.c_int64.from_address(self._a)  # dp_alarm's first field

    def __del__(self) -> None:
        a, self._a = getattr(self, "_a", None), None
        if a is not None:
            self._lib.dp_alarm_free(a)

    @property
    def step(self) -> int:
        """The step armed for (-1: none)."""
        return self._step.value

    @step.setter
    def step(self, value: int) -> None:
        self._step.value = value

    @property
    def _cbhdl(self) -> Any:  # (Timeline._fire's test of a timer registered)
        return True if self._lib.dp_alarm_armed(self._a) else None

    @_cbhdl.setter
    def _cbhdl(self, value: Any) -> None:  # (GPITrigger.__init__ sets None)
        pass

    def move(self, step: int) -> None:
        """Fire at ``step`` (absolute) instead."""
        self._lib.dp_alarm_at(self._a, step, steps())

    def rearm(self, step: int, now: int) -> None:
        """Fire at ``step`` (absolute), from a call of its own callback at ``now``."""
        self._lib.dp_alarm_at(self._a, step, now)

    def stop(self) -> None:
        self._lib.dp_alarm_stop(self._a)

    def counts(self) -> tuple[int, int]:
        """The steps it fired at, and of those the ones it called Python for, since the
        last call."""
        wakes, python = ctypes.c_uint64(), ctypes.c_uint64()
        self._lib.dp_alarm_counts(self._a, ctypes.byref(wakes), ctypes.byref(python))
        return wakes.value, python.value


_FIRE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint32)


def read_write_call(line: Timeline, work: Callable[[int], None]) -> Any:
    """A C function (``int (*)(uint32_t)``) for the library to call from a ReadWrite
    callback of its own, which runs ``work(n)`` as cocotb runs its ReadWrite trigger's
    callbacks: profiled, with that trigger current (a write applied at once), the writes
    cocotb deferred to the phase applied first, ``work`` as ``line``'s own
    (:meth:`Timeline.run`), then cocotb's event loop. Keep it as long as the library
    may call it."""
    phase = ReadWrite()

    def fired(n: int) -> int:
        try:
            with profiling_context:
                _gpi_triggers._current_gpi_trigger = phase
                _handle_module._apply_scheduled_writes()
                line.run(functools.partial(work, n))
                cocotb._event_loop._inst.run()
        except BaseException:  # as cocotb's callback: printed, and the simulation ends
            traceback.print_exc()
            return -1
        return 0

    return _FIRE(fired)


_GPI: list[Any] = []


def _gpi() -> Any:
    """cocotb's GPI library, as the simulator process has it loaded."""
    if not _GPI:
        try:
            gpi = ctypes.CDLL(None)
            gpi.gpi_register_timed_callback  # noqa: B018  (in the global scope?)
        except AttributeError:
            path = os.path.join(os.path.dirname(cocotb.__file__), "libs", "libgpi.so")
            gpi = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        _GPI.append(gpi)
    return _GPI[0]


class Watch(GPITrigger):
    """Calls ``fire()`` on every value change of ``signal``, from the simulator's callback
    (no task resumed, no trigger made per change), as the running test's timeline's work
    (:meth:`Timeline.run`) and for as long as that test runs."""

    def __init__(self, signal: Any, fire: Callable[[], None]) -> None:
        super().__init__()
        self._raw = signal._handle
        self._line = timeline()
        self._register(functools.partial(self._line.run, fire))

    def _prime(self) -> None:
        self._cbhdl = simulator.register_value_change_callback(
            self._raw, self._react, simulator.VALUE_CHANGE
        )

    def _react(self) -> None:
        self._cbhdl = None  # the simulator's callback fires once
        if not self._line.alive():  # the test that set it has ended
            self._callbacks.clear()
            return
        fire = self._callbacks
        super()._react()  # runs the callback, then cocotb's event loop
        if self._stopped:
            return
        self._callbacks = fire
        self._prime()

    _stopped = False

    def stop(self) -> None:
        """Call ``fire`` no more."""
        self._stopped = True
        self._callbacks.clear()
        if self._cbhdl is not None:
            self._unprime()


class Timeline:
    """Work at simulated times (steps), run by one simulator timer callback per time."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Callable[[Any], None], Any]] = []
        self._order = itertools.count()
        self._alarm = self._new_alarm()
        self._firing = False
        self._current = -1  # the slot of the work running (while firing)
        self._failed: list[BaseException] = []
        self._failure = Event()
        self.task = cocotb.start_soon(self._anchor())

    def _new_alarm(self) -> Any:
        """The simulator timer the work is run by."""
        return Alarm(self._fire)

    def alive(self) -> bool:
        """Whether the test that made this timeline still runs."""
        return not self.task.done()

    def run(self, work: Callable[[], None]) -> None:
        """Run ``work()`` now as the timeline's own (from a simulator callback): cocotb's
        current task is the anchor meanwhile, and an exception fails the test."""
        if not self.alive():
            return
        saved = _task_module._current_task
        _task_module._current_task = self.task
        try:
            work()
        except BaseException as e:
            self._fail(e)
        finally:
            _task_module._current_task = saved

    def _clear(self) -> None:
        """Drop what is scheduled."""
        self._heap.clear()

    def _run_due(self, now: int) -> None:
        """Run the work due by step ``now`` in order, work scheduled meanwhile for
        ``now`` in its place."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, self._current, work, arg = heapq.heappop(heap)
            work(arg)

    def _next_step(self) -> int | None:
        """The step of the earliest work scheduled, or None."""
        return self._heap[0][0] if self._heap else None

    def _fail(self, e: BaseException) -> None:
        """Drop what is scheduled and raise ``e`` in the anchor task (failing the test)."""
        self._clear()
        self._failed.append(e)
        self._failure.set()

    def at(self, step: int, work: Callable[[Any], None], arg: Any = None) -> None:
        """Call ``work(arg)`` at ``step`` (absolute, later than now), after the work
        scheduled before it for the same step."""
        self.at_slot(step, next(self._order), work, arg)

    def slot(self) -> int:
        """A place in the order of work (as :meth:`at` takes one), kept for work that may
        never be scheduled: :meth:`at_slot` schedules it there, :meth:`passed` tells
        whether the timeline has gone past it."""
        return next(self._order)

    def at_slot(self, step: int, slot: int, work: Callable[[Any], None], arg: Any = None) -> None:
        """:meth:`at`, in the place ``slot`` (from :meth:`slot`) among the step's work."""
        heapq.heappush(self._heap, (step, slot, work, arg))
        alarm = self._alarm
        if not self._firing and (alarm.step < 0 or step < alarm.step):
            alarm.move(step)

    def passed(self, step: int, slot: int) -> bool:
        """Whether work at ``step`` in place ``slot`` would have run by now: an earlier
        step; or this step, past the work running now, or (none running) with no work
        of this step left before it."""
        now = steps()
        if now != step:
            return now > step
        if self._firing:
            return self._current > slot
        heap = self._heap
        return not (heap and heap[0][0] == step and heap[0][1] < slot)

    def _fire(self) -> None:
        if not self.alive():  # a callback left from an ended test
            self._clear()
            self._alarm.stop()
            return
        now = steps()
        saved = _task_module._current_task
        _task_module._current_task = self.task  # work started here: see Lane
        self._firing = True
        try:
            self._run_due(now)
        except BaseException as e:
            self._fail(e)
        finally:
            self._firing = False
            _task_module._current_task = saved
        alarm = self._alarm
        if alarm._cbhdl is not None:  # moved meanwhile (never, while firing)
            alarm.stop()
        step = self._next_step()
        if step is not None:
            alarm.rearm(step, now)
        else:
            alarm.step = -1

    async def _anchor(self) -> None:
        try:
            await self._failure.wait()
            raise self._failed[0]
        finally:
            self._clear()
            self._alarm.stop()


class CompiledTimeline(Timeline):
    """The timeline on the compiled data path's calendar (``$PEVB_DATAPATH=compiled``,
    :class:`tb.dp.Calendar`): the same work in the same order (step, then slot), the
    calendar and the links' own work (:class:`tb.models.compiled_link.CompiledTlpPort`) in the
    library; Python runs its own work and what the links report."""

    def __init__(self) -> None:
        from ..dp import Calendar

        self._cal = Calendar()
        self.lib = self._cal.lib
        self.calendar = self._cal.cal
        self.ports: list[Any] = []  # the compiled links, by the library's number
        self._held: dict[int, Any] = {}  # TLPs on the links, by handle
        self._handles = itertools.count()
        self._receipt = ctypes.c_uint64()
        self._ingress = ctypes.c_int32()
        self._fabric: Any = None
        self._first = NONE
        super().__init__()
        log = os.environ.get(LOG_ENV)
        if log and not self.lib.dp_cal_log(self.calendar, log.encode()):
            raise OSError(f"{LOG_ENV}={log}: cannot write it")
        if not _announced:
            _announced.append(True)
            logging.getLogger("cocotb.tb.dp").info(
                "compiled data path: the fabric's calendar and links in %s",
                self._cal.library_name,
            )

    def hold(self, tlp: Any) -> int:
        """Keep ``tlp`` while the library carries it: its handle."""
        handle = next(self._handles)
        self._held[handle] = tlp
        return handle

    def carry(self, tlp: Any) -> int:
        """A TLP sent on a link, as the link copies it (cocotbext-pcie's ``Tlp(tlp)``):
        a memory request or completion with data as a TLP of the library's own, its
        bytes on the wire; any other kept as a Python copy. Its handle."""
        if tlp.fmt_type in _NATIVE_TYPES:
            raw = bytes(tlp.pack())
            return self.lib.dp_tlp_new(self.calendar, raw, len(raw))
        return self.hold(_Tlp(tlp))

    def take(self, handle: int) -> Any:
        """The TLP of ``handle``, which the library has delivered: one of the library's
        own made a Python TLP equal to the link's copy (its TLP Processing Hint bit is
        not copied, as ``Tlp(tlp)`` does not), with what the hops the library took left
        (its credits to release when it is passed on, the switch port it came in by)."""
        if not handle & _NATIVE:
            return self._held.pop(handle)
        lib, cal = self.lib, self.calendar
        receipt, ingress = self._receipt, self._ingress
        port = lib.dp_tlp_meta(cal, handle, ctypes.byref(receipt), ctypes.byref(ingress))
        tlp = self.peek(handle)
        lib.dp_tlp_free(cal, handle)
        if port != _NO_PORT:
            tlp.release_fc_cb = functools.partial(self.ports[port]._release, receipt.value)
        if ingress.value >= 0:
            tlp.ingress_port = self._fabric.ports[ingress.value].bridge
        return tlp

    def peek(self, handle: int) -> Any:
        """A Python TLP equal to the library's TLP ``handle``, which stays the library's."""
        lib, cal = self.lib, self.calendar
        raw = ctypes.create_string_buffer(lib.dp_tlp_size(cal, handle))
        lib.dp_tlp_copy(cal, handle, raw)
        return _tlp_of(raw.raw)

    def trace_tap(self, port: Any, kinds: int, tag: int) -> None:
        """Record in the trace ring the library's TLPs of ``kinds`` (``tb/dp/fabric.cpp``'s
        bits) that a hop takes past compiled link port ``port``, under number ``tag``."""
        self.lib.dp_trace_tap(self.calendar, port.dp_id, kinds, tag)

    def trace_take(self) -> list[tuple[int, int, Any]]:
        """The trace ring's records, oldest first, as (step, tag, Python TLP equal to the
        one the hop took); the ring is empty after."""
        lib, cal = self.lib, self.calendar
        size = lib.dp_trace_size(cal)
        if not size:
            return []
        buf = ctypes.create_string_buffer(size)
        lib.dp_trace_take(cal, buf)
        raw, at, out = buf.raw, 0, []
        while at < size:
            step, tag, n = _RING_HEAD.unpack_from(raw, at)
            out.append((step, tag, _tlp_of(raw[at + 16 : at + 16 + n])))
            at += 16 + ((n + 7) & ~7)
        return out

    def poke(self) -> None:
        """After a call into the library that may have scheduled work: the alarm moves
        to it if it is earlier (outside the calendar's own firing)."""
        step = self._cal.pushed()
        if step is not None and not self._firing:
            alarm = self._alarm
            if alarm.step < 0 or step < alarm.step:
                alarm.move(step)

    def _new_alarm(self) -> Any:
        """The library's alarm (:class:`LibraryAlarm`), where cocotb's GPI is loaded."""
        if not simulator.is_running():  # (cocotb's GPI has no simulator to call)
            return Alarm(self._fire)
        try:
            _gpi()
        except (AttributeError, OSError):  # not found: Python's
            return Alarm(self._fire)
        return LibraryAlarm(self.lib, self.calendar, self._cal.out, self._wake)

    def _wake(self, kind: int) -> None:
        """The library's alarm has found work of Python's at this step (the first
        report, of ``kind``, in the calendar's ``out``)."""
        self._first = kind
        self._fire()

    def _clear(self) -> None:
        self._first = NONE
        self._cal.settle()
        self._cal.clear()
        self._held.clear()
        fabric = self._fabric
        if fabric is not None:  # (the model's RC loops the library runs end with the test)
            for card in fabric.cards:
                self.lib.dp_rc_loop_stop(card.loop)
            for end in fabric.drains:
                end.stop()
        credit = ctypes.c_uint64()
        resumed = self.lib.dp_fab_resumes(fabric.fab, ctypes.byref(credit)) if fabric else 0
        if fabric is not None and fabric.take_crossings():
            logging.getLogger("cocotb.tb.dp").info(
                "compiled data path: %d hops of the library's own TLPs, %d of them requests"
                " to the GPU's BAR1 answered, %d completions the card took (%d written for"
                " the RTL by the library's RC loop, which waited %d times and was taken over"
                " %d times); %d senders of its own resumed (%d of them after a wait for"
                " credit); %d posted writes sent (%d of them after a wait for the link;"
                " %d handed over by the model's RQ logic) and %d memory reads issued from"
                " RQ by the library's drain of the card's sinks, %d of whose %d drains"
                " called Python",
                fabric.crossings,
                fabric.bar1_answers,
                fabric.card_cpls,
                fabric.rc_turns,
                fabric.rc_waits,
                fabric.rc_adopted,
                resumed,
                credit.value,
                fabric.rq_writes,
                fabric.rq_waited,
                fabric.rq_adopted,
                fabric.rq_reads,
                fabric.rq_handed,
                fabric.rq_drains,
            )
            fabric.crossings = fabric.bar1_answers = fabric.card_cpls = 0
            fabric.rc_turns = fabric.rc_waits = fabric.rc_adopted = 0
            fabric.rq_writes = fabric.rq_reads = fabric.rq_drains = fabric.rq_handed = 0
            fabric.rq_waited = fabric.rq_adopted = 0
        alarm = self._alarm
        if isinstance(alarm, LibraryAlarm):
            wakes, python = alarm.counts()
            if wakes:
                logging.getLogger("cocotb.tb.dp").info(
                    "compiled data path: the calendar ran at %d steps, %d of them with"
                    " work of Python's",
                    wakes,
                    python,
                )

    def _run_due(self, now: int) -> None:
        cal = self._cal
        kind, self._first = self._first, NONE  # (the library's alarm's first report)
        try:
            if kind == NONE:
                kind = cal.take(now)
            while kind != NONE:
                self._report(kind)
                kind = cal.take(now)
        finally:
            cal.settle()

    def _report(self, kind: int) -> None:
        """Do what the library's report of ``kind`` (in the calendar's ``out``) says."""
        out = self._cal.out
        if kind == PY:
            work, arg = self._cal.work(out.a)
            work(arg)
        elif kind == RX:
            self.ports[out.port].received(out.a, out.b)
        elif kind == WAKE:
            self.ports[out.port].wake()
        elif kind == CREDIT:
            self.ports[out.port].credit(out.a, out.b)
        elif kind == ARBITRATE:  # (the library's arbitration hands it on)
            item = None if out.a == NOT_SCHEDULED else (out.a, out.b)
            self._fabric.ports[out.port].arbiter.push(item)
        elif kind == CHECKED:
            self.ports[out.port].native_end.checked(out.a, out.b)
        elif kind == TOOK:
            self.ports[out.port].native_end.took(out.a, out.b)
        elif kind == REST:
            self.ports[out.port].native_end.rest_later()
        elif kind == RESUME:  # in its turn among what the step has woken
            resume = functools.partial(self._resume, out.port, out.a, out.b)
            cocotb._event_loop._inst.schedule(resume)
        elif kind == RQ_RESUME:  # (the card's held RQ frames) alike
            resume = functools.partial(self._resume, out.port, None, out.b)
            cocotb._event_loop._inst.schedule(resume)
        elif kind == RQ:
            self.ports[out.port].rq_end.told(out.b)

    def _resume(self, port: int, handle: int | None, credit: int) -> None:
        """Resume the library's sender of switch port ``port`` at TLP ``handle``, or
        (``handle`` None) the card's RQ frames the library holds at link port ``port``
        (which waited for credit, where ``credit``), as cocotb's scheduler resumes a
        task whose event was set, then do what it has for Python."""
        if not self.alive():  # (left from an ended test)
            return
        lib, cal = self.lib, self._cal
        saved = _task_module._current_task
        _task_module._current_task = self.task
        try:
            if handle is None:
                self.ports[port].rq_end.resume(credit)
            else:
                lib.dp_fab_resume_at(self.calendar, self._fabric.fab, port, handle, credit, steps())
            while (kind := lib.dp_cal_report(self.calendar, ctypes.byref(cal.out))) != NONE:
                self._report(kind)
        except BaseException as e:
            self._fail(e)
        finally:
            _task_module._current_task = saved
        self.poke()

    def _next_step(self) -> int | None:
        first = self._cal.first()
        return None if first is None else first[0]

    def slot(self) -> int:
        return self._cal.slot()

    def at(self, step: int, work: Callable[[Any], None], arg: Any = None) -> None:
        self.at_slot(step, self._cal.slot(), work, arg)

    def at_slot(self, step: int, slot: int, work: Callable[[Any], None], arg: Any = None) -> None:
        self._cal.push(step, slot, work, arg)
        alarm = self._alarm
        if not self._firing and (alarm.step < 0 or step < alarm.step):
            alarm.move(step)

    def passed(self, step: int, slot: int) -> bool:
        return self._cal.passed(step, slot, steps())


def _tlp_of(raw: bytes) -> Any:
    """A Python TLP of the bytes of one of the library's (as the link copies it: its TLP
    Processing Hint bit is not copied)."""
    tlp = _Tlp.unpack_header(raw)
    tlp.data = bytearray(raw[tlp.get_header_size() :])
    tlp.th = False
    return tlp


_RING_HEAD = struct.Struct("<QII")  # a trace ring record's head: step, tag, size (dp.h)
_NATIVE = 1 << 62  # tb.dp.NATIVE
_NO_PORT = (1 << 32) - 1  # dp.h's DP_NO_PORT
# a file every TLP's arrival at a compiled link's port is logged into (tests compare two)
LOG_ENV = "PEVB_DP_LOG"
# what the library carries as its own: memory requests and completions with data (a
# completion without data keeps the byte count of 0 Python gives it, which the wire
# cannot tell from 4096)
_NATIVE_TYPES = frozenset(
    {
        TlpType.MEM_READ,
        TlpType.MEM_READ_64,
        TlpType.MEM_WRITE,
        TlpType.MEM_WRITE_64,
        TlpType.CPL_DATA,
    }
)

_current: list[Timeline] = []
_announced: list[bool] = []


def timeline() -> Timeline:
    """The running test's timeline (made by the first caller in each test): on the
    compiled data path's calendar where ``$PEVB_DATAPATH`` says ``compiled``."""
    if not _current or not _current[0].alive():
        from ..dp import COMPILED, datapath

        _current[:] = [CompiledTimeline() if datapath() == COMPILED else Timeline()]
    return _current[0]


class Lane:
    """Runs ``work(item)`` for each item pushed, one after another in push order: in the
    pusher's own call while nothing waits, in a task from the first ``await`` that must
    wait until the backlog is done.

    An ``await`` on an event already set goes on at once (the scheduler would resume it
    in the same time step, before time moves). While work runs in a caller, cocotb's
    current task is the timeline's anchor, which lives as long as the test: a
    ``cocotb.queue.Queue`` remembers the task of each waiter and skips a finished one, and
    the caller's task may well finish before the work it started does.
    """

    __slots__ = ("_anchor", "_backlog", "_busy", "_work")

    def __init__(self, work: Callable[[Any], Coroutine[Any, Any, None]]) -> None:
        self._work = work
        self._anchor = timeline().task
        self._backlog: deque[Any] = deque()
        self._busy = False

    @property
    def busy(self) -> bool:
        """Whether work is running or waiting."""
        return self._busy

    @property
    def backlog(self) -> bool:
        """Whether work pushed while it was busy waits its turn."""
        return bool(self._backlog)

    def push(self, item: Any) -> None:
        """Run ``work(item)`` now, or after the work before it."""
        if self._busy:
            self._backlog.append(item)
            return
        self._busy = True
        saved = _task_module._current_task
        _task_module._current_task = self._anchor
        try:
            pending = self._step(self._work(item))
        finally:
            _task_module._current_task = saved
        if pending is not None:
            cocotb.start_soon(self._finish(*pending))

    def _step(self, coro: Coroutine[Any, Any, None] | None) -> tuple[Any, Any] | None:
        """Run ``coro`` on, then the backlog's work, until one must wait (it and the
        trigger it waits on) or all is done (None)."""
        backlog = self._backlog
        try:
            while True:
                if coro is None:
                    if not backlog:
                        self._busy = False
                        return None
                    coro = self._work(backlog.popleft())
                try:
                    trigger = coro.send(None)
                    while type(trigger) is _Event and trigger._parent.is_set():
                        trigger = coro.send(None)
                except StopIteration:
                    coro = None
                    continue
                return coro, trigger
        except BaseException:
            self._busy = False
            raise

    async def _finish(self, coro: Coroutine[Any, Any, None], trigger: Any) -> None:
        pending: tuple[Any, Any] | None = (coro, trigger)
        while pending is not None:
            await pending[1]
            pending = self._step(pending[0])


class FlaggedLane(Lane):
    """A :class:`Lane` that says when it becomes busy and idle (``on_busy(True)`` and
    ``on_busy(False)``), for the library's copy of that state."""

    __slots__ = ("_on_busy",)

    def __init__(
        self, work: Callable[[Any], Coroutine[Any, Any, None]], on_busy: Callable[[bool], None]
    ) -> None:
        super().__init__(work)
        self._on_busy = on_busy

    def push(self, item: Any) -> None:
        if not self._busy:
            self._on_busy(True)
        super().push(item)

    def _step(self, coro: Coroutine[Any, Any, None] | None) -> tuple[Any, Any] | None:
        try:
            return super()._step(coro)
        finally:
            if not self._busy:
                self._on_busy(False)
