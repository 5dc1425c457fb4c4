"""Functional coverage of descriptor chains: coverpoints, per-run reports, merging, goals.

A run writes one JSON file (``{"coverpoints": {name: {bin: hits}}, "runs": [...]}``);
``python -m tb.regress.coverage [files or folders...]`` merges any number of them and prints the
report: per coverpoint the bins hit out of the bins defined, and the bins never hit.
Exit status 1 when a goal is missed (``--goals``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path

from .generator import (
    DRIVER_FAULTS,
    DRIVER_OPS,
    DRIVER_RACES,
    FAULT_RESULTS,
    GPU_STEPS,
    PIN_WAYS,
    RESULTS,
)
from .resets import REG_BINS, RESET_BINS

# every coverpoint and its bins; the goal of the default regression is every bin hit
COVERPOINTS: dict[str, tuple[str, ...]] = {
    "chain_length": ("1", "2-3", "4-15", "16-63", "64+"),
    "desc_length": ("1-3", "4-63", "64-255", "256-4095", "4096", "4097-65535", "64K+"),
    "pcie_align": ("0", "1", "2", "3"),
    "card_align": ("0", "1", "2", "3"),
    "crosses_4k": ("no", "yes"),
    "crosses_64k": ("no", "yes"),
    "target": ("h2c:host", "h2c:gpu", "c2h:host", "c2h:gpu", "h2c:mixed", "c2h:mixed"),
    # what the engine reported, and that crossed with the step's fault: every fault with
    # the result it gives when it lands (a Run clear or a revoke after the chain ended
    # lets the chain finish: allowed, not a bin)
    "outcome": RESULTS,
    "fault_outcome": tuple(f"{f}:{rs[0]}" for f, rs in FAULT_RESULTS.items()),
    "concurrency": ("h2c", "c2h", "both"),
    "completed_flags": ("last_only", "some", "all"),
    "descriptor_layout": ("adjacent", "scattered"),
    "fabric": ("plain", "split_reorder", "latency"),
    # the random driver regression: ioctl (kind, source > destination), what struck it
    # while its DMA ran (a fault, or another party's race), and what it returned
    "driver_op": DRIVER_OPS,
    "driver_fault": ("none", *DRIVER_FAULTS),
    "driver_race": ("none", *DRIVER_RACES),
    "driver_result": ("ok", "EIO", "EFAULT"),
    # how the step's CUDA surfaces were pinned: nv-p2p (PIN_CUDA) or dma-buf (PIN_DMABUF)
    "driver_pin": PIN_WAYS,
    # the GPU's own requests beside each ioctl (tb/regress/generator.py GPU_STEPS)
    "gpu_step": GPU_STEPS,
    # the reset regression: every interruption (a reset of the engine, a channel stopped)
    # crossed with every interface and direction it struck, and whether the transfer was
    # still moving when it struck (it always is, by the plan's lengths: a transfer that
    # ended first is allowed, not a goal)
    "reset_step": RESET_BINS,
    "reset_cut": ("mid_transfer", "after_end"),
    # register races: each kind of access the register file has, by the host or the user
    # logic, against the engine's events and the other side's accesses
    "reg_race": REG_BINS,
}
# the coverpoints each kind of the built-in regression (tb/flow/farm/jobs.py KINDS)
# hits: a farm run of some kinds has the goal of those kinds' coverpoints
KIND_POINTS: dict[str, tuple[str, ...]] = {
    "chains": tuple(COVERPOINTS)[: tuple(COVERPOINTS).index("driver_op")],
    "driver": (
        "driver_op",
        "driver_fault",
        "driver_race",
        "driver_result",
        "driver_pin",
        "gpu_step",
    ),
    "resets": ("reset_step", "reset_cut", "reg_race"),
}
RUNS_LISTED = 8  # run names the report's first line lists
# bins the default suite (a few seeds) is not required to reach
OPTIONAL: dict[str, set[str]] = {
    "chain_length": {"64+"},
    "desc_length": {"64K+"},
    "reset_cut": {"after_end"},
}


class Coverage:
    """Hit counts per coverpoint bin."""

    def __init__(self) -> None:
        self.points: dict[str, dict[str, int]] = {
            name: dict.fromkeys(bins, 0) for name, bins in COVERPOINTS.items()
        }
        self.runs: list[dict] = []

    def hit(self, point: str, bin_: str) -> None:
        """Count one hit; unknown points or bins are programming errors."""
        bins = self.points[point]
        if bin_ not in bins:
            raise KeyError(f"coverpoint {point} has no bin {bin_!r}")
        bins[bin_] += 1

    def merge(self, other: Coverage) -> None:
        for name, bins in other.points.items():
            mine = self.points.setdefault(name, {})
            for b, n in bins.items():
                mine[b] = mine.get(b, 0) + n
        self.runs.extend(other.runs)

    def to_json(self) -> dict:
        return {"coverpoints": self.points, "runs": self.runs}

    @classmethod
    def from_json(cls, data: dict) -> Coverage:
        cov = cls()
        for name, bins in data.get("coverpoints", {}).items():
            target = cov.points.setdefault(name, {})
            for b, n in bins.items():
                target[b] = target.get(b, 0) + int(n)
        cov.runs = list(data.get("runs", []))
        return cov

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=1, sort_keys=True))

    def missed(
        self, include_optional: bool = False, points: Iterable[str] | None = None
    ) -> dict[str, list[str]]:
        """Bins never hit, per coverpoint (optional bins left out unless asked), of
        ``points`` (the coverpoints' names; None: every one)."""
        out = {}
        wanted = set(self.points) if points is None else set(points)
        for name, bins in self.points.items():
            if name not in wanted:
                continue
            skip = set() if include_optional else OPTIONAL.get(name, set())
            miss = [b for b, n in bins.items() if n == 0 and b not in skip]
            if miss:
                out[name] = miss
        return out

    def bins(self) -> tuple[int, int]:
        """Bins hit, bins defined, over every coverpoint."""
        hit = sum(1 for bins in self.points.values() for n in bins.values() if n)
        return hit, sum(len(bins) for bins in self.points.values())

    def report(self, points: Iterable[str] | None = None) -> str:
        """A text report: one line per coverpoint, hit bins and counts, then the misses
        of ``points`` (None: of every coverpoint)."""
        names = sorted({r.get("name", "?") for r in self.runs})
        if len(names) > RUNS_LISTED:  # a farm's thousand seeds: the first few and a count
            names = [*names[:RUNS_LISTED], f"... {len(names) - RUNS_LISTED} more"]
        lines = [f"functional coverage over {len(self.runs)} run(s): " + ", ".join(names)]
        for name, bins in self.points.items():
            n_hit = sum(1 for v in bins.values() if v)
            cells = " ".join(f"{b}={v}" for b, v in bins.items())
            lines.append(f"  {name:18s} {n_hit:2d}/{len(bins):2d}  {cells}")
        hit, total = self.bins()
        lines.append(f"  bins hit: {hit}/{total} ({100.0 * hit / max(total, 1):.1f}%)")
        missed = self.missed(points=points)
        if missed:
            lines.append(f"  goal missed, never hit: {describe_missed(missed)}")
        else:
            lines.append("  goal met: every required bin hit")
        return "\n".join(lines)


def describe_missed(missed: dict[str, list[str]]) -> str:
    """``Coverage.missed()`` as one line: ``point: bin, bin; point: bin``."""
    return "; ".join(f"{k}: {', '.join(v)}" for k, v in missed.items())


def length_bin(n: int) -> str:
    if n < 4:
        return "1-3"
    if n < 64:
        return "4-63"
    if n < 256:
        return "64-255"
    if n < 4096:
        return "256-4095"
    if n == 4096:
        return "4096"
    if n < 65536:
        return "4097-65535"
    return "64K+"


def chain_bin(n: int) -> str:
    if n == 1:
        return "1"
    if n < 4:
        return "2-3"
    if n < 16:
        return "4-15"
    if n < 64:
        return "16-63"
    return "64+"


def load(paths: Iterable[Path]) -> Coverage:
    """Merge every coverage JSON file in ``paths`` (folders are searched recursively)."""
    total = Coverage()
    for p in paths:
        files = sorted(p.rglob("*.json")) if p.is_dir() else [p]
        for f in files:
            total.merge(Coverage.from_json(json.loads(f.read_text())))
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, default=[Path("sim_build/coverage")])
    ap.add_argument("--goals", action="store_true", help="exit 1 if a required bin is missed")
    ap.add_argument("-o", "--output", type=Path, help="also write the merged JSON here")
    args = ap.parse_args(argv)
    missing = [str(p) for p in args.paths if not p.exists()]
    empty = [str(p) for p in args.paths if p.is_dir() and not any(p.rglob("*.json"))]
    if missing or empty:
        what = f"{', '.join(missing)}: not found" if missing else f"no JSON in {', '.join(empty)}"
        print(f"coverage: nothing to merge ({what}; make regress or make test writes it)")
        return 1
    cov = load(args.paths)
    print(cov.report())
    if args.output:
        cov.write(args.output)
    return 1 if args.goals and cov.missed() else 0


if __name__ == "__main__":
    sys.exit(main())
