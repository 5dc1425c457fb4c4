"""The XDMA (PG195) DMA register map, as implemented by ``hdl/pevb_dma_top.v``.

This module is the single place where register offsets, bit fields and magic numbers are
defined. The driver model, the testbench, the tests and the README table all use it.
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


TARGET_SHIFT = 12
CHANNEL_SHIFT = 8
CHANNEL_STRIDE = 0x100


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
# the picoevb driver's start value: every ie_* bit and Run
PICOEVB_CONTROL_START = 0x00FFFE7F
CTRL_WRITABLE = int(CTRL_IE_ALL | Ctrl.RUN | Ctrl.NON_INC_MODE | Ctrl.POLLMODE_WB_ENABLE
                    | Ctrl.STREAM_WB_DISABLE)


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


STAT_ERROR_MASK = STAT_READ_ERROR.mask | STAT_WRITE_ERROR.mask | STAT_DESC_ERROR.mask | int(
    Stat.MAGIC_STOPPED | Stat.INVALID_LENGTH | Stat.ALIGN_MISMATCH
)


def describe_status(status: int, direction: Target = Target.H2C) -> str:
    """A channel status value in words: the set bits, and the error fields decoded with
    the encoding of ``direction`` (read_error is PCIe-side on H2C, AXI-side on C2H)."""
    names = [b.name.lower() for b in Stat if status & b and b.name]
    pcie_read = direction == Target.H2C
    for fld, name, enc in ((STAT_READ_ERROR, "read_error", PcieErr if pcie_read else AxiErr),
                           (STAT_WRITE_ERROR, "write_error", AxiErr if pcie_read else PcieErr),
                           (STAT_DESC_ERROR, "desc_error", PcieErr)):
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
IRQ_CHAN_VECTOR = 0xA0
IRQ_VECTOR_FIELD_WIDTH = 5
IRQ_VECTOR_STRIDE = 8


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

# --- BAR0 user space -------------------------------------------------------------------
USER_LED = 0x0
LED_FIELD = Field(0, 3)  # active low: 0 lights all three LEDs, 7 turns them off
LED_RESET_VALUE = 0x7
# read-only card RAM size in bytes (this design's addition to the user space; the original
# driver knows the size from the subsystem ID)
USER_RAM_SIZE = 0x4


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


@dataclass(frozen=True)
class RegInfo:
    """One row of the register map documentation table."""

    offset: int
    name: str
    access: str
    reset: int | None
    description: str


def register_table() -> list[RegInfo]:
    """The DMA BAR register map as implemented, for channel 0 of each direction.

    The README's register table is generated from (and checked against) this list.
    """
    rows: list[RegInfo] = []
    for d in (Target.H2C, Target.C2H):
        n = d.name
        rows += [
            RegInfo(ch_reg(d, CH_IDENTIFIER), f"{n} identifier", "RO", identifier(d),
                    "0x1FC, target, stream=0, channel, version"),
            RegInfo(ch_reg(d, CH_CONTROL), f"{n} control", "RW", 0,
                    "Run [0], ie_* [23:19,18:14,13:9,6:1], pollmode_wb_enable [26]"),
            RegInfo(ch_reg(d, CH_CONTROL_W1S), f"{n} control W1S", "W1S", None, "set control bits"),
            RegInfo(ch_reg(d, CH_CONTROL_W1C), f"{n} control W1C", "W1C", None,
                    "clear control bits"),
            RegInfo(ch_reg(d, CH_STATUS), f"{n} status", "RW1C", 0,
                    "descr/write/read_error, idle/magic/align/len, completed, stopped, busy [0]"),
            RegInfo(ch_reg(d, CH_STATUS_RC), f"{n} status (clear on read)", "RC", 0,
                    "same bits, cleared by the read"),
            RegInfo(ch_reg(d, CH_COMPLETED_COUNT), f"{n} completed descriptor count", "RO", 0,
                    "cleared when Run rises"),
            RegInfo(ch_reg(d, CH_ALIGNMENTS), f"{n} alignments", "RO", ALIGNMENTS_VALUE,
                    "address alignment 1, length granularity 1, 64 address bits"),
            RegInfo(ch_reg(d, CH_POLL_WB_LO), f"{n} poll-mode write-back address low", "RW", 0,
                    "{err[31], count[23:0]} written here"),
            RegInfo(ch_reg(d, CH_POLL_WB_HI), f"{n} poll-mode write-back address high", "RW", 0,
                    ""),
            RegInfo(ch_reg(d, CH_INT_MASK), f"{n} interrupt enable mask", "RW", 0,
                    "same bit positions as the ie_* bits"),
            RegInfo(ch_reg(d, CH_INT_MASK_W1S), f"{n} interrupt enable mask W1S", "W1S", None, ""),
            RegInfo(ch_reg(d, CH_INT_MASK_W1C), f"{n} interrupt enable mask W1C", "W1C", None, ""),
            RegInfo(ch_reg(d, CH_PERF_CTRL), f"{n} performance control", "RW", 0,
                    "run [2], clear [1] (self-clearing), auto [0]"),
            RegInfo(ch_reg(d, CH_PERF_CYC_LO), f"{n} performance cycle count low", "RO", 0, ""),
            RegInfo(ch_reg(d, CH_PERF_CYC_HI), f"{n} performance cycle count high", "RO", 0, ""),
            RegInfo(ch_reg(d, CH_PERF_DATA_LO), f"{n} performance data count low", "RO", 0,
                    "bytes of completed descriptors"),
            RegInfo(ch_reg(d, CH_PERF_DATA_HI), f"{n} performance data count high", "RO", 0, ""),
        ]
    rows += [
        RegInfo(irq_reg(IRQ_IDENTIFIER), "IRQ identifier", "RO", identifier(Target.IRQ), ""),
        RegInfo(irq_reg(IRQ_USER_INT_EN), "user interrupt enable", "RW", 0,
                "stored; no user interrupt inputs"),
        RegInfo(irq_reg(IRQ_USER_INT_EN_W1S), "user interrupt enable W1S", "W1S", None, ""),
        RegInfo(irq_reg(IRQ_USER_INT_EN_W1C), "user interrupt enable W1C", "W1C", None, ""),
        RegInfo(irq_reg(IRQ_CHAN_INT_EN), "channel interrupt enable", "RW", 0,
                "H2C0 [0], C2H0 [1]"),
        RegInfo(irq_reg(IRQ_CHAN_INT_EN_W1S), "channel interrupt enable W1S", "W1S", None, ""),
        RegInfo(irq_reg(IRQ_CHAN_INT_EN_W1C), "channel interrupt enable W1C", "W1C", None, ""),
        RegInfo(irq_reg(IRQ_USER_INT_REQ), "user interrupt request", "RO", 0, ""),
        RegInfo(irq_reg(IRQ_CHAN_INT_REQ), "channel interrupt request", "RO", 0,
                "status & interrupt mask, per channel"),
        RegInfo(irq_reg(IRQ_USER_INT_PEND), "user interrupt pending", "RO", 0, ""),
        RegInfo(irq_reg(IRQ_CHAN_INT_PEND), "channel interrupt pending", "RO", 0,
                "request & channel interrupt enable"),
        *[RegInfo(irq_reg(o), f"user vector number {i}", "RW", 0, "") for i, o in
          enumerate(IRQ_USER_VECTOR)],
        RegInfo(irq_reg(IRQ_CHAN_VECTOR), "channel vector number", "RW", 0,
                "H2C0 [4:0], C2H0 [12:8]: MSI vector"),
        RegInfo(cfg_reg(CFG_IDENTIFIER), "config identifier", "RO", identifier(Target.CONFIG), ""),
        RegInfo(cfg_reg(CFG_BUSDEV), "bus/device", "RO", None, "bus [15:8]"),
        RegInfo(cfg_reg(CFG_MPS), "PCIe max payload size", "RO", None, "encoded, 128 << n"),
        RegInfo(cfg_reg(CFG_MRRS), "PCIe max read request size", "RO", None, "encoded"),
        RegInfo(cfg_reg(CFG_SYSTEM_ID), "system id", "RO", SYSTEM_ID_VALUE, ""),
        RegInfo(cfg_reg(CFG_MSI_ENABLE), "MSI enable", "RO", None, "MSI [0]"),
        RegInfo(cfg_reg(CFG_DATA_WIDTH), "datapath width", "RO", None, "0:64 1:128 2:256 3:512"),
        RegInfo(cfg_reg(CFG_PCIE_CONTROL), "PCIe control", "RW", 0, "stored"),
        RegInfo(cfg_reg(CFG_AXI_MPS), "AXI max payload size", "RO", None, "same as PCIe"),
        RegInfo(cfg_reg(CFG_AXI_MRRS), "AXI max read request size", "RO", None, "same as PCIe"),
        RegInfo(cfg_reg(CFG_WR_FLUSH_TIMEOUT), "write flush timeout", "RW", 0, "stored"),
    ]
    for d in (Target.H2C, Target.C2H):
        n = d.name
        sg = Target.H2C_SGDMA if d == Target.H2C else Target.C2H_SGDMA
        rows += [
            RegInfo(sg_reg(d, SG_IDENTIFIER), f"{n} SGDMA identifier", "RO", identifier(sg), ""),
            RegInfo(sg_reg(d, SG_DESC_LO), f"{n} first descriptor address low", "RW", 0,
                    "32-byte aligned"),
            RegInfo(sg_reg(d, SG_DESC_HI), f"{n} first descriptor address high", "RW", 0, ""),
            RegInfo(sg_reg(d, SG_DESC_ADJ), f"{n} first descriptor adjacent count", "RW", 0,
                    "Dsc_Adj [5:0]"),
            RegInfo(sg_reg(d, SG_CREDITS), f"{n} descriptor credits", "RW", 0,
                    "stored (credit mode is a stream feature)"),
        ]
    rows += [
        RegInfo(sgc_reg(SGC_IDENTIFIER), "SGDMA common identifier", "RO",
                identifier(Target.SGDMA_COMMON), ""),
        RegInfo(sgc_reg(SGC_CONTROL), "descriptor halt", "RW", 0,
                "h2c halt [3:0], c2h halt [19:16]: no new descriptor fetches"),
        RegInfo(sgc_reg(SGC_CONTROL_W1S), "descriptor halt W1S", "W1S", None, ""),
        RegInfo(sgc_reg(SGC_CONTROL_W1C), "descriptor halt W1C", "W1C", None, ""),
        RegInfo(sgc_reg(SGC_CREDIT_MODE), "credit mode enable", "RW", 0, "stored"),
        RegInfo(sgc_reg(SGC_CREDIT_MODE_W1S), "credit mode enable W1S", "W1S", None, ""),
        RegInfo(sgc_reg(SGC_CREDIT_MODE_W1C), "credit mode enable W1C", "W1C", None, ""),
    ]
    return sorted(rows, key=lambda r: r.offset)


def register_table_markdown() -> str:
    """The register map as a Markdown table (the README embeds this text)."""
    lines = ["| offset | register | access | reset | notes |", "|---|---|---|---|---|"]
    for r in register_table():
        reset = "-" if r.reset is None else f"0x{r.reset:08X}"
        lines.append(f"| 0x{r.offset:04X} | {r.name} | {r.access} | {reset} | {r.description} |")
    return "\n".join(lines)
