"""The engine benchmark on a short transfer (the figures make bench reports)."""

from __future__ import annotations

import json

import pytest

from tb.flow import runner
from tb.flow.bench import suite as bench

KIB = 1024


def test_engine_streams_near_the_link_ceiling(sim: str, profile: str, tmp_path) -> None:
    """16 KiB each way in 4 KiB descriptors: the data arrives intact (the bench checks
    it), the streaming rate never beats the link's payload ceiling (it would mean the
    ceiling or the timing is wrong) and reaches most of it, and the driver-visible rate
    (Run to interrupt) stays below the streaming rate."""
    out = tmp_path / "bench.json"
    cases = [{"dir": d, "desc": 4 * KIB, "total": 16 * KIB} for d in ("H2C", "C2H")]
    results = runner.run(
        "bench_engine",
        sim=sim,
        profile=profile,
        module="tb.bench.engine",
        trace=False,
        extra_env={"BENCH_CASES": json.dumps(cases), "BENCH_OUT": str(out)},
    )
    assert not runner.failures(results), runner.failure_messages(results)
    rows = json.loads(out.read_text())
    assert [(r["dir"], r["descriptors"]) for r in rows] == [("H2C", 4), ("C2H", 4)]
    for r in rows:
        ceiling = bench.ceiling_mb_s(profile, r["mps"], r["dir"], r["tlp_header"])
        stream = r["stream_bytes"] * 1e3 / r["stream_ns"]
        run = r["total"] * 1e3 / r["run_ns"]
        assert r["tlp_payload_max"] <= r["mps"]
        assert stream <= ceiling * 1.001, (r["dir"], stream, ceiling)
        assert stream >= 0.85 * ceiling, (r["dir"], stream, ceiling)
        assert run < stream, (r["dir"], run, stream)


def test_gpu_copy_engine_and_doorbells(sim: str, tmp_path) -> None:
    """The GPU rows of make bench on 16 KiB: the copy engine's bytes reach the bypass BAR
    and come back (the bench checks them), its writes stream near the gen3x8 ceiling and
    never above it, and both doorbells arrive, the kernel's no later than the host's."""
    from tb.flow.bench.cases import GPU_BENCH_BUILD

    out = tmp_path / "gpu.json"
    results = runner.run(
        "bench_gpu",
        sim=sim,
        profile="gen3x8",
        module="tb.bench.gpu",
        overrides=GPU_BENCH_BUILD,
        toplevel=runner.DROPIN_TOPLEVEL,
        trace=False,
        extra_env={"BENCH_BYTES": str(16 * KIB), "BENCH_OUT": str(out)},
    )
    assert not runner.failures(results), runner.failure_messages(results)
    r = json.loads(out.read_text())
    w = r["to_bar"]
    ceiling = bench.ceiling_mb_s("gen3x8", r["mps"], "C2H", w["tlp_header"])
    stream = w["stream_bytes"] * 1e3 / w["stream_ns"]
    assert 0.85 * ceiling <= stream <= ceiling * 1.001, (stream, ceiling)
    d = r["doorbell_ns"]
    assert 0 < d["kernel"] <= d["host"], d


@pytest.mark.verilator
def test_rtl_alone_replays_the_recorded_run() -> None:
    """The RTL-alone row of make bench: the card's inputs recorded from a run of the
    engine pair and replayed by the C++ main give, cycle for cycle, the recorded run's
    RQ and CC handshakes (the replay raises otherwise), and it runs faster than the
    simulation it was recorded from, Python and all."""
    from tb.flow.bench import rtl_alone

    row = rtl_alone.measure("picoevb", 8 * KIB)
    assert row["model"] == bench.RTL_ALONE and row["bytes"] == 16 * KIB
    record = bench.OUT_DIR / "rtl-alone-picoevb.inputs"
    lines = record.read_text().splitlines()
    assert sum(line.endswith(" =rq") for line in lines) > 16 * KIB // 8 // 2
    runs = json.loads((bench.OUT_DIR / "rtl-alone-record-picoevb.json").read_text())
    model_cycles_per_s = (
        sum(r["sim_ns"] for r in runs) * 1e-9 * runs[0]["clk_hz"] / sum(r["wall_s"] for r in runs)
    )
    assert row["cycles_per_s"] > model_cycles_per_s
