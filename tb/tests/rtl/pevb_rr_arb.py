"""pevb_rr_arb alone: random requests and random takes (fire), checked cycle by cycle
against the model: a grant not taken holds while its request stays up; otherwise the
grant goes to the first requester after the one granted last, wrapping (after reset,
requester 0 first); one grant bit, at the granted index, only while someone asks."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.config import bench_params
from tb.env.rtl_bench import start

CYCLES = 3000


class Model:
    """The arbiter's state: the last grant taken, and a grant held for a take."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.last = n - 1  # so that requester 0 goes first
        self.hold: int | None = None

    def grant(self, req: int) -> int | None:
        """The requester granted this cycle (None: no request)."""
        if self.hold is not None and req >> self.hold & 1:
            return self.hold
        for k in range(1, self.n + 1):
            i = (self.last + k) % self.n
            if req >> i & 1:
                return i
        return None

    def step(self, granted: int | None, fire: bool) -> None:
        if granted is not None and fire:
            self.last = granted
        self.hold = granted if granted is not None and not fire else None


@cocotb.test()
async def test_random_requests_and_takes(dut):
    n = bench_params().get("N", 4)
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, ("req", "fire"))
    model = Model(n)
    # phases: sparse requests, all asking, requests that drop while granted
    density = [0.1, 0.5, 1.0]
    counts = [0] * n
    for cycle in range(CYCLES):
        p = density[(cycle // 500) % len(density)]
        req = sum(int(rng.random() < p) << i for i in range(n))
        fire = rng.random() < 0.6
        dut.req.value = req
        dut.fire.value = int(fire)
        await ReadOnly()
        want = model.grant(req)
        valid = int(dut.grant_valid.value)
        grant = int(dut.grant.value)
        assert valid == (want is not None), f"cycle {cycle}: grant_valid {valid}, req {req:b}"
        if want is not None:
            idx = int(dut.grant_idx.value)
            assert idx == want, f"cycle {cycle}: granted {idx}, not {want} (req {req:b})"
            assert grant == 1 << want, f"cycle {cycle}: grant {grant:b} for {want}"
            if fire:
                counts[want] += 1
        else:
            assert grant == 0, f"cycle {cycle}: grant {grant:b} with no request"
        model.step(want, fire)
        await RisingEdge(dut.clk)
    assert all(counts), f"takes per requester {counts}: one never won"


@cocotb.test()
async def test_all_asking_go_in_turn_from_zero(dut):
    """Everyone asking from reset on, every grant taken: 0, 1, ..., N-1, 0, ...; with
    nothing taken, the grant stays."""
    n = bench_params().get("N", 4)
    await start(dut, ("req", "fire"))
    dut.req.value = (1 << n) - 1
    dut.fire.value = 1
    for k in range(2 * n + 1):
        await ReadOnly()
        assert int(dut.grant_idx.value) == k % n, f"grant {k}: {int(dut.grant_idx.value)}"
        await RisingEdge(dut.clk)
    dut.fire.value = 0
    await ReadOnly()
    held = int(dut.grant_idx.value)
    for _ in range(3):
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert int(dut.grant_idx.value) == held, "a grant not taken moved"
