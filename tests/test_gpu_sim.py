"""Peer-to-peer through the GPU endpoint model, on both topologies (simulation)."""

from __future__ import annotations

import pytest

from tb import runner

TESTS = ["test_peer_read_write_bar1", "test_revoked_page_ur_and_dropped_write"]


@pytest.mark.parametrize("topology", ["switch", "root_ports"])
@pytest.mark.parametrize("name", TESTS)
def test_gpu_peer(name: str, topology: str, sim: str, profile: str) -> None:
    runner.run_and_check(name, sim=sim, profile=profile, module="tb.test_gpu_peer",
                         extra_env={"PEVB_TOPOLOGY": topology},
                         repro=f"make test SIM={sim} PROFILE={profile} "
                               f"SEED={{seed}} TESTS='tests/test_gpu_sim.py -k "
                               f"\"{name} and {topology}\"'")


def test_trace_and_report(sim: str, profile: str) -> None:
    """The TLP trace and transfer report of a peer transfer (tb/test_trace.py)."""
    runner.run_and_check("test_trace_of_a_peer_transfer", sim=sim, profile=profile,
                         module="tb.test_trace",
                         repro=f"make test SIM={sim} PROFILE={profile} SEED={{seed}} "
                               "TESTS='tests/test_gpu_sim.py -k test_trace_and_report'")
