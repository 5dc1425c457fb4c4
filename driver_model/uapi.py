"""The picoevb-rdma user API: ioctl numbers and argument structs, byte for byte.

The numbers are computed with the Linux ``_IOC`` encoding (x86-64 / generic layout: nr in
bits 7:0, type in 15:8, size in 29:16, direction in 31:30) from ``ctypes`` structures that
have the C header's natural alignment, so the argument bytes a C program passes decode to
the same fields here (``struct picoevb_rdma_pin_cuda`` is 24 bytes: 8 + 8 + 4 + 4 padding).
"""

from __future__ import annotations

import ctypes

# --- the _IOC encoding (include/uapi/asm-generic/ioctl.h) ---------------------------------
IOC_NRBITS = 8
IOC_TYPEBITS = 8
IOC_SIZEBITS = 14
IOC_DIRBITS = 2
IOC_NRSHIFT = 0
IOC_TYPESHIFT = IOC_NRSHIFT + IOC_NRBITS
IOC_SIZESHIFT = IOC_TYPESHIFT + IOC_TYPEBITS
IOC_DIRSHIFT = IOC_SIZESHIFT + IOC_SIZEBITS
IOC_NONE = 0
IOC_WRITE = 1
IOC_READ = 2


def IOC(direction: int, type_: int | str, nr: int, size: int) -> int:
    """``_IOC(dir, type, nr, size)``."""
    t = ord(type_) if isinstance(type_, str) else type_
    if not (
        0 <= direction < 1 << IOC_DIRBITS
        and 0 <= t < 1 << IOC_TYPEBITS
        and 0 <= nr < 1 << IOC_NRBITS
        and 0 <= size < 1 << IOC_SIZEBITS
    ):
        raise ValueError(f"_IOC field out of range: dir={direction} type={t} nr={nr} size={size}")
    return (
        (direction << IOC_DIRSHIFT)
        | (t << IOC_TYPESHIFT)
        | (nr << IOC_NRSHIFT)
        | (size << IOC_SIZESHIFT)
    )


def IOW(type_: int | str, nr: int, ctype: type) -> int:
    """``_IOW(type, nr, T)``: user space writes the argument."""
    return IOC(IOC_WRITE, type_, nr, ctypes.sizeof(ctype))


def IOR(type_: int | str, nr: int, ctype: type) -> int:
    """``_IOR(type, nr, T)``: the kernel writes the argument."""
    return IOC(IOC_READ, type_, nr, ctypes.sizeof(ctype))


def IOWR(type_: int | str, nr: int, ctype: type) -> int:
    """``_IOWR(type, nr, T)``: both."""
    return IOC(IOC_READ | IOC_WRITE, type_, nr, ctypes.sizeof(ctype))


def IOC_DIR(cmd: int) -> int:
    """Direction bits of an ioctl number."""
    return (cmd >> IOC_DIRSHIFT) & ((1 << IOC_DIRBITS) - 1)


def IOC_TYPE(cmd: int) -> int:
    """Type (magic) of an ioctl number."""
    return (cmd >> IOC_TYPESHIFT) & ((1 << IOC_TYPEBITS) - 1)


def IOC_NR(cmd: int) -> int:
    """Sequence number of an ioctl number."""
    return (cmd >> IOC_NRSHIFT) & ((1 << IOC_NRBITS) - 1)


def IOC_SIZE(cmd: int) -> int:
    """Argument size of an ioctl number."""
    return (cmd >> IOC_SIZESHIFT) & ((1 << IOC_SIZEBITS) - 1)


# --- structs (picoevb-rdma-ioctl.h) ------------------------------------------------------
class _Struct(ctypes.Structure):
    """Shared helpers: raw bytes in and out, readable repr."""

    def to_bytes(self) -> bytes:
        """The C argument bytes."""
        return ctypes.string_at(ctypes.addressof(self), ctypes.sizeof(self))

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview):
        """Decode the C argument bytes (exactly ``sizeof`` bytes)."""
        if len(data) != ctypes.sizeof(cls):
            raise ValueError(f"{cls.__name__} is {ctypes.sizeof(cls)} bytes, got {len(data)}")
        return cls.from_buffer_copy(bytes(data))

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n):#x}" for n, _ in self._fields_)
        return f"{type(self).__name__}({fields})"


class picoevb_rdma_card_info(_Struct):
    """``PICOEVB_IOC_CARD_INFO`` result."""

    _fields_ = [("fpga_ram_size", ctypes.c_uint64)]


class picoevb_rdma_pin_cuda(_Struct):
    """``PICOEVB_IOC_PIN_CUDA``: ``va``/``size`` in, ``handle`` out."""

    _fields_ = [("va", ctypes.c_uint64), ("size", ctypes.c_uint64), ("handle", ctypes.c_uint32)]


class picoevb_rdma_unpin_cuda(_Struct):
    """``PICOEVB_IOC_UNPIN_CUDA``."""

    _fields_ = [("handle", ctypes.c_uint32)]


