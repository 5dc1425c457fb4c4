"""Faster equivalents of two hot spots of cocotbext-pcie's TLP object, installed by
:func:`install` (the testbench does at import; each could go upstream as it is).

- ``Tlp.fmt_type`` built a ``TlpType`` from its (fmt, type) tuple on every read, through
  the enum's value lookup, which hashes the tuple's ``TlpFmt`` member in Python. The
  getter here looks the type up by its 8-bit code in a dict of ints.
- ``TlpType`` members hashed by name in Python (``Enum.__hash__``), and the model tests
  membership in sets of them on every hop of every TLP (``Tlp.check``, the switch and
  the functions' routing). Members are singletons compared by identity, so the identity
  hash is a correct hash for them, computed in C.

- ``Tlp.check``, called on every hop (``assert tlp.check()`` in the ports, bridges and
  functions), read ``fmt_type`` five times and built five sets of types per call. The
  check here reads the 8-bit code once and tests it against frozensets of codes; where a
  rule fails (or the code is no type) it calls the original, so the verdict and the
  messages are the original's.

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
_original_check = Tlp.check


def _codes(*types: TlpType) -> frozenset[int]:
    return frozenset(int(t.value[0]) << 5 | t.value[1] for t in types)


# the types each rule of Tlp.check applies to (its configuration/IO length rule compares
# fmt_type with a set, which is never equal: that rule never applies, here neither)
_MEM_REQUESTS = _codes(
    TlpType.MEM_READ,
    TlpType.MEM_READ_64,
    TlpType.MEM_READ_LOCKED,
    TlpType.MEM_READ_LOCKED_64,
    TlpType.MEM_WRITE,
    TlpType.MEM_WRITE_64,
)
_COMPLETIONS_WITH_DATA = _codes(TlpType.CPL_DATA, TlpType.CPL_LOCKED_DATA)
_NO_LENGTH = _codes(
    TlpType.CPL,
    TlpType.CPL_LOCKED,
    TlpType.MSG_TO_RC,
    TlpType.MSG_ADDR,
    TlpType.MSG_ID,
    TlpType.MSG_BCAST,
    TlpType.MSG_LOCAL,
    TlpType.MSG_GATHER,
)
_WITH_DATA = (2, 3)  # TlpFmt.THREE_DW_DATA, FOUR_DW_DATA


def _check(self: Tlp) -> bool:
    """``Tlp.check`` with one type lookup; any rule broken: the original decides (and
    prints its message)."""
    try:
        code = self.fmt << 5 | self.type
    except TypeError:
        return _original_check(self)
    if code not in _BY_CODE:
        return _original_check(self)
    length = self.length
    if self.fmt in _WITH_DATA and length * 4 != len(self.data):
        return _original_check(self)
    if code in _MEM_REQUESTS:
        if length * 4 > 0x1000 - (self.address & 0xFFF):
            return _original_check(self)
    elif code in _COMPLETIONS_WITH_DATA:
        if self.byte_count + (self.lower_address & 3) + 3 < length * 4:
            return _original_check(self)
    elif code in _NO_LENGTH and length != 0:
        return _original_check(self)
    return True


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
    """Install the fast ``Tlp.fmt_type`` getter, ``Tlp.check`` and the identity hash of
    ``TlpType`` (once; later calls do nothing)."""
    if Tlp.fmt_type.fget is _fmt_type:
        return
    Tlp.fmt_type = property(_fmt_type, Tlp.fmt_type.fset)
    Tlp.check = _check
    TlpType.__hash__ = object.__hash__
    _rehash_loaded_modules()


def original_fmt_type(tlp: Tlp) -> TlpType:
    """``Tlp.fmt_type`` as cocotbext-pcie computes it (for tests)."""
    return _original_getter(tlp)


def original_check(tlp: Tlp) -> bool:
    """``Tlp.check`` as cocotbext-pcie computes it (for tests)."""
    return _original_check(tlp)
