"""Reading the signal hierarchy of an FST waveform (no values; enough to check names).

An FST file is a sequence of blocks (type byte, 8-byte big-endian length); the hierarchy
block is gzip (Icarus) or LZ4 (Verilator) compressed and holds scope, upscope, attribute
and variable tokens. :func:`fst_signals` returns every variable's full name, scopes joined
with dots, as GTKWave shows it (vectors with their ``[msb:lsb]``).
"""

from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

BL_HIER, BL_HIER_LZ4, BL_HIER_LZ4DUO = 4, 6, 7
ST_SCOPE, ST_UPSCOPE, ST_ATTRBEGIN, ST_ATTREND = 254, 255, 252, 253
VT_MAX = 29  # variable types are 0..29


@dataclass(frozen=True)
class FstVar:
    """One variable: full dotted name, bit width, and whether it aliases another."""

    name: str
    width: int
    alias: bool


class FstError(ValueError):
    """The file is not an FST waveform this reader understands."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def _cstr(buf: bytes, pos: int) -> tuple[str, int]:
    end = buf.index(0, pos)
    return buf[pos:end].decode("latin-1"), end + 1


def _hierarchy(data: bytes) -> bytes:
    pos = 0
    while pos + 9 <= len(data):
        kind = data[pos]
        (length,) = struct.unpack_from(">Q", data, pos + 1)
        body = data[pos + 9 : pos + 1 + length]
        pos += 1 + length
        if kind == BL_HIER:
            return zlib.decompress(body[8:], zlib.MAX_WBITS | 32)  # gzip stream
        if kind in (BL_HIER_LZ4, BL_HIER_LZ4DUO):
            import lz4.block  # type: ignore[import-not-found]

            (size,) = struct.unpack_from(">Q", body, 0)
            if kind == BL_HIER_LZ4:
                return lz4.block.decompress(body[8:], uncompressed_size=size)
            once, p = _varint(body, 8)
            inner = lz4.block.decompress(body[p:], uncompressed_size=once)
            return lz4.block.decompress(inner, uncompressed_size=size)
    raise FstError("no hierarchy block")


def fst_timescale_ns(path: Path) -> float:
    """The dump's time unit in ns (from the header block: 10**exponent seconds)."""
    with open(path, "rb") as f:
        head = f.read(74)
    if len(head) < 74 or head[0] != 0:
        raise FstError("no header block")
    exponent = struct.unpack_from(">b", head, 73)[0]
    return 10.0 ** (exponent + 9)


def fst_vars(path: Path) -> list[FstVar]:
    """Every variable of the FST file at ``path``."""
    hier = _hierarchy(Path(path).read_bytes())
    scopes: list[str] = []
    out: list[FstVar] = []
    pos = 0
    while pos < len(hier):
        tag = hier[pos]
        pos += 1
        if tag == ST_SCOPE:
            pos += 1  # scope type
            name, pos = _cstr(hier, pos)
            _, pos = _cstr(hier, pos)  # component
            scopes.append(name)
        elif tag == ST_UPSCOPE:
            scopes.pop()
        elif tag == ST_ATTRBEGIN:
            pos += 2
            _, pos = _cstr(hier, pos)
            _, pos = _varint(hier, pos)
        elif tag == ST_ATTREND:
            continue
        elif tag <= VT_MAX:
            pos += 1  # direction
            name, pos = _cstr(hier, pos)
            width, pos = _varint(hier, pos)
            alias, pos = _varint(hier, pos)
            out.append(FstVar(".".join([*scopes, name]), width, alias != 0))
        else:
            raise FstError(f"unknown hierarchy token {tag} at {pos - 1}")
    return out


def fst_signals(path: Path) -> set[str]:
    """The full names of the file's variables."""
    return {v.name for v in fst_vars(path)}


_UNITS_NS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0, "ps": 1e-3, "fs": 1e-6}


def text_values(path: Path, scope: str) -> dict[str, list[tuple[float, str]]]:
    """The values of every vector directly in ``scope`` (dotted, as :func:`fst_vars`
    names it) as text, one ``(time in ns, text)`` per change (leading NULs dropped).
    Reads the values through GTKWave's ``fst2vcd``; raises ``FileNotFoundError`` when it
    is not installed."""
    import shutil
    import subprocess

    tool = shutil.which("fst2vcd")
    if tool is None:
        raise FileNotFoundError("fst2vcd (part of GTKWave: apt-get install gtkwave)")
    vcd = subprocess.run([tool, str(path)], check=True, capture_output=True, text=True).stdout
    header, _, _ = vcd.partition("$enddefinitions")
    scale = re.search(r"\$timescale\s+(\d+)\s*([munpf]?s)", header)
    unit_ns = int(scale.group(1)) * _UNITS_NS[scale.group(2)] if scale else 1.0
    scopes: list[str] = []
    ids: dict[str, str] = {}
    out: dict[str, list[tuple[float, str]]] = {}
    now = 0.0
    for line in vcd.splitlines():
        words = line.split()
        if not words:
            continue
        head = words[0]
        if head == "$scope":
            scopes.append(words[2])
        elif head == "$upscope":
            scopes.pop()
        elif head == "$var" and ".".join(scopes) == scope and int(words[2]) > 1:
            ids[words[3]] = words[4]
            out[words[4]] = []
        elif head.startswith("#"):
            now = int(head[1:]) * unit_ns
        elif head[0] in "bB" and len(words) == 2 and words[1] in ids:
            bits = head[1:]
            if set(bits) <= {"0", "1"}:
                raw = int(bits, 2).to_bytes((len(bits) + 7) // 8, "big")
                out[ids[words[1]]].append((now, raw.lstrip(b"\0").decode("latin-1")))
    return out
