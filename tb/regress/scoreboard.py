"""The scoreboard of the random regression and of the fault tests.

:class:`Scoreboard` keeps the expected image of every memory (``numpy`` arrays), applies
each descriptor's copy according to what the engine reported (done, maybe: a byte may be
old or new, untouched), takes out the holes writes dropped on the way left, and compares
whole images: every byte that should change did, nothing else changed.
"""

from __future__ import annotations

import numpy as np


def _as_bytes(data) -> np.ndarray:
    """A ``uint8`` view of an array or of anything ``bytes()`` accepts."""
    if isinstance(data, np.ndarray):
        return data.astype(np.uint8, copy=False)
    return np.frombuffer(bytes(data), dtype=np.uint8)


class Scoreboard:
    """Expected images of every memory, checked whole against the real ones."""

    def __init__(self) -> None:
        self.images: dict[str, np.ndarray] = {}
        self.maybe: dict[str, np.ndarray] = {}
        self.old: dict[str, np.ndarray] = {}
        # per memory with "maybe" bytes: the image if every maybe-copy had landed
        self.new: dict[str, np.ndarray] = {}
        # per memory: bytes this step may leave holding anything (a result record of a
        # transfer cut part-way, whose contents depend on where it was cut)
        self.free: dict[str, np.ndarray] = {}
        # (memory, offset, bytes) of every write that never landed
        self.holes: list[tuple[str, int, int]] = []
        self.in_step = False

    def load(self, name: str, data) -> None:
        """Start tracking ``name`` with its current contents (in a step too: its old
        contents are these)."""
        self.images[name] = _as_bytes(data).copy()
        if self.in_step:
            self.old[name] = self.images[name].copy()
            self.maybe[name] = np.zeros(len(self.images[name]), dtype=bool)
            self.new.pop(name, None)

    def put(self, name: str, offset: int, data) -> None:
        """The testbench itself wrote ``data`` at ``offset`` of ``name`` (a source, guard
        bytes): every image of the step holds it, as if it had been there before."""
        if name not in self.images:
            return
        raw = _as_bytes(data)
        end = offset + len(raw)
        for images in (self.images, self.old, self.new):
            if name in images:
                images[name][offset:end] = raw

    def forget(self, name: str) -> None:
        """Stop tracking ``name``."""
        for images in (self.images, self.old, self.maybe, self.new, self.free):
            images.pop(name, None)

    def begin_step(self) -> None:
        """Snapshot the expected images: sources of this step read the old contents."""
        self.old = {k: v.copy() for k, v in self.images.items()}
        self.maybe = {k: np.zeros(len(v), dtype=bool) for k, v in self.images.items()}
        self.new = {}
        self.free = {}
        self.in_step = True

    def copy(self, src: str, src_off: int, dst: str, dst_off: int, n: int, state: str) -> None:
        """Apply one descriptor: ``done`` (must land), ``maybe`` (may land), or ``none``."""
        if state == "none" or dst not in self.images:
            return
        self.land(dst, dst_off, self.old[src][src_off : src_off + n], state)

    def land(self, dst: str, dst_off: int, data, state: str) -> None:
        """A write of known bytes (from memory not tracked here, such as a pattern the
        testbench made): ``done`` (must land), ``maybe`` (each byte old or new), or
        ``none``."""
        if state == "none" or dst not in self.images:
            return
        raw = _as_bytes(data)
        end = dst_off + len(raw)
        if state == "done":
            self.images[dst][dst_off:end] = raw
        else:
            self.maybe[dst][dst_off:end] = True
            self.new.setdefault(dst, self.old[dst].copy())[dst_off:end] = raw

    def anything(self, name: str, offset: int, n: int) -> None:
        """Bytes this step may leave holding any value (a record whose contents depend on
        where a reset cut the transfer); the check then takes what they hold."""
        if name in self.images:
            mask = self.free.setdefault(name, np.zeros(len(self.images[name]), dtype=bool))
            mask[offset : offset + n] = True

    def hole(self, name: str, offset: int, n: int) -> None:
        """A write of this step that never landed (dropped on the way, or discarded by
        its completer): its ``n`` bytes at ``offset`` of ``name`` keep what they held
        before the step."""
        if name not in self.images:
            return
        self.images[name][offset : offset + n] = self.old[name][offset : offset + n]
        if name in self.maybe:  # not even "maybe": those bytes were never written
            self.maybe[name][offset : offset + n] = False
        self.holes.append((name, offset, n))

    def check(self, name: str, actual) -> str | None:
        """Compare ``actual`` with the expected image of ``name``; a message when wrong.
        Where a byte was allowed to land or not, it must be the old or the new value; the
        expected image then takes the actual byte."""
        got = _as_bytes(actual)
        want = self.images[name]
        if len(got) != len(want):
            return f"{name}: size {len(got)} != {len(want)}"
        maybe = self.maybe.get(name)
        new = self.new.get(name)
        ok = got == want
        if maybe is not None and maybe.any() and new is not None:
            ok |= maybe & ((got == self.old[name]) | (got == new))
        free = self.free.get(name)
        if free is not None:
            ok |= free
        if not ok.all():
            bad = np.flatnonzero(~ok)
            first = int(bad[0])
            return (
                f"{name}: {len(bad)} byte(s) differ, first at {first:#x}: got "
                f"{int(got[first]):#04x} expected {int(want[first]):#04x} "
                f"(old {int(self.old.get(name, want)[first]):#04x}); "
                f"bad range {int(bad[0]):#x}..{int(bad[-1]):#x}"
            )
        if maybe is not None:
            want[maybe] = got[maybe]
        if free is not None:
            want[free] = got[free]
        return None

    def end_step(self) -> None:
        """Forget the step's maybe-copies (the images already follow what landed)."""
        self.new = {}
        self.maybe = {}
        self.free = {}
        self.in_step = False
