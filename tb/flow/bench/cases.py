"""The bench's simulation runs: one engine case list through ``tb.bench.engine``, and
where their figures land (shared by :mod:`tb.flow.bench.suite`, :mod:`tb.flow.bench.profile` and
:mod:`tb.flow.bench.rtl_alone`)."""

from __future__ import annotations

import json
import time

from .. import runner

OUT_DIR = runner.BUILD_ROOT / "bench"
MIB = 1 << 20
KIB = 1 << 10
ENGINE_RAM = {"RAM_SIZE": MIB}  # 1 MiB transfers need a 1 MiB card RAM
# the drop-in build of the GPU rows (tb/bench/gpu.py): its bypass BAR, 1 MiB at AXI address 0
GPU_BENCH_BUILD = {"AXIB": 1, "AXIB_BAR_ADDR_WIDTH": 20, "AXIB_AXI_BASE": 0}
RTL_ALONE = "RTL alone"  # the speed row of tb/flow/bench/rtl_alone.py


def case_started(tag: str) -> float:
    """Say which simulation runs now (the bench's progress); its start time."""
    print(f"  {tag} ...", flush=True)
    return time.perf_counter()


def case_done(tag: str, t0: float) -> None:
    print(f"  {tag}: {time.perf_counter() - t0:.0f} s", flush=True)


def run_bench(
    testcase: str,
    module: str,
    tag: str,
    *,
    sim: str,
    profile: str,
    overrides: dict | None = None,
    toplevel: str = runner.TOPLEVEL,
    extra_env: dict[str, str] | None = None,
    model: str | None = None,
):
    """Run one bench test (``$BENCH_OUT`` is ``<tag>.json`` in :data:`OUT_DIR`); what it
    wrote there. ``RuntimeError`` naming the log when it fails."""
    out = OUT_DIR / f"{tag}.json"
    out.unlink(missing_ok=True)
    t_case = case_started(tag)
    results = runner.run(
        testcase,
        sim=sim,
        profile=profile,
        module=module,
        overrides=overrides,
        toplevel=toplevel,
        test_dir=OUT_DIR / "runs" / tag,
        trace=False,
        model=model,
        extra_env={"BENCH_OUT": str(out)} | (extra_env or {}),
    )
    failed = runner.failures(results)
    if failed:
        raise RuntimeError(
            f"{tag}: {runner.failure_messages(results)} (log: {results.parent / 'sim.log'})"
        )
    case_done(tag, t_case)
    return json.loads(out.read_text())


def run_cases(
    sim: str,
    profile: str,
    mps: int,
    cases: list[dict],
    tag: str,
    extra_env: dict[str, str] | None = None,
    model: str | None = None,
) -> list[dict]:
    """The engine cases ``cases`` through ``tb.bench.engine`` at MPS ``mps``."""
    return run_bench(
        "bench_engine",
        f"{runner.PACKAGE}.bench.engine",
        tag,
        sim=sim,
        profile=profile,
        overrides=ENGINE_RAM,
        model=model,
        extra_env={"BENCH_CASES": json.dumps(cases), "BENCH_MPS": str(mps)} | (extra_env or {}),
    )


def pair(total: int, desc: int) -> list[dict]:
    return [{"dir": d, "desc": desc, "total": total} for d in ("H2C", "C2H")]
