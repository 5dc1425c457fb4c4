"""The card's AXI4-Stream channel ports (XDMA's names, ``m_axis_h2c_<signal>_<n>`` and
``s_axis_c2h_<signal>_<n>``) as cocotbext-axi buses, for sinks and sources standing in
for user logic."""

from __future__ import annotations

from cocotb_bus.bus import Bus
from cocotbext.axi import AxiStreamBus, AxiStreamSink, AxiStreamSource

_SIGNALS = ("tvalid", "tready", "tlast", "tkeep")


class XdmaStreamBus(AxiStreamBus):
    """The stream ports of channel ``n``: ``stem`` is ``m_axis_h2c`` or ``s_axis_c2h``
    (XDMA puts the channel number after the signal name, where cocotbext-axi expects
    a prefix)."""

    def __init__(self, entity, stem: str, n: int) -> None:
        Bus.__init__(
            self,
            entity,
            None,
            {"tdata": f"{stem}_tdata_{n}"},
            optional_signals={s: f"{stem}_{s}_{n}" for s in _SIGNALS},
        )


def clock_and_reset(dut) -> tuple[object, object, bool]:
    """The user-side clock and reset of ``dut`` and the reset's active level: the card's
    ``user_clk``/``user_reset``, or the XDMA drop-in's ``axi_aclk``/``axi_aresetn``."""
    if hasattr(dut, "axi_aresetn") and not hasattr(dut, "user_clk"):
        return dut.axi_aclk, dut.axi_aresetn, False
    return dut.user_clk, dut.user_reset, True


def h2c_sink(dut, n: int) -> AxiStreamSink:
    """A sink on H2C stream channel ``n``."""
    clk, rst, level = clock_and_reset(dut)
    return AxiStreamSink(XdmaStreamBus(dut, "m_axis_h2c", n), clk, rst, level)


def c2h_source(dut, n: int) -> AxiStreamSource:
    """A source on C2H stream channel ``n``."""
    clk, rst, level = clock_and_reset(dut)
    return AxiStreamSource(XdmaStreamBus(dut, "s_axis_c2h", n), clk, rst, level)
