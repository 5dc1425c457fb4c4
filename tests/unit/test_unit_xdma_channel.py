"""The driver model's one wait loop (XdmaChannel.wait/finish) against a scripted engine on a
fake platform with a simulated clock (no simulator)."""

from __future__ import annotations

import asyncio
import heapq
from collections import Counter

import pytest

from driver_model import regs
from driver_model.desc import Segment, build_chain
from driver_model.regs import Ctrl, Stat, Target
from driver_model.xdma import Outcome, WriteBack, XdmaChannel, XdmaUserIrq


class Clock:
    """Simulated time with scheduled events."""

    def __init__(self) -> None:
        self.now = 0.0
        self.events: list[tuple[float, int, object]] = []
        self._n = 0

    def at(self, t: float, fn) -> None:
        heapq.heappush(self.events, (t, self._n, fn))
        self._n += 1

    def advance(self, t: float) -> None:
        while self.events and self.events[0][0] <= t:
            when, _, fn = heapq.heappop(self.events)
            self.now = max(self.now, when)
            fn()
        self.now = max(self.now, t)


class FakeCompletion:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.flag = False

    def complete(self) -> None:
        self.flag = True

    def reinit(self) -> None:
        self.flag = False

    @property
    def done(self) -> bool:
        return self.flag

    async def wait(self, timeout_ns: float) -> bool:
        end = self.clock.now + timeout_ns
        while not self.flag:
            if not self.clock.events or self.clock.events[0][0] > end:
                self.clock.advance(end)
                return self.flag
            self.clock.advance(self.clock.events[0][0])
        return True


class FakeEngine:
    """A channel busy until ``idle_at``; every register access is counted."""

    bars = regs.BarLayout()

    def __init__(self, idle_at: float, count: int = 1) -> None:
        self.clock = Clock()
        self.idle_at = idle_at
        self.count = count
        self.reads: Counter[int] = Counter()
        self.writes: list[tuple[int, int]] = []

    # Platform
    async def ioread32(self, bar: int, offset: int) -> int:
        assert bar == regs.BAR_DMA
        self.reads[offset] += 1
        if offset in (
            regs.ch_reg(Target.H2C, regs.CH_STATUS),
            regs.ch_reg(Target.H2C, regs.CH_STATUS_RC),
        ):
            busy = self.clock.now < self.idle_at
            return int(Stat.BUSY) if busy else int(Stat.DESC_COMPLETED | Stat.DESC_STOPPED)
        if offset == regs.ch_reg(Target.H2C, regs.CH_COMPLETED_COUNT):
            return self.count if self.clock.now >= self.idle_at else 0
        return 0

    async def iowrite32(self, bar: int, offset: int, value: int) -> None:
        self.writes.append((offset, value))

    def completion(self) -> FakeCompletion:
        return FakeCompletion(self.clock)

    async def sleep_ns(self, ns: float) -> None:
        self.clock.advance(self.clock.now + ns)

    def now_ns(self) -> float:
        return self.clock.now

    def status_reads(self) -> int:
        return self.reads[regs.ch_reg(Target.H2C, regs.CH_STATUS)]


def channel(engine: FakeEngine) -> XdmaChannel:
    return XdmaChannel(engine, Target.H2C)  # type: ignore[arg-type]


def test_interrupt_wakes_the_wait_once():
    eng = FakeEngine(idle_at=10_000)
    ch = channel(eng)
    eng.clock.at(10_000, ch.interrupt)
    out = asyncio.run(ch.wait(1e6))
    assert out is Outcome.DONE and eng.clock.now == 10_000
    assert eng.status_reads() == 2  # before sleeping, and once woken


def test_interrupt_before_idle_falls_back_to_polling():
    """An MSI that arrives while the engine still drains (and no second one) must not end
    in a timeout: the woken wait polls until idle."""
    eng = FakeEngine(idle_at=8_000)
    ch = channel(eng)
    eng.clock.at(5_000, ch.interrupt)
    out = asyncio.run(ch.wait(1e6, poll_interval_ns=500))
    assert out is Outcome.DONE
    assert 8_000 <= eng.clock.now <= 8_500


def test_lost_interrupt_times_out_at_the_deadline():
    eng = FakeEngine(idle_at=5_000)
    ch = channel(eng)
    out = asyncio.run(ch.wait(200_000))
    assert out is Outcome.TIMEOUT and eng.clock.now == 200_000


def test_abort_wakes_the_waiter():
    eng = FakeEngine(idle_at=1e9)
    ch = channel(eng)
    state = {"aborted": False}

    def abort() -> None:
        state["aborted"] = True
        ch.interrupt()

    eng.clock.at(3_000, abort)
    out = asyncio.run(ch.wait(1e6, aborted=lambda: state["aborted"]))
    assert out is Outcome.ABORT and eng.clock.now == 3_000


