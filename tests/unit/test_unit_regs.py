"""Unit tests of the register map and descriptor codec (no simulator)."""

from __future__ import annotations

import asyncio
import re
import struct
import subprocess
from pathlib import Path

import pytest

from driver_model import codegen, desc, regs
from driver_model.desc import (
    DESC_MAX_LEN,
    DescFlag,
    Descriptor,
    DescriptorError,
    Segment,
    adjacent_count,
    build_chain,
    pair_scatter,
    split_segments,
)
from driver_model.regs import Target
from driver_model.xdma import XdmaMsix

ROOT = Path(__file__).resolve().parents[2]
REGISTERS_DOC = ROOT / "docs" / "registers.md"
HDL = ROOT / "hdl"
GUEST_INCLUDE = ROOT / "guest" / "include"


def test_identifiers_match_pg195_layout():
    assert regs.identifier(Target.H2C) == 0x1FC00006
    assert regs.identifier(Target.C2H) == 0x1FC10006
    assert regs.identifier(Target.IRQ) == 0x1FC20006
    assert regs.identifier(Target.SGDMA_COMMON) == 0x1FC60006
    assert regs.identifier(Target.H2C, channel=2) == 0x1FC00206


def test_offsets():
    assert regs.ch_reg(Target.C2H, regs.CH_STATUS_RC) == 0x1044
    assert regs.sg_reg(Target.H2C, regs.SG_DESC_LO) == 0x4080
    assert regs.sg_reg(Target.C2H, regs.SG_DESC_ADJ) == 0x5088
    assert regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1S) == 0x2014
    assert regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1C) == 0x2018
    assert regs.ch_reg(Target.H2C, regs.CH_PERF_CTRL) == 0x00C0
    with pytest.raises(ValueError):
        regs.ch_reg(Target.IRQ, 0)


def test_picoevb_control_value_is_all_ie_bits_and_run():
    assert int(regs.CTRL_IE_ALL | regs.Ctrl.RUN) == regs.PICOEVB_CONTROL_START == 0x00FFFE7F


def test_field_masks_derive_from_widths():
    assert regs.STAT_READ_ERROR.mask == 0x1F << 9
    assert regs.STAT_DESC_ERROR.get(0x00F80000) == 0x1F
    with pytest.raises(ValueError):
        regs.SG_DESC_ADJ_FIELD.put(64)
    assert regs.STAT_LOGGED_MASK == int(regs.CTRL_IE_ALL)


def test_descriptor_encoding_matches_picoevb_single_descriptor():
    d = Descriptor(
        src=0x1122334455667788,
        dst=0x10,
        length=4096,
        flags=DescFlag.STOP | DescFlag.COMPLETED | DescFlag.EOP,
    )
    raw = d.encode()
    assert len(raw) == 32
    control, length, src, dst, nxt = struct.unpack("<IIQQQ", raw)
    assert control == 0xAD4B0013
    assert (length, src, dst, nxt) == (4096, 0x1122334455667788, 0x10, 0)
    assert Descriptor.decode(raw) == d


def test_descriptor_rejects_bad_fields():
    with pytest.raises(DescriptorError):
        Descriptor(0, 0, DESC_MAX_LEN + 1).encode()
    with pytest.raises(DescriptorError):
        Descriptor(0, 0, 1, nxt_adj=64).encode()
    with pytest.raises(DescriptorError):
        Descriptor.decode(b"\0" * 31)


def test_split_at_max_length():
    segs = split_segments([Segment(0, 0, 2 * DESC_MAX_LEN + 5)])
    assert [s.length for s in segs] == [DESC_MAX_LEN, DESC_MAX_LEN, 5]
    assert segs[2].src == 2 * DESC_MAX_LEN


def test_a_segment_past_the_address_space_is_refused():
    """(found by the fuzz target: a segment split at the descriptor's longest ran a piece
    past 2**64, and the chain failed only when written)"""
    with pytest.raises(DescriptorError, match="destination 0xfffffffff0000001 runs past"):
        build_chain([Segment(0, 2**64 - 2**28 + 1, 2**28)], 0)
    with pytest.raises(DescriptorError, match="source -0x1 runs past"):
        build_chain([Segment(-1, 0, 4)], 0)


