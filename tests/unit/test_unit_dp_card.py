"""The card's end of the compiled data path (tb/dp/card.cpp) against the Python it
stands in for: a posted write from the RQ stream becomes the TLP the hard-IP model
sends (cocotbext-pcie's ``Tlp_us.unpack_us_rq``, the requester ID's bus set as
tb/models/hardip.py sets it, ``Tlp.check()``, the copy ``Tlp(tlp)`` the link carries,
``Tlp.pack()``), on random RQ frames of every request type, length and field."""

from __future__ import annotations

import ctypes
import random

from cocotbext.pcie.core.tlp import Tlp
from cocotbext.pcie.xilinx.us.interface import UsPcieFrame
from cocotbext.pcie.xilinx.us.tlp import Tlp_us

from tb import dp

MEM_WRITE = 0x1


def _frame(rng: random.Random) -> UsPcieFrame:
    """A random RQ frame: mostly well-formed memory writes, some of another type, a
    wrong length, poisoned, crossing 4 KiB, above 4 GiB."""
    f = UsPcieFrame()
    length = rng.choice((1, 2, 4, 16, 64, 128, rng.randrange(1, 1025), 0, 1025, 2047))
    req_type = MEM_WRITE if rng.random() < 0.85 else rng.choice((0x0, 0x2, 0x3))
    address = rng.randrange(1 << rng.choice((12, 32, 40, 64))) & ~3
    if rng.random() < 0.7:  # inside its 4 KiB page
        address &= ~0xFFF
        address |= rng.randrange(0, max(1, 0x1000 - length * 4) + 1, 4) & 0xFFF
    d0 = (address & 0xFFFFFFFC) | rng.randrange(4)  # AT in bits 1:0
    d1 = address >> 32
    d2 = (length & 0x7FF) | req_type << 11 | (rng.random() < 0.1) << 15
    d2 |= rng.randrange(1 << 16) << 16
    d3 = rng.randrange(256) | rng.randrange(1 << 16) << 8 | (rng.random() < 0.5) << 24
    d3 |= rng.randrange(8) << 25 | rng.randrange(8) << 28 | (rng.random() < 0.1) << 31
    ndata = length if rng.random() < 0.9 else max(0, length + rng.choice((-1, 1)))
    f.data = [d0, d1, d2, d3] + [rng.randrange(1 << 32) for _ in range(min(ndata, 1100))]
    f.first_be, f.last_be = rng.randrange(16), rng.randrange(16)
    return f


def _python(f: UsPcieFrame, bus: int) -> bytes | None:
    """What the hard-IP model puts on its link for ``f`` where it is a posted write the
    library may move (None: not one)."""
    try:
        tlp = Tlp_us.unpack_us_rq(f)
    except ValueError:  # a reserved field value (address type 3)
        return None
    if (f.data[2] >> 11) & 0xF != MEM_WRITE or tlp.ep or not 1 <= tlp.length <= 1024:
        return None
    try:
        if not tlp.check():
            return None
    except (AssertionError, ValueError):
        return None
    if not tlp.requester_id_enable:
        tlp.requester_id = tlp.requester_id._replace(bus=bus)
    return bytes(Tlp(tlp).pack())


def _library(f: UsPcieFrame, bus: int) -> bytes | None:
    lib = dp.library()
    words = (ctypes.c_uint32 * len(f.data))(*f.data)
    h, data_len = dp.TlpHeader(), ctypes.c_uint64()
    if not lib.dp_rq_write_tlp(
        words, len(f.data), f.first_be, f.last_be, bus, ctypes.byref(h), ctypes.byref(data_len)
    ):
        return None
    if not lib.dp_tlp_check(ctypes.byref(h), data_len.value):
        return None
    raw = ctypes.create_string_buffer(16)
    size = lib.dp_tlp_pack(ctypes.byref(h), raw)
    data = b"".join(dw.to_bytes(4, "little") for dw in f.data[4:])
    return raw.raw[:size] + data


def test_posted_writes_from_rq_as_the_hard_ip_sends_them() -> None:
    rng = random.Random(11)
    moved = 0
    for _ in range(4000):
        f, bus = _frame(rng), rng.randrange(256)
        expected = _python(f, bus)
        assert _library(f, bus) == expected, f"frame {f.data[:4]} BEs {f.first_be}/{f.last_be}"
        moved += expected is not None
    assert moved > 1000, f"only {moved} frames were writes the library moves"
