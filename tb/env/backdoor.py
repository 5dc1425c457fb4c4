"""Backdoor access to the picoevb card's RAM (for scoreboards; the DMA path is not used),
and the engine's instance in either toplevel.

``pevb_axi_ram`` (instance ``card_ram_inst`` of the card top) keeps one memory of
bus-wide words: card byte ``a`` is byte ``a % lanes`` (little-endian) of word
``a // lanes``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def card(dut):
    """The card's toplevel instance: ``dut`` itself, or its ``core`` in the transactor
    model's wrapper (``pevb_card_xact``)."""
    core = getattr(dut, "core", None) if hasattr(dut, "hip") else None
    return dut if core is None else core


def _word_readers(mem) -> list[Callable[[], str]]:
    """Each word of the memory ``mem``: a function giving its bits as the simulator's
    string (made once per memory and simulator, for every test in it)."""
    readers = _READERS.get(mem._path)
    if readers is None:
        readers = _READERS[mem._path] = [
            mem[i]._handle.get_signal_val_binstr for i in range(len(mem))
        ]
    return readers


_READERS: dict[str, list[Callable[[], str]]] = {}


def read_card_ram(dut, ram_size: int, lanes: int) -> np.ndarray:
    """The whole card RAM as a ``uint8`` array of ``ram_size`` bytes.

    The words' bit strings, highest word first, make one binary number, whose bytes
    little-endian are the RAM's: no value object per word (``mem.value`` builds one for
    each of the 262,144 words of a 2 MiB RAM, about 2 s a read)."""
    readers = _word_readers(card(dut).card_ram_inst.mem)
    if len(readers) * lanes != ram_size:
        raise ValueError(f"card RAM holds {len(readers) * lanes} bytes, expected {ram_size}")
    bits = [read() for read in reversed(readers)]
    if len(bits[0]) != 8 * lanes:
        raise ValueError(f"card RAM words are {len(bits[0])} bits, expected {8 * lanes}")
    try:
        value = int("".join(bits), 2)
    except ValueError:
        word = len(bits) - 1 - next(i for i, b in enumerate(bits) if b.strip("01"))
        raise ValueError(
            f"card RAM word {word} (bytes {word * lanes:#x}..) is not all 0 and 1: "
            f"{bits[len(bits) - 1 - word]}"
        ) from None
    return np.frombuffer(value.to_bytes(ram_size, "little"), dtype=np.uint8).copy()


def channel_busy(dut, c2h: bool, channel: int) -> Callable[[], bool]:
    """A function telling whether one DMA channel of the engine is busy, read from its
    status bit in the RTL (``ch_busy``, indexed H2C 0-3 then C2H 0-3): no register read,
    no TLP."""
    busy = engine(dut).ch_busy
    bit = 4 * c2h + channel

    def read() -> bool:
        return bool(int(busy.value) >> bit & 1)

    return read


def engine(dut):
    """The ``pevb_xdma`` instance of a toplevel: the card's (in its ``xdma_0`` IP
    instance, under ``core`` in the transactor model's wrapper), the XDMA drop-in's
    (``ip``), or that of the drop-in instance in a user's design (the first child
    holding a ``hip``)."""
    dut = card(dut)
    if hasattr(dut, "hip"):
        return dut.ip.xdma_inst
    if hasattr(dut, "xdma_0"):
        return dut.xdma_0.xdma_inst
    for child in dut:
        if hasattr(child, "hip") and hasattr(child, "ip"):
            return child.ip.xdma_inst
    raise LookupError(f"no XDMA engine under {dut._name}")
