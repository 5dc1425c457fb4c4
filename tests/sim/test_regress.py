"""The constrained-random regression (tb/tests/test_regress.py) as pytest items.

Default (:data:`tests.sim.plan.REGRESS_DEFAULT`): a few seeds on Icarus and on Verilator
(picoevb and gen3x8), 64 KiB card RAM, descriptors up to 64 KiB. Their coverage is merged
at the end of the session (see conftest.py). ``-m slow`` (``make regress``): as many seeds
as ``--seeds`` asks, with a 2 MiB card RAM and descriptors up to 1 MiB.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tb import runner
from tests.sim.plan import COVERAGE_DIR, DRIVER_REGRESS_DEFAULT, REGRESS_DEFAULT

MODULE = "tb.tests.test_regress"
BIG_RAM = 2 << 20


def run_seed(sim: str, profile: str, seed: int, steps: int, *, big: bool, repro: str) -> None:
    name = f"{sim}-{profile}-seed{seed}{'-big' if big else ''}"
    env = {
        "REGRESS_SEED": str(seed),
        "REGRESS_STEPS": str(steps),
        "REGRESS_NAME": name,
        "REGRESS_COVERAGE": str(Path(COVERAGE_DIR) / f"{name}.json"),
    }
    overrides = None
    if big:
        env.update({"REGRESS_MAX_LEN": str(1 << 20), "REGRESS_MAX_DESC": "100"})
        overrides = {"RAM_SIZE": BIG_RAM}
    runner.run_and_check(
        "test_random_chains",
        sim=sim,
        profile=profile,
        module=MODULE,
        extra_env=env,
        overrides=overrides,
        repro=repro,
    )


@pytest.mark.parametrize(
    "sim_name,prof,seed", REGRESS_DEFAULT, ids=[f"{s}-{p}-seed{n}" for s, p, n in REGRESS_DEFAULT]
)
def test_random_chains(sim_name: str, prof: str, seed: int) -> None:
    if sim_name == "verilator" and os.environ.get("PEVB_NO_VERILATOR"):
        pytest.skip("PEVB_NO_VERILATOR set")
    run_seed(
        sim_name,
        prof,
        seed,
        12,
        big=False,
        repro=f"make test TESTS='tests/sim/test_regress.py -k {sim_name}-{prof}-seed{seed}'",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "regress_seed" in metafunc.fixturenames:
        seeds = parse_seeds(metafunc.config.getoption("--seeds"))
        metafunc.parametrize("regress_seed", seeds, ids=[f"seed{s}" for s in seeds])


def parse_seeds(text: str) -> list[int]:
    """``"1-20"``, ``"3,7,9"`` or a mix."""
    out: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    if not out:
        raise pytest.UsageError(f"--seeds {text!r} names no seed")
    return out


@pytest.mark.slow
def test_random_regression(
    regress_seed: int, sim: str, profile: str, request: pytest.FixtureRequest
) -> None:
    steps = request.config.getoption("--steps")
    run_seed(
        sim,
        profile,
        regress_seed,
        steps,
        big=True,
        repro=f"make regress SIM={sim} PROFILE={profile} SEEDS={regress_seed} STEPS={steps}",
    )


@pytest.mark.parametrize(
    "sim_name,prof,seed",
    DRIVER_REGRESS_DEFAULT,
    ids=[f"{s}-{p}-seed{n}" for s, p, n in DRIVER_REGRESS_DEFAULT],
)
def test_random_driver(sim_name: str, prof: str, seed: int) -> None:
    name = f"driver-{sim_name}-{prof}-seed{seed}"
    env = {
        "REGRESS_SEED": str(seed),
        "REGRESS_STEPS": "10",
        "REGRESS_NAME": name,
        "REGRESS_COVERAGE": str(Path(COVERAGE_DIR) / f"{name}.json"),
    }
    runner.run_and_check(
        "test_random_driver",
        sim=sim_name,
        profile=prof,
        module=MODULE,
        extra_env=env,
        repro=f"make test TESTS='tests/sim/test_regress.py -k "
        f'"driver and {sim_name}-{prof}-seed{seed}"\'',
    )


@pytest.mark.slow
def test_random_driver_regression(
    regress_seed: int, sim: str, profile: str, request: pytest.FixtureRequest
) -> None:
    """The driver regression with transfers up to 1 MiB (H2C2H goes through the card RAM
    in double-buffered chunks)."""
    steps = request.config.getoption("--steps")
    name = f"driver-{sim}-{profile}-seed{regress_seed}-big"
    env = {
        "REGRESS_SEED": str(regress_seed),
        "REGRESS_STEPS": str(steps),
        "REGRESS_NAME": name,
        "REGRESS_MAX_LEN": str(1 << 20),
        "REGRESS_COVERAGE": str(Path(COVERAGE_DIR) / f"{name}.json"),
    }
    runner.run_and_check(
        "test_random_driver",
        sim=sim,
        profile=profile,
        module=MODULE,
        extra_env=env,
        repro=f"make regress SIM={sim} PROFILE={profile} SEEDS={regress_seed} STEPS={steps}",
    )
