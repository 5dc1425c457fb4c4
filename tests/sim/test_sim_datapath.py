"""The compiled data path against the Python one (``$PEVB_DATAPATH``, tb/dp): the same
cocotb tests run both ways, and the two TLP traces are the same, TLP by TLP, times
included, and so are the results. What the compiled path covers is in tb/dp.

The TLP trace is a passive observer of every TLP: on the compiled path the library takes
its hops with the trace on and records each TLP it takes past a tapped link end in its
trace ring, which the trace is shown from (tb/env/native.py); the traces compared are
that. The hops are also compared by the library's own log of every TLP's arrival at
every compiled port (``$PEVB_DP_LOG``): with the hops the library takes
(``$PEVB_DP_NATIVE=1``) and with every hop in Python (``0``), the same TLPs reach the
same ports at the same steps in the same order."""

from __future__ import annotations

import json
import re

import pytest

from tb.dp import COMPILED, DATAPATH_ENV, PYTHON
from tb.flow import runner
from tb.flow.farm.jobs import MODULE, TESTCASES, regress_env
from tb.models.native import NATIVE_ENV
from tb.models.timeline import LOG_ENV
from tests.sim import plan

# tests that move data both ways through the fabric, with the GPU's BAR1 among the
# targets (the engine's concurrent pair; the driver's H2C2H through GPU memory), the
# GPU's writes past a congested link with relaxed ordering on and off (the switch's
# queues and passing), INTx messages queued at the switch beside the data, and
# malformed completions the protocol checker must name (the library's checker on the
# compiled path: the test asserts what it names), and the XDMA drop-in's chains between
# host memory and a user's AXI RAM
CASES = [
    ("tb.tests.cocotb_engine", "test_concurrent_h2c_c2h"),
    ("tb.tests.cocotb_driver", "test_h2c2h_four_combinations"),
    ("tb.tests.cocotb_axib", "test_gpu_data_then_doorbell_in_order"),  # on its design
    ("tb.tests.cocotb_intx", "test_driver_on_intx_moves_data"),
    ("tb.tests.cocotb_faults", "test_malformed_completions"),
    ("tb.tests.cocotb_dropin", "test_axiram_h2c_c2h"),  # on the drop-in's design
]


def _run(module: str, test: str, sim: str, profile: str, env: dict, trace: bool = False):
    """Run ``test`` of ``module`` (on its own design, as the plan builds it) with
    ``env``: its sim.log's text and its run directory; it must pass."""
    name = module.rsplit(".", 1)[1]
    overrides = next(iter(plan.BUILDS.get(name, {None: None}).values()))
    results = runner.run(
        test,
        sim=sim,
        profile=profile,
        module=module,
        trace=trace,
        extra_env=env,
        toplevel=plan.TOPLEVELS.get(name, runner.TOPLEVEL),
        overrides=overrides,
    )
    failed = runner.failures(results)
    assert not failed, f"{failed} with {env}: {runner.failure_messages(results)}"
    return (results.parent / "sim.log").read_text(), results.parent


def _trace(
    module: str, test: str, sim: str, profile: str, path: str, env: dict | None = None
) -> list[dict]:
    log, where = _run(module, test, sim, profile, {**(env or {}), DATAPATH_ENV: path}, True)
    said = "compiled data path: the fabric's calendar and links in libpevb_dp-"
    assert (said in log) == (path == COMPILED)
    if path == COMPILED:  # the trace came from the library's ring, not Python's hops
        hops = sum(int(n) for n in re.findall(r"compiled data path: (\d+) hops", log))
        assert hops > 100, f"{hops} hops in the library with the trace on"
    with open(where / "tlp_trace.jsonl") as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize("module, test", CASES, ids=[t for _, t in CASES])
def test_both_paths_give_the_same_traffic(module: str, test: str, sim: str, profile: str):
    python = _trace(module, test, sim, profile, PYTHON)
    compiled = _trace(module, test, sim, profile, COMPILED)
    assert len(python) > 100, f"a trace of {len(python)} records proves nothing"
    for i, (a, b) in enumerate(zip(python, compiled, strict=False)):
        assert a == b, f"record {i + 1} differs:\n  python   {a}\n  compiled {b}"
    assert len(python) == len(compiled), f"{len(python)} and {len(compiled)} records"


@pytest.mark.verilator
def test_both_paths_give_the_same_traffic_on_verilator(profile: str):
    module, test = CASES[0]
    python = _trace(module, test, "verilator", profile, PYTHON)
    compiled = _trace(module, test, "verilator", profile, COMPILED)
    assert len(python) > 100 and python == compiled


