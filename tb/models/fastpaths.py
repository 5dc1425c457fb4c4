"""Faster equivalents of hot spots of cocotbext-pcie's TLP object, installed by
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

- ``Function.match_tlp`` and ``Bridge.match_tlp_secondary`` (every function and bridge
  a TLP passes asks them) read ``fmt_type`` and built a set of types for each branch
  they tried. Here the code picks the branch in one dict lookup, and the branch is the
  original's; a code none of them takes goes to the original (its exception).
- ``PcieId`` (a requester or completer ID: two per TLP built, one per ID set, one per
  routing check) checked its three numbers through ``isinstance`` and six comparisons;
  three ints in range, or an ID, now take one chained comparison, anything else the
  original.

- ``Tlp.__init__`` (a TLP is copied on every hop) set 25 fields one by one, building a
  ``TlpAttr`` flag and two ``PcieId`` through their constructors; the defaults are now
  one dict (taken once from the original constructor) and a copy takes the fields the
  original copies (``th`` is not among them there either).
- ``dword_parity`` of the UltraScale+ interfaces (four parity bits per dword of every
  beat's payload) takes each byte's parity from a table of 256, and a frame's
  ``update_parity`` takes all its dwords' at once (their bytes translated through that
  table, four bits gathered from each dword's four).
- The UltraScale+ TLP's conversions to and from the hard IP's stream frames moved the
  payload one dword per ``struct`` call. ``pack_us_rc`` and ``pack_us_cq`` (every
  completion and request the model sends to the RTL) are written out here with the
  payload in one call; ``unpack_us_rq`` and ``unpack_us_cc`` (every request and
  completion from the RTL) let the original read the descriptor dwords and join the
  payload in one call. A TLP of another type, a payload that is not whole dwords, a
  parity check or a frame too short goes to the original (its result or exception).

``make profile`` showed about 1.5 million ``Enum.__hash__`` calls for 5000 TLPs.

A new hash would strand the members in every dict and set built before it: ``install``
re-inserts them in the dicts and sets of every loaded module (cocotbext-pcie's
``tlp_type_fc_type_mapping`` and ``tlp_type_to_req_type``) and rebuilds module-level
frozensets. ``tb/env/__init__.py`` installs it before any testbench module is imported.
"""

from __future__ import annotations

import struct
import sys

from cocotbext.pcie.core.bridge import Bridge
from cocotbext.pcie.core.function import Function
from cocotbext.pcie.core.tlp import Tlp, TlpType
from cocotbext.pcie.core.utils import PcieId
from cocotbext.pcie.xilinx.us import interface as _us_interface
from cocotbext.pcie.xilinx.us.tlp import Tlp_us, tlp_type_to_req_type

# (fmt << 5 | type) -> TlpType
_BY_CODE = {int(t.value[0]) << 5 | t.value[1]: t for t in TlpType}
_original_getter = Tlp.fmt_type.fget
_original_check = Tlp.check


def _codes(*types: TlpType) -> frozenset[int]:
    return frozenset(int(t.value[0]) << 5 | t.value[1] for t in types)


# the types each rule of Tlp.check applies to (its configuration/IO length rule compares
# fmt_type with a set, which is never equal: that rule never applies, here neither)
_MEM_REQUEST_TYPES = (
    TlpType.MEM_READ,
    TlpType.MEM_READ_64,
    TlpType.MEM_READ_LOCKED,
    TlpType.MEM_READ_LOCKED_64,
    TlpType.MEM_WRITE,
    TlpType.MEM_WRITE_64,
)
_MEM_REQUESTS = _codes(*_MEM_REQUEST_TYPES)
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


# the branches of Function.match_tlp and Bridge.match_tlp_secondary, by type code
_CFG0, _CFG1, _CPL, _IO, _MEM, _MSG_ID, _TO_RC, _BCAST, _LOCAL, _GATHER = range(10)
_BRANCH = {
    code: branch
    for branch, types in (
        (_CFG0, (TlpType.CFG_READ_0, TlpType.CFG_WRITE_0)),
        (_CFG1, (TlpType.CFG_READ_1, TlpType.CFG_WRITE_1)),
        (_CPL, (TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA)),
        (_IO, (TlpType.IO_READ, TlpType.IO_WRITE)),
        (_MEM, (TlpType.MEM_READ, TlpType.MEM_READ_64, TlpType.MEM_WRITE, TlpType.MEM_WRITE_64)),
        (_MSG_ID, (TlpType.MSG_ID, TlpType.MSG_DATA_ID)),
        (_TO_RC, (TlpType.MSG_TO_RC, TlpType.MSG_DATA_TO_RC)),
        (_BCAST, (TlpType.MSG_BCAST, TlpType.MSG_DATA_BCAST)),
        (_LOCAL, (TlpType.MSG_LOCAL, TlpType.MSG_DATA_LOCAL)),
        (_GATHER, (TlpType.MSG_GATHER, TlpType.MSG_DATA_GATHER)),
    )
    for code in _codes(*types)
}
_original_match_tlp = Function.match_tlp
_original_match_secondary = Bridge.match_tlp_secondary
_original_pcie_id_new = PcieId.__new__
_NO_ID = PcieId(0, 0, 0)


