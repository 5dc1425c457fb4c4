"""The cocotb items' shared simulator launches (tests/sim/launches.py): which items share
one, the xdist scheduler keeping them on one worker, each item's result read from the
launch, and the failures' verdicts. The simulator is stood in for by results files."""

from __future__ import annotations

import types
from collections import Counter
from pathlib import Path

import pytest

from tests.sim import launches, plan
from tests.sim import test_sim_cocotb as sim_cocotb

F = launches.TEST_FUNCTION


def nodeid(case_id: str) -> str:
    return f"{F}{case_id}]"


def test_configuration_is_the_id_less_the_test() -> None:
    assert launches.configuration(nodeid("engine.test_identifiers-icarus-picoevb")) == (
        "engine-icarus-picoevb"
    )
    assert launches.configuration(nodeid("dropin.test_cfg_mgmt-icarus-picoevb-2x2-lean")) == (
        "dropin-icarus-picoevb-2x2-lean"
    )
    assert launches.configuration("tests/unit/test_unit_regs.py::test_x") is None
    assert launches.configuration(nodeid("engine")) is None
    assert launches.configuration(f"{F}engine.test_x-icarus") is None  # no closing bracket


def test_launches_split_a_configuration_evenly_in_order() -> None:
    engine = [nodeid(f"engine.test_{k}-icarus-picoevb") for k in range(19)]
    lean = [nodeid(f"engine.test_{k}-icarus-picoevb-lean") for k in range(8)]
    alone = nodeid("trace.test_only-icarus-picoevb")
    other = "tests/unit/test_unit_regs.py::test_x"
    ids = [other, *engine[:10], alone, *lean, *engine[10:]]  # interleaved, as collected
    got = launches.launches(ids)
    assert other not in got and alone not in got  # no shared launch
    assert {got[n] for n in lean} == {"engine-icarus-picoevb-lean"}  # 8: one launch
    sizes: dict[str, list[int]] = {}
    for k, n in enumerate(engine):
        sizes.setdefault(got[n], []).append(k)
    # 19 tests: three launches of 7, 7 and 5, each a run of consecutive tests
    assert sorted(sizes) == [f"engine-icarus-picoevb#{k}" for k in range(3)]
    assert [v for _, v in sorted(sizes.items())] == [
        list(range(0, 7)),
        list(range(7, 14)),
        list(range(14, 19)),
    ]
    assert max(len(v) for v in sizes.values()) <= launches.MAX_TESTS
    assert launches.launches(list(reversed(ids))) != got  # the order decides, and it is shared


def test_the_suites_launches_cover_every_configuration() -> None:
    """On the default plan every configuration with two or more tests shares launches,
    none larger than MAX_TESTS, and they number far fewer than the tests."""
    cases = plan.cases("icarus", "picoevb")
    ids = [nodeid(c.id) for c in cases]
    got = launches.launches(ids)
    per_config = Counter(launches.configuration(n) for n in ids)
    assert None not in per_config
    shared = {n for n, k in per_config.items() if k > 1}
    assert {launches.configuration(n) for n in got} == shared
    counts = Counter(got.values())
    assert max(counts.values()) <= launches.MAX_TESTS
    launched = len(counts) + (len(ids) - len(got))
    assert launched < len(ids) / 3, (launched, len(ids))