def _arrivals(
    module: str, test: str, sim: str, profile: str, native: str, log, env: dict | None = None
) -> list[str]:
    env = {**(env or {}), DATAPATH_ENV: COMPILED, NATIVE_ENV: native, LOG_ENV: str(log)}
    text, _ = _run(module, test, sim, profile, env)
    said = re.findall(
        r"compiled data path: (\d+) hops of the library's own TLPs, (\d+) .*?"
        r"(\d+) written for the RTL by the library's RC loop, which waited (\d+) times and"
        r" was taken over (\d+) times\); (\d+) senders of its own resumed \((\d+) of them"
        r".*?(\d+) posted writes sent \((\d+) of them after a wait for the link; (\d+)"
        r" handed over by the model's RQ logic\) and (\d+) memory reads issued from RQ",
        text,
    )
    hops, bar1, turns, waits, adopted, resumed, credit, writes, waited, handed, reads = (
        sum(int(s[k]) for s in said) for k in range(11)
    )
    assert (hops > 100) == (native == "1"), f"{hops} hops in the library with {NATIVE_ENV}={native}"
    if test in WAIT_CASES:  # switch ports whose arbitration waits for the wire in the library
        assert (resumed > 20) == (native == "1"), f"{resumed} senders of the library's resumed"
    if test in CREDIT_CASES:  # and for credit
        assert (credit > 20) == (native == "1"), f"{credit} resumed after a wait for credit"
    if test in RC_CASES:  # the card's completions go to the RTL through the library's RC loop
        assert (turns > 20) == (native == "1"), f"{turns} completions the library wrote on RC"
        if native == "1" and profile in RC_CASES[test]:
            assert waits and adopted, f"{waits} waits, taken over {adopted} times"
    if test in HELD_CASES:  # and writes that must wait for the link wait in the library,
        # those the model's RQ logic meets too, which it hands over
        assert (waited > 20) == (native == "1"), f"{waited} writes sent after a wait"
        assert (handed > 5) == (native == "1"), f"{handed} writes handed over"
    if test in DRAIN_CASES:  # the card's writes and reads leave RQ from the library's drain
        least = DRAIN_CASES[test] if native == "1" else (0, 0)
        assert (writes, reads) >= least and (native == "1" or writes + reads == 0), (
            f"{writes} writes sent and {reads} reads issued by the library's drain"
        )
    if test in BAR1_CASES:  # the GPU answers requests to its BAR1 in the library too
        answers = native == "1" and BAR1_CASES[test]
        assert bar1 > 20 if answers else bar1 == 0, f"{bar1} BAR1 requests the library answered"
    return log.read_text().splitlines()


# the GPU's relaxed-ordering writes pass others in the switch's queue where the library
# routes them too; the engine's chains of every length, whose reads and writes leave RQ
# from the library's drain, and reads the hard IP queues for completion credit, which
# the reads after them must not pass; the card's completions wait for the RC stream in
# the library's RC loop, which Python's takes over (a logger's level, a link down); the card's reads
# cross the switch in the library with the fault injector's read tracking there (its
# rules must still fire on their completions); the card's reads and writes of GPU
# memory, a revoked page among them
HOP_CASES = [
    *CASES,
    ("tb.tests.cocotb_engine", "test_chain_lengths"),
    ("tb.tests.cocotb_engine", "test_reads_queued_for_completion_credit"),
    ("tb.tests.cocotb_engine", "test_rc_backlog_handed_over"),
    ("tb.tests.cocotb_recovery", "test_link_down_with_completions_waiting"),
    ("tb.tests.cocotb_faults", "test_completion_faults"),
    ("tb.tests.cocotb_gpu_peer", "test_peer_read_write_bar1"),
    ("tb.tests.cocotb_gpu_peer", "test_revoked_page_ur_and_dropped_write"),
]
# the cases whose traffic queues at a switch port's egress, where the arbitration waits
# for the wire as a sender of the library's own (resumed by the library after the time
# step's work, or from cocotb's event loop in its turn where Python has work then)
WAIT_CASES = {
    "test_concurrent_h2c_c2h",
    "test_h2c2h_four_combinations",
    "test_gpu_data_then_doorbell_in_order",
    "test_random_chains",
}
# of those the cases whose arbitration waits for credit there too (the link's flow-control
# updates come back behind a busy wire), and resumes when an update comes
CREDIT_CASES = {
    "test_concurrent_h2c_c2h",
    "test_h2c2h_four_combinations",
    "test_driver_on_intx_moves_data",
}
# the cases whose completions for the card the library's RC loop writes for the RTL
# (tb/dp/rcloop.cpp), and the profiles on which it waits for the RC stream there and
# Python's RC loop takes it over as it waits (the RC transactor's buffer holds fewer
# completions than the hard IP's receive buffer on the picoevb)
RC_CASES = {
    "test_concurrent_h2c_c2h": (),
    "test_h2c2h_four_combinations": (),
    "test_rc_backlog_handed_over": ("picoevb",),
    "test_link_down_with_completions_waiting": ("picoevb",),  # (taken over at the reset)
}
# the cases whose card writes and reads leave RQ from the library's drain of the hard
# IP's sinks (tb/dp/rqdrain.cpp), at least so many of each, and with Python's RQ logic
# taking over from it where its frames are Python's (a read that must queue behind the
# model's non-posted requests, and the frames after it)
DRAIN_CASES = {
    "test_chain_lengths": (300, 1000),
    "test_h2c2h_four_combinations": (20, 100),
}
# the cases whose card writes must wait for the link (the picoevb's link is slower than
# its stream), held in the library with the frames after them until they go, where the
# library's drain meets them or the model's RQ logic does (after a read it took)
HELD_CASES = {
    "test_concurrent_h2c_c2h",
}
# the cases with peer traffic to the GPU's BAR1, and whether the library answers it
# (tb/dp/gpu.cpp; the pins' statistics the test reads are among what it counts for the
# model): every access to a revoked page is a fault the model records, Python's
BAR1_CASES = {
    "test_h2c2h_four_combinations": True,
    "test_peer_read_write_bar1": True,
    "test_revoked_page_ur_and_dropped_write": False,
}


