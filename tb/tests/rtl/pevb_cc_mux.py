"""pevb_cc_mux alone: two sources of random completions (one to several beats), random
gaps on each and back-pressure on the output, checked against the model: a TLP passes
whole, never interleaved with the other source's; a beat shown stays, unchanged, until
taken; when both wait at a TLP boundary the source that did not go last goes first (after
reset, source 0); every beat of each source comes out, in order, unchanged."""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.config import bench_params
from tb.env.rtl_bench import start

TLPS_PER_SOURCE = 150
TIMEOUT_CYCLES = 50_000


def tlp_beats(rng: random.Random, keep: int, user_width: int) -> list[tuple[int, int, int, int]]:
    """A random completion's beats: (data, keep, last, user)."""
    n = rng.choice([1, 1, rng.randrange(1, 5), rng.randrange(1, 20)])
    beats = []
    for i in range(n):
        lanes = keep if i < n - 1 else rng.randrange(1, keep + 1)
        data = rng.getrandbits(32 * keep)
        beats.append((data, (1 << lanes) - 1, int(i == n - 1), rng.getrandbits(user_width)))
    return beats


@cocotb.test()
async def test_two_sources_take_turns(dut):
    width = bench_params().get("AXIS_PCIE_DATA_WIDTH", 64)
    keep = width // 32
    user_width = 33 if width < 512 else 81
    rng = random.Random(cocotb.RANDOM_SEED)
    inputs = [f"s_axis_cc_t{n}" for n in ("data", "keep", "valid", "last", "user")]
    await start(dut, [*inputs, "m_axis_cc_tready"])
    queues = [deque(), deque()]
    for s in (0, 1):
        for _ in range(TLPS_PER_SOURCE):
            queues[s].extend(tlp_beats(rng, keep, user_width))
    gap = [rng.choice([0.0, 0.3, 0.8]), rng.choice([0.0, 0.3, 0.8])]
    ready_p = rng.choice([1.0, 0.6, 0.3])
    valid = [False, False]
    prio, lock, sel_locked = 0, False, 0
    shown = None
    both_waiting = 0
    for cycle in range(TIMEOUT_CYCLES):
        for s in (0, 1):
            if not valid[s] and queues[s] and rng.random() >= gap[s]:
                valid[s] = True
        fields = [0, 0, 0, 0, 0]  # data, keep, valid, last, user of both sources
        for s in (0, 1):
            if valid[s]:
                data, kp, last, user = queues[s][0]
                fields[0] |= data << (s * width)
                fields[1] |= kp << (s * keep)
                fields[2] |= 1 << s
                fields[3] |= last << s
                fields[4] |= user << (s * user_width)
        for name, value in zip(inputs, fields, strict=True):
            getattr(dut, name).value = value
        ready = int(rng.random() < ready_p)
        dut.m_axis_cc_tready.value = ready
        await ReadOnly()
        if lock:
            want_sel = sel_locked
        else:
            want_sel = int(valid[1] and (not valid[0] or prio == 1))
            if valid[0] and valid[1]:
                both_waiting += 1
        # a waiting source is taken only when it is the one shown and the output takes it
        tready = int(dut.s_axis_cc_tready.value)
        for s in (0, 1):
            if valid[s]:
                want = int(s == want_sel and ready)
                assert tready >> s & 1 == want, f"cycle {cycle}: tready {tready:b}, source {s}"
        out_valid = int(dut.m_axis_cc_tvalid.value)
        assert out_valid == int(valid[want_sel]), f"cycle {cycle}: tvalid {out_valid}"
        if out_valid:
            out = (
                int(dut.m_axis_cc_tdata.value),
                int(dut.m_axis_cc_tkeep.value),
                int(dut.m_axis_cc_tlast.value),
                int(dut.m_axis_cc_tuser.value),
            )
            assert out == queues[want_sel][0], f"cycle {cycle}: source {want_sel}'s beat wrong"
            if shown is not None:
                assert out == shown, f"cycle {cycle}: a beat shown changed before it was taken"
            if ready:
                last = out[2]
                queues[want_sel].popleft()
                valid[want_sel] = False
                shown = None
                if last:
                    lock, prio = False, 1 - want_sel
                else:
                    lock, sel_locked = True, want_sel
            else:
                shown = out
                lock, sel_locked = True, want_sel
        else:
            shown = None

        await RisingEdge(dut.clk)
        if not queues[0] and not queues[1]:
            break
    else:
        raise AssertionError(
            f"beats left after {TIMEOUT_CYCLES} cycles: {[len(q) for q in queues]}"
        )
    assert both_waiting, "the two sources never waited together"
