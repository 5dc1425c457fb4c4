"""The debug sinks as a TB plugin (``$PEVB_PLUGINS``, set by the runner for traced and
waves runs): :func:`attach` gives each new TB the JSON-lines trace named by
``$PEVB_TRACE`` and, in a waves build, the text tracks."""

from __future__ import annotations

import atexit
import os
from pathlib import Path

from ..config.choices import TRACE_ENV
from .annotate import WaveAnnotations, find_annotations
from .trace import JsonLinesSink, enable_trace

_SINKS: dict[str, JsonLinesSink] = {}  # the trace file's writer, by path


def attach(tb) -> None:
    """Attach the run's debug sinks to ``tb`` (a :class:`tb.env.system.TB`)."""
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
