"""``make profile`` (``python -m tb.flow.bench.profile [--sim S] [--profile P] [--kib N]
[--top K]``): where the Python side of a streaming engine case spends its time, by part
of the testbench, to aim the simulation-speed work at what costs.

It runs the bench's H2C/C2H pair of ``N`` KiB each (one descriptor each way) under
cocotb's profiler (``COCOTB_ENABLE_PROFILING``), then sums each function's own time
(cProfile's ``tottime``) into the parts of :data:`PARTS` and prints them with the top
functions. The profiler slows Python down about 2x, evenly enough for the shares to hold;
the simulator's own time (RTL evaluation) is not in them.
"""

from __future__ import annotations

import argparse
import pstats
import time
from pathlib import Path

from ...config.choices import DEFAULT_LONG_SIM
from ...config.profiles import PROFILES, get_profile
from .. import runner
from .cases import KIB, OUT_DIR, pair, run_cases

# (path fragment, part): a function belongs to the first part whose fragment its file's
# path contains; "~" is what cProfile names built-in functions' file
PARTS: list[tuple[str, str]] = [
    ("/cocotbext/pcie/xilinx/", "hard-IP model and its AXI-stream interfaces"),
    ("/cocotbext/pcie/core/port.py", "links: serialization, ACK and flow-control DLLPs"),
    ("/cocotbext/pcie/core/switch.py", "switch"),
    ("/cocotbext/pcie/core/bridge.py", "switch"),
    ("/cocotbext/pcie/core/tlp.py", "TLP objects"),
    ("/models/fastpaths.py", "TLP objects"),
    ("/models/link.py", "TLP-level links and switch (tb/models/link.py, switch.py)"),
    ("/models/switch.py", "TLP-level links and switch (tb/models/link.py, switch.py)"),
    ("/models/timeline.py", "timeline and clocks (tb/models/timeline.py, clocks.py)"),
    ("/models/clocks.py", "timeline and clocks (tb/models/timeline.py, clocks.py)"),
    ("/models/streams.py", "beat-level hard-IP streams (tb/models/streams.py, signals.py)"),
    ("/models/signals.py", "beat-level hard-IP streams (tb/models/streams.py, signals.py)"),
    (
        "/models/transactors.py",
        "transactor model: the hard-IP streams' Python side (tb/models/transactors.py)",
    ),
    ("/models/hardip", "hard-IP model and its AXI-stream interfaces"),
    ("/cocotbext/pcie/", "root complex, functions and the rest of cocotbext-pcie"),
    ("/cocotbext/axi/", "cocotbext-axi"),
    ("/cocotb_bus/", "signal access"),
    ("/cocotb/handle.py", "signal access"),
    ("/cocotb/types/", "signal access"),
    ("/cocotb/", "cocotb scheduler: tasks, triggers, event loop"),
    ("/tb/", "this testbench (tb/)"),
    ("/gpudirect_cosim/", "this testbench (tb/)"),
    ("/driver_model/", "driver model"),
    ("/cuda_model/", "CUDA model"),
    ("~", "Python built-ins"),
]
OTHER = "Python standard library and the rest"


def part_of(filename: str) -> str:
    """The part of :data:`PARTS` a function defined in ``filename`` belongs to."""
    return next((part for frag, part in PARTS if frag in filename), OTHER)


def breakdown(stats: dict) -> list[tuple[str, float]]:
    """Own time per part, most first, from ``pstats.Stats(...).stats`` (keys
    ``(file, line, function)``, values whose third field is the own time)."""
    parts: dict[str, float] = {}
    for (filename, _, _), value in stats.items():
        part = part_of(filename)
        parts[part] = parts.get(part, 0.0) + value[2]
    return sorted(parts.items(), key=lambda kv: -kv[1])


def top_functions(stats: dict, count: int) -> list[tuple[str, int, float]]:
    """The ``count`` functions of most own time: (``file:line(name)``, calls, seconds)."""
    rows = [
        (f"{Path(f).name}:{line}({name})", value[1], value[2])
        for (f, line, name), value in stats.items()
    ]
    return sorted(rows, key=lambda r: -r[2])[:count]


