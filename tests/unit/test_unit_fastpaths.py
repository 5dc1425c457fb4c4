"""tb/ext/fastpaths.py against cocotbext-pcie's own code: on random TLPs of every type
(valid, and broken in each way Tlp.check knows, and codes that are no type) the fast
``fmt_type``, ``check`` and routing matches (against random BARs and bridge windows) give
the original's answer, its exception and its message; so does ``PcieId``."""

from __future__ import annotations

import contextlib
import io
import random
import subprocess
import sys
from pathlib import Path

import pytest
from cocotbext.pcie.core.bridge import Bridge
from cocotbext.pcie.core.endpoint import Endpoint
from cocotbext.pcie.core.function import Function
from cocotbext.pcie.core.tlp import Tlp, TlpType
from cocotbext.pcie.core.utils import PcieId

from tb import ext
from tb.ext import fastpaths

ext.install()  # what the system builder does first (nothing is patched on import)


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
    assert ext.active() and not ext.mismatches()
    assert Tlp.check is fastpaths._check
    assert TlpType.__hash__ is object.__hash__
    assert Function.match_tlp is fastpaths._match_tlp
    assert Bridge.match_tlp_secondary is fastpaths._match_tlp_secondary
    assert PcieId.__new__ is fastpaths._pcie_id_new


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


def _function(rng: random.Random) -> Function:
    f = Endpoint()
    f.pcie_id = PcieId(rng.randrange(4), rng.randrange(4), rng.randrange(2))
    f.configure_bar(0, 1 << rng.choice([12, 16, 20]))  # 32-bit memory
    f.configure_bar(2, 1 << 24, ext=True, prefetch=True)  # 64-bit memory
    f.configure_io_bar(4, 256)
    f.bar[0] |= 0x8000_0000 & f.bar_mask[0]
    f.bar[2] |= 0x0100_0000 & f.bar_mask[2]
    f.bar[3] = rng.choice([0, 1, 0x20])
    f.bar[4] |= 0x1000 & f.bar_mask[4]
    return f


def _bridge(rng: random.Random) -> Bridge:
    b = Bridge()
    b.sec_bus_num = rng.randrange(1, 4)
    b.sub_bus_num = b.sec_bus_num + rng.randrange(3)
    b.mem_base, b.mem_limit = 0x8000_0000, 0x8000_0000 + (rng.randrange(1, 16) << 20) - 1
    b.prefetchable_mem_base = 0x1_0000_0000
    b.prefetchable_mem_limit = 0x1_0000_0000 + (1 << 28) - 1
    b.io_base, b.io_limit = 0x1000, 0x1FFF
    return b


def _routed_tlp(rng: random.Random) -> Tlp:
    t = _random_tlp(rng)
    t.address = rng.choice(
        [
            0x8000_0000,
            0x8000_1000,
            0x8010_0000,
            0x1_0000_0000,
            0x1_0F00_0000,
            0x1000,
            0x1080,
            0x2000,
            0,
            rng.randrange(1 << 33) & ~3,
        ]
    )
    t.requester_id = PcieId(rng.randrange(6), rng.randrange(4), rng.randrange(2))
    t.completer_id = PcieId(rng.randrange(6), rng.randrange(4), rng.randrange(2))
    if rng.random() < 0.05:
        t.requester_id = PcieId(0, 0, 0)
    return t


@pytest.mark.parametrize("seed", range(3))
def test_routing_matches_agree_with_the_originals(seed: int):
    rng = random.Random(seed)
    original_match = fastpaths.ORIGINALS["match_tlp"]
    original_secondary = fastpaths.ORIGINALS["match_tlp_secondary"]
    answers = set()
    for _ in range(200):
        f, b = _function(rng), _bridge(rng)
        for _ in range(20):
            tlp = _routed_tlp(rng)
            got = _outcome(f.match_tlp, tlp)
            assert got == _outcome(lambda t, f=f: original_match(f, t), tlp), repr(tlp)
            answers.add(("function", got[0]))
            got = _outcome(b.match_tlp_secondary, tlp)
            assert got == _outcome(lambda t, b=b: original_secondary(b, t), tlp), repr(tlp)
            answers.add(("bridge", got[0]))
    # each side said yes and no, and raised for a code that is no type (ValueError) and
    # for a type it does not route (Exception)
    expect = {("ok", True), ("ok", False), ("raised", ValueError), ("raised", Exception)}
    for side in ("function", "bridge"):
        assert {a for s, a in answers if s == side} == expect


