"""Debugging a run: the TLP trace, the waveform's text tracks, the transfer report, FST
reading and GTKWave save files, and the testbench-only HDL of the text tracks.

As a TB plugin (``$PEVB_PLUGINS``, set by the runner for traced and waves runs),
:func:`attach` gives each new TB the JSON-lines trace named by ``$PEVB_TRACE`` and, in a
waves build, the text tracks.
"""

from __future__ import annotations

import atexit
import os
from pathlib import Path

PLUGIN = __name__
TRACE_ENV = "PEVB_TRACE"

_SINKS: dict[str, object] = {}  # the trace file's writer, by path


def attach(tb) -> None:
    """Attach the run's debug sinks to ``tb`` (a :class:`tb.env.system.TB`)."""
    from .annotate import WaveAnnotations, find_annotations
    from .trace import JsonLinesSink, enable_trace

    path = os.environ.get(TRACE_ENV)
    if path:
        sink = _SINKS.get(path)
        if sink is None:  # once per simulator: its later tests go on in the same file
            sink = _SINKS[path] = JsonLinesSink(Path(path))
            atexit.register(sink.close)
        enable_trace(tb, sink)
        tb.log.info("TLP trace: %s", path)
    annotations = find_annotations(tb.dut)
    if annotations is not None:  # a waves build: decoded text tracks in the dump
        enable_trace(tb, WaveAnnotations(annotations))