def test_poll_mode_reads_the_writeback_word_not_the_status():
    eng = FakeEngine(idle_at=20_000, count=3)
    ch = channel(eng)
    word = {"v": 0}
    eng.clock.at(20_000, lambda: word.update(v=regs.WB_COUNT.put(3)))
    wb = WriteBack(0x1000, lambda: word["v"])
    out = asyncio.run(
        ch.wait(
            1e6, interrupt=False, writeback=wb, expected=3, poll_interval_ns=1000, status_every=8
        )
    )
    assert out is Outcome.DONE and eng.clock.now == 20_000
    # 21 polls: the status every 8th poll and once the word shows the count
    assert eng.status_reads() == 3


@pytest.mark.parametrize("wb_value", [regs.WB_ERROR.put(1)])
def test_poll_mode_error_writeback_checks_the_status(wb_value: int):
    eng = FakeEngine(idle_at=4_000)
    ch = channel(eng)
    out = asyncio.run(
        ch.wait(
            1e6,
            interrupt=False,
            writeback=WriteBack(0, lambda: wb_value),
            expected=99,
            poll_interval_ns=1000,
        )
    )
    assert out is Outcome.DONE and eng.clock.now == 4_000


def test_finish_halts_a_timed_out_channel():
    eng = FakeEngine(idle_at=50_000)
    ch = channel(eng)
    res = asyncio.run(ch.finish(Outcome.TIMEOUT, started_ns=0, drain_ns=100_000))
    assert res.timed_out and not res.busy and res.completed_count == 1
    assert (regs.ch_reg(Target.H2C, regs.CH_CONTROL_W1C), int(Ctrl.RUN)) in eng.writes
    assert eng.reads[regs.ch_reg(Target.H2C, regs.CH_STATUS_RC)] == 1
    # polled at intervals growing to 10 us: seen within one interval, in few reads
    assert 50_000 <= eng.clock.now <= 60_000
    assert eng.reads[regs.ch_reg(Target.H2C, regs.CH_STATUS)] < 20
    # a drain budget shorter than the engine: still busy, reported so
    eng = FakeEngine(idle_at=1e9)
    res = asyncio.run(channel(eng).finish(Outcome.TIMEOUT, started_ns=0, drain_ns=1_000))
    assert res.busy and res.status & Stat.BUSY


def test_run_starts_with_libxdma_sequence_and_finishes():
    eng = FakeEngine(idle_at=2_000)
    ch = channel(eng)
    eng.clock.at(2_000, ch.interrupt)
    chain = build_chain([Segment(0x1000, 0, 64)], 0x8000)
    res = asyncio.run(ch.run(chain))
    assert res.ok and res.completed_count == 1 and res.elapsed_ns == 2_000
    offsets = [o for o, _ in eng.writes]
    first = regs.sg_reg(Target.H2C, regs.SG_DESC_LO)
    control = regs.ch_reg(Target.H2C, regs.CH_CONTROL)
    assert offsets.index(first) < offsets.index(control)
    assert (control, int(regs.CTRL_IE_ALL | Ctrl.RUN)) in eng.writes


def test_channel_numbers_checked():
    eng = FakeEngine(idle_at=0)
    with pytest.raises(ValueError, match="no channel 4"):
        XdmaChannel(eng, Target.C2H, 4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="of 5 H2C channels"):
        XdmaChannel(eng, Target.C2H, 0, h2c_channels=5)  # type: ignore[arg-type]
    # C2H interrupt bits follow the H2C channels'
    ch = XdmaChannel(eng, Target.C2H, 1, h2c_channels=3)  # type: ignore[arg-type]
    assert ch.irq_bit == 1 << 4


def test_user_irq_vectors_keep_the_other_fields():
    """set_vectors writes only the fields it names (read-modify-write per register), and
    checks every interrupt number and vector before writing anything."""
    eng = FakeEngine(idle_at=0)
    uirq = XdmaUserIrq(eng, count=16)  # type: ignore[arg-type]
    asyncio.run(uirq.set_vectors({0: 3, 5: 31, 15: 7}))
    assert eng.writes == [
        (regs.irq_reg(regs.IRQ_USER_VECTOR[0]), 3),
        (regs.irq_reg(regs.IRQ_USER_VECTOR[1]), 31 << 8),
        (regs.irq_reg(regs.IRQ_USER_VECTOR[3]), 7 << 24),
    ]
    eng.writes.clear()
    with pytest.raises(ValueError, match="does not fit in 5 bits"):
        asyncio.run(uirq.set_vectors({1: 2, 2: 32}))
    with pytest.raises(ValueError, match="no user interrupt 4 of 4"):
        asyncio.run(XdmaUserIrq(eng, count=4).set_vectors({4: 1}))  # type: ignore[arg-type]
    assert eng.writes == [], "a bad request wrote registers"
    with pytest.raises(ValueError, match="user interrupts are 1 to 16"):
        XdmaUserIrq(eng, count=17)  # type: ignore[arg-type]


def test_vector_fields():
    assert regs.vector_field(0) == (0, regs.Field(0, 5))
    assert regs.vector_field(6) == (1, regs.Field(16, 5))
    mask = sum(regs.vector_field(i)[1].mask for i in range(4))
    assert mask == regs.IRQ_VECTOR_MASK
