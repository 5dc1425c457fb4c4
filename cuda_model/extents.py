"""A free-extent allocator over a range of equal-sized units (pages, 512 B blocks).

Free space is a sorted list of disjoint ``[start, end)`` runs, so a model of a 128 GiB
aperture or an 80 GB VRAM costs a few entries, not one per page.
"""

from __future__ import annotations

import bisect


class ExtentAllocator:
    """First-fit allocation of unit numbers in ``[0, total)``."""

    def __init__(self, total: int) -> None:
        self.total = total
        self._starts: list[int] = [0] if total else []
        self._ends: list[int] = [total] if total else []
        self.free_units = total

    def runs(self) -> list[tuple[int, int]]:
        """The free runs as ``(start, end)`` pairs (a copy, for tests and reports)."""
        return list(zip(self._starts, self._ends, strict=True))

    def alloc(self, count: int, align: int = 1) -> int | None:
        """Take ``count`` contiguous units starting at a multiple of ``align``; None if none."""
        for i, (s, e) in enumerate(zip(self._starts, self._ends, strict=True)):
            a = -(-s // align) * align
            if a + count <= e:
                self._take(i, a, a + count)
                return a
        return None

    def alloc_scatter(self, count: int) -> list[int] | None:
        """Take ``count`` units, contiguous when a run is long enough, else from several runs
        (lowest first). None when fewer than ``count`` units are free."""
        if count > self.free_units:
            return None
        start = self.alloc(count)
        if start is not None:
            return list(range(start, start + count))
        return self.alloc_lowest(count)

    def alloc_lowest(self, count: int) -> list[int] | None:
        """Take the ``count`` lowest free units, wherever they are (a page allocator:
        contiguous on an unfragmented space, scattered on a fragmented one)."""
        if count > self.free_units:
            return None
        units: list[int] = []
        while len(units) < count:
            s, e = self._starts[0], self._ends[0]
            n = min(e - s, count - len(units))
            self._take(0, s, s + n)
            units.extend(range(s, s + n))
        return units

    def reserve(self, start: int, count: int) -> None:
        """Mark ``[start, start + count)`` used; it must be free."""
        i = bisect.bisect_right(self._starts, start) - 1
        if i < 0 or start + count > self._ends[i]:
            raise ValueError(f"units {start}..{start + count - 1} are not free")
        self._take(i, start, start + count)

    def free(self, start: int, count: int = 1) -> None:
        """Return ``[start, start + count)``; freeing a free unit is an error."""
        end = start + count
        if start < 0 or end > self.total or count <= 0:
            raise ValueError(f"bad range {start}+{count}")
        i = bisect.bisect_right(self._starts, start)
        if (i > 0 and self._ends[i - 1] > start) or (
            i < len(self._starts) and self._starts[i] < end
        ):
            raise ValueError(f"double free of units {start}..{end - 1}")
        merge_left = i > 0 and self._ends[i - 1] == start
        merge_right = i < len(self._starts) and self._starts[i] == end
        if merge_left and merge_right:
            self._ends[i - 1] = self._ends[i]
            del self._starts[i], self._ends[i]
        elif merge_left:
            self._ends[i - 1] = end
        elif merge_right:
            self._starts[i] = start
        else:
            self._starts.insert(i, start)
            self._ends.insert(i, end)
        self.free_units += count

    def _take(self, i: int, a: int, b: int) -> None:
        s, e = self._starts[i], self._ends[i]
        if a == s and b == e:
            del self._starts[i], self._ends[i]
        elif a == s:
            self._starts[i] = b
        elif b == e:
            self._ends[i] = a
        else:
            self._ends[i] = a
            self._starts.insert(i + 1, b)
            self._ends.insert(i + 1, e)
        self.free_units -= b - a
