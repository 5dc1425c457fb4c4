"""Trace records, as a trace file holds them and the reports read them: reading a trace
file (:func:`read_trace`), and each record's text track and label in the waveform
(:func:`place`). Plain Python, for the simulation that writes the records
(:mod:`tb.debug.trace`, :mod:`tb.debug.annotate`) and the reports made from them after
it (:mod:`tb.debug.report`, :mod:`tb.debug.perfetto`, :mod:`tb.debug.gtkwave`).
"""

from __future__ import annotations

import json
from pathlib import Path

# a record's direction on its link (tb/env/link.py's words, which the records carry)
UP = "up"  # towards the root complex
DOWN = "down"  # away from the root complex

# (link, direction) -> track; UP is toward the root complex
TLP_TRACKS = {
    ("fpga", UP): "fpga_tx",
    ("fpga", DOWN): "fpga_rx",
    ("gpu", DOWN): "gpu_rx",
    ("gpu", UP): "gpu_tx",
    ("switch", UP): "host_rx",
    ("switch", DOWN): "host_tx",
}
# register and configuration accesses (the host's MMIO, its status polling among them, and
# their completions) have a track of their own, at the endpoint's end of the link: they
# are left off the link tracks, and the root complex's end of the same TLP is not shown
MMIO_TRACK = "mmio"
REGISTER_KINDS = frozenset({"fpga_reg", "gpu_reg", "config"})
ENDPOINT_LINKS = frozenset({"fpga", "gpu"})
DESC_TRACKS = {"H2C": "h2c_desc", "C2H": "c2h_desc"}
TRACKS = (*TLP_TRACKS.values(), MMIO_TRACK, *DESC_TRACKS.values())
# requests that expect a completion: their label carries the tag the completions match
NON_POSTED = ("MRd", "Cfg", "IO")
ANNOT_INSTANCE, ANNOT_ROOT = "annot", "pevb_annot"  # Verilator (bound) / Icarus (a root)


def tlp_label(rec: dict) -> str:
    """One line for a TLP record: type, size, tag (of a request that expects completions,
    and of a completion), and what it touched."""
    kind = rec["type"]
    target = rec.get("target", {}).get("label", "?")
    tag = f" tag {rec['tag']}" if "tag" in rec else ""
    if "status" in rec:  # a completion: it comes from the request's target
        status = rec["status"]
        head = f"{kind} {rec['len']}B" if status == "SC" else f"{kind} {status}"
        off = rec.get("off")
        text = f"{head}{tag} <- {target}" + (f" [+{off:#x}]" if off else "")
        return text + (" poisoned" if rec.get("ep") else "")
    if not kind.startswith(NON_POSTED):
        tag = ""
    by = f" [{rec['by']}]" if rec.get("by") else ""  # a request of the GPU: what it did
    if "addr" in rec:
        return f"{kind} {rec['len']}B{tag} -> {target}{by}"
    return f"{kind}{tag} -> {target}{by}"


def desc_label(rec: dict) -> str:
    """One line for a descriptor event: index/length of the chain, direction, size, and
    the PCIe side it reads (H2C) or writes (C2H)."""
    total = "?" if rec.get("total") is None else rec["total"]
    arrow = "<-" if rec["channel"] == "H2C" else "->"
    where = f" {arrow} {rec['pcie']}" if rec.get("pcie") else ""
    return f"desc {rec['index']}/{total} {rec['channel']} {rec['len']}B{where}"


def place(rec: dict) -> tuple[str, str] | None:
    """The track and text of a trace record (None: the record has no track)."""
    if rec.get("event") == "desc":
        return DESC_TRACKS[rec["channel"]], desc_label(rec)
    if "event" in rec:
        return None
    if rec.get("target", {}).get("kind") in REGISTER_KINDS:
        return (MMIO_TRACK, tlp_label(rec)) if rec["link"] in ENDPOINT_LINKS else None
    track = TLP_TRACKS.get((rec["link"], rec["dir"]))
    return None if track is None else (track, tlp_label(rec))


def encode(text: str, chars: int) -> int:
    """Text as the register value GTKWave shows as ASCII (leading NULs are not shown)."""
    return int.from_bytes(text.encode("ascii", "replace")[:chars], "big")


def read_trace(path: Path) -> list[dict]:
    """Every record of a trace file."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]
