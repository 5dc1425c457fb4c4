"""Text tracks in the waveform: each TLP and each descriptor, decoded, written into the
testbench-only module ``pevb_annot`` (``tb/verilog``) as the simulation runs, shown as
ASCII by the save file of :mod:`tb.debug.gtkwave`; the tracks and their labels are
:mod:`tb.debug.records`'. See docs/internals.md.
"""

from __future__ import annotations

from .records import ANNOT_INSTANCE, ANNOT_ROOT, TRACKS, encode, place


def find_annotations(dut):
    """The annotation module's handle in this simulation, or None (not a waves build)."""
    from ..env.backdoor import card

    try:  # bound into the card's toplevel (Verilator), in the transactor wrapper's core
        return getattr(card(dut), ANNOT_INSTANCE)
    except AttributeError:
        pass
    import cocotb

    return getattr(cocotb, "tops", {}).get(ANNOT_ROOT)


class WaveAnnotations:
    """A trace sink writing each record's label into its text track in the simulation."""

    def __init__(self, handle) -> None:
        self.signals = {name: getattr(handle, name) for name in TRACKS}
        self.chars = len(self.signals[TRACKS[0]]) // 8
        self._last: dict[str, str] = {}
        self.writes = 0

    def __call__(self, rec: dict) -> None:
        placed = place(rec)
        if placed is None:
            return
        track, text = placed
        text = text[: self.chars]
        if self._last.get(track) == text:
            # the same label twice in a row would be one value in the viewer: mark the
            # second so each TLP shows as its own box
            text = text[: self.chars - 2] + " *"
        self._last[track] = text
        self.signals[track].value = encode(text, self.chars)
        self.writes += 1
