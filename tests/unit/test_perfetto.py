"""The TLP trace as a Perfetto / chrome://tracing timeline (no simulator, no browser: the
file is checked against the trace-event format, as the format's documentation defines
it, and against what the trace says)."""

from __future__ import annotations

import json
import numbers

from cocotbext.pcie.core.tlp import Tlp

from driver_model.desc import Segment, build_chain
from tb.debug import perfetto
from tb.debug.trace import JsonLinesSink, read_trace
from tests.unit.test_trace import GPU_BAR1, _peek, _start_chain, make_trace
from tests.unit.tlps import HOST, mem_read, mem_write

PHASES = {"X", "M", "s", "f", "i", "B", "E"}


def check_trace_event_format(data: dict) -> list[dict]:
    """What chrome://tracing and Perfetto need of a JSON trace: ``traceEvents``, each with
    its phase's fields, thread and process names for every track used, and flow starts
    and ends paired by id, each inside a slice of its track. Returns the events."""
    assert set(data) >= {"traceEvents"} and data.get("displayTimeUnit") in (None, "ns", "ms")
    events = data["traceEvents"]
    named = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    procs = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    slices: dict[tuple[int, int], list[tuple[float, float]]] = {}
    flows: dict[int, dict[str, dict]] = {}
    for e in events:
        assert e["ph"] in PHASES, e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name") and e["args"]["name"], e
            continue
        assert isinstance(e["ts"], numbers.Real) and e["ts"] >= 0, e
        assert (e["pid"], e["tid"]) in named and e["pid"] in procs, f"unnamed track: {e}"
        if e["ph"] == "X":
            assert isinstance(e["name"], str) and e["name"], e
            assert isinstance(e["dur"], numbers.Real) and e["dur"] > 0, e
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        if e["ph"] in ("s", "f"):
            assert isinstance(e["id"], int) and e["cat"] and e["name"], e
            assert e["ph"] not in flows.get(e["id"], {}), f"flow {e['id']} twice: {e}"
            flows.setdefault(e["id"], {})[e["ph"]] = e
            if e["ph"] == "f":
                assert e.get("bp") == "e", e
    for fid, ends in flows.items():
        assert set(ends) == {"s", "f"}, f"flow {fid} is not a pair"
        assert ends["s"]["ts"] <= ends["f"]["ts"], ends
        for end in ends.values():
            track = slices.get((end["pid"], end["tid"]), [])
            assert any(a <= end["ts"] <= b for a, b in track), f"flow end outside a slice: {end}"
    json.dumps(data)  # serialisable as it is
    return events


def _peer_transfer(tmp_path):
    """A chain of two H2C descriptors (one read split into two completions), then a C2H
    write to a GPU pin: the trace, as records."""
    ring, src = 0x4000_0000, 0x1000_0000
    blocks = build_chain([Segment(src, 0, 256), Segment(src + 0x1000, 256, 128)], [ring, ring + 32])
    trace, _, gpu = make_trace(_peek(blocks.blocks()))
    sink = JsonLinesSink(tmp_path / "tlp_trace.jsonl")
    trace.sinks = [sink]
    trace.name_buffer(src, 1 << 20, "src")
    _start_chain(trace, ring, blocks.blocks(), [(ring, 64)])
    req = mem_read(src, 256, tag=5)
    trace.observe("fpga", "up", req)
    for first, size, remaining in ((src, 64, 256), (src + 64, 192, 192)):  # split
        c = Tlp.create_completion_data_for_tlp(req, HOST)
        c.lower_address = first & 0x7F
        c.byte_count = remaining
        c.set_data(bytes(size))
        trace.observe("fpga", "down", c)
    trace.observe("fpga", "up", mem_read(src + 0x1000, 128, tag=6))
    va = gpu.alloc_device(1 << 20).base
    pin = gpu.pin(va, 128 << 10, False, None, None)
    trace.observe("fpga", "up", mem_write(GPU_BAR1 + (pin.bar1_pages[0] << 16), bytes(64)))
    sink.close()
    return read_trace(tmp_path / "tlp_trace.jsonl"), pin


def test_timeline_is_valid_trace_event_json(tmp_path):
    _peer_transfer(tmp_path)
    out = perfetto.write(tmp_path / "tlp_trace.jsonl")
    assert out.name == "timeline.perfetto.json"
    check_trace_event_format(json.loads(out.read_text()))


def test_timeline_tracks_slices_and_flows(tmp_path):
    records, pin = _peer_transfer(tmp_path)
    events = check_trace_event_format(perfetto.convert(records))
    names = {
        (e["pid"], e["args"]["name"])
        for e in events
        if e["ph"] == "M" and e["name"] == "thread_name"
    }
    assert {(perfetto.LINKS_PID, "fpga up"), (perfetto.LINKS_PID, "fpga down")} <= names
    assert (perfetto.ENGINES_PID, "H2C") in names
    assert any(p == perfetto.TAGS_PID and n.endswith("tag 5") for p, n in names)
    slices = [e for e in events if e["ph"] == "X"]
    # every TLP of the trace is a slice on its link's track, named by what it did
    assert len([e for e in slices if e["pid"] == perfetto.LINKS_PID]) == len(
        [r for r in records if "event" not in r]
    )
    assert any(f"GPU BAR1 pin#{pin.pin_id}" in e["name"] for e in slices)
    # the split read: its tag's slice runs from the request to the second completion
    t_req = next(r["t"] for r in records if r.get("tag") == 5 and r["type"] == "MRd")
    t_last = [r["t"] for r in records if r.get("tag") == 5 and r["type"] == "CplD"][-1]
    (tag5,) = [e for e in slices if e["pid"] == perfetto.TAGS_PID and " tag 5 " in e["name"]]
    assert tag5["name"].startswith("MRd 256B tag 5 -> ")
    assert tag5["ts"] * 1e3 == t_req and round((tag5["ts"] + tag5["dur"]) * 1e3, 6) == t_last
    # descriptors: one slice each, to their last data TLP, with a flow to each data TLP
    descs = [e for e in slices if e["pid"] == perfetto.ENGINES_PID]
    assert [e["name"].split(" H2C")[0] for e in descs] == ["desc 0/2", "desc 1/2"]
    data = [r for r in records if r.get("desc") and r["link"] == "fpga"]
    assert len([e for e in events if e["ph"] == "f"]) == len(data) == 2
    assert round((descs[0]["ts"] + descs[0]["dur"]) * 1e3, 3) >= data[0]["t"]


def test_command_line(tmp_path, capsys):
    _peer_transfer(tmp_path)
    assert perfetto.main([str(tmp_path / "tlp_trace.jsonl"), str(tmp_path / "t.json")]) == 0
    assert "ui.perfetto.dev" in capsys.readouterr().out
    assert perfetto.main([str(tmp_path / "none.jsonl")]) == 1
