"""The seed's child process (``python -m <package>.flow.farm.seed JOB.json``), started by
:func:`~.worker.run_job` as the leader of its own process group: it runs the seed's cocotb
test through the runner, and kills its group (itself and the simulator) when the worker
that started it dies."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from .. import runner
from .jobs import SeedJob


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the seed described by the JSON file named on the command line."""
    (spec_arg,) = sys.argv[1:] if argv is None else argv
    spec = Path(spec_arg)
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
        toplevel=job.toplevel,
        extra_env=env,
        test_dir=tdir,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
