"""What the runner (tb/flow/runner/) sets up for the Python inside the simulator."""

from __future__ import annotations

import logging
import sys

import cocotb
import cocotbext.pcie.core.tlp
import numpy

from tb import models
from tb.env import backdoor, harness

REWRITTEN = "@py_builtins"  # the name pytest's assertion rewriting imports into a module


@cocotb.test()
async def test_the_simulators_python(dut):
    """Assertions are rewritten in the test module and the testbench, not in numpy or
    cocotbext-pcie; bytecode is cached (under the build root, or the user's prefix)."""
    assert REWRITTEN in globals(), "the test module's assertions were not rewritten"
    assert REWRITTEN in vars(harness), "the testbench's assertions were not rewritten"
    for theirs in (numpy, cocotbext.pcie.core.tlp):
        assert REWRITTEN not in vars(theirs), f"{theirs.__name__} was rewritten"
    assert sys.pycache_prefix, "no bytecode cache for the simulator's Python"


@cocotb.test()
async def test_gpi_debug_messages_stay_in_c(dut):
    """cocotb 2.1 leaves its C side's GPI log level at its default, so the debug message
    of every handle the simulator makes goes to Python to be dropped; after
    ``tb.models.install()`` (which the system builder calls first) the C side drops them."""
    gpi = logging.getLogger("gpi")
    asked = []
    gpi.isEnabledFor = lambda level: asked.append(level) or logging.Logger.isEnabledFor(gpi, level)
    try:
        mem = backdoor.card(dut).card_ram_inst.mem
        for i in range(64):
            mem._handle.get_handle_by_index(i)
        before = len(asked)
        models.install()
        for i in range(64, 128):
            mem._handle.get_handle_by_index(i)
    finally:
        del gpi.isEnabledFor
    assert before >= 64, f"{before} debug messages for 64 handles before (cocotb changed?)"
    assert len(asked) == before, f"{len(asked) - before} messages reached Python after"
