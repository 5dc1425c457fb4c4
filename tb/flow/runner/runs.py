"""Runs: cocotb tests on a build, each run in a directory of its own, its results, and
the waves, traces and reports it leaves."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ...config.build import BuildConfig
from ...config.choices import (
    BUILD_ROOT_ENV,
    DATAPATH_ENV,
    DEFAULT_PROFILE,
    DEFAULT_SIM,
    MODEL_ENV,
    PLUGINS_ENV,
    TRACE_ENV,
)
from ...config.profiles import Profile
from ...config.sources import BUILD_ROOT, PACKAGE, PACKAGE_DIR, ROOT, TOPLEVEL
from . import builds
from .builds import held_env, waves_env

# the debug sinks' plugin (tb.debug: the TLP trace and the waves' text tracks), attached to
# every TB of a traced or waves run
DEBUG_PLUGIN = f"{PACKAGE}.debug.plugin"

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
def sim_python() -> Iterator[None]:
    """The simulator's Python keeps its bytecode under the build root (see above)."""
    if os.environ.get(PYCACHE_PREFIX_ENV):
        yield
        return
    with held_env(PYCACHE_PREFIX_ENV, str(BUILD_ROOT / "pycache")):
        with held_env(DONT_WRITE_BYTECODE_ENV, ""):
            yield


@contextlib.contextmanager
def sim_path() -> Iterator[None]:
    """cocotb gives the simulation this process's ``sys.path`` (it ignores a PYTHONPATH of
    ours): for its duration put this package's parent and the working directory (a
    user's test modules) first on it, as absolute paths (the simulation runs elsewhere)."""
    old = list(sys.path)
    sys.path[:0] = [str(ROOT), str(Path.cwd())]
    try:
        yield
    finally:
        sys.path[:] = old


def run(
    testcase: str | list[str] | None = None,
    *,
    module: str,
    config: BuildConfig | None = None,
    sim: str = DEFAULT_SIM,
    profile: Profile | str = DEFAULT_PROFILE,
    waves: bool = False,
    seed: int | None = None,
    overrides: Mapping[str, object] | None = None,
    extra_env: dict[str, str] | None = None,
    test_dir: Path | None = None,
    trace: bool | None = None,
    toplevel: str = TOPLEVEL,
    user_sources: Sequence[Path] = (),
    model: str | None = None,
) -> Path:
    """Run cocotb tests; returns the results XML path. Raises on build errors.

    The build and run are ``config`` (:class:`tb.config.BuildConfig`), or the one the
    other arguments make, checked before anything is built: ``model`` (else
    ``$PEVB_MODEL`` in ``extra_env`` or this process's environment, else the default),
    ``transactors`` or ``exact``, where ``beats`` builds without the transactors and
    leaves the choice to the testbench, as a plain cocotb build does; the data path
    ``$PEVB_DATAPATH`` of ``extra_env`` or this process.

    With ``waves`` the run's own FST lands in its directory (``pevb_dma_top.fst`` from
    Icarus, ``dump.fst`` from Verilator). With ``trace`` (default: ``$TRACE=1`` or
    ``waves``) every TLP goes to ``tlp_trace.jsonl`` there, and the transfer report
    (``transfer_report.json``/``.html``) is made from it after the run."""
    given = dict(extra_env or {})
    if config is None:  # make's variables, what this call names on top
        chosen = {
            **os.environ,
            **{k: v for k, v in given.items() if k in (MODEL_ENV, DATAPATH_ENV)},
        }
        if trace is None:
            trace = waves or os.environ.get("TRACE", "0") == "1"
        config = builds.config_of(
            sim,
            profile,
            waves,
            overrides,
            toplevel,
            user_sources,
            model,
            trace=trace,
            environ=chosen,
        )
    runner, bdir = builds.build_with_runner(config)
    if isinstance(testcase, str):
        name = testcase
    elif testcase is None:
        name = "all"
    else:  # several: their names, or the first's and a count where those run long
        name = "-".join(testcase)
        if len(name) > 120:
            name = f"{testcase[0]}-and-{len(testcase) - 1}-more"
    tdir = test_dir or run_dir(bdir / "runs", f"{name}-{os.getpid()}")
    tdir.mkdir(parents=True, exist_ok=True)
    env = {
        # what the simulation builds for itself goes beside the builds: tb/dp's library
        BUILD_ROOT_ENV: str(BUILD_ROOT),
        REWRITE_ENV: rewrite_patterns(module),
        # numpy's BLAS in one thread: the models do no linear algebra, and its thread
        # pool's workers spin on another core, which a second simulation wants
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1"),
    }
    env.update({k: v for k, v in given.items() if k not in (MODEL_ENV, DATAPATH_ENV)})
    env.update(config.to_env())  # the configuration, the one place the simulation reads it
    results = tdir / "results.xml"
    results.unlink(missing_ok=True)
    trace_file = tdir / "tlp_trace.jsonl"
    trace_file.unlink(missing_ok=True)
    if config.trace:
        env[TRACE_ENV] = str(trace_file)
    if config.trace or config.waves:  # the TLP trace and the text tracks, attached to each TB
        others = [p for p in env.get(PLUGINS_ENV, "").split(",") if p and p != DEBUG_PLUGIN]
        env[PLUGINS_ENV] = ",".join([DEBUG_PLUGIN, *others])
    sim, waves, toplevel = config.sim, config.waves, config.toplevel
    plusargs = [f"+dumpfile_path={tdir / f'{toplevel}.fst'}"] if waves and sim == "icarus" else []
    names = [testcase] if isinstance(testcase, str) else testcase
    # exactly these tests (cocotb's own ``testcase`` also takes names ending in them)
    test_filter = rf"\.({'|'.join(re.escape(n) for n in names)})$" if names else None
    try:
        with waves_env(waves), sim_path(), sim_python():
            runner.test(
                test_module=module,
                hdl_toplevel=config.hdl_toplevel,
                test_filter=test_filter,
                build_dir=bdir,
                test_dir=tdir,
                waves=waves,
                seed=seed,
                extra_env=env,
                parameters=config.parameters,
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
        from ...debug import perfetto
        from ...debug.records import read_trace
        from ...debug.report import write_report

        records = read_trace(trace_file)  # once, for the reports and the save file's view
        write_report(trace_file, records=records)
        perfetto.write(trace_file, records=records)
    for dump in tdir.glob("*.fst"):
        from ...debug.gtkwave import focus, write_save_file

        write_save_file(dump, view=focus(records or []))
    _note_artifacts(tdir)
    return results


_RUN_DIRS: set[Path] = set()  # the run directories this process has used


def run_dir(runs: Path, name: str) -> Path:
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
    overrides: Mapping[str, object] | None = None,
    toplevel: str = TOPLEVEL,
    user_sources: Sequence[Path] = (),
    model: str | None = None,
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
        model=model,
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
