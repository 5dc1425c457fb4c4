"""Fault injection on the FPGA's link. Downstream, :class:`FaultRule` kinds ``ur``,
``ca``, ``poison``, ``drop``, ``split``, ``latency``, ``corrupt`` and ``hold`` applied by
the :class:`FaultInjector` to the completions of the FPGA's reads, by target; and
malformed completions (``bad_byte_count``, ``bad_lower_address``, ``bad_length``,
``wrong_requester``). Upstream, :class:`UpRule` kinds applied by the
:class:`UpstreamFaultInjector` to what the FPGA sends: its posted writes (C2H data, MSI;
``drop``, ``poison``) and its completions to the host's register reads (``ur``, ``ca``,
``drop``). See docs/internals.md.
"""

from __future__ import annotations

import collections
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import cocotb
from cocotb import simulator
from cocotb.triggers import Event, Timer
from cocotb.utils import get_sim_time
from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpType

from driver_model.regs import PcieErr

from ..models.native import WatchedList
from .link import COMPLETIONS, MEM_READS, MEM_WRITES, UP, ends_request

# hold: the completions are kept until the test calls release_held() (a completion that
# arrives after its request timed out, or after the function was reset)
# malformed completions: the byte count, the lower address or the length off by one DWORD
# (the hard IP's checks catch them), or a completion for another requester's request
MALFORMED_KINDS = ("bad_byte_count", "bad_lower_address", "bad_length", "wrong_requester")
FAULT_KINDS = (
    "ur",
    "ca",
    "poison",
    "drop",
    "split",
    "latency",
    "corrupt",
    "hold",
    *MALFORMED_KINDS,
)
# the engine's error bits (H2C read_error, descr_error) for each completion fault
FAULT_STATUS = {
    "ur": PcieErr.UNSUPPORTED_REQUEST,
    "ca": PcieErr.COMPLETER_ABORT,
    "poison": PcieErr.POISONED,
    "drop": PcieErr.UNEXPECTED_COMPLETION,  # the hard IP's completion timeout
}


class _Firing:
    """What both kinds of rule share: they apply to ``target`` ("any" matches all), skip
    the first ``skip`` matches, then fire ``count`` times (0: always), counting both."""

    target: str
    skip: int
    count: int
    seen: int
    fired: int

    def take(self, target: str) -> bool:
        """Whether this rule fires on the next matching request or TLP to ``target``."""
        if self.target not in ("any", target):
            return False
        self.seen += 1
        if self.seen <= self.skip or (self.count and self.fired >= self.count):
            return False
        self.fired += 1
        return True


@dataclass
class FaultRule(_Firing):
    """Fault ``kind`` on reads to ``target`` ("host", "gpu", a named range, or "any")."""

    kind: str
    target: str = "any"
    skip: int = 0
    count: int = 1
    max_delay_ns: float = 2000.0
    rcb: int = 64
    seen: int = 0
    fired: int = 0

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; choose one of {FAULT_KINDS}")


class Stall:
    """A link direction that stops delivering for a while (credit starvation: what it
    holds keeps its flow-control credits until delivered, so the sender runs out and
    blocks). Delivers in order; ``start(ns)`` stalls from now for ``ns``."""

    def __init__(self, deliver: Callable[[Tlp], Awaitable[None]]) -> None:
        self._deliver = deliver
        self.until_ns = 0.0
        self.stalls = 0
        self._queue: collections.deque[Tlp] = collections.deque()
        self._kick = Event()
        # told when it starts a stall or its queue changes (the compiled data path's
        # copy of whether it is idle)
        self.listeners: list[Callable[[], None]] = []
        cocotb.start_soon(self._run())

    def _changed(self) -> None:
        for listener in self.listeners:
            listener()

    def start(self, duration_ns: float) -> None:
        """Deliver nothing for ``duration_ns`` from now."""
        self.until_ns = max(self.until_ns, get_sim_time("ns") + duration_ns)
        self.stalls += 1
        self._changed()

    def idle(self) -> bool:
        """Whether a TLP pushed now is delivered at once."""
        return not self._queue and get_sim_time("ns") >= self.until_ns

    async def push(self, tlp: Tlp) -> None:
        if self._queue or get_sim_time("ns") < self.until_ns:
            self._queue.append(tlp)
            self._kick.set()
            self._changed()
            return
        await self._deliver(tlp)

    async def _run(self) -> None:
        while True:
            await self._kick.wait()
            self._kick.clear()
            while self._queue:
                wait = self.until_ns - get_sim_time("ns")
                if wait > 0:
                    await Timer(max(1, round(wait)), "ns")
                    continue
                tlp = self._queue.popleft()
                self._changed()
                await self._deliver(tlp)


