"""Unit tests of the register map and descriptor codec (no simulator)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from driver_model import regs
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

README = Path(__file__).resolve().parent.parent / "README.md"


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
    d = Descriptor(src=0x1122334455667788, dst=0x10, length=4096,
                   flags=DescFlag.STOP | DescFlag.COMPLETED | DescFlag.EOP)
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
    assert segs == [Segment(0x1000, 0x100, 30), Segment(0x101E, 0x200, 70),
                    Segment(0x9000, 0x246, 50)]
    with pytest.raises(DescriptorError):
        pair_scatter([(0, 1)], [(0, 2)])


def test_readme_register_table_matches_register_module():
    text = README.read_text()
    m = re.search(r"<!-- regmap:begin -->\n(.*?)\n<!-- regmap:end -->", text, re.S)
    assert m, "README has no generated register table"
    assert m.group(1).strip() == regs.register_table_markdown().strip(), (
        "README register table is stale: run `make regmap`")
