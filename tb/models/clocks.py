"""The clocks: the hard IP's user clock without a task per edge (:class:`EdgeClock`), the
HDL clock of a transactor build on Icarus, and the switch that applies a timer
callback's writes at once once that clock runs, or on Verilator from the start
(:func:`install_timed_writes`, which replaces cocotb's private ``_schedule_write``)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import cocotb
from cocotb import handle as _handle_module
from cocotb import simulator
from cocotb._gpi_triggers import NextTimeStep, Timer, current_gpi_trigger
from cocotb.clock import Clock
from cocotb.handle import Deposit, Immediate
from cocotb.task import Task
from cocotb.triggers import Event

from .timeline import Alarm, LibraryAlarm, steps


class EdgeClock(Clock):
    """cocotb's ``Clock``, whose Python implementation (where cocotb does not trust the
    simulator's inertial writes: Icarus) makes the same writes at the same steps from a
    timer callback (an :class:`Alarm`) instead of a task: no task resumed and no trigger
    made per edge. The writes stay deferred to the ReadWrite phase, as cocotb's are, so
    an edge still takes the writes Python makes earlier in its time step. Where the
    signal is a hard-IP port's ``user_clk`` with an HDL clock beside it (a transactor
    build on Icarus: ``pevb_hip_port``), that clock runs instead, with no Python on any
    edge (:func:`timed_writes_at_once`). Elsewhere it is cocotb's GPI clock; where cocotb
    trusts the simulator's writes (Verilator) and a timer callback's writes are applied at
    once (:func:`install_timed_writes`), its edges are written at once too
    (``Immediate``): each edge then reaches the design together with the writes its time
    step's timer callbacks made, in the simulator's first evaluation of that step, where
    a deposit (inertial) waits for one evaluation with nothing new and takes a second.
    Stopped with :meth:`stop` or at the end of the test that started it, as cocotb's
    clock task is."""

    def start(self, start_high: bool = True) -> Task[None]:
        if self._impl != "py":
            if writes_trusted() and _installed and self._set_action is Deposit:
                self._set_action = Immediate
            return super().start(start_high)
        if self._task is not None:
            raise RuntimeError("Starting clock that has already been started.")
        regs = _hdl_clock(self._signal) if start_high else None
        if regs is not None:
            run = _run_hdl_clock(regs, self._period_high_steps, self._period_steps)
            self._task = cocotb.start_soon(run)
            return self._task
        signal, action = self._signal, self._set_action
        _PY_CLOCKS.add(signal)
        high = self._period_high_steps
        low = self._period_steps - high
        level = [1 if start_high else 0]

        def edge() -> None:
            now = 1 - level[0]
            level[0] = now
            signal.set(action(now))
            alarm.move(steps() + (high if now else low))

        alarm = Alarm(edge)
        signal.set(action(level[0]))
        alarm.move(steps() + (high if start_high else low))

        async def hold() -> None:
            try:
                await Event().wait()
            finally:
                alarm.stop()

        self._task = cocotb.start_soon(hold())
        return self._task


def _hdl_clock(signal) -> Any:
    """The instance whose HDL makes ``signal`` (``pevb_hip_port`` in a transactor build
    on Icarus: ``clk_gen`` beside the signal), or None."""
    if simulator.get_precision() != -12:
        return None
    path = getattr(signal, "_path", "")
    names = path.split(".")[1:-1]
    if not names or not path.startswith(cocotb.top._path + "."):
        return None
    parent = cocotb.top
    try:
        for name in names:
            parent = parent._id(name, extended=False)
        parent._id("clk_gen", extended=False)
    except (AttributeError, KeyError):
        return None
    if signal._name != "user_clk":
        return None
    return parent


async def _run_hdl_clock(inst: Any, high: int, period: int) -> None:
    """Run the HDL clock of ``inst`` (half periods in ps, high first) for as long as
    this task: its edges need no Python. A timer callback's writes are applied at once
    from here on (:func:`timed_writes_at_once`), as the clock's edges wait behind them."""
    timed_writes_at_once()
    last = inst.clk_gen.value  # X until first written
    gen = ((last.to_unsigned() if last.is_resolvable else 0) + 1) & 0xFF
    inst.clk_high_ps.value = high
    inst.clk_low_ps.value = period - high
    inst.clk_run.value = 1
    inst.clk_gen.value = gen
    try:
        await Event().wait()
    finally:
        inst.clk_run.value = 0


