"""The simulation models' parts on their own (tb/models/): the TLP-level link against
cocotbext-pcie's ``SimPort`` with the same TLPs and the same credit limits, the timeline,
and each model building what it says. The whole system in each model:
tests/sim/test_sim_models.py."""

from __future__ import annotations

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import Event, Timer, ValueChange
from cocotb.utils import get_sim_time
from cocotbext.pcie.core.port import SimPort
from cocotbext.pcie.core.tlp import Tlp, TlpType
from cocotbext.pcie.xilinx.us.interface import CcSink, CqSource, RcSource, RqSink

from tb.dp import COMPILED, datapath
from tb.env.system import TB
from tb.models import timeline as _timeline_module
from tb.models.clocks import EdgeClock
from tb.models.compiled_link import CompiledTlpPort
from tb.models.link import TlpPort
from tb.models.streams import BeatCcSink, BeatCqSource, BeatRcSource, BeatRqSink
from tb.models.timeline import CompiledTimeline, Lane, Watch, steps, timeline
from tb.models.transactors import (
    TRANSACTORS,
    TransactorCcSink,
    TransactorCqSource,
    TransactorError,
    TransactorRcSource,
    TransactorRqSink,
)

# receiver credits: 4 posted headers, 16 data credits (256 bytes: two 128-byte writes);
# infinite NP and CPL
FC_INIT = [[4, 16, 0, 0, 0, 0]] * 8
HOLD_NS = 2000  # the receiver keeps its first TLPs' credits this long


async def _burst(
    cls,
    count: int,
    hold_ns: int,
    link: tuple[int, int] = (2, 1),
    sizes: tuple[int, ...] = (128,),
    fc_init: list[list[int]] = FC_INIT,
    back: int = 0,
) -> list[tuple[float, int]]:
    """``count`` writes (their sizes from ``sizes`` in turn, 128 bytes by default) over a
    link (Gen2 x1 by default) of two ``cls`` ports, and ``back`` writes the other way at
    the same time; the receiver frees the first two TLPs' credits only after ``hold_ns``.
    Arrival (ns, address) of each, in the order they arrived."""
    tx, rx = cls(), cls(fc_init=fc_init)
    for port in (tx, rx):
        port.max_link_speed, port.max_link_width = link
    arrivals: list[tuple[float, int]] = []
    held: list[Tlp] = []

    async def receive(tlp: Tlp) -> None:
        arrivals.append((get_sim_time("ns"), tlp.address))
        if len(held) < 2:
            held.append(tlp)  # a receiver whose buffer drains late
        else:
            tlp.release_fc()

    async def release_later() -> None:
        await Timer(hold_ns, "ns")
        for tlp in held:
            tlp.release_fc()

    async def writes(port, base: int, n: int) -> None:
        for k in range(n):
            tlp = Tlp()
            tlp.fmt_type = TlpType.MEM_WRITE
            tlp.set_addr_be_data(base + 0x1000 * k, bytes(sizes[k % len(sizes)]))
            await port.send(tlp)

    tx.rx_handler = rx.rx_handler = receive
    tx.connect(rx)
    cocotb.start_soon(release_later())
    if back:
        cocotb.start_soon(writes(rx, 0x8000_0000, back))
    await writes(tx, 0x1000, count)
    await Timer(hold_ns + 5000, "ns")
    return arrivals


@cocotb.test(timeout_time=100, timeout_unit="us")
async def test_tlp_link_keeps_timing_and_credits(dut):
    """Serialization, the wire's delay and credit back-pressure as in SimPort: the same
    TLPs in the same order, each within two DLLPs' wire time (32 ns on Gen2 x1) of the
    exact arrival; the third waits for the held credits in both."""
    exact = await _burst(SimPort, 8, HOLD_NS)
    start = get_sim_time("ns")
    tlp = [(t - start, a) for t, a in await _burst(TlpPort, 8, HOLD_NS)]
    exact = [(t - exact[0][0] + tlp[0][0], a) for t, a in exact]  # same start
    assert [a for _, a in tlp] == [a for _, a in exact] == [0x1000 * (k + 1) for k in range(8)]
    for (tl, a), (te, _) in zip(tlp, exact, strict=True):
        assert abs(tl - te) <= 32, f"TLP {a:#x}: TLP-level {tl:.1f} ns, exact {te:.1f} ns"
    # 8 data credits per TLP, 16 in all: the third waits for the release (and the
    # UpdateFC's latency timer), then the rest flow
    assert tlp[2][0] - tlp[0][0] > HOLD_NS, tlp
    assert tlp[7][0] - tlp[2][0] < 6 * 400, tlp
    # back to back before that: a 128-byte write is 152 bytes on the wire, 304 ns at Gen2 x1
    assert 300 <= tlp[1][0] - tlp[0][0] <= 340, tlp


