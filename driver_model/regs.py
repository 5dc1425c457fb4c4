"""The XDMA (PG195) DMA register map, as implemented by ``hdl/pevb_dma_top.v``.

This module is the single place where register offsets, bit fields and magic numbers are
defined. The driver model, the testbench and the tests use it, and driver_model/codegen.py
makes the docs table and the Verilog header from it.
Offsets are relative to the DMA BAR (BAR1 on the PicoEVB): target in [15:12], channel in
[11:8], register in [7:0].
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """A bit field of a 32-bit register: ``shift`` and ``width``; ``mask`` is derived."""

    shift: int
    width: int = 1

    @property
    def mask(self) -> int:
        """The field's bits in register position."""
        return ((1 << self.width) - 1) << self.shift

    def get(self, value: int) -> int:
        """Extract the field from a register value."""
        return (value >> self.shift) & ((1 << self.width) - 1)

    def put(self, value: int) -> int:
        """Place ``value`` in the field, checking that it fits."""
        if value < 0 or value >> self.width:
            raise ValueError(f"value {value:#x} does not fit in {self.width} bits")
        return value << self.shift


# --- BARs of the FPGA function --------------------------------------------------------------
BAR_USER = 0  # the user BAR: LED and card RAM size registers (the picoevb's BAR0)
BAR_DMA = 1  # the XDMA register space (PG195 "DMA/Bridge Subsystem registers")
# the PCIe-to-DMA bypass BAR of the drop-in (m_axib_*, axist_bypass_en): BAR2 behind the
# 32-bit AXI4-Lite master and DMA BARs, where Vivado puts it (PG195 "Target Bridge")
BAR_AXIB = 2
BAR_USER_SIZE = 4 << 10
BAR_DMA_SIZE = 64 << 10
BAR_COUNT = 6  # BAR0-5 of a type 0 header


@dataclass(frozen=True)
class BarLayout:
    """Which BAR each address space of the function sits in, and how each BAR is built.

    ``user`` is the AXI4-Lite master's BAR (the picoevb's LED and card RAM registers),
    ``dma`` the DMA register space, ``axib`` the PCIe-to-DMA bypass master's; ``None``
    where the build has no such BAR. A BAR in ``wide`` is 64-bit (its next BAR holds the
    upper half); one in ``prefetchable`` is marked so. The default is the picoevb's and
    the drop-in's default: the 32-bit layout.
    """

    user: int | None = BAR_USER
    dma: int = BAR_DMA
    axib: int | None = None
    wide: frozenset[int] = frozenset()
    prefetchable: frozenset[int] = frozenset()

    @classmethod
    def vivado(
        cls,
        *,
        axil_master: bool = True,
        axil_master_64bit: bool = False,
        axil_master_prefetchable: bool = False,
        dma_64bit: bool = False,
        dma_prefetchable: bool = False,
        axib: bool = False,
        axib_64bit: bool = False,
        axib_prefetchable: bool = False,
    ) -> BarLayout:
        """The layout the XDMA IP gets from its PCIe BARs options (``axilite_master_en``,
        ``axil_master_64bit_en``, ``xdma_pcie_64bit_en``, ``axist_bypass_en``,
        ``axi_bypass_64bit_en`` and the ``_prefetchable`` ones): the AXI4-Lite master,
        the DMA and the bypass master in that order from BAR0, each in the next free BAR,
        a 64-bit one in the next even pair (PG195 "Target Bridge", tables "32-Bit BARs"
        and "64-Bit BARs"; the MSI-X BIRs Vivado gives mixed layouts agree)."""
        spaces = (
            ("user", axil_master, axil_master_64bit, axil_master_prefetchable),
            ("dma", True, dma_64bit, dma_prefetchable),
            ("axib", axib, axib_64bit, axib_prefetchable),
        )
        place: dict[str, int | None] = {}
        wide: set[int] = set()
        pref: set[int] = set()
        nxt = 0
        for name, present, is64, is_pref in spaces:
            if not present:
                place[name] = None
                continue
            bar = nxt + (nxt & 1) if is64 else nxt
            place[name] = bar
            nxt = bar + (2 if is64 else 1)
            if is64:
                wide.add(bar)
            if is_pref:
                pref.add(bar)
        dma = place["dma"]
        assert dma is not None and nxt <= BAR_COUNT
        return cls(place["user"], dma, place["axib"], frozenset(wide), frozenset(pref))

    def of(self, bar: int) -> str | None:
        """The address space BAR ``bar`` holds (``"user"``, ``"dma"``, ``"axib"``), or
        ``None`` (no BAR there, or the upper half of a 64-bit one)."""
        for name in ("user", "dma", "axib"):
            if getattr(self, name) == bar:
                return name
        return None


