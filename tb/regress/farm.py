"""The random regression on Dask: one task per seed, on this machine or on a farm.

``make regress`` (``python -m tb.regress.farm``) turns a list of seeds into
:class:`SeedJob` s and runs each as a Dask task (:func:`run_job`) on one of three clusters:

- none configured: a local cluster of one single-threaded worker per core, started and
  stopped with the run;
- ``DASK_SCHEDULER=tcp://host:port`` (or ``--scheduler``): an existing scheduler and its
  workers (``dask scheduler``, ``dask worker``);
- ``--cluster slurm|lsf|pbs|sge`` with ``--jobs N``: workers submitted to a batch system
  through dask-jobqueue, configured by dask's ``jobqueue`` configuration.

A task builds the simulator once (the build directory is locked and reused by every later
seed of that worker, or of every worker where the build root is shared storage), then runs
the seed's cocotb test in a child process of its own process group, under a wall-clock
limit. The child watches its parent: when the worker dies, the child kills its group, so
no simulator outlives it. What comes back by value (:class:`SeedResult`): the status, the
failure message, the log, the coverage JSON and the command that reruns the seed locally.
The client merges the coverage, writes each seed's log, a JUnit XML and a summary, and
lists the failures with their reproduce commands. A worker lost mid-seed is rescheduled
by Dask on another worker (its ``allowed-failures``); a task that raises is retried
``--retries`` times; Ctrl-C sets a stop event every running task polls, then cancels.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import uuid
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import runner
from .coverage import Coverage, describe_missed

SCHEDULER_ENV = "DASK_SCHEDULER"
ADDRESS_ENV = "DASK_SCHEDULER_ADDRESS"  # what Dask's own Client() reads
# the kinds of seed the built-in regression has: the engine's random chains (descriptors to
# 1 MiB, 2 MiB card RAM) and the driver model's random ioctls (transfers to 1 MiB)
MODULE = f"{runner.PACKAGE}.tests.test_regress"
KINDS = ("chains", "driver")
TESTCASES = {"chains": "test_random_chains", "driver": "test_random_driver"}
# a chains seed runs about 8x as long as a driver seed
KIND_PRIORITY = {"chains": 1, "driver": 0}
BIG_RAM = 2 << 20
BIG_LEN = 1 << 20
# what a seed's test is told through its environment (tb/tests/test_regress.py reads them)
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
LOG_TAIL = 1 << 20  # bytes of a seed's log that come back
DEFAULT_LIMIT_S = 1800.0
JOBQUEUE = {"slurm": "SLURMCluster", "lsf": "LSFCluster", "pbs": "PBSCluster", "sge": "SGECluster"}
_STOP_POLL_S = 2.0
_TERM_GRACE_S = 5.0


class FarmError(Exception):
    """A regression that cannot start: no Dask, a bad option, an unreachable scheduler."""


def seed_env(seed: int, steps: int, name: str) -> dict[str, str]:
    """What every seed's test is told: its seed, its steps and its name."""
    return {SEED_ENV: str(seed), STEPS_ENV: str(steps), NAME_ENV: name}


def regress_env(kind: str, seed: int, steps: int, name: str, *, big: bool) -> dict[str, str]:
    """The environment of one random seed of ``kind`` (``chains`` or ``driver``); ``big``:
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
    """The Verilog parameters a seed of ``kind`` needs on top of the profile's."""
    return {"RAM_SIZE": BIG_RAM} if big and kind == "chains" else None


@dataclass(frozen=True)
class SeedJob:
    """One seed: which cocotb test on which build, its environment and its limits."""

    name: str
    seed: int
    testcase: str
    module: str = MODULE
    sim: str = "icarus"
    profile: str = "picoevb"
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
    sim: str = "icarus",
    profile: str = "picoevb",
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
                    sim=sim,
                    profile=profile,
                    env=env,
                    overrides=regress_overrides(kind, big=big),
                    repro=repro_command(sim, profile, seed, steps, kind, limit_s=limit_s),
                    limit_s=limit_s,
                    waves=waves,
                    priority=KIND_PRIORITY.get(kind, 0),
                )
            )
    return jobs


def test_jobs(
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
                    repro=f"python -m {runner.PACKAGE}.regress.farm --test {spec} --sim {sim} "
                    f"--profile {profile} --seeds {seed} --steps {steps} --workers 1 "
                    f"--goal none",
                    limit_s=limit_s,
                    waves=waves,
                )
            )
    return jobs


