"""Helpers of the farm's tests (tests/unit/test_unit_farm.py, tests/sim/test_sim_farm.py): waiting
for a condition with a deadline, and what /proc says of a process."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def wait_until(ready: Callable[[], object], seconds: float, step: float = 0.05) -> bool:
    """Poll ``ready`` until it is true or ``seconds`` have passed; its last answer."""
    end = time.monotonic() + seconds
    while not (done := bool(ready())) and time.monotonic() < end:
        time.sleep(step)
    return done


def alive(pid: int | str) -> bool:
    """The process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def cmdline(pid: int | str) -> str:
    """A process's command line, its arguments joined by spaces ("" once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
