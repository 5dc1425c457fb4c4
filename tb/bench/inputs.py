"""A record of everything the testbench drives into the card's RTL, cycle by cycle, for
replaying the same run with no Python (``tb/flow/bench/rtl_alone.py``).

As a TB plugin (``$PEVB_PLUGINS`` holding ``tb.bench.inputs``), :func:`attach` records
when ``$PEVB_RECORD_INPUTS`` names a file: at every falling edge of the user clock, each
input port of the card's toplevel (``pevb_dma_top``; the clock aside) whose value changed
since the last one, as a line ``<cycle> <port> <hex value>`` (the first falling edge
gives them all); and, to check a replay against, each cycle in which the RTL hands a
beat over on RQ or CC, as ``<cycle> =rq`` or ``<cycle> =cc``. The values at a falling
edge are those the RTL samples on the next rising edge. It wakes Python on every
falling edge: for recording, never for speed.
"""

from __future__ import annotations

import atexit
import os
from pathlib import Path

import cocotb
from cocotb.triggers import FallingEdge
from cocotb.utils import get_sim_time

from ..config.choices import RECORD_ENV
from ..config.sources import USER_CLOCK as CLOCK
from ..config.sources import input_ports

PLUGIN = __name__


def attach(tb) -> None:
    """Record ``tb``'s inputs to the card into ``$PEVB_RECORD_INPUTS`` (nothing when it
    is unset)."""
    path = os.environ.get(RECORD_ENV)
    if path:
        cocotb.start_soon(_record(tb, Path(path)))


async def _record(tb, path: Path) -> None:
    dut = tb.dut
    period = 1e9 / tb.dev.user_clk_frequency
    handles = [(n, getattr(dut, n)) for n in input_ports() if n != CLOCK]
    beats = [
        (s, getattr(dut, f"m_axis_{s}_tvalid"), getattr(dut, f"m_axis_{s}_tready"))
        for s in ("rq", "cc")
    ]
    last: dict[str, str] = {}
    out = open(path, "w")
    atexit.register(out.close)
    edge = FallingEdge(getattr(dut, CLOCK))
    while True:
        await edge
        cycle = int(get_sim_time("ns") // period)
        for name, h in handles:
            s = h.value
            text = format(int(s), "x") if s.is_resolvable else "0"
            if last.get(name) != text:
                last[name] = text
                out.write(f"{cycle} {name} {text}\n")
        for stream, valid, ready in beats:
            if valid.value == 1 and ready.value == 1:
                out.write(f"{cycle} ={stream}\n")
