"""tb/models/fastpaths.py against cocotbext-pcie's own code: on random TLPs of every type
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

from tb import models as ext
from tb.models import fastpaths

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


def _random_tlp_us(rng: random.Random):
    """An UltraScale+ TLP of any type with every field the packers read random (byte
    enables and IDs beyond their fields included), and a payload of 0 to 70 dwords (at
    times not whole dwords)."""
    from cocotbext.pcie.core.tlp import CplStatus, TlpAttr, TlpTc
    from cocotbext.pcie.xilinx.us.tlp import ErrorCode, Tlp_us

    t = Tlp_us()
    pick = rng.random()
    if pick < 0.4:  # what the RC packer takes
        t.fmt_type = rng.choice([TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED_DATA])
    elif pick < 0.8:  # the CQ packer's
        t.fmt_type = rng.choice(
            [TlpType.MEM_READ_64, TlpType.MEM_WRITE, TlpType.CAS, TlpType.IO_WRITE]
        )
    else:
        t.fmt_type = rng.choice(list(TlpType))
    n = rng.choice([0, 1, 2, 3, rng.randrange(71)])
    t.data = bytearray(rng.randbytes(4 * n + (rng.choice([1, 2, 3]) if rng.random() < 0.05 else 0)))
    t.length = n if rng.random() < 0.8 else rng.randrange(1 << 11)
    t.address = rng.choice([rng.randrange(1 << 32), rng.randrange(1 << 64)])
    t.at = rng.randrange(4)
    t.byte_count = rng.choice([4 * n, 4 * n - rng.randrange(4), rng.randrange(1 << 13)])
    t.lower_address = rng.randrange(1 << 12) if rng.random() < 0.2 else rng.randrange(128)
    t.error_code = rng.choice(list(ErrorCode))
    t.request_completed = rng.random() < 0.5
    t.status = rng.choice(list(CplStatus))
    t.ep = rng.random() < 0.5
    t.requester_id = PcieId.from_int(rng.randrange(1 << 16))
    t.completer_id = PcieId.from_int(rng.randrange(1 << 16))
    t.tag = rng.randrange(1 << 10)
    t.tc = TlpTc(rng.randrange(8))
    t.attr = TlpAttr(rng.randrange(8))
    t.bar_id = rng.randrange(16)
    t.bar_aperture = rng.randrange(128)
    t.first_be = rng.randrange(16) if rng.random() < 0.9 else rng.randrange(64)
    t.last_be = rng.randrange(16) if rng.random() < 0.9 else rng.randrange(64)
    t.discontinue = rng.random() < 0.3
    return t


def _frame_fields(result):
    kind, value = result
    return (kind, vars(value)) if kind == "ok" else result


@pytest.mark.parametrize("seed", range(2))
def test_packers_agree_with_the_originals(seed: int):
    """``pack_us_rc`` and ``pack_us_cq``: the same frame (every field) or the same
    exception, for TLPs of every type."""
    from cocotbext.pcie.xilinx.us.tlp import Tlp_us

    assert Tlp_us.pack_us_rc is fastpaths._pack_us_rc
    assert Tlp_us.pack_us_cq is fastpaths._pack_us_cq
    rng = random.Random(seed)
    packed = {"pack_us_rc": 0, "pack_us_cq": 0}
    for _ in range(4000):
        tlp = _random_tlp_us(rng)
        for name in packed:
            fast, _ = _outcome(getattr(Tlp_us, name), tlp)
            slow, _ = _outcome(fastpaths.ORIGINALS[name], tlp)
            assert _frame_fields(fast) == _frame_fields(slow), (name, tlp)
            packed[name] += fast[0] == "ok"
    assert min(packed.values()) > 1000  # other types are neither's: both raise


@pytest.mark.parametrize("seed", range(2))
def test_unpackers_agree_with_the_originals(seed: int):
    """``unpack_us_rq`` and ``unpack_us_cc``: the same TLP (every field) or the same
    exception, from the frames the RTL would send and from random dwords of any count."""
    from cocotbext.pcie.xilinx.us.interface import UsPcieFrame
    from cocotbext.pcie.xilinx.us.tlp import Tlp_us

    rng = random.Random(seed)
    unpacked = {"unpack_us_rq": 0, "unpack_us_cc": 0}
    for _ in range(4000):
        frame = UsPcieFrame()
        frame.data = [
            rng.getrandbits(32) for _ in range(rng.choice([0, 3, 4, 5, rng.randrange(72)]))
        ]
        if rng.random() < 0.02:
            frame.data.append(1 << 32)  # no dword: both fail to pack it
        frame.parity = [rng.getrandbits(4) for _ in frame.data]
        frame.first_be, frame.last_be = rng.getrandbits(4), rng.getrandbits(4)
        frame.discontinue, frame.seq_num = rng.random() < 0.3, rng.getrandbits(6)
        if len(frame.data) >= 3 and rng.random() < 0.5:  # CC: a length up to what is there
            length = rng.randrange(len(frame.data) - 2)
            frame.data[1] = frame.data[1] & ~0x7FF | length
        if rng.random() < 0.5:  # a request type the RQ unpacker knows
            frame.data[2:3] = [rng.getrandbits(32) & ~(0xF << 11) | rng.randrange(12) << 11]
        for name in unpacked:
            check = rng.random() < 0.1
            fast, _ = _outcome(lambda f, n=name, c=check: getattr(Tlp_us, n)(f, c), frame)
            slow, _ = _outcome(
                lambda f, n=name, c=check: fastpaths.ORIGINALS[n](Tlp_us, f, c), frame
            )
            assert _frame_fields(fast) == _frame_fields(slow), (name, frame)
            unpacked[name] += fast[0] == "ok"
            assert frame.data is not None and len(frame.parity) <= len(frame.data) + 1
    assert min(unpacked.values()) > 1000


def test_update_parity_agrees_with_the_original():
    from cocotbext.pcie.xilinx.us.interface import UsPcieFrame

    assert UsPcieFrame.update_parity is fastpaths._update_parity
    rng = random.Random(3)
    for _ in range(3000):
        n = rng.randrange(80)
        frames = [UsPcieFrame(), UsPcieFrame()]
        data = [rng.getrandbits(32) for _ in range(n)]
        if n and rng.random() < 0.1:  # not a 32-bit number: the original's answer
            data[rng.randrange(n)] = rng.choice([1 << 32, -1, (1 << 40) + 5])
        for f in frames:
            f.data = list(data)
        frames[0].update_parity()
        fastpaths.ORIGINALS["update_parity"](frames[1])
        assert frames[0].parity == frames[1].parity, data


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )


def test_importing_patches_nothing():
    """Importing the testbench (the system builder, the beat-level model, the hard IP) leaves
    cocotbext-pcie as it is; only install() patches it."""
    out = _python(
        "from cocotbext.pcie.core.tlp import Tlp\n"
        "import tb.env.system, tb.env.harness, tb.models.link, tb.models.hardip\n"
        "from tb.models import fastpaths\n"
        "print(Tlp.check is fastpaths._check)\n"
        # installed later, the sets of TLP types built at import still find their members
        "from tb import models as ext\n"
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
        "from tb import models as ext\n"
        "print(ext.install({'cocotb': '2.1.0', 'cocotbext-pcie': '0.3.0'}), ext.active())\n"
        "print(ext.install(), TlpType.__hash__ is object.__hash__)\n"
        "from tb.models import fastpaths\n"
        "print(Tlp.check is fastpaths._check)\n"
    )
    assert out.stdout.split() == ["False", "False", "False", "False", "False"]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "verified with cocotb 2.1.0, cocotbext-pcie 0.2.16" in lines[0]
    assert "cocotbext-pcie 0.3.0 installed" in lines[0] and "docs/extensions.md" in lines[0]


def test_the_pins_are_the_verified_versions():
    """pyproject.toml pins what tb.models was verified with: a bump of one without the
    other fails here (and docs/extensions.md says how to verify the new version)."""
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    for name, version in ext.VERIFIED.items():
        assert f'"{name}=={version}"' in text, name
    assert ext.mismatches({"cocotb": "2.1.0", "cocotbext-pcie": None}) == ["cocotbext-pcie (none)"]