# --- targets (PG195 "DMA register space") ------------------------------------------------
class Target(enum.IntEnum):
    """Target block, address bits [15:12]; also the identifier's bits [19:16]."""

    H2C = 0x0
    C2H = 0x1
    IRQ = 0x2
    CONFIG = 0x3
    H2C_SGDMA = 0x4
    C2H_SGDMA = 0x5
    SGDMA_COMMON = 0x6
    MSIX = 0x8


# a DMA BAR offset: target [15:12], channel [11:8], register [7:0]
ADDR_TARGET = Field(12, 4)
ADDR_CHANNEL = Field(8, 4)
ADDR_REG = Field(0, 8)
TARGET_SHIFT = ADDR_TARGET.shift
CHANNEL_SHIFT = ADDR_CHANNEL.shift
CHANNEL_STRIDE = 1 << CHANNEL_SHIFT


def block_base(target: Target, channel: int = 0) -> int:
    """Offset of a register block in the DMA BAR."""
    return (int(target) << TARGET_SHIFT) | (channel << CHANNEL_SHIFT)


# --- identifier ----------------------------------------------------------------------------
ID_SUBSYSTEM = Field(20, 12)  # 0x1FC
ID_TARGET = Field(16, 4)
ID_STREAM = Field(15)
ID_CHANNEL = Field(8, 4)
ID_VERSION = Field(0, 8)
ID_SUBSYSTEM_VALUE = 0x1FC
ID_VERSION_VALUE = 0x06


def identifier(target: Target, channel: int = 0, stream: bool = False) -> int:
    """Identifier register value this engine reports for a block."""
    return (
        ID_SUBSYSTEM.put(ID_SUBSYSTEM_VALUE)
        | ID_TARGET.put(int(target))
        | ID_STREAM.put(int(stream))
        | ID_CHANNEL.put(channel)
        | ID_VERSION.put(ID_VERSION_VALUE)
    )


# --- channel registers (H2C 0x0000 + n*0x100, C2H 0x1000 + n*0x100) ----------------------
CH_IDENTIFIER = 0x00
CH_CONTROL = 0x04
CH_CONTROL_W1S = 0x08
CH_CONTROL_W1C = 0x0C
CH_STATUS = 0x40  # RW1C
CH_STATUS_RC = 0x44  # clear on read
CH_COMPLETED_COUNT = 0x48
CH_ALIGNMENTS = 0x4C
CH_POLL_WB_LO = 0x88
CH_POLL_WB_HI = 0x8C
CH_INT_MASK = 0x90
CH_INT_MASK_W1S = 0x94
CH_INT_MASK_W1C = 0x98
CH_PERF_CTRL = 0xC0
CH_PERF_CYC_LO = 0xC4
CH_PERF_CYC_HI = 0xC8
CH_PERF_DATA_LO = 0xCC
CH_PERF_DATA_HI = 0xD0


class Ctrl(enum.IntFlag):
    """Channel control register (0x04) bits; the ie_* bits also form the interrupt mask."""

    RUN = 1 << 0
    IE_DESC_STOPPED = 1 << 1
    IE_DESC_COMPLETED = 1 << 2
    IE_ALIGN_MISMATCH = 1 << 3
    IE_MAGIC_STOPPED = 1 << 4
    IE_INVALID_LENGTH = 1 << 5
    IE_IDLE_STOPPED = 1 << 6
    IE_READ_ERROR = 0x1F << 9
    IE_WRITE_ERROR = 0x1F << 14
    IE_DESC_ERROR = 0x1F << 19
    NON_INC_MODE = 1 << 25
    POLLMODE_WB_ENABLE = 1 << 26
    STREAM_WB_DISABLE = 1 << 27


