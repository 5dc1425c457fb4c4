"""The cocotb tests of one configuration share a simulator launch.

Each cocotb test stays a pytest item of its own (``tests/sim/test_sim_cocotb.py``), but the
items of one module on one build, simulator, profile and variant run in one launch of the
simulator, at most :data:`MAX_TESTS` to a launch, as cocotb runs a module. A launch costs
about half a second before its first test (the simulator, cocotb's and the testbench's
imports); one per test was a fifth of the suite's CPU time. Each test still gets its own
random seed (cocotb's, from the test's name) and sets up its own system, the card reset.

The first item of a launch to run makes it; every item of it then reads its own result
from the launch's ``results.xml``. A test that fails there is run again alone, and its
failure says whether it also fails alone (or a test before it left state behind). Tests
that a launch did not report (the simulator crashed) run alone. Under pytest-xdist the
items of a launch go to one worker: :class:`LaunchScheduling` (installed by
``tests/conftest.py`` for ``--dist load``, what ``-n`` picks) hands them out together.
With a scheduler that may split them (``worksteal``, ``loadgroup``), or with
``PEVB_LAUNCH=test``, every test has a launch of its own.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from tb.flow import runner
from tests.sim import plan

# the test function whose items share launches, and the most tests in one launch (more
# would leave a worker alone with a long launch at the end of the suite)
TEST_FUNCTION = "tests/sim/test_sim_cocotb.py::test_cocotb["
MAX_TESTS = 8
LAUNCH_ENV = "PEVB_LAUNCH"
# xdist's schedulers that keep a launch's items on one worker ("load": ours)
_GROUPING_DIST = {"no", "load", "loadscope", "loadfile", "each"}


def configuration(nodeid: str) -> str | None:
    """The launch configuration of a cocotb item (its id less the test's name:
    ``engine-icarus-picoevb-lean`` for ``engine.test_identifiers-icarus-picoevb-lean``),
    or None for any other item."""
    if not nodeid.startswith(TEST_FUNCTION) or not nodeid.endswith("]"):
        return None
    module, _, rest = nodeid[len(TEST_FUNCTION) : -1].partition(".")
    test, sep, config = rest.partition("-")
    if not (module and test and sep and config):
        return None
    return f"{module}-{config}"


def launches(nodeids: list[str]) -> dict[str, str]:
    """Each shared launch's items, for the items in this order: the items of one
    configuration in ``ceil(n / MAX_TESTS)`` launches of near-equal size, in order (an
    item alone in its configuration has none). The same list gives the same answer on the
    controller and on every worker."""
    groups: dict[str, list[str]] = {}
    for nodeid in nodeids:
        config = configuration(nodeid)
        if config is not None:
            groups.setdefault(config, []).append(nodeid)
    out: dict[str, str] = {}
    for config, members in groups.items():
        if len(members) < 2:  # alone: a launch of its own, as without sharing
            continue
        n = math.ceil(len(members) / MAX_TESTS)
        size = math.ceil(len(members) / n)
        for k, nodeid in enumerate(members):
            out[nodeid] = f"{config}#{k // size}" if n > 1 else config
    return out


def grouping(config: pytest.Config) -> bool:
    """Whether this session's cocotb items share launches (not with ``PEVB_LAUNCH=test``
    or a scheduler that may split a launch's items over workers)."""
    mode = os.environ.get(LAUNCH_ENV, "module")
    if mode not in ("module", "test"):
        raise pytest.UsageError(f"{LAUNCH_ENV} must be 'module' or 'test', not {mode!r}")
    return mode == "module" and config.getoption("dist", "no") in _GROUPING_DIST


@dataclass(frozen=True)
class Outcome:
    """One test's result in a launch."""

    passed: bool
    message: str
    log: Path
    tests: tuple[str, ...]  # every test of the launch, in the order they ran


class Launches:
    """The session's shared launches: made on first use, read by every item of each."""

    def __init__(self, session: pytest.Session) -> None:
        self._items = {item.nodeid: item for item in session.items}
        self._launch = launches(list(self._items)) if grouping(session.config) else {}
        self._done: dict[str, dict[str, Outcome]] = {}

    def outcome(self, nodeid: str) -> Outcome | None:
        """The item's result from its launch (made now if it is the first item of it to
        run); None where the item has no shared launch or the launch did not report it."""
        launch = self._launch.get(nodeid)
        if launch is None:
            return None
        if launch not in self._done:
            members = [self._items[n] for n, lch in self._launch.items() if lch == launch]
            self._done[launch] = _run([m.callspec.params["case"] for m in members])
        return self._done[launch].get(self._items[nodeid].callspec.params["case"].test)


def _run(cases: list[plan.Case]) -> dict[str, Outcome]:
    """Run ``cases`` (one configuration) in one launch; each reported test's outcome."""
    try:
        results = runner.run_as_make_test([c.test for c in cases], **cases[0].run_settings())
    except RuntimeError:  # the simulator ended without results: each test runs alone
        return {}
    ran = list(ET.parse(results).iter("testcase"))
    names = tuple(case.get("name", "?") for case in ran)
    out = {}
    for case in ran:
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        message = "" if bad is None else (bad.get("message") or (bad.text or "").strip())
        out[case.get("name", "?")] = Outcome(
            bad is None, message, results.parent / "sim.log", names
        )
    return out


def make_scheduler(config: pytest.Config, log):
    """pytest-xdist's load scheduler with each shared launch as one unit of work (its
    items go to one worker together); every other item is a unit of its own."""
    from xdist.scheduler import LoadScopeScheduling

    class LaunchScheduling(LoadScopeScheduling):
        """``--dist load`` that keeps a launch's items together."""

        _units: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._units is None:  # first asked once the collection is complete
                assert self.collection is not None
                self._units = launches(self.collection)
            launch = self._units.get(nodeid)
            return nodeid if launch is None else f"launch:{launch}"

    return LaunchScheduling(config, log)
