"""The compiled data path's protocol checker (tb/dp/checker.cpp through
tb/env/compiled_checker.py) against the Python one (tb/env/link.py), on random traffic:
good and broken requests and completions on three links both ways, split completions
with one field wrong, strays, timeouts and abandoned requests. After every step both
have the same violations (rule, message, TLP, link, direction), the same outstanding
requests in the same order, and the same counts."""

from __future__ import annotations

import random

import pytest
from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpAttr, TlpType
from cocotbext.pcie.core.utils import PcieId

from tb.env.compiled_checker import CompiledChecker
from tb.env.faults import split_completion
from tb.env.link import DOWN, UP, ProtocolChecker, ProtocolViolation

LINKS = ("fpga", "gpu", "switch")
IDS = (PcieId(3, 0, 0), PcieId(0, 0, 0), PcieId(4, 0, 0))


def _request(rng: random.Random) -> Tlp:
    t = Tlp()
    kind = rng.random()
    if kind < 0.1:
        t.fmt_type = rng.choice((TlpType.CFG_READ_0, TlpType.CFG_WRITE_0, TlpType.IO_READ))
        t.length = rng.choice((1, 1, 1, 2))
        t.first_be = 0xF
        t.last_be = rng.choice((0, 0, 0, 0xF))
        if t.fmt_type == TlpType.CFG_WRITE_0:
            t.set_data(bytes(4 * t.length))
    else:
        high = rng.random() < 0.2
        base = (rng.randrange(1 << 40) if high else rng.randrange(1 << 28)) & ~0xFFF
        addr = base + rng.choice((0, rng.randrange(4096), 4096 - rng.randrange(1, 300)))
        write = kind < 0.45
        nbytes = rng.choice((1, 4, 8, 64, 100, 128, 256, 300, 512, 1024))
        if write:
            t.fmt_type = TlpType.MEM_WRITE_64 if addr >> 32 else TlpType.MEM_WRITE
            t.set_addr_be_data(addr, bytes(nbytes))
        else:
            t.fmt_type = TlpType.MEM_READ_64 if addr >> 32 else TlpType.MEM_READ
            t.set_addr_be(addr, nbytes)
        r = rng.random()
        if r < 0.05:
            t.fmt_type = TlpType.MEM_WRITE_64 if write else TlpType.MEM_READ_64  # format
        elif r < 0.1:
            t.first_be = rng.randrange(16)
        elif r < 0.15:
            t.last_be = rng.randrange(16)
        elif r < 0.18 and write:
            t.data = t.data[:-4]
        elif r < 0.23:
            t.length, t.first_be = 1, 0  # a zero-length access
            if write:
                t.set_data(bytes(4))
        if rng.random() < 0.04:
            t.address |= rng.randrange(1, 4)  # bits the wire cannot carry
    t.requester_id = rng.choice(IDS)
    t.tag = rng.choice(
        (rng.randrange(4), rng.randrange(32), rng.randrange(256), rng.randrange(1024))
    )
    t.tc = rng.choice((0, 0, 0, 2))
    t.attr = rng.choice((TlpAttr(0), TlpAttr.RO, TlpAttr.NS, TlpAttr.IDO))
    return t


def _completions(rng: random.Random, req: Tlp) -> list[Tlp]:
    """The completions of ``req``, maybe split, maybe one with a field broken."""
    completer = PcieId(1, 0, 0)
    r = rng.random()
    if req.fmt_type in (TlpType.MEM_READ, TlpType.MEM_READ_64) and r < 0.8:
        if req.length == 1 and req.first_be == 0:
            first, count = req.address & ~3, 1
        else:
            first, count = req.address + req.get_first_be_offset(), req.get_be_byte_count()
        whole = Tlp.create_completion_data_for_tlp(req, completer)
        whole.lower_address = first & 0x7F
        whole.byte_count = count
        dws = ((first & 3) + count + 3) // 4
        whole.set_data(bytes(dws * 4))
        pieces = split_completion(whole, rng.choice((64, 128))) if count > 1 else [whole]
    elif r < 0.9:
        c = Tlp.create_completion_for_tlp(req, completer)
        c.status = rng.choice((CplStatus.SC, CplStatus.UR, CplStatus.CA, CplStatus.CRS, 3, 5))
        pieces = [c]
    else:
        c = Tlp.create_ur_completion_for_tlp(req, completer)
        if rng.random() < 0.5:
            c.set_data(bytes(4))
        pieces = [c]
    if rng.random() < 0.3:
        bad = rng.choice(pieces)
        field = rng.choice(("byte_count", "lower_address", "tc", "attr", "length", "data"))
        if field == "byte_count":
            bad.byte_count = max(1, bad.byte_count + rng.choice((-4, 4, 64)))
        elif field == "lower_address":
            bad.lower_address = (bad.lower_address + rng.choice((1, 4, 64))) & 0x7F
        elif field == "tc":
            bad.tc = 5
        elif field == "attr":
            bad.attr = TlpAttr.RO | TlpAttr.NS
        elif field == "length":
            bad.length = max(0, bad.length + rng.choice((-1, 1, 64)))
        else:
            bad.data = bad.data + bytes(4)
    if rng.random() < 0.1:
        pieces = pieces[1:] + pieces[:1]  # out of order
    return pieces


