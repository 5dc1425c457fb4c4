"""tb/env/fastpaths.py against cocotbext-pcie's own code: on random TLPs of every type
(valid, and broken in each way Tlp.check knows, and codes that are no type) the fast
``fmt_type`` and ``check`` give the original's answer, its exception and its message."""

from __future__ import annotations

import contextlib
import io
import random

import pytest
from cocotbext.pcie.core.tlp import Tlp, TlpType

import tb.env  # noqa: F401  (installs the fast paths)
from tb.env import fastpaths


def _outcome(fn, tlp: Tlp):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            result = ("ok", fn(tlp))
        except Exception as e:
            result = ("raised", type(e))
    return result, out.getvalue()


def _random_tlp(rng: random.Random) -> Tlp:
    t = Tlp()
    if rng.random() < 0.05:  # a code that is no type
        t.fmt, t.type = rng.randrange(5), rng.choice([0x03, 0x1F, 0x0B])
    else:
        t.fmt_type = rng.choice(list(TlpType))
    t.length = rng.choice([0, 1, 2, 16, 64, 256, 1024])
    n = t.length * 4 if rng.random() < 0.8 else t.length * 4 + rng.choice([-4, 4])
    t.data = bytearray(max(n, 0))
    t.address = rng.choice([0, 0x1000 - 4, 0xF00, 0x12345000, 0x1FFC, rng.randrange(1 << 40) & ~3])
    t.byte_count = rng.choice([0, 4, 64, t.length * 4, t.length * 4 - 8, 4096])
    t.lower_address = rng.randrange(128)
    return t


def test_fast_paths_are_installed():
    assert Tlp.check is fastpaths._check
    assert TlpType.__hash__ is object.__hash__


@pytest.mark.parametrize("seed", range(4))
def test_check_and_fmt_type_agree_with_the_originals(seed: int):
    rng = random.Random(seed)
    verdicts = set()
    for _ in range(3000):
        tlp = _random_tlp(rng)
        fast = _outcome(Tlp.check, tlp)
        assert fast == _outcome(fastpaths.original_check, tlp), repr(tlp.__dict__)
        verdicts.add(fast[0])
        got = _outcome(lambda t: t.fmt_type, tlp)
        assert got == _outcome(fastpaths.original_fmt_type, tlp)
    # the cases reached every answer: valid, invalid (with a message) and no type at all
    assert verdicts == {("ok", True), ("ok", False), ("raised", ValueError)}
