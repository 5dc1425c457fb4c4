"""The card's AXI4-Stream channel ports (XDMA's names, ``m_axis_h2c_<signal>_<n>`` and
``s_axis_c2h_<signal>_<n>``) as cocotbext-axi buses, for sinks and sources standing in
for user logic."""

from __future__ import annotations

import cocotb
from cocotb.triggers import RisingEdge
from cocotb_bus.bus import Bus
from cocotbext.axi import AxiStreamBus, AxiStreamSink, AxiStreamSource

from driver_model.regs import Target

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
    ``user_clk``/``user_reset``, or the XDMA drop-in's ``axi_aclk``/``axi_aresetn``.

    The clock is the signal the hard-IP model drives: where ``dut`` holds the hard-IP
    port (the drop-in, the transactor model's card), the port's ``user_clk``, of which
    ``axi_aclk`` and the card's ``user_clk`` are copies. Verilator computes a copy in the
    same evaluation as the flops the edge clocks, so a model woken by the copy's edge
    reads the values after the edge, one cycle late (a stream sink misses the first
    beat, an AXI memory never answers); woken by the driven signal it reads them before,
    as Icarus gives them for either."""
    hip = getattr(dut, "hip", None)
    if hasattr(dut, "axi_aresetn"):
        # (the drop-in also has the hard IP's user_reset inside, which dma_bridge_resetn
        # leaves alone: the user side's reset is axi_aresetn)
        clk, rst, level = dut.axi_aclk, dut.axi_aresetn, False
    else:
        clk, rst, level = dut.user_clk, dut.user_reset, True
    return (clk if hip is None else hip.user_clk), rst, level


def h2c_sink(dut, n: int) -> AxiStreamSink:
    """A sink on H2C stream channel ``n``."""
    clk, rst, level = clock_and_reset(dut)
    return AxiStreamSink(XdmaStreamBus(dut, "m_axis_h2c", n), clk, rst, level)


def c2h_source(dut, n: int) -> AxiStreamSource:
    """A source on C2H stream channel ``n``."""
    clk, rst, level = clock_and_reset(dut)
    return AxiStreamSource(XdmaStreamBus(dut, "s_axis_c2h", n), clk, rst, level)


class StatusPorts:
    """A monitor of the XDMA status ports (``h2c_sts_<n>``, ``c2h_sts_<n>``) of the
    channels built: per (direction, channel), :attr:`counts` holds the descriptor-done
    (``desc``) and packet-done (``pkt``) pulses seen, and the cycles with Run (``run``)
    and busy (``busy``)."""

    def __init__(self, dut, clk, h2c_channels: int, c2h_channels: int) -> None:
        self.clk = clk
        self.ports = {
            (d, n): getattr(dut, f"{'h2c' if d == Target.H2C else 'c2h'}_sts_{n}")
            for d, count in ((Target.H2C, h2c_channels), (Target.C2H, c2h_channels))
            for n in range(count)
        }
        self.counts = {key: {"desc": 0, "pkt": 0, "run": 0, "busy": 0} for key in self.ports}
        cocotb.start_soon(self._run())

    async def _run(self) -> None:
        while True:
            await RisingEdge(self.clk)
            for key, port in self.ports.items():
                v = port.value
                if not v.is_resolvable:
                    continue
                v = int(v)
                c = self.counts[key]
                c["desc"] += v >> 3 & 1
                c["pkt"] += v >> 4 & 1
                c["run"] += v >> 6 & 1
                c["busy"] += v & 1
