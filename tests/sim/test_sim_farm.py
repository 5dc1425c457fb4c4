"""The regression on Dask (tb/flow/farm/), on real clusters on this machine.

A local cluster of two workers runs short random seeds and merges their coverage. A
scheduler and two workers started with the ``dask`` command line (separate processes, TCP)
run the seeds of tb/tests/cocotb_farm.py, whose fate is known: one passes, one raises, one
hangs past its limit, one waits while its worker is killed. The command line's Ctrl-C is
checked on a local cluster. After each, no process of the seeds is left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import Client

from tb.flow import farm, runner
from tb.regress.coverage import Coverage
from tests.procs import alive, cmdline, wait_until

MODULE = "tb.tests.cocotb_farm"
DASK = Path(sys.executable).parent / "dask"


def _environ(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def strays(tag: str) -> list[str]:
    """Processes of this test's seeds still alive: a seed's child (its job name holds the
    tag) or a simulator (its environment does); zombies do not count."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid() or not alive(d.name):
            continue
        line = cmdline(d.name)
        if "multiprocessing.resource_tracker" in line:
            continue  # the resource tracker is this pytest process's own, until it exits
        if tag in line or f"FARM_TAG={tag}".encode() in _environ(d.name):
            out.append(f"{d.name}: {line[:200]}")
    return out


def no_strays(tag: str, within: float = 5.0) -> list[str]:
    wait_until(lambda: not strays(tag), within, step=0.1)
    return strays(tag)


def job(tag: str, test: str, **kw) -> farm.SeedJob:
    name = f"{test}-{tag}-{kw.pop('seed', 1)}"
    env = {"FARM_TAG": tag, farm.SEED_ENV: name.rsplit("-", 1)[1], farm.NAME_ENV: name}
    env.update(kw.pop("env", {}))
    return farm.SeedJob(
        name=name,
        seed=int(env[farm.SEED_ENV]),
        testcase=test,
        module=MODULE,
        env=env,
        repro=f"rerun {name}",
        **kw,
    )


@pytest.fixture
def tag() -> str:
    return f"farmtest{uuid.uuid4().hex[:10]}"


# --- a local cluster, real random seeds -----------------------------------------------------


def test_local_cluster_runs_short_seeds_and_merges_coverage(
    tmp_path: Path, tag: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("FARM_TAG", tag)  # the workers and the simulators inherit it
    jobs = farm.regression_jobs([1, 2], steps=2, kinds=("chains",), big=False)
    jobs += farm.regression_jobs([3], steps=2, kinds=("driver",), big=False)
    lines: list[str] = []
    with farm.cluster(workers=2) as client:
        summary = farm.run_regression(jobs, client, out_dir=tmp_path, progress=lines.append)
    assert [r.status for r in summary.results] == ["passed"] * 3, summary.text()
    assert summary.workers == 2 and len(lines) == 3 and summary.seeds_per_hour > 0
    # the merge is the sum of the seeds' own coverage, each seed's run recorded once
    expect = Coverage()
    for r, j in zip(summary.results, jobs, strict=True):
        assert r.coverage, f"{r.name} sent no coverage"
        expect.merge(Coverage.from_json(r.coverage))
        assert r.repro == j.repro and f"SEEDS={j.seed} " in r.repro
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["coverpoints"] == expect.points
    assert sorted(run["name"] for run in merged["runs"]) == sorted(j.name for j in jobs)
    assert sum(merged["coverpoints"]["driver_op"].values()) > 0
    assert sum(merged["coverpoints"]["concurrency"].values()) > 0
    # per-seed logs, the JUnit XML and the summary
    for j in jobs:
        log = (tmp_path / "seeds" / j.name / "sim.log").read_text()
        assert f"running {j.module}.{j.testcase}" in log and f"{j.testcase} passed" in log
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "3" and suite.get("failures") == "0"
    assert "seeds run: 3, passed: 3" in (tmp_path / "summary.txt").read_text()
    assert not no_strays(tag), "a worker or a simulator outlived the cluster"


# --- a scheduler and two workers from the dask command line --------------------------------


@pytest.fixture(scope="module")
def tcp_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``dask scheduler`` and two ``dask worker`` processes; yields the scheduler's address."""
    tmp = tmp_path_factory.mktemp("dask")
    sched_file = tmp / "scheduler.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(runner.ROOT),
        runner.BUILD_ROOT_ENV: str(runner.BUILD_ROOT),
    }
    common = {"cwd": tmp, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [
        subprocess.Popen(
            [
                str(DASK),
                "scheduler",
                "--scheduler-file",
                str(sched_file),
                "--port",
                "0",
                "--no-dashboard",
            ],
            **common,
        )
    ]
    try:
        assert wait_until(sched_file.is_file, 60, step=0.1), "dask scheduler did not start"
        address = json.loads(sched_file.read_text())["address"]
        for n in (1, 2):
            procs.append(
                subprocess.Popen(
                    [
                        str(DASK),
                        "worker",
                        address,
                        "--nthreads",
                        "1",
                        "--name",
                        f"w{n}",
                        "--no-dashboard",
                    ],
                    **common,
                )
            )
        with Client(address, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_command_line_runs_seeds_over_tcp(tcp_cluster: str, tmp_path: Path):
    out = tmp_path / "out"
    env = {**os.environ, farm.SCHEDULER_ENV: tcp_cluster}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tb.flow.farm",
            "--test",
            f"{MODULE}:farm_passes",
            "--test",
            f"{MODULE}:farm_raises",
            "--seeds",
            "1-2",
            "--out",
            str(out),
        ],
        cwd=runner.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text  # two seeds failed
    assert f"on {tcp_cluster}" in text
    for seed in (1, 2):
        assert f"PASSED  farm_passes-icarus-picoevb-seed{seed}" in text
        assert f"FAILED farm_raises-icarus-picoevb-seed{seed} [failed]" in text
        assert f"seed {seed} raised on purpose" in text
        assert (
            f"reproduce: python -m tb.flow.farm --test {MODULE}:farm_raises --sim icarus "
            f"--profile picoevb --seeds {seed}"
        ) in text
    assert "seeds run: 4, passed: 2, 2 failed" in text
    # seed n hits `concurrency h2c` n times, failed or passed: 2 * (1 + 2)
    merged = json.loads((out / "merged.json").read_text())
    assert merged["coverpoints"]["concurrency"]["h2c"] == 6
    assert merged["coverpoints"]["outcome"]["ok"] == 4
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "2", "0")
    failures = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert sorted(c.get("name") for c in failures) == [
        "farm_raises-icarus-picoevb-seed1",
        "farm_raises-icarus-picoevb-seed2",
    ]
    assert all(
        "reproduce: python -m tb.flow.farm" in (c.find("failure").text or "") for c in failures
    )
    log = (out / "seeds" / "farm_raises-icarus-picoevb-seed2" / "sim.log").read_text()
    assert "raised on purpose" in log