@pytest.mark.parametrize(
    ("env", "dist", "shared"),
    [
        (None, "load", True),
        (None, "no", True),
        (None, "loadfile", True),
        (None, "worksteal", False),
        (None, "loadgroup", False),
        ("test", "load", False),
        ("module", "load", True),
    ],
)
def test_grouping_follows_the_scheduler_and_the_switch(
    env: str | None, dist: str, shared: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if env is None:
        monkeypatch.delenv(launches.LAUNCH_ENV, raising=False)
    else:
        monkeypatch.setenv(launches.LAUNCH_ENV, env)
    config = types.SimpleNamespace(getoption=lambda name, default=None: dist)
    assert launches.grouping(config) is shared  # type: ignore[arg-type]


def test_a_bad_launch_setting_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(launches.LAUNCH_ENV, "modules")
    config = types.SimpleNamespace(getoption=lambda name, default=None: "load")
    with pytest.raises(pytest.UsageError, match="PEVB_LAUNCH must be"):
        launches.grouping(config)  # type: ignore[arg-type]


class _Node:
    """A worker as xdist's scheduler sees it."""

    def __init__(self, name: str) -> None:
        self.gateway = types.SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[list[int]] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append(list(indices))

    def shutdown(self) -> None:
        self.shutting_down = True


def test_the_scheduler_hands_a_launch_to_one_worker() -> None:
    """xdist's load-scope scheduler with our scopes: every launch's items go to one worker
    in one unit, every other item is a unit of its own, and all are handed out."""
    engine = [nodeid(f"engine.test_{k}-icarus-picoevb") for k in range(12)]
    driver = [nodeid(f"driver.test_{k}-icarus-gen3x8") for k in range(5)]
    units = [f"tests/unit/test_unit_regs.py::test_{k}" for k in range(9)]
    collection = [*units[:3], *engine[:6], *driver, *units[3:], *engine[6:]]
    config = types.SimpleNamespace(
        getvalue=lambda name: ["popen", "popen"] if name == "tx" else None,
        option=types.SimpleNamespace(loadscopereorder=False),
    )
    sched = launches.make_scheduler(config, None)  # type: ignore[arg-type]
    nodes = [_Node("gw0"), _Node("gw1")]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, collection)
    sched.schedule()
    owner: dict[str, str] = {}
    while True:  # finish what each worker has, as the workers would, until all is sent
        progressed = False
        for node in nodes:
            for batch in node.sent:
                ids = [collection[i] for i in batch]
                units_in_batch = {launches.launches(collection).get(n, n) for n in ids}
                assert len(units_in_batch) == 1, ids  # one unit per hand-out
                for n in ids:
                    assert n not in owner
                    owner[n] = node.gateway.id
                for i in batch:
                    sched.mark_test_complete(node, i)
                progressed = True
            node.sent.clear()
        if not progressed:
            break
    assert sorted(owner) == sorted(collection)
    for launch in set(launches.launches(collection).values()):
        members = [n for n, lch in launches.launches(collection).items() if lch == launch]
        assert len({owner[n] for n in members}) == 1, launch


def _results(path: Path, outcomes: dict[str, str | None]) -> Path:
    """A cocotb results file: each test passed (None) or failed with the message."""
    cases = []
    for name, failure in outcomes.items():
        inner = "" if failure is None else f'<failure message="{failure}" />'
        cases.append(f'<testcase classname="m" name="{name}">{inner}</testcase>')
    path.mkdir(parents=True, exist_ok=True)
    xml = path / "results.xml"
    xml.write_text(f"<testsuites><testsuite>{''.join(cases)}</testsuite></testsuites>")
    return xml


def _session(case_list: list[plan.Case], dist: str = "load"):
    items = [
        types.SimpleNamespace(
            nodeid=nodeid(c.id), callspec=types.SimpleNamespace(params={"case": c})
        )
        for c in case_list
    ]
    config = types.SimpleNamespace(getoption=lambda name, default=None: dist)
    return types.SimpleNamespace(items=items, config=config)


def _case(test: str, variant: str = "") -> plan.Case:
    return plan.Case("cocotb_engine", test, "icarus", "picoevb", variant)


