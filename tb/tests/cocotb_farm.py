"""Seeds with a known fate, for the tests of the Dask regression (tests/sim/test_sim_farm.py).

They need no testbench: each runs on the card's build and does what its name says. The
seed and the coverage file come the way the regression passes them (``$REGRESS_SEED``,
``$REGRESS_COVERAGE``); ``farm_waits`` and ``farm_hangs`` block the simulator itself in
wall-clock time, as a hung simulation does (each has a cap, so a broken kill cannot leave
one running for ever).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import cocotb
from cocotb.triggers import Timer

from tb.regress.coverage import Coverage

_CAP_S = 120.0


def _write_coverage(passed: bool) -> None:
    out = os.environ.get("REGRESS_COVERAGE")
    if not out:
        return
    seed = int(os.environ.get("REGRESS_SEED", "1"))
    cov = Coverage()
    # a hit per seed that a merge can count: seed n hits `concurrency` n times
    for _ in range(seed):
        cov.hit("concurrency", "h2c")
    cov.hit("outcome", "ok")
    cov.runs.append({"name": os.environ.get("REGRESS_NAME", "?"), "seed": seed, "passed": passed})
    cov.write(Path(out))


def _started() -> None:
    """Tell the test this simulation runs: a file named after its pid, in $FARM_STARTED."""
    folder = os.environ.get("FARM_STARTED")
    if folder:
        Path(folder, f"{os.getpid()}").write_text(os.environ.get("REGRESS_SEED", ""))


@cocotb.test(timeout_time=1, timeout_unit="ms")
async def farm_passes(dut):
    """Runs 100 ns of simulation and passes, with its coverage."""
    await Timer(100, "ns")
    _write_coverage(True)


@cocotb.test(timeout_time=1, timeout_unit="ms")
async def farm_raises(dut):
    """Raises from inside the simulation, after writing its coverage."""
    await Timer(100, "ns")
    _write_coverage(False)
    raise RuntimeError(f"farm_raises: seed {os.environ.get('REGRESS_SEED')} raised on purpose")


@cocotb.test(timeout_time=1, timeout_unit="ms")
async def farm_hangs(dut):
    """Blocks the simulator in wall-clock time, as a hung simulation would."""
    _started()
    end = time.monotonic() + _CAP_S
    while time.monotonic() < end:
        time.sleep(0.05)
    raise AssertionError("farm_hangs: nobody killed this seed")


@cocotb.test(timeout_time=1, timeout_unit="ms")
async def farm_waits(dut):
    """Blocks until the file $FARM_RELEASE exists, then passes."""
    _started()
    release = Path(os.environ["FARM_RELEASE"])
    end = time.monotonic() + _CAP_S
    while not release.exists():
        if time.monotonic() > end:
            raise AssertionError(f"farm_waits: {release} never appeared")
        time.sleep(0.05)
    await Timer(100, "ns")
    _write_coverage(True)
