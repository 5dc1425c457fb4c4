"""The Dask task: :func:`run_job` builds (once per build directory, locked) and runs one
seed in a child process that leads its own process group (:mod:`.seed`), under the seed's
wall-clock limit and the run's stop event; it kills the group whatever happens and sends a
:class:`~.jobs.SeedResult` back."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from .. import runner
from .jobs import ERROR, FAILED, PASSED, STOPPED, TIMEOUT, SeedJob, SeedResult

LOG_TAIL = 1 << 20  # bytes of a seed's log that come back


STOP_POLL_S = 2.0


TERM_GRACE_S = 5.0


def run_job(job: SeedJob, stop_event: str | None = None) -> SeedResult:
    """Run one seed (a Dask task, or called directly): build (once), then the test in a
    child process group under ``job.limit_s`` of wall clock. Raises only where the seed
    could not be run at all (a bad build, a bad profile); the test's own failure, a hang
    and a stop come back as a :class:`SeedResult`."""
    worker = _worker_name()
    try:
        bdir = runner.build(job.sim, job.profile, job.waves, job.overrides, job.toplevel)
    except SystemExit as e:  # cocotb's runner exits on a failed compile: not in a worker
        bdir = runner.build_dir(
            job.sim, runner.get_profile(job.profile), job.waves, job.overrides, job.toplevel
        )
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
    cmd = [sys.executable, "-m", f"{runner.PACKAGE}.flow.farm.seed", str(spec)]
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
    last = [-math.inf]  # monotonic() counts from boot: the first check is due at once

    def check() -> bool:
        now = time.monotonic()
        if now - last[0] < STOP_POLL_S:
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
            proc.wait(timeout=TERM_GRACE_S)
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
