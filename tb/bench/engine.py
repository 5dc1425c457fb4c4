"""cocotb side of ``make bench``: runs the cases of ``$BENCH_CASES`` (JSON: direction,
bytes per descriptor, total) against host memory, checks the data, and writes each case's
figures (Run-to-IRQ and streaming time, wall and CPU seconds) to ``$BENCH_OUT``. See
docs/internals.md.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from typing import Any

import cocotb
from cocotb.utils import get_sim_time, get_time_from_sim_steps
from cocotbext.pcie.core.tlp import TlpType

from driver_model.desc import Segment

from ..config.build import current_profile
from ..env.harness import Harness, check_ok, pattern
from ..env.link import DOWN, MEM_READS, MEM_WRITES, UP, ends_request
from ..env.native import meter as native_meter
from ..env.system import TB

_REQUESTS = MEM_READS | MEM_WRITES
_DATA = frozenset({TlpType.CPL_DATA})


class DataClock:
    """Times the data TLPs of one host buffer on the FPGA's link: its reads' completions
    (H2C) or its writes (C2H). Where the compiled data path's library takes the link's
    upper end, a meter there (``meter``: :func:`tb.env.native.meter`) counts the
    requests and the card's completions the library moves, so that timing them does not
    take them off the library's path; :meth:`observe` counts those Python moves."""

    def __init__(self, meter: Any = None) -> None:
        self.meter = meter
        self.tags: set[int] = set()
        self.reset()

    def reset(self, lo: int = 0, hi: int = 0) -> None:
        """Start timing transfers to or from ``[lo, hi)``."""
        self.lo, self.hi = lo, hi
        self.first = self.last = None
        self.first_bytes = self.bytes = 0
        self.header = self.largest = 0  # header bytes and largest payload of a data TLP
        self.tags.clear()
        if self.meter is not None:
            self.meter.reset(lo, hi)

    def _data(self, tlp, n: int) -> None:
        self.header = tlp.get_header_size()
        self.largest = max(self.largest, len(tlp.data))
        now = get_sim_time("ns")
        if self.first is None:
            self.first, self.first_bytes = now, n
        self.last = now
        self.bytes += n

    def _tagged(self, tag: int) -> bool:
        return self.meter.tagged(tag) if self.meter is not None else tag in self.tags

    def observe(self, link: str, direction: str, tlp) -> None:
        if link != "fpga":
            return
        ft = tlp.fmt_type
        if direction == UP and (ft in MEM_WRITES or ft in MEM_READS):
            if self.lo <= tlp.address < self.hi:
                if ft in MEM_WRITES:
                    self._data(tlp, len(tlp.data))
                elif self.meter is not None:  # (its completions may be the library's)
                    self.meter.tag(tlp.tag)
                else:
                    self.tags.add(tlp.tag)
        elif direction == DOWN and ft == TlpType.CPL_DATA and self._tagged(tlp.tag):
            self._data(tlp, len(tlp.data) - (tlp.lower_address & 3))
            if ends_request(tlp):
                self.tags.discard(tlp.tag)
                if self.meter is not None:
                    self.meter.untag(tlp.tag)

    def collect(self) -> None:
        """Take in what the meter counted (its writes), as if observed here."""
        if self.meter is None:
            return
        f = self.meter.figures()
        if not f.seen:
            return
        first = get_time_from_sim_steps(f.first, "ns")
        last = get_time_from_sim_steps(f.last, "ns")
        if self.first is None or first < self.first:
            self.first, self.first_bytes = first, f.first_bytes
        if self.last is None or last >= self.last:
            self.last, self.header = last, f.header
        self.largest = max(self.largest, f.largest)
        self.bytes += f.bytes
        self.meter.reset(self.lo, self.hi)


@cocotb.test(timeout_time=60000, timeout_unit="ms")
async def bench_engine(dut):
    """Run the cases of ``$BENCH_CASES`` and write their figures to ``$BENCH_OUT``."""
    cases = json.loads(os.environ["BENCH_CASES"])
    profile = current_profile()  # the build's, card RAM override included
    if os.environ.get("BENCH_MPS"):
        profile = replace(profile, mps=int(os.environ["BENCH_MPS"]))
    tb = TB(dut, profile=profile)
    await tb.init()
    h = Harness(tb)
    clock = DataClock()
    clock.meter = native_meter(tb, "fpga", UP, clock.observe)
    # (only what it times: the rest of the traffic may take the compiled data path's
    # hops; where the library takes these TLPs, the meter counts them in its place)
    tb.links.add_observer(clock.observe, links=("fpga",), directions=(UP,), types=_REQUESTS)
    tb.links.add_observer(clock.observe, links=("fpga",), directions=(DOWN,), types=_DATA)
    biggest = max(c["total"] for c in cases)
    assert biggest <= h.ram_size, f"cases need {biggest} bytes of card RAM, have {h.ram_size}"
    src, dst = tb.alloc_host(biggest, "bench source"), tb.alloc_host(biggest, "bench dest")
    src_base, dst_base = src.get_absolute_address(0), dst.get_absolute_address(0)
    src[0:biggest] = pattern(biggest, 7)
    results = []
    for case in cases:
        total, size, direction = case["total"], case["desc"], case["dir"]
        assert total % size == 0, case
        n = total // size
        if direction == "H2C":
            segs = [Segment(src_base + k * size, k * size, size) for k in range(n)]
            clock.reset(src_base, src_base + total)
        else:
            dst[0:total] = bytes(total)
            segs = [Segment(k * size, dst_base + k * size, size) for k in range(n)]
            clock.reset(dst_base, dst_base + total)
        ch = h.h2c if direction == "H2C" else h.c2h
        wall0, cpu0, sim0 = time.perf_counter(), time.process_time(), get_sim_time("ns")
        res = await h.run(ch, segs, timeout_ns=max(1e6, total * 20.0))
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        clock.collect()
        sim = get_sim_time("ns") - sim0
        check_ok(res, n, f"{direction} {n} x {size} B")
        assert clock.bytes == total, f"{direction}: {clock.bytes} data bytes seen, not {total}"
        if direction == "C2H":
            assert dst[0:total] == src[0:total], f"C2H {n} x {size} B: wrong data"
        results.append(
            {
                **case,
                "descriptors": n,
                "run_ns": res.elapsed_ns,
                "stream_ns": (clock.last or 0) - (clock.first or 0),
                "stream_bytes": total - clock.first_bytes,
                "sim_ns": sim,
                "sim_start_ns": sim0,
                "wall_s": wall,
                "cpu_s": cpu,
                "metered": clock.meter is not None,
                "tlp_header": clock.header,
                "tlp_payload_max": clock.largest,
                "clk_hz": profile.user_clk_hz,
                "mps": profile.mps,
                "mrrs": profile.mrrs,
            }
        )
        tb.log.info(
            "%s %d x %d B: %.1f MB/s (run), %.1f us simulated in %.2f s",
            direction,
            n,
            size,
            total * 1e3 / res.elapsed_ns,
            sim / 1e3,
            wall,
        )
    with open(os.environ["BENCH_OUT"], "w") as f:
        json.dump(results, f, indent=1)
