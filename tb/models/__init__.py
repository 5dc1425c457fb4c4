"""The simulation models of the PCIe fabric and the hard IP, by role, and the versions of
cocotb and cocotbext-pcie they were verified with.

- :mod:`.choice`: the models by name (``$PEVB_MODEL``), the default, the model a build
  runs when none is named, and :func:`.choice.models`, which builds a system's
  cocotbext-pcie objects with a model's classes;
- :mod:`.link`: the TLP-level link (``TlpPort``: whole TLPs, DLLPs by their effect);
  :mod:`.compiled_link`: the same link with its wire, credits and timed work in the
  compiled data path's library (``$PEVB_DATAPATH=compiled``, :mod:`tb.dp`);
- :mod:`.switch`: the switch of the TLP-level fabric;
- :mod:`.timeline`: the timeline on which the links' and switches' timed work runs, and
  the lanes their handlers run in;
- :mod:`.clocks`: the hard IP's user clock without a task per edge, the HDL clock of a
  transactor build on Icarus, and the switch that applies a timer callback's writes at
  once (it replaces cocotb's private ``_schedule_write``);
- :mod:`.transactors`: the transactor model's streams (RTL-side transactors, once per
  TLP);
- :mod:`.streams`: the hard IP's streams driven from Python a beat at a time (the
  beat-level model, for a build without the transactors); :mod:`.signals`: the signal
  I/O both use;
- :mod:`.hardip`: the hard IP's behaviour beyond cocotbext-pcie's model (completion
  timeout, FLR, hot reset, link down, bus-master and memory-space enables), and apart
  from it :mod:`.hardip_speed`, the base model's per-cycle loops woken only on work;
- :mod:`.cfg_ext`, :mod:`.pcie_id`: the configuration extend interface and the IDs from
  ports;
- :mod:`.upstream`: what the extensions rest on in cocotb and cocotbext-pcie, each
  by a fingerprint of its source as verified (a test fails when the installed code
  differs);
- :mod:`.fastpaths`: faster equivalents of hot spots of cocotbext-pcie (``Tlp.fmt_type``,
  ``Tlp.check``, ``Tlp.__init__``, the routing matches, ``PcieId``, ``dword_parity`` and
  ``update_parity``, the UltraScale+ TLP's packers and unpackers, the ``TlpType`` hash).

Nothing is patched when a module is imported. The system builder (:class:`tb.env.system.TB`)
calls :func:`install` before it builds anything. :func:`install` checks the installed
cocotb and cocotbext-pcie against :data:`VERIFIED`. On the verified versions it installs
the fast paths and the timed writes, and the TLP-level models and the hard IP's
event-driven loops are allowed. On any other version it logs one line and falls back to
the original code paths: no fast path is installed, the links and interfaces are
cocotbext-pcie's own (the exact model), and the hard IP runs the base model's per-cycle
loops. :func:`sync_gpi_log_level` passes cocotb's GPI log level on to its C side (cocotb
2.1 leaves the C side at its default). How to verify a new version: docs/extensions.md.
"""

from __future__ import annotations

import logging

from ..config.choices import VERIFIED, installed_versions, mismatches

__all__ = [
    "VERIFIED",
    "active",
    "install",
    "installed_versions",
    "mismatches",
    "sync_gpi_log_level",
]

_log = logging.getLogger("cocotb.tb.models")
_state: dict[str, bool | None] = {"active": None}


def install(versions: dict[str, str | None] | None = None) -> bool:
    """Install the extensions where the installed versions are the verified ones; returns
    whether they are active. Once decided, later calls return the same answer (the fast
    paths cannot be taken out again). ``versions`` stands in for the installed ones
    (tests)."""
    if _state["active"] is not None:
        return bool(_state["active"])
    sync_gpi_log_level()
    bad = mismatches(versions)
    if bad:
        verified = ", ".join(f"{n} {v}" for n, v in VERIFIED.items())
        _log.warning(
            "gpudirect_cosim extensions off: %s installed, verified with %s; running "
            "cocotbext-pcie's original code paths (exact model, no fast paths): see "
            "docs/extensions.md to verify this version",
            ", ".join(bad),
            verified,
        )
        _state["active"] = False
        return False
    from . import clocks, fastpaths

    fastpaths.install()
    clocks.install_timed_writes()
    _state["active"] = True
    return True


def sync_gpi_log_level() -> None:
    """Tell cocotb's C side the ``gpi`` logger's level. cocotb 2.1 sets that level at
    start-up before it hooks the logger's ``setLevel`` to pass the level on, so the C
    side keeps its own default and hands every debug message of the GPI to Python,
    which drops it: about five calls for each handle the simulator makes (a backdoor
    read of a 2 MiB RAM makes 262,144). Setting the level again passes it on; a level
    given in ``GPI_LOG_LEVEL`` was passed on already and stays."""
    gpi = logging.getLogger("gpi")
    gpi.setLevel(gpi.level)


def active() -> bool:
    """Whether the extensions are installed (False before :func:`install` decided)."""
    return bool(_state["active"])
