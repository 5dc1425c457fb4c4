"""A GTKWave save file for a run's waveform: the decoded text tracks, the PCIe interfaces
and the DMA engine state, grouped and named without bit ranges, so ``make waves`` opens a
readable view with no manual setup.

The save file is written after the run from the dump's own hierarchy (:mod:`tb.debug.fst`),
so every signal it lists exists in that dump, with pyvcd's save-file writer. The view opens
on the run's first peer transfer, zoomed so that its label on the FPGA's track shows whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from vcd.gtkw import GTKWSave

from .fst import Dump, read_dump
from .records import ANNOT_INSTANCE, ANNOT_ROOT, DESC_TRACKS, TRACKS, desc_label, place

TOP = "pevb_dma_top"
# the card's scope in a dump: its toplevel, or the core of the transactor model's wrapper
TOPS = (TOP, "pevb_card_xact.core")
# the decoded text tracks (tb/debug/annotate.py), first: where the module sits in each
# simulator's dump (bound into the card's top by Verilator, a second root under Icarus)
TEXT_TITLE = "Decoded: TLPs per link end, MMIO, descriptors"
TEXT_SCOPES = (*(f"{top}.{ANNOT_INSTANCE}" for top in TOPS), ANNOT_ROOT)

_STREAM = ("tvalid", "tready", "tlast", "tkeep", "tuser", "tdata")
_ENGINE = (
    "running_reg",
    "stopping_reg",
    "error_reg",
    "count_reg",
    "inflight_reg",
    "fetch_out_reg",
    "rd_ptr_reg",
    "wr_ptr_reg",
    "wb_pending_reg",
)
# the card top's wires between the engine's AXI4 master and the BRAM
_AXI_W = ("awvalid", "awready", "awaddr", "awlen", "wvalid", "wready", "wlast", "wstrb", "wdata")
_AXI_W += ("bvalid", "bresp")
_AXI_R = ("arvalid", "arready", "araddr", "arlen", "rvalid", "rready", "rlast", "rresp", "rdata")
# channel 0's descriptor engine in each direction
_CHAN = "xdma_0.xdma_inst.{}[0].chan_inst.desc_inst"
GROUPS: list[tuple[str, list[str]]] = [
    ("CQ: host requests to the FPGA (MMIO)", [f"s_axis_cq_{s}" for s in _STREAM]),
    ("CC: the FPGA's register completions", [f"m_axis_cc_{s}" for s in _STREAM]),
    ("RQ: FPGA reads, writes (peer and host), MSI", [f"m_axis_rq_{s}" for s in _STREAM]),
    ("RC: completions to the FPGA (read data)", [f"s_axis_rc_{s}" for s in _STREAM]),
    ("MSI", ["cfg_interrupt_msi_int", "cfg_interrupt_msi_sent", "cfg_interrupt_msi_fail"]),
    ("INTx", ["cfg_interrupt_int", "cfg_interrupt_pending", "cfg_interrupt_sent"]),
    ("H2C descriptor engine", [f"{_CHAN.format('h2c')}.{s}" for s in _ENGINE]),
    ("C2H descriptor engine", [f"{_CHAN.format('c2h')}.{s}" for s in _ENGINE]),
    (
        "Read tags in flight",
        ["xdma_0.xdma_inst.rc_rx_inst.tags_in_flight", "xdma_0.xdma_inst.rc_rx_inst.active_reg"],
    ),
    ("AXI4 master: card RAM writes (H2C)", [f"axi_{s}" for s in _AXI_W]),
    ("AXI4 master: card RAM reads (C2H)", [f"axi_{s}" for s in _AXI_R]),
    ("Board", ["led", "user_clk", "user_reset"]),
]

# GTKWave shows 2**-zoom dump time units per 200 pixels (measured with GTKWave 3.3.118:
# zoom -18 over a 1 ps dump spans 1.056 us of its 806-pixel wave pane)
PIXELS_PER_FRAME = 200
CHAR_PX = 8  # a character of GTKWave's wave font (7.4 pixels in its default monospace)
LEAD_PX = 24  # the view starts this far left of the focused label
MAX_NS_PER_PX = 2.0  # never zoomed out further: single TLPs stay apart
MIN_UNITS_PER_PX = 1 / 64


@dataclass(frozen=True)
class Focus:
    """The label the view opens on: its track, text, start and how long it stays (until
    the next label on its track; None: to the end of the run)."""

    track: str
    label: str
    t_ns: float
    box_ns: float | None


def focus(records: list[dict]) -> Focus | None:
    """The first data TLP (on the FPGA's track) of the run's first descriptor that writes
    to the GPU (else the first that reads from it, else the first of any kind), from the
    run's TLP trace records; the descriptor's own label when no data TLP names it; None
    without descriptors."""
    descs = [r for r in records if r.get("event") == "desc"]
    peer = [r for r in descs if str(r.get("pcie", "")).startswith("GPU")]
    chosen = [r for r in peer if r["channel"] == "C2H"] or peer or descs
    if not chosen:
        return None
    desc = chosen[0]
    key = [desc["channel"], desc["chain"], desc["index"]]
    first = next((i for i, r in enumerate(records) if r.get("desc") == key and place(r)), None)
    if first is None:
        return Focus(DESC_TRACKS[desc["channel"]], desc_label(desc), desc["t"], None)
    rec = records[first]
    track, label = place(rec)
    # only the records after it are labelled, up to the next one on its track
    later = (r["t"] for r in records[first + 1 :] if (p := place(r)) and p[0] == track)
    end = next(later, None)
    return Focus(track, label, rec["t"], None if end is None else end - rec["t"])


def units_per_pixel(zoom: int) -> float:
    """Dump time units per pixel at GTKWave's ``zoom``."""
    return 2.0 ** (-zoom) / PIXELS_PER_FRAME


def zoom_for(view: Focus, unit_ns: float) -> int:
    """GTKWave's widest zoom at which ``view``'s label shows whole (its box at least as
    wide as its text), and no wider than :data:`MAX_NS_PER_PX`."""
    fit = MAX_NS_PER_PX / unit_ns
    if view.box_ns is not None:
        need_px = (len(view.label) + 2) * CHAR_PX
        fit = min(fit, view.box_ns / unit_ns / need_px)
    return math.ceil(-math.log2(PIXELS_PER_FRAME * max(fit, MIN_UNITS_PER_PX)))


def _top_scope(dump: Dump) -> str:
    """The card's scope in ``dump`` (:data:`TOPS`; the first when none is there)."""
    return next((t for t in TOPS if f"{t}.user_clk" in dump.widths), TOP)


def _text_scope(dump: Dump) -> str | None:
    return next((s for s in TEXT_SCOPES if f"{s}.{TRACKS[0]}" in dump.widths), None)


def write_save_file(dump: Path, out: Path | None = None, view: Focus | None = None) -> Path:
    """Write ``waves.gtkw`` beside ``dump`` (or at ``out``); returns its path. The view
    opens on ``view`` (the runner gives :func:`focus` of the run's trace), zoomed by
    :func:`zoom_for`, with the marker at its start; at time 0 without one."""
    out = out or dump.parent / "waves.gtkw"
    wave = read_dump(dump)
    with open(out, "w") as f:
        save = GTKWSave(f)
        save.comment(f"pevb DMA engine waves, made by tb/debug/gtkwave.py from {dump.name}")
        save.dumpfile(str(dump.resolve()))
        save.savefile(str(out.resolve()))
        save.size(1600, 900)
        save.signals_width(300)
        save.sst_expanded(True)
        if view is not None:
            zoom = zoom_for(view, wave.unit_ns)
            marker = round(view.t_ns / wave.unit_ns)
            save.timestart(max(0, round(marker - LEAD_PX * units_per_pixel(zoom))))
            save.zoom_markers(zoom, marker)
        scope = _text_scope(wave)
        if scope is not None:
            with save.group(TEXT_TITLE):
                for track in TRACKS:
                    name = wave.gtkwave_name(f"{scope}.{track}")
                    if name is not None:
                        save.trace(name, alias=track, datafmt="ascii")
        top = _top_scope(wave)
        for title, members in GROUPS:
            present = [m for m in members if f"{top}.{m}" in wave.widths]
            if not present:
                continue
            with save.group(title):
                for m in present:
                    fmt = "bin" if wave.widths[f"{top}.{m}"] == 1 else "hex"
                    name = wave.gtkwave_name(f"{top}.{m}")
                    save.trace(name, alias=m.rpartition(".")[2], datafmt=fmt)
    return out


def save_file_signals(path: Path) -> list[str]:
    """The signal names a save file lists (not their aliases, comments, groups or
    settings)."""
    sigs = []
    for line in path.read_text().splitlines():
        if line.startswith("+{"):
            line = line.partition("} ")[2]
        if line and line[0] not in "[@-*":
            sigs.append(line.strip())
    return sigs
