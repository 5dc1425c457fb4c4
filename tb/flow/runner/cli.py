"""``python -m gpudirect_cosim.flow.runner`` (``tb.flow.runner`` in the repository): the Verilog
files, include path and drop-in defines of a build, one per line, for a Makefile flow
(cocotb's ``VERILOG_SOURCES``, ``COMPILE_ARGS``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ...config import options as opt
from ...config.choices import DEFAULT_PROFILE
from ...config.profiles import PROFILES, get_profile
from ...config.sources import (
    DROPIN_TOPLEVEL,
    PACKAGE,
    TOPLEVEL,
    TOPLEVELS,
    dropin_defines,
    hdl_include_dirs,
    hdl_sources,
)


def main(argv: Sequence[str] | None = None) -> int:
    """Print a toplevel's Verilog files (``--sources``), the include path
    (``--includes``) or the drop-in's defines (``--defines``), one per line."""
    ap = argparse.ArgumentParser(
        prog=f"python -m {PACKAGE}.flow.runner",
        description="The engine's Verilog for a build of your own: the files of a toplevel "
        f"({TOPLEVEL}: the picoevb card; {DROPIN_TOPLEVEL}: the drop-in for the Vivado XDMA "
        "IP, which a design of yours instantiates), the include path, and the defines that "
        "configure the drop-in.",
    )
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--sources",
        nargs="?",
        const=DROPIN_TOPLEVEL,
        metavar="TOPLEVEL",
        choices=TOPLEVELS,
        help=f"the Verilog files of TOPLEVEL (default {DROPIN_TOPLEVEL})",
    )
    what.add_argument("--includes", action="store_true", help="the include directories")
    what.add_argument(
        "--defines",
        nargs="*",
        metavar="NAME=VALUE",
        help="the drop-in's defines (+define+ arguments) for a design around it, with "
        "these build options (docs/dropin.md)",
    )
    ap.add_argument(
        "--profile", default=DEFAULT_PROFILE, choices=list(PROFILES), help="the link (--defines)"
    )
    args = ap.parse_args(argv)
    if args.defines is not None:
        try:
            profile = get_profile(args.profile)
            given = opt.check("user_design", profile, opt.parse_options(args.defines))
        except ValueError as e:
            ap.exit(2, f"{ap.prog}: {e}\n")
        for name, value in dropin_defines(profile, given).items():
            print(f"{name}={value}")
        return 0
    paths = hdl_include_dirs() if args.includes else hdl_sources(args.sources)
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
