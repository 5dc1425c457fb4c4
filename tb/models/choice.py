"""The simulation models by name, and the one place that picks one: which cocotbext-pcie
link and UltraScale+ stream interface classes a system is built with (``$PEVB_MODEL``,
``TB(model=...)``).

- ``xact`` (the default): the TLP-level links (:mod:`.link`, :mod:`.switch`) and the
  hard IP's streams through RTL-side transactors (:mod:`.transactors`), on a build made
  with them (``PEVB_HIP_XACT``);
- ``lean``: the TLP-level links and the streams driven from Python a beat at a time
  (:mod:`.streams`), on a build without the transactors;
- ``exact``: cocotbext-pcie's own ``SimPort`` and interfaces.

The TLP-level models also clock the hard IP with :class:`.clocks.EdgeClock` (on Icarus,
cocotb's Python clock without a task; in a transactor build there, the HDL clock of
``pevb_hip_port``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import mismatches

# the environment variable that names the model, and the models, the default first
MODEL_ENV = "PEVB_MODEL"
MODELS = ("xact", "lean", "exact")
XACT_MODEL = "xact"
# the model that runs with the extensions off (an unverified cocotbext-pcie)
EXACT_MODEL = "exact"

__all__ = [
    "EXACT_MODEL",
    "MODELS",
    "MODEL_ENV",
    "XACT_MODEL",
    "check",
    "default_model",
    "model_for_build",
    "models",
]


def check(model: str) -> str:
    """``model``, or ``ValueError`` (one line) where it is not a model's name."""
    if model not in MODELS:
        raise ValueError(f"{MODEL_ENV}={model!r}: choose {' or '.join(MODELS)}")
    return model


def default_model(versions: dict[str, str | None] | None = None) -> str:
    """The model a run gets when none is named (``$PEVB_MODEL`` unset): the transactor
    model on the verified versions; on any other the exact model, the only one that runs
    with the extensions off. ``versions`` stands in for the installed ones (tests)."""
    return EXACT_MODEL if mismatches(versions) else XACT_MODEL


def model_for_build(built_xact: bool, versions: dict[str, str | None] | None = None) -> str:
    """The model a testbench runs when none is named (as in a plain cocotb build): the
    fastest the build can run. A build with the transactors runs the transactor model;
    one without, the lean model, or where the extensions are off the exact one."""
    if built_xact:
        return XACT_MODEL
    return EXACT_MODEL if mismatches(versions) else "lean"


@contextlib.contextmanager
def models(kind: str) -> Iterator[None]:
    """Build cocotbext-pcie devices, switches, root complexes and UltraScale+ hard IPs
    with the links and stream interfaces of model ``kind`` inside this block. (The
    classes are imported here: the names above need no simulator.)"""
    from cocotbext.pcie.core import bridge as _bridge
    from cocotbext.pcie.core import device as _device
    from cocotbext.pcie.core import switch as _switch
    from cocotbext.pcie.xilinx.us import usp_model as _usp

    from .clocks import EdgeClock
    from .link import TlpPort
    from .streams import BEAT_INTERFACES
    from .switch import add_switch_port
    from .transactors import TRANSACTOR_INTERFACES

    check(kind)
    saved = _device.SimPort, _bridge.SimPort, {n: getattr(_usp, n) for n in BEAT_INTERFACES}
    saved_add_switch_port = _switch.Switch.add_switch_port
    clock = _usp.Clock
    if kind != EXACT_MODEL:
        _device.SimPort = _bridge.SimPort = TlpPort
        _switch.Switch.add_switch_port = add_switch_port
        _usp.Clock = EdgeClock
    if kind == "lean":
        for name, cls in BEAT_INTERFACES.items():
            setattr(_usp, name, cls)
    elif kind == XACT_MODEL:
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
