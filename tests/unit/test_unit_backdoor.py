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
    def __init__(self, path: str, words: list[str]) -> None:
        self._path = path
        self.words = [_Word(w) for w in words]

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
