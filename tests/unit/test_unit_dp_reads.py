"""The fault injector's read log in the compiled data path's library (tb/dp/reads.cpp,
tb.models.native.ReadLog): a read request recorded from its header as
``FaultInjector.observe`` records it (the address of its first enabled byte and the
bytes it asks for, cocotbext-pcie's ``get_first_be_offset`` and ``get_be_byte_count``),
by tag, numbered anew each time a tag is used."""

from __future__ import annotations

import ctypes
import random

from cocotbext.pcie.core.tlp import Tlp, TlpType
from cocotbext.pcie.core.utils import PcieId

from tb import dp
from tb.models.native import TAGS, ReadLog


def _read(rng: random.Random) -> Tlp:
    t = Tlp()
    t.fmt_type = rng.choice((TlpType.MEM_READ, TlpType.MEM_READ_64))
    t.requester_id = PcieId.from_int(rng.randrange(1 << 16))
    t.tag = rng.randrange(TAGS)
    t.length = rng.randrange(1, 1025)
    t.first_be = rng.randrange(16)
    t.last_be = 0 if t.length == 1 else rng.randrange(1, 16)
    bits = 64 if t.fmt_type == TlpType.MEM_READ_64 else 32
    t.address = rng.randrange(1 << bits) & ~3
    return t


def test_a_read_is_recorded_as_the_fault_injector_records_it() -> None:
    lib = dp.library()
    log = ReadLog(lib)
    rng = random.Random(7)
    numbers: set[int] = set()
    for _ in range(3000):
        t = _read(rng)
        h = dp.TlpHeader()
        raw = ctypes.create_string_buffer(bytes(t.pack_header()), 16)
        assert lib.dp_tlp_unpack(raw, ctypes.byref(h)) == 1
        number = lib.dp_reads_put_tlp(log.reads, ctypes.byref(h))
        assert number not in numbers and number > 0
        numbers.add(number)
        assert log.get(t.tag) == (
            number,
            t.address + t.get_first_be_offset(),
            t.get_be_byte_count(),
            False,
        ), repr(t)


def test_reads_by_tag_replaced_dropped_and_listed() -> None:
    log = ReadLog(dp.library())
    assert log.get(5) is None and log.tags() == []
    first = log.put(5, 0x1000, 64)
    assert log.get(5) == (first, 0x1000, 64, False)
    second = log.put(5, 0x2000, 128)  # the tag used again: a new read
    assert second > first and log.get(5) == (second, 0x2000, 128, False)
    log.put(0, 0x10, 4)
    log.put(TAGS - 1, 0x20, 8)
    assert log.tags() == [0, 5, TAGS - 1]
    log.drop(5)
    assert log.get(5) is None and log.tags() == [0, TAGS - 1]
    log.drop(5)  # dropping an empty tag is harmless
    assert log.get(0) == (second + 1, 0x10, 4, False)
    # a completion the library takes past the injector: the read has started; the
    # last one ends it; one for a tag with no read changes nothing
    lib = log.lib
    lib.dp_reads_cpl(log.reads, 0, 0)
    assert log.get(0) == (second + 1, 0x10, 4, True)
    lib.dp_reads_cpl(log.reads, 0, 1)
    assert log.get(0) is None and log.tags() == [TAGS - 1]
    lib.dp_reads_cpl(log.reads, 7, 1)
    assert log.tags() == [TAGS - 1]
    third = log.put(0, 0x30, 4)  # a new read under the tag has not started
    assert log.get(0) == (third, 0x30, 4, False)
