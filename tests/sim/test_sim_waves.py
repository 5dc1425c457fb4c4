"""Waveform debugging end to end: a traced peer transfer with WAVES=1 on both simulators,
its FST, the GTKWave save file, the text tracks, the trace, the report and the Perfetto
timeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tb.flow import runner
from tests.unit.test_unit_perfetto import check_trace_event_format


@pytest.mark.parametrize(
    "sim_name", ["icarus", pytest.param("verilator", marks=pytest.mark.verilator)]
)
def test_waves_save_file_and_report(sim_name: str, profile: str) -> None:
    """WAVES=1 on a traced peer transfer: the run's own FST, a GTKWave save file whose every
    signal is in that dump (each group present), the trace and a report counting 8 KiB each
    way."""
    from tb.debug.fst import read_dump
    from tb.debug.gtkwave import GROUPS, save_file_signals
    from tb.debug.records import read_trace
    from tb.debug.report import summarize

    if sim_name == "verilator" and not Path("/usr/include/lz4.h").is_file():
        pytest.skip("Verilator FST waves need liblz4-dev (make installs it when run as root)")

    results = runner.run(
        "test_trace_of_a_peer_transfer",
        sim=sim_name,
        profile=profile,
        module="tb.tests.cocotb_trace",
        waves=True,
    )
    assert not runner.failures(results), runner.failure_messages(results)
    run_dir = results.parent
    dumps = list(run_dir.glob("*.fst"))
    assert len(dumps) == 1, f"one FST per run in {run_dir}: {dumps}"
    dump = read_dump(dumps[0])
    in_dump = dump.gtkwave_names()
    listed = save_file_signals(run_dir / "waves.gtkw")
    missing = [s for s in listed if s not in in_dump]
    assert not missing, f"save file signals not in the dump: {missing}"
    text = (run_dir / "waves.gtkw").read_text()
    for title, _ in GROUPS:
        assert f"-{title}" in text, f"group {title!r} has no signal in the dump"
    assert str(dumps[0].resolve()) in text
    summary = summarize(read_trace(run_dir / "tlp_trace.jsonl"))
    assert summary["directions"]["H2C"]["bytes"] == 8192
    assert summary["directions"]["C2H"]["bytes"] == 8192
    assert (run_dir / "transfer_report.html").stat().st_size > 1000
    timeline = json.loads((run_dir / "timeline.perfetto.json").read_text())
    events = check_trace_event_format(timeline)
    assert any(e.get("args", {}).get("name") == "H2C" for e in events if e["ph"] == "M")
    records = read_trace(run_dir / "tlp_trace.jsonl")
    _check_text_tracks(dumps[0], in_dump, text, records)
    # last, the viewers themselves, where they are installed (without Chromium the
    # Perfetto UI check is left out here and reported as a skip by test_unit_perfetto.py)
    _check_in_perfetto(run_dir / "timeline.perfetto.json", events)
    why = _check_in_gtkwave(run_dir / "waves.gtkw", listed, dump.unit_ns, records)
    if why:
        pytest.skip(f"all else checked; not opened in {why}")


def _check_in_perfetto(timeline: Path, events: list[dict]) -> str | None:
    """The Perfetto UI (headless Chromium) opens the timeline with no import error, and
    holds every slice and flow of the file; returns why not checked, or None."""
    from tests.perfetto_ui import PerfettoUi, missing

    why = missing()
    if why:
        return f"the Perfetto UI ({why})"
    with PerfettoUi(timeline) as ui:
        assert ui.import_errors() == []
        (slices,) = ui.query("select count(*) as n from slice")
        (flows,) = ui.query("select count(*) as n from flow")
    assert slices["n"] == len([e for e in events if e["ph"] == "X"])
    assert flows["n"] == len([e for e in events if e["ph"] == "f"])
    return None


def _check_in_gtkwave(
    save: Path, listed: list[str], unit_ns: float, records: list[dict]
) -> str | None:
    """GTKWave itself, under a virtual display, opens the save file: it shows every
    signal listed (a name it cannot find in the dump is dropped), at the zoom written,
    with the focused label's text inside the window; returns why not checked, or None."""
    import shutil
    import subprocess

    from tb.debug.gtkwave import CHAR_PX, focus, units_per_pixel, zoom_for

    if not (shutil.which("gtkwave") and shutil.which("xvfb-run")):
        return "GTKWave (apt-get install gtkwave xvfb; make does it as root)"
    script = save.parent / "query.tcl"
    script.write_text(
        'puts "SIGNALS [gtkwave::getDisplayedSignals]"\n'
        'puts "WINDOW [gtkwave::getWindowStartTime] [gtkwave::getWindowEndTime]"\n'
        'puts "ZOOM [gtkwave::getZoomFactor]"\n'
        "gtkwave::/File/Quit\n"
    )
    done = subprocess.run(
        ["xvfb-run", "-a", "gtkwave", "-S", str(script), str(save)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = {
        line.split(" ", 1)[0]: line.split(" ", 1)[1].split()
        for line in done.stdout.splitlines()
        if line.startswith(("SIGNALS ", "WINDOW ", "ZOOM "))
    }
    assert said.keys() == {"SIGNALS", "WINDOW", "ZOOM"}, done.stdout + done.stderr
    assert said["SIGNALS"] == listed
    view = focus(records)
    zoom = zoom_for(view, unit_ns)
    assert float(said["ZOOM"][0]) == zoom
    start, end = (int(x) * unit_ns for x in said["WINDOW"])
    text_ns = (len(view.label) + 2) * CHAR_PX * units_per_pixel(zoom) * unit_ns
    assert start <= view.t_ns and view.t_ns + text_ns <= end, (start, end, view)
    assert view.box_ns is None or view.box_ns >= text_ns, view
    return None


def _check_text_tracks(dump, in_dump: set[str], save_file: str, records: list[dict]) -> None:
    """The decoded text tracks: listed in the save file as ASCII, and in the dump each
    peer write's label on the FPGA's transmit track at the trace's time, each descriptor's
    label on its engine's track, and nothing that is not a label of the trace."""
    from tb.debug.fst import text_values
    from tb.debug.gtkwave import TEXT_SCOPES, TEXT_TITLE
    from tb.debug.records import TRACKS, place

    scope = next((s for s in TEXT_SCOPES if f"{s}.fpga_tx[511:0]" in in_dump), None)
    assert scope is not None, "no text tracks in the dump"
    assert f"-{TEXT_TITLE}" in save_file
    for track in TRACKS:
        assert f"+{{{track}}} {scope}.{track}[511:0]\n" in save_file, track
    values = text_values(dump, scope)
    expected: dict[str, set[str]] = {t: set() for t in TRACKS}
    for rec in records:
        placed = place(rec)
        if placed:
            expected[placed[0]].update({placed[1], placed[1][:62] + " *"})
    for track in TRACKS:
        unknown = [v for _, v in values[track] if v and v not in expected[track]]
        assert not unknown, f"{track}: values that are no trace label: {unknown[:3]}"
    at = {(track, round(t), v) for track in TRACKS for t, v in values[track]}
    peer = [
        r
        for r in records
        if r.get("type") == "MWr"
        and r["link"] == "fpga"
        and r["dir"] == "up"
        and r["target"]["kind"] == "gpu_bar1"
    ]
    assert peer
    for rec in peer:
        label = place(rec)[1]
        assert label.startswith("MWr ") and " -> GPU BAR1 pin#" in label
        assert any(
            k == ("fpga_tx", round(rec["t"]), v) for v in (label, label[:62] + " *") for k in at
        ), f"{label!r} not on fpga_tx at {rec['t']} ns"
    # the driver's status polling is on the MMIO track, and only there
    polls = [v for _, v in values["mmio"] if v.startswith("MRd 4B tag ") and "status" in v]
    assert polls, values["mmio"][:5]
    for track in TRACKS:
        if track != "mmio":
            assert not [v for _, v in values[track] if "FPGA " in v and "status" in v], track
    descs = [place(r)[1] for r in records if r.get("event") == "desc"]
    shown = [v for track in ("h2c_desc", "c2h_desc") for _, v in values[track]]
    assert descs and all(d in shown for d in descs), (descs, shown)
