"""The hard IP's requester side in the compiled data path (tb/dp/hip.cpp) against the
Python it stands in for: what ``PevbUspDevice.upstream_recv`` (tb/models/hardip.py, and
through it cocotbext-pcie's ``UltraScalePlusPcieDevice.upstream_recv``) does with a
completion, on random tables of active requests and random completions: the same
outcome (not the card's, queued for RC, dropped for want of buffer room), error code,
request-completed flag and lower address, and the same state after (active requests,
completion credits, the receive buffer's counts, the tags available, the data credits
each request has received), and the device's own table, which its views of the active
requests, the credits and the counters keep for the library on the live path, the same
as the library's after the same completions."""

from __future__ import annotations

import collections
import ctypes
import logging
import random
from types import SimpleNamespace

from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpAttr, TlpTc, TlpType
from cocotbext.pcie.core.utils import PcieId

from tb import dp
from tb.models import install
from tb.models.hardip import PevbUspDevice, _CreditsIn, _Requests
from tb.models.transactors import rc_fields

REQUESTS = [TlpType.MEM_READ, TlpType.MEM_READ_64, TlpType.IO_READ, TlpType.CFG_READ_0]
COMPLETIONS = [TlpType.CPL_DATA, TlpType.CPL, TlpType.CPL_LOCKED_DATA, TlpType.CPL_LOCKED]


class _Queue(list):
    def put_nowait(self, item) -> None:
        self.append(item)


def _device(rng: random.Random, functions: list[PcieId]) -> PevbUspDevice:
    """The hard-IP model's state a completion meets, without a simulator: a bare
    instance with its requester side's attributes."""
    dev = object.__new__(PevbUspDevice)
    dev._hip = dp.Hip()  # (the device's own table, which its views keep)
    dev.log = logging.getLogger("test.dp_hip")
    dev.link_state_listeners = []
    dev.link_down = False
    dev.functions = [
        SimpleNamespace(
            pcie_id=fid,
            pcie_cap=SimpleNamespace(extended_tag_field_enable=rng.random() < 0.7),
        )
        for fid in functions
    ]
    dev.active_request = _Requests(dev._hip, [None] * 256)
    dev._credits_in = _CreditsIn(dev._hip.credits_in)
    dev.cpld_credit_count = rng.randrange(0, 600)
    dev.cpld_credit_released = SimpleNamespace(set=lambda: None)
    dev.rx_buf_cplh_fc_limit = rng.choice([256, 8])
    dev.rx_buf_cpld_fc_limit = rng.choice([2048, 40])
    dev.rx_buf_cplh_fc_count = rng.randrange(dev.rx_buf_cplh_fc_limit + 1)
    dev.rx_buf_cpld_fc_count = rng.randrange(dev.rx_buf_cpld_fc_limit + 1)
    dev.rc_queue = _Queue()
    dev.local_error = _Queue()
    dev.tag_available_count = 0
    dev._bus_num = 0
    return dev


def _request(rng: random.Random, tag: int, rid: PcieId) -> Tlp:
    t = Tlp()
    t.fmt_type = rng.choice(REQUESTS)
    t.requester_id = rid
    t.tag = tag
    t.attr = TlpAttr(rng.randrange(8))
    t.tc = TlpTc(rng.randrange(8))
    t.address = rng.randrange(1 << 40) & ~3
    t.length = rng.randrange(1, 129)
    t.first_be = rng.randrange(16)
    t.last_be = 0 if t.length == 1 else rng.randrange(1, 16)
    return t


