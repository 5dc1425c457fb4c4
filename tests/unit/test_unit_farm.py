"""The Dask regression's parts that need no simulator: seeds, jobs, the process-group kill,
the JUnit XML and summary, the batch-system configuration, the command line's errors.
(The clusters themselves: tests/sim/test_sim_farm.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tb.flow import farm, runner
from tb.flow.farm import worker
from tb.regress.coverage import COVERPOINTS, Coverage
from tests.procs import alive, wait_until


def test_parse_seeds():
    assert farm.parse_seeds("1-4") == [1, 2, 3, 4]
    assert farm.parse_seeds("3, 7,9") == [3, 7, 9]
    assert farm.parse_seeds("1-3,2,10") == [1, 2, 3, 10]  # each once, in order
    for bad in ("", ",", "5-3", "a", "1-b", "1-2-3"):
        with pytest.raises(ValueError, match="seed"):
            farm.parse_seeds(bad)


def test_regression_jobs_are_the_long_regression():
    jobs = farm.regression_jobs([5], sim="verilator", profile="gen3x8", steps=7, limit_s=60)
    chains, driver, resets = jobs
    assert chains.name == "chains-verilator-gen3x8-seed5" and chains.seed == 5
    assert chains.testcase == "test_random_chains" and chains.module == farm.MODULE
    assert chains.env == {
        "REGRESS_SEED": "5",
        "REGRESS_STEPS": "7",
        "REGRESS_NAME": chains.name,
        "REGRESS_MAX_LEN": str(1 << 20),
        "REGRESS_MAX_DESC": "100",
    }
    assert chains.overrides == {"RAM_SIZE": 2 << 20}
    assert driver.testcase == "test_random_driver" and driver.overrides is None
    assert chains.priority > resets.priority > driver.priority  # the long ones first
    # every reset and stop, on the drop-in built as tb/regress/resets.py says
    assert resets.testcase == "test_random_resets" and resets.module.endswith("cocotb_resets")
    assert resets.toplevel == "xdma_0" and resets.overrides["SOFT_RESET_EN"] == 1
    assert chains.toplevel == driver.toplevel == runner.TOPLEVEL
    assert "REGRESS_MAX_DESC" not in driver.env
    assert driver.env["REGRESS_MAX_LEN"] == str(1 << 20)
    assert chains.limit_s == 60
    assert chains.repro == (
        "make regress SIM=verilator PROFILE=gen3x8 SEEDS=5 STEPS=7 KINDS=chains WORKERS=1 "
        "GOAL=none LIMIT=60"
    )
    small = farm.regression_jobs([1], kinds=("chains",), big=False)[0]
    assert small.overrides is None and "REGRESS_MAX_LEN" not in small.env
    with pytest.raises(ValueError, match="unknown kind 'dma'"):
        farm.regression_jobs([1], kinds=("dma",))


def test_user_jobs():
    jobs = farm.user_jobs(
        ["my.tests:test_rand", "my.tests:test_other"],
        [1, 2],
        sim="icarus",
        profile="picoevb",
        steps=3,
    )
    assert [j.name for j in jobs] == [
        "test_rand-icarus-picoevb-seed1",
        "test_rand-icarus-picoevb-seed2",
        "test_other-icarus-picoevb-seed1",
        "test_other-icarus-picoevb-seed2",
    ]
    assert jobs[1].module == "my.tests" and jobs[1].env["REGRESS_SEED"] == "2"
    assert "--test my.tests:test_rand" in jobs[1].repro and "--seeds 2 " in jobs[1].repro
    for bad in ("my.tests", ":t", "m:"):
        with pytest.raises(ValueError, match="module:testcase"):
            farm.user_jobs([bad], [1], sim="icarus", profile="picoevb", steps=1)


def test_kill_group_ends_the_child_and_what_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(worker, "TERM_GRACE_S", 1.0)
    # a child that starts a grandchild (the simulator) and ignores SIGTERM itself
    pids = tmp_path / "pids"
    proc = subprocess.Popen(
        ["sh", "-c", f"trap '' TERM; sleep 300 & echo $! > {pids}; wait"],
        start_new_session=True,
    )
    wait_until(lambda: pids.is_file() and pids.read_text().strip(), 10, step=0.02)
    grandchild = int(pids.read_text())
    assert alive(grandchild)
    t0 = time.monotonic()
    worker._kill_group(proc)
    assert proc.returncode is not None
    assert time.monotonic() - t0 < worker.TERM_GRACE_S + 3
    assert wait_until(lambda: not alive(grandchild), 5, step=0.02), (
        "the grandchild outlived the group kill"
    )


def test_kill_group_after_the_child_exited_ends_what_it_left(tmp_path: Path):
    pids = tmp_path / "pids"
    proc = subprocess.Popen(["sh", "-c", f"sleep 300 & echo $! > {pids}"], start_new_session=True)
    proc.wait(timeout=10)
    left = int(pids.read_text())
    assert alive(left)
    worker._kill_group(proc)
    assert wait_until(lambda: not alive(left), 5, step=0.02)


def _summary() -> farm.Summary:
    cov = Coverage()
    cov.hit("concurrency", "h2c")
    cov.hit("outcome", "ok")
    results = [
        farm.SeedResult("a-seed1", farm.PASSED, wall_s=10, worker="w1", repro="rerun a1"),
        farm.SeedResult(
            "a-seed2",
            farm.FAILED,
            "data mismatch at 0x40",
            log="log \x1b[31mred\x1b[0m",
            repro="rerun a2",
            wall_s=12,
            worker="w2",
            run_dir="/tmp/x",
        ),
        farm.SeedResult(
            "a-seed3",
            farm.TIMEOUT,
            "killed at its wall-clock limit of 5 s",
            repro="rerun a3",
            wall_s=5,
        ),
        farm.SeedResult("a-seed4", farm.ERROR, "ValueError: bad", repro="rerun a4", attempts=2),
    ]
    return farm.Summary(results, cov, wall_s=36.0, workers=2)


def test_junit_xml(tmp_path: Path):
    s = _summary()
    farm.write_junit(s, tmp_path / "junit.xml")
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "2")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["a-seed1"].find("failure") is None and cases["a-seed1"].find("error") is None
    fail = cases["a-seed2"].find("failure")
    assert fail is not None and fail.get("message") == "data mismatch at 0x40"
    assert "reproduce: rerun a2" in (fail.text or "")
    assert "\x1b" not in (cases["a-seed2"].find("system-out").text or "")
    assert cases["a-seed3"].find("error").get("type") == "timeout"
    props = {p.get("name"): p.get("value") for p in cases["a-seed4"].iter("property")}
    assert props == {"repro": "rerun a4", "worker": "", "attempts": "2"}


def test_summary_text_and_outputs(tmp_path: Path):
    s = _summary()
    text = s.text("required")
    assert "seeds run: 4, passed: 1, 1 failed, 1 error, 1 timeout" in text
    assert "400.0 seeds per hour" in text  # 4 seeds in 36 s
    # 175: the chains' 69 (7 outcomes, 21 faults x outcome), the driver's 34 (ops, faults,
    # races, results, pin ways, the GPU's own steps), the resets' 72 (6 kinds x 10
    # targets, where they struck, 5 register races x 2 sides)
    bins = sum(len(b) for b in COVERPOINTS.values())
    assert bins == 175 and f"coverage: 2/{bins} bins hit" in text
    assert "coverage goal (required bins): missed, never hit: chain_length" in text
    assert "FAILED a-seed2 [failed] data mismatch at 0x40\n  reproduce: rerun a2" in text
    assert "run directory (w2): /tmp/x" in text
    assert "FAILED a-seed1" not in text
    assert s.goal_missed("none") == {}
    assert "64+" in s.goal_missed("all")["chain_length"]
    assert "64+" not in s.goal_missed("required")["chain_length"]
    farm.write_outputs(s, tmp_path)
    assert (tmp_path / "seeds" / "a-seed2" / "sim.log").read_text().startswith("log ")
    assert (tmp_path / "report.txt").read_text().startswith("functional coverage")
    assert "seeds run: 4" in (tmp_path / "summary.txt").read_text()


def test_the_goal_of_a_run_of_some_kinds_is_their_coverpoints():
    """A farm run of the resets kind alone meets its goal with the resets' bins: the
    chains' and the driver's coverpoints are not its goal (they were, and such a run
    failed however its seeds went). Every coverpoint belongs to exactly one kind."""
    from tb.regress.coverage import KIND_POINTS

    owned = [p for k in farm.KINDS for p in KIND_POINTS[k]]
    assert sorted(owned) == sorted(COVERPOINTS) and len(set(owned)) == len(owned)
    cov = Coverage()
    for point in KIND_POINTS["resets"]:
        for b in COVERPOINTS[point]:
            cov.hit(point, b)
    s = farm.Summary([], cov, wall_s=1.0, workers=1, points=KIND_POINTS["resets"])
    assert s.goal_missed("all") == {}
    assert "coverage goal (all bins): met" in s.text("all")
    assert "goal met" in cov.report(s.points)
    everything = farm.Summary([], cov, wall_s=1.0, workers=1)
    assert "chain_length" in everything.goal_missed("all")
    jobs = farm.regression_jobs([1], kinds=["resets"])
    assert [j.kind for j in jobs] == ["resets"]


def test_slurm_jobs_run_from_this_checkout():
    pytest.importorskip("dask_jobqueue")
    import dask

    # the scheduler's dashboard on a free port (8787 may be taken on a shared machine)
    free_port = {"jobqueue.slurm.scheduler-options": {"dashboard_address": ":0"}}
    with dask.config.set(free_port), farm.jobqueue_cluster("slurm") as cluster:
        script = cluster.job_script()
    assert "#SBATCH" in script
    assert f"cd {Path.cwd()}" in script
    assert f'export PYTHONPATH="{runner.ROOT}' in script
    assert f"export {runner.BUILD_ROOT_ENV}={runner.BUILD_ROOT}" in script
    assert "--nthreads 1" in script and "--memory-limit 4.00GiB" in script
    # TLS by default (the run's own certificate); plain TCP only when asked
    assert "--protocol tls://" in script and "--tls-ca-file" in script
    with dask.config.set(free_port), farm.jobqueue_cluster("slurm", tls=False) as cluster:
        assert cluster.scheduler_address.startswith("tcp://")
        assert "--tls-ca-file" not in cluster.job_script()
    with pytest.raises(farm.FarmError, match="unknown batch system 'condor'"):
        farm.jobqueue_cluster("condor")


@pytest.mark.parametrize(
    "args,message",
    [
        (["--seeds", "4-2"], "is not a seed or a range"),
        (["--kinds", "chains,dma"], "unknown kind 'dma'"),
        (["--test", "nomodule"], "module:testcase"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--limit", "0"], "--limit must be positive"),
        (["--profile", "gen9"], "gen9"),
    ],
)
def test_command_line_errors(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        farm.main(args)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_unreachable_scheduler_is_a_clear_error(capsys):
    pytest.importorskip("distributed")
    code = farm.main(["--seeds", "1", "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1"])
    assert code == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in capsys.readouterr().err


def test_worker_name_outside_a_worker():
    assert worker._worker_name() == os.uname().nodename


def test_missing_dask_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)  # import fails as if absent
    assert farm.main(["--seeds", "1", "--cluster", "slurm"]) == 2
    assert capsys.readouterr().err.strip() == (
        "regress: --cluster needs dask-jobqueue: pip install '.[farm]'"
    )
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert farm.main(["--seeds", "1"]) == 2
    assert capsys.readouterr().err.strip() == (
        "regress: the regression runs on Dask: pip install '.[farm]' (make regress installs it)"
    )


def test_tls_without_cryptography_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys):
    """A batch cluster's TLS needs the cryptography package (Security.temporary): without
    it the run stops with one line naming the fix, before any job is submitted."""
    pytest.importorskip("dask_jobqueue")
    from distributed.security import Security

    def missing() -> Security:
        raise ImportError("No module named 'cryptography'")

    monkeypatch.setattr(Security, "temporary", staticmethod(missing))
    assert farm.main(["--seeds", "1", "--cluster", "slurm"]) == 2
    assert capsys.readouterr().err.strip() == (
        "regress: TLS for the batch cluster needs cryptography: pip install '.[farm]' (or run "
        "with --insecure on a network you trust)"
    )