CTRL_IE_ALL = (
    Ctrl.IE_DESC_STOPPED
    | Ctrl.IE_DESC_COMPLETED
    | Ctrl.IE_ALIGN_MISMATCH
    | Ctrl.IE_MAGIC_STOPPED
    | Ctrl.IE_INVALID_LENGTH
    | Ctrl.IE_IDLE_STOPPED
    | Ctrl.IE_READ_ERROR
    | Ctrl.IE_WRITE_ERROR
    | Ctrl.IE_DESC_ERROR
)
# libxdma's start value in poll mode: Run, the error enables, the write-back; no
# ie_descriptor_completed/stopped (so those status bits are not logged)
LIBXDMA_POLL_CONTROL = (
    Ctrl.RUN
    | Ctrl.IE_READ_ERROR
    | Ctrl.IE_DESC_ERROR
    | Ctrl.IE_ALIGN_MISMATCH
    | Ctrl.IE_MAGIC_STOPPED
    | Ctrl.POLLMODE_WB_ENABLE
)
# the picoevb driver's start value: every ie_* bit and Run
PICOEVB_CONTROL_START = 0x00FFFE7F
CTRL_WRITABLE = int(
    CTRL_IE_ALL | Ctrl.RUN | Ctrl.NON_INC_MODE | Ctrl.POLLMODE_WB_ENABLE | Ctrl.STREAM_WB_DISABLE
)


class Stat(enum.IntFlag):
    """Channel status register (0x40 RW1C, 0x44 clear-on-read) bits."""

    BUSY = 1 << 0
    DESC_STOPPED = 1 << 1
    DESC_COMPLETED = 1 << 2
    ALIGN_MISMATCH = 1 << 3
    MAGIC_STOPPED = 1 << 4
    INVALID_LENGTH = 1 << 5
    IDLE_STOPPED = 1 << 6


STAT_READ_ERROR = Field(9, 5)
STAT_WRITE_ERROR = Field(14, 5)
STAT_DESC_ERROR = Field(19, 5)
STAT_LOGGED_MASK = 0x00FFFE7E
# the status bits an engine event can set: [23:0]
STAT_EVENT_WIDTH = STAT_DESC_ERROR.shift + STAT_DESC_ERROR.width


class PcieErr(enum.IntFlag):
    """Encoding of descr_error, and of read_error on H2C (PCIe side).

    A completion timeout is reported as UNEXPECTED_COMPLETION: PG195 has no bit for it.
    """

    UNSUPPORTED_REQUEST = 1 << 0
    COMPLETER_ABORT = 1 << 1
    PARITY = 1 << 2
    POISONED = 1 << 3
    UNEXPECTED_COMPLETION = 1 << 4


class AxiErr(enum.IntFlag):
    """Encoding of write_error on H2C and read_error on C2H (card side)."""

    DECODE = 1 << 0
    SLAVE = 1 << 1


STAT_ERROR_MASK = (
    STAT_READ_ERROR.mask
    | STAT_WRITE_ERROR.mask
    | STAT_DESC_ERROR.mask
    | int(Stat.MAGIC_STOPPED | Stat.INVALID_LENGTH | Stat.ALIGN_MISMATCH)
)


def describe_status(status: int, direction: Target = Target.H2C) -> str:
    """A channel status value in words: the set bits, and the error fields decoded with
    the encoding of ``direction`` (read_error is PCIe-side on H2C, AXI-side on C2H)."""
    names = [b.name.lower() for b in Stat if status & b and b.name]
    pcie_read = direction == Target.H2C
    for fld, name, enc in (
        (STAT_READ_ERROR, "read_error", PcieErr if pcie_read else AxiErr),
        (STAT_WRITE_ERROR, "write_error", AxiErr if pcie_read else PcieErr),
        (STAT_DESC_ERROR, "desc_error", PcieErr),
    ):
        v = fld.get(status)
        if v:
            names.append(f"{name}={'|'.join(e.name for e in enc if v & e and e.name) or hex(v)}")
    return " ".join(names) if names else "0"


ALIGN_ADDR = Field(16, 8)
ALIGN_LEN_GRANULARITY = Field(8, 8)
ALIGN_ADDR_BITS = Field(0, 8)
# byte-granular addresses and lengths, 64 address bits
ALIGNMENTS_VALUE = ALIGN_ADDR.put(1) | ALIGN_LEN_GRANULARITY.put(1) | ALIGN_ADDR_BITS.put(64)


class Perf(enum.IntFlag):
    """Performance control register (0xC0) bits."""

    AUTO = 1 << 0
    CLEAR = 1 << 1
    RUN = 1 << 2