def test_hung_seed_is_killed_at_its_limit(tcp_cluster: str, tmp_path: Path, tag: str):
    started = tmp_path / "started"
    started.mkdir()
    # long enough for the simulator to start on a loaded machine, so that it hangs
    hang = job(tag, "farm_hangs", limit_s=8.0, env={"FARM_STARTED": str(started)})
    ok = job(tag, "farm_passes", seed=2)
    with Client(tcp_cluster) as client:
        summary = farm.run_regression([hang, ok], client)
    res = {r.name: r for r in summary.results}
    assert res[ok.name].passed
    r = res[hang.name]
    assert r.status == farm.TIMEOUT and "wall-clock limit of 8 s" in r.message
    assert 8.0 <= r.wall_s < 8.0 + 15, r.wall_s
    sims = [int(p.name) for p in started.iterdir()]
    assert len(sims) == 1, "the hung simulation never started"
    assert not cmdline(sims[0]), "the hung simulator is still running"
    assert not no_strays(tag, within=1.0)
    assert f"FAILED {hang.name} [timeout]" in summary.text()
    assert f"reproduce: rerun {hang.name}" in summary.text()


def test_seed_that_cannot_run_is_retried_then_reported(tcp_cluster: str, tag: str):
    bad = job(tag, "farm_passes", profile="no_such_profile")
    with Client(tcp_cluster) as client:
        summary = farm.run_regression([bad], client, retries=1)
    (r,) = summary.results
    assert r.status == farm.ERROR
    assert "no_such_profile" in r.message
    assert r.attempts == 2, "Dask's retry did not run it a second time"
    assert "Traceback" in r.log
    assert not no_strays(tag)


def test_worker_killed_mid_seed_is_retried_elsewhere(tcp_cluster: str, tmp_path: Path, tag: str):
    started = tmp_path / "started"
    started.mkdir()
    release = tmp_path / "release"
    waits = job(
        tag,
        "farm_waits",
        limit_s=120.0,
        env={"FARM_STARTED": str(started), "FARM_RELEASE": str(release)},
    )
    out: list[farm.Summary] = []
    with Client(tcp_cluster) as client:
        pids_before = client.run(os.getpid)
        th = threading.Thread(target=lambda: out.append(farm.run_regression([waits], client)))
        th.start()
        try:
            wait_until(lambda: any(started.iterdir()), 60)
            (first,) = [int(p.name) for p in started.iterdir()]
            busy = [w for w, keys in client.processing().items() if keys]
            assert len(busy) == 1, client.processing()
            victim = busy[0]
            os.kill(pids_before[victim], signal.SIGKILL)
            # the seed's child sees its worker die and kills its simulator
            assert wait_until(lambda: not cmdline(first), 10), (
                "the killed worker's simulator is still running"
            )
            # the retry starts on a worker that is alive, then is let go
            assert wait_until(lambda: len(list(started.iterdir())) == 2, 60), (
                "the seed was not run again"
            )
        finally:
            release.write_text("go")
            th.join(timeout=120)
    (r,) = out[0].results
    assert r.passed, r.message
    assert r.attempts == 2
    assert r.worker and r.worker != victim
    assert not no_strays(tag)