def _state(ch: ProtocolChecker) -> tuple:
    return (
        [(v.link, v.direction, v.rule, v.message, v.tlp) for v in ch.violations],
        [(v.link, v.direction, v.rule, v.message, v.tlp) for v in ch.expected],
        [ch.outstanding(link) for link in LINKS],
        ch.outstanding(),
        ch.tlp_count,
        ch.late_completions,
    )


def _run(seed: int, mode: str, steps: int = 600) -> int:
    """Drive both checkers with the same random traffic; the steps compared."""
    rng = random.Random(seed)
    mps, mrrs = rng.choice(((128, 256), (256, 512), (512, 4096)))
    rcb = rng.choice((64, 128))
    py = ProtocolChecker(mps, mrrs, rcb, mode)
    dp = CompiledChecker(mps, mrrs, rcb, mode)
    for ch in (py, dp):
        ch.tag_bits[int(IDS[0])] = 5
    waiting: list[tuple[str, str, list[Tlp]]] = []
    expecting: list = []
    compared = 0
    for _ in range(steps):
        r = rng.random()
        if r < 0.35 or not waiting:
            link, direction = rng.choice(LINKS), rng.choice((UP, DOWN))
            req = _request(rng)
            if waiting and rng.random() < 0.1:  # a tag still in use
                link, back, cpls = rng.choice(waiting)
                direction = DOWN if back == UP else UP
                req.requester_id, req.tag = cpls[0].requester_id, cpls[0].tag
            what = [(link, direction, req)]
            if req.is_nonposted():
                back = DOWN if direction == UP else UP
                waiting.append((link, back, _completions(rng, req)))
        elif r < 0.85:
            i = rng.randrange(len(waiting))
            link, direction, cpls = waiting[i]
            what = [(link, direction, cpls.pop(0))]
            if not cpls:
                waiting.pop(i)
        elif r < 0.88:
            req = _request(rng)
            stray = Tlp.create_completion_data_for_tlp(req, PcieId(1, 0, 0))
            stray.set_data(bytes(4))
            what = [(rng.choice(LINKS), rng.choice((UP, DOWN)), stray)]
        elif r < 0.92 and waiting:
            link, direction, cpls = waiting.pop(rng.randrange(len(waiting)))
            rid, tag = int(cpls[0].requester_id), cpls[0].tag
            req_dir = DOWN if direction == UP else UP
            for ch in (py, dp):
                ch.requester_timeout(link, req_dir, rid, tag)
            what = [(link, direction, c) for c in cpls[: rng.randrange(2)]]
        elif r < 0.94 and waiting:
            link, direction, cpls = waiting.pop(rng.randrange(len(waiting)))
            for ch in (py, dp):
                ch.requester_gave_up(int(cpls[0].requester_id), cpls[0].tag)
            what = []
        elif r < 0.96:
            link = rng.choice((None, *LINKS))
            assert py.abandon_outstanding(link) == dp.abandon_outstanding(link)
            what = []
        elif r < 0.98 and not expecting:
            link = rng.choice((None, *LINKS))
            direction = rng.choice((None, UP, DOWN))
            expecting = [py.expecting(link, direction), dp.expecting(link, direction)]
            what = []
        else:
            if expecting:
                for e in expecting:
                    e.close()
                assert expecting[0].abandoned == expecting[1].abandoned
                expecting = []
            what = []
        for link, direction, tlp in what:
            raised = []
            for ch in (py, dp):
                try:
                    ch.observe(link, direction, Tlp(tlp))
                    raised.append(None)
                except ProtocolViolation as e:
                    raised.append(str(e))
            assert raised[0] == raised[1], (seed, link, direction, tlp)
            assert _state(py) == _state(dp), (seed, link, direction, tlp)
            compared += 1
    return compared


@pytest.mark.parametrize("mode", ["record", "raise"])
@pytest.mark.parametrize("seed", range(12))
def test_compiled_checker_equals_the_python_checker(seed: int, mode: str) -> None:
    assert _run(seed, mode) > 300


def test_the_comparison_sees_a_difference() -> None:
    """The comparison is not blind: a checker whose MPS differs from the other's by
    the smallest step parts from it on the same traffic."""
    py = ProtocolChecker(256, 512, 64, "record")
    dp = CompiledChecker(256, 512, 64, "record")
    dp.mps = 252
    t = Tlp()
    t.fmt_type = TlpType.MEM_WRITE
    t.requester_id = IDS[0]
    t.set_addr_be_data(0x1000, bytes(256))
    for ch in (py, dp):
        ch.observe("fpga", UP, t)
    assert _state(py) != _state(dp)
