"""The transactor model's per-TLP passes (tb/models/transactors.py) against cocotbext-pcie's own
per-beat code, stepped by hand as the model steps it below 512 bits:

- unpacking RQ and CC beats (``_TransactorSink._unpack``) against ``RqSink._run`` and
  ``CcSink._run``: on random beats (any tkeep, tlast anywhere, every sideband bit random)
  at each width, the same frames with the same fields, in the same order, whichever runs
  of words they come in, and the same ``active`` after each run;
- packing RC and CQ frames (``_TransactorSource._pack_tlp``) against ``RcSource._run`` and
  ``CqSource._run``: on random frames (any length from none to several beats, random
  dwords, byte enables, parity, first/last byte enables and discontinue), the same buffer
  words, beat for beat, and the same queue accounting."""

from __future__ import annotations

import ctypes
import logging
import random

import pytest
from cocotb.queue import Queue
from cocotb.triggers import Event
from cocotbext.pcie.core.tlp import CplStatus, TlpAttr, TlpTc, TlpType
from cocotbext.pcie.core.utils import PcieId
from cocotbext.pcie.xilinx.us import interface as us
from cocotbext.pcie.xilinx.us.tlp import Tlp_us

from tb import dp
from tb.models.signals import Beat, Sync
from tb.models.transactors import (
    TransactorCcSink,
    TransactorCqSource,
    TransactorRcSource,
    TransactorRqSink,
)


class _Sized:
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n


