"""The XDMA drop-in in a Linux guest: the project's C driver binds to it by the Vivado
IP's default IDs (tb/guest/, guest/drivers/pevb), as it would to a board built with the
IP, and moves data through it into the user design's AXI memory and back.
"""

from __future__ import annotations

import os
from pathlib import Path

import cocotb
from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteRam, AxiRam

from tb.config.sources import ROOT
from tb.env.streams import clock_and_reset
from tb.env.system import TB
from tb.guest.boot import PEVB_KO
from tb.guest.bridge import GuestBridge
from tb.guest.card import FabricFunction
from tb.guest.uml import TOOLS, GuestOptions

SCRIPT = ROOT / "guest" / "tests" / "pevb-dma.sh"
MEM_SIZE = 1 << 20  # the user design's AXI memory, behind m_axi
AXIL_SIZE = 1 << 12  # its AXI4-Lite registers, behind the user BAR
RAM_SIZE_REG = 0x4  # where the design keeps its memory's size (as the picoevb card does)


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def test_guest_driver_on_dropin(dut):
    """The guest's PCI core finds the drop-in with Xilinx's IDs (10EE:90GL, class
    0x070001); pevb.ko binds by them, finds the DMA BAR by its identifiers (the user BAR
    before it), takes MSI-X where the build has it (``PEVB_GUEST_IRQ=MSI-X``: the
    guest programs the engine's own MSI-X table over MMIO) or MSI, and pevb-dma-test
    moves data host -> AXI memory -> host."""
    irq = os.environ.get("PEVB_GUEST_IRQ", "MSI")
    tb = TB(dut, hip=dut.hip)
    f0 = tb.dev.functions[0]
    assert f0.vendor_id == 0x10EE and f0.device_id >> 12 == 0x9, f"{f0.device_id:#x}"
    await tb.init(bind=False)
    # the user's design: its memory and its registers (out of reset, as the drop-in's
    # own tests make them)
    clk, rst, level = clock_and_reset(dut)
    AxiRam(AxiBus.from_prefix(dut, "m_axi"), clk, rst, level, size=MEM_SIZE)
    axil = AxiLiteRam(AxiLiteBus.from_prefix(dut, "m_axil"), clk, rst, level, size=AXIL_SIZE)
    axil.write_dword(RAM_SIZE_REG, MEM_SIZE)
    card = FabricFunction(tb.rc, tb.pci, "xdma_0")
    await card.probe()
    command = ["/bin/sh", str(SCRIPT), str(TOOLS), str(PEVB_KO), "-n", "8"]
    options = GuestOptions(command, time="shared")
    bridge = GuestBridge.on_tb(tb, card, options, Path.cwd())
    await bridge.start()
    status = await bridge.run(300)
    console = bridge.guest.console_text()
    assert status == 0, f"guest command failed ({status}):\n{bridge.guest.tail(60)}"
    assert f"1024 KiB card memory, {irq}\n" in console, bridge.guest.tail(60)
    assert "PASSED: 0 failure(s)" in console, bridge.guest.tail(60)
