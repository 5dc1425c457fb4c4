"""Backdoor access to the RTL's card RAM (for scoreboards; the DMA path is not used).

``pevb_card_ram`` keeps one memory per byte lane: card byte ``a`` lives in lane
``a % BYTE_LANES`` at word ``a // BYTE_LANES``.
"""

from __future__ import annotations

import numpy as np


def read_card_ram(dut, ram_size: int, lanes: int) -> np.ndarray:
    """The whole card RAM as a ``uint8`` array of ``ram_size`` bytes."""
    words = ram_size // lanes
    image = np.empty(ram_size, dtype=np.uint8)
    for n in range(lanes):
        mem = dut.ram_inst.lane[n].mem
        values = mem.value
        image[n::lanes] = np.fromiter((int(v) for v in values), dtype=np.uint8, count=words)
    return image
