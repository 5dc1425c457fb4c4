"""The peer-transfer report of one run, made from its TLP trace: bytes and bandwidth per
direction and target, and an HTML timeline. ``python -m tb.debug.report TRACE.jsonl
[OUT_DIR]`` makes the report of any trace. See docs/internals.md.
"""

from __future__ import annotations

import html
import json
import sys
from collections import defaultdict
from pathlib import Path

from .records import desc_label, read_trace

COLOURS = {
    "host": "#4e79a7",
    "gpu_bar1": "#59a14f",
    "desc": "#f28e2b",
    "msi": "#e15759",
    "fpga_reg": "#b07aa1",
    "gpu_reg": "#9c755f",
    "config": "#bab0ac",
}


GPU_COUNTS = ("writes", "write_bytes", "reads", "read_bytes")


def _data_bytes(rec: dict) -> int:
    """Payload bytes a TLP carries for its request (completions: without the offset pad)."""
    if rec["type"] == "CplD":
        return max(0, min(rec["bc"], rec["len"] - (rec["la"] & 3)))
    if rec["type"] == "MWr":
        return rec["len"]
    return 0


def _target_key(target: dict) -> str:
    if target["kind"] == "gpu_bar1":
        if "pin" not in target:
            return "gpu (unmapped)"
        return f"gpu {target.get('surface', 'pin#' + str(target['pin']))}"
    if target["kind"] == "host":
        return f"host {target.get('buffer', '')}".strip()
    return target["kind"]


def summarize(records: list[dict]) -> dict:
    """Bytes per direction and target, bandwidth, counts of the other TLPs."""
    by_dir: dict[str, dict[str, int]] = {"H2C": defaultdict(int), "C2H": defaultdict(int)}
    span: dict[str, list[float]] = {}
    other: dict[str, int] = defaultdict(int)
    chains = []
    # the GPU's own requests, as it sends them: per activity and range
    gpu: dict[str, dict[str, int]] = {}
    for rec in records:
        if "event" in rec:
            if rec["event"] == "chain":
                chains.append(rec)
            continue
        if rec.get("by") and rec["link"] == "gpu" and rec["dir"] == "up":
            where = rec.get("range") or rec.get("target", {}).get("label", "?")
            g = gpu.setdefault(
                f"{rec['by']} -> {where}",
                {"writes": 0, "write_bytes": 0, "reads": 0, "read_bytes": 0},
            )
            kind = "write" if rec["type"] == "MWr" else "read"
            g[f"{kind}s"] += 1
            g[f"{kind}_bytes"] += rec.get("len", 0)
        if rec["link"] != "fpga":
            continue
        target = rec.get("target", {})
        kind = target.get("kind")
        n = _data_bytes(rec)
        if kind in ("host", "gpu_bar1") and n:
            if rec["type"] == "CplD" and rec["dir"] == "down":
                d = "H2C"
            elif rec["type"] == "MWr" and rec["dir"] == "up":
                d = "C2H"
            else:
                continue
            by_dir[d][_target_key(target)] += n
            s = span.setdefault(d, [rec["t"], rec["t"]])
            s[0], s[1] = min(s[0], rec["t"]), max(s[1], rec["t"])
        elif kind in ("desc", "msi", "fpga_reg") and rec["dir"] == "up":
            other[kind] += 1
    out: dict = {
        "directions": {},
        "other_tlps_from_fpga": dict(other),
        "chains": len(chains),
        "gpu_requests": dict(sorted(gpu.items())),
    }
    for d, targets in by_dir.items():
        total = sum(targets.values())
        t0, t1 = span.get(d, [0.0, 0.0])
        out["directions"][d] = {
            "bytes": total,
            "by_target": dict(sorted(targets.items())),
            "first_ns": t0,
            "last_ns": t1,
            "mb_per_s": round(total / (t1 - t0) * 1e3, 1) if t1 > t0 else None,
        }
    return out


