"""The client side: the cluster (local, a running scheduler, or dask-jobqueue workers) and
:func:`run_regression`, which submits every seed as a task, collects the results as they
come, and stops the run on Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import time
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ...regress.coverage import KIND_POINTS, Coverage
from .. import runner
from .jobs import ERROR, LOST, FarmError, SeedJob, SeedResult
from .outputs import Summary, write_outputs
from .worker import STOP_POLL_S, TERM_GRACE_S, run_job

SCHEDULER_ENV = "DASK_SCHEDULER"


ADDRESS_ENV = "DASK_SCHEDULER_ADDRESS"  # what Dask's own Client() reads


JOBQUEUE = {"slurm": "SLURMCluster", "lsf": "LSFCluster", "pbs": "PBSCluster", "sge": "SGECluster"}


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
    tls: bool = True,
) -> Iterator:
    """A Dask client: on ``scheduler``, on a dask-jobqueue cluster of ``jobs`` batch jobs
    (``jobqueue``: slurm, lsf, pbs, sge), or on a local cluster of ``workers`` processes
    (default: one per core). The cluster this starts is closed on the way out. A batch
    cluster speaks TLS unless ``tls`` is false (see :func:`jobqueue_cluster`)."""
    _require_dask()
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            # Dask's own TLS configuration (distributed.comm.tls.*) applies: Security()
            # reads it, as Client would
            client = Client(scheduler, timeout=f"{connect_timeout}s", security=_configured())
        except OSError as e:
            raise FarmError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
        with client:
            yield client
        return
    if jobqueue:
        with jobqueue_cluster(jobqueue, tls=tls) as jq:
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


def _configured():
    """Dask's TLS configuration (``distributed.comm.tls.*``) as a ``Security``."""
    from distributed.security import Security

    return Security()


def _tls_security(section: str, kwargs: dict[str, object]):
    """The batch cluster's TLS: Dask's own configuration where it names a CA file, else
    a temporary self-signed certificate for this run, written for the workers to the
    configured ``shared-temp-directory`` or under the build root (which the farm's jobs
    share already), in files only this user can read."""
    import dask
    from distributed.security import Security

    if dask.config.get("distributed.comm.tls.ca-file", None):
        return Security(require_encryption=True)
    try:
        security = Security.temporary()
    except ImportError:
        raise FarmError(
            "TLS for the batch cluster needs cryptography: pip install '.[farm]' (or run "
            "with --insecure on a network you trust)"
        ) from None
    if dask.config.get(f"{section}.shared-temp-directory", None) is None:
        shared = runner.BUILD_ROOT / "farm-tls"
        shared.mkdir(parents=True, exist_ok=True)
        shared.chmod(0o700)
        kwargs["shared_temp_directory"] = str(shared)
    return security


def jobqueue_cluster(kind: str, tls: bool = True):
    """A dask-jobqueue cluster of ``kind`` from dask's ``jobqueue.<kind>`` configuration
    (queue, account, walltime, cores, memory...). Each job's script first changes to this
    directory and puts this package on ``PYTHONPATH``, and the workers build under this
    build root (shared storage: one build for the farm). Defaults where the configuration
    gives none: one core, one single-threaded worker and 4 GiB per job.

    The scheduler listens on the submit host where anyone on the cluster's network could
    reach it, and a client or worker it accepts runs Python as this user: so with ``tls``
    (the default) the scheduler, the workers and the client speak TLS and accept only
    peers holding this run's certificate (:func:`_tls_security`)."""
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
    if tls:
        kwargs["security"] = _tls_security(section, kwargs)
        kwargs["protocol"] = "tls://"
    if dask.config.get(f"{section}.cores", None) is None:
        kwargs["cores"] = 1
        kwargs["processes"] = 1
    if dask.config.get(f"{section}.memory", None) is None:
        kwargs["memory"] = "4GiB"
    return getattr(dask_jobqueue, JOBQUEUE[kind])(**kwargs)


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
    kinds = {j.kind for j in jobs}
    points = None  # (a user's own tests: every coverpoint)
    if kinds and "" not in kinds:
        points = tuple(p for k in sorted(kinds) for p in KIND_POINTS[k])
    summary = Summary(ordered, cov, wall, workers, interrupted, points)
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
    deadline = time.monotonic() + STOP_POLL_S + TERM_GRACE_S + 2
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