@cocotb.test(timeout_time=300, timeout_unit="us")
async def test_compiled_link_equals_the_python_link(dut):
    """The compiled data path's link (tb/models/compiled_link.py, its wire, credits and DLLPs in the
    library) against :class:`TlpPort`: every TLP at the same step, on links of several
    speeds and widths, with TLPs of several sizes, credits held back, and traffic both
    ways (the ACKs and UpdateFCs share each wire with the TLPs)."""
    cases = [
        dict(count=8, hold_ns=HOLD_NS),
        dict(count=24, hold_ns=700, link=(3, 4), sizes=(4, 128, 256, 64, 16)),
        dict(count=16, hold_ns=300, link=(1, 1), sizes=(32, 128), back=12),
        dict(
            count=40,
            hold_ns=1500,
            link=(3, 8),
            sizes=(256,),
            fc_init=[[8, 128, 0, 0, 0, 0]] * 8,
            back=40,
        ),
        dict(
            count=20, hold_ns=900, link=(2, 2), sizes=(64, 256), fc_init=[[2, 64, 0, 0, 0, 0]] * 8
        ),
    ]
    saved = timeline()
    for case in cases:
        start = get_sim_time("ns")
        python = [(round(t - start, 6), a) for t, a in await _burst(TlpPort, **case)]
        _timeline_module._current[:] = [CompiledTimeline()]
        try:
            start = get_sim_time("ns")
            compiled = [(round(t - start, 6), a) for t, a in await _burst(CompiledTlpPort, **case)]
        finally:
            _timeline_module._current[:] = [saved]
        assert len(python) == case["count"] + case.get("back", 0), case
        assert compiled == python, f"{case}:\n  python   {python}\n  compiled {compiled}"


@cocotb.test(timeout_time=100, timeout_unit="us")
async def test_models_build_what_they_say(dut):
    """TB(model=...) builds the beat-level or exact ports and stream interfaces on a build
    without transactors, the transactor interfaces on one with them, and nothing else; a
    model the build cannot run, and an unknown one or a former name, are refused by name."""
    xact_build = hasattr(TB.hip_of(dut), TRANSACTORS["s_axis_cq"])
    # the TLP-level link, or on the compiled data path its compiled form
    tlp_port = CompiledTlpPort if datapath() == COMPILED else TlpPort
    built = (
        [
            (
                "transactors",
                tlp_port,
                (TransactorRqSink, TransactorRcSource, TransactorCqSource, TransactorCcSink),
            )
        ]
        if xact_build
        else [
            ("beats", tlp_port, (BeatRqSink, BeatRcSource, BeatCqSource, BeatCcSink)),
            ("exact", SimPort, (RqSink, RcSource, CqSource, CcSink)),
        ]
    )
    for model in ("beats", "exact") if xact_build else ("transactors",):
        try:
            TB(dut, model=model)
        except TransactorError as e:
            assert model in str(e) and "PEVB_MODEL=" in str(e), e
        else:
            raise AssertionError(f"{model} was built on a build that cannot run it")
    for model, port, ifaces in built:
        tb = TB(dut, model=model)
        assert tb.model == model
        for link in tb.links.links.values():
            assert type(link.upper) is port and type(link.lower) is port, (model, link.name)
        got = (tb.dev.rq_sink, tb.dev.rc_source, tb.dev.cq_source, tb.dev.cc_sink)
        assert [type(i) for i in got] == list(ifaces), model
    for bad, says in (("fast", "choose transactors or exact"), ("xact", "xact is now")):
        try:
            TB(dut, model=bad)
        except ValueError as e:
            assert bad in str(e) and says in str(e), e
        else:
            raise AssertionError(f"model {bad!r} was accepted")


@cocotb.test(timeout_time=1, timeout_unit="us")
async def test_timeline_runs_work_in_time_order(dut):
    """The fabric's timeline runs each piece of work at its step, whatever order it was
    scheduled in: work scheduled earlier than what the timer is set for moves it, work
    at one step runs in the order it was scheduled, and work may schedule more."""
    line = timeline()
    start = steps()
    ran: list[tuple[str, int]] = []

    def note(name: str) -> None:
        ran.append((name, steps() - start))
        if name == "b":  # scheduled from inside work: runs at its own later step
            line.at(steps() + 7, note, "e")

    line.at(start + 300, note, "d")
    line.at(start + 100, note, "b")  # earlier than the timer's step: moves it
    line.at(start + 50, note, "a")
    line.at(start + 100, note, "c")  # same step as b: after it
    await Timer(1000, "step")
    assert ran == [("a", 50), ("b", 100), ("c", 100), ("e", 107), ("d", 300)], ran
    line.at(steps() + 5, note, "f")  # an idle timeline wakes for new work
    await Timer(10, "step")
    assert ran[-1] == ("f", 1005), ran