# the cycle and data counters (0xC4/0xC8, 0xCC/0xD0) are 42 bits: the high register holds
# bits 41:32 and the flag that the counter reached its maximum (where it stops)
PERF_COUNT_HI = Field(0, 10)
PERF_MAXED = Field(16)
PERF_COUNT_BITS = 32 + PERF_COUNT_HI.width


# --- poll-mode write-back value --------------------------------------------------------
WB_ERROR = Field(31)
WB_COUNT = Field(0, 24)

# --- SGDMA registers (H2C 0x4000 + n*0x100, C2H 0x5000 + n*0x100) ------------------------
SG_IDENTIFIER = 0x00
SG_DESC_LO = 0x80
SG_DESC_HI = 0x84
SG_DESC_ADJ = 0x88
SG_CREDITS = 0x8C
SG_DESC_ADJ_FIELD = Field(0, 6)
SG_CREDITS_FIELD = Field(0, 10)

# --- SGDMA common (0x6000) ---------------------------------------------------------------
SGC_IDENTIFIER = 0x00
SGC_CONTROL = 0x10
SGC_CONTROL_W1S = 0x14
SGC_CONTROL_W1C = 0x18
SGC_CREDIT_MODE = 0x20
SGC_CREDIT_MODE_W1S = 0x24
SGC_CREDIT_MODE_W1C = 0x28
SGC_H2C_DESC_HALT = Field(0, 4)
SGC_C2H_DESC_HALT = Field(16, 4)
# the writable bits of the halt and credit-mode registers: one per channel, each direction
SGC_CHANNELS_MASK = SGC_H2C_DESC_HALT.mask | SGC_C2H_DESC_HALT.mask

# --- IRQ block (0x2000) ------------------------------------------------------------------
IRQ_IDENTIFIER = 0x00
IRQ_USER_INT_EN = 0x04
IRQ_USER_INT_EN_W1S = 0x08
IRQ_USER_INT_EN_W1C = 0x0C
IRQ_CHAN_INT_EN = 0x10
IRQ_CHAN_INT_EN_W1S = 0x14
IRQ_CHAN_INT_EN_W1C = 0x18
IRQ_USER_INT_REQ = 0x40
IRQ_CHAN_INT_REQ = 0x44
IRQ_USER_INT_PEND = 0x48
IRQ_CHAN_INT_PEND = 0x4C
IRQ_USER_VECTOR = (0x80, 0x84, 0x88, 0x8C)
IRQ_CHAN_VECTOR = (0xA0, 0xA4)  # interrupt bits 0-3, 4-7 (H2C channels first, then C2H)
IRQ_VECTOR_FIELD_WIDTH = 5
IRQ_VECTOR_STRIDE = 8
# four vector fields per vector register, each IRQ_VECTOR_FIELD_WIDTH bits
IRQ_VECTOR_MASK = sum(
    ((1 << IRQ_VECTOR_FIELD_WIDTH) - 1) << (i * IRQ_VECTOR_STRIDE) for i in range(4)
)
IRQ_USER_INT_FIELD = Field(0, 16)  # user interrupt enable/request/pending: one bit each


def vector_field(index: int) -> tuple[int, Field]:
    """Where the vector number of interrupt ``index`` (a channel interrupt bit, or a user
    interrupt) sits: which of the vector registers (IRQ_CHAN_VECTOR or IRQ_USER_VECTOR)
    and the field in it."""
    per_reg = 32 // IRQ_VECTOR_STRIDE
    return index // per_reg, Field(index % per_reg * IRQ_VECTOR_STRIDE, IRQ_VECTOR_FIELD_WIDTH)


def chan_irq_bit(direction: Target, channel: int = 0, h2c_channels: int = 1) -> int:
    """Bit of a channel in the IRQ block channel registers: H2C first, then C2H."""
    if direction == Target.H2C:
        return 1 << channel
    if direction == Target.C2H:
        return 1 << (h2c_channels + channel)
    raise ValueError(f"not a channel target: {direction!r}")


