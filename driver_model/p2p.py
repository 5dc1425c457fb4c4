"""GPU surface helpers of the picoevb-rdma driver (dGPU build): 64 KiB page arithmetic and
the scatter list of a pinned surface."""

from __future__ import annotations

from .sg import Scatter, page_chunks

GPU_PAGE_SHIFT = 16
GPU_PAGE_SIZE = 1 << GPU_PAGE_SHIFT
GPU_PAGE_OFFSET = GPU_PAGE_SIZE - 1
GPU_PAGE_MASK = ~GPU_PAGE_OFFSET


def pin_range(va: int, size: int) -> tuple[int, int, int]:
    """(va_aligned, offset, aligned_len) the driver passes to nvidia_p2p_get_pages."""
    offset = va & GPU_PAGE_OFFSET
    aligned_len = (offset + size + GPU_PAGE_OFFSET) & GPU_PAGE_MASK
    return va & GPU_PAGE_MASK, offset, aligned_len


def p2p_chunks(dma_addresses: list[int], offset: int, length: int) -> Scatter:
    """Bus (address, length) runs covering ``length`` bytes from byte ``offset`` of the
    pinned range: one chunk per 64 KiB page, the first one offset, runs merged where the
    pages are contiguous on the bus."""
    return page_chunks(dma_addresses, GPU_PAGE_SIZE, offset, length)