def test_each_item_reads_its_result_from_one_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(launches.LAUNCH_ENV, raising=False)
    calls: list[list[str]] = []

    def fake_run(tests, **kw):
        calls.append(list(tests))
        if "test_crash" in tests:
            raise RuntimeError("simulation failed (1)")
        # the simulator reports all but the last (it ended early)
        return _results(
            tmp_path / str(len(calls)), {t: ("boom" if t == "test_b" else None) for t in tests[:-1]}
        )

    monkeypatch.setattr(launches.runner.runs, "run", fake_run)
    cases = [_case("test_a"), _case("test_b"), _case("test_c"), _case("test_alone", "plain")]
    cases += [_case("test_crash", "x"), _case("test_d", "x")]
    shared = launches.Launches(_session(cases))  # type: ignore[arg-type]
    a = shared.outcome(nodeid(cases[0].id))
    b = shared.outcome(nodeid(cases[1].id))
    assert calls == [["test_a", "test_b", "test_c"]]  # one launch for the three
    assert a is not None and a.passed and a.tests == ("test_a", "test_b")
    assert b is not None and not b.passed and b.message == "boom"
    assert b.log == tmp_path / "1" / "sim.log"
    assert shared.outcome(nodeid(cases[2].id)) is None  # not reported: runs alone
    assert shared.outcome(nodeid(cases[3].id)) is None  # alone in its configuration
    assert shared.outcome(nodeid(cases[4].id)) is None  # the launch crashed: alone
    assert shared.outcome(nodeid(cases[5].id)) is None
    assert calls == [["test_a", "test_b", "test_c"], ["test_crash", "test_d"]]
    # with a scheduler that may split launches, no item shares one
    assert launches.Launches(_session(cases, "worksteal")).outcome(nodeid(cases[0].id)) is None


class _Shared:
    def __init__(self, outcome: launches.Outcome | None) -> None:
        self._outcome = outcome

    def outcome(self, nodeid: str) -> launches.Outcome | None:
        return self._outcome


REPRO_B = (
    "reproduce: make test SIM=icarus PROFILE=picoevb SEED=1 "
    "TESTS=\"tests/sim/test_sim_cocotb.py -k 'engine.test_b-icarus-picoevb'\""
)


@pytest.mark.parametrize("alone_fails", [False, True])
def test_a_failure_in_a_launch_says_whether_it_fails_alone(
    alone_fails: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEED", "1")  # as make test gives it; the command names it
    ran_alone: list[str] = []

    def fake_alone(case, repro):
        ran_alone.append(case.test)
        if alone_fails:
            raise AssertionError(f"['test_b'] failed: still boom\nlog: /a/sim.log\n{REPRO_B}")

    monkeypatch.setattr(sim_cocotb, "_run_alone", fake_alone)
    request = types.SimpleNamespace(node=types.SimpleNamespace(nodeid="x"))
    case = _case("test_b")
    failed = launches.Outcome(False, "boom", Path("/r/sim.log"), ("test_a", "test_b", "test_c"))
    with pytest.raises(AssertionError) as info:
        sim_cocotb.test_cocotb(case, "icarus", "picoevb", request, _Shared(failed))  # type: ignore[arg-type]
    text = str(info.value)
    assert ran_alone == ["test_b"]
    assert "test_b failed in a launch of 3 tests: boom" in text and "log: /r/sim.log" in text
    if alone_fails:
        assert "alone it fails too: ['test_b'] failed: still boom" in text
    else:
        assert "alone it passes: state left by a test before it in the launch (test_a)" in text
    # the command once (the failure alone carries its own log and command); passing
    # alone, the command runs the tests before it and it in one launch again
    launch = "'engine.test_a-icarus-picoevb or engine.test_b-icarus-picoevb'"
    expected = REPRO_B if alone_fails else REPRO_B.replace("'engine.test_b-icarus-picoevb'", launch)
    assert text.count("reproduce:") == 1 and text.endswith(expected)


def test_a_pass_in_a_launch_runs_nothing_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sim_cocotb, "_run_alone", lambda case, repro: pytest.fail("ran"))
    request = types.SimpleNamespace(node=types.SimpleNamespace(nodeid="x"))
    passed = launches.Outcome(True, "", Path("/r/sim.log"), ("test_a", "test_b"))
    sim_cocotb.test_cocotb(_case("test_b"), "icarus", "picoevb", request, _Shared(passed))  # type: ignore[arg-type]
