"""What a build compiles: where the Verilog is, the toplevels, the files, parameters and
defines of each, and the simulation model a build is made for."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from . import options as opt
from .choices import BUILD_ROOT_ENV, MODEL_ENV, TRANSACTOR_MODEL, default_model
from .choices import check_model as check
from .profiles import Profile

# The import name of this package: ``tb`` in the repository, ``gpudirect_cosim`` where it is
# installed (a user's project keeps its own ``tb``); cocotb modules are named under it
PACKAGE = (__spec__.name if __spec__ else __name__).split(".")[0]
PACKAGE_DIR = Path(__file__).resolve().parent.parent
ROOT = PACKAGE_DIR.parent
# the engine's Verilog: shipped inside the installed package, beside it in the repository
HDL_DIR = PACKAGE_DIR / "hdl" if (PACKAGE_DIR / "hdl").is_dir() else ROOT / "hdl"
# the testbench's Verilog, none of it for a bitstream: the hard IP's stream transactors,
# the card's simulation wrapper, the waveform's text tracks, and (in the repository) the
# test designs
TB_HDL_DIR = PACKAGE_DIR / "verilog"
ANNOT_TOP = "pevb_annot"
# builds, runs and reports: under the working directory (the repository's root for make),
# or where $PEVB_BUILD_ROOT says; never inside an installed package
BUILD_ROOT = Path(os.environ.get(BUILD_ROOT_ENV) or Path.cwd() / "sim_build").resolve()
# the toplevels a build can have: the picoevb card (the default), and the simulation
# drop-in for the Vivado XDMA IP (hdl/dropin: the engine alone, its AXI ports open to
# the testbench, the hard IP's user interface inside)
TOPLEVEL = opt.CARD
DROPIN_TOPLEVEL = opt.DROPIN
DROPIN_DIR = HDL_DIR / "dropin"
TOPLEVELS = (TOPLEVEL, DROPIN_TOPLEVEL)
# the transactor model (tb/models/transactors.py) builds the hard IP's user interface with its
# stream transactors (define PEVB_HIP_XACT); the card then sits in a simulation wrapper
# with that interface beside it, as the drop-in has it inside
XACT_DEFINE = "PEVB_HIP_XACT"
XACT_CARD_TOPLEVEL = "pevb_card_xact"
HIP_PORT = "pevb_hip_port"  # the hard IP's user interface, inside the drop-in


def model_of(model: str | None = None) -> str:
    """The simulation model a build and run are for: ``model`` (any a system runs:
    ``beats`` asks for a build without the transactors whose testbench picks its own
    model), else ``$PEVB_MODEL`` (one users choose), else the default
    (:func:`tb.config.choices.default_model`). A bad name is one ``ValueError`` line, now
    rather than a failure inside the simulation."""
    if model:
        return check(model, runnable=True)
    if os.environ.get(MODEL_ENV):
        return check(os.environ[MODEL_ENV])
    return default_model()


def transactor_build(model: str | None = None) -> bool:
    """Whether a build for ``model`` (:func:`model_of`) has the hard-IP transactors."""
    return model_of(model) == TRANSACTOR_MODEL


def hdl_toplevel(
    toplevel: str = TOPLEVEL,
    model: str | None = None,
    overrides: Mapping[str, object] | None = None,
) -> str:
    """The Verilog module a build elaborates for ``toplevel``: the card's wrapper in the
    transactor model, the drop-in under the name its ``MODULE`` option gives, else the
    toplevel itself."""
    if toplevel == TOPLEVEL and transactor_build(model):
        return XACT_CARD_TOPLEVEL
    if toplevel == DROPIN_TOPLEVEL:
        return str(opt.normalize(overrides).get("MODULE", DROPIN_TOPLEVEL))
    return toplevel


def hdl_sources(
    toplevel: str = TOPLEVEL, user_sources: Sequence[Path] = (), model: str | None = None
) -> list[Path]:
    """The Verilog files of a toplevel: the engine and the card's blocks; for the drop-in
    the files of hdl/dropin and the stream transactors its hard-IP port has in the
    transactor model; for a user's design (any other toplevel, ``user_sources`` given: a
    design that instantiates the Vivado IP's ``xdma_0``) those and the user's. In the
    transactor model the card also takes the hard-IP port, the transactors and the
    card's simulation wrapper."""
    check_toplevel(toplevel, user_sources)
    files = sorted(HDL_DIR.glob("*.v"))
    transactors = sorted(TB_HDL_DIR.glob("pevb_xact_*.v"))
    if toplevel != TOPLEVEL:
        files += sorted(DROPIN_DIR.glob("*.v")) + transactors
    elif transactor_build(model):
        files += [DROPIN_DIR / f"{HIP_PORT}.v", *transactors]
        files.append(TB_HDL_DIR / f"{XACT_CARD_TOPLEVEL}.v")
    return files + [Path(f) for f in user_sources]


def check_toplevel(toplevel: str, user_sources: Sequence[Path] = ()) -> None:
    """Raise ``ValueError`` or ``FileNotFoundError`` for a toplevel and sources that do
    not make a build (one line)."""
    if user_sources and toplevel in TOPLEVELS:
        raise ValueError(f"{toplevel} is this project's toplevel: it takes no user sources")
    if not user_sources and toplevel not in TOPLEVELS:
        raise ValueError(
            f"unknown toplevel {toplevel!r}: choose one of {', '.join(TOPLEVELS)}, or give "
            "the Verilog files of your own design"
        )
    missing = [str(f) for f in user_sources if not Path(f).is_file()]
    if missing:
        raise FileNotFoundError(f"user sources not found: {', '.join(missing)}")