def test_chain_links_and_last_flags():
    chain = build_chain([Segment(i * 100, i * 100, 100) for i in range(5)], 0x10000)
    for i, d in enumerate(chain.descriptors[:-1]):
        assert d.next == 0x10000 + 32 * (i + 1)
        assert not d.flags & DescFlag.STOP
        assert d.nxt_adj == 4 - (i + 1)  # descriptors left after the next one
    last = chain.descriptors[-1]
    assert last.flags == DescFlag.STOP | DescFlag.COMPLETED | DescFlag.EOP
    assert last.next == 0 and last.nxt_adj == 0
    assert chain.first_adj == 4


def test_adjacent_blocks_never_cross_2k_groups_or_4k_pages():
    base = 0x20000 + 4096 - 5 * 32  # 5 slots before a page boundary
    chain = build_chain([Segment(0, 0, 1)] * 200, base)
    for i, d in enumerate(chain.descriptors[:-1]):
        start = chain.addresses[i + 1]
        end = start + 32 * d.nxt_adj
        assert start // 2048 == end // 2048
        assert start // 4096 == end // 4096
        assert d.nxt_adj <= 63
    assert chain.first_adj == 4


def test_adjacency_of_scattered_descriptors():
    addrs = [0x1000, 0x1020, 0x5000, 0x5020, 0x5040]
    assert adjacent_count(addrs, 0) == 1
    assert adjacent_count(addrs, 2) == 2
    chain = build_chain([Segment(0, 0, 1)] * 5, addrs)
    assert chain.descriptors[1].next == 0x5000 and chain.descriptors[1].nxt_adj == 2
    assert set(chain.blocks()) == {0x1000, 0x5000}
    with pytest.raises(DescriptorError):
        build_chain([Segment(0, 0, 1)], [0x1004])


def test_stop_and_completed_options():
    chain = build_chain([Segment(0, 0, 1)] * 4, 0, completed=[1], stop_at=2)
    flags = [d.flags for d in chain.descriptors]
    assert flags[1] == DescFlag.COMPLETED and flags[2] == DescFlag.STOP
    assert flags[0] == DescFlag(0)


def test_pair_scatter_splits_on_both_sides():
    segs = pair_scatter([(0x1000, 100), (0x9000, 50)], [(0x100, 30), (0x200, 120)])
    assert segs == [
        Segment(0x1000, 0x100, 30),
        Segment(0x101E, 0x200, 70),
        Segment(0x9000, 0x246, 50),
    ]
    with pytest.raises(DescriptorError):
        pair_scatter([(0, 1)], [(0, 2)])


def test_docs_register_table_matches_register_module():
    text = REGISTERS_DOC.read_text()
    m = re.search(r"<!-- regmap:begin -->\n(.*?)\n<!-- regmap:end -->", text, re.S)
    assert m, "docs/registers.md has no generated register table"
    assert m.group(1).strip() == codegen.register_table_markdown().strip(), (
        "docs/registers.md's register table is stale: run `make regmap`"
    )
    assert codegen.embed(text, codegen.register_table_markdown()) == text


def test_regmap_writes_both_copies(tmp_path: Path):
    """``make regmap`` (``python -m driver_model.codegen``) fills the page's block and
    writes the header; a page without the markers is one clear error."""
    doc = tmp_path / "registers.md"
    doc.write_text("# Map\n\n<!-- regmap:begin -->\nold\n<!-- regmap:end -->\n\nafter\n")
    assert codegen.main([str(tmp_path), str(doc)]) == 0
    assert doc.read_text() == (
        "# Map\n\n<!-- regmap:begin -->\n"
        + codegen.register_table_markdown()
        + "\n<!-- regmap:end -->\n\nafter\n"
    )
    assert (tmp_path / codegen.VERILOG_HEADER).read_text() == codegen.verilog_header()
    with pytest.raises(ValueError, match=r"no <!-- regmap:begin --> \.\.\. <!-- regmap:end -->"):
        codegen.embed("no block here", "table")


