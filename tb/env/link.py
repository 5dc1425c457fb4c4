"""Every PCIe link of the system, tapped (observers see each TLP as its receiver does), and
the :class:`ProtocolChecker` of the transaction-layer rules a DMA engine can break. See
docs/internals.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpAttr, TlpType

from ..models.intx import intx_of, message_name

UP = "up"  # towards the root complex
DOWN = "down"  # away from the root complex

Observer = Callable[[str, str, Tlp], None]

MEM_READS = frozenset({TlpType.MEM_READ, TlpType.MEM_READ_64})
MEM_WRITES = frozenset({TlpType.MEM_WRITE, TlpType.MEM_WRITE_64})
COMPLETIONS = frozenset({TlpType.CPL, TlpType.CPL_DATA})
_CFG_IO = {
    TlpType.CFG_READ_0,
    TlpType.CFG_WRITE_0,
    TlpType.CFG_READ_1,
    TlpType.CFG_WRITE_1,
    TlpType.IO_READ,
    TlpType.IO_WRITE,
}
MESSAGES = frozenset(t for t in TlpType if t.name.startswith("MSG_"))
MESSAGES_WITH_DATA = frozenset(t for t in MESSAGES if t.name.startswith("MSG_DATA"))
# request types whose address is 64 bits wide in the header (4 DW)
_ADDR64 = frozenset({TlpType.MEM_READ_64, TlpType.MEM_WRITE_64, TlpType.MEM_READ_LOCKED_64})
# the attributes a completion must copy from its request (IDO it may set itself)
_CPL_ATTR_MASK = int(TlpAttr.NS | TlpAttr.RO)
_FIRST_BE_TO_END = {0xF, 0xE, 0xC, 0x8}  # first DW of a multi-DW request
_LAST_BE_FROM_START = {0xF, 0x7, 0x3, 0x1}  # last DW of a multi-DW request


def request_key(link: str, direction: str, tlp: Tlp) -> tuple[str, str, int, int]:
    """The key of the request a TLP belongs to on ``link``: a request travelling
    ``direction``, or the request a completion travelling ``direction`` answers."""
    if tlp.fmt_type in COMPLETIONS:
        direction = UP if direction == DOWN else DOWN
    return (link, direction, int(tlp.requester_id), tlp.tag)


def ends_request(cpl: Tlp) -> bool:
    """Whether a completion is its request's last: unsuccessful, or carrying every byte
    still owed (byte count no more than its payload past the lower-address offset)."""
    return cpl.status != CplStatus.SC or cpl.byte_count <= cpl.length * 4 - (cpl.lower_address & 3)


def status_name(status: int) -> str:
    """A completion status by name; reserved values as reserved(n)."""
    try:
        return CplStatus(status).name
    except ValueError:
        return f"reserved({int(status)})"


def describe(tlp: Tlp) -> str:
    """A one-line summary of a TLP (type, IDs, tag, address or completion fields; a
    message's code by name)."""
    kind = getattr(tlp.fmt_type, "name", str(tlp.fmt_type))
    text = f"{kind} req={tlp.requester_id} tag={tlp.tag} len={tlp.length}DW"
    if tlp.fmt_type in MESSAGES:
        return f"{text} {message_name(tlp)}"
    if tlp.fmt_type in COMPLETIONS:
        text += (
            f" cpl={tlp.completer_id} status={status_name(tlp.status)} "
            f"bc={tlp.byte_count} la={tlp.lower_address:#x}{' EP' if tlp.ep else ''}"
        )
    else:
        text += f" addr={tlp.address:#x} be={tlp.first_be:x}/{tlp.last_be:x}"
    return text


class ProtocolViolation(AssertionError):
    """A TLP broke a PCIe transaction-layer rule."""


@dataclass
class Violation:
    """One broken rule: where (a link and direction, or the hard IP's user interface:
    link ``fpga``, direction ``rq``), when (simulated ns), which rule, what was wrong,
    the TLP."""

    link: str
    direction: str
    rule: str
    message: str
    tlp: str
    time_ns: float = 0.0

    def __str__(self) -> str:
        return (
            f"PCIe protocol violation on link {self.link} ({self.direction}) at "
            f"{self.time_ns:.1f} ns: [{self.rule}] {self.message}\n  TLP: {self.tlp}"
        )


@dataclass
class _Request:
    kind: str  # "mem_read", "cfg" or "other"
    next_addr: int  # byte address of the next byte a completion must carry
    remaining: int  # bytes still to complete
    tlp: str
    tc: int = 0
    attr: int = 0


class ExpectedViolations:
    """Violations a test provokes on purpose (a malformed completion injected on the
    FPGA's link): while open, a violation on ``link`` (any when None) travelling
    ``direction`` (any when None) is kept in :attr:`seen` and in the checker's
    ``expected``, instead of failing. Any other violation still fails as the checker's
    mode says. A context manager; :meth:`close` ends it."""

    def __init__(self, checker: ProtocolChecker, link: str | None, direction: str | None):
        self.checker = checker
        self.link = link
        self.direction = direction
        self.seen: list[Violation] = []
        self.abandoned: list[str] = []

    def matches(self, link: str, direction: str) -> bool:
        return self.link in (None, link) and self.direction in (None, direction)

    def close(self) -> None:
        """Stop expecting. What the provoked violations left outstanding on ``link`` (a
        request the checker still waits on, while the requester saw it end with an
        error when the malformed completion reached it) is given up on, as a completion
        timeout would: call it once the requester is idle."""
        if self in self.checker._expecting:
            self.checker._expecting.remove(self)
            if self.seen:
                self.abandoned = self.checker.abandon_outstanding(self.link)

    def __enter__(self) -> ExpectedViolations:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ProtocolChecker:
    """Transaction-layer rules for every link, from the TLPs the links' receivers see.

    ``mps`` and ``mrrs`` are the programmed Max Payload Size and Max Read Request Size in
    bytes; ``rcb`` the read completion boundary the completers split at (64 or 128).
    ``tag_bits`` maps a requester ID to the tag width its Device Control allows (5
    without Extended Tag Field Enable, 8 with it); other requesters get
    ``default_tag_bits``.
    """

    def __init__(self, mps: int, mrrs: int, rcb: int = 64, mode: str = "raise") -> None:
        if mode not in ("raise", "record"):
            raise ValueError("mode is 'raise' or 'record'")
        self.mps = mps
        self.mrrs = mrrs
        self.rcb = rcb
        self.mode = mode
        self.violations: list[Violation] = []
        # violations provoked on purpose, under expecting()
        self.expected: list[Violation] = []
        self._expecting: list[ExpectedViolations] = []
        self.tlp_count = 0
        self.late_completions = 0
        # (link, direction the request travelled, requester id, tag) -> request
        self._outstanding: dict[tuple[str, str, int, int], _Request] = {}
        self._timed_out: set[tuple[str, str, int, int]] = set()
        self.tag_bits: dict[int, int] = {}
        self.default_tag_bits = 8
        self.log = logging.getLogger("cocotb.tb.pcie_checker")
        # the simulated time a violation is stamped with (ns); the TB gives the simulator's
        self.clock: Callable[[], float] = lambda: 0.0

    # --- results ------------------------------------------------------------------------
    def outstanding(self, link: str | None = None) -> list[str]:
        """Requests still waiting for completions (optionally on one link)."""
        return [r.tlp for k, r in self._outstanding.items() if link is None or k[0] == link]

    def requester_timeout(self, link: str, direction: str, requester_id: int, tag: int) -> None:
        """The requester gave a request up (completion timeout): later completions for it
        are late, not violations, and its tag may be reused."""
        key = (link, direction, int(requester_id), tag)
        if self._outstanding.pop(key, None) is not None:
            self._timed_out.add(key)

    def requester_gave_up(self, requester_id: int, tag: int) -> None:
        """:meth:`requester_timeout` on every link and direction the request was seen
        (a peer's request crosses several)."""
        for key in [k for k in self._outstanding if k[2:] == (int(requester_id), tag)]:
            self._outstanding.pop(key)
            self._timed_out.add(key)

    def abandon_outstanding(self, link: str | None = None) -> list[str]:
        """Requests outstanding on ``link`` (any when None) are over: later completions
        for them are late, their tags free. The requests, described."""
        keys = [k for k in self._outstanding if link is None or k[0] == link]
        gone = [self._outstanding.pop(k).tlp for k in keys]
        self._timed_out.update(keys)
        return gone

    def expecting(self, link: str | None = None, direction: str | None = None):
        """Expect violations on ``link`` in ``direction`` (None: any) until the returned
        :class:`ExpectedViolations` is closed: they are kept, not failed."""
        e = ExpectedViolations(self, link, direction)
        self._expecting.append(e)
        return e

    def _fail(self, link: str, direction: str, rule: str, message: str, tlp: Tlp) -> None:
        self.report(link, direction, rule, message, describe(tlp))

    def report(self, link: str, direction: str, rule: str, message: str, what: str) -> None:
        """A broken rule seen outside the links' receivers (the hard IP's user interface:
        a request the RTL hands it), ``what`` describing the TLP: kept, expected or
        failed as a TLP on a link is."""
        v = Violation(link, direction, rule, message, what, self.clock())
        for e in self._expecting:
            if e.matches(link, direction):
                e.seen.append(v)
                self.expected.append(v)
                self.log.info("expected: %s", v)
                return
        self.violations.append(v)
        self.log.error("%s", v)
        if self.mode == "raise":
            raise ProtocolViolation(str(v))

    # --- the observer -------------------------------------------------------------------
    def observe(self, link: str, direction: str, tlp: Tlp) -> None:
        """Check one TLP received on ``link`` travelling ``direction``."""
        self.tlp_count += 1
        ft = tlp.fmt_type
        if ft in COMPLETIONS:
            self._completion(link, direction, tlp)
            return
        if ft in MESSAGES:
            self._message(link, direction, tlp)
            return
        if ft in MEM_WRITES or ft in MEM_READS:
            self._memory_request(link, direction, tlp)
        elif ft in _CFG_IO:
            if tlp.length != 1 or tlp.last_be != 0:
                self._fail(
                    link,
                    direction,
                    "cfg-io-length",
                    "configuration and I/O requests are 1 DW, last BE 0",
                    tlp,
                )
        else:
            return  # messages and the rest: no request/completion bookkeeping
        if tlp.is_nonposted():
            bits = self.tag_bits.get(int(tlp.requester_id), self.default_tag_bits)
            if tlp.tag >> bits:
                self._fail(
                    link,
                    direction,
                    "tag-width",
                    f"tag {tlp.tag} needs more than the requester's {bits} tag bits",
                    tlp,
                )
            key = request_key(link, direction, tlp)
            if key in self._outstanding:
                self._fail(
                    link,
                    direction,
                    "tag-in-use",
                    f"tag {tlp.tag} reused while {self._outstanding[key].tlp} is outstanding",
                    tlp,
                )
            self._timed_out.discard(key)
            tc, attr = int(tlp.tc), int(tlp.attr)
            if ft in MEM_READS:
                if tlp.length == 1 and tlp.first_be == 0:
                    # a zero-length read (a flush): one byte's completion, its lower
                    # address the DWORD's (PCIe Base: 1st DW BE 0000 -> [1:0] = 00b)
                    first, count = tlp.address & ~3, 1
                else:
                    first, count = tlp.address + tlp.get_first_be_offset(), tlp.get_be_byte_count()
                self._outstanding[key] = _Request("mem_read", first, count, describe(tlp), tc, attr)
            else:
                kind = "cfg" if ft.name.startswith("CFG_") else "other"
                self._outstanding[key] = _Request(kind, 0, 4, describe(tlp), tc, attr)

    def _message(self, link: str, direction: str, tlp: Tlp) -> None:
        intx = intx_of(tlp)
        if intx is not None:
            # Assert_INTx / Deassert_INTx (PCIe Base 2.2.8.1): upstream only, TC0, no
            # attributes (a duplicate is legal and changes nothing)
            if direction != UP:
                self._fail(
                    link,
                    direction,
                    "intx-direction",
                    "INTx messages travel upstream only, towards the root complex",
                    tlp,
                )
            if tlp.tc or tlp.attr:
                self._fail(
                    link, direction, "intx-tc", "an INTx message has TC0 and no attributes", tlp
                )
        if tlp.fmt_type in MESSAGES_WITH_DATA:
            if len(tlp.data) != tlp.length * 4:
                self._fail(
                    link,
                    direction,
                    "length",
                    f"payload {len(tlp.data)} B but length field {tlp.length} DW",
                    tlp,
                )
            if tlp.length * 4 > self.mps:
                self._fail(link, direction, "mps", f"message payload {tlp.length * 4} B > MPS", tlp)
        elif tlp.length or tlp.data:
            self._fail(
                link, direction, "message-length", "a message without data has length 0", tlp
            )

    def _memory_request(self, link: str, direction: str, tlp: Tlp) -> None:
        nbytes = tlp.length * 4
        if tlp.fmt_type in MEM_WRITES:
            if len(tlp.data) != nbytes:
                self._fail(
                    link,
                    direction,
                    "length",
                    f"payload {len(tlp.data)} B but length field {tlp.length} DW",
                    tlp,
                )
            if nbytes > self.mps:
                self._fail(link, direction, "mps", f"payload {nbytes} B > MPS {self.mps}", tlp)
        elif nbytes > self.mrrs:
            self._fail(link, direction, "mrrs", f"read request {nbytes} B > MRRS {self.mrrs}", tlp)
        if (tlp.address & 0xFFF) + nbytes > 0x1000:
            self._fail(
                link,
                direction,
                "4k",
                f"request {tlp.address:#x}+{nbytes} crosses a 4 KiB boundary",
                tlp,
            )
        if tlp.address & 3:
            self._fail(link, direction, "address", "address bits [1:0] must be zero", tlp)
        wide = tlp.fmt_type in _ADDR64
        if wide and tlp.address >> 32 == 0:
            self._fail(
                link,
                direction,
                "address-format",
                f"64-bit header for {tlp.address:#x}: below 4 GiB the 32-bit format is required",
                tlp,
            )
        elif not wide and tlp.address >> 32:
            self._fail(
                link, direction, "address-format", f"32-bit header for {tlp.address:#x}", tlp
            )
        self._byte_enables(link, direction, tlp)

    def _byte_enables(self, link: str, direction: str, tlp: Tlp) -> None:
        first, last = tlp.first_be, tlp.last_be
        if tlp.length == 1:
            if last != 0:
                self._fail(link, direction, "byte-enable", "1 DW request with last BE != 0", tlp)
            return  # first BE 0: a zero-length read or write, which PCIe allows
        if first == 0 or last == 0:
            self._fail(link, direction, "byte-enable", "multi-DW request with a zero BE", tlp)
            return
        if tlp.length == 2 and tlp.address & 7 == 0:
            return  # QW-aligned 2 DW requests may use non-contiguous byte enables
        if first not in _FIRST_BE_TO_END or last not in _LAST_BE_FROM_START:
            self._fail(
                link,
                direction,
                "byte-enable",
                "byte enables of a multi-DW request must be contiguous",
                tlp,
            )

    def _completion(self, link: str, direction: str, tlp: Tlp) -> None:
        key = request_key(link, direction, tlp)
        req = self._outstanding.get(key)
        if req is None:
            if key in self._timed_out:
                self.late_completions += 1
                self.log.warning(
                    "late completion after the requester's timeout on %s: %s", link, describe(tlp)
                )
                return
            self._fail(
                link,
                direction,
                "unexpected-completion",
                "completion matches no outstanding request",
                tlp,
            )
            return
        if int(tlp.tc) != req.tc or int(tlp.attr) & _CPL_ATTR_MASK != req.attr & _CPL_ATTR_MASK:
            self._fail(
                link,
                direction,
                "completion-attr",
                f"TC {int(tlp.tc)} attr {int(tlp.attr):#x}, the request had TC {req.tc} "
                f"attr {req.attr:#x} ({req.tlp})",
                tlp,
            )
        status = int(tlp.status)
        if status not in (CplStatus.SC, CplStatus.UR, CplStatus.CRS, CplStatus.CA) or (
            status == CplStatus.CRS and req.kind != "cfg"
        ):
            self._fail(
                link,
                direction,
                "completion-status",
                f"status {status} is not a legal answer to {req.tlp}",
                tlp,
            )
        if tlp.status != CplStatus.SC:
            if tlp.fmt_type != TlpType.CPL or tlp.length != 0:
                self._fail(
                    link,
                    direction,
                    "completion-data",
                    "unsuccessful completion with a payload",
                    tlp,
                )
            del self._outstanding[key]
            return
        if req.kind != "mem_read":
            del self._outstanding[key]
            return
        if tlp.fmt_type != TlpType.CPL_DATA:
            self._fail(
                link, direction, "completion-data", "successful read completion without data", tlp
            )
            del self._outstanding[key]
            return
        payload = tlp.length * 4
        if payload > self.mps:
            self._fail(
                link, direction, "mps", f"completion payload {payload} B > MPS {self.mps}", tlp
            )
        if len(tlp.data) != payload:
            self._fail(
                link,
                direction,
                "length",
                f"payload {len(tlp.data)} B but length field {tlp.length} DW",
                tlp,
            )
        if tlp.byte_count != req.remaining:
            self._fail(
                link,
                direction,
                "byte-count",
                f"byte count {tlp.byte_count}, {req.remaining} B of {req.tlp} remain",
                tlp,
            )
        if tlp.lower_address != req.next_addr & 0x7F:
            self._fail(
                link,
                direction,
                "lower-address",
                f"lower address {tlp.lower_address:#x}, next byte is at {req.next_addr:#x}",
                tlp,
            )
        offset = req.next_addr & 3
        carried = min(req.remaining, payload - offset)
        if carried <= 0:
            self._fail(link, direction, "length", "completion carries no requested byte", tlp)
            del self._outstanding[key]
            return
        if carried < req.remaining:
            end = req.next_addr + carried
            if end % self.rcb:
                self._fail(
                    link,
                    direction,
                    "rcb",
                    f"partial completion ends at {end:#x}, "
                    f"not on the {self.rcb} B read completion boundary",
                    tlp,
                )
        elif (offset + carried + 3) // 4 != tlp.length:
            self._fail(
                link,
                direction,
                "length",
                f"final completion of {carried} B at offset "
                f"{offset} needs {(offset + carried + 3) // 4} DW",
                tlp,
            )
        req.remaining -= carried
        req.next_addr += carried
        if req.remaining <= 0:
            del self._outstanding[key]


@dataclass
class Link:
    """One link: its name and the two ports (``upper`` faces the root complex)."""

    name: str
    upper: object
    lower: object


class LinkTaps:
    """The observers of every tapped link; add one with :meth:`add_observer`.

    Each tapped link end keeps, per TLP type, the observers that want that type there
    (in the order they were added), so a TLP costs a call only to those: what a TLP no
    observer wants needs of the receiving end is nothing (the compiled data path's
    native TLPs can pass it without Python)."""

    def __init__(self) -> None:
        self.links: dict[str, Link] = {}
        self.observers: list[Observer] = []
        self.passive: list[Observer] = []  # those that only look (add_observer)
        self._wants: list[tuple[Observer, frozenset | None, frozenset | None, frozenset]] = []
        # (link, direction) -> TLP type -> the observers that want it there
        self._calls: dict[tuple[str, str], dict[TlpType, list[Observer]]] = {}
        # the receive handlers the taps put in front of a port's own: handler -> inner
        self.wrappers: dict[Any, Any] = {}
        # called after the observers change
        self.listeners: list[Callable[[], None]] = []

    def add_observer(
        self,
        observer: Observer,
        *,
        links: tuple[str, ...] | None = None,
        directions: tuple[str, ...] | None = None,
        types: frozenset[TlpType] | None = None,
        passive: bool = False,
    ) -> None:
        """Call ``observer(link, direction, tlp)`` for every TLP on every tapped link, or
        only on ``links``, travelling ``directions``, of ``types`` (None: any).

        A ``passive`` observer only looks: it neither changes the TLP nor raises for it.
        The compiled data path then keeps the TLPs it moves on its own path there and
        shows the observer each from its trace ring as the hop takes it (at the same
        time, in the same order among the observers), where another observer would
        take the hop to Python."""
        self.observers.append(observer)
        if passive:
            self.passive.append(observer)
        self._wants.append(
            (
                observer,
                None if links is None else frozenset(links),
                None if directions is None else frozenset(directions),
                frozenset(TlpType) if types is None else frozenset(types),
            )
        )
        self._replan()

    def remove_observer(self, observer: Observer) -> None:
        """Stop calling ``observer``."""
        self.observers.remove(observer)
        if observer in self.passive:
            self.passive.remove(observer)
        self._wants = [w for w in self._wants if w[0] is not observer]
        self._replan()

    def observers_of(self, link: str, direction: str, kind: TlpType) -> list[Observer]:
        """The observers that want TLPs of ``kind`` crossing ``link`` going ``direction``."""
        return list(self._calls[(link, direction)][kind])

    def _replan(self) -> None:
        for key in self._calls:
            self._plan(*key)
        for listener in self.listeners:
            listener()

    def wanted(self, link: str, direction: str, kind: TlpType) -> bool:
        """Whether an observer wants TLPs of ``kind`` crossing ``link`` going ``direction``."""
        return bool(self._calls[(link, direction)][kind])

    def _plan(self, name: str, direction: str) -> None:
        calls = self._calls.setdefault((name, direction), {})
        for kind in TlpType:
            calls[kind] = [
                observer
                for observer, links, directions, types in self._wants
                if (links is None or name in links)
                and (directions is None or direction in directions)
                and kind in types
            ]

    def tap(self, name: str, lower_port, upper_port=None) -> Link:
        """Tap the link whose lower end (device side) is ``lower_port``."""
        upper_port = upper_port if upper_port is not None else lower_port.other
        if upper_port is None:
            raise ValueError(f"link {name}: port is not connected")
        link = Link(name, upper_port, lower_port)
        self.links[name] = link
        self._wrap(lower_port, name, DOWN)
        self._wrap(upper_port, name, UP)
        return link

    def _wrap(self, port, name: str, direction: str) -> None:
        inner = port.rx_handler
        if inner is None:
            raise ValueError(f"link {name}: port has no receive handler")
        self._plan(name, direction)
        calls = self._calls[(name, direction)]

        async def receive(tlp: Tlp) -> None:
            for observe in calls[tlp.fmt_type]:
                observe(name, direction, tlp)
            await inner(tlp)

        port.rx_handler = receive
        self.wrappers[receive] = inner
