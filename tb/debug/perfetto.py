"""The TLP trace as Chrome trace-event JSON: an interactive timeline that opens in
Perfetto (https://ui.perfetto.dev, "Open trace file"; older Chrome's chrome://tracing too).

Tracks (the format's threads), grouped in four processes:

- ``links``: one track per link and direction (``fpga up``, ``gpu down``...), a slice per
  TLP named by what it did (``MWr 256B -> GPU BAR1 pin#1 va+0x10000``), its fields in the
  slice's arguments;
- ``read tags``: one track per requester and tag, a slice from each read request to its
  last completion (where split or reordered completions show);
- ``descriptor engines``: one track per channel (``H2C``, ``C2H``), a slice per
  descriptor from its fetch to its last data TLP, with a flow arrow to each of its data
  TLPs on the ``fpga`` link;
- ``guest GPU``: with the GPU on a Linux guest's bus, one track per CUDA context
  (``ctx 0`` is the kernel's: nv-p2p's pins), a slice per command of the device's ring
  from when the device took it to its answer, named by the call it serves
  (``cudaMemcpy HtoD 1048576 B stream 0``, ``nvidia_p2p_get_pages ...``); commands in
  flight together go side by side.

``python -m tb.debug.perfetto TRACE.jsonl [OUT.json]`` converts any trace. Times are the
simulated time (the format's microseconds).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .records import desc_label, read_trace, tlp_label

LINKS_PID, TAGS_PID, ENGINES_PID, GPU_PID = 1, 2, 3, 4
# a TLP's slice lasts until the next TLP on its track, at most this long (ns); the trace
# records when a TLP passed, not how long it took on the wire
MAX_TLP_NS = 200


def _us(ns: int) -> float:
    """A whole number of ns as the format's microseconds. Perfetto keeps whole ns: it
    truncates ``ts * 1000``, where chrome://tracing rounds; a quarter-ns bias makes both
    read back ``ns`` exactly (``128.801`` alone would truncate to 128800)."""
    return (ns + 0.25) / 1e3


def _meta(pid: int, tid: int | None, name: str) -> dict:
    if tid is None:
        return {"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": name}}
    return {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}


def _last_completion(rec: dict) -> bool:
    """A completion that ends its request: byte count no more than it carries."""
    return rec["type"] == "Cpl" or rec.get("bc", 0) <= rec.get("len", 0)


class _Tracks:
    """The events and tracks of a timeline being built. Slices are laid out in whole ns,
    and no two on one track overlap part-way: Perfetto drops such a slice
    (``slice_drop_overlapping_complete_event``)."""

    def __init__(self) -> None:
        self.events: list[dict] = [
            _meta(LINKS_PID, None, "links"),
            _meta(TAGS_PID, None, "read tags"),
            _meta(ENGINES_PID, None, "descriptor engines"),
            _meta(GPU_PID, None, "guest GPU"),
        ]
        self._tids: dict[tuple[int, str], int] = {}
        self._free: dict[int, int] = {}  # track -> where its last slice ends (ns)

    def tid(self, pid: int, name: str) -> int:
        key = (pid, name)
        if key not in self._tids:
            self._tids[key] = len(self._tids) + 1
            self.events.append(_meta(pid, self._tids[key], name))
        return self._tids[key]

    def lane(self, pid: int, name: str, start: int) -> int:
        """The first of ``name``, ``name (2)``... whose last slice ends by ``start``:
        slices that overlap in time (descriptors or reads in flight together) go side by
        side instead of part-way over one another."""
        n = 1
        while True:
            track = self.tid(pid, name if n == 1 else f"{name} ({n})")
            if self._free.get(track, 0) <= start:
                return track
            n += 1

    def slice(self, pid: int, track: int, start: int, end: int, **fields) -> int:
        """A slice on ``track`` from ``start`` to ``end`` (ns), moved later if the track's
        last slice has not ended (same-ns TLPs), at least 1 ns long; returns where it
        starts."""
        start = max(start, self._free.get(track, 0))
        end = max(end, start + 1)
        self._free[track] = end
        ev = {"ph": "X", "ts": _us(start), "dur": _us(end - start), "pid": pid, "tid": track}
        self.events.append(ev | fields)
        return start


def convert(records: list[dict]) -> dict:
    """Trace records -> a trace-event JSON object."""
    out = _Tracks()
    tlps = [r for r in records if "event" not in r]
    # slice lengths: until the next TLP on the same link direction
    nxt: dict[int, int] = {}
    last_on: dict[tuple[str, str], int] = {}
    for i, r in enumerate(tlps):
        key = (r["link"], r["dir"])
        if key in last_on:
            nxt[last_on[key]] = round(r["t"])
        last_on[key] = i
    open_reads: dict[tuple[str, int], dict] = {}
    # each descriptor's event, and its data TLPs: (flow id, time, link track)
    descs: dict[tuple, tuple[dict, list[tuple[int, int, int]]]] = {}
    for rec in records:
        if rec.get("event") == "desc":
            descs.setdefault((rec["channel"], rec["chain"], rec["index"]), (rec, []))
    flow_id = 0
    for i, r in enumerate(tlps):
        t = round(r["t"])
        track = out.tid(LINKS_PID, f"{r['link']} {r['dir']}")
        args = {k: v for k, v in r.items() if k != "target"}
        args.update({f"target.{k}": v for k, v in r.get("target", {}).items()})
        kind = r.get("target", {}).get("kind", "other")
        end = min(t + MAX_TLP_NS, nxt.get(i, t + MAX_TLP_NS))
        at = out.slice(LINKS_PID, track, t, end, name=tlp_label(r), cat=kind, args=args)
        if r["link"] != "fpga":
            continue
        if "desc" in r and tuple(r["desc"]) in descs:
            flow_id += 1
            descs[tuple(r["desc"])][1].append((flow_id, at, track))
        # read requests of the FPGA and their completions, per tag
        if r["type"] == "MRd" and r["dir"] == "up":
            open_reads[(r["req"], r["tag"])] = {"t": t, "rec": r}
        elif r["type"] in ("CplD", "Cpl") and r["dir"] == "down":
            key = (r["req"], r["tag"])
            req = open_reads.get(key)
            if req is not None and _last_completion(r):
                del open_reads[key]
                name = f"{r['req']} tag {r['tag']}"
                out.slice(
                    TAGS_PID,
                    out.lane(TAGS_PID, name, req["t"]),
                    req["t"],
                    t,
                    name=tlp_label(req["rec"]),
                    cat="read",
                    args={"request": req["rec"].get("target", {}).get("label", "")},
                )
    # a slice per descriptor, from its event (recorded with its first data TLP) to its
    # last data TLP, and a flow arrow to each data TLP
    for (channel, chain, _index), (rec, flows) in descs.items():
        times = [round(rec["t"]), *(t for _, t, _ in flows)]
        engine = out.lane(ENGINES_PID, channel, min(times))
        start = out.slice(
            ENGINES_PID,
            engine,
            min(times),
            max(times) + 1,
            name=desc_label(rec),
            cat="desc",
            args={k: v for k, v in rec.items() if k != "event"} | {"chain": chain},
        )
        for fid, t, link_tid in flows:
            common = {"name": "data", "cat": "desc", "id": fid}
            out.events.append(
                {**common, "ph": "s", "ts": _us(start), "pid": ENGINES_PID, "tid": engine}
            )
            out.events.append(
                {**common, "ph": "f", "bp": "e", "ts": _us(t), "pid": LINKS_PID, "tid": link_tid}
            )
    # the guest GPU's commands, per context, from when the device took one to its answer
    for rec in sorted((r for r in records if r.get("event") == "gpu"), key=lambda r: r["start"]):
        start, end = round(rec["start"]), round(rec["t"])
        ctx = f"ctx {rec['ctx']}" + (" (kernel)" if rec["ctx"] == 0 else "")
        name = f"{rec['call']} {rec['detail']}".strip()
        if rec["status"]:
            name += f" -> error {rec['status']}"
        out.slice(
            GPU_PID,
            out.lane(GPU_PID, ctx, start),
            start,
            end,
            name=name,
            cat="gpu",
            args={k: v for k, v in rec.items() if k != "event"},
        )
    return {
        "traceEvents": out.events,
        "displayTimeUnit": "ns",
        "otherData": {"source": "gpudirect-cosim TLP trace", "time": "simulated"},
    }


def write(trace: Path, out: Path | None = None, records: list[dict] | None = None) -> Path:
    """Convert ``trace`` (a ``tlp_trace.jsonl``) into ``out`` (default: beside it,
    ``timeline.perfetto.json``); returns the path written."""
    out = out or trace.with_name("timeline.perfetto.json")
    data = convert(records if records is not None else read_trace(trace))
    out.write_text(json.dumps(data, separators=(",", ":")))
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not 1 <= len(args) <= 2:
        print("usage: python -m tb.debug.perfetto TRACE.jsonl [OUT.json]")
        return 2
    trace = Path(args[0])
    if not trace.is_file():
        print(f"perfetto: no trace at {trace}")
        return 1
    out = write(trace, Path(args[1]) if len(args) > 1 else None)
    print(f"timeline: {out}  (open it in https://ui.perfetto.dev: Open trace file)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
