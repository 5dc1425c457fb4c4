"""The picoevb-rdma driver model and the demo programs through the RTL (simulation).

Every cocotb test of tb/test_driver.py on the selected simulator/profile, the H2C2H
combinations and the cudaFree race on Verilator and gen3x8 too, and every demo program.
The full 4 MiB rdma-cuda demo is in the ``slow`` set.
"""

from __future__ import annotations

import re

import pytest

from tb import runner

DRIVER_TESTS = [
    "test_probe_led_card_info",
    "test_h2c2h_four_combinations",
    "test_ioctl_errors",
    "test_h2c_c2h_and_odd_surfaces",
    "test_cudafree_during_transfer",
    "test_lost_interrupt_times_out",
    "test_poll_mode_and_engine_error",
]


def _driver(name: str, sim: str, profile: str) -> None:
    runner.run_and_check(name, sim=sim, profile=profile, module="tb.test_driver",
                         repro=f"make test SIM={sim} PROFILE={profile} SEED={{seed}} "
                               f"TESTS='tests/test_driver_sim.py -k {name}'")


@pytest.mark.parametrize("name", DRIVER_TESTS)
def test_driver(name: str, sim: str, profile: str) -> None:
    _driver(name, sim, profile)


@pytest.mark.verilator
@pytest.mark.parametrize("name", ["test_h2c2h_four_combinations", "test_ioctl_errors"])
def test_driver_verilator(name: str, sim: str, profile: str) -> None:
    if sim == "verilator":
        pytest.skip("the full list already runs on Verilator")
    _driver(name, "verilator", profile)


@pytest.mark.parametrize("name", ["test_h2c2h_four_combinations",
                                  "test_cudafree_during_transfer"])
def test_driver_gen3x8(name: str, sim: str, profile: str) -> None:
    if profile == "gen3x8":
        pytest.skip("the full list already runs on gen3x8")
    _driver(name, sim, "gen3x8")


# demo, command line, lines its log must contain (regular expressions)
DEMOS = [
    ("rdma-cuda", "128x128", [r"rdma-cuda VERIFIED", r"driver: 4 chain runs"]),
    ("rdma-malloc", "64x128", [r"rdma-malloc VERIFIED"]),
    ("rdma-cuda-h2c-perf", "", [r"app: Bytes:65536 usecs:\d+ MB/s:\d+\.\d{6}$"]),
    ("rdma-cuda-c2h-perf", "", [r"app: Bytes:65536 usecs:\d+ MB/s:\d+\.\d{6}$"]),
    ("rdma-malloc-h2c-perf", "", [r"app: Bytes:65536 usecs:\d+ MB/s:\d+\.\d{6}$"]),
    ("rdma-malloc-c2h-perf", "12288", [r"app: Bytes:12288 usecs:\d+ MB/s:\d+\.\d{6}$"]),
    ("set-leds", "2", [r"LEDs now 010"]),
]


def run_demo(demo: str, args: str, expect: list[str], sim: str, profile: str) -> None:
    repro = f"make sim SIM={sim} PROFILE={profile} DEMO={demo} ARGS='{args}'"
    results = runner.run("demo", sim=sim, profile=profile, module="tb.demo",
                         extra_env={"DEMO": demo, "DEMO_ARGS": args})
    log = results.parent / "sim.log"
    assert not runner.failures(results), f"{demo} failed; log: {log}; reproduce: {repro}"
    text = log.read_text()
    for pattern in expect:
        assert re.search(pattern, text, re.M), f"{demo}: no line matching {pattern!r} in {log}"


@pytest.mark.parametrize(("demo", "args", "expect"), DEMOS, ids=[d[0] for d in DEMOS])
def test_demo(demo: str, args: str, expect: list[str], sim: str, profile: str) -> None:
    run_demo(demo, args, expect, sim, profile)


@pytest.mark.slow
@pytest.mark.parametrize("simulator", ["verilator", "icarus"])
def test_demo_rdma_cuda_full_surface(simulator: str, profile: str) -> None:
    """The original's full 1024 x 1024 (4 MiB) surface."""
    run_demo("rdma-cuda", "1024x1024", [r"rdma-cuda VERIFIED", r"result: 4194304 bytes"],
             simulator, profile)
