"""Faster equivalents of two hot spots of cocotbext-pcie's TLP object, installed by
:func:`install` (the testbench does at import; each could go upstream as it is).

- ``Tlp.fmt_type`` built a ``TlpType`` from its (fmt, type) tuple on every read, through
  the enum's value lookup, which hashes the tuple's ``TlpFmt`` member in Python. The
  getter here looks the type up by its 8-bit code in a dict of ints.
- ``TlpType`` members hashed by name in Python (``Enum.__hash__``), and the model tests
  membership in sets of them on every hop of every TLP (``Tlp.check``, the switch and
  the functions' routing). Members are singletons compared by identity, so the identity
  hash is a correct hash for them, computed in C.

``make profile`` showed about 1.5 million ``Enum.__hash__`` calls for 5000 TLPs.

A new hash would strand the members in every dict and set built before it: ``install``
re-inserts them in the dicts and sets of every loaded module (cocotbext-pcie's
``tlp_type_fc_type_mapping`` and ``tlp_type_to_req_type``) and rebuilds module-level
frozensets. ``tb/env/__init__.py`` installs it before any testbench module is imported.
"""

from __future__ import annotations

import sys

from cocotbext.pcie.core.tlp import Tlp, TlpType

# (fmt << 5 | type) -> TlpType
_BY_CODE = {int(t.value[0]) << 5 | t.value[1]: t for t in TlpType}
_original_getter = Tlp.fmt_type.fget


def _fmt_type(self: Tlp) -> TlpType:
    try:
        return _BY_CODE[self.fmt << 5 | self.type]
    except (KeyError, TypeError):
        return TlpType((self.fmt, self.type))  # the original's ValueError for unknown codes


def _holds_tlp_type(container) -> bool:
    return any(isinstance(k, TlpType) for k in container)


def _rehash_loaded_modules() -> None:
    """Re-insert TlpType members in the module-level dicts and sets built before the
    hash changed (frozensets are rebuilt and rebound)."""
    for module in list(sys.modules.values()):
        space = getattr(module, "__dict__", None)
        if not isinstance(space, dict):
            continue
        for name, value in list(space.items()):
            if isinstance(value, dict) and _holds_tlp_type(value):
                items = list(value.items())
                value.clear()
                value.update(items)
            elif isinstance(value, set) and _holds_tlp_type(value):
                members = list(value)
                value.clear()
                value.update(members)
            elif isinstance(value, frozenset) and _holds_tlp_type(value):
                space[name] = frozenset(value)


def install() -> None:
    """Install the fast ``Tlp.fmt_type`` getter and the identity hash of ``TlpType``
    (once; later calls do nothing)."""
    if Tlp.fmt_type.fget is _fmt_type:
        return
    Tlp.fmt_type = property(_fmt_type, Tlp.fmt_type.fset)
    TlpType.__hash__ = object.__hash__
    _rehash_loaded_modules()


def original_fmt_type(tlp: Tlp) -> TlpType:
    """``Tlp.fmt_type`` as cocotbext-pcie computes it (for tests)."""
    return _original_getter(tlp)