@cocotb.test(timeout_time=1, timeout_unit="us")
async def test_timeline_slot_kept_for_work_not_scheduled(dut):
    """A slot taken for work that may never be scheduled (a TLP-level link's hand-over to the
    next TLP, scheduled only when one waits): ``passed`` answers as if the work were
    there (no before its step and while earlier work of the step runs, yes while later
    work runs and after), and ``at_slot`` runs work in that place."""
    line = timeline()
    step = steps() + 100
    seen: list[tuple[str, bool]] = []
    line.at(step, lambda _: seen.append(("earlier", line.passed(step, slot))))
    slot = line.slot()
    line.at(step, lambda _: seen.append(("later", line.passed(step, slot))))
    assert not line.passed(step, slot)
    await Timer(200, "step")
    assert seen == [("earlier", False), ("later", True)], seen
    assert line.passed(step, slot)
    step = steps() + 50
    order: list[str] = []
    line.at(step, lambda _: order.append("a"))
    slot = line.slot()
    line.at(step, lambda _: order.append("c"))
    line.at_slot(step, slot, lambda _: order.append("b"))
    await Timer(100, "step")
    assert order == ["a", "b", "c"], order


@cocotb.test(timeout_time=5, timeout_unit="us")
async def test_edge_clock_is_cocotbs_python_clock(dut):
    """The clock the TLP-level models give the hard IP on Icarus (no task per
    edge) makes cocotb's Python clock's edges: the same values at the same steps, from
    either starting level, and none after stop()."""
    a, b = dut.m_axis_h2c_tready_2, dut.m_axis_h2c_tready_3  # inputs nothing drives here
    for start_high in (True, False):
        seen: dict[str, list[tuple[int, str]]] = {"edge": [], "cocotb": []}

        async def watch(log: list[tuple[int, str]], sig) -> None:
            while True:
                await ValueChange(sig)
                log.append((steps(), str(sig.value)))

        watchers = [cocotb.start_soon(watch(seen[n], s)) for n, s in (("edge", a), ("cocotb", b))]
        mine, ref = EdgeClock(a, 8, "ns", impl="py"), Clock(b, 8, "ns", impl="py")
        mine.start(start_high)
        ref.start(start_high)
        await Timer(200, "ns")
        mine.stop()
        ref.stop()
        edges = len(seen["edge"])
        await Timer(50, "ns")
        for w in watchers:
            w.cancel()
        assert edges >= 49 and len(seen["edge"]) == edges, seen["edge"][-3:]
        assert seen["edge"] == seen["cocotb"], (seen["edge"][:4], seen["cocotb"][:4])


@cocotb.test(timeout_time=1, timeout_unit="us")
async def test_lane_keeps_order_when_work_waits(dut):
    """A lane runs work in the pusher's call until it must wait; what is pushed while it
    waits runs after it, in push order, and an event already set does not stop it."""
    gate, ready = Event(), Event()
    ready.set()
    done: list[int] = []

    async def work(n: int) -> None:
        await ready.wait()  # set: goes on in the pusher's call
        if n == 1:
            await gate.wait()
        done.append(n)

    lane = Lane(work)
    lane.push(0)
    assert done == [0] and not lane.busy  # ran to its end in push()
    lane.push(1)  # waits for the gate
    lane.push(2)
    lane.push(3)
    assert done == [0] and lane.busy
    await Timer(10, "ns")
    assert done == [0]
    gate.set()
    await Timer(1, "ns")
    assert done == [0, 1, 2, 3] and not lane.busy
    lane.push(4)
    assert done == [0, 1, 2, 3, 4]


@cocotb.test(timeout_time=1, timeout_unit="us", expect_error=ZeroDivisionError)
async def test_timeline_work_that_raises_fails_the_test(dut):
    """An exception in work the timeline runs fails the test that scheduled it (it is
    raised in the timeline's task), as one in a link's coroutine did."""
    timeline().at(steps() + 10, lambda _: 1 // 0)
    await Timer(100, "ns")


@cocotb.test(timeout_time=1, timeout_unit="us")
async def test_watch_calls_its_work_on_every_change(dut):
    """The fabric's Watch (the transactor sinks' TLP counts) calls its work from the
    simulator's callback on every value change of its signal, no task in between, and
    not for a write that changes nothing; once its test's timeline has ended (the test
    is over), it calls nothing more."""
    sig = dut.m_axis_h2c_tready_2  # an input nothing drives here
    sig.value = 0
    await Timer(1, "ns")
    seen: list[str] = []
    Watch(sig, lambda: seen.append(str(sig.value)))
    for value in (1, 0, 0, 1):
        sig.value = value
        await Timer(1, "ns")
    assert seen == ["1", "0", "1"], seen
    timeline().task.cancel()  # what the end of the test does
    for value in (0, 1):
        sig.value = value
        await Timer(1, "ns")
    assert seen == ["1", "0", "1"], seen


@cocotb.test(timeout_time=1, timeout_unit="us", expect_error=ZeroDivisionError)
async def test_watch_work_that_raises_fails_the_test(dut):
    """An exception in a Watch's work fails the test that set it (it is raised in the
    timeline's task), as one in the sinks' watching coroutine did."""
    sig = dut.m_axis_h2c_tready_2
    sig.value = 0
    await Timer(1, "ns")
    Watch(sig, lambda: 1 // 0)
    sig.value = 1
    await Timer(100, "ns")
