"""Scatter lists: pages -> coalesced bus chunks, and slicing a scatter list.

A scatter list is a list of ``(bus address, length)`` pieces in transfer order.
"""

from __future__ import annotations

from collections.abc import Sequence

Scatter = list[tuple[int, int]]


def page_chunks(addresses: Sequence[int], page_size: int, offset: int, length: int) -> Scatter:
    """Bus runs covering ``length`` bytes from byte ``offset`` of a range of pages whose
    bus addresses are ``addresses``: one chunk per page (the first one offset), merged
    where consecutive pages are contiguous on the bus."""
    if offset < 0 or length <= 0 or offset + length > len(addresses) * page_size:
        raise ValueError(f"{length} bytes at offset {offset:#x} outside the {len(addresses)} pages")
    out: Scatter = []
    pos = offset
    end = offset + length
    while pos < end:
        page, po = divmod(pos, page_size)
        n = min(page_size - po, end - pos)
        addr = addresses[page] + po
        if out and out[-1][0] + out[-1][1] == addr:
            out[-1] = (out[-1][0], out[-1][1] + n)
        else:
            out.append((addr, n))
        pos += n
    return out


def total(sg: Sequence[tuple[int, int]]) -> int:
    """Bytes a scatter list covers."""
    return sum(n for _, n in sg)


def slice_scatter(sg: Sequence[tuple[int, int]], start: int, length: int) -> Scatter:
    """The pieces covering bytes ``[start, start + length)`` of the transfer."""
    if start < 0 or length <= 0 or start + length > total(sg):
        raise ValueError(f"slice {start:#x}+{length:#x} outside a {total(sg):#x}-byte list")
    out: Scatter = []
    pos = 0
    end = start + length
    for addr, n in sg:
        lo, hi = max(pos, start), min(pos + n, end)
        if lo < hi:
            out.append((addr + lo - pos, hi - lo))
        pos += n
        if pos >= end:
            break
    return out


def overlaps(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> bool:
    """Whether any bus run of ``a`` shares a byte with one of ``b``."""
    xs = sorted((addr, addr + n) for addr, n in a if n > 0)
    ys = sorted((addr, addr + n) for addr, n in b if n > 0)
    i = j = 0
    while i < len(xs) and j < len(ys):
        (a0, a1), (b0, b1) = xs[i], ys[j]
        if a0 < b1 and b0 < a1:
            return True
        if a1 <= b1:
            i += 1
        else:
            j += 1
    return False
