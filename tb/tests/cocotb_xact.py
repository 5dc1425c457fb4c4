"""cocotb tests of the transactor model's own machinery (tb/models/transactors.py,
tb/verilog/pevb_xact_*.v), on a transactor build (the plan runs this module with
PEVB_MODEL=transactors): stalls played from the pattern, restarted and stopped."""

from __future__ import annotations

import itertools
import random
from typing import Any

import cocotb
from cocotb import simulator
from cocotb.triggers import FallingEdge, RisingEdge, Timer
from cocotb.utils import get_sim_time
from cocotbext.pcie.xilinx.us.interface import UsPcieFrame

from tb.env.system import TB


async def _ready_after_edges(tb: TB, n: int) -> list[int]:
    """RQ's tready after each of the next ``n`` rising edges (read mid-cycle)."""
    ready = tb.hip.m_axis_rq_tready
    out = []
    for _ in range(n):
        await RisingEdge(tb.hip.user_clk)
        await FallingEdge(tb.hip.user_clk)
        out.append(int(ready.value))
    return out


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_pause_pattern_plays_edge_by_edge(dut):
    """A pause generator on RQ: tready after the n-th edge from its start is the
    inverse of its n-th value, across many rewrites of the pattern's halves; a new
    generator starts from its first value; one that ends leaves its last value in force,
    and so does clearing one."""
    tb = TB(dut)
    assert tb.model == "transactors"
    await tb.init()
    sink = tb.dev.rq_sink
    await FallingEdge(tb.hip.user_clk)
    assert await _ready_after_edges(tb, 4) == [1] * 4  # nothing held, nothing paused

    rng = random.Random(5)
    values = [int(rng.random() < 0.4) for _ in range(1300)]  # over five pattern halves
    sink.set_pause_generator(iter(values))
    got = await _ready_after_edges(tb, len(values))
    assert got == [1 - v for v in values], next(
        k for k, (g, v) in enumerate(zip(got, values, strict=True)) if g != 1 - v
    )

    # a new generator mid-pattern starts from its own first value
    restart = [1, 1, 0, 1, 0, 0, 1]
    sink.set_pause_generator(itertools.chain(restart, itertools.repeat(0)))
    assert await _ready_after_edges(tb, len(restart)) == [1 - v for v in restart]

    # a generator that ends: its last value holds (here: paused)
    sink.set_pause_generator(iter([0, 0, 1]))
    assert await _ready_after_edges(tb, 600) == [1, 1] + [0] * 598
    # cleared while paused: the pause stays, as cocotbext-pcie leaves it
    sink.clear_pause_generator()
    assert sink.pause
    assert await _ready_after_edges(tb, 8) == [0] * 8
    sink.pause = False
    assert await _ready_after_edges(tb, 3) == [1, 1, 1]
    await Timer(100, "ns")


@cocotb.test(timeout_time=100, timeout_unit="us")
async def test_clear_drops_what_has_not_gone(dut):
    """A source's clear() drops the beats still in its transactor: held by a pause, a
    frame waits there (the source is not idle); cleared, nothing reaches the RTL once
    the pause ends, and the source is idle."""
    tb = TB(dut)
    await tb.init()
    src = tb.dev.cq_source
    valid = tb.hip.s_axis_cq_tvalid
    await FallingEdge(tb.hip.user_clk)
    src.pause = True
    frame = UsPcieFrame()
    frame.data = list(range(12))
    frame.byte_en = [0xF] * 12
    frame.update_parity()
    src.send_nowait(frame)
    for _ in range(8):
        await FallingEdge(tb.hip.user_clk)
        assert int(valid.value) == 0
    assert not src.idle()
    src.clear()
    await FallingEdge(tb.hip.user_clk)
    src.pause = False
    for _ in range(16):
        await FallingEdge(tb.hip.user_clk)
        assert int(valid.value) == 0
    assert src.idle()


async def _boot_at_an_edge(dut) -> tuple[TB, Any, int]:
    """A booted TB at a rising edge of the user clock, the clock, and its period (ps)."""
    tb = TB(dut)
    await tb.init()
    clk = tb.hip.user_clk
    await RisingEdge(clk)
    return tb, clk, round(1e12 / tb.profile.user_clk_hz)


@cocotb.test(timeout_time=20, timeout_unit="us")
async def test_a_write_in_an_edges_time_step_counts_for_that_edge(dut):
    """The user clock's timing, which every model's cycle-for-cycle equivalence rests
    on: a 50:50 duty cycle at the profile's rate, and a write a timer makes in the time
    step of a rising edge is seen by that edge (the HDL clock with such writes applied
    at once on Icarus, cocotb's GPI clock with trusted writes on Verilator; here: RQ
    paused at exactly the time of an edge drops tready on that edge), while a write
    made on an edge (woken by it) is seen by the next one."""
    tb, clk, period = await _boot_at_an_edge(dut)
    rise = get_sim_time("ps")
    await FallingEdge(clk)
    fall = get_sim_time("ps")
    await RisingEdge(clk)
    assert (fall - rise, get_sim_time("ps") - rise) == (period // 2, period)
    assert await _ready_after_edges(tb, 2) == [1, 1]
    await RisingEdge(clk)
    await Timer(period, "ps")  # from a rising edge to the very step of the next one
    tb.dev.rq_sink.pause = True
    await FallingEdge(clk)
    assert int(tb.hip.m_axis_rq_tready.value) == 0, "the write reached the RTL an edge late"
    tb.dev.rq_sink.pause = False
    await FallingEdge(clk)
    assert await _ready_after_edges(tb, 2) == [1, 1]
    await RisingEdge(clk)
    tb.dev.rq_sink.pause = True  # woken by the edge: too late for it
    await FallingEdge(clk)
    assert int(tb.hip.m_axis_rq_tready.value) == 1, "a write made on an edge reached it"
    assert await _ready_after_edges(tb, 1) == [0]
    tb.dev.rq_sink.pause = False


@cocotb.test(timeout_time=20, timeout_unit="us")
async def test_the_user_clock_calls_no_python(dut):
    """The user clock runs with no Python on its edges (Icarus: the HDL clock in
    pevb_hip_port; Verilator: cocotb's clock in C): over 500 cycles of an idle card,
    Python sets a handful of timers (the test's own, the links'), not one per edge, and
    the clock keeps its period."""
    _, clk, period = await _boot_at_an_edge(dut)
    start = get_sim_time("ps")
    timers = [0]
    register = simulator.register_timed_callback

    def counting(*args):
        timers[0] += 1
        return register(*args)

    simulator.register_timed_callback = counting
    try:
        await Timer(500 * period, "ps")
    finally:
        simulator.register_timed_callback = register
    await RisingEdge(clk)  # the edge in the timer's own time step
    assert get_sim_time("ps") - start == 500 * period
    assert timers[0] <= 20, f"{timers[0]} timers set in 500 cycles"
