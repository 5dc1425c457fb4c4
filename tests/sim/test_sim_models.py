"""The lean model against the exact one (tb/ext/lean.py): the same simulation in both
configurations gives the same data (each run checks its own), the same TLPs on every
link in the same order with the same fields (the trace, record by record, times aside),
and the same efficiency within 1%. The protocol checker runs in both (a violation fails
the run)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from tb import runner
from tb.debug.trace import read_trace
from tb.env.profiles import MODEL_ENV
from tb.ext.lean import MODELS

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


def assert_same_tlps(lean: list[dict], exact: list[dict]) -> None:
    """Every link and direction carries the same TLPs of each requester in the same
    order. Two requesters' TLPs on one link (the host polling a register while the FPGA
    reads descriptors) may interleave differently: the models' timings differ by a few
    picoseconds, and which of two TLPs ready within them goes first is timing, not
    protocol."""
    a, b = _by_link(lean), _by_link(exact)
    assert sorted(a) == sorted(b), (sorted(a), sorted(b))
    for key in b:
        for n, (x, y) in enumerate(zip(a[key], b[key], strict=False)):
            assert x == y, f"{key} TLP {n}: lean {x} != exact {y}"
        assert len(a[key]) == len(b[key]), (key, len(a[key]), len(b[key]))


def _run(model: str, module: str, test: str, sim: str, profile: str, env: dict, tmp: Path):
    results = runner.run(
        test,
        sim=sim,
        profile=profile,
        module=module,
        trace=True,
        test_dir=tmp / model,
        extra_env={MODEL_ENV: model, **env},
    )
    assert not runner.failures(results), runner.failure_messages(results)
    return read_trace(tmp / model / "tlp_trace.jsonl")


def test_engine_equivalent(sim: str, profile: str, tmp_path: Path) -> None:
    """Descriptor chains each way: same TLPs on every link, efficiency within 1%."""
    rows = {}
    traces = {}
    for model in MODELS:
        out = tmp_path / f"{model}.json"
        cases = [{"dir": d, "desc": 4 * KIB, "total": 32 * KIB} for d in ("H2C", "C2H")]
        env = {"BENCH_CASES": json.dumps(cases), "BENCH_OUT": str(out)}
        traces[model] = _run(model, "tb.bench.engine", "bench_engine", sim, profile, env, tmp_path)
        rows[model] = json.loads(out.read_text())
    assert len(traces["exact"]) > 100
    assert_same_tlps(traces["lean"], traces["exact"])
    for lean, exact in zip(rows["lean"], rows["exact"], strict=True):
        for key in ("run_ns", "stream_ns"):
            assert lean[key] == pytest.approx(exact[key], rel=0.01), (lean["dir"], key)


def test_gpu_demo_equivalent(sim: str, profile: str, tmp_path: Path) -> None:
    """The rdma-cuda demo through the switch (GPU BAR1 peer traffic, MSIs, the driver's
    register accesses): same TLPs on every link, including the GPU's and the switch's."""
    traces = {}
    for model in MODELS:
        env = {"DEMO": "rdma-cuda", "DEMO_ARGS": "64x64"}
        traces[model] = _run(model, "tb.apps.demo", "demo", sim, profile, env, tmp_path)
    links = {r["link"] for r in traces["exact"] if "link" in r}
    assert {"fpga", "gpu", "switch"} <= links, links
    assert_same_tlps(traces["lean"], traces["exact"])
