"""What the runner (tb/runner.py) sets up for the Python inside the simulator."""

from __future__ import annotations

import sys

import cocotb
import cocotbext.pcie.core.tlp
import numpy

from tb.env import harness

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
