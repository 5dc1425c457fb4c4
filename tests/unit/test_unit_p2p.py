"""The driver's GPU page arithmetic and surface scatter lists (no simulator)."""

from __future__ import annotations

import pytest

from driver_model.p2p import GPU_PAGE_SIZE, p2p_chunks, pin_range


def test_pin_range_rounds_like_picoevb():
    assert pin_range(0x7F40_0000_0200, 4096) == (0x7F40_0000_0000, 0x200, GPU_PAGE_SIZE)
    assert pin_range(0x7F40_0001_FFFF, 2) == (0x7F40_0001_0000, 0xFFFF, 2 * GPU_PAGE_SIZE)
    assert pin_range(0x7F40_0020_0000, 4 << 20) == (0x7F40_0020_0000, 0, 4 << 20)


def test_chunks_offset_and_coalescing():
    pages = [0x1_0000, 0x2_0000, 0x9_0000, 0xA_0000]  # 0,1 contiguous; 2,3 contiguous
    assert p2p_chunks(pages, 0x200, 0x100) == [(0x1_0200, 0x100)]
    assert p2p_chunks(pages, 0xFF00, 0x10100) == [(0x1_FF00, 0x10100)]
    assert p2p_chunks(pages, 0x1FFFF, 3) == [(0x2_FFFF, 1), (0x9_0000, 2)]
    assert p2p_chunks(pages, 0, 4 * GPU_PAGE_SIZE) == [(0x1_0000, 0x20000), (0x9_0000, 0x20000)]
    with pytest.raises(ValueError):
        p2p_chunks(pages, 1, 4 * GPU_PAGE_SIZE)
    with pytest.raises(ValueError):
        p2p_chunks(pages, 0, 0)
