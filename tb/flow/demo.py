"""``make sim`` (``python -m tb.flow.demo``): run a picoevb demo program through the RTL and say
what happened, and where the log and the waveform are."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
import threading
from pathlib import Path

try:
    from . import runner
except ModuleNotFoundError as missing:  # a Python without the project's packages
    sys.exit(
        f"make sim: this Python ({sys.executable}) lacks {missing.name}: run make sim, or "
        ".venv/bin/python -m tb.flow.demo after make deps"
    )
from ..apps.programs import DEMOS, UsageError, check_demo
from ..apps.progress import PROGRESS_ENV, Watcher
from ..config.choices import DEFAULT_PROFILE
from ..config.profiles import PROFILES


class _Parser(argparse.ArgumentParser):
    """Command-line mistakes are one line and exit status 2, never a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message}\n")


def parser() -> argparse.ArgumentParser:
    """``make sim``'s command line."""
    ap = _Parser(
        prog="make sim",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a picoevb demo program (its C original rebuilt against the driver\n"
        "and GPU models) through the DMA engine's RTL, then say what happened and where\n"
        "the log, the waves and the trace are.",
        epilog="demos:\n" + "\n".join(f"  {n:22} {d.usage}" for n, d in DEMOS.items()),
    )
    ap.add_argument(
        "--sim", default=runner.DEFAULT_SIM, choices=runner.SIMULATORS, help="the simulator"
    )
    ap.add_argument(
        "--profile", default=DEFAULT_PROFILE, choices=list(PROFILES), help="link and engine profile"
    )
    ap.add_argument(
        "--waves", action="store_true", help="dump an FST waveform and its GTKWave save file"
    )
    ap.add_argument("--seed", type=int, default=1, help="the testbench's random seed")
    ap.add_argument("demo", nargs="?", default="rdma-cuda", help="the demo program (below)")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="the demo's command line")
    return ap


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line, checked whole (demo arguments included) before anything runs:
    a mistake exits with one line and status 2."""
    ap = parser()
    a = ap.parse_args(argv)
    try:
        check_demo(a.demo, a.args, PROFILES[a.profile].ram_size)
    except UsageError as e:
        ap.error(str(e))
    return a


def _shown(line: str) -> str | None:
    """The log lines ``make sim`` repeats: the testbench's own (the demo's ``app:`` output,
    the driver's summary) and errors."""
    m = re.search(r"cocotb\.tb\s+(.*)$", line)
    if m and not m.group(1).startswith("topology"):
        return "  " + m.group(1)
    if "Traceback" in line or "Error" in line:
        return "  " + line.strip()
    return None


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    print(
        f"running {a.demo} {' '.join(a.args)} through the RTL ({a.sim}, profile {a.profile})",
        flush=True,
    )
    prof = PROFILES[a.profile]
    tdir = runner.build_dir(a.sim, prof, a.waves) / "runs" / f"demo-{os.getpid()}"
    log, status = tdir / "sim.log", tdir / "progress.json"
    for stale in (log, status):  # an earlier run of this process id left them
        stale.unlink(missing_ok=True)
    print(f"log: {log}", flush=True)
    if a.demo in ("rdma-cuda", "rdma-malloc") and not [x for x in a.args if x != "--dmabuf"]:
        print(
            "  (the original's full 1024x1024 surface, 4 MiB: minutes on Icarus; "
            "make sim runs 256x256)",
            flush=True,
        )
    surface = [x for x in a.args if x != "--dmabuf"]
    if a.demo in ("rdma-cuda", "rdma-malloc") and surface and surface[0] != "1024x1024":
        print(
            "  (a smaller surface than the original's 1024x1024 = 4 MiB, for speed; "
            "make sim ARGS=1024x1024 runs the full one)",
            flush=True,
        )
    outcome: dict[str, object] = {}

    def simulate() -> None:
        try:
            outcome["results"] = runner.run(
                "demo",
                sim=a.sim,
                profile=prof,
                module=f"{runner.PACKAGE}.apps.demo",
                waves=a.waves,
                seed=a.seed,
                test_dir=tdir,
                extra_env={
                    "DEMO": a.demo,
                    "DEMO_ARGS": shlex.join(a.args),
                    "SEED": str(a.seed),
                    PROGRESS_ENV: str(status),
                },
            )
        except Exception as e:  # a build error: said below, in one line
            outcome["error"] = e

    worker = threading.Thread(target=simulate, name="simulation", daemon=True)
    worker.start()
    watcher = Watcher(log, status, _shown)
    while worker.is_alive():
        watcher.poll()
        worker.join(0.25)
    watcher.finish()
    if "error" in outcome:
        print(f"result: FAIL  (the simulation did not run: {outcome['error']})")
        return 1
    results = outcome["results"]
    assert isinstance(results, Path)
    failed = runner.failures(results)
    print(f"result: {'FAIL' if failed else 'PASS'}  ({a.demo}, {a.sim}, profile {a.profile})")
    print(f"log: {log}")
    found = runner.artifacts(tdir)
    hints = {
        "waves": "  (make waves)",
        "timeline": "  (open it in https://ui.perfetto.dev: Open trace file)",
        "report": "  (a web page)",
    }
    for path in found:
        kind = {
            "fst": "waves",
            "gtkw": "save file",
            "jsonl": "trace",
            "html": "report",
            "json": "timeline",
        }[path.suffix.lstrip(".")]
        print(f"{kind}: {path}{hints.get(kind, '')}")
    if not a.waves:
        print("waves: none (run with WAVES=1, then make waves)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