def test_seed_whose_worker_dies_past_the_allowed_failures_is_reported_lost(
    tmp_path: Path, tag: str
):
    import dask

    started = tmp_path / "started"
    started.mkdir()
    waits = job(
        tag,
        "farm_waits",
        env={"FARM_STARTED": str(started), "FARM_RELEASE": str(tmp_path / "never")},
    )
    out: list[farm.Summary] = []
    # the scheduler (in this process for a local cluster) gives up at the first death
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        farm.cluster(workers=1) as client,
    ):
        th = threading.Thread(target=lambda: out.append(farm.run_regression([waits], client)))
        th.start()
        assert wait_until(lambda: any(started.iterdir()), 60), "the seed never started"
        (victim,) = client.run(os.getpid).values()
        os.kill(victim, signal.SIGKILL)
        th.join(timeout=60)
    (r,) = out[0].results
    assert r.status == farm.LOST, (r.status, r.message)
    assert "its worker was lost" in r.message
    assert out[0].count(farm.LOST) == 1 and f"FAILED {waits.name} [lost]" in out[0].text()
    assert not no_strays(tag)


# --- Ctrl-C on the command line -------------------------------------------------------------


def test_ctrl_c_leaves_no_process(tmp_path: Path, tag: str):
    started = tmp_path / "started"
    started.mkdir()
    env = {**os.environ, "FARM_TAG": tag, "FARM_STARTED": str(started)}
    env.pop(farm.SCHEDULER_ENV, None)
    env.pop(farm.ADDRESS_ENV, None)
    # a command started from a terminal: Ctrl-C neither ignored nor blocked. A process
    # inherits both from the one that starts it, and this pytest worker's can have been
    # changed by what ran in it before (the whole suite on two workers left SIGINT
    # ignored or blocked here, and the farm then ran its seed to the cap)
    terminal = (
        "import runpy, signal, sys; "
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
        "signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv[0] = 'tb.flow.farm'; "
        "runpy.run_module('tb.flow.farm', run_name='__main__', alter_sys=True)"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            terminal,
            "--test",
            f"{MODULE}:farm_hangs",
            "--seeds",
            "1",
            "--workers",
            "1",
            "--limit",
            "300",
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=runner.ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert wait_until(lambda: any(started.iterdir()), 120), "the seed never started"
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        try:
            text, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired as e:
            raise AssertionError(
                f"Ctrl-C: the farm did not end in 60 s; its output: {e.output!r}; "
                f"what was left: {strays(tag)}"
            ) from e
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, text
    assert not no_strays(tag, within=10.0), "Ctrl-C left processes behind"


# --- a batch cluster speaks TLS --------------------------------------------------------------


def test_batch_cluster_speaks_tls(tmp_path: Path, tag: str):
    """A batch cluster (dask-jobqueue's Slurm cluster; its job script run here, as Slurm
    would run it) speaks TLS by default with a certificate made for the run: a client
    without the run's certificate is refused, whether it speaks plain TCP or TLS with a
    certificate of its own; the job's worker joins with the certificate the script names,
    and a regression runs on it."""
    import dask
    from distributed.security import Security

    # dask-jobqueue's defaults are registered when it is first imported: imported inside
    # the config.set below, they would leave with the "jobqueue" section that set added,
    # and a later test in this process would find jobqueue.slurm without them
    pytest.importorskip("dask_jobqueue")
    config = {
        "jobqueue.slurm.scheduler-options": {"host": "127.0.0.1", "dashboard_address": ":0"},
        "jobqueue.slurm.shared-temp-directory": str(tmp_path),
    }
    worker = None
    with dask.config.set(config), farm.jobqueue_cluster("slurm") as jq:
        try:
            address = jq.scheduler_address
            assert address.startswith("tls://127.0.0.1:"), address
            script = jq.job_script()
            assert "--protocol tls://" in script and "--tls-ca-file" in script, script
            # the run's certificate and key, readable by this user alone
            dumped = [p for p in tmp_path.iterdir() if p.is_file()]
            assert dumped and all(p.stat().st_mode & 0o077 == 0 for p in dumped), dumped
            # refused: plain TCP, and TLS with another certificate
            with pytest.raises(OSError):
                Client(address.replace("tls://", "tcp://"), timeout="3s")
            with pytest.raises(OSError):
                Client(address, timeout="3s", security=Security.temporary())
            # the batch job: its script, run as Slurm would (the #SBATCH lines are comments)
            job_file = tmp_path / "job.sh"
            job_file.write_text(script)
            worker = subprocess.Popen(
                ["bash", str(job_file)],
                env={**os.environ, "FARM_TAG": tag},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            with Client(jq, timeout="30s") as client:
                client.wait_for_workers(1, timeout=60)
                summary = farm.run_regression([job(tag, "farm_passes")], client)
            assert [r.status for r in summary.results] == ["passed"], summary.text()
        finally:
            if worker is not None:
                os.killpg(worker.pid, signal.SIGTERM)
                try:
                    worker.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(worker.pid, signal.SIGKILL)
                    worker.wait()
    assert not no_strays(tag), "the job's worker or a simulator outlived the cluster"
