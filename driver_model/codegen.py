"""The register map's generated copies: the documentation's register table and the Verilog
header the RTL includes (``hdl/pevb_regs.vh``), both made from :mod:`driver_model.regs` and
:mod:`driver_model.desc`, the one place the map is typed. ``make regmap`` runs
``python -m driver_model.codegen`` to write them; tests fail when either is stale.

This lives apart from ``regs`` so that ``regs`` (which ``desc`` builds on) imports nothing
of the package: the generators need both, and no module of the package imports this one.
"""

from __future__ import annotations

import argparse
import enum
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import desc, regs


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

    The documentation's register table is generated from (and checked against) this list.
    """
    rows: list[RegInfo] = []
    for d in (regs.Target.H2C, regs.Target.C2H):
        n = d.name
        rows += [
            RegInfo(
                regs.ch_reg(d, regs.CH_IDENTIFIER),
                f"{n} identifier",
                "RO",
                regs.identifier(d),
                "0x1FC, target, stream (bit 15), channel, version",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_CONTROL),
                f"{n} control",
                "RW",
                0,
                "Run [0], ie_* [23:19,18:14,13:9,6:1], pollmode_wb_enable [26]",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_CONTROL_W1S),
                f"{n} control W1S",
                "W1S",
                None,
                "set control bits",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_CONTROL_W1C),
                f"{n} control W1C",
                "W1C",
                None,
                "clear control bits",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_STATUS),
                f"{n} status",
                "RW1C",
                0,
                "descr/write/read_error, idle/magic/align/len, completed, stopped, busy [0];"
                " a 1 written clears its bit, a 0 nothing; an event in the write's clock is kept",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_STATUS_RC),
                f"{n} status (clear on read)",
                "RC",
                0,
                "same bits, cleared by the read; an event in the read's clock is kept",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_COMPLETED_COUNT),
                f"{n} completed descriptor count",
                "RO",
                0,
                "cleared when a chain starts (Run rises; set again while busy: once idle)",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_ALIGNMENTS),
                f"{n} alignments",
                "RO",
                regs.ALIGNMENTS_VALUE,
                "address alignment 1, length granularity 1, 64 address bits",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_POLL_WB_LO),
                f"{n} poll-mode write-back address low",
                "RW",
                0,
                "{err[31], count[23:0]} written here",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_POLL_WB_HI),
                f"{n} poll-mode write-back address high",
                "RW",
                0,
                "",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_INT_MASK),
                f"{n} interrupt enable mask",
                "RW",
                0,
                "same bit positions as the ie_* bits",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_INT_MASK_W1S),
                f"{n} interrupt enable mask W1S",
                "W1S",
                None,
                "",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_INT_MASK_W1C),
                f"{n} interrupt enable mask W1C",
                "W1C",
                None,
                "",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_PERF_CTRL),
                f"{n} performance control",
                "RW",
                0,
                "run [2], clear [1] (self-clearing: one clock, done whatever is written"
                " in it), auto [0]",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_PERF_CYC_LO),
                f"{n} performance cycle count low",
                "RO",
                0,
                "cycles while running (busy, in auto mode)",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_PERF_CYC_HI),
                f"{n} performance cycle count high",
                "RO",
                0,
                "count [41:32] in [9:0], maxed [16]",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_PERF_DATA_LO),
                f"{n} performance data count low",
                "RO",
                0,
                "data beats (datapath width) while running: H2C from PCIe, C2H from AXI",
            ),
            RegInfo(
                regs.ch_reg(d, regs.CH_PERF_DATA_HI),
                f"{n} performance data count high",
                "RO",
                0,
                "count [41:32] in [9:0], maxed [16]",
            ),
        ]
    rows += [
        RegInfo(
            regs.irq_reg(regs.IRQ_IDENTIFIER),
            "IRQ identifier",
            "RO",
            regs.identifier(regs.Target.IRQ),
            "",
        ),
        RegInfo(
            regs.irq_reg(regs.IRQ_USER_INT_EN),
            "user interrupt enable",
            "RW",
            0,
            "one bit per usr_irq_req line",
        ),
        RegInfo(
            regs.irq_reg(regs.IRQ_USER_INT_EN_W1S), "user interrupt enable W1S", "W1S", None, ""
        ),
        RegInfo(
            regs.irq_reg(regs.IRQ_USER_INT_EN_W1C), "user interrupt enable W1C", "W1C", None, ""
        ),
        RegInfo(
            regs.irq_reg(regs.IRQ_CHAN_INT_EN),
            "channel interrupt enable",
            "RW",
            0,
            "H2C channels, then C2H",
        ),
        RegInfo(
            regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1S), "channel interrupt enable W1S", "W1S", None, ""
        ),
        RegInfo(
            regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1C), "channel interrupt enable W1C", "W1C", None, ""
        ),
        RegInfo(
            regs.irq_reg(regs.IRQ_USER_INT_REQ), "user interrupt request", "RO", 0, "usr_irq_req"
        ),
        RegInfo(
            regs.irq_reg(regs.IRQ_CHAN_INT_REQ),
            "channel interrupt request",
            "RO",
            0,
            "status & interrupt mask, per channel",
        ),
        RegInfo(
            regs.irq_reg(regs.IRQ_USER_INT_PEND),
            "user interrupt pending",
            "RO",
            0,
            "usr_irq_req & user interrupt enable",
        ),
        RegInfo(
            regs.irq_reg(regs.IRQ_CHAN_INT_PEND),
            "channel interrupt pending",
            "RO",
            0,
            "request & channel interrupt enable",
        ),
        *[
            RegInfo(
                regs.irq_reg(o),
                f"user vector number {i}",
                "RW",
                0,
                f"user interrupts {4 * i}-{4 * i + 3}: vector in [4:0], [12:8], [20:16], [28:24]",
            )
            for i, o in enumerate(regs.IRQ_USER_VECTOR)
        ],
        *[
            RegInfo(
                regs.irq_reg(o),
                f"channel vector number {i}",
                "RW",
                0,
                f"interrupt bits {4 * i}-{4 * i + 3}: vector in [4:0], [12:8], [20:16], "
                "[28:24]; H2C channels first, then C2H",
            )
            for i, o in enumerate(regs.IRQ_CHAN_VECTOR)
        ],
        RegInfo(
            regs.cfg_reg(regs.CFG_IDENTIFIER),
            "config identifier",
            "RO",
            regs.identifier(regs.Target.CONFIG),
            "",
        ),
        RegInfo(regs.cfg_reg(regs.CFG_BUSDEV), "bus/device", "RO", None, "bus [15:8]"),
        RegInfo(
            regs.cfg_reg(regs.CFG_MPS), "PCIe max payload size", "RO", None, "encoded, 128 << n"
        ),
        RegInfo(regs.cfg_reg(regs.CFG_MRRS), "PCIe max read request size", "RO", None, "encoded"),
        RegInfo(regs.cfg_reg(regs.CFG_SYSTEM_ID), "system id", "RO", regs.SYSTEM_ID_VALUE, ""),
        RegInfo(regs.cfg_reg(regs.CFG_MSI_ENABLE), "MSI enable", "RO", None, "MSI [0], MSI-X [1]"),
        RegInfo(
            regs.cfg_reg(regs.CFG_DATA_WIDTH),
            "datapath width",
            "RO",
            None,
            "0:64 1:128 2:256 3:512",
        ),
        RegInfo(
            regs.cfg_reg(regs.CFG_PCIE_CONTROL),
            "PCIe control",
            "RW",
            regs.CFG_PCIE_CONTROL_RESET,
            "rlx ord [0]",
        ),
        RegInfo(regs.cfg_reg(regs.CFG_AXI_MPS), "AXI max payload size", "RO", None, "same as PCIe"),
        RegInfo(
            regs.cfg_reg(regs.CFG_AXI_MRRS), "AXI max read request size", "RO", None, "same as PCIe"
        ),
        RegInfo(regs.cfg_reg(regs.CFG_WR_FLUSH_TIMEOUT), "write flush timeout", "RW", 0, "stored"),
    ]
    for d in (regs.Target.H2C, regs.Target.C2H):
        n = d.name
        sg = regs.Target.H2C_SGDMA if d == regs.Target.H2C else regs.Target.C2H_SGDMA
        rows += [
            RegInfo(
                regs.sg_reg(d, regs.SG_IDENTIFIER),
                f"{n} SGDMA identifier",
                "RO",
                regs.identifier(sg),
                "",
            ),
            RegInfo(
                regs.sg_reg(d, regs.SG_DESC_LO),
                f"{n} first descriptor address low",
                "RW",
                0,
                "32-byte aligned",
            ),
            RegInfo(
                regs.sg_reg(d, regs.SG_DESC_HI), f"{n} first descriptor address high", "RW", 0, ""
            ),
            RegInfo(
                regs.sg_reg(d, regs.SG_DESC_ADJ),
                f"{n} first descriptor adjacent count",
                "RW",
                0,
                "Dsc_Adj [5:0]",
            ),
            RegInfo(
                regs.sg_reg(d, regs.SG_CREDITS),
                f"{n} descriptor credits",
                "RW",
                0,
                "stored (credit mode is a stream feature)",
            ),
        ]
    rows += [
        RegInfo(
            regs.sgc_reg(regs.SGC_IDENTIFIER),
            "SGDMA common identifier",
            "RO",
            regs.identifier(regs.Target.SGDMA_COMMON),
            "",
        ),
        RegInfo(
            regs.sgc_reg(regs.SGC_CONTROL),
            "descriptor halt",
            "RW",
            0,
            "h2c halt [3:0], c2h halt [19:16]: no new descriptor fetches",
        ),
        RegInfo(regs.sgc_reg(regs.SGC_CONTROL_W1S), "descriptor halt W1S", "W1S", None, ""),
        RegInfo(regs.sgc_reg(regs.SGC_CONTROL_W1C), "descriptor halt W1C", "W1C", None, ""),
        RegInfo(regs.sgc_reg(regs.SGC_CREDIT_MODE), "credit mode enable", "RW", 0, "stored"),
        RegInfo(regs.sgc_reg(regs.SGC_CREDIT_MODE_W1S), "credit mode enable W1S", "W1S", None, ""),
        RegInfo(regs.sgc_reg(regs.SGC_CREDIT_MODE_W1C), "credit mode enable W1C", "W1C", None, ""),
        RegInfo(
            regs.msix_reg(0, regs.MSIX_ADDR_LO),
            "MSI-X vector 0 address low",
            "RW",
            0,
            f"vector n at +{regs.MSIX_ENTRY_SIZE}n (n < {regs.MSIX_VECTORS});"
            " built with MSI-X only",
        ),
        RegInfo(regs.msix_reg(0, regs.MSIX_ADDR_HI), "MSI-X vector 0 address high", "RW", 0, ""),
        RegInfo(regs.msix_reg(0, regs.MSIX_DATA), "MSI-X vector 0 data", "RW", 0, ""),
        RegInfo(
            regs.msix_reg(0, regs.MSIX_CTRL),
            "MSI-X vector 0 control",
            "RW",
            regs.MSIX_CTRL_MASKED.mask,
            "mask [0]: a masked vector's message waits in the PBA",
        ),
        RegInfo(regs.MSIX_PBA_OFFSET, "MSI-X pending bit array", "RO", 0, "vector n pending [n]"),
    ]
    return sorted(rows, key=lambda r: r.offset)


def register_table_markdown() -> str:
    """The register map as a Markdown table (docs/registers.md embeds this text)."""
    lines = ["| offset | register | access | reset | notes |", "|---|---|---|---|---|"]
    for r in register_table():
        reset = "-" if r.reset is None else f"0x{r.reset:08X}"
        lines.append(f"| 0x{r.offset:04X} | {r.name} | {r.access} | {reset} | {r.description} |")
    return "\n".join(lines)


# --- the Verilog header the RTL includes ---------------------------------------------------
# the register offsets of each block, in the order both generated headers list them
OFFSET_GROUPS: dict[str, tuple[str, ...]] = {
    "channel registers (H2C and C2H blocks)": (
        "CH_IDENTIFIER",
        "CH_CONTROL",
        "CH_CONTROL_W1S",
        "CH_CONTROL_W1C",
        "CH_STATUS",
        "CH_STATUS_RC",
        "CH_COMPLETED_COUNT",
        "CH_ALIGNMENTS",
        "CH_POLL_WB_LO",
        "CH_POLL_WB_HI",
        "CH_INT_MASK",
        "CH_INT_MASK_W1S",
        "CH_INT_MASK_W1C",
        "CH_PERF_CTRL",
        "CH_PERF_CYC_LO",
        "CH_PERF_CYC_HI",
        "CH_PERF_DATA_LO",
        "CH_PERF_DATA_HI",
    ),
    "SGDMA registers": (
        "SG_IDENTIFIER",
        "SG_DESC_LO",
        "SG_DESC_HI",
        "SG_DESC_ADJ",
        "SG_CREDITS",
    ),
    "SGDMA common registers": (
        "SGC_IDENTIFIER",
        "SGC_CONTROL",
        "SGC_CONTROL_W1S",
        "SGC_CONTROL_W1C",
        "SGC_CREDIT_MODE",
        "SGC_CREDIT_MODE_W1S",
        "SGC_CREDIT_MODE_W1C",
    ),
    "IRQ block registers": (
        "IRQ_IDENTIFIER",
        "IRQ_USER_INT_EN",
        "IRQ_USER_INT_EN_W1S",
        "IRQ_USER_INT_EN_W1C",
        "IRQ_CHAN_INT_EN",
        "IRQ_CHAN_INT_EN_W1S",
        "IRQ_CHAN_INT_EN_W1C",
        "IRQ_USER_INT_REQ",
        "IRQ_CHAN_INT_REQ",
        "IRQ_USER_INT_PEND",
        "IRQ_CHAN_INT_PEND",
    ),
    "config block registers": (
        "CFG_IDENTIFIER",
        "CFG_BUSDEV",
        "CFG_MPS",
        "CFG_MRRS",
        "CFG_SYSTEM_ID",
        "CFG_MSI_ENABLE",
        "CFG_DATA_WIDTH",
        "CFG_PCIE_CONTROL",
        "CFG_AXI_MPS",
        "CFG_AXI_MRRS",
        "CFG_WR_FLUSH_TIMEOUT",
    ),
}


def _offset_rows() -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """Each block's title and its registers' (name, offset), the IRQ block's vector
    registers included."""
    g = vars(regs)
    for title, names in OFFSET_GROUPS.items():
        rows = [(name, int(g[name])) for name in names]
        if names[0] == "IRQ_IDENTIFIER":
            rows += [(f"IRQ_USER_VECTOR{i}", off) for i, off in enumerate(regs.IRQ_USER_VECTOR)]
            rows += [(f"IRQ_CHAN_VECTOR{i}", off) for i, off in enumerate(regs.IRQ_CHAN_VECTOR)]
        yield title, rows


VERILOG_HEADER = "pevb_regs.vh"


def _lit(value: int, width: int) -> str:
    """A sized Verilog literal."""
    return f"{width}'h{value:0{(width + 3) // 4}X}" if width > 4 else f"{width}'d{value}"


def _concat(parts: list[tuple[regs.Field, str]], width: int = 32) -> str:
    """A concatenation placing each expression in its field, zeros elsewhere (MSB first)."""
    out, pos = [], width
    for fld, expr in sorted(parts, key=lambda p: -p[0].shift):
        top = fld.shift + fld.width
        if top < pos:
            out.append(f"{pos - top}'d0")
        out.append(expr)
        pos = fld.shift
    if pos:
        out.append(f"{pos}'d0")
    return "{" + ", ".join(out) + "}"


def verilog_header() -> str:
    """``hdl/pevb_regs.vh``: every offset, bit position, mask, magic number and error code
    the RTL uses, as ``PEVB_*`` macros (a bit field is its ``msb:lsb`` range, a flag its
    bit index). ``make regmap`` writes it; a test fails when it is stale."""
    lines = [
        "// SPDX-License-Identifier: MIT",
        "// Language: Verilog 2001",
        "//",
        "// The XDMA register map, descriptor format and error codes of the engine, generated",
        "// from driver_model/regs.py and driver_model/desc.py by `make regmap`: do not edit.",
        "// A bit field is a part-select range (x[`PEVB_F]) with its lowest bit (`PEVB_F_LSB);",
        "// a flag is a bit index (x[`PEVB_B]).",
        "",
        "`ifndef PEVB_REGS_VH",
        "`define PEVB_REGS_VH",
    ]

    def section(title: str) -> None:
        lines.extend(["", f"// {title}"])

    def define(name: str, value: str) -> None:
        lines.append(f"`define PEVB_{name} {value}")

    def field(name: str, fld: regs.Field) -> None:
        define(name, f"{fld.shift + fld.width - 1}:{fld.shift}")
        define(f"{name}_LSB", str(fld.shift))

    def flags(prefix: str, enum_cls: type[enum.IntFlag]) -> None:
        for member in enum_cls:
            value = int(member)
            if member.name and value & (value - 1) == 0:  # single bits
                define(f"{prefix}_{member.name}", str(value.bit_length() - 1))

    section("BARs of the FPGA function (the BAR id of a completer request) and their sizes")
    define("BAR_USER", _lit(regs.BAR_USER, 3))
    define("BAR_DMA", _lit(regs.BAR_DMA, 3))
    define("BAR_AXIB", _lit(regs.BAR_AXIB, 3))
    define("BAR_USER_ADDR_WIDTH", str((regs.BAR_USER_SIZE - 1).bit_length()))
    define("BAR_DMA_ADDR_WIDTH", str((regs.BAR_DMA_SIZE - 1).bit_length()))

    section("DMA BAR offsets: target, channel, register; the targets")
    field("ADDR_TARGET", regs.ADDR_TARGET)
    field("ADDR_CHANNEL", regs.ADDR_CHANNEL)
    field("ADDR_REG", regs.ADDR_REG)
    for target in regs.Target:
        define(f"TGT_{target.name}", _lit(int(target), regs.ADDR_TARGET.width))

    section("identifier register of every block")
    define("ID_SUBSYSTEM_VALUE", _lit(regs.ID_SUBSYSTEM_VALUE, regs.ID_SUBSYSTEM.width))
    define("ID_VERSION_VALUE", _lit(regs.ID_VERSION_VALUE, regs.ID_VERSION.width))
    ident = _concat(
        [
            (regs.ID_SUBSYSTEM, "`PEVB_ID_SUBSYSTEM_VALUE"),
            (regs.ID_TARGET, "(tgt)"),
            (regs.ID_STREAM, "(strm)"),
            (regs.ID_CHANNEL, "(chn)"),
            (regs.ID_VERSION, "`PEVB_ID_VERSION_VALUE"),
        ]
    )
    define("IDENTIFIER(tgt, strm, chn)", ident)

    for title, rows in _offset_rows():
        section(title)
        for name, off in rows:
            define(name, _lit(off, regs.ADDR_REG.width))
    g = vars(regs)

    section("MSI-X table (entry registers, entry size, vectors), the PBA, vector control")
    for name in ("MSIX_ADDR_LO", "MSIX_ADDR_HI", "MSIX_DATA", "MSIX_CTRL"):
        define(name, _lit(g[name], 4))
    define("MSIX_ENTRY_SIZE", str(regs.MSIX_ENTRY_SIZE))
    define("MSIX_VECTORS", str(regs.MSIX_VECTORS))
    define("MSIX_PBA", _lit(regs.MSIX_PBA, 12))
    define("MSIX_CTRL_MASKED", str(regs.MSIX_CTRL_MASKED.shift))

    section("channel control bits and writable mask; the poll-mode write-back word")
    flags("CTRL", regs.Ctrl)
    define("CTRL_WRITABLE", _lit(regs.CTRL_WRITABLE, 32))
    field("WB_COUNT", regs.WB_COUNT)
    define("WB_ERROR", str(regs.WB_ERROR.shift))

    section("channel status bits, error fields, the loggable mask and the event width")
    flags("STAT", regs.Stat)
    field("STAT_READ_ERROR", regs.STAT_READ_ERROR)
    field("STAT_WRITE_ERROR", regs.STAT_WRITE_ERROR)
    field("STAT_DESC_ERROR", regs.STAT_DESC_ERROR)
    define("STAT_LOGGED_MASK", _lit(regs.STAT_LOGGED_MASK, 32))
    define("STAT_EVENT_WIDTH", str(regs.STAT_EVENT_WIDTH))

    section("error codes of the status error fields: PCIe side, card (AXI) side")
    for e in regs.PcieErr:
        define(f"PCIE_ERR_{e.name}", _lit(int(e), regs.STAT_READ_ERROR.width))
    for e in regs.AxiErr:
        define(f"AXI_ERR_{e.name}", _lit(int(e), regs.STAT_READ_ERROR.width))

    section("other fields and values")
    define("ALIGNMENTS_VALUE", _lit(regs.ALIGNMENTS_VALUE, 32))
    define("SYSTEM_ID_VALUE", _lit(regs.SYSTEM_ID_VALUE, 32))
    flags("PERF", regs.Perf)
    field("PERF_CTRL", regs.Field(0, max(int(p) for p in regs.Perf).bit_length()))
    field("PERF_COUNT_HI", regs.PERF_COUNT_HI)
    define("PERF_MAXED", str(regs.PERF_MAXED.shift))
    field("SG_DESC_ADJ_FIELD", regs.SG_DESC_ADJ_FIELD)
    field("SG_CREDITS_FIELD", regs.SG_CREDITS_FIELD)
    define("SGC_CHANNELS_MASK", _lit(regs.SGC_CHANNELS_MASK, 32))
    field("SGC_H2C_DESC_HALT", regs.SGC_H2C_DESC_HALT)
    field("SGC_C2H_DESC_HALT", regs.SGC_C2H_DESC_HALT)
    define("IRQ_VECTOR_MASK", _lit(regs.IRQ_VECTOR_MASK, 32))
    define("IRQ_VECTOR_WIDTH", str(regs.IRQ_VECTOR_FIELD_WIDTH))
    define("IRQ_VECTOR_STRIDE", str(regs.IRQ_VECTOR_STRIDE))
    field("IRQ_USER_INT_FIELD", regs.IRQ_USER_INT_FIELD)
    field("CFG_BUS_FIELD", regs.CFG_BUS_FIELD)
    field("CFG_SIZE_FIELD", regs.CFG_SIZE_FIELD)
    define("CFG_MSI_FIELD", str(regs.CFG_MSI_FIELD.shift))
    define("CFG_MSIX_FIELD", str(regs.CFG_MSIX_FIELD.shift))
    field("CFG_DATA_WIDTH_FIELD", regs.CFG_DATA_WIDTH_FIELD)
    width_enc = " : ".join(
        f"(w) == {w} ? {_lit(code, regs.CFG_DATA_WIDTH_FIELD.width)}"
        for w, code in regs.DATA_WIDTH_ENCODING.items()
    )
    define("DATA_WIDTH_ENC(w)", f"({width_enc} : {_lit(7, regs.CFG_DATA_WIDTH_FIELD.width)})")
    define("CFG_PCIE_CTRL_RELAXED_ORDERING", str(regs.CFG_PCIE_CTRL_RELAXED_ORDERING.shift))
    field("CFG_WR_FLUSH_TIMEOUT_FIELD", regs.CFG_WR_FLUSH_TIMEOUT_FIELD)

    section("user BAR")
    define("USER_LED", _lit(regs.USER_LED, 8))
    define("USER_RAM_SIZE", _lit(regs.USER_RAM_SIZE, 8))
    define("USER_MAILBOX", _lit(regs.USER_MAILBOX, 8))
    define("USER_MAILBOX_STATUS", _lit(regs.USER_MAILBOX_STATUS, 8))
    define("MAILBOX_DEPTH", str(regs.MAILBOX_DEPTH))
    define("MAILBOX_IRQ", str(regs.MAILBOX_IRQ))
    field("MAILBOX_COUNT_FIELD", regs.MAILBOX_COUNT_FIELD)
    define("MAILBOX_OVERFLOW_BIT", str(regs.MAILBOX_OVERFLOW.bit_length() - 1))
    field("LED_FIELD", regs.LED_FIELD)
    define("LED_RESET_VALUE", _lit(regs.LED_RESET_VALUE, regs.LED_FIELD.width))

    section("descriptors: the DWORD index of each word, control word fields and flag bits,")
    lines.append("// the length field, the magic")
    dw_bits = (desc.DESC_SIZE // 4 - 1).bit_length()
    for name in ("CONTROL", "LENGTH", "SRC", "DST", "NEXT"):
        dw = getattr(desc, f"DESC_{name}_OFFSET") // 4
        if name in ("SRC", "DST", "NEXT"):
            define(f"DESC_DW_{name}_LO", _lit(dw, dw_bits))
            define(f"DESC_DW_{name}_HI", _lit(dw + 1, dw_bits))
        else:
            define(f"DESC_DW_{name}", _lit(dw, dw_bits))
    field("DESC_MAGIC_FIELD", desc.CTRL_MAGIC)
    field("DESC_NXT_ADJ", desc.CTRL_NXT_ADJ)
    flags("DESC", desc.DescFlag)
    field("DESC_LEN", desc.LEN_FIELD)
    define("DESC_MAGIC", _lit(desc.DESC_MAGIC, desc.CTRL_MAGIC.width))

    lines.extend(["", "`endif", ""])
    return "\n".join(lines)


C_HEADER = "pevb_regs.h"


def c_header() -> str:
    """``guest/include/pevb_regs.h``: what a C driver of the card needs from the register
    map (BARs, block and register offsets, control and status bits, interrupt registers,
    the descriptor format, the user BAR), as ``PEVB_*`` macros. ``make regmap`` writes it;
    a test fails when it is stale."""
    lines = [
        "/* SPDX-License-Identifier: MIT */",
        "/*",
        " * The XDMA register map and descriptor format of the engine, generated from",
        " * driver_model/regs.py and driver_model/desc.py by `make regmap`: do not edit.",
        " * A bit field F is PEVB_F_SHIFT and PEVB_F_MASK (in place); a flag is a mask.",
        " */",
        "#ifndef PEVB_REGS_H",
        "#define PEVB_REGS_H",
    ]

    def section(title: str) -> None:
        lines.extend(["", f"/* {title} */"])

    def define(name: str, value: int | str) -> None:
        decimal = isinstance(value, int) and (value <= 9 or name.endswith("_SHIFT"))
        text = value if isinstance(value, str) else str(value) if decimal else f"0x{value:X}"
        if isinstance(value, int) and value > 0x7FFFFFFF:
            text += "U"
        lines.append(f"#define PEVB_{name} {text}")

    def field(name: str, fld: regs.Field) -> None:
        define(f"{name}_SHIFT", fld.shift)
        define(f"{name}_MASK", fld.mask)

    def flags(prefix: str, enum_cls: type[enum.IntFlag]) -> None:
        for member in enum_cls:
            if member.name:
                define(f"{prefix}_{member.name}", int(member))

    section("BARs of the picoevb card and their sizes")
    define("BAR_USER", regs.BAR_USER)
    define("BAR_DMA", regs.BAR_DMA)
    define("BAR_USER_SIZE", regs.BAR_USER_SIZE)
    define("BAR_DMA_SIZE", regs.BAR_DMA_SIZE)

    section("user BAR registers")
    define("USER_LED", regs.USER_LED)
    field("LED", regs.LED_FIELD)
    define("USER_RAM_SIZE", regs.USER_RAM_SIZE)
    define("USER_MAILBOX", regs.USER_MAILBOX)
    define("USER_MAILBOX_STATUS", regs.USER_MAILBOX_STATUS)
    field("MAILBOX_COUNT", regs.MAILBOX_COUNT_FIELD)
    define("MAILBOX_OVERFLOW", regs.MAILBOX_OVERFLOW)

    section("DMA BAR: a register is (target << 12) | (channel << 8) | offset")
    define("TARGET_SHIFT", regs.TARGET_SHIFT)
    define("CHANNEL_SHIFT", regs.CHANNEL_SHIFT)
    for target in regs.Target:
        define(f"TGT_{target.name}", int(target))
    define(
        "REG(tgt, chn, off)",
        "(((tgt) << PEVB_TARGET_SHIFT) | ((chn) << PEVB_CHANNEL_SHIFT) | (off))",
    )

    section("identifier register of every block")
    field("ID_SUBSYSTEM", regs.ID_SUBSYSTEM)
    field("ID_TARGET", regs.ID_TARGET)
    field("ID_CHANNEL", regs.ID_CHANNEL)
    define("ID_SUBSYSTEM_VALUE", regs.ID_SUBSYSTEM_VALUE)

    for title, rows in _offset_rows():
        section(title)
        for name, off in rows:
            define(name, off)

    section("channel control and status bits")
    flags("CTRL", regs.Ctrl)
    define("CTRL_IE_ALL", regs.CTRL_IE_ALL)
    flags("STAT", regs.Stat)
    define("STAT_ERROR_MASK", regs.STAT_ERROR_MASK)

    section("descriptors: 32 bytes, 32-byte aligned, little endian")
    define("DESC_SIZE", desc.DESC_SIZE)
    define("DESC_MAGIC", desc.DESC_MAGIC)
    field("DESC_MAGIC", desc.CTRL_MAGIC)
    field("DESC_NXT_ADJ", desc.CTRL_NXT_ADJ)
    flags("DESC", desc.DescFlag)
    define("DESC_MAX_LEN", desc.DESC_MAX_LEN)
    define("DESC_ADJ_MAX", desc.MAX_ADJ)

    lines.extend(["", "#endif /* PEVB_REGS_H */", ""])
    return "\n".join(lines)


# --- writing them -------------------------------------------------------------------------
TABLE_MARKERS = ("<!-- regmap:begin -->\n", "\n<!-- regmap:end -->")


def embed(text: str, table: str, markers: tuple[str, str] = TABLE_MARKERS) -> str:
    """``text`` with what stands between ``markers`` replaced by ``table``; a ValueError
    names the missing marker."""
    begin, end = markers
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"no {begin.strip()} ... {end.strip()} block to fill")
    return text[: i + len(begin)] + table + text[j:]


def main(argv: list[str] | None = None) -> int:
    """Write the Verilog header into HDL, the register table into the Markdown page DOC
    (between its ``regmap`` markers) and the C header into CINCLUDE."""
    ap = argparse.ArgumentParser(prog="python -m driver_model.codegen", description=main.__doc__)
    ap.add_argument("hdl", type=Path, help="the folder the RTL includes the header from")
    ap.add_argument("doc", type=Path, help="the Markdown page holding the register table")
    ap.add_argument("cinclude", type=Path, nargs="?", help="the folder of the C header")
    args = ap.parse_args(argv)
    (args.hdl / VERILOG_HEADER).write_text(verilog_header())
    if args.cinclude is not None:
        (args.cinclude / C_HEADER).write_text(c_header())
    args.doc.write_text(embed(args.doc.read_text(), register_table_markdown()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