@dataclass
class Injection:
    """One fault applied: when, which kind, which request."""

    time_ns: float
    kind: str
    target: str
    tag: int
    address: int
    nbytes: int


@dataclass
class _Req:
    address: int
    nbytes: int
    target: str
    rule: FaultRule | None = None
    started: bool = False
    last_release_ns: float = 0.0
    number: int = 0  # its number in the library's read log (keep_reads_in)


class _Gate:
    """What the compiled data path keeps a copy of for a fault injector in front of a
    port: ``listeners`` are told whenever what :meth:`idle` depends on changes (its
    rules, a stall started, the stall's queue); :meth:`holding` and :meth:`until_steps`
    are the copy's terms."""

    listeners: list[Callable[[], None]]
    stall: Stall
    _rules: WatchedList

    @property
    def rules(self) -> list:
        """The rules armed (a list that tells the listeners of each change)."""
        return self._rules

    @rules.setter
    def rules(self, rules: Any) -> None:
        self._rules = WatchedList(rules, self._changed)
        self._changed()

    def _changed(self) -> None:
        for listener in self.listeners:
            listener()

    def idle(self) -> bool:
        """Whether a TLP now passes through untouched: no rule armed, no stall."""
        return not self.rules and self.stall.idle()

    def holding(self) -> bool:
        """Whether a TLP is not let through untouched whatever the time: a rule armed,
        or TLPs the stall holds."""
        return bool(self.rules) or bool(self.stall._queue)

    def until_steps(self) -> int:
        """A step from which the stall started last is over for certain (its end in
        simulator steps, rounded up past any doubt); before it :meth:`idle` decides."""
        per_ns = 10 ** (-9 - simulator.get_precision())
        return int(self.stall.until_ns * per_ns) + 1


