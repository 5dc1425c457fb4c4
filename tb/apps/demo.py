"""cocotb test behind ``make sim``: one picoevb demo program through the RTL.

``DEMO`` names the program (default ``rdma-cuda``), ``DEMO_ARGS`` its command line. The
program's stdout/stderr lines are logged with an ``app:`` prefix; the test passes when its
exit status is 0. With ``DEMO_RESULTS`` the program's figures (bytes, DMA time...) and
the simulated and wall time of the program go to that JSON file.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Callable
from pathlib import Path

import cocotb
from cocotb.triggers import Timer
from cocotb.utils import get_sim_time

from driver_model import regs

from ..env.harness import bring_up
from .programs import AppEnv, expected_bytes, run_demo
from .progress import CHECK_EVERY_NS, PROGRESS_ENV, WRITE_EVERY_S, Status


async def report(path: Path, sample: Callable[[], Status]) -> None:
    """Write ``sample()`` to ``path`` every :data:`.progress.WRITE_EVERY_S` of wall
    time, looking every :data:`.progress.CHECK_EVERY_NS` of simulated time; runs until
    cancelled."""
    last = time.monotonic()
    sample().write(path)
    while True:
        await Timer(CHECK_EVERY_NS, "ns")
        now = time.monotonic()
        if now - last >= WRITE_EVERY_S:
            last = now
            sample().write(path)


@cocotb.test(timeout_time=5000, timeout_unit="ms")
async def demo(dut):
    """Boot, load the driver, run the demo named by ``$DEMO`` and check its exit status."""
    name = os.environ.get("DEMO", "rdma-cuda")
    args = shlex.split(os.environ.get("DEMO_ARGS", ""))
    rig = await bring_up(dut)
    log = rig.tb.log
    env = AppEnv(
        open=rig.open,
        cuda=rig.cuda,
        process=rig.process,
        out=lambda s: log.info("app: %s", s),
        err=lambda s: log.warning("app: %s", s),
    )
    log.info(
        "running %s %s (profile %s, card RAM %d bytes)",
        name,
        " ".join(args),
        rig.tb.profile.name,
        rig.drv.fpga_ram_size,
    )
    wall0, sim0 = time.perf_counter(), get_sim_time("ns")
    try:
        total = expected_bytes(name, args, rig.drv.fpga_ram_size)
    except ValueError:
        total = 0  # a bad command line: the program says so

    def sample(done: bool = False) -> Status:
        runs = rig.drv.runs
        return Status(
            bytes=sum(r.nbytes for r in runs),
            descriptors=sum(r.descriptors for r in runs),
            sim_ns=get_sim_time("ns") - sim0,
            wall_s=time.perf_counter() - wall0,
            total_bytes=total,
            done=done,
        )

    progress = os.environ.get(PROGRESS_ENV)
    reporter = cocotb.start_soon(report(Path(progress), sample)) if progress else None
    try:
        status = await run_demo(env, name, args)
    finally:
        if reporter is not None:
            reporter.cancel()
            sample(done=True).write(Path(progress))
    wall, sim = time.perf_counter() - wall0, get_sim_time("ns") - sim0
    runs = list(rig.drv.runs)
    if runs:
        log.info(
            "driver: %d chain runs, %d descriptors, %d bytes H2C, %d bytes C2H",
            len(runs),
            sum(r.descriptors for r in runs),
            sum(r.nbytes for r in runs if r.direction.name == "H2C"),
            sum(r.nbytes for r in runs if r.direction.name == "C2H"),
        )
    res = env.results
    if "dma_time_ns" in res:
        log.info(
            "result: %d bytes, dma_time_ns %d (%.1f MB/s)",
            res["bytes"],
            res["dma_time_ns"],
            res["bytes"] * 1e3 / max(res["dma_time_ns"], 1),
        )
    if "pinned_by" in res:
        log.info("surfaces pinned by %s", res["pinned_by"])
    if name in ("rdma-cuda", "rdma-malloc") and "mismatches" in res:  # it got to compare
        log.info("%s %s", name, "VERIFIED" if status == 0 else "MISMATCH")
    if name == "set-leds" and status == 0:
        led = await rig.tb.user_read32(regs.USER_LED)  # also flushes the posted write
        assert int(dut.led.value) == led
        log.info("LEDs now %s (active low: 0 = lit)", format(led, "03b"))
    log.info("exit status %d", status)
    if os.environ.get("DEMO_RESULTS"):  # for make bench
        with open(os.environ["DEMO_RESULTS"], "w") as f:
            json.dump(
                {
                    **env.results,
                    "status": status,
                    "demo_sim_ns": sim,
                    "demo_wall_s": wall,
                    "h2c_bytes": sum(r.nbytes for r in runs if r.direction.name == "H2C"),
                    "c2h_bytes": sum(r.nbytes for r in runs if r.direction.name == "C2H"),
                },
                f,
            )
    assert status == 0, f"{name} exited with status {status}"
