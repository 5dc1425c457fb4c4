"""A log of the beats on the hard IP's four streams, as the RTL's ports carry them: to
compare simulation models beat by beat (tests/sim/test_sim_models.py).

As a TB plugin (``$PEVB_PLUGINS`` holding ``tb.debug.beats``), :func:`attach` watches
``tb.hip`` when ``$PEVB_BEATS`` names a file: every clock cycle in which a stream has
tvalid and tready high, one JSON line ``{"s": stream, "c": cycle, "d": tdata, "k":
tkeep, "l": tlast, "u": tuser}`` (integers; ``c``: the user-clock period, counted from
time 0, that the falling edge is in). The signals are read at the falling edge,
mid-cycle, where both simulators show what the RTL samples on the next rising edge. It
wakes Python on every falling edge: for tests, never for speed.
"""

from __future__ import annotations

import atexit
import json
import os
from pathlib import Path

import cocotb
from cocotb.triggers import FallingEdge
from cocotb.utils import get_sim_time

PLUGIN = __name__
BEATS_ENV = "PEVB_BEATS"
STREAMS = ("m_axis_rq", "s_axis_rc", "s_axis_cq", "m_axis_cc")


def attach(tb) -> None:
    """Log ``tb``'s hard-IP beats to ``$PEVB_BEATS`` (nothing when it is unset)."""
    path = os.environ.get(BEATS_ENV)
    if path:
        cocotb.start_soon(_watch(tb, Path(path)))


def _value(handle) -> int:
    try:
        return int(handle.value)
    except ValueError:  # X or Z
        return -1


async def _watch(tb, path: Path) -> None:
    hip = tb.hip
    period = 1e9 / tb.dev.user_clk_frequency
    out = open(path, "w")
    atexit.register(out.close)
    sigs = {
        s: [
            getattr(hip, f"{s}_{n}")
            for n in ("tvalid", "tready", "tdata", "tkeep", "tlast", "tuser")
        ]
        for s in STREAMS
    }
    edge = FallingEdge(hip.user_clk)
    while True:
        await edge
        for s, (valid, ready, *beat) in sigs.items():
            if _value(valid) == 1 and _value(ready) == 1:
                d, k, last, u = (_value(h) for h in beat)
                cycle = int(get_sim_time("ns") // period)
                out.write(
                    json.dumps({"s": s, "c": cycle, "d": d, "k": k, "l": last, "u": u}) + "\n"
                )


def read_beats(path: Path) -> dict[str, list[dict]]:
    """A beat log, by stream, in order."""
    out: dict[str, list[dict]] = {s: [] for s in STREAMS}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            out[rec["s"]].append(rec)
    return out
