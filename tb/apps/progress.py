"""Live progress of a long simulation: the simulation writes a small JSON status file now
and then (:func:`tb.apps.demo.report`, a cocotb coroutine), and ``make sim`` reads it
while the simulator runs (:class:`Watcher`), with the run's log streamed as it grows.

The status file is replaced whole each time (written beside it, then renamed), so a
reader never sees half of one.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

PROGRESS_ENV = "DEMO_PROGRESS"
# how often the simulation looks at the wall clock (simulated time) and writes (wall time)
CHECK_EVERY_NS = 20_000
WRITE_EVERY_S = 0.5


@dataclass
class Status:
    """Where a run is: bytes moved and descriptors done (driver chain runs that ended),
    simulated and wall time, and the bytes the run will move in all (0: not known)."""

    bytes: int = 0
    descriptors: int = 0
    sim_ns: float = 0.0
    wall_s: float = 0.0
    total_bytes: int = 0
    done: bool = False

    def write(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.__dict__))
        os.replace(tmp, path)

    @classmethod
    def read(cls, path: Path) -> Status | None:
        try:
            return cls(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            return None


def _size(n: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"


def render(st: Status, wall_s: float, width: int = 24) -> str:
    """One progress line: a bar and an estimate when the total is known."""
    sim = f"{st.sim_ns / 1e3:,.0f} us simulated"
    moved = f"{_size(st.bytes)}"
    if st.total_bytes:
        frac = min(1.0, st.bytes / st.total_bytes)
        bar = "#" * round(frac * width) + "." * (width - round(frac * width))
        eta = ""
        if 0 < st.bytes < st.total_bytes and st.wall_s > 0:
            eta = f", about {_duration(st.wall_s * (st.total_bytes / st.bytes - 1))} left"
        moved = f"[{bar}] {100 * frac:3.0f}% {_size(st.bytes)} of {_size(st.total_bytes)}"
        return f"{moved}, {st.descriptors} descriptors, {sim}, {_duration(wall_s)} wall{eta}"
    return f"{moved} moved, {st.descriptors} descriptors, {sim}, {_duration(wall_s)} wall"


class Watcher:
    """Follows a running simulation: new log lines that ``keep`` selects go out as they
    appear (through ``shape``), and a progress line from the status file, redrawn in place
    on a terminal, printed every ``every_s`` seconds otherwise (as in CI)."""

    def __init__(
        self,
        log: Path,
        status: Path,
        keep: Callable[[str], str | None],
        out: TextIO | None = None,
        every_s: float = 10.0,
    ) -> None:
        self.log, self.status, self.keep = log, status, keep
        self.out = out or sys.stdout
        self.tty = self.out.isatty()
        self.every_s = every_s
        self._pos = 0
        self._partial = ""
        self._t0 = time.monotonic()
        # None, not 0.0: monotonic() counts from boot, so on a machine up for less than
        # every_s a 0.0 start would hold back the first plain line
        self._last_line: float | None = None
        self._drawn = 0

    def _clear(self) -> None:
        if self.tty and self._drawn:
            self.out.write("\r" + " " * self._drawn + "\r")
            self._drawn = 0

    def _follow_log(self) -> None:
        try:
            with open(self.log, errors="replace") as f:
                if os.fstat(f.fileno()).st_size < self._pos:  # truncated: a new run's log
                    self._pos, self._partial = 0, ""
                f.seek(self._pos)
                chunk = f.read()
                self._pos = f.tell()
        except OSError:
            return
        lines = (self._partial + chunk).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._emit(line)

    def _emit(self, line: str) -> None:
        shown = self.keep(line)
        if shown is not None:
            self._clear()
            self.out.write(shown + "\n")

    def poll(self) -> None:
        """Stream new log lines, then show the progress line if one is due."""
        self._follow_log()
        st = Status.read(self.status)
        now = time.monotonic()
        if st is None or st.done:
            self.out.flush()
            return
        line = "  " + render(st, now - self._t0)
        if self.tty:
            self._clear()
            self.out.write(line)
            self._drawn = len(line)
        elif self._last_line is None or now - self._last_line >= self.every_s:
            self._last_line = now
            self.out.write(line + "\n")
        self.out.flush()

    def finish(self) -> None:
        """The run ended: the rest of the log, and no progress line left on screen."""
        self._follow_log()
        if self._partial:
            self._emit(self._partial)
            self._partial = ""
        self._clear()
        self.out.flush()