@pytest.mark.parametrize("module, test", HOP_CASES, ids=[t for _, t in HOP_CASES])
def test_the_librarys_hops_give_the_same_arrivals(
    module: str, test: str, sim: str, profile: str, tmp_path
):
    python = _arrivals(module, test, sim, profile, "0", tmp_path / "python.log")
    native = _arrivals(module, test, sim, profile, "1", tmp_path / "native.log")
    assert len(python) > 100, f"a log of {len(python)} arrivals proves nothing"
    for i, (a, b) in enumerate(zip(python, native, strict=False)):
        assert a == b, f"arrival {i + 1} differs:\n  python hops {a[:160]}\n  library   {b[:160]}"
    assert len(python) == len(native), f"{len(python)} and {len(native)} arrivals"


@pytest.mark.verilator
def test_the_librarys_hops_give_the_same_arrivals_on_verilator(profile: str, tmp_path):
    module, test = CASES[0]
    python = _arrivals(module, test, "verilator", profile, "0", tmp_path / "python.log")
    native = _arrivals(module, test, "verilator", profile, "1", tmp_path / "native.log")
    assert len(python) > 100 and python == native


def test_a_regress_seed_gives_the_same_traffic_and_arrivals(sim: str, profile: str, tmp_path):
    """A seed of the chains regression (random chains, faults armed on some of them:
    their TLPs take Python's path at the hops the injectors sit in front of): the same
    trace on the Python and the compiled path, and the same arrivals with the library's
    hops and with every hop in Python."""
    env = regress_env("chains", 3, 6, "datapath-seed3", big=False)
    module, test = MODULE, TESTCASES["chains"]
    traced = [_trace(module, test, sim, profile, path, env) for path in (PYTHON, COMPILED)]
    assert len(traced[0]) > 100 and traced[0] == traced[1]
    python = _arrivals(module, test, sim, profile, "0", tmp_path / "python.log", env)
    native = _arrivals(module, test, sim, profile, "1", tmp_path / "native.log", env)
    assert len(python) > 100 and python == native


def test_the_bench_times_the_same_on_both_paths(sim: str, profile: str, tmp_path):
    """The engine bench's figures on the compiled path, its requests and the card's
    completions counted by the library's meter where it takes them
    (tb.env.native.meter, meter_completions), are the Python path's, observed in Python:
    the same streaming and run times, bytes and TLP sizes."""
    cases = [{"dir": d, "desc": 4 * 1024, "total": 16 * 1024} for d in ("H2C", "C2H")]
    rows = {}
    for path in (PYTHON, COMPILED):
        out = tmp_path / f"{path}.json"
        env = {"BENCH_CASES": json.dumps(cases), "BENCH_OUT": str(out), DATAPATH_ENV: path}
        results = runner.run(
            "bench_engine", sim=sim, profile=profile, module="tb.bench.engine", extra_env=env
        )
        assert not runner.failures(results), runner.failure_messages(results)
        rows[path] = json.loads(out.read_text())
        log = (results.parent / "sim.log").read_text()
        took = re.findall(r"(\d+) completions the card took", log)
        # the card's completions (H2C's data) are the library's, and its meter counts them
        assert (sum(map(int, took)) > 100) == (path == COMPILED), took
    assert [r["metered"] for r in rows[PYTHON]] == [False, False]
    assert [r["metered"] for r in rows[COMPILED]] == [True, True]
    keys = ("descriptors", "run_ns", "stream_ns", "stream_bytes", "sim_ns", "tlp_header")
    for a, b in zip(rows[PYTHON], rows[COMPILED], strict=True):
        assert {k: a[k] for k in (*keys, "tlp_payload_max")} == {
            k: b[k] for k in (*keys, "tlp_payload_max")
        }, (a, b)
        assert a["stream_bytes"] > 0