class FaultInjector(_Gate):
    """Faults on the completions delivered to one port (the FPGA's)."""

    def __init__(self, port, link: str, seed: int = 1) -> None:
        self.listeners = []
        self.link = link
        self.rules = []
        self.injected: list[Injection] = []
        self.ranges: list[tuple[int, int, str]] = []
        self.rng = random.Random(seed)
        self._reqs: dict[int, _Req] = {}
        self._log: Any = None  # the library's read log, when the reads are kept there
        self._deliver: Callable[[Tlp], Awaitable[None]] = port.rx_handler
        self._reorder: list[tuple[int, Tlp]] = []
        self._reorder_kick = Event()
        self.held: list[Tlp] = []
        # credit starvation of the FPGA's receive side: stall.start(ns)
        self.stall = Stall(self._receive)
        self.stall.listeners.append(self._changed)
        port.rx_handler = self.stall.push
        cocotb.start_soon(self._run_reorder())

    # --- configuration ------------------------------------------------------------------
    def add(self, rule: FaultRule) -> FaultRule:
        """Arm a rule; returns it (its ``fired`` count tells whether it hit)."""
        self.rules.append(rule)
        return rule

    def clear(self) -> None:
        """Disarm every rule (completions already held are still delivered)."""
        self.rules.clear()

    def name_range(self, base: int, size: int, name: str) -> None:
        """Requests into ``[base, base+size)`` target ``name`` (newest naming wins)."""
        if self._log is not None:
            # a read already made keeps the target it had when it was made
            for tag in self._log.tags():
                self._req(tag)
        self.ranges.insert(0, (base, size, name))

    def target_of(self, address: int) -> str:
        for base, size, name in self.ranges:
            if base <= address < base + size:
                return name
        return "host"

    # --- the link tap side: requests the FPGA sends ---------------------------------------
    @property
    def wants(self) -> dict:
        """What :meth:`observe` looks at, as :meth:`LinkTaps.add_observer` takes it."""
        return {"links": (self.link,), "directions": (UP,), "types": MEM_READS}

    def observe(self, link: str, direction: str, tlp: Tlp) -> None:
        """Link observer: remember the FPGA's read requests by tag."""
        if link != self.link or direction != UP or tlp.fmt_type not in MEM_READS:
            return
        addr = tlp.address + tlp.get_first_be_offset()
        nbytes = tlp.get_be_byte_count()
        number = self._log.put(tlp.tag, addr, nbytes) if self._log is not None else 0
        self._reqs[tlp.tag] = _Req(addr, nbytes, self.target_of(addr), number=number)

    def keep_reads_in(self, log: Any) -> None:
        """Keep the read requests in ``log`` from now on (a
        :class:`tb.models.native.ReadLog`: the compiled data path's library records
        there the reads it moves past this injector's tap itself, so that Python need
        not see them); those already known move there."""
        for tag, req in self._reqs.items():
            req.number = log.put(tag, req.address, req.nbytes)
        self._log = log

    def _req(self, tag: int) -> _Req | None:
        """The read request under ``tag``: the one observed last, or None."""
        if self._log is None:
            return self._reqs.get(tag)
        got = self._log.get(tag)
        if got is None:
            self._reqs.pop(tag, None)
            return None
        number, address, nbytes, started = got
        req = self._reqs.get(tag)
        if req is None or req.number != number:  # recorded by the library
            req = self._reqs[tag] = _Req(address, nbytes, self.target_of(address), number=number)
        req.started = req.started or started  # (its completions the library took)
        return req

    def _done(self, tag: int) -> None:
        """The request under ``tag`` has ended."""
        self._reqs.pop(tag, None)
        if self._log is not None:
            self._log.drop(tag)

    def forget(self, requester_id: int, tag: int) -> None:
        """The hard IP timed the request out: drop what is known of it."""
        self._done(tag)

    # --- the receive side: completions to the FPGA -----------------------------------------
    async def _receive(self, tlp: Tlp) -> None:
        req = self._req(tlp.tag) if tlp.fmt_type in COMPLETIONS else None
        if req is None:
            await self._deliver(tlp)
            return
        if not req.started:
            req.started = True
            for rule in self.rules:
                if rule.take(req.target):
                    req.rule = rule
                    self.injected.append(
                        Injection(
                            get_sim_time("ns"),
                            rule.kind,
                            req.target,
                            tlp.tag,
                            req.address,
                            req.nbytes,
                        )
                    )
                    break
        last = ends_request(tlp)
        if last:
            self._done(tlp.tag)
        kind = req.rule.kind if req.rule else None
        if kind is None:
            await self._deliver(tlp)
        elif kind in ("ur", "ca"):
            # the completer finishes the request, then the FPGA sees only the error
            if not last:
                tlp.release_fc()
                return
            tlp.fmt_type = TlpType.CPL
            tlp.status = CplStatus.UR if kind == "ur" else CplStatus.CA
            tlp.data = bytearray()
            tlp.length = 0
            await self._deliver(tlp)
        elif kind == "poison":
            tlp.ep = True
            req.rule = None  # the rest of the request passes untouched
            await self._deliver(tlp)
        elif kind == "drop":
            tlp.release_fc()
        elif kind == "hold":
            tlp.release_fc()  # the link carried it; the FPGA gets it later
            tlp.release_fc_cb = None
            self.held.append(tlp)
        elif kind == "corrupt":
            if tlp.data:
                first = tlp.lower_address & 3
                tlp.data[first] ^= 0xFF
                self.injected[-1].address = req.address  # the byte flipped
            req.rule = None
            await self._deliver(tlp)
        elif kind in MALFORMED_KINDS:
            req.rule = None  # one completion of the request is malformed
            await self._deliver(malform(tlp, kind))
        elif kind == "latency":
            at = max(
                get_sim_time("ns") + self.rng.randrange(int(req.rule.max_delay_ns) + 1),
                req.last_release_ns + 1,
            )
            req.last_release_ns = at
            cocotb.start_soon(self._deliver_at(at, tlp))
        else:  # split
            for piece in split_completion(tlp, req.rule.rcb):
                self._reorder.append((tlp.tag, piece))
            self._reorder_kick.set()

    async def release_held(self) -> int:
        """Deliver the held completions now, in their order; how many there were."""
        held, self.held = self.held, []
        for tlp in held:
            await self._deliver(tlp)
        return len(held)

    async def _deliver_at(self, at_ns: float, tlp: Tlp) -> None:
        await Timer(max(round(at_ns - get_sim_time("ns")), 1), "ns")
        await self._deliver(tlp)

    async def _run_reorder(self) -> None:
        """Deliver split completions in a random order across tags (per tag in order)."""
        while True:
            await self._reorder_kick.wait()
            self._reorder_kick.clear()
            # let completions of other requests gather for a moment
            await Timer(200, "ns")
            while self._reorder:
                tags = list(dict.fromkeys(tag for tag, _ in self._reorder))
                tag = self.rng.choice(tags)
                i = next(k for k, (t, _) in enumerate(self._reorder) if t == tag)
                _, piece = self._reorder.pop(i)
                await self._deliver(piece)


