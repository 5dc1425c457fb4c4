"""Backdoor access to the picoevb card's RAM (for scoreboards; the DMA path is not used),
and the engine's instance in either toplevel.

``pevb_axi_ram`` (instance ``card_ram_inst`` of the card top) keeps one memory of
bus-wide words: card byte ``a`` is byte ``a % lanes`` (little-endian) of word
``a // lanes``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..models.signals import bits_reader, handle_path, word_bits_readers


def card(dut):
    """The card's toplevel instance: ``dut`` itself, or its ``core`` in the transactor
    model's wrapper (``pevb_card_xact``)."""
    core = getattr(dut, "core", None) if hasattr(dut, "hip") else None
    return dut if core is None else core


class _RamCopy:
    """What the backdoor keeps of one memory (per simulator, for every test in it): a
    reader for each word, made when first read (its bits as the simulator's string,
    from the simulator's own handle: a cocotb handle object per word cost twice the
    reads, where cocotb's private API may be used: :mod:`tb.models.signals`), and the
    bytes of the last read."""

    def __init__(self, mem, size: int) -> None:
        self.mem = mem
        self.word = word_bits_readers(mem)
        self.readers: list[Callable[[], str] | None] = [None] * len(mem)
        self.image = np.zeros(size, dtype=np.uint8)
        self.read_once = False

    def read_words(self, first: int, count: int, lanes: int) -> None:
        """Read words ``first`` to ``first + count - 1`` into the image: their bit
        strings, highest word first, make one binary number whose bytes little-endian
        are theirs (no value object per word: ``mem.value`` builds one for each of the
        262,144 words of a 2 MiB RAM, about 2 s a read)."""
        readers = self.readers
        bits = []
        for i in range(first + count - 1, first - 1, -1):
            read = readers[i]
            if read is None:
                read = readers[i] = self.word(i)
            bits.append(read())
        if len(bits[0]) != 8 * lanes:
            raise ValueError(f"card RAM words are {len(bits[0])} bits, expected {8 * lanes}")
        try:
            value = int("".join(bits), 2)
        except ValueError:
            at = next(i for i, b in enumerate(bits) if b.strip("01"))
            word = first + count - 1 - at
            raise ValueError(
                f"card RAM word {word} (bytes {word * lanes:#x}..) is not all 0 and 1: {bits[at]}"
            ) from None
        size = count * lanes
        start = first * lanes
        self.image[start : start + size] = np.frombuffer(value.to_bytes(size, "little"), np.uint8)


_RAMS: dict[str, _RamCopy] = {}


def read_card_ram(dut, ram_size: int, lanes: int, *, whole: bool = False) -> np.ndarray:
    """The whole card RAM as a ``uint8`` array of ``ram_size`` bytes.

    In the transactor model's card (``pevb_card_xact``) the RTL marks the RAM's pages
    that took a write (``ram_dirty``): a read reads those again and takes the rest from
    the last read, then clears the marks (when there were any). Otherwise (or with
    ``whole``) every word is read. Bits that are not 0 or 1 raise a ``ValueError``
    naming the word."""
    core = card(dut)
    mem = core.card_ram_inst.mem
    words = len(mem)
    if words * lanes != ram_size:
        raise ValueError(f"card RAM holds {words * lanes} bytes, expected {ram_size}")
    path = handle_path(mem)
    ram = _RAMS.get(path)
    if ram is None or len(ram.image) != ram_size:
        ram = _RAMS[path] = _RamCopy(mem, ram_size)
    dirty = getattr(dut, "ram_dirty", None) if core is not dut else None
    marked = True
    if dirty is None or whole or not ram.read_once:
        ram.read_words(0, words, lanes)
    else:
        marks = bits_reader(dirty)()[::-1]  # bit p: page p
        page_words = words // len(marks)
        pages = [p for p, mark in enumerate(marks) if mark != "0"]
        for p in pages:
            ram.read_words(p * page_words, page_words, lanes)
        marked = bool(pages)  # none: nothing to clear
    if dirty is not None and marked:
        clear = dut.ram_dirty_clear
        clear.value = 1 - int(clear.value)
    ram.read_once = True
    return ram.image.copy()


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
