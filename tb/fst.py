"""Reading the signal hierarchy of an FST waveform (no values; enough to check names).

An FST file is a sequence of blocks (type byte, 8-byte big-endian length); the hierarchy
block is gzip (Icarus) or LZ4 (Verilator) compressed and holds scope, upscope, attribute
and variable tokens. :func:`fst_signals` returns every variable's full name, scopes joined
with dots, as GTKWave shows it (vectors with their ``[msb:lsb]``).
"""

from __future__ import annotations

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
        body = data[pos + 9:pos + 1 + length]
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