_TIMED = (Timer, NextTimeStep, Alarm, LibraryAlarm)  # (the timeline's work: timed)
_at_once = [False]
# told when timer callbacks' writes begin to be applied at once (held weakly)
_timed_listeners: list[weakref.WeakMethod] = []


def on_timed_writes(listener: Callable[[], None]) -> None:
    """Call ``listener`` (a bound method, held weakly) when :func:`timed_writes_now`
    turns true."""
    _timed_listeners.append(weakref.WeakMethod(listener))


def writes_trusted() -> bool:
    """Whether cocotb applies every write at once (it trusts the simulator's: Verilator,
    with its runner's ``COCOTB_TRUST_INERTIAL_WRITES``), rather than in the ReadWrite
    phase where it was made outside one."""
    return bool(getattr(_handle_module, "_trust_inertial", False))


def timed_writes_now() -> bool:
    """Whether a deposit made now from a timer callback (past time 0, to a signal no
    Python clock drives) reaches the simulator at once: where cocotb trusts the
    simulator's writes, and once :func:`timed_writes_at_once` has been called."""
    return writes_trusted() or (bool(_installed) and _at_once[0])


def _timed_write(handle: Any, action: Any, deposit: Any) -> bool:
    """Whether a write of ``handle`` made now is a timer callback's deposit that
    :func:`install_timed_writes` applies at once: past time 0, to a signal no Python
    clock drives."""
    return (
        action is deposit
        and isinstance(current_gpi_trigger(), _TIMED)
        and bool(steps())
        and handle not in _PY_CLOCKS
    )


def timed_writes_at_once() -> None:
    """From now on, on a simulator whose inertial writes cocotb does not trust (Icarus),
    apply a write made in a timer callback at once rather than in the ReadWrite phase of
    its time step (cocotb's deferral): called when the HDL clock starts, whose edges
    come after the timer callbacks of their time step (``#0``), so that such a write
    reaches the RTL before the edge of that step, as with the Python clock, whose edge
    came in that ReadWrite phase after the write. Writes at time 0 (the HDL's initial
    blocks may not have run) and in value-change callbacks (at an edge, whose always
    blocks must not see them) stay deferred. Needs :func:`install_timed_writes`."""
    _at_once[0] = True
    for ref in list(_timed_listeners):
        listener = ref()
        if listener is None:
            _timed_listeners.remove(ref)
        else:
            listener()


def install_timed_writes() -> None:
    """Put the switch of :func:`timed_writes_at_once` into cocotb's write scheduling,
    off until then. Where cocotb trusts the simulator's writes (Verilator), which it
    makes as inertial deposits, a timer callback's deposit is made at once instead
    (``vpiNoDelay``) from the start, so that it reaches the design in the simulator's
    first evaluation of its time step, with the user clock's edge of that step
    (:class:`EdgeClock`), as the deposits and the edge reach it together now."""
    if _installed or not hasattr(_handle_module, "_schedule_write"):
        return
    deferred = _handle_module._schedule_write
    actions = _handle_module._GPISetAction
    deposit = actions.DEPOSIT
    trusted = writes_trusted()
    now = actions.NO_DELAY.value

    def schedule_write(handle, write_func, action, value) -> None:
        if (trusted or _at_once[0]) and _timed_write(handle, action, deposit):
            write_func(action.value if not trusted else now, value)
        else:
            deferred(handle, write_func, action, value)

    start = Clock.start

    def clock_start(self: Clock, start_high: bool = True) -> Task[None]:
        if self._impl == "py":
            _PY_CLOCKS.add(self._signal)
        return start(self, start_high)

    _handle_module._schedule_write = schedule_write
    Clock.start = clock_start  # type: ignore[method-assign]
    _installed.append(deferred)


_installed: list[Callable[..., None]] = []
# the signals cocotb's Python clocks drive (a user's own clocks, and EdgeClock's where
# it has no HDL clock): their edges stay in the ReadWrite phase, after the timer
# callbacks' writes of their time step, as before
_PY_CLOCKS: set[Any] = set()