def _completion(rng: random.Random, dev: PevbUspDevice, functions: list[PcieId]) -> Tlp:
    c = Tlp()
    c.fmt_type = rng.choice(COMPLETIONS)
    c.tag = rng.randrange(256)
    req = dev.active_request[c.tag]
    pick = rng.random()
    if req is not None and pick < 0.8:  # the request's own fields, mostly
        c.requester_id, c.attr, c.tc = req.requester_id, req.attr, req.tc
        if rng.random() < 0.1:
            c.attr = TlpAttr(rng.randrange(8))
    else:
        c.requester_id = rng.choice([*functions, PcieId.from_int(rng.randrange(1 << 16))])
        c.attr, c.tc = TlpAttr(rng.randrange(8)), TlpTc(rng.randrange(8))
    c.status = rng.choice([CplStatus.SC] * 6 + [CplStatus.UR, CplStatus.CA])
    c.ep = rng.random() < 0.1
    # (a completion with data has at least a dword: a length field of 0 is 1024 on the wire)
    ndw = rng.randrange(1, 65) if c.fmt_type in (TlpType.CPL_DATA, TlpType.CPL_LOCKED_DATA) else 0
    c.data = bytearray(rng.getrandbits(8) for _ in range(4 * ndw))
    c.length = ndw
    owed = req.get_be_byte_count() if req is not None else rng.randrange(1, 4096)
    c.byte_count = rng.choice([owed, rng.randrange(1, 4097), max(1, 4 * ndw - 2)]) & 0xFFF
    start = (req.address + req.get_first_be_offset()) if req is not None else 0
    right = (start + owed - c.byte_count) & 0x7F
    c.lower_address = right if rng.random() < 0.85 else rng.randrange(128)
    c.release_fc = lambda: None
    return c


def _sync(hip: dp.Hip, dev: PevbUspDevice) -> None:
    """The library's table made the device's."""
    for tag, req in enumerate(dev.active_request):
        r = hip.request[tag]
        r.active = req is not None
        if req is not None:
            r.requester_id, r.attr, r.tc = int(req.requester_id), req.attr, req.tc
            r.mem_read = req.fmt_type in (TlpType.MEM_READ, TlpType.MEM_READ_64)
            r.first_be_offset = req.get_first_be_offset()
            r.be_byte_count = req.get_be_byte_count()
            r.address = req.address
        hip.credits_in[tag] = dev._credits_in.get(tag, 0)
    for name in (*_COUNTS, "rx_buf_cplh_fc_limit", "rx_buf_cpld_fc_limit"):
        setattr(hip, name, getattr(dev, name))
    hip.extended_tags = dev.functions[0].pcie_cap.extended_tag_field_enable
    hip.functions = len(dev.functions)
    for k, f in enumerate(dev.functions):
        hip.function_id[k] = int(f.pcie_id)


_COUNTS = (
    "cpld_credit_count",
    "rx_buf_cplh_fc_count",
    "rx_buf_cpld_fc_count",
    "tag_available_count",
)


def _state(x, hip: bool) -> tuple:
    """The requester side's state of the library's table (``hip``) or of the device."""
    counts = [getattr(x, name) for name in _COUNTS]
    if hip:
        active = [bool(x.request[t].active) for t in range(256)]
        credits = {t: x.credits_in[t] for t in range(256) if x.credits_in[t]}
    else:
        active = [r is not None for r in x.active_request]
        credits = {t: x._credits_in.get(t) for t in range(256) if x._credits_in.get(t)}
    return active, credits, counts


def _python(dev: PevbUspDevice, c: Tlp) -> tuple:
    """What the model does with ``c``: (outcome, error code, completed, lower address)."""
    queued, errors = len(dev.rc_queue), len(dev.local_error)
    coro = dev.upstream_recv(c)
    try:
        coro.send(None)
    except StopIteration:
        pass
    else:
        raise AssertionError("upstream_recv waited")
    if len(dev.rc_queue) > queued:
        t = dev.rc_queue[-1]
        return 1, int(t.error_code), int(bool(t.request_completed)), t.lower_address
    if len(dev.local_error) > errors:
        return 2, None, None, None
    return 0, None, None, None


