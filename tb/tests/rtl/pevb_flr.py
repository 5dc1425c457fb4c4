"""pevb_flr alone: four streams of random packets (one to five beats, random valid and
ready) gated as the engine gates them (an input's hold drops its tready, an output's
hides its tvalid), and function-level resets and soft resets at random times, under
traffic. Checked against the rules: each stream is held only at a packet boundary, the
inputs (RC, CQ) before the outputs (RQ, CC), and an output never while a beat it showed
waits; with all four held, func_reset for RESET_CYCLES (a soft reset: for as long as
soft_reset stays, at least that, with soft_func_reset); then the streams are released,
and cfg_flr_done pulses once after an FLR, never after a soft reset."""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.config import bench_params
from tb.env.rtl_bench import start

STREAMS = ("rq", "cc", "rc", "cq")  # the engine's outputs first, then its inputs
OUTPUTS = ("rq", "cc")
RESETS = 16


class Stream:
    """A stream's packets and where it is in one."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.left = 0  # beats left of the packet being offered (0: none yet)
        self.inside = False  # some of a packet taken, not its last beat
        self.shown = False  # an output's beat shown and not taken

    def offer(self, held: bool, output: bool, busy: float) -> tuple[int, int, int]:
        """This cycle's (valid, ready, last) at the hard IP's side."""
        rng = self.rng
        want = self.shown or rng.random() < busy
        if output:
            valid = int(want and not held)
            ready = int(rng.random() < 0.7)
        else:
            valid = int(want)
            ready = int(rng.random() < 0.7 and not held)
        if valid and self.left == 0:
            self.left = rng.randrange(1, 6)
        return valid, ready, int(self.left == 1)

    def step(self, valid: int, ready: int, output: bool) -> None:
        if valid and ready:
            self.left -= 1
            self.inside = self.left > 0
        self.shown = output and bool(valid and not ready)


@cocotb.test()
async def test_resets_under_traffic(dut):
    cycles_param = bench_params().get("RESET_CYCLES", 16)
    rng = random.Random(cocotb.RANDOM_SEED)
    inputs = ["cfg_flr_in_process", "soft_reset"]
    inputs += [f"{s}_t{f}" for s in STREAMS for f in ("valid", "ready", "last")]
    await start(dut, inputs, reset="user_reset")
    streams = {s: Stream(rng) for s in STREAMS}
    held = dict.fromkeys(STREAMS, False)
    done_kinds: list[str] = []
    kind: str | None = None  # the reset under way: "flr" or "soft"
    phase = ""  # of that reset: hold, reset, release
    soft_len = 0  # cycles soft_reset stays high from the request
    asked = 0  # cycles since the request
    reset_cycles = 0
    busy = 0.6
    # cfg_flr_in_process as the hard IP drives it (PG213): high from an FLR's start until
    # it sees cfg_flr_done, and low for a cycle at least before the next FLR starts
    flr_line = driven = 0
    for cycle in range(200_000):
        if len(done_kinds) >= RESETS:
            break
        if kind is None and not driven and rng.random() < 0.01:
            kind, phase, asked, reset_cycles = rng.choice(["flr", "soft"]), "hold", 0, 0
            soft_len = rng.choice([1, cycles_param // 2, cycles_param + rng.randrange(60)])
            busy = rng.choice([0.2, 0.6, 1.0])
            flr_line = int(kind == "flr")
        dut.cfg_flr_in_process.value = driven = flr_line
        dut.soft_reset.value = int(kind == "soft" and asked < soft_len)
        offered = {}
        for s in STREAMS:
            v, r, last = streams[s].offer(held[s], s in OUTPUTS, busy)
            offered[s] = (v, r)
            for f, x in zip(("valid", "ready", "last"), (v, r, last), strict=True):
                getattr(dut, f"{s}_t{f}").value = x
        await ReadOnly()
        now = {s: bool(int(getattr(dut, f"{s}_hold").value)) for s in STREAMS}
        func = int(dut.func_reset.value)
        soft_func = int(dut.soft_func_reset.value)
        done = int(dut.cfg_flr_done.value)
        for s in STREAMS:
            if now[s] and not held[s]:
                assert kind is not None, f"cycle {cycle}: {s} held with no reset asked"
                assert not streams[s].inside, f"cycle {cycle}: {s} held inside a packet"
                assert not streams[s].shown, f"cycle {cycle}: {s} held with a beat shown"
                if s in OUTPUTS:
                    assert held["rc"] and held["cq"], f"cycle {cycle}: {s} held before inputs"
        assert soft_func == (func and kind == "soft"), f"cycle {cycle}: soft_func_reset"
        if func:
            assert all(now.values()), f"cycle {cycle}: func_reset with a stream open {now}"
            assert phase in ("hold", "reset"), f"cycle {cycle}: a second func_reset"
            phase = "reset"
            reset_cycles += 1
        elif phase == "reset":  # it ended
            if kind == "flr":
                assert reset_cycles == cycles_param, f"an FLR's reset of {reset_cycles} cycles"
            else:
                assert reset_cycles >= cycles_param, f"a soft reset of {reset_cycles} cycles"
                assert asked > soft_len, "a soft reset ended while soft_reset was high"
            phase = "release"
        if done:
            assert kind == "flr" and phase == "release", f"cycle {cycle}: cfg_flr_done now"
            flr_line = 0
        if phase == "release" and not any(now.values()):
            assert done == (kind == "flr"), f"cycle {cycle}: streams released, done {done}"
            done_kinds.append(kind)
            kind, phase = None, ""
        for s in STREAMS:
            streams[s].step(*offered[s], s in OUTPUTS)
        held = now
        asked += 1
        await RisingEdge(dut.clk)
    else:
        where = {s: (held[s], streams[s].left, streams[s].inside) for s in STREAMS}
        raise AssertionError(
            f"only {len(done_kinds)} resets finished; a {kind} reset in phase {phase!r},"
            f" asked {asked} cycles ago, the streams (held, beats left, inside) {where}"
        )
    assert {"flr", "soft"} <= set(done_kinds), f"resets run: {done_kinds}"
