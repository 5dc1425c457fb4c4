"""A run's FST waveform, read with pywellen: its signals by the names GTKWave gives them,
its time unit, and the values of the text tracks (:mod:`tb.debug.annotate`).

GTKWave names a vector with its range (``pevb_dma_top.led[2:0]``); the dump's hierarchy
as pywellen gives it carries the width only, so a vector of width ``w`` is named
``[w-1:0]``, as every vector of the engine and the testbench is declared.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class FstError(ValueError):
    """The file is not a waveform dump pywellen can read."""


@dataclass(frozen=True)
class Dump:
    """A waveform dump: its time unit and its variables (dotted name -> width in bits)."""

    path: Path
    unit_ns: float
    widths: dict[str, int]

    def gtkwave_name(self, name: str) -> str | None:
        """GTKWave's name of the variable ``name`` (dotted, no range), None when the dump
        has no such variable."""
        width = self.widths.get(name)
        if width is None:
            return None
        return name if width == 1 else f"{name}[{width - 1}:0]"

    def gtkwave_names(self) -> set[str]:
        """GTKWave's names of all the dump's variables."""
        return {self.gtkwave_name(n) or n for n in self.widths}


def _open(path: Path):
    import pywellen

    try:
        return pywellen.Waveform(str(path))
    except Exception as e:  # pywellen raises its own (Rust) errors for bad files
        raise FstError(f"{path}: not a readable waveform ({e})") from e


def _unit_ns(wave) -> float:
    """The dump's time unit in ns."""
    return 10.0 ** (wave.timescale.unit.to_exponent() + 9) * wave.timescale.factor


def read_dump(path: Path) -> Dump:
    """The hierarchy and time unit of the dump at ``path`` (values are not read)."""
    wave = _open(path)
    widths = {v.full_name: v.bitwidth for v in wave.all_vars()}
    return Dump(Path(path), _unit_ns(wave), widths)


def text_values(path: Path, scope: str) -> dict[str, list[tuple[float, str]]]:
    """The values of every vector directly in ``scope`` (dotted) as text, one
    ``(time in ns, text)`` per change, leading NULs dropped; values with X or Z bits are
    left out."""
    wave = _open(path)
    unit_ns = _unit_ns(wave)
    out: dict[str, list[tuple[float, str]]] = {}
    for var in wave.all_vars():
        head, _, name = var.full_name.rpartition(".")
        if head != scope or var.bitwidth < 2:
            continue
        changes = out[name] = []
        for t, value in var.signal:
            if isinstance(value, int):
                raw = value.to_bytes((var.bitwidth + 7) // 8, "big")
                changes.append((t * unit_ns, raw.lstrip(b"\0").decode("latin-1")))
    return out
