"""The compiled data path's library (tb/dp): its calendar against the Python timeline's
heap on random work, and the switch that picks the path."""

from __future__ import annotations

import heapq
import random

import pytest

from tb import dp


def test_the_calendar_keeps_the_timeline_s_order() -> None:
    """Random pushes and takes, many at one step, some scheduled while a step's work is
    taken (for that very step too): the library gives the work in the order heapq gives
    (step, slot), each once."""
    rng = random.Random(7)
    cal = dp.Calendar()
    heap: list[tuple[int, int, int]] = []
    got: list[int] = []
    want: list[int] = []
    slot = 0
    now = 0
    for _ in range(300):
        for _ in range(rng.randrange(6)):
            step = now + rng.choice([0, 0, 1, rng.randrange(50)])
            slot += 1
            name = slot
            heapq.heappush(heap, (step, slot, name))
            cal.push(step, slot, got.append, name)
        assert len(cal) == len(heap)
        assert cal.first() == (heap[0][:2] if heap else None)
        now += rng.randrange(4)
        taken = 0
        for _, work, arg in cal.due(now):
            work(arg)
            taken += 1
            if taken == 3:  # work that schedules more at the step it runs in
                slot += 1
                heapq.heappush(heap, (now, slot, -slot))
                cal.push(now, slot, got.append, -slot)
        while heap and heap[0][0] <= now:
            want.append(heapq.heappop(heap)[2])
    assert got == want and len(want) > 500
    cal.clear()
    assert len(cal) == 0 and cal.first() is None


def test_the_switch(monkeypatch) -> None:
    """The data path a simulation takes is its build configuration's, read once; one
    the runner did not write is the one make's variables give."""
    from tb.config import BuildConfig, build

    monkeypatch.delenv(build.CONFIG_ENV, raising=False)
    for value, want in (("", dp.COMPILED), ("python", dp.PYTHON)):
        monkeypatch.setenv(dp.DATAPATH_ENV, value)
        build.current.cache_clear()
        assert dp.datapath() == want
    monkeypatch.setenv(dp.DATAPATH_ENV, "fast")
    build.current.cache_clear()
    with pytest.raises(ValueError, match="choose compiled or python"):
        dp.datapath()
    monkeypatch.setenv(dp.DATAPATH_ENV, dp.PYTHON)  # the runner's configuration wins
    monkeypatch.setenv(
        build.CONFIG_ENV, BuildConfig(datapath=dp.COMPILED).to_env()[build.CONFIG_ENV]
    )
    build.current.cache_clear()
    assert dp.datapath() == dp.COMPILED
    build.current.cache_clear()


def test_the_library_is_built_once_per_source() -> None:
    """Its name carries the sources' hash (a changed source builds a new one, a stale one
    is never loaded), and it is loaded once."""
    lib = dp.library()
    assert "libpevb_dp-" in lib._name and lib._name.endswith(".so")
    assert dp.library() is lib


def test_what_sending_a_tlp_of_the_librarys_takes() -> None:
    """dp_tlp_fc, what a hop in the library sends with: the credit type, data credits and
    bytes on the wire cocotbext-pcie's Tlp gives (get_fc_type, get_data_credits,
    get_wire_size), on random memory requests and completions."""
    import ctypes

    from cocotbext.pcie.core.tlp import Tlp, TlpType

    lib, cal = dp.library(), dp.Calendar()
    dc, wire = ctypes.c_uint64(), ctypes.c_uint64()
    rng = random.Random(5)
    for _ in range(500):
        t = Tlp()
        kind = rng.choice((TlpType.MEM_READ, TlpType.MEM_WRITE_64, TlpType.CPL_DATA))
        t.fmt_type = kind
        if kind == TlpType.CPL_DATA:
            t.set_data(bytes(rng.randrange(1, 257) * 4))
            t.byte_count = len(t.data)
        elif kind == TlpType.MEM_WRITE_64:
            t.address = 1 << 32 | rng.randrange(0, 1 << 20) * 4
            t.set_data(bytes(rng.randrange(1, 129) * 4))
        else:
            t.address, t.length = rng.randrange(0, 1 << 20) * 4, rng.randrange(1, 129)
        raw = bytes(t.pack())
        handle = lib.dp_tlp_new(cal.cal, raw, len(raw))
        fc = lib.dp_tlp_fc(cal.cal, handle, ctypes.byref(dc), ctypes.byref(wire))
        assert (fc, dc.value, wire.value) == (
            t.get_fc_type().value,
            t.get_data_credits(),
            t.get_wire_size(),
        ), t
        lib.dp_tlp_free(cal.cal, handle)


def test_the_library_loads_without_a_simulator() -> None:
    """The library reaches the simulator's signals through the VPI functions of the
    process it is loaded into (vpi.cpp, declared weak): outside a simulator it loads
    all the same, and finds no array (the transactors then move their words in Python)."""
    lib = dp.library()
    assert lib.dp_vpi_present() == 0
    assert lib.dp_vpi_words(b"top.rc_xact.mem", 4) is None
    assert dp.Words.of(_Array("top.rc_xact.mem", 4)) is None


class _Array:
    """What Words.of reads of a cocotb array handle: its path and its length."""

    def __init__(self, path: str, depth: int) -> None:
        self._path, self._depth = path, depth

    def __len__(self) -> int:
        return self._depth


def test_a_log_level_change_is_told() -> None:
    """The library's answers at the root complex stop while its logger logs each
    request: every change of a level (setLevel, logging.disable) is told
    (tb.models.native's hook on logging's level cache)."""
    import logging

    from tb.models.native import _on_log_levels

    class Listener:
        calls = 0

        def hit(self) -> None:
            self.calls += 1

    listener = Listener()
    _on_log_levels(listener.hit)
    log = logging.getLogger("pevb.test.levels")
    log.setLevel(logging.INFO)
    assert listener.calls == 1
    logging.disable(logging.CRITICAL)
    logging.disable(logging.NOTSET)
    assert listener.calls == 3
    log.setLevel(logging.NOTSET)