# --- on the worker -------------------------------------------------------------------------


def run_job(job: SeedJob, stop_event: str | None = None) -> SeedResult:
    """Run one seed (a Dask task, or called directly): build (once), then the test in a
    child process group under ``job.limit_s`` of wall clock. Raises only where the seed
    could not be run at all (a bad build, a bad profile); the test's own failure, a hang
    and a stop come back as a :class:`SeedResult`."""
    worker = _worker_name()
    bdir = runner.build_dir(job.sim, runner.get_profile(job.profile), job.waves, job.overrides)
    try:
        runner.build(job.sim, job.profile, job.waves, job.overrides)
    except SystemExit as e:  # cocotb's runner exits on a failed compile: not in a worker
        raise RuntimeError(f"the build failed ({e}); log: {bdir / 'build.log'}") from None
    tdir = bdir / "runs" / f"farm-{job.name}-{uuid.uuid4().hex[:8]}"
    tdir.mkdir(parents=True)
    spec = tdir / "job.json"
    spec.write_text(json.dumps(dataclasses.asdict(job)))
    env = dict(os.environ)
    # the child imports this package, and builds where this worker builds
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(runner.ROOT), env.get("PYTHONPATH", "")) if p
    )
    env[runner.BUILD_ROOT_ENV] = str(runner.BUILD_ROOT)
    cmd = [sys.executable, "-m", f"{runner.PACKAGE}.regress.farm", "_seed", str(spec)]
    start = time.monotonic()
    with open(tdir / "runner.log", "wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=tdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status = _wait(proc, start + job.limit_s, _stop_check(stop_event))
        finally:
            _kill_group(proc)  # whatever happened here, nothing of the seed stays behind
    wall = time.monotonic() - start
    if status == TIMEOUT:
        message = f"killed at its wall-clock limit of {job.limit_s:g} s"
    elif status == STOPPED:
        message = "stopped: the regression was interrupted"
    else:
        status, message = _outcome(tdir, proc.returncode)
    cov = None
    cov_file = tdir / "coverage.json"
    if cov_file.is_file():
        with contextlib.suppress(ValueError, OSError):
            cov = json.loads(cov_file.read_text())
    result = SeedResult(
        name=job.name,
        status=status,
        message=message,
        log=_log_tail(tdir),
        coverage=cov,
        repro=job.repro,
        wall_s=wall,
        worker=worker,
        run_dir=str(tdir),
    )
    if result.passed and not job.waves:
        shutil.rmtree(tdir, ignore_errors=True)
        result.run_dir = ""
    return result


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return socket.gethostname()


def _stop_check(name: str | None) -> Callable[[], bool]:
    """A function telling whether the run's stop event is set (polled every few seconds)."""
    if not name:
        return lambda: False
    from distributed import Event

    event = Event(name)
    last = [0.0]

    def check() -> bool:
        now = time.monotonic()
        if now - last[0] < _STOP_POLL_S:
            return False
        last[0] = now
        try:
            return bool(event.is_set())
        except Exception:  # the scheduler gone: the client is gone too
            return True

    return check


def _wait(proc: subprocess.Popen, deadline: float, stopped: Callable[[], bool]) -> str:
    """Until the child exits (""), its deadline passes (TIMEOUT) or the run stops (STOPPED)."""
    while True:
        try:
            proc.wait(timeout=0.25)
            return ""
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() >= deadline:
            return TIMEOUT
        if stopped():
            return STOPPED


def _kill_group(proc: subprocess.Popen) -> None:
    """End the seed's process group: SIGTERM (a simulator may close its waves), then
    SIGKILL; also when the child has exited (a simulator it left running)."""
    pgid = proc.pid
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        try:
            proc.wait(timeout=_TERM_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    proc.wait()


def _outcome(tdir: Path, returncode: int | None) -> tuple[str, str]:
    results = tdir / "results.xml"
    if not results.is_file():
        log = tdir / "runner.log"
        lines = log.read_text(errors="replace").strip().splitlines() if log.is_file() else []
        last = f": {lines[-1].strip()}" if lines else ""
        return ERROR, f"the simulation ended without results (exit status {returncode}){last}"
    failed = runner.failures(results)
    if not failed:
        return PASSED, ""
    return FAILED, f"{failed} failed: {runner.failure_messages(results)}"


def _log_tail(tdir: Path) -> str:
    """The simulation's log (or the child's, where the simulation never started), its last
    :data:`LOG_TAIL` bytes."""
    parts = []
    for name in ("runner.log", "sim.log"):
        path = tdir / name
        size = path.stat().st_size if path.is_file() else 0
        if size:
            with open(path, "rb") as f:
                if size > LOG_TAIL:
                    f.seek(size - LOG_TAIL)
                text = f.read().decode(errors="replace")
            cut = f"[... the first {size - LOG_TAIL} bytes left out]\n" if size > LOG_TAIL else ""
            parts.append(f"==> {name} <==\n{cut}{text}")
    return "\n".join(parts)


def _watch_parent() -> None:
    """In the seed's child: when the worker that started it dies, kill the whole group
    (this process and the simulator), so that nothing of the seed is left running."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.2)
            if os.getppid() != parent:
                os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="farm-parent-watch", daemon=True).start()


def _child(spec: Path) -> int:
    _watch_parent()
    data = json.loads(spec.read_text())
    job = SeedJob(**data)
    tdir = spec.parent
    env = dict(job.env)
    if job.coverage_env:
        env[job.coverage_env] = str(tdir / "coverage.json")
    runner.run(
        job.testcase,
        sim=job.sim,
        profile=job.profile,
        module=job.module,
        waves=job.waves,
        seed=job.seed,
        overrides=job.overrides,
        extra_env=env,
        test_dir=tdir,
    )
    return 0


# --- on the client -------------------------------------------------------------------------


def _require_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise FarmError(
            "the regression runs on Dask: pip install '.[farm]' (make regress installs it)"
        ) from None


@contextlib.contextmanager
def cluster(
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    jobqueue: str | None = None,
    jobs: int = 1,
    connect_timeout: float = 20.0,
) -> Iterator:
    """A Dask client: on ``scheduler``, on a dask-jobqueue cluster of ``jobs`` batch jobs
    (``jobqueue``: slurm, lsf, pbs, sge), or on a local cluster of ``workers`` processes
    (default: one per core). The cluster this starts is closed on the way out."""
    _require_dask()
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout=f"{connect_timeout}s")
        except OSError as e:
            raise FarmError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
        with client:
            yield client
        return
    if jobqueue:
        with jobqueue_cluster(jobqueue) as jq:
            jq.scale(jobs=jobs)
            with Client(jq) as client:
                yield client
        return
    n = workers or len(os.sched_getaffinity(0))
    with warnings.catch_warnings():
        # its HTTP server (metrics; the dashboard wants bokeh) moves to a free port itself
        warnings.filterwarnings("ignore", "Port .* is already in use", UserWarning)
        local = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            memory_limit=0,  # a seed's memory is its simulator's, not the worker's
            dashboard_address=None,
            silence_logs=40,  # logging.ERROR: a worker restarting is reported by the run
        )
    with local, Client(local) as client:
        yield client


def jobqueue_cluster(kind: str):
    """A dask-jobqueue cluster of ``kind`` from dask's ``jobqueue.<kind>`` configuration
    (queue, account, walltime, cores, memory...). Each job's script first changes to this
    directory and puts this package on ``PYTHONPATH``, and the workers build under this
    build root (shared storage: one build for the farm). Defaults where the configuration
    gives none: one core, one single-threaded worker and 4 GiB per job."""
    if kind not in JOBQUEUE:
        raise FarmError(f"unknown batch system {kind!r}: choose from {', '.join(JOBQUEUE)}")
    try:
        import dask
        import dask_jobqueue
    except ImportError:
        raise FarmError("--cluster needs dask-jobqueue: pip install '.[farm]'") from None
    section = f"jobqueue.{kind}"
    prologue = list(dask.config.get(f"{section}.job-script-prologue", None) or [])
    prologue += [
        f"cd {Path.cwd()}",
        f'export PYTHONPATH="{runner.ROOT}${{PYTHONPATH:+:$PYTHONPATH}}"',
        f"export {runner.BUILD_ROOT_ENV}={runner.BUILD_ROOT}",
    ]
    kwargs: dict[str, object] = {"job_script_prologue": prologue}
    if dask.config.get(f"{section}.cores", None) is None:
        kwargs["cores"] = 1
        kwargs["processes"] = 1
    if dask.config.get(f"{section}.memory", None) is None:
        kwargs["memory"] = "4GiB"
    return getattr(dask_jobqueue, JOBQUEUE[kind])(**kwargs)


@dataclass
class Summary:
    """A finished regression: every seed's result, the merged coverage, the wall time."""

    results: list[SeedResult]
    coverage: Coverage
    wall_s: float
    workers: int
    interrupted: bool = False

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def failures(self) -> list[SeedResult]:
        return [r for r in self.results if not r.passed]

    @property
    def seeds_per_hour(self) -> float:
        return len(self.results) * 3600.0 / self.wall_s if self.wall_s > 0 else 0.0

    def goal_missed(self, goal: str) -> dict[str, list[str]]:
        """Bins the goal (``all``, ``required`` or ``none``) wants and no seed hit."""
        if goal == "none":
            return {}
        return self.coverage.missed(include_optional=goal == "all")

    def text(self, goal: str = "all") -> str:
        hit, total = self.coverage.bins()
        others = [
            f"{self.count(s)} {s}" for s in (FAILED, ERROR, TIMEOUT, LOST, STOPPED) if self.count(s)
        ]
        lines = [
            f"seeds run: {len(self.results)}, passed: {self.count(PASSED)}"
            + (f", {', '.join(others)}" if others else ", failed: 0"),
            f"wall: {self.wall_s:.1f} s on {self.workers} worker(s), "
            f"{self.seeds_per_hour:.1f} seeds per hour",
            f"coverage: {hit}/{total} bins hit ({100.0 * hit / max(total, 1):.1f}%)",
        ]
        missed = self.goal_missed(goal)
        if goal != "none":
            lines.append(
                f"coverage goal ({goal} bins): "
                + (f"missed, never hit: {describe_missed(missed)}" if missed else "met")
            )
        if self.interrupted:
            lines.append("interrupted: the seeds not reported above did not run")
        for r in self.failures:
            lines.append(f"FAILED {r.name} [{r.status}] {r.message}")
            lines.append(f"  reproduce: {r.repro}")
            if r.run_dir:
                lines.append(f"  run directory ({r.worker}): {r.run_dir}")
        return "\n".join(lines)


def run_regression(
    jobs: Sequence[SeedJob],
    client,
    *,
    out_dir: Path | None = None,
    retries: int = 1,
    progress: Callable[[str], None] | None = None,
    goal: str = "all",
) -> Summary:
    """Run ``jobs`` as tasks on ``client``'s cluster and collect them. With ``out_dir``:
    each seed's log and coverage under ``seeds/<name>/``, ``merged.json`` and
    ``report.txt`` (the coverage), ``junit.xml`` and ``summary.txt``. A Ctrl-C stops the
    running seeds (the stop event), cancels the rest, and returns what had finished."""
    from distributed import Event, as_completed
    from distributed.scheduler import KilledWorker

    say = progress or (lambda _line: None)
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        raise ValueError("two jobs have one name")
    run_id = uuid.uuid4().hex[:12]
    stop_name = f"pevb-farm-stop-{run_id}"
    stop = Event(stop_name, client=client)
    by_key = {}
    # in priority order too: the first tasks go to idle workers as they are submitted
    for job in sorted(jobs, key=lambda j: -j.priority):
        fut = client.submit(
            run_job,
            job,
            stop_name,
            key=f"seed-{job.name}-{run_id}",
            retries=retries,
            pure=False,
            priority=job.priority,
        )
        by_key[fut.key] = (fut, job)
    workers = len(client.scheduler_info(n_workers=-1).get("workers", {}))
    results: dict[str, SeedResult] = {}
    start = time.monotonic()
    interrupted = False
    try:
        for fut in as_completed([f for f, _ in by_key.values()]):
            job = by_key[fut.key][1]
            tries = _attempts(client, fut.key, retries)
            try:
                res = fut.result()
            except KilledWorker as e:
                msg = f"its worker was lost every time: {e}"
                res = SeedResult(job.name, LOST, msg, repro=job.repro)
            except Exception as e:
                tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
                msg = f"{type(e).__name__}: {e}"
                res = SeedResult(job.name, ERROR, msg, log=tb, repro=job.repro)
            res.attempts = tries
            results[job.name] = res
            fut.release()
            say(_progress_line(len(results), len(jobs), res))
    except KeyboardInterrupt:
        interrupted = True
        _stop(client, stop, [f for f, _ in by_key.values() if not f.done()])
    wall = time.monotonic() - start
    ordered = [results[j.name] for j in jobs if j.name in results]
    cov = Coverage()
    for r in ordered:
        if r.coverage:
            cov.merge(Coverage.from_json(r.coverage))
    summary = Summary(ordered, cov, wall, workers, interrupted)
    if out_dir is not None:
        write_outputs(summary, out_dir, goal)
    return summary


def _attempts(client, key: str, retries: int) -> int:
    """How many times the scheduler ran a task: the worker deaths it saw (``suspicious``)
    plus the retries its exceptions used, plus one."""

    def count(dask_scheduler, key=key, retries=retries):
        ts = dask_scheduler.tasks.get(key)
        if ts is None:
            return 1
        return 1 + ts.suspicious + max(0, retries - (ts.retries or 0))

    try:
        return int(client.run_on_scheduler(count))
    except Exception:
        return 1


def _stop(client, stop, pending) -> None:
    """Ctrl-C: tell the running seeds to stop (each kills its simulator), cancel the rest."""
    with contextlib.suppress(Exception):
        stop.set()
    with contextlib.suppress(Exception):
        client.cancel(pending, force=True)
    # the running tasks notice the event within a poll and end their process groups
    deadline = time.monotonic() + _STOP_POLL_S + _TERM_GRACE_S + 2
    while time.monotonic() < deadline:
        try:
            busy = any(client.processing().values())
        except Exception:
            break
        if not busy:
            break
        time.sleep(0.2)


def _progress_line(done: int, total: int, r: SeedResult) -> str:
    extra = f" (attempt {r.attempts})" if r.attempts > 1 else ""
    where = f" on {r.worker}" if r.worker else ""
    line = f"[{done}/{total}] {r.status.upper():7s} {r.name} {r.wall_s:.1f} s{where}{extra}"
    if not r.passed:
        line += f"\n    {r.message}\n    reproduce: {r.repro}"
    return line


def write_outputs(summary: Summary, out_dir: Path, goal: str = "all") -> None:
    """Per-seed logs and coverage (the last run's seeds there removed first), the merged
    coverage, the JUnit XML and the summary."""
    shutil.rmtree(out_dir / "seeds", ignore_errors=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    for r in summary.results:
        sdir = out_dir / "seeds" / r.name
        sdir.mkdir(parents=True, exist_ok=True)
        (sdir / "sim.log").write_text(r.log)
        if r.coverage:
            (sdir / "coverage.json").write_text(json.dumps(r.coverage, indent=1))
        meta = {k: v for k, v in dataclasses.asdict(r).items() if k not in ("log", "coverage")}
        (sdir / "result.json").write_text(json.dumps(meta, indent=1))
    summary.coverage.write(out_dir / "merged.json")
    (out_dir / "report.txt").write_text(summary.coverage.report() + "\n")
    write_junit(summary, out_dir / "junit.xml")
    (out_dir / "summary.txt").write_text(summary.text(goal) + "\n")


def write_junit(summary: Summary, path: Path, suite: str = "regress") -> None:
    """A JUnit XML of the seeds: one testcase per seed, a failure (the test failed) or an
    error (raised, timed out, lost, stopped) with its message and reproduce command."""
    failed = summary.count(FAILED)
    errors = len(summary.results) - summary.count(PASSED) - failed
    root = ET.Element("testsuites")
    ts = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(summary.results)),
        failures=str(failed),
        errors=str(errors),
        skipped="0",
        time=f"{summary.wall_s:.3f}",
        hostname=socket.gethostname(),
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"),
    )
    for r in summary.results:
        case = ET.SubElement(ts, "testcase", classname=suite, name=r.name, time=f"{r.wall_s:.3f}")
        props = ET.SubElement(case, "properties")
        for k, v in (("repro", r.repro), ("worker", r.worker), ("attempts", str(r.attempts))):
            ET.SubElement(props, "property", name=k, value=v)
        if not r.passed:
            tag = "failure" if r.status == FAILED else "error"
            node = ET.SubElement(case, tag, type=r.status, message=r.message[:2000])
            node.text = f"{r.message}\nreproduce: {r.repro}\n"
        out = ET.SubElement(case, "system-out")
        out.text = _xml_safe(r.log[-65536:])
    ET.indent(root)
    path.write_bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))