def _branch(tlp: Tlp) -> int | None:
    try:
        return _BRANCH.get(tlp.fmt << 5 | tlp.type)
    except TypeError:
        return None


def _match_tlp(self: Function, tlp: Tlp) -> bool:
    """``Function.match_tlp``: is the TLP for this function."""
    branch = _branch(tlp)
    if branch == _MEM:
        return bool(self.match_bar(tlp.address))
    if branch == _CPL:
        return self.pcie_id == tlp.requester_id
    if branch == _CFG0:
        cid = tlp.completer_id
        return self.device_num == cid.device and self.function_num == cid.function
    if branch == _CFG1:
        return False
    if branch == _IO:
        return bool(self.match_bar(tlp.address, True))
    return _original_match_tlp(self, tlp)


def _match_tlp_secondary(self: Bridge, tlp: Tlp) -> bool:
    """``Bridge.match_tlp_secondary``: does the TLP go to this bridge's secondary side."""
    branch = _branch(tlp)
    if branch == _MEM:
        address = tlp.address
        return (
            self.mem_base <= address <= self.mem_limit
            or self.prefetchable_mem_base <= address <= self.prefetchable_mem_limit
        )
    if branch == _CPL:
        rid = tlp.requester_id
        return self.sec_bus_num <= rid.bus <= self.sub_bus_num and rid != _NO_ID
    if branch == _CFG1 or branch == _MSG_ID:
        cid = tlp.completer_id
        return self.sec_bus_num <= cid.bus <= self.sub_bus_num and cid != _NO_ID
    if branch == _IO:
        return self.io_base <= tlp.address <= self.io_limit
    if branch == _BCAST:
        return True
    if branch in (_CFG0, _TO_RC, _LOCAL, _GATHER):
        return False
    return _original_match_secondary(self, tlp)


def _pcie_id_new(cls, bus=0, device=0, function=0):
    if type(bus) is PcieId:  # an ID given again (the Tlp's ID setters): its numbers
        bus, device, function = bus
    if (
        type(bus) is int
        and type(device) is int
        and type(function) is int
        and 0 <= bus <= 255
        and 0 <= device <= 31
        and 0 <= function <= 7
    ):
        return tuple.__new__(cls, (bus, device, function))
    return _original_pcie_id_new(cls, bus, device, function)


_original_tlp_init = Tlp.__init__


def _tlp_defaults() -> dict:
    blank = Tlp.__new__(Tlp)
    _original_tlp_init(blank)
    return dict(vars(blank))


_TLP_DEFAULTS = _tlp_defaults()
# what the original's copy constructor takes from the TLP it copies (data: a copy)
_TLP_COPIED = (
    "fmt",
    "type",
    "tc",
    "ln",
    "td",
    "ep",
    "attr",
    "at",
    "length",
    "_completer_id",
    "status",
    "bcm",
    "byte_count",
    "_requester_id",
    "tag",
    "first_be",
    "last_be",
    "lower_address",
    "address",
    "ph",
    "seq",
)


def _tlp_init(self: Tlp, tlp=None) -> None:
    fields = self.__dict__
    fields.update(_TLP_DEFAULTS)
    if isinstance(tlp, Tlp):
        other = tlp.__dict__
        for name in _TLP_COPIED:
            fields[name] = other[name]
        fields["data"] = bytearray(other["data"])
    else:
        fields["data"] = bytearray()


_original_dword_parity = _us_interface.dword_parity
_BYTE_PARITY = [bin(b).count("1") & 1 for b in range(256)]


def _dword_parity(d):
    """The parity of each byte of a dword, bit n for byte n."""
    if type(d) is not int or d < 0:
        return _original_dword_parity(d)
    p = _BYTE_PARITY
    return p[d & 0xFF] | p[d >> 8 & 0xFF] << 1 | p[d >> 16 & 0xFF] << 2 | p[d >> 24 & 0xFF] << 3


