"""The transactor model's per-TLP packing of RC and CQ frames (tb/ext/xact.py,
``_XactSource._pack_tlp``) against cocotbext-pcie's own per-beat packer (``RcSource._run``,
``CqSource._run``), stepped by hand as the model steps it below 512 bits: on random
frames (any length from none to several beats, random dwords, byte enables, parity,
first/last byte enables and discontinue), the same buffer words, beat for beat, and the
same queue accounting."""

from __future__ import annotations

import logging
import random

import pytest
from cocotb.queue import Queue
from cocotb.triggers import Event
from cocotbext.pcie.xilinx.us import interface as us

from tb.ext.xact import XactCqSource, XactRcSource


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


def _source(cls, orig, width: int, user: int, per_tlp: bool):
    """A source of ``cls`` with what both packers read; ``per_tlp`` picks the packer."""
    src = object.__new__(cls)
    src.bus = _Bus(width, user)
    src.log = logging.getLogger("test.xact_pack")
    src.width = width
    src.byte_lanes = width // 32
    src.seg_count = 1
    src.seg_byte_lanes = src.byte_lanes
    src.queue = Queue()
    src.idle_event = Event()
    src.dequeue_event = Event()
    src.queue_occupancy_bytes = 0
    src.queue_occupancy_frames = 0
    src.queue_occupancy_limit_bytes = -1
    src.queue_occupancy_limit_frames = -1
    src._dw, src._uw, src._kw = width, user, width // 32
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
        (XactRcSource, us.RcSource, 75),
        (XactCqSource, us.CqSource, 88),
        (XactCqSource, us.CqSource, 85),
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
    ("cls", "orig", "user"), [(XactRcSource, us.RcSource, 161), (XactCqSource, us.CqSource, 183)]
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
