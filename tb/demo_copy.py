"""cocotb test behind ``make sim``: a host -> card -> host descriptor-chain copy."""

from __future__ import annotations

import os
import random

import cocotb
from cocotb.utils import get_sim_time

from driver_model.desc import Segment

from .test_dma import GUARD, PAGE, Harness, check_ok, setup


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def demo_copy(dut):
    """Scatter a buffer over shuffled host pages, copy it to card RAM and back, verify."""
    h: Harness = await setup(dut)
    size = min(int(os.environ.get("DEMO_SIZE", "32768")), h.ram_size)
    pages = (size + PAGE - 1) // PAGE
    order = list(range(pages))
    random.Random(1).shuffle(order)
    src = h.tb.alloc_host(pages * PAGE)
    dst = h.tb.alloc_host(pages * PAGE + 2 * PAGE)
    data = random.Random(2).randbytes(size)
    dst[0:len(dst)] = bytes([GUARD]) * len(dst)
    h2c, c2h = [], []
    for i in range(pages):
        n = min(PAGE, size - i * PAGE)
        at = order[i] * PAGE
        src[at:at + n] = data[i * PAGE:i * PAGE + n]
        h2c.append(Segment(src.get_absolute_address(at), i * PAGE, n))
        c2h.append(Segment(i * PAGE, dst.get_absolute_address(PAGE + i * PAGE), n))
    t0 = get_sim_time("ns")
    r1 = await h.run(h.h2c, h2c, timeout_ns=50e6)
    check_ok(r1, len(h2c), "H2C")
    r2 = await h.run(h.c2h, c2h, timeout_ns=50e6)
    check_ok(r2, len(c2h), "C2H")
    t1 = get_sim_time("ns")
    got = bytes(dst[0:len(dst)])
    ok = got[PAGE:PAGE + size] == data and got[:PAGE] == bytes([GUARD]) * PAGE and \
        got[PAGE + size:] == bytes([GUARD]) * (len(dst) - PAGE - size)
    h.tb.log.info("H2C: %d bytes in %d descriptors from %d scattered host pages, %.1f us",
                  size, len(h2c), pages, r1.elapsed_ns / 1000)
    h.tb.log.info("C2H: %d bytes in %d descriptors, %.1f us", size, len(c2h),
                  r2.elapsed_ns / 1000)
    h.tb.log.info("host -> card -> host %s (%d bytes, %.1f us simulated)",
                  "VERIFIED" if ok else "MISMATCH", size, (t1 - t0) / 1000)
    assert ok, "copied data differs from the source"
