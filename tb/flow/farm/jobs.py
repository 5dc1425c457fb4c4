"""What a seed is, for the client and the worker alike: :class:`SeedJob` (which cocotb test
on which build, its environment, limit and reproduce command) and :class:`SeedResult` (what
comes back, by value), the statuses, and the lists of jobs the command line makes: the
built-in regression's kinds (:func:`regression_jobs`) or a user's own tests
(:func:`user_jobs`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ...config.choices import DEFAULT_PROFILE, DEFAULT_SIM
from ...regress.resets import RESET_BUILD
from .. import runner

# the kinds of seed the built-in regression has: the engine's random chains (descriptors to
# 1 MiB, 2 MiB card RAM), the driver model's random ioctls (transfers to 1 MiB), and every
# reset and stop on every interface of the drop-in (tb/regress/resets.py)
MODULE = f"{runner.PACKAGE}.tests.cocotb_regress"


KINDS = ("chains", "driver", "resets")


TESTCASES = {
    "chains": "test_random_chains",
    "driver": "test_random_driver",
    "resets": "test_random_resets",
}


# the cocotb module and toplevel of a kind, where they are not MODULE and the card
KIND_MODULES = {"resets": f"{runner.PACKAGE}.tests.cocotb_resets"}


KIND_TOPLEVELS = {"resets": runner.DROPIN_TOPLEVEL}


# a chains seed runs about 8x as long as a driver seed, a resets seed about 3x
KIND_PRIORITY = {"chains": 2, "resets": 1, "driver": 0}


BIG_RAM = 2 << 20


BIG_LEN = 1 << 20


# what a seed's test is told through its environment (tb/tests/cocotb_regress.py reads them)
SEED_ENV = "REGRESS_SEED"


STEPS_ENV = "REGRESS_STEPS"


NAME_ENV = "REGRESS_NAME"


COVERAGE_ENV = "REGRESS_COVERAGE"


# statuses of a seed
PASSED, FAILED, ERROR, TIMEOUT, LOST, STOPPED = (
    "passed",
    "failed",
    "error",
    "timeout",
    "lost",
    "stopped",
)


DEFAULT_LIMIT_S = 1800.0


class FarmError(Exception):
    """A regression that cannot start: no Dask, a bad option, an unreachable scheduler."""


def seed_env(seed: int, steps: int, name: str) -> dict[str, str]:
    """What every seed's test is told: its seed, its steps and its name."""
    return {SEED_ENV: str(seed), STEPS_ENV: str(steps), NAME_ENV: name}


def regress_env(kind: str, seed: int, steps: int, name: str, *, big: bool) -> dict[str, str]:
    """The environment of one random seed of ``kind`` (:data:`KINDS`); ``big``:
    the long regression's sizes (descriptors and transfers to 1 MiB)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}: choose from {', '.join(KINDS)}")
    env = seed_env(seed, steps, name)
    if big:
        env["REGRESS_MAX_LEN"] = str(BIG_LEN)
        if kind == "chains":
            env["REGRESS_MAX_DESC"] = "100"
    return env


def regress_overrides(kind: str, *, big: bool) -> dict[str, int] | None:
    """The build options a seed of ``kind`` needs on top of the profile's."""
    if kind == "resets":
        return dict(RESET_BUILD)
    return {"RAM_SIZE": BIG_RAM} if big and kind == "chains" else None


@dataclass(frozen=True)
class SeedJob:
    """One seed: which cocotb test on which build, its environment and its limits."""

    name: str
    seed: int
    testcase: str
    module: str = MODULE
    toplevel: str = runner.TOPLEVEL
    sim: str = DEFAULT_SIM
    profile: str = DEFAULT_PROFILE
    env: dict[str, str] = field(default_factory=dict)
    overrides: dict[str, int] | None = None
    # the command that reruns this seed on one machine
    repro: str = ""
    limit_s: float = DEFAULT_LIMIT_S
    waves: bool = False
    # the environment variable through which the test writes its coverage JSON
    coverage_env: str | None = COVERAGE_ENV
    # Dask's priority: the longer kinds start first, so that short ones fill the tail
    priority: int = 0
    # the built-in regression's kind (KINDS); "" for a user's own test
    kind: str = ""


