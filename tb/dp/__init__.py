"""The compiled data path (docs/performance.md, "Design: the compiled data path"): a
library of the project's own in C++, built here on first use into ``sim_build/dp/``
and loaded into the process with ctypes, and the switch that picks the path.

``$PEVB_DATAPATH`` (:data:`DATAPATH_ENV`): ``python`` (the default) or ``compiled``. What
the compiled path covers today is stage 1: the fabric's calendar (:class:`Calendar`,
``calendar.cpp``), on which the TLP-level links' and switches' timed work runs in the
same order as on the Python heap (:class:`tb.models.timeline.Timeline`); every TLP is
still Python's.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

DATAPATH_ENV = "PEVB_DATAPATH"
PYTHON, COMPILED = "python", "compiled"
DATAPATHS = (PYTHON, COMPILED)

SOURCES = (Path(__file__).with_name("calendar.cpp"),)

__all__ = [
    "COMPILED",
    "DATAPATHS",
    "DATAPATH_ENV",
    "PYTHON",
    "Calendar",
    "check",
    "datapath",
    "library",
]


def check(value: str | None) -> str:
    """``value`` of ``$PEVB_DATAPATH`` as the path it names (unset or empty: ``python``);
    ``ValueError``, one line naming the choices, for anything else."""
    value = value or PYTHON
    if value not in DATAPATHS:
        raise ValueError(f"{DATAPATH_ENV}={value!r}: choose {' or '.join(DATAPATHS)}")
    return value


def datapath() -> str:
    """The data path this run takes (``$PEVB_DATAPATH``, checked by :func:`check`)."""
    return check(os.environ.get(DATAPATH_ENV))


# where the runner's builds go (tb.runner.BUILD_ROOT_ENV, which the runner gives every
# simulation), else ./sim_build as the runner's own default
BUILD_ROOT_ENV = "PEVB_BUILD_ROOT"


def _build_root() -> Path:
    return Path(os.environ.get(BUILD_ROOT_ENV) or Path.cwd() / "sim_build").resolve() / "dp"


_lib: list[ctypes.CDLL] = []


def library() -> ctypes.CDLL:
    """The library, built from :data:`SOURCES` if this version of them has not been
    (``sim_build/dp/libpevb_dp-<hash>.so``, under a lock), and loaded once."""
    if _lib:
        return _lib[0]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in SOURCES)).hexdigest()[:12]
    out = _build_root() / f"libpevb_dp-{digest}.so"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
        if cxx is None:
            raise RuntimeError("the compiled data path needs a C++ compiler (apt-get install g++)")
        with open(out.parent / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not out.exists():
                tmp = out.with_suffix(f".{os.getpid()}.tmp")
                cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-Wall", "-Wextra"]
                done = subprocess.run(
                    [*cmd, "-o", str(tmp), *map(str, SOURCES)], capture_output=True, text=True
                )
                if done.returncode != 0:
                    raise RuntimeError(f"building {out.name} failed:\n{done.stderr[-4000:]}")
                tmp.replace(out)
    lib = ctypes.CDLL(str(out))
    u64, p = ctypes.c_uint64, ctypes.c_void_p
    pu64 = ctypes.POINTER(u64)
    for name, res, args in (
        ("dp_cal_new", p, []),
        ("dp_cal_free", None, [p]),
        ("dp_cal_push", None, [p, u64, u64, u64]),
        ("dp_cal_size", u64, [p]),
        ("dp_cal_first", ctypes.c_int, [p, pu64, pu64]),
        ("dp_cal_pop_due", ctypes.c_int, [p, u64, pu64, pu64]),
        ("dp_cal_clear", None, [p]),
    ):
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    _lib.append(lib)
    return lib


class Calendar:
    """Work at (step, slot) in the library's calendar: Python's work kept here by
    handle, the order the library's."""

    def __init__(self) -> None:
        self._lib = library()
        self._cal = self._lib.dp_cal_new()
        self._work: dict[int, tuple[Callable[[Any], None], Any]] = {}
        self._next = 0
        self._step = ctypes.c_uint64()
        self._slot = ctypes.c_uint64()
        self._handle = ctypes.c_uint64()

    def __del__(self) -> None:
        cal, self._cal = getattr(self, "_cal", None), None
        if cal is not None:
            self._lib.dp_cal_free(cal)

    @property
    def library_name(self) -> str:
        """The file of the library this calendar is in."""
        return Path(self._lib._name).name

    def __len__(self) -> int:
        return int(self._lib.dp_cal_size(self._cal))

    def push(self, step: int, slot: int, work: Callable[[Any], None], arg: Any) -> None:
        """Schedule ``work(arg)`` at ``step``, in place ``slot`` among that step's work."""
        handle = self._next
        self._next += 1
        self._work[handle] = (work, arg)
        self._lib.dp_cal_push(self._cal, step, slot, handle)

    def first(self) -> tuple[int, int] | None:
        """The (step, slot) of the earliest work, or None."""
        if not self._lib.dp_cal_first(self._cal, self._step, self._slot):
            return None
        return self._step.value, self._slot.value

    def due(self, now: int) -> Iterator[tuple[int, Callable[[Any], None], Any]]:
        """Take the work due by step ``now``, in order, one at a time (work scheduled
        meanwhile for ``now`` comes in its place): (slot, work, arg)."""
        lib, cal, slot, handle = self._lib, self._cal, self._slot, self._handle
        while lib.dp_cal_pop_due(cal, now, slot, handle):
            work, arg = self._work.pop(handle.value)
            yield slot.value, work, arg

    def clear(self) -> None:
        self._lib.dp_cal_clear(self._cal)
        self._work.clear()
