"""The protocol checker on the compiled data path (``$PEVB_DATAPATH=compiled``, stage 4
of docs/performance.md's design): :class:`tb.env.link.ProtocolChecker` with its request
and completion rules and its table of outstanding requests in the library
(``tb/dp/checker.cpp``), so the TLPs the library moves and the ones Python moves are
checked against one table.

Python keeps what is Python's: the messages' rules (they keep no state), the messages
themselves (the library hands back numbered records, formatted here with the Python
checker's words), the time stamps, the expected violations and the raise-or-record
choice. :func:`make_checker` picks the checker the data path wants.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from cocotbext.pcie.core.tlp import Tlp, TlpFmt, TlpType
from cocotbext.pcie.core.utils import PcieId

from ..dp import COMPILED, TlpHeader, datapath, library
from ..models.native import WatchedList
from .link import DOWN, MESSAGES, UP, ProtocolChecker, describe

_DIRECTIONS = {UP: 0, DOWN: 1}


class _Record(ctypes.Structure):
    """One record of a check (``dp_ck_record``): what it says, its numbers, and the
    request it concerns."""

    _fields_ = [
        ("code", ctypes.c_uint32),
        ("has_request", ctypes.c_uint32),
        ("a", ctypes.c_int64),
        ("b", ctypes.c_int64),
        ("c", ctypes.c_int64),
        ("request", TlpHeader),
    ]


_LATE = 64  # not a violation: a completion after its request timed out


def _request(r: _Record) -> Tlp:
    return tlp_of(r.request)


# each record's rule and message, in the Python checker's words (``ck`` the checker)
_RULES: dict[int, tuple[str, Any]] = {
    1: ("unexpected-completion", lambda r, ck: "completion matches no outstanding request"),
    2: (
        "completion-attr",
        lambda r, ck: (
            f"TC {r.a} attr {r.b:#x}, the request had TC {r.request.tc} "
            f"attr {r.request.attr:#x} ({describe(_request(r))})"
        ),
    ),
    3: (
        "completion-status",
        lambda r, ck: f"status {r.a} is not a legal answer to {describe(_request(r))}",
    ),
    4: ("completion-data", lambda r, ck: "unsuccessful completion with a payload"),
    5: ("completion-data", lambda r, ck: "successful read completion without data"),
    6: ("mps", lambda r, ck: f"completion payload {r.a} B > MPS {ck.mps}"),
    7: ("length", lambda r, ck: f"payload {r.a} B but length field {r.b} DW"),
    8: (
        "byte-count",
        lambda r, ck: f"byte count {r.a}, {r.b} B of {describe(_request(r))} remain",
    ),
    9: ("lower-address", lambda r, ck: f"lower address {r.a:#x}, next byte is at {r.b:#x}"),
    10: ("length", lambda r, ck: "completion carries no requested byte"),
    11: (
        "rcb",
        lambda r, ck: (
            f"partial completion ends at {r.a:#x}, not on the {ck.rcb} B read completion boundary"
        ),
    ),
    12: (
        "length",
        lambda r, ck: f"final completion of {r.a} B at offset {r.b} needs {r.c} DW",
    ),
    13: ("cfg-io-length", lambda r, ck: "configuration and I/O requests are 1 DW, last BE 0"),
    14: (
        "tag-width",
        lambda r, ck: f"tag {r.a} needs more than the requester's {r.b} tag bits",
    ),
    15: (
        "tag-in-use",
        lambda r, ck: f"tag {r.a} reused while {describe(_request(r))} is outstanding",
    ),
    16: ("mps", lambda r, ck: f"payload {r.a} B > MPS {ck.mps}"),
    17: ("mrrs", lambda r, ck: f"read request {r.a} B > MRRS {ck.mrrs}"),
    18: ("4k", lambda r, ck: f"request {r.a:#x}+{r.b} crosses a 4 KiB boundary"),
    19: ("address", lambda r, ck: "address bits [1:0] must be zero"),
    20: (
        "address-format",
        lambda r, ck: f"64-bit header for {r.a:#x}: below 4 GiB the 32-bit format is required",
    ),
    21: ("address-format", lambda r, ck: f"32-bit header for {r.a:#x}"),
    22: ("byte-enable", lambda r, ck: "1 DW request with last BE != 0"),
    23: ("byte-enable", lambda r, ck: "multi-DW request with a zero BE"),
    24: ("byte-enable", lambda r, ck: "byte enables of a multi-DW request must be contiguous"),
}


def header_of(tlp: Tlp, h: TlpHeader) -> TlpHeader:
    """Fill ``h`` with the fields of Python TLP ``tlp`` the checker reads."""
    fmt, kind = tlp.fmt_type.value
    h.fmt, h.type = fmt, kind
    h.address, h.length, h.tag = tlp.address, tlp.length, tlp.tag
    h.requester_id = int(tlp.requester_id)
    h.completer_id = int(tlp.completer_id)
    h.byte_count = tlp.byte_count
    h.tc, h.attr = int(tlp.tc), int(tlp.attr)
    h.first_be, h.last_be = tlp.first_be, tlp.last_be
    h.status, h.lower_address = int(tlp.status), tlp.lower_address
    return h


def tlp_of(h: TlpHeader) -> Tlp:
    """A Python TLP with the fields of request header ``h`` (to describe it)."""
    tlp = Tlp()
    tlp.fmt_type = TlpType((TlpFmt(h.fmt), h.type))
    tlp.requester_id = PcieId.from_int(h.requester_id)
    tlp.tag, tlp.length, tlp.address = h.tag, h.length, h.address
    tlp.first_be, tlp.last_be = h.first_be, h.last_be
    tlp.tc, tlp.attr = h.tc, h.attr
    return tlp


class _TagBits(dict):
    """``ProtocolChecker.tag_bits``, each width also given to the library."""

    def __init__(self, checker: CompiledChecker) -> None:
        super().__init__()
        self._ck = checker

    def __setitem__(self, rid: int, bits: int) -> None:
        super().__setitem__(rid, bits)
        self._ck.lib.dp_ck_set_tag_bits(self._ck.ck, int(rid), int(bits))


def _size(i: int) -> property:
    """The checker's size ``i`` (MPS, MRRS, RCB), kept here and given to the library."""

    def get(self: CompiledChecker) -> int:
        return self._sizes[i]

    def put(self: CompiledChecker, value: int) -> None:
        self._sizes[i] = value
        self.lib.dp_ck_set_sizes(self.ck, *self._sizes)

    return property(get, put)