SEND = "<method 'send' of 'coroutine' objects>"


def scheduler_resumes(stats: dict) -> int:
    """How many times cocotb's scheduler resumed a coroutine (its tasks' ``_resume``
    calling a coroutine's ``send``)."""
    for (_, _, name), value in stats.items():
        if name == SEND:
            return sum(
                (c[0] if isinstance(c, tuple) else c)
                for (f, _, caller), c in value[4].items()
                if caller == "_resume" and Path(f).name == "task.py"
            )
    return 0


def resumes(stats: dict) -> list[tuple[str, int]]:
    """How many times each coroutine function was resumed (a coroutine's ``send`` calling
    it: by cocotb's scheduler, or by the TLP-level models stepping
    cocotbext-pcie's packers by hand), most first: ``(file:line(name), resumes)``."""
    rows = []
    for (f, line, name), value in stats.items():
        callers = value[4]
        n = sum(
            (c[0] if isinstance(c, tuple) else c)
            for (_, _, caller), c in callers.items()
            if caller == SEND
        )
        if n:
            rows.append((f"{Path(f).name}:{line}({name})", n))
    return sorted(rows, key=lambda r: -r[1])


def report(stats: dict, top: int = 15, cycles: float = 0.0) -> str:
    """The breakdown, the top functions and the coroutines resumed most, as text
    (``cycles``: the user-clock cycles simulated, for the resumes per cycle)."""
    total = sum(v[2] for v in stats.values()) or 1.0
    lines = [f"Python own time by part ({total:.1f} s profiled):"]
    lines += [f"  {100 * s / total:5.1f}%  {s:7.2f} s  {part}" for part, s in breakdown(stats)]
    lines += ["", f"top {top} functions by own time:"]
    lines += [
        f"  {100 * s / total:5.1f}%  {s:7.2f} s  {calls:>9} calls  {where}"
        for where, calls, s in top_functions(stats, top)
    ]
    woken = resumes(stats)
    count = scheduler_resumes(stats)
    per = f", {count / cycles:.2f} per user-clock cycle" if cycles else ""
    lines += [
        "",
        f"coroutines resumed by cocotb's scheduler: {count}{per}; the "
        f"{min(top, len(woken))} resumed or stepped most:",
    ]
    lines += [f"  {n:>9}  {where}" for where, n in woken[:top]]
    return "\n".join(lines)


def run(sim: str, profile: str, kib: int) -> tuple[Path, float, list[dict]]:
    """The profiled engine pair: the profile file, the wall time and the cases' figures."""
    tag = f"profile-{sim}-{profile}"
    t0 = time.perf_counter()
    both = pair(kib * KIB, kib * KIB)
    cases = run_cases(
        sim, profile, get_profile(profile).mps, both, tag, {"COCOTB_ENABLE_PROFILING": "1"}
    )
    return OUT_DIR / "runs" / tag / "cocotb.pstat", time.perf_counter() - t0, cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.flow.bench.profile", description=__doc__)
    ap.add_argument("--sim", choices=runner.SIMULATORS, default=DEFAULT_LONG_SIM)
    ap.add_argument("--profile", choices=sorted(PROFILES), default="gen3x8")
    ap.add_argument("--kib", type=int, default=256, help="bytes each way, in KiB")
    ap.add_argument("--top", type=int, default=15, help="how many functions to list")
    args = ap.parse_args(argv)
    print(f"profiling the engine pair ({args.kib} KiB each way, {args.sim}, {args.profile}) ...")
    pstat, wall, cases = run(args.sim, args.profile, args.kib)
    sim_us = sum(c["sim_ns"] for c in cases) / 1e3
    cycles = sum(c["sim_ns"] * 1e-9 * c["clk_hz"] for c in cases)
    print(f"{sim_us:.0f} us simulated in {wall:.1f} s wall (profiled); profile: {pstat}\n")
    print(report(pstats.Stats(str(pstat)).stats, args.top, cycles))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