def _in_library(lib, hip: dp.Hip, c: Tlp) -> tuple[dp.TlpHeader, dp.HipCpl]:
    """Completion ``c`` taken by the library's rules into table ``hip``: its header as
    the library read it, and what became of it."""
    raw = ctypes.create_string_buffer(bytes(c.pack_header()), 16)
    h = dp.TlpHeader()
    assert lib.dp_tlp_unpack(raw, ctypes.byref(h)) == 1
    out = dp.HipCpl()
    assert lib.dp_hip_completion(ctypes.byref(hip), ctypes.byref(h), len(c.data), out)
    return h, out


def test_completions_as_the_hard_ip_takes_them() -> None:
    install()
    lib = dp.library()
    rng = random.Random(3)
    outcomes: collections.Counter = collections.Counter()
    for _ in range(60):
        functions = [PcieId(rng.randrange(256), 0, k) for k in range(rng.randint(1, 3))]
        dev = _device(rng, functions)
        for tag in rng.sample(range(256), rng.randrange(1, 200)):
            dev.active_request[tag] = _request(rng, tag, rng.choice(functions))
            dev._credits_in[tag] = rng.randrange(4)
        hip = dp.Hip()
        _sync(hip, dev)
        for _ in range(80):
            c = _completion(rng, dev, functions)
            h, out = _in_library(lib, hip, c)
            want = _python(dev, c)
            got = (out.outcome, out.error_code, out.request_completed, out.lower_address)
            if want[0] != 1:
                got = (got[0], None, None, None)
            assert got == want, f"{c!r}"
            if want[0] == 1:  # the fields RC gives it: the library's, and the model's own
                fields = dp.RcFields()
                lib.dp_hip_rc_fields(ctypes.byref(h), out, fields)
                mine = [getattr(fields, n) for n, _ in dp.RcFields._fields_]
                theirs = rc_fields(dev.rc_queue[-1])
                assert mine == [getattr(theirs, n) for n, _ in dp.RcFields._fields_], repr(c)
            assert _state(hip, True) == _state(dev, False)
            # the device's views kept its own table as the library moved the library's
            assert _state(dev._hip, True) == _state(hip, True)
            outcomes[(want[0], want[1])] += 1
    # every outcome and error code was met
    assert {o for o, _ in outcomes} == {0, 1, 2}
    assert {e for o, e in outcomes if o == 1} == {0, 1, 2, 3, 4, 5, 6}, outcomes


def test_requests_the_library_ends_are_gone_from_the_model() -> None:
    """A completion the library takes with no Python (the RC loop's turn in the library
    too: tb/dp/hip.cpp's dp_card_turn) ends its request in the device's own table only;
    every way the model and the tests read its active requests (by tag, iterating, any,
    counting free tags as cocotbext-pcie does, a slice) finds it gone."""
    install()
    lib = dp.library()
    rng = random.Random(5)
    ended_in_library = 0
    for _ in range(20):
        functions = [PcieId(rng.randrange(256), 0, k) for k in range(rng.randint(1, 3))]
        dev = _device(rng, functions)
        for tag in rng.sample(range(256), rng.randrange(1, 100)):
            dev.active_request[tag] = _request(rng, tag, rng.choice(functions))
        _sync(dev._hip, dev)
        for _ in range(60):
            c = _completion(rng, dev, functions)
            was = dev.active_request[c.tag]
            _in_library(lib, dev._hip, c)
            table = [bool(dev._hip.request[t].active) for t in range(256)]
            if was is not None and not table[c.tag]:
                ended_in_library += 1
                assert dev.active_request[c.tag] is None
                assert was not in dev.active_request
            assert [r is not None for r in dev.active_request] == table
            assert dev.active_request.count(None) == table.count(False)
            assert dev.active_request[0:32].count(None) == table[:32].count(False)
            assert any(dev.active_request) == any(table)
            for tag, req in enumerate(dev.active_request):  # (the timeout loop's walk)
                assert (req is not None) == table[tag]
    assert ended_in_library > 100, ended_in_library
