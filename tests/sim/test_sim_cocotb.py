"""Every cocotb test of ``tb/tests`` as a pytest item (the list and the subsets are in
:mod:`tests.sim.plan`). Item ids read ``<module>.<test>-<simulator>-<profile>[-variant]``,
for example ``engine.test_identifiers-icarus-picoevb``; ``-k`` selects on them. A failure
prints the command that reproduces it."""

from __future__ import annotations

import pytest

from tb import runner
from tests.sim import plan


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    sim = metafunc.config.getoption("--sim")
    profile = metafunc.config.getoption("--profile")
    params = [
        pytest.param(c, id=c.id, marks=[getattr(pytest.mark, m) for m in c.marks])
        for c in plan.cases(sim, profile)
    ]
    metafunc.parametrize("case", params)


def test_cocotb(case: plan.Case, sim: str, profile: str) -> None:
    runner.run_and_check(
        case.test,
        sim=case.sim,
        profile=case.profile,
        module=case.module_path,
        extra_env=dict(case.env),
        overrides=dict(case.overrides) or None,
        toplevel=case.toplevel,
        user_sources=plan.USER_SOURCES.get(case.toplevel, ()),
        repro=f"make test SIM={sim} PROFILE={profile} SEED={{seed}} "
        f"TESTS=\"tests/sim/test_sim_cocotb.py -k '{case.id}'\"",
    )
