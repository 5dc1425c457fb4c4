"""Backdoor access to the picoevb card's RAM (for scoreboards; the DMA path is not used),
and the engine's instance in either toplevel.

``pevb_axi_ram`` (instance ``card_ram_inst`` of the card top) keeps one memory of
bus-wide words: card byte ``a`` is byte ``a % lanes`` (little-endian) of word
``a // lanes``.
"""

from __future__ import annotations

import numpy as np


def card(dut):
    """The card's toplevel instance: ``dut`` itself, or its ``core`` in the transactor
    model's wrapper (``pevb_card_xact``)."""
    core = getattr(dut, "core", None) if hasattr(dut, "hip") else None
    return dut if core is None else core


def read_card_ram(dut, ram_size: int, lanes: int) -> np.ndarray:
    """The whole card RAM as a ``uint8`` array of ``ram_size`` bytes."""
    words = [int(v).to_bytes(lanes, "little") for v in card(dut).card_ram_inst.mem.value]
    if len(words) * lanes != ram_size:
        raise ValueError(f"card RAM holds {len(words) * lanes} bytes, expected {ram_size}")
    return np.frombuffer(b"".join(words), dtype=np.uint8).copy()


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