def test_verilog_header_matches_register_module():
    """hdl/ includes the header generated from regs.py; a stale one fails here."""
    header = HDL / codegen.VERILOG_HEADER
    assert header.read_text() == codegen.verilog_header(), f"{header} is stale: run `make regmap`"
    includers = [
        v.name for v in HDL.glob("*.v") if f'`include "{codegen.VERILOG_HEADER}"' in v.read_text()
    ]
    assert "pevb_regs.v" in includers and "pevb_desc_eng.v" in includers, includers


def test_c_header_matches_register_module():
    """guest/include has the C header generated from regs.py; a stale one fails here."""
    header = GUEST_INCLUDE / codegen.C_HEADER
    assert header.read_text() == codegen.c_header(), f"{header} is stale: run `make regmap`"


def test_c_header_values_compile(tmp_path):
    """The C header's macros evaluate to the Python map's values (checked by the C
    compiler with static assertions)."""
    checks = {
        "PEVB_REG(PEVB_TGT_C2H_SGDMA, 0, PEVB_SG_DESC_LO)": regs.sg_reg(
            regs.Target.C2H, regs.SG_DESC_LO
        ),
        "PEVB_REG(PEVB_TGT_H2C, 2, PEVB_CH_STATUS_RC)": regs.ch_reg(
            regs.Target.H2C, regs.CH_STATUS_RC, 2
        ),
        "PEVB_REG(PEVB_TGT_IRQ, 0, PEVB_IRQ_CHAN_INT_EN_W1S)": regs.irq_reg(
            regs.IRQ_CHAN_INT_EN_W1S
        ),
        "PEVB_CTRL_IE_ALL | PEVB_CTRL_RUN": int(regs.CTRL_IE_ALL | regs.Ctrl.RUN),
        "(PEVB_DESC_MAGIC << PEVB_DESC_MAGIC_SHIFT) | PEVB_DESC_STOP | PEVB_DESC_COMPLETED"
        " | PEVB_DESC_EOP": desc.Descriptor(0, 0, 1, desc.LAST_FLAGS).control,
        "(5u << PEVB_DESC_NXT_ADJ_SHIFT) & PEVB_DESC_NXT_ADJ_MASK": desc.CTRL_NXT_ADJ.put(5),
        "PEVB_STAT_ERROR_MASK": regs.STAT_ERROR_MASK,
        "(0x1FC30006u & PEVB_ID_SUBSYSTEM_MASK) >> PEVB_ID_SUBSYSTEM_SHIFT": 0x1FC,
    }
    lines = [f'#include "{codegen.C_HEADER}"']
    lines += [f'_Static_assert(({c}) == {v}u, "{c}");' for c, v in checks.items()]
    src = tmp_path / "check.c"
    src.write_text("\n".join(lines) + "\nint main(void) { return 0; }\n")
    cc = subprocess.run(
        ["cc", "-Wall", "-Werror", f"-I{GUEST_INCLUDE}", "-o", str(tmp_path / "check"), str(src)],
        capture_output=True,
        text=True,
    )
    assert cc.returncode == 0, cc.stderr


def test_verilog_header_values():
    """The header's text says what the Python map says (spot checks of each kind)."""
    text = codegen.verilog_header()
    assert "`define PEVB_CH_CONTROL 8'h04\n" in text
    assert "`define PEVB_STAT_READ_ERROR 13:9\n" in text
    assert "`define PEVB_STAT_READ_ERROR_LSB 9\n" in text
    assert "`define PEVB_CTRL_POLLMODE_WB_ENABLE 26\n" in text
    assert "`define PEVB_DESC_MAGIC 16'hAD4B\n" in text
    assert "`define PEVB_PCIE_ERR_UNSUPPORTED_REQUEST 5'h01\n" in text
    assert "`define PEVB_BAR_DMA 3'd1\n" in text
    assert "`define PEVB_DESC_DW_NEXT_HI 3'd7\n" in text
    ident = re.search(r"`define PEVB_IDENTIFIER\(tgt, strm, chn\) (.*)", text).group(1)
    assert ident == (
        "{`PEVB_ID_SUBSYSTEM_VALUE, (tgt), (strm), 3'd0, (chn), `PEVB_ID_VERSION_VALUE}"
    )
    assert "`define PEVB_IRQ_CHAN_VECTOR1 8'hA4\n" in text


