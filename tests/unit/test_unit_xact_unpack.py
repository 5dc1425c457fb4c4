"""The transactor model's per-TLP unpacking of RQ and CC beats (tb/ext/xact.py,
``_XactSink._unpack``) against cocotbext-pcie's own per-beat unpacker (``RqSink._run``,
``CcSink._run``), stepped by hand as the model steps it: on random beats (any tkeep, tlast
anywhere, every sideband bit random) at each width below 512 bits, the same frames with
the same fields, in the same order, whichever runs of words they come in, and the same
``active`` after each run."""

from __future__ import annotations

import logging
import random

import pytest
from cocotbext.pcie.xilinx.us import interface as us

from tb.ext.lean import _Beat, _Sync
from tb.ext.xact import XactCcSink, XactRqSink


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


def _sink(cls, width: int, user: int, out: list):
    """A sink of ``cls`` with what both unpackers read, its frames going to ``out``."""
    sink = object.__new__(cls)
    sink.bus = _Bus(width, user)
    sink.log = logging.getLogger("test.xact_unpack")
    sink.width = width
    sink.byte_lanes = width // 32
    sink.seg_count = 1
    sink.seg_byte_lanes = sink.byte_lanes
    sink.active = False
    sink.sample_obj = None
    sink.sample_sync = _Sync()
    us.RqSink._init(sink) if issubclass(cls, us.RqSink) else us.CcSink._init(sink)
    sink._dw, sink._uw, sink._kw = width, user, width // 32
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
    [(XactRqSink, us.RqSink, 62), (XactRqSink, us.RqSink, 60), (XactCcSink, us.CcSink, 33)],
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
            beat = _Beat()
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


@pytest.mark.parametrize(("cls", "user"), [(XactRqSink, 137), (XactCcSink, 81)])
def test_512_bits_keep_cocotbext_pcies_unpacker(cls, user: int):
    """At 512 bits the sideband's layout differs (and may straddle): the beats go to
    cocotbext-pcie's own unpacker, even with one segment."""
    sink = _sink(cls, 512, user, [])
    sink._init_unpack()
    assert not sink._per_tlp