# --- config block (0x3000) ---------------------------------------------------------------
CFG_IDENTIFIER = 0x00
CFG_BUSDEV = 0x04
CFG_MPS = 0x08
CFG_MRRS = 0x0C
CFG_SYSTEM_ID = 0x10
CFG_MSI_ENABLE = 0x14
CFG_DATA_WIDTH = 0x18
CFG_PCIE_CONTROL = 0x1C
CFG_AXI_MPS = 0x40
CFG_AXI_MRRS = 0x44
CFG_WR_FLUSH_TIMEOUT = 0x60
SYSTEM_ID_VALUE = 0xFF01
DATA_WIDTH_ENCODING = {64: 0, 128: 1, 256: 2, 512: 3}
CFG_BUS_FIELD = Field(8, 8)  # CFG_BUSDEV: the bus number
CFG_SIZE_FIELD = Field(0, 3)  # CFG_MPS/MRRS/AXI_*: encoded 128 << n bytes
CFG_MSI_FIELD = Field(0)  # CFG_MSI_ENABLE: MSI enabled by the host
CFG_MSIX_FIELD = Field(1)  # CFG_MSI_ENABLE: MSI-X enabled by the host
CFG_DATA_WIDTH_FIELD = Field(0, 3)
# PG195 "Config PCIE Control": relaxed ordering on read requests (stored only here), 1 out
# of reset as in PG195
CFG_PCIE_CTRL_RELAXED_ORDERING = Field(0)
CFG_PCIE_CONTROL_RESET = CFG_PCIE_CTRL_RELAXED_ORDERING.mask
CFG_WR_FLUSH_TIMEOUT_FIELD = Field(0, 5)

# --- MSI-X table and PBA (0x8000, PG195 "MSI-X Vector Table and PBA"; engines built with
# MSI-X).  32 entries of 16 bytes in the DMA BAR, the pending bits at 0x8FE0 ----------------
MSIX_VECTORS = 32
MSIX_ENTRY_SIZE = 16
MSIX_ADDR_LO = 0x0
MSIX_ADDR_HI = 0x4
MSIX_DATA = 0x8
MSIX_CTRL = 0xC
MSIX_CTRL_MASKED = Field(0)  # vector control: masked (1 out of reset)
MSIX_PBA = 0xFE0  # pending bits of vectors 0-31 (0xFE4: the PBA's upper DWORD, zero)


def msix_reg(vector: int, reg: int) -> int:
    """Offset of a register of MSI-X table entry ``vector`` in the DMA BAR."""
    if not 0 <= vector < MSIX_VECTORS:
        raise ValueError(f"MSI-X vector {vector} out of range 0-{MSIX_VECTORS - 1}")
    return block_base(Target.MSIX) + vector * MSIX_ENTRY_SIZE + reg


MSIX_PBA_OFFSET = block_base(Target.MSIX) + MSIX_PBA


# --- BAR0 user space -------------------------------------------------------------------
USER_LED = 0x0
LED_FIELD = Field(0, 3)  # active low: 0 lights all three LEDs, 7 turns them off
LED_RESET_VALUE = 0x7
# read-only card RAM size in bytes (this design's addition to the user space; the original
# driver knows the size from the subsystem ID)
USER_RAM_SIZE = 0x4
# the mailbox (this design's addition, not in the original card): a write of
# USER_MAILBOX queues its value (MAILBOX_DEPTH deep) and raises user interrupt
# MAILBOX_IRQ once per value; a read takes the oldest (0 when empty);
# USER_MAILBOX_STATUS holds the count queued and, sticky, whether a write found it full
# (write 1 to clear)
USER_MAILBOX = 0x8
USER_MAILBOX_STATUS = 0xC
MAILBOX_DEPTH = 16
MAILBOX_IRQ = 0
MAILBOX_COUNT_FIELD = Field(0, 5)
MAILBOX_OVERFLOW = 1 << 31


def ch_reg(direction: Target, reg: int, channel: int = 0) -> int:
    """Offset of a channel register of the H2C or C2H block."""
    if direction not in (Target.H2C, Target.C2H):
        raise ValueError(f"not a channel target: {direction!r}")
    return block_base(direction, channel) + reg


def sg_reg(direction: Target, reg: int, channel: int = 0) -> int:
    """Offset of an SGDMA register of the H2C or C2H channel."""
    sg = {Target.H2C: Target.H2C_SGDMA, Target.C2H: Target.C2H_SGDMA}.get(direction)
    if sg is None:
        raise ValueError(f"not a channel target: {direction!r}")
    return block_base(sg, channel) + reg


def irq_reg(reg: int) -> int:
    """Offset of an IRQ block register."""
    return block_base(Target.IRQ) + reg


def cfg_reg(reg: int) -> int:
    """Offset of a config block register."""
    return block_base(Target.CONFIG) + reg


def sgc_reg(reg: int) -> int:
    """Offset of an SGDMA common register."""
    return block_base(Target.SGDMA_COMMON) + reg
