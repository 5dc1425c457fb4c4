"""The GTKWave save file and the dump reader, on a small VCD written here (pywellen reads
VCD as it reads FST): aliases without bit ranges, ASCII text tracks, groups only for
signals the dump has, and a view zoomed so the focused label shows whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from vcd import VCDWriter

from tb.debug.fst import FstError, read_dump, text_values
from tb.debug.gtkwave import (
    CHAR_PX,
    GROUPS,
    MAX_NS_PER_PX,
    TEXT_TITLE,
    Focus,
    focus,
    save_file_signals,
    units_per_pixel,
    write_save_file,
    zoom_for,
)
from tb.debug.records import TRACKS, encode
from tests.unit.test_unit_perfetto import _rec

LABELS = [(1000, "MWr 128B -> GPU BAR1 pin#1 va+0x0"), (1300, "MWr 128B -> GPU BAR1 pin#1 va+0x80")]


def _dump(path: Path) -> Path:
    """A 1 ps VCD with the Icarus layout: the text tracks in a root ``pevb_annot``, a few
    of the engine's top-level signals (the CQ stream only: the other groups are absent)."""
    with open(path, "w") as f, VCDWriter(f, timescale="1 ps") as w:
        tracks = {t: w.register_var("pevb_annot", t, "reg", size=512) for t in TRACKS}
        tvalid = w.register_var("pevb_dma_top", "s_axis_cq_tvalid", "wire", size=1)
        tdata = w.register_var("pevb_dma_top", "s_axis_cq_tdata", "wire", size=64)
        led = w.register_var("pevb_dma_top", "led", "wire", size=3)
        w.change(tvalid, 0, 0)
        w.change(tdata, 0, 0)
        w.change(led, 0, 0)
        for t, text in LABELS:
            w.change(tracks["fpga_tx"], t * 1000, encode(text, 64))
        w.change(tracks["mmio"], 2_000_000, encode("MRd 4B tag 3 -> FPGA C2H status", 64))
    return path


def test_dump_reader_names_vectors_as_gtkwave_does(tmp_path) -> None:
    dump = read_dump(_dump(tmp_path / "w.vcd"))
    assert dump.unit_ns == pytest.approx(1e-3)
    assert dump.gtkwave_name("pevb_dma_top.led") == "pevb_dma_top.led[2:0]"
    assert dump.gtkwave_name("pevb_dma_top.s_axis_cq_tvalid") == "pevb_dma_top.s_axis_cq_tvalid"
    assert dump.gtkwave_name("pevb_dma_top.nothing") is None
    values = text_values(tmp_path / "w.vcd", "pevb_annot")
    assert values["fpga_tx"] == [(float(t), text) for t, text in LABELS]
    assert values["mmio"] == [(2000.0, "MRd 4B tag 3 -> FPGA C2H status")]
    (tmp_path / "bad.fst").write_bytes(b"not a waveform")
    with pytest.raises(FstError, match="not a readable waveform"):
        read_dump(tmp_path / "bad.fst")


def test_save_file_aliases_groups_and_view(tmp_path) -> None:
    dump = _dump(tmp_path / "w.vcd")
    view = Focus("fpga_tx", LABELS[0][1], 1000.0, 300.0)
    text = write_save_file(dump, view=view).read_text()
    # every track under its own name, shown as ASCII; the RTL signals by their leaf name
    for track in TRACKS:
        assert f"+{{{track}}} pevb_annot.{track}[511:0]\n" in text
    assert "@820\n+{fpga_tx}" in text  # ASCII, right-justified
    assert "+{s_axis_cq_tdata} pevb_dma_top.s_axis_cq_tdata[63:0]" in text
    assert "+{led} pevb_dma_top.led[2:0]" in text
    listed = save_file_signals(tmp_path / "waves.gtkw")
    assert listed[: len(TRACKS)] == [f"pevb_annot.{t}[511:0]" for t in TRACKS]
    assert set(listed) <= read_dump(dump).gtkwave_names()
    assert f"-{TEXT_TITLE}" in text
    present = {"CQ: host requests to the FPGA (MMIO)", "Board"}
    for title, _ in GROUPS:
        assert (f"-{title}\n" in text) == (title in present), title
    # the view: marker at the label, started a little before it, zoomed to fit it
    zoom = zoom_for(view, 1e-3)
    assert f"*{zoom:.6f} 1000000 " in text
    start = int(text.split("[timestart] ")[1].split()[0])
    assert 1000000 - 100 * units_per_pixel(zoom) < start < 1000000


def test_zoom_fits_the_label_and_no_more() -> None:
    label = "MWr 128B -> GPU BAR1 pin#1 va+0x80"
    need_px = (len(label) + 2) * CHAR_PX
    for box_ns, unit_ns in ((300.0, 1e-3), (18.0, 1e-3), (18.0, 1.0), (5000.0, 1e-3)):
        zoom = zoom_for(Focus("fpga_tx", label, 0.0, box_ns), unit_ns)
        ns_per_px = units_per_pixel(zoom) * unit_ns
        assert box_ns / ns_per_px >= need_px or ns_per_px <= 1 / 64 * unit_ns
        assert ns_per_px <= MAX_NS_PER_PX
        wider = units_per_pixel(zoom - 1) * unit_ns  # one step out: cut, or too coarse
        assert box_ns / wider < need_px or wider > MAX_NS_PER_PX, (box_ns, unit_ns)
    # a label that stays to the end of the run: as wide as allowed
    zoom = zoom_for(Focus("c2h_desc", "desc 0/1", 0.0, None), 1e-3)
    assert units_per_pixel(zoom) * 1e-3 <= MAX_NS_PER_PX < units_per_pixel(zoom - 1) * 1e-3


def _tlp(t, link, direction, desc=None, **extra):
    """A 128-byte peer write record (test_unit_perfetto's), its target named by its time."""
    target = {"kind": "gpu_bar1", "label": f"GPU BAR1 at {t}"}
    return _rec(t, link, direction, target=target, **extra) | ({"desc": desc} if desc else {})


def test_focus_is_the_first_peer_write_and_its_box() -> None:
    h2c = {"t": 5.0, "event": "desc", "channel": "H2C", "chain": 1, "index": 0, "len": 256}
    h2c.update(total=1, pcie="host src+0x0")
    c2h = {"t": 50.0, "event": "desc", "channel": "C2H", "chain": 2, "index": 0, "len": 256}
    c2h.update(total=1, pcie="GPU BAR1 pin#1 va+0x0")
    records = [
        h2c,
        c2h,
        _tlp(50.0, "fpga", "up", ["C2H", 2, 0]),
        _tlp(52.0, "gpu", "down"),  # the same TLP further on: another track
        _tlp(60.0, "fpga", "up", ["C2H", 2, 0], type="MRd", tag=4),
        _tlp(90.0, "fpga", "up", ["C2H", 2, 0]),
    ]
    view = focus(records)
    assert view == Focus("fpga_tx", "MWr 128B -> GPU BAR1 at 50.0", 50.0, 10.0)
    # the last label on its track lasts to the end of the run
    assert focus([c2h, records[-1]]).box_ns is None
    # no data TLP: the descriptor's own label; no descriptor: no focus
    assert focus([h2c]) == Focus("h2c_desc", "desc 0/1 H2C 256B <- host src+0x0", 5.0, None)
    assert focus(records[2:]) is None
