"""The build configuration: what a build and a run of the RTL are, in one place.

Both sides of the process boundary read it, and it imports neither: the flow
(:mod:`tb.flow`: the runner, the farm, the bench, the demo's command line), which makes a
:class:`BuildConfig` from make variables, command-line flags or the runner's arguments
and checks it once, and the testbench inside the simulator, which reads the one the flow
wrote into the simulation (:func:`current`).

- :mod:`.choices`: the simulators, the default profile, the models, the data paths and
  the verified package versions, each listed once with its default, and the names of
  the variables the flow hands a simulation;
- :mod:`.profiles`: the link and engine profiles;
- :mod:`.options`: the options each toplevel takes, and their checks;
- :mod:`.sources`: the Verilog of each toplevel, its parameters and defines;
- :mod:`.build`: :class:`BuildConfig` and :func:`current`.
"""

from __future__ import annotations

from .build import BuildConfig, bench_params, current
from .choices import (
    DATAPATHS,
    DEFAULT_PROFILE,
    DEFAULT_SIM,
    MODELS,
    SIMULATORS,
)
from .options import OPTIONS, OptionError
from .profiles import PROFILES, Profile, get_profile

__all__ = [
    "DATAPATHS",
    "DEFAULT_PROFILE",
    "DEFAULT_SIM",
    "MODELS",
    "OPTIONS",
    "PROFILES",
    "SIMULATORS",
    "BuildConfig",
    "OptionError",
    "Profile",
    "bench_params",
    "current",
    "get_profile",
]
