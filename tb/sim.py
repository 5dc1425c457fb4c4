"""``make sim``: run the main demo through the RTL and say what happened and where the logs are."""

from __future__ import annotations

import argparse
import re
import sys

from . import runner


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sim", default="icarus", choices=runner.SIMULATORS)
    ap.add_argument("--profile", default="picoevb")
    ap.add_argument("--waves", action="store_true")
    args = ap.parse_args(argv)
    results = runner.run("demo_copy", sim=args.sim, profile=args.profile,
                         module="tb.demo_copy", waves=args.waves)
    log = results.parent / "sim.log"
    for line in log.read_text().splitlines():
        if re.search(r"(H2C|C2H): \d+ bytes|host -> card -> host", line):
            print(line.split("cocotb.tb", 1)[-1].strip())
    failed = runner.failures(results)
    print(f"result: {'FAIL' if failed else 'PASS'}  ({args.sim}, profile {args.profile})")
    print(f"log: {log}")
    if args.waves:
        dumps = sorted(results.parent.parent.parent.glob("*.fst")) + sorted(
            results.parent.glob("*.fst"))
        for d in dumps:
            print(f"waves: {d}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
