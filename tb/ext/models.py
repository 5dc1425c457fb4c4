"""The simulation models, by name: which cocotbext-pcie link and UltraScale+ stream
interface classes a system is built with (``$PEVB_MODEL``, ``TB(model=...)``).

- ``xact`` (the default): the lean links and the transactor interfaces
  (:mod:`tb.ext.xact`), on a build with the RTL-side transactors;
- ``lean``: :class:`tb.ext.lean.LeanPort` links, the lean switch (:mod:`tb.ext.fabric`)
  and the lean interfaces;
- ``exact``: cocotbext-pcie's own ``SimPort`` and interfaces.

The lean and transactor models also clock the hard IP with :class:`tb.ext.fabric.EdgeClock`
(on Icarus, cocotb's Python clock without a task; in a transactor build there, the HDL
clock of ``pevb_hip_port``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from cocotbext.pcie.core import bridge as _bridge
from cocotbext.pcie.core import device as _device
from cocotbext.pcie.core import switch as _switch
from cocotbext.pcie.xilinx.us import usp_model as _usp

from ..env.profiles import MODELS
from .fabric import EdgeClock, lean_add_switch_port
from .lean import LEAN_INTERFACES, LeanPort
from .xact import XACT_INTERFACES

__all__ = ["MODELS", "models"]


@contextlib.contextmanager
def models(kind: str) -> Iterator[None]:
    """Build cocotbext-pcie devices, switches, root complexes and UltraScale+ hard IPs
    with the lean (``"lean"``) or the exact (``"exact"``) link and stream interfaces
    inside this block; ``"xact"``: the lean link and the transactor interfaces
    (:mod:`tb.ext.xact`, for a build with ``PEVB_HIP_XACT``)."""
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}: {' or '.join(MODELS)}")
    saved = _device.SimPort, _bridge.SimPort, {n: getattr(_usp, n) for n in LEAN_INTERFACES}
    add_switch_port = _switch.Switch.add_switch_port
    clock = _usp.Clock
    if kind != "exact":
        _device.SimPort = _bridge.SimPort = LeanPort
        _switch.Switch.add_switch_port = lean_add_switch_port
        _usp.Clock = EdgeClock
    if kind == "lean":
        for name, cls in LEAN_INTERFACES.items():
            setattr(_usp, name, cls)
    elif kind == "xact":
        for name, cls in XACT_INTERFACES.items():
            setattr(_usp, name, cls)
    try:
        yield
    finally:
        _device.SimPort, _bridge.SimPort = saved[0], saved[1]
        _switch.Switch.add_switch_port = add_switch_port
        _usp.Clock = clock
        for name, cls in saved[2].items():
            setattr(_usp, name, cls)
