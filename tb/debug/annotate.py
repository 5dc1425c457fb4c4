"""Text tracks in the waveform: each TLP and each descriptor, decoded, written into the
testbench-only module ``pevb_annot`` (``tb/verilog``) as the simulation runs, shown as
ASCII by the save file of :mod:`tb.debug.gtkwave`. See docs/internals.md.
"""

from __future__ import annotations

from ..env.link import DOWN, UP

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


def find_annotations(dut):
    """The annotation module's handle in this simulation, or None (not a waves build)."""
    from ..env.backdoor import card

    try:  # bound into the card's toplevel (Verilator), in the transactor wrapper's core
        return getattr(card(dut), ANNOT_INSTANCE)
    except AttributeError:
        pass
    import cocotb

    return getattr(cocotb, "tops", {}).get(ANNOT_ROOT)


class WaveAnnotations:
    """A trace sink writing each record's label into its text track in the simulation."""

    def __init__(self, handle) -> None:
        self.signals = {name: getattr(handle, name) for name in TRACKS}
        self.chars = len(self.signals[TRACKS[0]]) // 8
        self._last: dict[str, str] = {}
        self.writes = 0

    def __call__(self, rec: dict) -> None:
        placed = place(rec)
        if placed is None:
            return
        track, text = placed
        text = text[: self.chars]
        if self._last.get(track) == text:
            # the same label twice in a row would be one value in the viewer: mark the
            # second so each TLP shows as its own box
            text = text[: self.chars - 2] + " *"
        self._last[track] = text
        self.signals[track].value = encode(text, self.chars)
        self.writes += 1