_original_update_parity = _us_interface.UsPcieFrame.update_parity
_PARITY_OF_BYTE = bytes(_BYTE_PARITY)  # a translation table: byte -> its parity bit


def _update_parity(self) -> None:
    """``UsPcieFrame.update_parity`` over all dwords at once: each byte becomes its parity
    bit (0 or 1), and each dword's four bits, at bits 0, 8, 16 and 24, are gathered to
    bits 0-3 and inverted (the interface's parity is odd). A dword that is not a 32-bit
    unsigned number: the original, dword by dword."""
    n = len(self.data)
    try:
        raw = struct.pack(f"<{n}L", *self.data)
    except struct.error:
        return _original_update_parity(self)
    self.parity = [
        (v | v >> 7 | v >> 14 | v >> 21) & 0xF ^ 0xF
        for v in struct.unpack(f"<{n}L", raw.translate(_PARITY_OF_BYTE))
    ]


def _payload_dwords(data) -> tuple[int, ...]:
    return struct.unpack_from(f"<{len(data) // 4}L", data)


def _payload_byte_en(n: int, first_be: int, last_be: int) -> list[int]:
    """The byte enables of ``n`` payload dwords: the first's, then all four bytes, then
    the last's (one dword: the first's alone)."""
    if n == 0:
        return []
    if n == 1:
        return [first_be]
    return [first_be, *[0xF] * (n - 2), last_be]


_original_pack_us_rc = Tlp_us.pack_us_rc
_original_pack_us_cq = Tlp_us.pack_us_cq
_original_unpack_us_rq = Tlp_us.unpack_us_rq.__func__
_original_unpack_us_cc = Tlp_us.unpack_us_cc.__func__
_RC_TYPES = frozenset((TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA))
_LOCKED_CPL = frozenset((TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA))
_CQ_TYPES = frozenset(
    (
        *_MEM_REQUEST_TYPES,
        TlpType.IO_READ,
        TlpType.IO_WRITE,
        TlpType.FETCH_ADD,
        TlpType.FETCH_ADD_64,
        TlpType.SWAP,
        TlpType.SWAP_64,
        TlpType.CAS,
        TlpType.CAS_64,
    )
)


def _pack_us_rc(self: Tlp_us):
    """``Tlp_us.pack_us_rc``: the requester completion descriptor's three dwords, the
    payload, its byte enables (from the lower address and byte count, as the original
    computes them) and the parity."""
    fmt_type = self.fmt_type
    if fmt_type not in _RC_TYPES or len(self.data) % 4:
        return _original_pack_us_rc(self)
    pkt = _us_interface.UsPcieFrame()
    dw0 = self.lower_address & 0xFFF
    dw0 |= (self.error_code & 0xF) << 12
    dw0 |= (self.byte_count & 0x1FFF) << 16
    if fmt_type in _LOCKED_CPL:
        dw0 |= 1 << 29
    dw0 |= bool(self.request_completed) << 30
    dw1 = self.length & 0x7FF
    dw1 |= (self.status & 0x7) << 11
    dw1 |= bool(self.ep) << 14
    dw1 |= int(self.requester_id) << 16
    dw2 = self.tag & 0xFF
    dw2 |= int(self.completer_id) << 8
    dw2 |= (self.tc & 0x7) << 25
    dw2 |= (self.attr & 0x7) << 28
    pkt.discontinue = self.discontinue
    payload = _payload_dwords(self.data)
    pkt.data = [dw0, dw1, dw2, *payload]
    first_be = (0xF << (self.lower_address & 3)) & 0xF
    if self.byte_count + (self.lower_address & 3) > self.length * 4:
        last_be = 0xF
    else:
        last_be = 0xF >> ((4 - self.byte_count - self.lower_address) & 3)
    if len(payload) == 1:
        first_be &= last_be
    pkt.byte_en = [0, 0, 0, *_payload_byte_en(len(payload), first_be, last_be)]
    pkt.update_parity()
    return pkt