class picoevb_rdma_h2c2h_dma(_Struct):
    """``PICOEVB_IOC_H2C2H_DMA``: host/GPU -> FPGA RAM -> host/GPU."""

    _fields_ = [
        ("src", ctypes.c_uint64),
        ("dst", ctypes.c_uint64),
        ("len", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("dma_time_ns", ctypes.c_uint64),
    ]


class picoevb_rdma_h2c_dma(_Struct):
    """``PICOEVB_IOC_H2C_DMA``: host/GPU -> FPGA RAM offset ``dst``."""

    _fields_ = [
        ("src", ctypes.c_uint64),
        ("dst", ctypes.c_uint64),
        ("len", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("dma_time_ns", ctypes.c_uint64),
    ]


class picoevb_rdma_c2h_dma(_Struct):
    """``PICOEVB_IOC_C2H_DMA``: FPGA RAM offset ``src`` -> host/GPU (``dst`` first)."""

    _fields_ = [
        ("dst", ctypes.c_uint64),
        ("src", ctypes.c_uint64),
        ("len", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("dma_time_ns", ctypes.c_uint64),
    ]


class picoevb_rdma_pin_dmabuf(_Struct):
    """``PICOEVB_IOC_PIN_DMABUF`` (not in the original driver): ``fd`` of a dma-buf in,
    ``size`` (the dma-buf's) and ``handle`` out; 24 bytes."""

    _fields_ = [
        ("fd", ctypes.c_int32),
        ("pad", ctypes.c_uint32),
        ("size", ctypes.c_uint64),
        ("handle", ctypes.c_uint32),
    ]


class picoevb_rdma_mailbox(_Struct):
    """``PICOEVB_IOC_MAILBOX_READ`` (not in the original driver): ``timeout_ns`` in (0:
    do not wait), the oldest ``value`` the card's mailbox holds and ``flags`` out
    (``PICOEVB_MAILBOX_OVERFLOWED``: a value was lost since the last read); 24 bytes."""

    _fields_ = [
        ("timeout_ns", ctypes.c_uint64),
        ("value", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("left", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
    ]


PICOEVB_IOC_MAGIC = "P"

PICOEVB_IOC_LED = IOW(PICOEVB_IOC_MAGIC, 0, ctypes.c_uint32)
PICOEVB_IOC_PIN_CUDA = IOWR(PICOEVB_IOC_MAGIC, 1, picoevb_rdma_pin_cuda)
PICOEVB_IOC_UNPIN_CUDA = IOW(PICOEVB_IOC_MAGIC, 2, picoevb_rdma_unpin_cuda)
PICOEVB_IOC_H2C2H_DMA = IOWR(PICOEVB_IOC_MAGIC, 3, picoevb_rdma_h2c2h_dma)
PICOEVB_IOC_CARD_INFO = IOR(PICOEVB_IOC_MAGIC, 4, picoevb_rdma_card_info)
PICOEVB_IOC_H2C_DMA = IOWR(PICOEVB_IOC_MAGIC, 5, picoevb_rdma_h2c_dma)
PICOEVB_IOC_C2H_DMA = IOWR(PICOEVB_IOC_MAGIC, 6, picoevb_rdma_c2h_dma)
# the model's extensions, numbered apart from the original's (0x40 and up): not in the
# original picoevb-rdma driver
PICOEVB_EXT_NR_BASE = 0x40
PICOEVB_IOC_PIN_DMABUF = IOWR(PICOEVB_IOC_MAGIC, PICOEVB_EXT_NR_BASE, picoevb_rdma_pin_dmabuf)
PICOEVB_IOC_MAILBOX_READ = IOWR(PICOEVB_IOC_MAGIC, PICOEVB_EXT_NR_BASE + 1, picoevb_rdma_mailbox)
PICOEVB_MAILBOX_OVERFLOWED = 1 << 0

PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA = 1 << 0
PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA = 1 << 1
PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA = 1 << 0
PICOEVB_C2H_DMA_FLAG_DST_IS_CUDA = 1 << 0

# the argument struct of each ioctl (None: the argument is the value itself)
ARG_TYPES: dict[int, type[_Struct] | None] = {
    PICOEVB_IOC_LED: None,
    PICOEVB_IOC_PIN_CUDA: picoevb_rdma_pin_cuda,
    PICOEVB_IOC_UNPIN_CUDA: picoevb_rdma_unpin_cuda,
    PICOEVB_IOC_H2C2H_DMA: picoevb_rdma_h2c2h_dma,
    PICOEVB_IOC_CARD_INFO: picoevb_rdma_card_info,
    PICOEVB_IOC_H2C_DMA: picoevb_rdma_h2c_dma,
    PICOEVB_IOC_C2H_DMA: picoevb_rdma_c2h_dma,
    PICOEVB_IOC_PIN_DMABUF: picoevb_rdma_pin_dmabuf,
    PICOEVB_IOC_MAILBOX_READ: picoevb_rdma_mailbox,
}

IOCTL_NAMES = {
    v: k for k, v in globals().items() if k.startswith("PICOEVB_IOC_") and k != "PICOEVB_IOC_MAGIC"
}


# mmap of /dev/picoevb (this project's addition, not in the original driver): the file
# offset selects the BAR, ``bar << PICOEVB_MMAP_BAR_SHIFT`` plus the offset in it; the
# mapping is a device mapping (VM_IO | VM_PFNMAP, uncached), as io_remap_pfn_range makes
PICOEVB_MMAP_BAR_SHIFT = 20
