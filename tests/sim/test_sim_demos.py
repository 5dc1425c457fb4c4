"""The picoevb demo programs through the driver model and the RTL, each checked by the
lines of its log (``make sim`` runs the same). The full 4 MiB rdma-cuda demo is in the
``slow`` set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tb.apps.progress import Status
from tb.flow import demo as sim_cli
from tb.flow import runner

# demo, command line, lines its log must contain (regular expressions)
DEMOS = [
    ("rdma-cuda", "128x128", [r"rdma-cuda VERIFIED", r"driver: 4 chain runs"]),
    # the surfaces exported as dma-bufs and imported by fd (a model extension)
    (
        "rdma-cuda",
        "128x128 --dmabuf",
        [r"rdma-cuda VERIFIED", r"surfaces pinned by dma-buf", r"driver: 4 chain runs"],
    ),
    ("rdma-malloc", "64x128", [r"rdma-malloc VERIFIED"]),
    ("rdma-cuda-h2c-perf", "", [r"app: Bytes:65536 usecs:\d+ MB/s:\d+\.\d{6}$"]),
    ("rdma-cuda-c2h-perf", "", [r"app: Bytes:65536 usecs:\d+ MB/s:\d+\.\d{6}$"]),
    ("rdma-malloc-h2c-perf", "", [r"app: Bytes:65536 usecs:\d+ MB/s:\d+\.\d{6}$"]),
    ("rdma-malloc-c2h-perf", "12288", [r"app: Bytes:12288 usecs:\d+ MB/s:\d+\.\d{6}$"]),
    ("set-leds", "2", [r"LEDs now 010"]),
]


def run_demo(demo: str, args: str, expect: list[str], sim: str, profile: str) -> None:
    repro = f"make sim SIM={sim} PROFILE={profile} DEMO={demo} ARGS='{args}'"
    results = runner.run(
        "demo",
        sim=sim,
        profile=profile,
        module="tb.apps.demo",
        extra_env={"DEMO": demo, "DEMO_ARGS": args},
    )
    log = results.parent / "sim.log"
    assert not runner.failures(results), f"{demo} failed; log: {log}; reproduce: {repro}"
    text = log.read_text()
    for pattern in expect:
        assert re.search(pattern, text, re.M), f"{demo}: no line matching {pattern!r} in {log}"


@pytest.mark.parametrize(
    ("demo", "args", "expect"),
    DEMOS,
    ids=[d[0] + ("-dmabuf" if "--dmabuf" in d[1] else "") for d in DEMOS],
)
def test_demo(demo: str, args: str, expect: list[str], sim: str, profile: str) -> None:
    run_demo(demo, args, expect, sim, profile)


@pytest.mark.slow
@pytest.mark.parametrize("simulator", ["verilator", "icarus"])
def test_demo_rdma_cuda_full_surface(simulator: str, profile: str) -> None:
    """The original's full 1024 x 1024 (4 MiB) surface."""
    run_demo(
        "rdma-cuda",
        "1024x1024",
        [r"rdma-cuda VERIFIED", r"result: 4194304 bytes"],
        simulator,
        profile,
    )


def test_make_sim_streams_and_reports_progress(sim: str, profile: str, capsys) -> None:
    """``make sim``'s own front end: the log path comes first, the demo's lines stream in
    order, and the simulation's progress file ends complete (all bytes, all descriptors)."""
    status = sim_cli.main(["--sim", sim, "--profile", profile, "rdma-cuda", "128x128"])
    out = capsys.readouterr().out.splitlines()
    assert status == 0, "\n".join(out)
    order = ["log: ", "  running rdma-cuda 128x128", "  driver: ", "  rdma-cuda VERIFIED"]
    at = [next(i for i, line in enumerate(out) if line.startswith(p)) for p in order]
    assert at == sorted(at) and at[0] == 1, out  # after the "running ... through" header
    log = out[1].removeprefix("log: ")
    final = Status.read(Path(log).with_name("progress.json"))
    assert final is not None and final.done
    assert final.bytes == final.total_bytes == 2 * 4 * 128 * 128
    assert final.descriptors == 4 and final.sim_ns > 0