class CompiledChecker(ProtocolChecker):
    """:class:`ProtocolChecker` with its request and completion rules and its table of
    outstanding requests in the library: the same rules, the same messages, the same
    results (``tests/unit/test_unit_checker.py`` runs both)."""

    def __init__(self, mps: int, mrrs: int, rcb: int = 64, mode: str = "raise") -> None:
        self.lib = library()
        self.ck = self.lib.dp_ck_new(mps, mrrs, rcb)
        self._sizes = [mps, mrrs, rcb]
        self._links: dict[str, int] = {}
        self._hdr = TlpHeader()
        self._list = (TlpHeader * 64)()
        super().__init__(mps, mrrs, rcb, mode)
        self.tag_bits = _TagBits(self)
        # told when what stops_at_first says changes (the violations expected)
        self.listeners: list[Callable[[], None]] = []
        self._expecting = WatchedList(self._expecting, self._changed)

    def _changed(self) -> None:
        for listener in self.listeners:
            listener()

    def __del__(self) -> None:
        ck, self.ck = getattr(self, "ck", None), None
        if ck is not None:
            self.lib.dp_ck_free(ck)

    # --- what the library keeps -----------------------------------------------------------
    mps = _size(0)
    mrrs = _size(1)
    rcb = _size(2)

    @property
    def default_tag_bits(self) -> int:
        return self._default_tag_bits

    @default_tag_bits.setter
    def default_tag_bits(self, bits: int) -> None:
        self._default_tag_bits = bits
        self.lib.dp_ck_set_tag_bits(self.ck, -1, bits)

    @property
    def tlp_count(self) -> int:  # type: ignore[override]
        return self.lib.dp_ck_tlps(self.ck)

    @tlp_count.setter
    def tlp_count(self, value: int) -> None:
        if value != self.tlp_count:
            raise AttributeError("the library counts the TLPs checked")

    @property
    def late_completions(self) -> int:  # type: ignore[override]
        return self.lib.dp_ck_late(self.ck)

    @late_completions.setter
    def late_completions(self, value: int) -> None:
        if value != self.late_completions:
            raise AttributeError("the library counts the late completions")

    def stops_at_first(self, link: str, direction: str) -> bool:
        """Whether a check on ``link`` travelling ``direction`` ends at its first broken
        rule: a checker that raises, where no violation is expected."""
        return self.mode == "raise" and not any(e.matches(link, direction) for e in self._expecting)

    def link_number(self, name: str) -> int:
        """The library's number of link ``name``."""
        number = self._links.get(name)
        if number is None:
            number = self._links[name] = len(self._links)
        return number

    def _described(self, fill) -> list[str]:
        n = fill(self._list, len(self._list))
        if n > len(self._list):
            self._list = (TlpHeader * n)()
            n = fill(self._list, n)
        return [describe(tlp_of(self._list[i])) for i in range(n)]

    def outstanding(self, link: str | None = None) -> list[str]:
        number = -1 if link is None else self._links.get(link)
        if number is None:
            return []
        return self._described(lambda out, n: self.lib.dp_ck_outstanding(self.ck, number, out, n))

    def requester_timeout(self, link: str, direction: str, requester_id: int, tag: int) -> None:
        if link in self._links:
            self.lib.dp_ck_timeout(
                self.ck, self._links[link], _DIRECTIONS[direction], int(requester_id), tag
            )

    def requester_gave_up(self, requester_id: int, tag: int) -> None:
        self.lib.dp_ck_gave_up(self.ck, int(requester_id), tag)

    def abandon_outstanding(self, link: str | None = None) -> list[str]:
        number = -1 if link is None else self._links.get(link)
        if number is None:
            return []
        # listed before they go: the list may need a second call with more room
        gone = self.outstanding(link)
        self.lib.dp_ck_abandon(self.ck, number, self._list, 0)
        return gone

    # --- the observer -----------------------------------------------------------------------
    def observe(self, link: str, direction: str, tlp: Tlp) -> None:
        """Check one TLP received on ``link`` travelling ``direction``."""
        if tlp.fmt_type in MESSAGES:
            self.lib.dp_ck_count(self.ck)
            self._message(link, direction, tlp)
            return
        stop = self.stops_at_first(link, direction)
        lib, ck = self.lib, self.ck
        n = lib.dp_ck_observe(
            ck,
            self.link_number(link),
            _DIRECTIONS[direction],
            ctypes.byref(header_of(tlp, self._hdr)),
            len(tlp.data),
            stop,
        )
        self._report(link, direction, tlp, n)

    def report_records(self, link: str, direction: str, tlp: Tlp) -> None:
        """Report what the library's last check (of ``tlp``, on ``link`` travelling
        ``direction``) found, as :meth:`observe` does."""
        self._report(link, direction, tlp, self.lib.dp_ck_records(self.ck))

    def _report(self, link: str, direction: str, tlp: Tlp, n: int) -> None:
        lib, ck = self.lib, self.ck
        for i in range(n):
            record = _Record.from_address(lib.dp_ck_record_at(ck, i))
            if record.code == _LATE:
                self.log.warning(
                    "late completion after the requester's timeout on %s: %s", link, describe(tlp)
                )
                continue
            rule, message = _RULES[record.code]
            self._fail(link, direction, rule, message(record, self), tlp)


def make_checker(mps: int, mrrs: int, rcb: int = 64, mode: str = "raise") -> ProtocolChecker:
    """The protocol checker of the data path ``$PEVB_DATAPATH`` names: the library's
    on the compiled path, the Python one otherwise."""
    kind = CompiledChecker if datapath() == COMPILED else ProtocolChecker
    return kind(mps, mrrs, rcb=rcb, mode=mode)
