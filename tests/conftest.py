"""pytest options shared by the simulation tests (SIM, PROFILE) and the merge of the random
regression's coverage at the end."""

from __future__ import annotations

import os
import shutil

import pytest

from tb.config.choices import DEFAULT_PROFILE, DEFAULT_SIM, PROFILE_NAMES, SIMULATORS


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--sim",
        default=os.environ.get("SIM", DEFAULT_SIM),
        help=f"simulator for the full suite: {' or '.join(SIMULATORS)}",
    )
    parser.addoption(
        "--profile",
        default=os.environ.get("PROFILE", DEFAULT_PROFILE),
        help=f"profile: {', '.join(PROFILE_NAMES)}",
    )

    parser.addoption(
        "--xdma",
        default=os.environ.get("XDMA", ""),
        help="build options for the drop-in builds of the suite, KEY=VALUE words "
        "(docs/dropin.md's table: MODULE=xdma LANES=2 7SERIES=1 ...)",
    )


def xdma_options(config: pytest.Config) -> dict[str, object]:
    """The ``--xdma`` options (``make test XDMA=...``), checked as a configuration of
    the drop-in on the suite's simulator and profile: a bad one is one usage line before
    anything is collected or built."""
    from tb.config import BuildConfig
    from tb.config.options import parse_options
    from tb.config.sources import DROPIN_TOPLEVEL

    words = config.getoption("--xdma").split()
    try:
        given = parse_options(words)
        BuildConfig(
            sim=config.getoption("--sim"),
            profile=config.getoption("--profile"),
            toplevel=DROPIN_TOPLEVEL,
            options=given,
        )
    except ValueError as e:
        raise pytest.UsageError(f"XDMA: {e}") from None
    return given


@pytest.fixture
def sim(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--sim")


@pytest.fixture
def profile(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--profile")


class _SharedLaunches:
    """pytest-xdist's ``--dist load`` (what ``-n`` picks) keeping the items of a shared
    simulator launch on one worker (tests/sim/launches.py)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        if config.getvalue("dist") != "load":
            return None
        from tests.sim.launches import make_scheduler

        return make_scheduler(config, log)


def pytest_configure(config: pytest.Config) -> None:
    # the runner's build configuration takes the drop-in options from make's variable
    # (tb.config.BuildConfig.from_make): the flag given to pytest itself becomes it
    words = " ".join(f"{k}={v}" for k, v in xdma_options(config).items())
    if words or os.environ.get("XDMA"):
        os.environ["XDMA"] = words
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_SharedLaunches(), "shared_launches")


def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


_ARTIFACTS_AT = pytest.StashKey[int]()


def pytest_sessionstart(session: pytest.Session) -> None:
    if _is_controller(session.config):
        from tb.flow.runner import ARTIFACTS_LOG
        from tests.sim.plan import COVERAGE_DIR

        shutil.rmtree(COVERAGE_DIR, ignore_errors=True)
        size = ARTIFACTS_LOG.stat().st_size if ARTIFACTS_LOG.is_file() else 0
        session.config.stash[_ARTIFACTS_AT] = size


_REPORT = pytest.StashKey[list[str]]()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Merge the coverage of this session's random runs; with the whole default set run
    and passed, a missed coverage goal fails the session."""
    if not _is_controller(session.config):
        return
    from tb.regress.coverage import load
    from tests.sim.plan import COVERAGE_DIR, regress_run_names

    files = sorted(COVERAGE_DIR.glob("*.json")) if COVERAGE_DIR.is_dir() else []
    if not files:
        return
    cov = load(files)
    out = COVERAGE_DIR.parent / "report.txt"
    out.write_text(cov.report() + "\n")
    cov.write(COVERAGE_DIR.parent / "merged.json")
    lines = [cov.report(), f"report: {out} (merge any runs: python -m tb.regress.coverage FILES)"]
    names = {r.get("name") for r in cov.runs if r.get("passed")}
    if regress_run_names() <= names and cov.missed():
        lines.append("coverage goals missed: the session fails")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    session.config.stash[_REPORT] = lines


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    from tb.flow.runner import ARTIFACTS_LOG

    start = config.stash.get(_ARTIFACTS_AT, None)
    if start is not None and ARTIFACTS_LOG.is_file():
        with open(ARTIFACTS_LOG) as f:
            f.seek(start)
            made = [line.strip() for line in f if line.strip()]
        if made:
            terminalreporter.write_sep("-", "waveforms, TLP traces and transfer reports")
            for line in made:
                terminalreporter.write_line(line)
    lines = config.stash.get(_REPORT, None)
    if lines:
        terminalreporter.write_sep("-", "functional coverage (random regression)")
        for line in lines:
            terminalreporter.write_line(line)
