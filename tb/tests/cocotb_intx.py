"""cocotb tests of the legacy interrupt (INTx) on the picoevb card: the Interrupt Pin, the
level the engine and the mailbox raise with MSI and MSI-X off, the Assert_INTA and
Deassert_INTA messages through the hard-IP model and the switch to the root complex's
line, Interrupt Disable and Interrupt Status, and the driver model moving data on INTx
(as NVIDIA's picoevb-rdma takes its interrupt)."""

from __future__ import annotations

import cocotb
from cocotb.triggers import Timer

from driver_model import regs
from driver_model.picoevb import DriverConfig
from driver_model.regs import Target
from tb.env.harness import bring_up, pattern
from tb.env.system import TB
from tb.env.userbuf import Side

PCI_COMMAND = 0x04
PCI_STATUS = 0x06
PCI_INTERRUPT_PIN = 0x3D
PCI_COMMAND_INTX_DISABLE = 1 << 10
PCI_STATUS_INTERRUPT = 1 << 3


def _messages(records: list[dict], link: str) -> list[str]:
    return [r["type"] for r in records if r["link"] == link and "INT" in r["type"]]


async def _until(tb: TB, what, want: bool, ns: int = 20_000) -> None:
    """Wait (bounded) until ``what()`` is ``want``."""
    for _ in range(ns // 100):
        if bool(what()) == want:
            return
        await Timer(100, "ns")
    raise AssertionError(f"not {want} within {ns} ns")


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_intx_level_disable_and_status(dut):
    """The mailbox raises INTA while it holds values (MSI off): Assert_INTA from the card,
    the switch's own Assert upstream, the root complex's line up and Interrupt Status
    set; Interrupt Disable sends Deassert and leaves Interrupt Status, clearing it sends
    Assert again; emptying the mailbox drops the line. With MSI enabled no INTx goes."""
    tb = TB(dut)
    records: list[dict] = []
    from tb.debug.trace import enable_trace

    enable_trace(tb, records.append)
    await tb.init(bind=False)
    pci = tb.pci
    assert await pci.config_read_byte(PCI_INTERRUPT_PIN) == 1, "Interrupt Pin: INTA"
    await pci.enable_device()
    await pci.set_master()
    # the mailbox's user interrupt enabled; two values queued
    await tb.dma_write32(regs.irq_reg(regs.IRQ_USER_INT_EN_W1S), 1 << regs.MAILBOX_IRQ)
    line = lambda: tb.intx.level(tb.intx_line)  # noqa: E731
    assert not line()
    await tb.user_write32(regs.USER_MAILBOX, 0x11)
    await tb.user_write32(regs.USER_MAILBOX, 0x22)
    await _until(tb, line, True)
    status = await pci.config_read_word(PCI_STATUS)
    assert status & PCI_STATUS_INTERRUPT, f"Interrupt Status clear: {status:#x}"
    # Interrupt Disable: the wire drops on the link, the function still has it pending
    cmd = await pci.config_read_word(PCI_COMMAND)
    await pci.config_write_word(PCI_COMMAND, cmd | PCI_COMMAND_INTX_DISABLE)
    await _until(tb, line, False)
    assert await pci.config_read_word(PCI_STATUS) & PCI_STATUS_INTERRUPT
    await pci.config_write_word(PCI_COMMAND, cmd)
    await _until(tb, line, True)
    # one value read: still pending; the last: the line drops
    assert await tb.user_read32(regs.USER_MAILBOX) == 0x11
    await Timer(2_000, "ns")
    assert line(), "the mailbox still holds a value"
    assert await tb.user_read32(regs.USER_MAILBOX) == 0x22
    await _until(tb, line, False)
    assert not await pci.config_read_word(PCI_STATUS) & PCI_STATUS_INTERRUPT
    expect = ["Assert_INTA", "Deassert_INTA", "Assert_INTA", "Deassert_INTA"]
    assert _messages(records, "fpga") == expect, _messages(records, "fpga")
    if tb.switch is not None:
        # the switch's upstream port sends its own, the card's INTA rotated by the device
        # number of the switch port the card hangs from (the PCI-to-PCI bridge swizzle)
        pin = "ABCD"[(tb.links.links["fpga"].upper.parent.device_num) % 4]
        assert tb.intx_line[1] == "ABCD".index(pin)
        up = [m.replace("INTA", f"INT{pin}") for m in expect]
        assert _messages(records, "switch") == up, _messages(records, "switch")
        ups = [r for r in records if r["link"] == "switch" and "INT" in r["type"]]
        assert {r["req"] for r in ups} == {str(tb.switch.upstream_bridge.pcie_id)}
    assert tb.dev.intx_messages == 4
    # MSI on: the card interrupts with messages only
    nvec = await tb.enable_msi(1, 1)
    assert nvec == 1
    before = tb.msi_count[0]
    await tb.user_write32(regs.USER_MAILBOX, 0x33)
    await _until(tb, lambda: tb.msi_count[0] > before, True)
    assert not line() and tb.dev.intx_messages == 4, "INTx while MSI is on"
    assert await tb.user_read32(regs.USER_MAILBOX) == 0x33


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_driver_on_intx_moves_data(dut):
    """The driver model on the legacy interrupt (as picoevb-rdma): H2C2H host -> card ->
    host longer than the card RAM, both channels on the one shared line, each run woken
    by it; the mailbox's reader woken by it too; no MSI, the line down at the end, one
    Deassert per Assert."""
    rig = await bring_up(dut, DriverConfig(interrupts="intx"))
    tb, drv = rig.tb, rig.drv
    assert drv.intx and drv.nvec == 1
    f = tb.dev.functions[0]
    assert not f.msi_cap.msi_enable and not f.interrupt_disable
    length = drv.fpga_ram_size + 0x1234 + 12
    data = pattern(length, 7)
    src = Side(rig, length, False, skew=3, fill=data)
    dst = Side(rig, length, False, skew=0x40 + 1)
    s, d = await src.pin(), await dst.pin()
    before = len(drv.runs)
    await rig.fd.h2c2h_dma(s, d, length)
    dst.expect(data, "H2C2H on INTx")
    runs = list(drv.runs)[before:]
    assert all(r.rc == 0 for r in runs) and len(runs) >= 4
    assert {r.direction for r in runs} == {Target.H2C, Target.C2H}
    assert tb.intx_count >= len(runs), f"{tb.intx_count} interrupts for {len(runs)} runs"
    assert sum(tb.msi_count) == 0
    # the mailbox: a value written by the card's user side wakes a reader on INTx
    reader = cocotb.start_soon(rig.fd.mailbox_read())
    await Timer(5_000, "ns")
    assert not reader.done(), "the mailbox is empty"
    await tb.user_write32(regs.USER_MAILBOX, 0xC0FFEE)
    assert await reader == 0xC0FFEE
    assert drv.mbox_irqs == 1
    await Timer(5_000, "ns")
    assert not tb.intx.level(tb.intx_line), "the line stayed asserted"
    asserts = tb.intx.counts["ASSERT_INTA"]
    assert asserts >= 1 and tb.intx.counts["DEASSERT_INTA"] == asserts
    assert tb.intx_storms == 0
