"""The compiled data path against the Python one (``$PEVB_DATAPATH``, tb/dp): the same
cocotb tests run both ways, and the two TLP traces are the same, TLP by TLP, times
included, and so are the results. What the compiled path covers is in tb/dp."""

from __future__ import annotations

import json

import pytest

from tb import runner
from tb.dp import COMPILED, DATAPATH_ENV, PYTHON
from tests.sim import plan

# tests that move data both ways through the fabric, with the GPU's BAR1 among the
# targets (the engine's concurrent pair; the driver's H2C2H through GPU memory), the
# GPU's writes past a congested link with relaxed ordering on and off (the switch's
# queues and passing), INTx messages queued at the switch beside the data, and
# malformed completions the protocol checker must name (the library's checker on the
# compiled path: the test asserts what it names)
CASES = [
    ("tb.tests.cocotb_engine", "test_concurrent_h2c_c2h"),
    ("tb.tests.cocotb_driver", "test_h2c2h_four_combinations"),
    ("tb.tests.cocotb_axib", "test_gpu_data_then_doorbell_in_order"),  # on its design
    ("tb.tests.cocotb_intx", "test_driver_on_intx_moves_data"),
    ("tb.tests.cocotb_faults", "test_malformed_completions"),
]


def _trace(module: str, test: str, sim: str, profile: str, path: str) -> list[dict]:
    name = module.rsplit(".", 1)[1]
    overrides = next(iter(plan.BUILDS.get(name, {None: None}).values()))
    results = runner.run(
        test,
        sim=sim,
        profile=profile,
        module=module,
        trace=True,
        extra_env={DATAPATH_ENV: path},
        toplevel=plan.TOPLEVELS.get(name, runner.TOPLEVEL),
        overrides=overrides,
    )
    failed = runner.failures(results)
    assert not failed, f"{failed} on the {path} path: {runner.failure_messages(results)}"
    said = "compiled data path: the fabric's calendar and links in libpevb_dp-"
    assert (said in (results.parent / "sim.log").read_text()) == (path == COMPILED)
    with open(results.parent / "tlp_trace.jsonl") as f:
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
