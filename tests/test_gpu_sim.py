"""Peer-to-peer through the GPU endpoint model, on both topologies (simulation)."""

from __future__ import annotations

import os

import pytest

from tb import runner

TESTS = ["test_peer_read_write_bar1", "test_revoked_page_ur_and_dropped_write"]


@pytest.mark.parametrize("topology", ["switch", "root_ports"])
@pytest.mark.parametrize("name", TESTS)
def test_gpu_peer(name: str, topology: str, sim: str, profile: str) -> None:
    seed = int(os.environ.get("SEED", "1"))
    results = runner.run(name, sim=sim, profile=profile, module="tb.test_gpu_peer", seed=seed,
                         waves=os.environ.get("WAVES", "0") == "1",
                         extra_env={"PEVB_TOPOLOGY": topology})
    failed = runner.failures(results)
    repro = (f"PEVB_TOPOLOGY={topology} make test SIM={sim} PROFILE={profile} SEED={seed} "
             f"TESTS='tests/test_gpu_sim.py -k \"{name} and {topology}\"'")
    assert not failed, f"{failed} failed; log: {results.parent / 'sim.log'}; reproduce: {repro}"
