"""The random regression on Dask: one task per seed, on this machine or on a farm.

``make regress`` (``python -m tb.flow.farm``) turns a list of seeds into
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

The package is split by role, each in a module of its own: :mod:`.jobs` (what a seed is and
what comes back), :mod:`.worker` (the Dask task), :mod:`.seed` (the seed's child process),
:mod:`.client` (the cluster and the run), :mod:`.outputs` (summary, logs, coverage, JUnit)
and :mod:`.cli` (the command line).
"""

from __future__ import annotations

from .cli import main
from .client import ADDRESS_ENV, JOBQUEUE, SCHEDULER_ENV, cluster, jobqueue_cluster, run_regression
from .jobs import (
    DEFAULT_LIMIT_S,
    ERROR,
    FAILED,
    KINDS,
    LOST,
    MODULE,
    NAME_ENV,
    PASSED,
    SEED_ENV,
    STOPPED,
    TIMEOUT,
    FarmError,
    SeedJob,
    SeedResult,
    parse_seeds,
    regression_jobs,
    user_jobs,
)
from .outputs import Summary, write_junit, write_outputs
from .worker import run_job

__all__ = [
    "ADDRESS_ENV",
    "DEFAULT_LIMIT_S",
    "ERROR",
    "FAILED",
    "JOBQUEUE",
    "KINDS",
    "LOST",
    "MODULE",
    "NAME_ENV",
    "PASSED",
    "SCHEDULER_ENV",
    "SEED_ENV",
    "STOPPED",
    "TIMEOUT",
    "FarmError",
    "SeedJob",
    "SeedResult",
    "Summary",
    "cluster",
    "jobqueue_cluster",
    "main",
    "parse_seeds",
    "regression_jobs",
    "run_job",
    "run_regression",
    "user_jobs",
    "write_junit",
    "write_outputs",
]
