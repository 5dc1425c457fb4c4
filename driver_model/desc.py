"""XDMA descriptors: the 32-byte format, and chains built from scatter lists.

Layout (PG195, little-endian, 32-byte aligned in host memory)::

    +0x00 control: magic 0xAD4B [31:16], Nxt_adj [13:8], EOP [4], Completed [1], Stop [0]
    +0x04 length [27:0] in bytes
    +0x08 source address (64 bit)
    +0x10 destination address (64 bit)
    +0x18 next descriptor address (64 bit)
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .regs import Field

DESC_SIZE = 32
# byte offsets of the words of a descriptor (the table above)
DESC_CONTROL_OFFSET = 0x00
DESC_LENGTH_OFFSET = 0x04
DESC_SRC_OFFSET = 0x08
DESC_DST_OFFSET = 0x10
DESC_NEXT_OFFSET = 0x18
DESC_ALIGN = 32
DESC_MAGIC = 0xAD4B
DESC_MAX_LEN = (1 << 28) - 1
# adjacent blocks stay inside 2 KiB groups of 64 descriptors (libxdma), hence inside 4 KiB
ADJ_GROUP = 64
MAX_ADJ = ADJ_GROUP - 1
# libxdma's longest chain
MAX_CHAIN = 0x800

CTRL_MAGIC = Field(16, 16)
CTRL_NXT_ADJ = Field(8, 6)
LEN_FIELD = Field(0, 28)

_STRUCT = struct.Struct("<IIQQQ")


class DescFlag(enum.IntFlag):
    """Descriptor control bits."""

    STOP = 1 << 0
    COMPLETED = 1 << 1
    EOP = 1 << 4


LAST_FLAGS = DescFlag.STOP | DescFlag.COMPLETED | DescFlag.EOP
NO_FLAGS = DescFlag(0)


class DescriptorError(ValueError):
    """A descriptor or chain that cannot be encoded."""


@dataclass
class Descriptor:
    """One XDMA descriptor."""

    src: int
    dst: int
    length: int
    flags: DescFlag = NO_FLAGS
    next: int = 0
    nxt_adj: int = 0
    magic: int = DESC_MAGIC

    @property
    def control(self) -> int:
        """The control word."""
        return CTRL_MAGIC.put(self.magic) | CTRL_NXT_ADJ.put(self.nxt_adj) | int(self.flags)

    def encode(self) -> bytes:
        """The 32 bytes of this descriptor."""
        if not 0 <= self.length <= DESC_MAX_LEN:
            raise DescriptorError(f"length {self.length} outside 0..{DESC_MAX_LEN}")
        if not 0 <= self.nxt_adj <= MAX_ADJ:
            raise DescriptorError(f"nxt_adj {self.nxt_adj} outside 0..{MAX_ADJ}")
        for name in ("src", "dst", "next"):
            v = getattr(self, name)
            if not 0 <= v < 1 << 64:
                raise DescriptorError(f"{name} address {v:#x} is not a 64-bit address")
        return _STRUCT.pack(self.control, self.length, self.src, self.dst, self.next)

    @classmethod
    def decode(cls, data: bytes) -> Descriptor:
        """Parse 32 bytes (the magic is kept as found, not checked)."""
        if len(data) != DESC_SIZE:
            raise DescriptorError(f"a descriptor is {DESC_SIZE} bytes, got {len(data)}")
        control, length, src, dst, nxt = _STRUCT.unpack(data)
        return cls(
            src=src,
            dst=dst,
            length=LEN_FIELD.get(length),
            flags=DescFlag(control & int(LAST_FLAGS)),
            next=nxt,
            nxt_adj=CTRL_NXT_ADJ.get(control),
            magic=CTRL_MAGIC.get(control),
        )


# the result a C2H stream channel writes to each descriptor's source address (PG195,
# "C2H Stream Writeback"): {0x52B4 << 16 | EOP, length} as two little-endian DWORDs
C2H_RESULT_MAGIC = 0x52B4
C2H_RESULT_SIZE = 8
_RESULT = struct.Struct("<II")


@dataclass(frozen=True)
class C2hResult:
    """A C2H stream descriptor's result: the bytes it received and whether the packet
    ended in it (tlast)."""

    length: int
    eop: bool

    @classmethod
    def parse(cls, data: bytes) -> C2hResult:
        """The result in the first 8 bytes of ``data``; ``DescriptorError`` when they are
        not one (the magic is missing: never written, or overwritten)."""
        status, length = _RESULT.unpack_from(data)
        if status >> 16 != C2H_RESULT_MAGIC or status & 0xFFFE:
            raise DescriptorError(f"not a C2H stream result: status {status:#010x}")
        return cls(length, bool(status & 1))

    def pack(self) -> bytes:
        """The 8 bytes the engine writes for this result."""
        return _RESULT.pack(C2H_RESULT_MAGIC << 16 | int(self.eop), self.length)


@dataclass(frozen=True)
class Segment:
    """One contiguous piece of a transfer: source, destination, length in bytes."""

    src: int
    dst: int
    length: int


def adjacent_count(addrs: Sequence[int], start: int) -> int:
    """Descriptors stored contiguously after ``addrs[start]`` in its 2 KiB group (max 63)."""
    base = addrs[start]
    room = MAX_ADJ - ((base & 0xFFF) >> 5) % ADJ_GROUP
    n = 0
    while n < room and start + n + 1 < len(addrs) and addrs[start + n + 1] == base + (n + 1) * 32:
        n += 1
    return n


@dataclass
class Chain:
    """A linked descriptor chain and where each descriptor lives.

    ``first_adj`` is the value for the SGDMA Dsc_Adj register.
    """

    descriptors: list[Descriptor]
    addresses: list[int]
    first_adj: int = 0
    segments: list[Segment] = field(default_factory=list)

    @property
    def first(self) -> int:
        """Address of the first descriptor (SGDMA descriptor address register)."""
        return self.addresses[0]

    def __len__(self) -> int:
        return len(self.descriptors)

    def blocks(self) -> dict[int, bytes]:
        """Bytes to write, keyed by address, merging contiguous descriptors."""
        out: dict[int, bytearray] = {}
        last_addr: int | None = None
        run_start = 0
        for addr, d in zip(self.addresses, self.descriptors, strict=True):
            if last_addr is not None and addr == last_addr + DESC_SIZE:
                out[run_start] += d.encode()
            else:
                run_start = addr
                out[run_start] = bytearray(d.encode())
            last_addr = addr
        return {a: bytes(b) for a, b in out.items()}


def split_segments(segments: Iterable[Segment], max_len: int = DESC_MAX_LEN) -> list[Segment]:
    """Split segments so that none is longer than ``max_len``."""
    if not 1 <= max_len <= DESC_MAX_LEN:
        raise DescriptorError(f"max_len {max_len} outside 1..{DESC_MAX_LEN}")
    out: list[Segment] = []
    for s in segments:
        if s.length <= 0:
            raise DescriptorError(f"segment of length {s.length}")
        for name, at in (("source", s.src), ("destination", s.dst)):
            if not 0 <= at or at + s.length > 1 << 64:
                raise DescriptorError(
                    f"segment of {s.length} bytes: its {name} {at:#x} runs past the 64-bit"
                    " address space"
                )
        off = 0
        while off < s.length:
            n = min(max_len, s.length - off)
            out.append(Segment(s.src + off, s.dst + off, n))
            off += n
    return out


def pair_scatter(src: Sequence[tuple[int, int]], dst: Sequence[tuple[int, int]]) -> list[Segment]:
    """Segments copying a source scatter list onto a destination scatter list.

    Each list holds ``(address, length)`` pieces; both must total the same length. Every
    segment lies inside one source piece and one destination piece.
    """
    if sum(n for _, n in src) != sum(n for _, n in dst):
        raise DescriptorError("source and destination scatter lists differ in length")
    out: list[Segment] = []
    si = di = 0
    so = do = 0
    while si < len(src) and di < len(dst):
        (sa, sn), (da, dn) = src[si], dst[di]
        n = min(sn - so, dn - do)
        if n > 0:
            out.append(Segment(sa + so, da + do, n))
        so += n
        do += n
        if so == sn:
            si, so = si + 1, 0
        if do == dn:
            di, do = di + 1, 0
    return out


def build_chain(
    segments: Iterable[Segment],
    addresses: Sequence[int] | int,
    *,
    max_len: int = DESC_MAX_LEN,
    completed: Iterable[int] | None = None,
    stop_at: int | None = None,
    eop: Iterable[int] | None = None,
) -> Chain:
    """Build a linked chain of descriptors for ``segments``.

    ``addresses`` is the base of a contiguous descriptor array, or one 32-byte aligned
    address per descriptor (after splitting at ``max_len``). Adjacent counts describe the
    contiguous runs so an engine may prefetch them, never across a 2 KiB group (hence
    never across 4 KiB). The last descriptor gets Stop|EOP|Completed and next = 0.
    ``completed`` adds the Completed flag to these indices; ``stop_at`` ends the chain
    early with Stop on that index (later descriptors are still written and linked);
    ``eop`` adds EOP (the end of a packet, for stream channels) to these indices.
    """
    segs = split_segments(segments, max_len)
    if not segs:
        raise DescriptorError("a chain needs at least one segment")
    if isinstance(addresses, int):
        addrs = [addresses + i * DESC_SIZE for i in range(len(segs))]
    else:
        addrs = list(addresses)
        if len(addrs) != len(segs):
            raise DescriptorError(f"{len(segs)} descriptors but {len(addrs)} addresses")
    for a in addrs:
        if a % DESC_ALIGN:
            raise DescriptorError(f"descriptor address {a:#x} is not 32-byte aligned")
    completed_set = set(completed or ())
    eop_set = set(eop or ())
    descs: list[Descriptor] = []
    last = len(segs) - 1
    for i, s in enumerate(segs):
        flags = DescFlag(0)
        if i in completed_set:
            flags |= DescFlag.COMPLETED
        if i == stop_at:
            flags |= DescFlag.STOP
        if i in eop_set:
            flags |= DescFlag.EOP
        if i == last:
            flags |= LAST_FLAGS
            nxt, adj = 0, 0
        else:
            nxt, adj = addrs[i + 1], adjacent_count(addrs, i + 1)
        d = Descriptor(s.src, s.dst, s.length, flags, nxt, adj)
        d.encode()  # (every field checked now: a chain built is one that can be written)
        descs.append(d)
    return Chain(descs, addrs, adjacent_count(addrs, 0), segs)
