"""What a finished regression writes: the :class:`Summary` (counts, seeds per hour, the
coverage goal, each failure with its reproduce command), each seed's log and coverage, the
merged coverage, and a JUnit XML."""

from __future__ import annotations

import dataclasses
import json
import shutil
import socket
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from ...regress.coverage import Coverage, describe_missed
from .jobs import ERROR, FAILED, LOST, PASSED, STOPPED, TIMEOUT, SeedResult


@dataclass
class Summary:
    """A finished regression: every seed's result, the merged coverage, the wall time."""

    results: list[SeedResult]
    coverage: Coverage
    wall_s: float
    workers: int
    interrupted: bool = False
    # the coverpoints the goal counts (those of the kinds run); None: every one
    points: tuple[str, ...] | None = None

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def failures(self) -> list[SeedResult]:
        return [r for r in self.results if not r.passed]

    @property
    def seeds_per_hour(self) -> float:
        return len(self.results) * 3600.0 / self.wall_s if self.wall_s > 0 else 0.0

    def goal_missed(self, goal: str) -> dict[str, list[str]]:
        """Bins the goal (``all``, ``required`` or ``none``) wants and no seed hit."""
        if goal == "none":
            return {}
        return self.coverage.missed(include_optional=goal == "all", points=self.points)

    def text(self, goal: str = "all") -> str:
        hit, total = self.coverage.bins()
        others = [
            f"{self.count(s)} {s}" for s in (FAILED, ERROR, TIMEOUT, LOST, STOPPED) if self.count(s)
        ]
        lines = [
            f"seeds run: {len(self.results)}, passed: {self.count(PASSED)}"
            + (f", {', '.join(others)}" if others else ", failed: 0"),
            f"wall: {self.wall_s:.1f} s on {self.workers} worker(s), "
            f"{self.seeds_per_hour:.1f} seeds per hour",
            f"coverage: {hit}/{total} bins hit ({100.0 * hit / max(total, 1):.1f}%)",
        ]
        missed = self.goal_missed(goal)
        if goal != "none":
            lines.append(
                f"coverage goal ({goal} bins): "
                + (f"missed, never hit: {describe_missed(missed)}" if missed else "met")
            )
        if self.interrupted:
            lines.append("interrupted: the seeds not reported above did not run")
        for r in self.failures:
            lines.append(f"FAILED {r.name} [{r.status}] {r.message}")
            lines.append(f"  reproduce: {r.repro}")
            if r.run_dir:
                lines.append(f"  run directory ({r.worker}): {r.run_dir}")
        return "\n".join(lines)


def write_outputs(summary: Summary, out_dir: Path, goal: str = "all") -> None:
    """Per-seed logs and coverage (the last run's seeds there removed first), the merged
    coverage, the JUnit XML and the summary."""
    shutil.rmtree(out_dir / "seeds", ignore_errors=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    for r in summary.results:
        sdir = out_dir / "seeds" / r.name
        sdir.mkdir(parents=True, exist_ok=True)
        (sdir / "sim.log").write_text(r.log)
        if r.coverage:
            (sdir / "coverage.json").write_text(json.dumps(r.coverage, indent=1))
        meta = {k: v for k, v in dataclasses.asdict(r).items() if k not in ("log", "coverage")}
        (sdir / "result.json").write_text(json.dumps(meta, indent=1))
    summary.coverage.write(out_dir / "merged.json")
    (out_dir / "report.txt").write_text(summary.coverage.report(summary.points) + "\n")
    write_junit(summary, out_dir / "junit.xml")
    (out_dir / "summary.txt").write_text(summary.text(goal) + "\n")


def write_junit(summary: Summary, path: Path, suite: str = "regress") -> None:
    """A JUnit XML of the seeds: one testcase per seed, a failure (the test failed) or an
    error (raised, timed out, lost, stopped) with its message and reproduce command."""
    failed = summary.count(FAILED)
    errors = len(summary.results) - summary.count(PASSED) - failed
    root = ET.Element("testsuites")
    ts = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(summary.results)),
        failures=str(failed),
        errors=str(errors),
        skipped="0",
        time=f"{summary.wall_s:.3f}",
        hostname=socket.gethostname(),
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"),
    )
    for r in summary.results:
        case = ET.SubElement(ts, "testcase", classname=suite, name=r.name, time=f"{r.wall_s:.3f}")
        props = ET.SubElement(case, "properties")
        for k, v in (("repro", r.repro), ("worker", r.worker), ("attempts", str(r.attempts))):
            ET.SubElement(props, "property", name=k, value=v)
        if not r.passed:
            tag = "failure" if r.status == FAILED else "error"
            node = ET.SubElement(case, tag, type=r.status, message=r.message[:2000])
            node.text = f"{r.message}\nreproduce: {r.repro}\n"
        out = ET.SubElement(case, "system-out")
        out.text = _xml_safe(r.log[-65536:])
    ET.indent(root)
    path.write_bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))


def _xml_safe(text: str) -> str:
    """Drop the characters XML 1.0 cannot carry (a log may hold terminal escapes)."""
    return "".join(c for c in text if c in "\t\n\r" or ord(c) >= 0x20)