@dataclass
class SeedResult:
    """What a seed's task sends back."""

    name: str
    status: str
    message: str = ""
    log: str = ""
    coverage: dict | None = None
    repro: str = ""
    wall_s: float = 0.0
    worker: str = ""
    # the run directory on the worker's host, kept for a failed seed (and with waves)
    run_dir: str = ""
    attempts: int = 1

    @property
    def passed(self) -> bool:
        return self.status == PASSED


def parse_seeds(text: str) -> list[int]:
    """``"1-20"``, ``"3,7,9"`` or a mix, in order, each once."""
    out: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                lo, hi = int(a), int(b)
                if hi < lo:
                    raise ValueError
                out.extend(range(lo, hi + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise ValueError(f"seeds {text!r}: {part!r} is not a seed or a range a-b") from None
    if not out:
        raise ValueError(f"seeds {text!r} names no seed")
    return list(dict.fromkeys(out))


def repro_command(
    sim: str, profile: str, seed: int, steps: int, kind: str, *, limit_s: float | None = None
) -> str:
    """The command that reruns one seed of the regression on this machine."""
    extra = f" LIMIT={limit_s:g}" if limit_s is not None and limit_s != DEFAULT_LIMIT_S else ""
    return (
        f"make regress SIM={sim} PROFILE={profile} SEEDS={seed} STEPS={steps} KINDS={kind} "
        f"WORKERS=1 GOAL=none{extra}"
    )


def regression_jobs(
    seeds: Iterable[int],
    *,
    sim: str = DEFAULT_SIM,
    profile: str = DEFAULT_PROFILE,
    steps: int = 20,
    kinds: Sequence[str] = KINDS,
    big: bool = True,
    limit_s: float = DEFAULT_LIMIT_S,
    waves: bool = False,
) -> list[SeedJob]:
    """The built-in regression's jobs: each seed once per kind."""
    jobs = []
    for seed in seeds:
        for kind in kinds:
            name = f"{kind}-{sim}-{profile}-seed{seed}"
            env = regress_env(kind, seed, steps, name, big=big)  # checks the kind
            jobs.append(
                SeedJob(
                    name=name,
                    seed=seed,
                    testcase=TESTCASES[kind],
                    module=KIND_MODULES.get(kind, MODULE),
                    toplevel=KIND_TOPLEVELS.get(kind, runner.TOPLEVEL),
                    sim=sim,
                    profile=profile,
                    env=env,
                    overrides=regress_overrides(kind, big=big),
                    repro=repro_command(sim, profile, seed, steps, kind, limit_s=limit_s),
                    limit_s=limit_s,
                    waves=waves,
                    priority=KIND_PRIORITY.get(kind, 0),
                    kind=kind,
                )
            )
    return jobs


def user_jobs(
    tests: Sequence[str],
    seeds: Iterable[int],
    *,
    sim: str,
    profile: str,
    steps: int,
    limit_s: float = DEFAULT_LIMIT_S,
    waves: bool = False,
) -> list[SeedJob]:
    """Jobs of a user's own cocotb tests (``module:testcase``), each once per seed: the seed
    and the steps reach the test as ``$REGRESS_SEED`` and ``$REGRESS_STEPS`` (and as
    cocotb's random seed), its coverage file name as ``$REGRESS_COVERAGE``."""
    jobs = []
    seeds = list(seeds)
    for spec in tests:
        module, sep, testcase = spec.partition(":")
        if not sep or not module or not testcase:
            raise ValueError(f"--test {spec!r}: write it as module:testcase")
        for seed in seeds:
            name = f"{testcase}-{sim}-{profile}-seed{seed}"
            jobs.append(
                SeedJob(
                    name=name,
                    seed=seed,
                    testcase=testcase,
                    module=module,
                    sim=sim,
                    profile=profile,
                    env=seed_env(seed, steps, name),
                    repro=f"python -m {runner.PACKAGE}.flow.farm --test {spec} --sim {sim} "
                    f"--profile {profile} --seeds {seed} --steps {steps} --workers 1 "
                    f"--goal none",
                    limit_s=limit_s,
                    waves=waves,
                )
            )
    return jobs
