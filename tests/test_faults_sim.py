"""Fault injection and protocol checking in simulation (tb/test_faults.py)."""

from __future__ import annotations

import pytest

from tb import runner

TESTS = [
    "test_checker_sees_every_link",
    "test_checker_records_unexpected_completion",
    "test_checker_fails_the_test",
    "test_completion_faults",
    "test_descriptor_fetch_faults",
    "test_split_reorder_and_latency",
    "test_bar1_revoked_mid_chain",
    "test_run_cleared_mid_chain",
    "test_scoreboard_sees_silent_corruption",
]
VERILATOR = ["test_checker_sees_every_link", "test_completion_faults",
             "test_split_reorder_and_latency"]


def _run(name: str, sim: str, profile: str) -> None:
    runner.run_and_check(name, sim=sim, profile=profile, module="tb.test_faults",
                         repro=f"make test SIM={sim} PROFILE={profile} SEED={{seed}} "
                               f"TESTS='tests/test_faults_sim.py -k {name}'")


@pytest.mark.parametrize("name", TESTS)
def test_faults(name: str, sim: str, profile: str) -> None:
    _run(name, sim, profile)


@pytest.mark.verilator
@pytest.mark.parametrize("name", VERILATOR)
def test_faults_verilator(name: str, sim: str, profile: str) -> None:
    if sim == "verilator":
        pytest.skip("the full list already runs on Verilator")
    _run(name, "verilator", profile)


@pytest.mark.parametrize("name", ["test_completion_faults", "test_split_reorder_and_latency"])
def test_faults_gen3x8(name: str, sim: str, profile: str) -> None:
    if profile == "gen3x8":
        pytest.skip("the full list already runs on gen3x8")
    _run(name, sim, "gen3x8")