def split_completion(tlp: Tlp, rcb: int) -> list[Tlp]:
    """Split a successful read completion at every ``rcb`` boundary (PCIe's rules: byte
    count is what remains, lower address is the next byte's)."""
    if tlp.fmt_type != TlpType.CPL_DATA or tlp.status != CplStatus.SC:
        return [tlp]
    la = tlp.lower_address & 0x7F
    first_dw = la & ~3
    carried = min(tlp.byte_count, tlp.length * 4 - (la & 3))
    end = la + carried
    pieces = []
    a = la
    while a < end:
        b = min(end, (a // rcb + 1) * rcb)
        p = Tlp(tlp)
        p.release_fc_cb = None
        p.lower_address = a & 0x7F
        p.byte_count = tlp.byte_count - (a - la)
        lo = (a & ~3) - first_dw
        hi = ((b + 3) & ~3) - first_dw
        p.data = bytearray(tlp.data[lo:hi])
        p.length = (hi - lo) // 4
        pieces.append(p)
        a = b
    pieces[-1].release_fc_cb = tlp.release_fc_cb
    return pieces


def malform(tlp: Tlp, kind: str) -> Tlp:
    """``tlp`` with one field wrong, as a broken completer would send it."""
    if kind == "bad_byte_count":
        tlp.byte_count = (tlp.byte_count + 4) & 0xFFF
    elif kind == "bad_lower_address":
        tlp.lower_address = (tlp.lower_address + 4) & 0x7F
    elif kind == "bad_length":
        if tlp.length > 1:  # one DWORD short: the data ends before the byte count says
            tlp.data = tlp.data[:-4]
            tlp.length -= 1
        else:
            tlp.data += bytes(4)
            tlp.length += 1
    elif kind == "wrong_requester":
        # the function number of a function the card does not have
        tlp.requester_id = tlp.requester_id._replace(function=7)
    return tlp


UP_KINDS = {"write": ("drop", "poison"), "completion": ("ur", "ca", "drop")}


@dataclass
class UpRule(_Firing):
    """Fault ``kind`` on what the FPGA sends upstream: ``tlp`` "write" (posted writes to
    ``target``: "host", "gpu", "msi" or "any") or "completion" (its completions to the
    host's register reads)."""

    kind: str
    tlp: str = "write"
    target: str = "any"
    skip: int = 0
    count: int = 1
    seen: int = 0
    fired: int = 0

    def __post_init__(self) -> None:
        if self.tlp not in UP_KINDS or self.kind not in UP_KINDS[self.tlp]:
            raise ValueError(f"unknown upstream fault {self.kind!r} on {self.tlp!r}: {UP_KINDS}")


class UpstreamFaultInjector(_Gate):
    """Faults on the TLPs the FPGA sends, at the far end of its link (``port``: the switch
    or root port side), before the taps see them."""

    def __init__(self, port, ranges: FaultInjector) -> None:
        self.listeners = []
        self.rules = []
        self.injected: list[Injection] = []
        self._names = ranges  # address ranges are named once, on the downstream injector
        self._deliver: Callable[[Tlp], Awaitable[None]] = port.rx_handler
        # credit starvation of what the FPGA sends: stall.start(ns)
        self.stall = Stall(self._receive)
        self.stall.listeners.append(self._changed)
        port.rx_handler = self.stall.push
        # what it puts in front of the port's handler, and that handler
        self.port, self.handler, self.inner = port, port.rx_handler, self._deliver

    def add(self, rule: UpRule) -> UpRule:
        """Arm a rule; returns it."""
        self.rules.append(rule)
        return rule

    def clear(self) -> None:
        """Disarm every rule."""
        self.rules.clear()

    async def _receive(self, tlp: Tlp) -> None:
        if tlp.fmt_type in MEM_WRITES:
            what, target = "write", self._names.target_of(tlp.address)
        elif tlp.fmt_type in COMPLETIONS:
            what, target = "completion", "host"
        else:
            await self._deliver(tlp)
            return
        rule = next((r for r in self.rules if r.tlp == what and r.take(target)), None)
        if rule is None:
            await self._deliver(tlp)
            return
        self.injected.append(
            Injection(
                get_sim_time("ns"),
                f"{what}:{rule.kind}",
                target,
                tlp.tag,
                # a write: the bytes it carries (its byte enables); a completion: its DWORDs
                tlp.address + tlp.get_first_be_offset() if what == "write" else tlp.lower_address,
                tlp.get_be_byte_count() if what == "write" else tlp.length * 4,
            )
        )
        if rule.kind == "drop":
            tlp.release_fc()
            return
        if rule.kind == "poison":
            tlp.ep = True
        else:  # the completer answers the register read with UR or CA
            tlp.fmt_type = TlpType.CPL
            tlp.status = CplStatus.UR if rule.kind == "ur" else CplStatus.CA
            tlp.data = bytearray()
            tlp.length = 0
            tlp.byte_count = 4
        await self._deliver(tlp)