class _Bus:
    def __init__(self, width: int, user: int) -> None:
        self.tdata = _Sized(width)
        self.tkeep = _Sized(width // 32)
        self.tuser = _Sized(user)


def _stream(cls, width: int, user: int):
    """An uninitialised stream of ``cls`` with its bus widths, one segment."""
    stream = object.__new__(cls)
    stream.bus = _Bus(width, user)
    stream.log = logging.getLogger("test.xact_per_tlp")
    stream.width = width
    stream.byte_lanes = width // 32
    stream.seg_count = 1
    stream.seg_byte_lanes = stream.byte_lanes
    stream._dw, stream._uw, stream._kw = width, user, width // 32
    return stream


def _sink(cls, width: int, user: int, out: list):
    """A sink of ``cls`` with what both unpackers read, its frames going to ``out``."""
    sink = _stream(cls, width, user)
    sink.active = False
    sink.sample_obj = None
    sink.sample_sync = Sync()
    us.RqSink._init(sink) if issubclass(cls, us.RqSink) else us.CcSink._init(sink)
    sink._sink_frame = out.append
    return sink


def _beats(rng: random.Random, width: int, user: int, n: int) -> list[int]:
    lanes = width // 32
    words = []
    for i in range(n):
        if rng.random() < 0.7:  # what the RTL sends: lanes from 0 up
            keep = (1 << rng.randint(1, lanes)) - 1
        else:
            keep = rng.getrandbits(lanes)
        last = int(i == n - 1 or rng.random() < 0.3)
        word = (last << lanes | keep) << user | rng.getrandbits(user)
        words.append(word << width | rng.getrandbits(width))
    return words


@pytest.mark.parametrize(
    ("fast_cls", "orig_cls", "user"),
    [
        (TransactorRqSink, us.RqSink, 62),
        (TransactorRqSink, us.RqSink, 60),
        (TransactorCcSink, us.CcSink, 33),
    ],
)
@pytest.mark.parametrize("width", [64, 128, 256])
def test_per_tlp_unpacking_is_cocotbext_pcies(fast_cls, orig_cls, user: int, width: int):
    rng = random.Random(width * 1000 + user)
    got: list = []
    want: list = []
    fast = _sink(fast_cls, width, user, got)
    fast._init_unpack()
    assert fast._per_tlp
    orig = _sink(orig_cls, width, user, want)
    step = orig._run()
    step.send(None)
    for _ in range(300):
        words = _beats(rng, width, user, rng.randint(1, 12))
        for w in words:  # the original, one beat at a time
            beat = Beat()
            beat.tdata = w & ((1 << width) - 1)
            beat.tuser = (w >> width) & ((1 << user) - 1)
            beat.tkeep = (w >> (width + user)) & ((1 << (width // 32)) - 1)
            beat.tlast = w >> (width + user + width // 32)
            orig.sample_obj = beat
            step.send(None)
            assert orig.sample_obj is None
        cut = rng.randint(0, len(words))  # the fast one, in two runs of words
        fast._unpack(words[:cut])
        fast._unpack(words[cut:])
        assert fast.active == orig.active
    assert len(want) > 200
    assert got == want
    # the random sideband reaches the discontinue bit
    assert any(f.discontinue for f in want) and not all(f.discontinue for f in want)


@pytest.mark.parametrize(("cls", "user"), [(TransactorRqSink, 137), (TransactorCcSink, 81)])
def test_512_bits_keep_cocotbext_pcies_unpacker(cls, user: int):
    """At 512 bits the sideband's layout differs (and may straddle): the beats go to
    cocotbext-pcie's own unpacker, even with one segment."""
    sink = _sink(cls, 512, user, [])
    sink._init_unpack()
    assert not sink._per_tlp


# --- packing ---------------------------------------------------------------------------


def _source(cls, orig, width: int, user: int, per_tlp: bool):
    """A source of ``cls`` with what both packers read; ``per_tlp`` picks the packer."""
    src = _stream(cls, width, user)
    src.queue = Queue()
    src.idle_event = Event()
    src.dequeue_event = Event()
    src.queue_occupancy_bytes = 0
    src.queue_occupancy_frames = 0
    src.queue_occupancy_limit_bytes = -1
    src.queue_occupancy_limit_frames = -1
    orig._init(src)
    src._staged = []
    src._packer = orig._run(src)
    src._packer.send(None)
    src._init_pack()
    assert src._per_tlp
    src._per_tlp = per_tlp
    return src


def _frame(rng: random.Random, lanes: int) -> us.UsPcieFrame:
    f = us.UsPcieFrame()
    n = rng.choice([0, 1, 2, 3, 4, 5, lanes, lanes + 1, rng.randint(0, 8 * lanes)])
    f.data = [rng.getrandbits(32) for _ in range(n)]
    f.byte_en = [rng.getrandbits(4) for _ in range(n)]
    f.parity = [rng.getrandbits(4) for _ in range(n)]
    f.first_be = rng.getrandbits(4)
    f.last_be = rng.getrandbits(4)
    f.discontinue = rng.random() < 0.3
    return f


@pytest.mark.parametrize(
    ("cls", "orig", "user"),
    [
        (TransactorRcSource, us.RcSource, 75),
        (TransactorCqSource, us.CqSource, 88),
        (TransactorCqSource, us.CqSource, 85),
    ],
)
@pytest.mark.parametrize("width", [64, 128, 256])
def test_per_tlp_packing_is_cocotbext_pcies(cls, orig, user: int, width: int):
    rng = random.Random(width * 1000 + user)
    fast = _source(cls, orig, width, user, per_tlp=True)
    slow = _source(cls, orig, width, user, per_tlp=False)
    lanes = width // 32
    sizes = set()
    for _ in range(400):
        frame = _frame(rng, lanes)
        sizes.add(len(frame.data))
        want = slow._pack(frame)
        got = fast._pack(frame)
        assert got == want, f"{len(frame.data)} dwords"
        assert len(got) == max(1, -(-len(frame.data) // lanes))
        for s in (fast, slow):
            assert (s.queue_occupancy_frames, s.queue_occupancy_bytes) == (0, 0)
            assert s.queue.empty() and s.dequeue_event.is_set()
    # the frames covered no dword, a part beat, a whole beat, and several beats
    assert {0, 1, lanes} <= sizes and max(sizes) > 2 * lanes


@pytest.mark.parametrize(
    ("cls", "orig", "user"),
    [(TransactorRcSource, us.RcSource, 161), (TransactorCqSource, us.CqSource, 183)],
)
def test_512_bits_keep_cocotbext_pcies_packer(cls, orig, user: int):
    """At 512 bits the sideband's layout differs (and RC may straddle): the frames go
    through cocotbext-pcie's own packer, even with one segment."""
    src = object.__new__(cls)
    src.bus = _Bus(512, user)
    src.width = 512
    src.seg_count = 1
    src.seg_byte_lanes = 16
    orig._init(src)
    src._init_pack()
    assert not src._per_tlp


# --- packing in the library (the compiled data path) ------------------------------------


def _completion(rng: random.Random, lanes: int) -> Tlp_us:
    """A random completion as the hard-IP model hands RC: any status, error code, lower
    address, byte count and length (its payload's dwords), locked or not."""
    t = Tlp_us()
    ndw = rng.choice([0, 1, 2, 3, lanes, lanes + 1, rng.randint(0, 8 * lanes), 128])
    t.fmt_type = rng.choice(
        [TlpType.CPL_DATA, TlpType.CPL_LOCKED_DATA] if ndw else [TlpType.CPL, TlpType.CPL_LOCKED]
    )
    t.data = bytearray(rng.getrandbits(8) for _ in range(4 * ndw))
    t.length = ndw if rng.random() < 0.8 else rng.randrange(1024)
    t.lower_address = rng.randrange(0x1000)
    t.byte_count = rng.choice([rng.randrange(4096), 4 * ndw, 4 * ndw - (t.lower_address & 3)])
    t.byte_count = max(t.byte_count, 0)
    t.error_code = rng.randrange(16)
    t.request_completed = rng.random() < 0.5
    t.status = CplStatus(rng.choice([0, 1, 2, 4]))
    t.ep = rng.random() < 0.2
    t.requester_id = PcieId.from_int(rng.randrange(1 << 16))
    t.completer_id = PcieId.from_int(rng.randrange(1 << 16))
    t.tag = rng.randrange(256)
    t.tc = TlpTc(rng.randrange(8))
    t.attr = TlpAttr(rng.randrange(8))
    t.discontinue = rng.random() < 0.2
    return t


@pytest.mark.parametrize("width", [64, 128, 256])
def test_rc_words_packed_in_the_library_are_the_models(width: int):
    """The library's RC words (tb/dp/card.cpp, dp_rc_pack) for a completion are the
    ones the transactor model packs from ``Tlp_us.pack_us_rc``'s frame, bit for bit."""
    lib = dp.library()
    src = _source(TransactorRcSource, us.RcSource, width, 75, per_tlp=True)
    stream = dp.Stream(
        width // 32, width, 75, width // 32, src.parity_offset, src.discontinue_offset
    )
    stride = 4 * ((width + 75 + width // 32 + 1 + 31) // 32)
    out = ctypes.create_string_buffer(stride * 600)
    rng = random.Random(width)
    for _ in range(500):
        t = _completion(rng, width // 32)
        want = src._pack(t.pack_us_rc())
        f = dp.RcFields(
            t.lower_address,
            t.error_code,
            t.byte_count,
            t.fmt_type in (TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA),
            bool(t.request_completed),
            t.length,
            t.status,
            bool(t.ep),
            int(t.requester_id),
            t.tag,
            int(t.completer_id),
            t.tc,
            t.attr,
            bool(t.discontinue),
        )
        n = lib.dp_rc_pack(
            ctypes.byref(f), bytes(t.data), len(t.data) // 4, ctypes.byref(stream), out, stride
        )
        raw = out.raw
        got = [int.from_bytes(raw[k * stride : (k + 1) * stride], "little") for k in range(n)]
        assert got == want, f"{t!r}"


@pytest.mark.parametrize(
    ("cls", "user"),
    [(TransactorRqSink, 62), (TransactorRqSink, 60), (TransactorCcSink, 33)],
)
@pytest.mark.parametrize("width", [64, 128, 256])
def test_beats_unpacked_in_the_library_are_the_models(cls, user: int, width: int):
    """The library's unpacker (tb/dp/xact.cpp, dp_unpack) gives the frames the
    transactor model's ``_unpack`` gives, field for field, runs cut anywhere, with the
    same ``active`` after each run."""
    rng = random.Random(width * 7 + user)
    want: list = []
    model = _sink(cls, width, user, want)
    model._init_unpack()
    stream = dp.Stream(
        width // 32, width, user, width // 32, model.parity_offset, model.discontinue_offset
    )
    lib = dp.Unpacker(stream, cls is TransactorRqSink, model._seq_hi)
    stride = 4 * ((width + user + width // 32 + 1 + 31) // 32)
    got: list = []
    for _ in range(300):
        words = _beats(rng, width, user, rng.randint(1, 12))
        cut = rng.randint(0, len(words))
        for run in (words[:cut], words[cut:]):
            model._unpack(run)
            raw = b"".join(w.to_bytes(stride, "little") for w in run)
            got += lib.unpack(raw, len(run), stride)
            if run:
                assert lib.active == model.active
    assert len(want) > 200
    fields = ("data", "parity", "first_be", "last_be", "seq_num", "discontinue", "byte_en")
    assert [[getattr(f, k) for k in fields] for f in got] == [
        [getattr(f, k) for k in fields] for f in want
    ]
