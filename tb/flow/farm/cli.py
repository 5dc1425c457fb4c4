"""``make regress`` (``python -m <package>.flow.farm``): the command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ...config.choices import DEFAULT_PROFILE, DEFAULT_SIM
from .. import runner
from .client import ADDRESS_ENV, JOBQUEUE, SCHEDULER_ENV, cluster, run_regression
from .jobs import DEFAULT_LIMIT_S, KINDS, FarmError, parse_seeds, regression_jobs, user_jobs


def main(argv: Sequence[str] | None = None) -> int:
    """The regression's command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(
        prog=f"python -m {runner.PACKAGE}.flow.farm",
        description="The random regression on Dask: a local cluster by default, "
        f"${SCHEDULER_ENV} (or --scheduler) for an existing one, --cluster for a batch farm.",
    )
    ap.add_argument(
        "--sim",
        default=os.environ.get("SIM", DEFAULT_SIM),
        choices=runner.SIMULATORS,
    )
    ap.add_argument("--profile", default=os.environ.get("PROFILE", DEFAULT_PROFILE))
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
        "--insecure",
        action="store_true",
        help="--cluster: plain TCP instead of TLS (anyone reaching the scheduler could run "
        "code as you)",
    )
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
            jobs = user_jobs(
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
            tls=not args.insecure,
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
    print(summary.coverage.report(summary.points))
    print(summary.text(goal))
    print(f"junit: {args.out / 'junit.xml'}; logs: {args.out / 'seeds'}")
    if summary.interrupted:
        return 130
    return 1 if summary.failures or summary.goal_missed(goal) else 0
