"""Every cocotb test of ``tb/tests`` as a pytest item (the list and the subsets are in
:mod:`tests.sim.plan`). Item ids read ``<module>.<test>-<simulator>-<profile>[-variant]``,
for example ``engine.test_identifiers-icarus-picoevb``; ``-k`` selects on them. The items
of one configuration share simulator launches (:mod:`tests.sim.launches`). A failure
prints the command that reproduces it."""

from __future__ import annotations

import os

import pytest

from tb.flow import runner
from tests.sim import launches, plan


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


@pytest.fixture(scope="session")
def shared_launches(request: pytest.FixtureRequest) -> launches.Launches:
    return launches.Launches(request.session)


def test_cocotb(
    case: plan.Case,
    sim: str,
    profile: str,
    request: pytest.FixtureRequest,
    shared_launches: launches.Launches,
) -> None:
    shared = shared_launches.outcome(request.node.nodeid)
    if shared is None:  # a launch of its own (or its shared launch did not report it)
        _run_alone(case, _repro(sim, profile, [case.id]))
        return
    if shared.passed:
        return
    try:  # failed in the shared launch: does it fail alone too?
        _run_alone(case, _repro(sim, profile, [case.id]))
    except AssertionError as alone:  # its message has its log and the command
        verdict = f"alone it fails too: {alone}"
    else:
        before = shared.tests[: shared.tests.index(case.test)]
        if before:  # the command runs them in one launch again, in the same order
            ids = [case.id.replace(f".{case.test}-", f".{t}-", 1) for t in before]
            verdict = (
                f"alone it passes: state left by a test before it in the launch "
                f"({', '.join(before)}), or a failure that does not repeat\n"
                f"reproduce: {_repro(sim, profile, [*ids, case.id])}"
            )
        else:
            verdict = (
                "alone it passes, though it ran first in the launch: a failure that does "
                f"not repeat\nreproduce: {_repro(sim, profile, [case.id])}"
            )
        verdict = verdict.format(seed=runner.env_seed())
    raise AssertionError(
        f"{case.test} failed in a launch of {len(shared.tests)} tests: {shared.message}\n"
        f"log: {shared.log}\n{verdict}"
    )


def _repro(sim: str, profile: str, ids: list[str]) -> str:
    """The command that runs these items (``{seed}`` left to fill in)."""
    xdma = os.environ.get("XDMA", "").strip()
    return (
        f"make test SIM={sim} PROFILE={profile} SEED={{seed}} "
        + (f"XDMA='{xdma}' " if xdma else "")
        + f"TESTS=\"tests/sim/test_sim_cocotb.py -k '{' or '.join(ids)}'\""
    )


def _run_alone(case: plan.Case, repro: str) -> None:
    """Run ``case`` in a launch of its own; a failure raises with the log and ``repro``."""
    runner.run_and_check(case.test, repro=repro, **case.run_settings())
