"""A GTKWave save file for a run's waveform: the PCIe interfaces and the DMA engine state,
grouped and named, so ``make waves`` opens a readable view with no manual setup.

The save file is written after the run from the dump's own hierarchy (:mod:`tb.fst`),
so every signal it lists exists in that dump.
"""

from __future__ import annotations

from pathlib import Path

from .annotate import ANNOT_INSTANCE, ANNOT_ROOT, DESC_TRACKS, TLP_TRACKS
from .fst import FstError, fst_signals, fst_timescale_ns

TOP = "pevb_dma_top"
# GTKWave trace flags: right-justified hex / binary / decimal / ASCII, group begin / end
# (blank rows)
HEX, BIN, DEC, ASCII = "@22", "@28", "@24", "@820"
# the decoded text tracks (tb/annotate.py), first: where the module sits in each
# simulator's dump (bound into the top by Verilator, a second root under Icarus)
TEXT_TITLE = "Decoded TLPs (per link end) and descriptors (per engine)"
TEXT_TRACKS = [*TLP_TRACKS.values(), *DESC_TRACKS.values()]
TEXT_SCOPES = (f"{TOP}.{ANNOT_INSTANCE}", ANNOT_ROOT)
GROUP_BEGIN, GROUP_END = "@800200", "@1000200"

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
GROUPS: list[tuple[str, list[str]]] = [
    ("CQ: host requests to the FPGA (MMIO)", [f"s_axis_cq_{s}" for s in _STREAM]),
    ("CC: the FPGA's register completions", [f"m_axis_cc_{s}" for s in _STREAM]),
    ("RQ: FPGA reads, writes (peer and host), MSI", [f"m_axis_rq_{s}" for s in _STREAM]),
    ("RC: completions to the FPGA (read data)", [f"s_axis_rc_{s}" for s in _STREAM]),
    ("MSI", ["cfg_interrupt_msi_int", "cfg_interrupt_msi_sent", "cfg_interrupt_msi_fail"]),
    ("H2C descriptor engine", [f"xdma_0.xdma_inst.h2c[0].desc_inst.{s}" for s in _ENGINE]),
    ("C2H descriptor engine", [f"xdma_0.xdma_inst.c2h[0].desc_inst.{s}" for s in _ENGINE]),
    (
        "Read tags in flight",
        ["xdma_0.xdma_inst.rc_rx_inst.tags_in_flight", "xdma_0.xdma_inst.rc_rx_inst.active_reg"],
    ),
    ("AXI4 master: card RAM writes (H2C)", [f"axi_{s}" for s in _AXI_W]),
    ("AXI4 master: card RAM reads (C2H)", [f"axi_{s}" for s in _AXI_R]),
    ("Board", ["led", "user_clk", "user_reset"]),
]


def _display_names(signals: set[str]) -> dict[str, str]:
    """``pevb_dma_top.x [7:0]`` (as stored) -> base name ``pevb_dma_top.x`` -> GTKWave's
    name ``pevb_dma_top.x[7:0]``."""
    out = {}
    for s in signals:
        base, _, rng = s.partition(" ")
        out.setdefault(base, base + rng)
    return out


# GTKWave's zoom is a power of two; -18 shows about 1 us across the wave pane, a few
# labelled TLPs on the slowest link (picoevb's Gen2 x1)
ZOOM = -18
LEAD_NS = 200  # the view starts this long before the transfer it opens on


def first_peer_transfer_ns(records: list[dict]) -> float | None:
    """When the first descriptor that writes to the GPU starts (else the first that reads
    from it, else the first of any kind), from a run's TLP trace records; None without
    one."""
    descs = [r for r in records if r.get("event") == "desc"]
    peer = [r for r in descs if str(r.get("pcie", "")).startswith("GPU")]
    chosen = [r for r in peer if r["channel"] == "C2H"] or peer or descs
    return chosen[0]["t"] if chosen else None


def write_save_file(dump: Path, out: Path | None = None, focus_ns: float | None = None) -> Path:
    """Write ``waves.gtkw`` beside ``dump`` (or at ``out``); returns its path. The view
    opens at ``focus_ns`` (the runner gives the first peer transfer of the run's trace:
    :func:`first_peer_transfer_ns`) with the marker there, or at 0 without one."""
    out = out or dump.parent / "waves.gtkw"
    names = _display_names(fst_signals(dump))
    start = marker = 0
    if focus_ns is not None:
        try:
            unit = fst_timescale_ns(dump)
        except FstError:
            unit = 1e-3
        marker = int(focus_ns / unit)
        start = max(0, int((focus_ns - LEAD_NS) / unit))
    lines = [
        f"[*] pevb DMA engine waves, made by tb/gtkwave.py from {dump.name}",
        f'[dumpfile] "{dump.resolve()}"',
        f'[savefile] "{out.resolve()}"',
        f"[timestart] {start}",
        "[size] 1600 900",
        "[sst_width] 200",
        "[signals_width] 300",
        "[sst_expanded] 1",
    ]
    if focus_ns is not None:
        lines.append(f"*{ZOOM:.6f} {marker}")
    for scope in TEXT_SCOPES:
        present = [names[f"{scope}.{m}"] for m in TEXT_TRACKS if f"{scope}.{m}" in names]
        if present:
            lines += [GROUP_BEGIN, f"-{TEXT_TITLE}"]
            for sig in present:
                lines += [ASCII, sig]
            lines += [GROUP_END, f"-{TEXT_TITLE}"]
            break
    for title, members in GROUPS:
        present = [names[f"{TOP}.{m}"] for m in members if f"{TOP}.{m}" in names]
        if not present:
            continue
        lines += [GROUP_BEGIN, f"-{title}"]
        for sig in present:
            lines += [BIN if "[" not in sig else HEX, sig]
        lines += [GROUP_END, f"-{title}"]
    out.write_text("\n".join(lines) + "\n")
    return out


def save_file_signals(path: Path) -> list[str]:
    """The signal names a save file lists (not its comments, groups or settings)."""
    sigs = []
    for line in path.read_text().splitlines():
        if line and line[0] not in "[@-*":
            sigs.append(line.strip())
    return sigs
