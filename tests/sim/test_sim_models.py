"""The two models users choose against each other: the transactor model (its own build,
tb/models/transactors.py) against cocotbext-pcie's own (exact); and the beat-level model
a build without the transactors runs by itself (tb/models/streams.py) against exact too.
The same simulation in each gives the same data (each run checks its own), the same TLPs
on every link in the same order with the same fields (the trace, record by record, times
aside), the same beats at the RTL's ports (tb/debug/beats.py), and the same efficiency
within 1%. The protocol checker runs in all (a violation fails the run). Where a beat's
cycle differs between the models, by how much is asserted (docs/internals.md says why)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from tb.config.choices import PLUGINS_ENV
from tb.debug.beats import BEATS_ENV, read_beats
from tb.debug.records import read_trace
from tb.flow import runner
from tb.models.choice import BEAT_MODEL, EXACT_MODEL, TRANSACTOR_MODEL

# every model a system runs: the two users choose, and the beat-level one
RUNS = (TRANSACTOR_MODEL, BEAT_MODEL, EXACT_MODEL)

KIB = 1024


def _by_link(records: list[dict]) -> dict[tuple[str, str, str], list[dict]]:
    """Each link, direction and requester's records in order, without their times (a
    completion goes with the requester it answers); the descriptor and chain events on
    a stream of their own."""
    out: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for rec in records:
        key = (rec["link"], rec["dir"], rec["req"]) if "link" in rec else ("events", "", "")
        out[key].append({k: v for k, v in rec.items() if k != "t"})
    return out


def assert_same_tlps(this: list[dict], exact: list[dict]) -> None:
    """Every link and direction carries the same TLPs of each requester in the same
    order. Two requesters' TLPs on one link (the host polling a register while the FPGA
    reads descriptors) may interleave differently: the models' timings differ by a few
    picoseconds, and which of two TLPs ready within them goes first is timing, not
    protocol."""
    a, b = _by_link(this), _by_link(exact)
    assert sorted(a) == sorted(b), (sorted(a), sorted(b))
    for key in b:
        for n, (x, y) in enumerate(zip(a[key], b[key], strict=False)):
            assert x == y, f"{key} TLP {n}: {x} != exact {y}"
        assert len(a[key]) == len(b[key]), (key, len(a[key]), len(b[key]))


# The models' beats differ in cycle: the exact link's DLLPs take the wire at other
# moments on a slow link (x1), and after the first edge on which RQ and CC both end a
# TLP the transactor model may hand those two TLPs to the hard IP in either order
# (docs/internals.md, "the transactor model"), and what follows shifts: by at most this
# many user-clock cycles in the cases here.
MAX_SHIFT = 128


def first_tie(beats: dict[str, list[dict]]) -> float:
    """The first cycle on which RQ and CC both carry the last beat of a TLP (inf: none)."""
    ends = [{b["c"] for b in beats[s] if b["l"]} for s in ("m_axis_rq", "m_axis_cc")]
    return min(ends[0] & ends[1], default=float("inf"))


def assert_same_beats(
    a: dict[str, list[dict]], b: dict[str, list[dict]], cycles: bool = True
) -> dict[str, int]:
    """Each stream carries the same beats in the same order (with ``cycles``: on the
    same cycles up to the first RQ/CC tie of ``b``); the largest difference of a beat's
    cycle, by stream."""
    tie = first_tie(b) if cycles else -1
    shifts = {}
    for stream in b:
        assert len(a[stream]) == len(b[stream]), (stream, len(a[stream]), len(b[stream]))
        shifts[stream] = 0
        for n, (x, y) in enumerate(zip(a[stream], b[stream], strict=True)):
            assert {k: v for k, v in x.items() if k != "c"} == {
                k: v for k, v in y.items() if k != "c"
            }, f"{stream} beat {n}: {x} != {y}"
            if y["c"] <= tie:
                assert x["c"] == y["c"], f"{stream} beat {n} before the first tie: {x} vs {y}"
            shifts[stream] = max(shifts[stream], abs(x["c"] - y["c"]))
    return shifts


def assert_same_timing(run, beats) -> None:
    """The transactor model's run against the beat-level model's (the same TLP-level
    links): every beat on the same cycle up to the first RQ/CC tie, and within
    :data:`MAX_SHIFT` cycles after it."""
    shifts = assert_same_beats(run[1], beats[1])
    assert max(shifts.values()) <= MAX_SHIFT, shifts


def assert_like_exact(run, exact) -> None:
    """A model's run against the exact model's: the same TLPs, the same beats, each
    within :data:`MAX_SHIFT` cycles."""
    assert_same_tlps(run[0], exact[0])
    shifts = assert_same_beats(run[1], exact[1], cycles=False)
    assert max(shifts.values()) <= MAX_SHIFT, shifts


def _run(model: str, module: str, test: str, sim: str, profile: str, env: dict, tmp: Path):
    """One run in ``model``: its TLP trace and its beat log."""
    results = runner.run(
        test,
        sim=sim,
        profile=profile,
        module=module,
        trace=True,
        test_dir=tmp / model,
        model=model,
        extra_env={
            PLUGINS_ENV: "tb.debug.beats",
            BEATS_ENV: str(tmp / model / "beats.jsonl"),
            **env,
        },
    )
    assert not runner.failures(results), runner.failure_messages(results)
    beats = read_beats(tmp / model / "beats.jsonl")
    assert sum(map(len, beats.values())) > 0
    return read_trace(tmp / model / "tlp_trace.jsonl"), beats


def test_engine_equivalent(sim: str, profile: str, tmp_path: Path) -> None:
    """Descriptor chains each way: same TLPs on every link, efficiency within 1%."""
    rows = {}
    traces = {}
    for model in RUNS:
        out = tmp_path / f"{model}.json"
        cases = [{"dir": d, "desc": 4 * KIB, "total": 32 * KIB} for d in ("H2C", "C2H")]
        env = {"BENCH_CASES": json.dumps(cases), "BENCH_OUT": str(out)}
        traces[model] = _run(model, "tb.bench.engine", "bench_engine", sim, profile, env, tmp_path)
        rows[model] = json.loads(out.read_text())
    assert len(traces[EXACT_MODEL][0]) > 100
    for model in (TRANSACTOR_MODEL, BEAT_MODEL):
        assert_like_exact(traces[model], traces[EXACT_MODEL])
        for this, exact in zip(rows[model], rows[EXACT_MODEL], strict=True):
            for key in ("run_ns", "stream_ns"):
                assert this[key] == pytest.approx(exact[key], rel=0.01), (model, this["dir"], key)
    assert_same_timing(traces[TRANSACTOR_MODEL], traces[BEAT_MODEL])


def test_gpu_demo_equivalent(sim: str, profile: str, tmp_path: Path) -> None:
    """The rdma-cuda demo through the switch (GPU BAR1 peer traffic, MSIs, the driver's
    register accesses): same TLPs on every link, including the GPU's and the switch's."""
    traces = {}
    for model in RUNS:
        env = {"DEMO": "rdma-cuda", "DEMO_ARGS": "64x64"}
        traces[model] = _run(model, "tb.apps.demo", "demo", sim, profile, env, tmp_path)
    links = {r["link"] for r in traces["exact"][0] if "link" in r}
    assert {"fpga", "gpu", "switch"} <= links, links
    for model in (TRANSACTOR_MODEL, BEAT_MODEL):
        assert_like_exact(traces[model], traces[EXACT_MODEL])
    assert_same_timing(traces[TRANSACTOR_MODEL], traces[BEAT_MODEL])


def _test_windows(results) -> dict[str, tuple[float, float]]:
    """Each test of a results file: its simulated start and stop, in ns."""
    import xml.etree.ElementTree as ET

    out = {}
    for case in ET.parse(results).iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        out[case.get("name")] = (float(props["sim_time_start"]), float(props["sim_time_stop"]))
    return out


# run one after another in one simulator, in the module's order (cocotb's): register
# accesses, then chains with stalls on every stream, then both directions at once
ONE_LAUNCH = ["test_register_access", "test_idle_backpressure", "test_concurrent_h2c_c2h"]


@pytest.mark.parametrize("model", RUNS)
def test_tests_in_one_simulator(model: str, sim: str, profile: str, tmp_path: Path) -> None:
    """Several tests in one simulator launch (as cocotb runs a whole module) pass in
    every model. The RTL and, in the transactor model, the transactors keep their state
    from the test before while the hard-IP model starts anew: a transactor's pointers,
    its pause pattern and the bus values it drives carry on. The TLP trace holds every
    test's TLPs, in one readable file."""
    results = runner.run(
        ONE_LAUNCH,
        sim=sim,
        profile=profile,
        module="tb.tests.cocotb_engine",
        trace=True,
        test_dir=tmp_path,
        model=model,
    )
    assert not runner.failures(results), runner.failure_messages(results)
    windows = _test_windows(results)
    assert sorted(windows) == sorted(ONE_LAUNCH)
    times = [r["t"] for r in read_trace(tmp_path / "tlp_trace.jsonl") if "link" in r]
    for test, (start, stop) in windows.items():
        mine = [t for t in times if start <= t <= stop]
        assert len(mine) > 20, (test, start, stop, len(mine))