# register offsets as case labels, and values only the register map may spell
_CASE_LABEL = re.compile(r"^\s*\d+'[hd][0-9A-Fa-f_]+\s*(,|:(?!:))", re.M)
_MAP_VALUES = [
    regs.ID_SUBSYSTEM_VALUE,
    regs.CTRL_WRITABLE,
    regs.STAT_LOGGED_MASK,
    regs.ALIGNMENTS_VALUE,
    regs.SYSTEM_ID_VALUE,
    regs.IRQ_VECTOR_MASK,
    regs.SGC_CHANNELS_MASK,
    desc.DESC_MAGIC,
]


def test_rtl_types_no_register_constant():
    """No XDMA offset, mask or magic is typed in the RTL: they come from the header."""
    for v in sorted(HDL.glob("*.v")):
        text = v.read_text()
        bodies = re.findall(r"\bcase\s*\((\w+)\)(.*?)\bendcase\b", text, re.S)
        for sel, body in bodies:
            if sel in ("ofs", "user_ofs"):
                assert not _CASE_LABEL.search(body), f"{v.name}: register offset typed by hand"
        flat = text.replace("_", "").upper()
        for value in _MAP_VALUES:
            assert f"'H{value:X}" not in flat and f"'H{value:08X}" not in flat, (
                f"{v.name} types {value:#x}"
            )


def test_descriptor_word_offsets_match_the_codec():
    d = Descriptor(
        src=0x1111_2222_3333_4444,
        dst=0x5555_6666_7777_8888,
        length=0x123,
        flags=DescFlag.STOP,
        next=0x9999_AAAA_BBBB_CCC0,
        nxt_adj=5,
    )
    raw = d.encode()
    word = lambda off, fmt: struct.unpack_from(fmt, raw, off)[0]  # noqa: E731
    assert word(desc.DESC_CONTROL_OFFSET, "<I") == d.control
    assert word(desc.DESC_LENGTH_OFFSET, "<I") == d.length
    assert word(desc.DESC_SRC_OFFSET, "<Q") == d.src
    assert word(desc.DESC_DST_OFFSET, "<Q") == d.dst
    assert word(desc.DESC_NEXT_OFFSET, "<Q") == d.next


def test_c2h_stream_result():
    """The C2H stream result: {0x52B4 << 16 | EOP, length}, little-endian; anything else
    (never written, a zeroed or guard-filled slot, reserved status bits set) is refused."""
    r = desc.C2hResult.parse(struct.pack("<II", 0x52B4_0001, 700) + b"\xa5" * 8)
    assert r == desc.C2hResult(700, True)
    assert desc.C2hResult.parse(struct.pack("<II", 0x52B4_0000, 4096)) == desc.C2hResult(
        4096, False
    )
    for status in (0, 0xA5A5A5A5, 0x52B4_0002, 0x52B5_0001):
        with pytest.raises(DescriptorError, match="not a C2H stream result"):
            desc.C2hResult.parse(struct.pack("<II", status, 1))


def test_msix_offsets():
    """PG195: entry n at 0x8000 + 16n (32 entries), the PBA at 0x8FE0."""
    assert regs.msix_reg(0, regs.MSIX_ADDR_LO) == 0x8000
    assert regs.msix_reg(31, regs.MSIX_CTRL) == 0x81FC
    assert regs.MSIX_PBA_OFFSET == 0x8FE0
    for bad in (-1, regs.MSIX_VECTORS):
        with pytest.raises(ValueError, match="MSI-X vector"):
            regs.msix_reg(bad, regs.MSIX_DATA)


def test_msix_program_refuses_an_unaligned_address():
    with pytest.raises(ValueError, match="not DWORD aligned"):
        # refused before any access
        asyncio.run(XdmaMsix(None, bar=1).program(0, 0x1002, 0))  # type: ignore[arg-type]
