"""The backdoor read of the card RAM (tb/env/backdoor.py) on a stand-in memory: the
bytes in address order, and one clear error for a word that is not all 0 and 1 or a
RAM of another size or width."""

from __future__ import annotations

import numpy as np
import pytest

from tb.env import backdoor


class _Word:
    def __init__(self, bits: str) -> None:
        self._handle = self
        self.bits = bits

    def get_signal_val_binstr(self) -> str:
        return self.bits


class _Mem:
    """A stand-in memory: its words by index, through the simulator's own handle
    (``_handle.get_handle_by_index``, None past the end) as the backdoor reads them."""

    def __init__(self, path: str, words: list[str]) -> None:
        self._path = path
        self._handle = self
        self.words = [_Word(w) for w in words]

    def get_handle_by_index(self, i: int) -> _Word | None:
        return self.words[i] if 0 <= i < len(self.words) else None

    def __len__(self) -> int:
        return len(self.words)

    def __getitem__(self, i: int) -> _Word:
        return self.words[i]


class _Dut:
    def __init__(self, mem: _Mem) -> None:
        self.card_ram_inst = type("Ram", (), {"mem": mem})()


def _dut(path: str, words: list[int], lanes: int) -> _Dut:
    return _Dut(_Mem(path, [format(w, f"0{8 * lanes}b") for w in words]))


def test_bytes_in_address_order_and_later_writes_seen():
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, 64, dtype=np.uint8)
    words = [int.from_bytes(data[i : i + 8].tobytes(), "little") for i in range(0, 64, 8)]
    dut = _dut("t.order", words, 8)
    assert backdoor.read_card_ram(dut, 64, 8).tobytes() == data.tobytes()
    dut.card_ram_inst.mem.words[3].bits = format(0xA5, "064b")  # a write after the first read
    got = backdoor.read_card_ram(dut, 64, 8)
    assert got[24] == 0xA5 and got[25:32].tobytes() == bytes(7)


def test_x_bits_size_and_width_are_named():
    dut = _dut("t.x", [0] * 4, 8)
    dut.card_ram_inst.mem.words[2].bits = "x" * 64
    with pytest.raises(ValueError, match=r"card RAM word 2 \(bytes 0x10\.\.\) is not all 0 and 1"):
        backdoor.read_card_ram(dut, 32, 8)
    with pytest.raises(ValueError, match="card RAM holds 32 bytes, expected 64"):
        backdoor.read_card_ram(_dut("t.size", [0] * 4, 8), 64, 8)
    with pytest.raises(ValueError, match="card RAM words are 64 bits, expected 128"):
        backdoor.read_card_ram(_dut("t.width", [0] * 4, 8), 64, 16)


class _Signal:
    """A stand-in signal: its bits, and ``value`` as an int (writes counted)."""

    def __init__(self, bits: str) -> None:
        self._handle = self
        self.bits = bits
        self.writes = 0

    def get_signal_val_binstr(self) -> str:
        return self.bits

    @property
    def value(self) -> int:
        return int(self.bits, 2)

    @value.setter
    def value(self, v: int) -> None:
        self.bits = format(v, f"0{len(self.bits)}b")
        self.writes += 1


class _XactDut:
    """The transactor model's card: the wrapper with its hip, the card as ``core``, and
    the RAM's written-page marks."""

    def __init__(self, mem: _Mem, pages: int) -> None:
        self.hip = object()
        self.core = _Dut(mem)
        self.ram_dirty = _Signal("1" * pages)
        self.ram_dirty_clear = _Signal("0")

    def mark(self, *pages: int) -> None:
        bits = list(self.ram_dirty.bits[::-1])
        for p in pages:
            bits[p] = "1"
        self.ram_dirty.bits = "".join(bits)[::-1]

    def clear(self) -> None:  # what the RTL's next edge does with a changed clear
        self.ram_dirty.bits = "0" * len(self.ram_dirty.bits)


def test_written_pages_alone_are_read_again():
    """With the RTL's marks (4 pages of 2 words here) a read reads the marked pages and
    keeps the rest from the last read; the first read and ``whole`` read every word; each
    read asks the RTL to clear the marks, unless none was set."""
    words = [0x1111 * (i + 1) for i in range(8)]
    dut = _XactDut(_Mem("t.pages", [format(w, "064b") for w in words]), 4)
    mem = dut.core.card_ram_inst.mem
    first = backdoor.read_card_ram(dut, 64, 8)
    assert first[:8].tobytes() == (0x1111).to_bytes(8, "little")
    assert dut.ram_dirty_clear.writes == 1
    dut.clear()
    mem.words[1].bits = format(0xAA, "064b")  # page 0, not marked: not read again
    mem.words[5].bits = format(0xBB, "064b")  # page 2, marked
    dut.mark(2)
    got = backdoor.read_card_ram(dut, 64, 8)
    assert got[8] == 0x22 and got[40] == 0xBB
    assert dut.ram_dirty_clear.writes == 2 and dut.ram_dirty_clear.value == 0
    dut.clear()
    assert backdoor.read_card_ram(dut, 64, 8, whole=True)[8] == 0xAA
    dut.clear()
    writes = dut.ram_dirty_clear.writes
    assert backdoor.read_card_ram(dut, 64, 8)[8] == 0xAA  # nothing marked
    assert dut.ram_dirty_clear.writes == writes, "a clear asked with no page marked"
    mem.words[6].bits = "z" * 64
    dut.mark(3)
    with pytest.raises(ValueError, match=r"card RAM word 6 \(bytes 0x30\.\.\) is not all 0 and 1"):
        backdoor.read_card_ram(dut, 64, 8)


def test_public_handles_where_the_private_api_is_not_verified(monkeypatch):
    """On a cocotb other than the verified one the reads go through ``handle.value``
    (the stand-ins' ``value`` is their bits), with the same bytes and errors."""
    from tb.models import VERIFIED, signals

    assert signals.private_handles(dict(VERIFIED))
    assert not signals.private_handles({**VERIFIED, "cocotb": "2.2.0"})
    monkeypatch.setattr(signals, "_PRIVATE", [False])
    monkeypatch.setattr(_Word, "value", property(lambda w: w.bits), raising=False)
    words = [0x0102030405060708, 0x1112131415161718]
    dut = _dut("t.public", words, 8)
    got = backdoor.read_card_ram(dut, 16, 8)
    assert got.tobytes() == b"".join(w.to_bytes(8, "little") for w in words)
    word = signals.word_bits_readers(dut.card_ram_inst.mem)
    with pytest.raises(IndexError, match=r"t\.public has no word 2"):
        word(2)