def test_pcie_id_agrees_with_the_original():
    original = fastpaths.ORIGINALS["PcieId.__new__"]
    cases = [
        (0, 0, 0),
        (255, 31, 7),
        (1, 2, 3),
        (256, 0, 0),
        (0, 32, 0),
        (0, 0, 8),
        (-1, 0, 0),
        ((4, 5, 6),),
        (PcieId(4, 5, 6),),
        (PcieId(1, 2, 3), 9, 9),
        (tuple.__new__(PcieId, (300, 0, 0)),),
        (True, 1, 1),
        (3,),
        (),
    ]
    for args in cases:

        def make(orig: bool, args=args):
            out = original(PcieId, *args) if orig else PcieId(*args)
            return (type(out), tuple(out))

        def outcome(orig: bool):
            try:
                return ("ok", make(orig))
            except Exception as e:
                return ("raised", type(e), str(e))

        assert outcome(False) == outcome(True), args
    assert PcieId(1, 2, 3) == PcieId.from_int(0x0113) and str(PcieId(1, 2, 3)) == "01:02.3"


def test_dword_parity_agrees_with_the_original():
    from cocotbext.pcie.xilinx.us import interface

    original = fastpaths.ORIGINALS["dword_parity"]
    assert interface.dword_parity is fastpaths._dword_parity
    rng = random.Random(7)
    values = [*range(1 << 16), *(rng.randrange(1 << 32) for _ in range(50000))]
    values += [0xFFFFFFFF, 1 << 31, 1 << 40, (1 << 64) - 1, -1, -12345]
    for d in values:
        assert interface.dword_parity(d) == original(d), hex(d)


@pytest.mark.parametrize("seed", range(2))
def test_tlp_construction_and_copy_agree_with_the_original(seed: int):
    from cocotbext.pcie.xilinx.us.tlp import Tlp_us

    original = fastpaths.ORIGINALS["Tlp.__init__"]
    assert Tlp.__init__ is fastpaths._tlp_init
    rng = random.Random(seed)

    def made(*args) -> Tlp:  # a Tlp built by cocotbext-pcie's own constructor
        obj = Tlp.__new__(Tlp)
        original(obj, *args)
        return obj

    assert list(vars(Tlp()).items()) == list(vars(made()).items())
    for _ in range(2000):
        src = _routed_tlp(rng)
        src.th, src.ep, src.seq, src.tag = rng.random() < 0.5, rng.random() < 0.5, 7, 9
        src.release_fc_cb, src.ingress_port = object(), object()
        src.data = bytearray(rng.randbytes(rng.randrange(16)))
        fast, slow = Tlp(src), made(src)
        assert list(vars(fast).items()) == list(vars(slow).items())  # values and order
        assert fast.data is not src.data and fast.th is False and fast.release_fc_cb is None
        fast.data[:0] = b"x"
        assert src.data != fast.data  # a copy, not the same buffer
    # the UltraScale+ subclass builds on it: its fields after the base's, as before
    us = Tlp_us(Tlp())
    assert list(vars(us))[: len(fastpaths._TLP_DEFAULTS)] == list(fastpaths._TLP_DEFAULTS)


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )


def test_importing_patches_nothing():
    """Importing the testbench (the system builder, the lean model, the hard IP) leaves
    cocotbext-pcie as it is; only install() patches it."""
    out = _python(
        "from cocotbext.pcie.core.tlp import Tlp\n"
        "import tb.env.system, tb.env.harness, tb.ext.lean, tb.ext.hardip\n"
        "from tb.ext import fastpaths\n"
        "print(Tlp.check is fastpaths._check)\n"
        # installed later, the sets of TLP types built at import still find their members
        "from tb import ext\n"
        "from tb.env import link\n"
        "from cocotbext.pcie.core.tlp import TlpType\n"
        "print(ext.install(), TlpType.MEM_WRITE in link.MEM_WRITES,\n"
        "      TlpType.CPL in link.COMPLETIONS)\n"
    )
    assert out.stdout.split() == ["False", "True", "True", "True"]


def test_an_unverified_version_falls_back_with_one_line():
    out = _python(
        "import logging\n"
        "logging.basicConfig(level=logging.INFO, format='%(message)s')\n"
        "from cocotbext.pcie.core.tlp import Tlp, TlpType\n"
        "from tb import ext\n"
        "print(ext.install({'cocotb': '2.1.0', 'cocotbext-pcie': '0.3.0'}), ext.active())\n"
        "print(ext.install(), TlpType.__hash__ is object.__hash__)\n"
        "from tb.ext import fastpaths\n"
        "print(Tlp.check is fastpaths._check)\n"
    )
    assert out.stdout.split() == ["False", "False", "False", "False", "False"]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "verified with cocotb 2.1.0, cocotbext-pcie 0.2.16" in lines[0]
    assert "cocotbext-pcie 0.3.0 installed" in lines[0] and "docs/extensions.md" in lines[0]


def test_the_pins_are_the_verified_versions():
    """pyproject.toml pins what tb.ext was verified with: a bump of one without the
    other fails here (and docs/extensions.md says how to verify the new version)."""
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    for name, version in ext.VERIFIED.items():
        assert f'"{name}=={version}"' in text, name
    assert ext.mismatches({"cocotb": "2.1.0", "cocotbext-pcie": None}) == ["cocotbext-pcie (none)"]