def human_bytes(n: float) -> str:
    """``1.5 MiB``, ``12.0 KiB``, ``300 B``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def _ticks(t0: float, t1: float, n: int = 8) -> list[float]:
    """Round tick times (ns) across [t0, t1]: steps of 1, 2 or 5 times a power of ten."""
    span = max(t1 - t0, 1.0)
    raw = span / n
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = -(-t0 // step) * step
    return [first + i * step for i in range(int((t1 - first) // step) + 1)]


def timeline_svg(records: list[dict], width: int = 1200, lane_h: int = 22) -> str:
    """An SVG timeline: a lane per engine with a mark where each descriptor's data starts,
    and a lane per link and direction with the TLPs as marks."""
    tlps = [r for r in records if "link" in r]
    descs = [r for r in records if r.get("event") == "desc"]
    if not tlps:
        return "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'/>"
    t0 = min(r["t"] for r in tlps)
    t1 = max(r["t"] for r in tlps)
    scale = (width - 160) / max(t1 - t0, 1.0)
    desc_lanes = sorted({r["channel"] for r in descs})
    lanes = [(c, "descriptors") for c in desc_lanes] + sorted({(r["link"], r["dir"]) for r in tlps})
    y_of = {lane: 30 + i * lane_h for i, lane in enumerate(lanes)}
    bottom = 30 + len(lanes) * lane_h
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' "
        f"height='{bottom + 40}' font-family='monospace' font-size='11'>",
        "<text x='4' y='14' font-weight='bold'>lane</text>",
    ]
    for (link, d), y in y_of.items():
        parts.append(f"<text x='4' y='{y + 14}'>{link} {d}</text>")
    # the time axis: simulated microseconds, with a grid line per tick
    for t in _ticks(t0, t1):
        x = 150 + int((t - t0) * scale)
        parts.append(
            f"<line x1='{x}' y1='26' x2='{x}' y2='{bottom}' stroke='#ddd'/>"
            f"<text x='{x}' y='{bottom + 14}' text-anchor='middle'>{t / 1e3:g}</text>"
        )
    parts.append(
        f"<text x='{150 + (width - 160) // 2}' y='{bottom + 32}' text-anchor='middle'>"
        "simulated time (us)</text>"
    )
    for r in descs:
        x = 150 + int((r["t"] - t0) * scale)
        label = html.escape(f"{r['t']:.0f} ns {desc_label(r)}")
        parts.append(
            f"<rect x='{x}' y='{y_of[(r['channel'], 'descriptors')] + 3}' "
            f"width='3' height='{lane_h - 6}' fill='{COLOURS['desc']}'>"
            f"<title>{label}</title></rect>"
        )
    # at most one mark per pixel column and lane and colour (large runs stay small)
    seen: set[tuple[int, int, str]] = set()
    for r in tlps:
        x = 150 + int((r["t"] - t0) * scale)
        kind = r.get("target", {}).get("kind", "config")
        key = (x, y_of[(r["link"], r["dir"])], kind)
        if key in seen:
            continue
        seen.add(key)
        label = html.escape(
            f"{r['t']:.0f} ns {r['type']} {r.get('len', 0)}B {r.get('target', {}).get('label', '')}"
        )
        parts.append(
            f"<rect x='{x}' y='{key[1] + 3}' width='2' height='{lane_h - 6}' "
            f"fill='{COLOURS.get(kind, '#888')}'><title>{label}</title></rect>"
        )
    parts.append("</svg>")
    return "".join(parts)


def write_report(
    trace: Path, out_dir: Path | None = None, records: list[dict] | None = None
) -> tuple[Path, Path]:
    """``transfer_report.json`` and ``transfer_report.html`` beside the trace (or in
    ``out_dir``); returns their paths. ``records``: the trace, when already read."""
    out_dir = out_dir or trace.parent
    if records is None:
        records = read_trace(trace)
    summary = summarize(records)
    jpath = out_dir / "transfer_report.json"
    jpath.write_text(json.dumps(summary, indent=1))
    rows = []
    for d, s in summary["directions"].items():
        for target, n in s["by_target"].items():
            rows.append(
                f"<tr><td>{d}</td><td>{html.escape(target)}</td>"
                f"<td title='{n} bytes'>{human_bytes(n)}</td><td></td></tr>"
            )
        bw = f"{s['mb_per_s']} MB/s" if s["mb_per_s"] else "-"
        rows.append(
            f"<tr><th>{d} total</th><td></td><th title='{s['bytes']} bytes'>"
            f"{human_bytes(s['bytes'])}</th><td>{bw} over "
            f"{(s['last_ns'] - s['first_ns']) / 1e3:,.1f} us</td></tr>"
        )
    gpu_rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{g['writes']}</td>"
        f"<td>{human_bytes(g['write_bytes'])}</td><td>{g['reads']}</td>"
        f"<td>{human_bytes(g['read_bytes'])}</td></tr>"
        for k, g in summary["gpu_requests"].items()
    )
    gpu_table = (
        "<h3>Requests of the GPU</h3><p class='note'>What the GPU sent on its own (kernels, "
        "copy engines, stream memory operations), by activity and registered range.</p>"
        "<table><tr><th>activity -> range</th><th>writes</th><th>bytes</th><th>reads</th>"
        f"<th>bytes</th></tr>{gpu_rows}</table>"
        if gpu_rows
        else ""
    )
    legend = " ".join(f"<span style='color:{c}'>&#9632; {k}</span>" for k, c in COLOURS.items())
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>transfer report</title>"
        "<style>body{font-family:sans-serif;margin:1.5em}td,th{padding:4px 10px;"
        "text-align:left}table{border-collapse:collapse}tr{border-bottom:1px solid #ccc}"
        "p.note{color:#444;max-width:60em}</style></head><body>"
        f"<h2>Peer-transfer report</h2><p>{html.escape(str(trace))}</p>"
        "<table><tr><th>direction</th><th>target</th><th>data</th><th>bandwidth</th></tr>"
        f"{''.join(rows)}</table>"
        "<p class='note'>H2C: bytes the FPGA read (completion data it received); C2H: "
        "bytes it wrote. <b>Bandwidth</b> here is a direction's bytes over the simulated "
        "time from its first to its last data TLP on the FPGA's link. make sim's MB/s "
        "divides the surface's bytes by the driver's <code>dma_time_ns</code> instead: "
        "the whole ioctl, from starting its first chain to its last chain's interrupt, in "
        "which the bytes go both into and out of the card RAM (H2C2H), with the "
        "descriptor fetches, read round trips and interrupts between; so it reads lower "
        "than either direction here.</p>"
        f"<p>descriptor chains: {summary['chains']}; other TLPs from the FPGA: "
        f"{html.escape(json.dumps(summary['other_tlps_from_fpga']))}</p>{gpu_table}"
        "<h3>Timeline</h3><p class='note'>A lane per descriptor engine (a mark where each "
        "descriptor's data starts) and per link and direction (a mark per TLP): "
        "<i>up</i> is towards the root complex, <i>down</i> away from it. Hover a mark "
        f"for the descriptor or TLP. Colours: {legend}</p>{timeline_svg(records)}"
        "<p class='note'>For zooming to single TLPs, open timeline.perfetto.json beside "
        "this page in https://ui.perfetto.dev.</p></body></html>"
    )
    hpath = out_dir / "transfer_report.html"
    hpath.write_text(page)
    return jpath, hpath


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m tb.report TRACE.jsonl [OUT_DIR]")
        return 2
    j, h = write_report(Path(args[0]), Path(args[1]) if len(args) > 1 else None)
    print(json.dumps(json.loads(j.read_text())["directions"], indent=1))
    print(f"report: {h}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
