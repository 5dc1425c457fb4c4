"""The choices a build and a run are made of, each listed once with its default: the
simulators, the profile, the models of the fabric and hard IP, the data path, the
package versions the models were verified with, and the names of the environment
variables through which the flow hands a simulation what it chose.

Nothing here imports a simulator or any other part of the project: the flow
(:mod:`tb.flow`) and the testbench both read it.
"""

from __future__ import annotations

from importlib import metadata

# the simulators, the default first
SIMULATORS = ("icarus", "verilator")
DEFAULT_SIM = SIMULATORS[0]
# the long runs' (make regress, python -m tb.flow.bench and its profile) when none is
# named: Verilator runs about 2.7 times the seeds per hour of Icarus
DEFAULT_LONG_SIM = "verilator"

# the profiles (tb.config.profiles defines each), the default first: the real card's
PROFILE_NAMES = ("picoevb", "gen3x8", "gen3x4", "gen3x16")
DEFAULT_PROFILE = PROFILE_NAMES[0]

# the models of the links and the hard IP's interfaces (tb/models/choice.py builds them):
# those users name, the default first; the beat-level model is a build's own choice,
# and runs where none is named
MODEL_ENV = "PEVB_MODEL"
TRANSACTOR_MODEL = "transactors"
EXACT_MODEL = "exact"
BEAT_MODEL = "beats"
MODELS = (TRANSACTOR_MODEL, EXACT_MODEL)
RUNNABLE = (TRANSACTOR_MODEL, BEAT_MODEL, EXACT_MODEL)
# names this project's models had, and what to say to a user who gives one
_FORMER = {
    "xact": f"xact is now {TRANSACTOR_MODEL}",
    "lean": "lean is no longer a choice: a build without the transactors runs it by itself",
}

# the data path of the fabric's TLPs (tb/dp), the default first
DATAPATH_ENV = "PEVB_DATAPATH"
PYTHON, COMPILED = "python", "compiled"
DATAPATHS = (COMPILED, PYTHON)
DEFAULT_DATAPATH = DATAPATHS[0]

# the versions every extension of tb/models was checked against (the differential tests
# of docs/extensions.md); pyproject.toml pins the same
VERIFIED = {"cocotb": "2.1.0", "cocotbext-pcie": "0.2.16"}

# what the flow hands a simulation in its environment: the build configuration
# (tb.config.build), the TLP trace's file, the modules whose attach(tb) each new TB
# calls, an RTL bench's parameters, and where builds (and the library of tb/dp) go
CONFIG_ENV = "PEVB_CONFIG"
TRACE_ENV = "PEVB_TRACE"
PLUGINS_ENV = "PEVB_PLUGINS"
BENCH_PARAMS_ENV = "PEVB_BENCH_PARAMS"
BUILD_ROOT_ENV = "PEVB_BUILD_ROOT"
# where the bench's recording plugin (tb.bench.inputs) writes the card's inputs
RECORD_ENV = "PEVB_RECORD_INPUTS"


def check_sim(sim: str) -> str:
    """``sim``, or ``ValueError`` (one line) where it is not a simulator of :data:`SIMULATORS`."""
    if sim not in SIMULATORS:
        raise ValueError(f"unknown simulator {sim!r}; choose one of {', '.join(SIMULATORS)}")
    return sim


def check_model(model: str, runnable: bool = False) -> str:
    """``model``, or ``ValueError`` (one line) where it is not the name of a model users
    choose (:data:`MODELS`; with ``runnable``, of one a system can run: :data:`RUNNABLE`)."""
    if model not in (RUNNABLE if runnable else MODELS):
        former = f" ({_FORMER[model]})" if model in _FORMER else ""
        raise ValueError(f"{MODEL_ENV}={model!r}: choose {' or '.join(MODELS)}{former}")
    return model


def check_datapath(value: str | None) -> str:
    """``value`` as the data path it names (None or empty: :data:`DEFAULT_DATAPATH`);
    ``ValueError``, one line naming the choices, for anything else."""
    value = value or DEFAULT_DATAPATH
    if value not in DATAPATHS:
        raise ValueError(f"{DATAPATH_ENV}={value!r}: choose {' or '.join(DATAPATHS)}")
    return value


def installed_versions() -> dict[str, str | None]:
    """The installed version of each package of :data:`VERIFIED` (None: not installed)."""
    out: dict[str, str | None] = {}
    for name in VERIFIED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def mismatches(versions: dict[str, str | None] | None = None) -> list[str]:
    """``name version`` for each package whose version is not the verified one."""
    found = installed_versions() if versions is None else versions
    return [
        f"{name} {found.get(name) or '(none)'}"
        for name, want in VERIFIED.items()
        if found.get(name) != want
    ]


def default_model(versions: dict[str, str | None] | None = None) -> str:
    """The model a run gets when none is named: the transactor model on the verified
    versions; on any other the exact model, the only one that runs with the extensions
    off. ``versions`` stands in for the installed ones (tests)."""
    return EXACT_MODEL if mismatches(versions) else TRANSACTOR_MODEL


def model_for_build(built_xact: bool, versions: dict[str, str | None] | None = None) -> str:
    """The model a testbench runs when none is named (as in a plain cocotb build): the
    fastest the build can run. A build with the transactors runs the transactor model;
    one without, the beat-level model, or where the extensions are off the exact one."""
    if built_xact:
        return TRANSACTOR_MODEL
    return EXACT_MODEL if mismatches(versions) else BEAT_MODEL


if __name__ == "__main__":  # the Makefile's lists: python3 tb/config/choices.py NAME
    import sys

    value = globals()[sys.argv[1]]
    print(" ".join(value) if isinstance(value, tuple) else value)