# the drop-in's options a design gets as defines even when not given: the profile's
# link and channels, and the rest at the drop-in's defaults (docs/dropin.md)
DEFINED_DEFAULTS: dict[str, object] = {
    "H2C_BYPASS": 0,
    "C2H_BYPASS": 0,
    "USER_IRQS": 1,
    "AXIL_SLAVE": 0,
    "SOFT_RESET_EN": 0,
    "CFG_MGMT": 0,
    "CFG_EXT": 0,
    "CFG_EXT_LEGACY": 0,
    "CFG_EXT_EXTENDED": 0,
    "PCIE_ID_IF": 0,
    "AXIB": 0,
    "AXIB_BAR_ADDR_WIDTH": 20,
    "AXIB_AXI_BASE": 0,
    "AXIL_MASTER": 1,
    "AXIL_MASTER_64BIT": 0,
    "AXIL_MASTER_PREFETCHABLE": 0,
    "PCIE_64BIT": 0,
    "PCIE_PREFETCHABLE": 0,
    "AXIB_64BIT": 0,
    "AXIB_PREFETCHABLE": 0,
}


def dropin_defines(
    profile: Profile, overrides: Mapping[str, object] | None = None
) -> dict[str, object]:
    """The drop-in's configuration defines for a user's design, from a profile and its
    options (the Vivado IP inside a user's design takes no parameters): the link and the
    channels from the profile, every option given, the rest at the drop-in's defaults."""
    given = opt.resolve(profile, overrides)
    p = profile.with_overrides({k: v for k, v in given.items() if isinstance(v, int)})
    values: dict[str, object] = {
        "AXIS_PCIE_DATA_WIDTH": p.width,
        "LANES": p.lanes,
        "H2C_CHANNELS": p.h2c_channels,
        "C2H_CHANNELS": p.c2h_channels,
        "H2C_STREAM": p.h2c_stream,
        "C2H_STREAM": p.c2h_stream,
        "MSIX": p.msix,
        **{k: p.extra.get(k, v) for k, v in DEFINED_DEFAULTS.items()},
        **given,
    }
    return {str(opt.OPTIONS[k].define): v for k, v in values.items()}


def hdl_include_dirs() -> list[Path]:
    """The include path of the engine's sources (the generated register header)."""
    return [HDL_DIR]


# a module's header and the parameters in it
_PARAM_DECL = re.compile(r"^\s*parameter\s+(?:\[[^\]]*\]\s*)?(\w+)\s*=", re.M)


def module_header(module: str) -> str:
    """The header of one of the project's modules (``module`` to the end of its port
    list), every branch of an ``ifdef`` in it."""
    for d in (HDL_DIR, DROPIN_DIR, TB_HDL_DIR):
        for f in sorted(d.glob("*.v")):
            text = f.read_text()
            # (the drop-in's name is a macro, xdma_0 unless a design renames it)
            named = rf"(?:{module}|`PEVB_XDMA_MODULE)" if module == DROPIN_TOPLEVEL else module
            m = re.search(rf"^module\s+{named}\b.*?^\)\s*;", text, re.M | re.S)
            if m:
                return _INCLUDE.sub(lambda inc, d=d: _included(inc.group(1), d), m.group(0))
    raise LookupError(f"module {module} is not in the project's HDL")


_INCLUDE = re.compile(r'^\s*`include\s+"([\w.]+)"\s*$', re.M)


def _included(name: str, folder: Path) -> str:
    """The text of a header an HDL file includes (its folder first, then hdl/), with the
    headers it includes in their places."""
    for d in (folder, HDL_DIR):
        if (d / name).is_file():
            text = (d / name).read_text()
            return _INCLUDE.sub(lambda inc, d=d: _included(inc.group(1), d), text)
    raise LookupError(f"include {name} is not in the project's HDL")


# the card's user clock (an input port of its toplevel)
USER_CLOCK = "user_clk"


def input_ports(module: str = TOPLEVEL) -> list[str]:
    """The input ports of ``module`` (its header, with the port groups it includes), in
    declaration order."""
    header = module_header(module)
    ports = header[header.index(")\n(") :]
    return re.findall(r"^\s*input\s+wire\s*(?:\[[^\]]*\])?\s*(\w+)", ports, re.M)


def module_parameters(module: str) -> list[str]:
    """The Verilog parameters of one of the project's modules, in order."""
    return _PARAM_DECL.findall(module_header(module))


def hdl_parameters(
    profile: Profile,
    overrides: Mapping[str, object] | None = None,
    toplevel: str = TOPLEVEL,
) -> dict[str, int]:
    """The Verilog parameters of a build: the profile's, with the options on top, those
    the toplevel has (a user's design has none: the drop-in in it takes defines)."""
    if toplevel not in TOPLEVELS:
        return {}
    given = opt.resolve(profile, overrides)
    params = {**profile.hdl_parameters(), **given}
    names = set(module_parameters(toplevel))
    return {k: v for k, v in params.items() if k in names and isinstance(v, int)}


def toplevel_defines(
    toplevel: str, profile: Profile, overrides: Mapping[str, object] | None = None
) -> dict[str, object]:
    """The defines a build of ``toplevel`` gets for its options: a user's design all of
    the drop-in's (:func:`dropin_defines`); the drop-in as the toplevel those of its
    options that are not parameters (its name, the stream default, the part's family)."""
    if toplevel not in TOPLEVELS:
        return dropin_defines(profile, overrides)
    if toplevel != DROPIN_TOPLEVEL:
        return {}
    given = opt.normalize(overrides)
    return {
        str(opt.OPTIONS[k].define): v
        for k, v in given.items()
        if not opt.OPTIONS[k].dropin_parameter and opt.OPTIONS[k].define
    }
