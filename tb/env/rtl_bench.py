"""What the RTL modules' benches (tb/tests/rtl) share: a module's clock started and its
reset held with every input at rest."""

from __future__ import annotations

from collections.abc import Iterable

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

PERIOD_NS = 4
RESET_CYCLES = 3


async def start(dut, inputs: Iterable[str], reset: str = "rst") -> None:
    """Start ``dut.clk``, and hold the reset (``dut.rst``, or the input ``reset`` names)
    high for a few clocks with each of ``inputs`` at 0; returns with it released."""
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
    rst = getattr(dut, reset)
    rst.value = 1
    for name in inputs:
        getattr(dut, name).value = 0
    for _ in range(RESET_CYCLES):
        await RisingEdge(dut.clk)
    rst.value = 0
