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

from ..config.choices import (
    BEAT_MODEL,
    EXACT_MODEL,
    MODEL_ENV,
    MODELS,
    RUNNABLE,
    TRANSACTOR_MODEL,
    default_model,
    model_for_build,
)
from ..config.choices import check_model as check

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
