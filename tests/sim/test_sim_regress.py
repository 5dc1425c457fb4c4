"""The constrained-random regressions (tb/tests/cocotb_regress.py: chains and the driver;
tb/tests/cocotb_resets.py: every reset and stop on every interface) as pytest items.

Default (:data:`tests.sim.plan.REGRESS_DEFAULT`): a few seeds on Icarus and on Verilator
(picoevb and gen3x8), 64 KiB card RAM, descriptors up to 64 KiB. Their coverage is merged
at the end of the session (see conftest.py). The long regression (``make regress``: many
seeds, 2 MiB card RAM, descriptors up to 1 MiB) runs on Dask (tb/flow/farm/).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tb.flow import runner
from tb.flow.farm.jobs import (
    COVERAGE_ENV,
    KIND_MODULES,
    KIND_TOPLEVELS,
    MODULE,
    TESTCASES,
    regress_env,
    regress_overrides,
)
from tests.sim.plan import (
    COVERAGE_DIR,
    DRIVER_REGRESS_DEFAULT,
    REGRESS_DEFAULT,
    RESET_REGRESS_DEFAULT,
)


def run_seed(kind: str, sim: str, profile: str, seed: int, steps: int, name: str) -> None:
    env = regress_env(kind, seed, steps, name, big=False)
    env[COVERAGE_ENV] = str(Path(COVERAGE_DIR) / f"{name}.json")
    select = f"{sim}-{profile}-seed{seed}"
    select = f'"{kind} and {select}"' if kind != "chains" else select
    runner.run_and_check(
        TESTCASES[kind],
        sim=sim,
        profile=profile,
        module=KIND_MODULES.get(kind, MODULE),
        toplevel=KIND_TOPLEVELS.get(kind, runner.TOPLEVEL),
        overrides=regress_overrides(kind, big=False),
        extra_env=env,
        repro=f"make test TESTS='tests/sim/test_sim_regress.py -k {select}'",
    )


@pytest.mark.parametrize(
    "sim_name,prof,seed", REGRESS_DEFAULT, ids=[f"{s}-{p}-seed{n}" for s, p, n in REGRESS_DEFAULT]
)
def test_random_chains(sim_name: str, prof: str, seed: int) -> None:
    if sim_name == "verilator" and os.environ.get("PEVB_NO_VERILATOR"):
        pytest.skip("PEVB_NO_VERILATOR set")
    run_seed("chains", sim_name, prof, seed, 12, f"{sim_name}-{prof}-seed{seed}")


@pytest.mark.parametrize(
    "sim_name,prof,seed",
    DRIVER_REGRESS_DEFAULT,
    ids=[f"{s}-{p}-seed{n}" for s, p, n in DRIVER_REGRESS_DEFAULT],
)
def test_random_driver(sim_name: str, prof: str, seed: int) -> None:
    run_seed("driver", sim_name, prof, seed, 10, f"driver-{sim_name}-{prof}-seed{seed}")


@pytest.mark.parametrize(
    "sim_name,prof,seed",
    RESET_REGRESS_DEFAULT,
    ids=[f"{s}-{p}-seed{n}" for s, p, n in RESET_REGRESS_DEFAULT],
)
def test_random_resets(sim_name: str, prof: str, seed: int) -> None:
    run_seed("resets", sim_name, prof, seed, 1, f"resets-{sim_name}-{prof}-seed{seed}")