def _pack_us_cq(self: Tlp_us):
    """``Tlp_us.pack_us_cq`` for memory, IO and atomic requests: the completer request
    descriptor's four dwords, the payload, its byte enables and the parity."""
    fmt_type = self.fmt_type
    if fmt_type not in _CQ_TYPES or len(self.data) % 4:
        return _original_pack_us_cq(self)
    pkt = _us_interface.UsPcieFrame()
    dw0 = self.at & 0x3
    dw0 |= self.address & 0xFFFFFFFC
    dw1 = (self.address & 0xFFFFFFFF00000000) >> 32
    dw2 = self.length & 0x7FF
    dw2 |= tlp_type_to_req_type[fmt_type] << 11
    dw2 |= int(self.requester_id) << 16
    dw3 = self.tag & 0xFF
    dw3 |= (self.completer_id.function & 0xFF) << 8
    dw3 |= (self.bar_id & 0x7) << 16
    dw3 |= (self.bar_aperture & 0x3F) << 19
    dw3 |= (self.tc & 0x7) << 25
    dw3 |= (self.attr & 0x7) << 28
    pkt.first_be = self.first_be
    pkt.last_be = self.last_be
    pkt.discontinue = self.discontinue
    payload = _payload_dwords(self.data)
    pkt.data = [dw0, dw1, dw2, dw3, *payload]
    pkt.byte_en = [0, 0, 0, 0, *_payload_byte_en(len(payload), self.first_be, self.last_be)]
    pkt.update_parity()
    return pkt


def _unpack_payload(original, cls, pkt, check_parity: bool, header: int, payload):
    """The original unpacker on the frame's first ``header`` dwords (the descriptor it
    decodes), then ``payload(tlp, data)`` (the payload dwords) joined in one call."""
    data = pkt.data
    if check_parity or len(data) <= header:
        return original(cls, pkt, check_parity)
    pkt.data = data[:header]
    try:
        tlp = original(cls, pkt, check_parity)
    finally:
        pkt.data = data
    words = payload(tlp, data)
    tlp.data.extend(struct.pack(f"<{len(words)}L", *words))
    return tlp


def _unpack_us_rq(cls, pkt, check_parity=False):
    """``Tlp_us.unpack_us_rq``: every dword after the descriptor's four is payload."""
    return _unpack_payload(
        _original_unpack_us_rq, cls, pkt, check_parity, 4, lambda tlp, data: data[4:]
    )


def _unpack_us_cc(cls, pkt, check_parity=False):
    """``Tlp_us.unpack_us_cc``: the descriptor's length (in dwords) of payload after its
    three dwords."""
    return _unpack_payload(
        _original_unpack_us_cc,
        cls,
        pkt,
        check_parity,
        3,
        lambda tlp, data: data[3 : 3 + tlp.length] if tlp.length > 0 else (),
    )


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
                space[name] = frozenset(list(value))  # frozenset(fs) is fs itself


def install() -> None:
    """Install the fast ``Tlp.fmt_type`` getter, ``Tlp.check`` and ``Tlp.__init__``, the
    routing matches, ``PcieId``, ``dword_parity`` and ``update_parity``, the UltraScale+
    TLP's packers and unpackers, and the identity hash of ``TlpType`` (once; later calls
    do nothing)."""
    if Tlp.fmt_type.fget is _fmt_type:
        return
    Tlp.fmt_type = property(_fmt_type, Tlp.fmt_type.fset)
    Tlp.check = _check
    Tlp.__init__ = _tlp_init
    Function.match_tlp = _match_tlp
    Bridge.match_tlp_secondary = _match_tlp_secondary
    PcieId.__new__ = _pcie_id_new
    _us_interface.dword_parity = _dword_parity
    _us_interface.UsPcieFrame.update_parity = _update_parity
    Tlp_us.pack_us_rc = _pack_us_rc
    Tlp_us.pack_us_cq = _pack_us_cq
    Tlp_us.unpack_us_rq = classmethod(_unpack_us_rq)
    Tlp_us.unpack_us_cc = classmethod(_unpack_us_cc)
    TlpType.__hash__ = object.__hash__
    _rehash_loaded_modules()


def original_fmt_type(tlp: Tlp) -> TlpType:
    """``Tlp.fmt_type`` as cocotbext-pcie computes it (for tests)."""
    return _original_getter(tlp)


def original_check(tlp: Tlp) -> bool:
    """``Tlp.check`` as cocotbext-pcie computes it (for tests)."""
    return _original_check(tlp)


ORIGINALS = {
    "match_tlp": _original_match_tlp,
    "match_tlp_secondary": _original_match_secondary,
    "PcieId.__new__": _original_pcie_id_new,
    "dword_parity": _original_dword_parity,
    "Tlp.__init__": _original_tlp_init,
    "update_parity": _original_update_parity,
    "pack_us_rc": _original_pack_us_rc,
    "pack_us_cq": _original_pack_us_cq,
    "unpack_us_rq": _original_unpack_us_rq,
    "unpack_us_cc": _original_unpack_us_cc,
}  # cocotbext-pcie's own, for the tests