def _xml_safe(text: str) -> str:
    """Drop the characters XML 1.0 cannot carry (a log may hold terminal escapes)."""
    return "".join(c for c in text if c in "\t\n\r" or ord(c) >= 0x20)


# --- the command line --------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_seed"]:  # a seed's child process (run_job starts it)
        return _child(Path(argv[1]))
    ap = argparse.ArgumentParser(
        prog=f"python -m {runner.PACKAGE}.regress.farm",
        description="The random regression on Dask: a local cluster by default, "
        f"${SCHEDULER_ENV} (or --scheduler) for an existing one, --cluster for a batch farm.",
    )
    ap.add_argument("--sim", default=os.environ.get("SIM", "icarus"), choices=runner.SIMULATORS)
    ap.add_argument("--profile", default=os.environ.get("PROFILE", "picoevb"))
    ap.add_argument("--seeds", default="1-4", help="1-20, 3,7,9, ... (default 1-4)")
    ap.add_argument("--steps", type=int, default=20, help="steps per seed (default 20)")
    ap.add_argument(
        "--kinds",
        default=",".join(KINDS),
        help="which random tests each seed runs: chains, driver or both (default)",
    )
    ap.add_argument(
        "--test",
        action="append",
        default=[],
        metavar="MODULE:TESTCASE",
        help="run this cocotb test once per seed instead of the built-in kinds (repeatable)",
    )
    ap.add_argument(
        "--limit", type=float, default=DEFAULT_LIMIT_S, help="wall-clock seconds per seed"
    )
    ap.add_argument("--retries", type=int, default=1, help="reruns of a seed whose task raised")
    ap.add_argument("--waves", action="store_true", help="waveforms and TLP traces of each seed")
    ap.add_argument(
        "--goal",
        choices=("all", "required", "none"),
        help="the coverage goal that fails the run when missed (default: every bin; none "
        "with --test)",
    )
    where = ap.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler",
        default=os.environ.get(SCHEDULER_ENV) or os.environ.get(ADDRESS_ENV) or None,
        help=f"address of a Dask scheduler (default ${SCHEDULER_ENV}, or Dask's own "
        f"${ADDRESS_ENV})",
    )
    where.add_argument("--cluster", choices=sorted(JOBQUEUE), help="a batch system (jobqueue)")
    ap.add_argument("--workers", type=int, help="local cluster: worker processes (default: cores)")
    ap.add_argument("--jobs", type=int, default=2, help="--cluster: batch jobs (default 2)")
    ap.add_argument(
        "--connect-timeout",
        type=float,
        default=20.0,
        help="seconds to wait for the scheduler (default 20)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=runner.BUILD_ROOT / "regress",
        help="where the logs, coverage, junit.xml and summary go (default sim_build/regress)",
    )
    args = ap.parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds)
        if args.test:
            jobs = test_jobs(
                args.test,
                seeds,
                sim=args.sim,
                profile=args.profile,
                steps=args.steps,
                limit_s=args.limit,
                waves=args.waves,
            )
        else:
            kinds = [k for k in args.kinds.replace(" ", "").split(",") if k]
            jobs = regression_jobs(
                seeds,
                sim=args.sim,
                profile=args.profile,
                steps=args.steps,
                kinds=kinds,
                limit_s=args.limit,
                waves=args.waves,
            )
        runner.get_profile(args.profile)
        if args.workers is not None and args.workers < 1:
            raise ValueError("--workers must be at least 1")
        if args.limit <= 0:
            raise ValueError("--limit must be positive")
    except (ValueError, KeyError) as e:
        ap.error(str(e))
    goal = args.goal or ("none" if args.test else "all")
    try:
        with cluster(
            scheduler=args.scheduler,
            workers=args.workers,
            jobqueue=args.cluster,
            jobs=args.jobs,
            connect_timeout=args.connect_timeout,
        ) as client:
            where_ = args.scheduler or args.cluster or "a local cluster"
            print(f"regress: {len(jobs)} seed run(s) on {where_}, results in {args.out}")
            summary = run_regression(
                jobs, client, out_dir=args.out, retries=args.retries, progress=print, goal=goal
            )
    except FarmError as e:
        print(f"regress: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before the seeds ran (while a cluster started)
        print("regress: interrupted", file=sys.stderr)
        return 130
    print(summary.coverage.report())
    print(summary.text(goal))
    print(f"junit: {args.out / 'junit.xml'}; logs: {args.out / 'seeds'}")
    if summary.interrupted:
        return 130
    return 1 if summary.failures or summary.goal_missed(goal) else 0


if __name__ == "__main__":
    sys.exit(main())
