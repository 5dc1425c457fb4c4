"""Waveform debugging end to end: a traced peer transfer with WAVES=1 on both simulators,
its FST, the GTKWave save file, the text tracks, the trace, the report and the Perfetto
timeline."""

from __future__ import annotations

import json

import pytest

from tb import runner
from tests.unit.test_perfetto import check_trace_event_format


@pytest.mark.parametrize(
    "sim_name", ["icarus", pytest.param("verilator", marks=pytest.mark.verilator)]
)
def test_waves_save_file_and_report(sim_name: str, profile: str) -> None:
    """WAVES=1 on a traced peer transfer: the run's own FST, a GTKWave save file whose every
    signal is in that dump (each group present), the trace and a report counting 8 KiB each
    way."""
    from pathlib import Path

    from tb.debug.fst import fst_signals
    from tb.debug.gtkwave import GROUPS, save_file_signals
    from tb.debug.report import summarize
    from tb.debug.trace import read_trace

    if sim_name == "verilator" and not Path("/usr/include/lz4.h").is_file():
        pytest.skip("Verilator FST waves need liblz4-dev (make installs it when run as root)")

    results = runner.run(
        "test_trace_of_a_peer_transfer",
        sim=sim_name,
        profile=profile,
        module="tb.tests.test_trace",
        waves=True,
    )
    assert not runner.failures(results), runner.failure_messages(results)
    run_dir = results.parent
    dumps = list(run_dir.glob("*.fst"))
    assert len(dumps) == 1, f"one FST per run in {run_dir}: {dumps}"
    in_dump = {s.replace(" ", "") for s in fst_signals(dumps[0])}
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
    _check_text_tracks(dumps[0], in_dump, text, read_trace(run_dir / "tlp_trace.jsonl"))


def _check_text_tracks(dump, in_dump: set[str], save_file: str, records: list[dict]) -> None:
    """The decoded text tracks: listed in the save file as ASCII, and in the dump each
    peer write's label on the FPGA's transmit track at the trace's time, each descriptor's
    label on its engine's track, and nothing that is not a label of the trace."""
    from tb.debug.annotate import TRACKS, place
    from tb.debug.fst import text_values
    from tb.debug.gtkwave import ASCII, TEXT_SCOPES, TEXT_TITLE

    scope = next((s for s in TEXT_SCOPES if f"{s}.fpga_tx[511:0]" in in_dump), None)
    assert scope is not None, "no text tracks in the dump"
    assert f"-{TEXT_TITLE}" in save_file
    for track in TRACKS:
        assert f"{ASCII}\n{scope}.{track}[511:0]" in save_file, track
    try:
        values = text_values(dump, scope)
    except FileNotFoundError as e:
        pytest.skip(f"cannot read the dump's values: {e}")
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
    descs = [place(r)[1] for r in records if r.get("event") == "desc"]
    shown = [v for track in ("h2c_desc", "c2h_desc") for _, v in values[track]]
    assert descs and all(d in shown for d in descs), (descs, shown)
