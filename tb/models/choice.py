"""The simulation models by name, and the one place that picks one: which cocotbext-pcie
link and UltraScale+ stream interface classes a system is built with.

Two models for users (``$PEVB_MODEL``, ``TB(model=...)``):

- ``transactors`` (the default): the TLP-level links (:mod:`.link`, :mod:`.switch`) and
  the hard IP's streams through RTL-side transactors (:mod:`.transactors`), on a build
  made with them (``PEVB_HIP_XACT``);
- ``exact``: cocotbext-pcie's own ``SimPort`` and interfaces, on a build without them.

A build without the transactors (a plain cocotb build of the card, or ``runner.run(...,
model="beats")``) runs, when no model is named, the fastest model it supports: the
TLP-level links with the streams driven from Python a beat at a time (:mod:`.streams`),
named ``beats`` in logs; it is not a name to choose. The TLP-level models also clock the
hard IP with :class:`.clocks.EdgeClock` (on Icarus, cocotb's Python clock without a task;
in a transactor build there, the HDL clock of ``pevb_hip_port``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import mismatches

# the environment variable that names the model, and the models users name, the default
# first; the beat-level model is a build's own choice, and runs where none is named
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

__all__ = [
    "BEAT_MODEL",
    "EXACT_MODEL",
    "MODELS",
    "MODEL_ENV",
    "RUNNABLE",
    "TRANSACTOR_MODEL",
    "check",
    "default_model",
    "model_for_build",
    "models",
]


def check(model: str, runnable: bool = False) -> str:
    """``model``, or ``ValueError`` (one line) where it is not the name of a model users
    choose (:data:`MODELS`; with ``runnable``, of one a system can run: :data:`RUNNABLE`)."""
    if model not in (RUNNABLE if runnable else MODELS):
        former = f" ({_FORMER[model]})" if model in _FORMER else ""
        raise ValueError(f"{MODEL_ENV}={model!r}: choose {' or '.join(MODELS)}{former}")
    return model


def default_model(versions: dict[str, str | None] | None = None) -> str:
    """The model a run gets when none is named (``$PEVB_MODEL`` unset): the transactor
    model on the verified versions; on any other the exact model, the only one that runs
    with the extensions off. ``versions`` stands in for the installed ones (tests)."""
    return EXACT_MODEL if mismatches(versions) else TRANSACTOR_MODEL


def model_for_build(built_xact: bool, versions: dict[str, str | None] | None = None) -> str:
    """The model a testbench runs when none is named (as in a plain cocotb build): the
    fastest the build can run. A build with the transactors runs the transactor model;
    one without, the beat-level model, or where the extensions are off the exact one."""
    if built_xact:
        return TRANSACTOR_MODEL
    return EXACT_MODEL if mismatches(versions) else BEAT_MODEL


@contextlib.contextmanager
def models(kind: str) -> Iterator[None]:
    """Build cocotbext-pcie devices, switches, root complexes and UltraScale+ hard IPs
    with the links and stream interfaces of model ``kind`` inside this block. (The
    classes are imported here: the names above need no simulator.)"""
    from cocotbext.pcie.core import bridge as _bridge
    from cocotbext.pcie.core import device as _device
    from cocotbext.pcie.core import switch as _switch
    from cocotbext.pcie.xilinx.us import usp_model as _usp

    from ..dp import COMPILED, datapath
    from .clocks import EdgeClock
    from .link import TlpPort
    from .streams import BEAT_INTERFACES
    from .switch import add_switch_port
    from .transactors import TRANSACTOR_INTERFACES

    check(kind, runnable=True)
    saved = _device.SimPort, _bridge.SimPort, {n: getattr(_usp, n) for n in BEAT_INTERFACES}
    saved_add_switch_port = _switch.Switch.add_switch_port
    clock = _usp.Clock
    if kind != EXACT_MODEL:
        if datapath() == COMPILED:
            from .compiled_link import CompiledTlpPort as port
        else:
            port = TlpPort
        _device.SimPort = _bridge.SimPort = port
        _switch.Switch.add_switch_port = add_switch_port
        _usp.Clock = EdgeClock
    if kind == BEAT_MODEL:
        for name, cls in BEAT_INTERFACES.items():
            setattr(_usp, name, cls)
    elif kind == TRANSACTOR_MODEL:
        for name, cls in TRANSACTOR_INTERFACES.items():
            setattr(_usp, name, cls)
    try:
        yield
    finally:
        _device.SimPort, _bridge.SimPort = saved[0], saved[1]
        _switch.Switch.add_switch_port = saved_add_switch_port
        _usp.Clock = clock
        for name, cls in saved[2].items():
            setattr(_usp, name, cls)
