"""cocotb tests of recovery: the driver model never returns from a DMA ioctl while the
engine could still touch its buffers. A channel that does not go idle after it was
stopped is recovered by a function-level reset (the RTL's FLR handling, the hard-IP
model's FLR, Linux's pci_reset_function); completions that arrive after the reset land
nowhere; the next ioctl works."""

from __future__ import annotations

import errno

import cocotb
from cocotb.triggers import RisingEdge, Timer
from cocotbext.pcie.core.caps import PciCapId

from driver_model import regs
from driver_model.picoevb import DriverConfig
from driver_model.regs import Target
from tb.env.backdoor import read_card_ram
from tb.env.faults import FaultRule, UpRule
from tb.env.harness import GUARD, Rig, bring_up, hold_rc_until_waiting, pattern
from tb.env.platform import (
    PCI_COMMAND,
    PCI_COMMAND_MEMORY,
    PCI_EXP_DEVCTL2,
    PCI_EXP_DEVCTL2_COMP_TMOUT_DIS,
)
from tb.env.userbuf import Side, expect_errno


async def engine_idle(rig: Rig) -> None:
    """Both channels report not busy, read straight from the registers."""
    for target in (Target.H2C, Target.C2H):
        status = await rig.tb.dma_read32(regs.block_base(target) + regs.CH_STATUS)
        assert not status & regs.Stat.BUSY, f"{target.name} still busy: {status:#x}"


async def round_trip(rig: Rig, length: int, seed: int, what: str) -> None:
    """H2C then C2H of ``length`` bytes through card RAM offset 0, checked."""
    data = pattern(length, seed)
    src = Side(rig, length, False, fill=data)
    dst = Side(rig, length, False, skew=5)
    await rig.fd.h2c_dma(await src.pin(), 0, length)
    await rig.fd.c2h_dma(await dst.pin(), 0, length)
    dst.expect(data, what)


async def wait_for_reads(rig: Rig, limit_ns: float = 100_000) -> None:
    """Until the FPGA has a read outstanding at the hard IP (bounded)."""
    waited = 0.0
    while not any(rig.tb.dev.active_request):
        assert waited < limit_ns, "the FPGA issued no read"
        await Timer(100, "ns")
        waited += 100


async def h2c_in_flight(rig: Rig, kib: int, seed: int):
    """Start an H2C ioctl of ``kib`` KiB (at most the card RAM) from a host buffer of
    pattern ``seed`` and return once its reads are out: (the ioctl's task, its bytes)."""
    length = min(kib << 10, rig.drv.fpga_ram_size)
    data = pattern(length, seed)
    src = Side(rig, length, False, fill=data)
    task = cocotb.start_soon(rig.fd.h2c_dma(await src.pin(), 0, length))
    await wait_for_reads(rig)
    return task, data


async def card_stays(rig: Rig) -> None:
    """The card RAM does not change in the 20 us after an ioctl returned."""
    card = card_image(rig)
    await Timer(20, "us")
    assert card_image(rig) == card, "the card RAM changed after the ioctl returned"


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_bus_master_off_mid_h2c(dut):
    """Bus mastering cleared in the middle of a 64 KiB H2C (the issue's reproduction):
    the hard IP sends none of the engine's reads from then on, tracks them, and ends
    each by its completion timeout; the engine stops with a read error; the ioctl
    returns EIO only once the engine is idle, without a function reset. With bus
    mastering back, the next transfers work."""
    rig = await bring_up(dut)
    tb = rig.tb
    task, data = await h2c_in_flight(rig, 64, 3)
    length = len(data)
    await tb.pci.clear_master()
    await expect_errno(task, errno.EIO, "H2C with bus mastering cleared")
    assert tb.dev.bme_dropped > 0, "no read was refused by the hard IP"
    assert tb.dev.cpl_timeouts >= tb.dev.bme_dropped, "a refused read did not time out"
    assert not any(tb.dev.active_request), "the ioctl returned with reads outstanding"
    await engine_idle(rig)
    assert rig.drv.resets == 0, "the engine drained by itself: no reset was needed"
    await tb.pci.set_master()
    await round_trip(rig, length, 4, "after bus mastering came back")


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_stuck_engine_function_reset(dut):
    """A C2H whose descriptor read never completes (the completion is held, and the
    completion timeout disabled in Device Control 2): the ioctl times out, the channel
    does not drain after it is stopped, the driver resets the function (FLR: the RTL
    confirms, config state restored, engine set up again) before it returns ETIMEDOUT.
    The held completion then reaches the FPGA: nothing lands in the buffer the ioctl
    gave back. The next transfers work, interrupts included."""
    cfg = DriverConfig(timeout_base_ns=40_000, timeout_ns_per_byte=1, stop_drain_ns=20_000)
    rig = await bring_up(dut, cfg)
    tb, fd = rig.tb, rig.fd
    await round_trip(rig, 4096, 5, "before the fault")
    exp = tb.pci.get_capability_offset(PciCapId.EXP)
    devctl2 = await tb.pci.config_read_word(exp + PCI_EXP_DEVCTL2)
    await tb.pci.config_write_word(exp + PCI_EXP_DEVCTL2, devctl2 | PCI_EXP_DEVCTL2_COMP_TMOUT_DIS)
    length = 16 << 10
    buf = Side(rig, length, False)
    rule = tb.faults.add(FaultRule("hold", target="host"))
    msis = sum(tb.msi_count)
    await expect_errno(fd.c2h_dma(await buf.pin(), 0, length), errno.ETIMEDOUT, "stuck C2H")
    assert rule.fired == 1 and tb.faults.held, "the descriptor completion was not held"
    assert rig.drv.resets == 1 and rig.platform.function_resets == 1
    assert tb.dev.flr_count == 1 and tb.dev.flr_unconfirmed == 0, "the RTL did not confirm"
    await engine_idle(rig)
    tb.faults.clear()
    # the buffer is the caller's again: it writes it, then the late completion arrives
    fill = bytes([GUARD ^ 0x5A]) * buf.total
    rig.process.write(buf.base, fill)
    assert await tb.faults.release_held() >= 1
    await Timer(20, "us")
    assert rig.process.read(buf.base, buf.total) == fill, "a byte landed after the reset"
    await engine_idle(rig)
    # the reset restored the Device Control 2 the driver had (timeout still disabled)
    assert await tb.pci.config_read_word(exp + PCI_EXP_DEVCTL2) == (
        devctl2 | PCI_EXP_DEVCTL2_COMP_TMOUT_DIS
    )
    await tb.pci.config_write_word(exp + PCI_EXP_DEVCTL2, devctl2)
    await round_trip(rig, length, 6, "after the function reset")
    assert sum(tb.msi_count) > msis, "no interrupt after the reset"
    assert not rig.drv.dead


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_register_read_faults(dut):
    """The host's register reads answered with UR or CA, or not answered at all (the
    completion lost): the CPU reads all ones; the driver fails the ioctl with EIO once
    it has found the engine idle (no function reset needed), and the next one works."""
    rig = await bring_up(dut)
    tb, fd = rig.tb, rig.fd
    for kind in ("ur", "ca", "drop"):
        src = Side(rig, 4096, False, fill=pattern(4096, 40))
        failed = rig.platform.failed_reads
        # the driver's third read of the ioctl: its status check after the interrupt
        rule = tb.up_faults.add(UpRule(kind, "completion", skip=2))
        await expect_errno(fd.h2c_dma(await src.pin(), 0, 4096), errno.EIO, f"{kind} read")
        tb.up_faults.clear()
        assert rule.fired == 1, f"{kind}: the fault did not fire"
        assert rig.platform.failed_reads == failed + 1, f"{kind}: the read did not fail"
        await engine_idle(rig)
        await round_trip(rig, 4096, 41, f"after a {kind} register read")
    assert rig.drv.resets == 0


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_memory_space_off_mid_dma(dut):
    """Memory Space Enable cleared in the middle of an H2C: the transfer itself goes on
    (the enable governs only the function's BARs) and interrupts; the driver's register
    reads get UR (all ones) until it is set again, and the ioctl fails with EIO after
    the engine is found idle. Nothing else changed on the card; the next ioctl works."""
    rig = await bring_up(dut)
    tb, fd = rig.tb, rig.fd
    msis = sum(tb.msi_count)
    task, data = await h2c_in_flight(rig, 32, 42)
    length = len(data)
    command = await tb.pci.config_read_word(PCI_COMMAND)
    await tb.pci.config_write_word(PCI_COMMAND, command & ~PCI_COMMAND_MEMORY)
    waited = 0
    while sum(tb.msi_count) == msis:
        assert waited < 2000, "no interrupt with memory space disabled"
        await Timer(1, "us")
        waited += 1
    await Timer(5, "us")
    await tb.pci.config_write_word(PCI_COMMAND, command)
    await expect_errno(task, errno.EIO, "H2C with memory space disabled")
    assert rig.platform.failed_reads >= 1
    await engine_idle(rig)
    back = Side(rig, length, False)
    await fd.c2h_dma(await back.pin(), 0, length)
    back.expect(data, "the H2C's data")
    await round_trip(rig, 4096, 43, "after memory space came back")
    assert rig.drv.resets == 0


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_function_reset_from_outside(dut):
    """A function-level reset asked for by someone else (``echo 1 > .../reset``) in the
    middle of a 32 KiB H2C: the driver's reset_prepare aborts the transfer, the ioctl
    returns EIO only after the reset has ended (and the engine with it), reset_done sets
    the engine up again, the card RAM does not change afterwards, and the next ioctl
    works, interrupts included."""
    rig = await bring_up(dut)
    tb = rig.tb
    task, data = await h2c_in_flight(rig, 32, 50)
    length = len(data)
    reset = cocotb.start_soon(rig.platform.pci_reset_function())
    await expect_errno(task, errno.EIO, "H2C under a function reset")
    assert reset.done() and reset.result() == 0, "the ioctl returned before the reset ended"
    assert tb.dev.flr_count == 1 and tb.dev.flr_unconfirmed == 0
    assert rig.drv.resets == 0 and not rig.drv.dead, "the driver reset it again"
    await engine_idle(rig)
    await card_stays(rig)
    msis = sum(tb.msi_count)
    await round_trip(rig, length, 51, "after the reset")
    assert sum(tb.msi_count) > msis


def card_image(rig: Rig) -> bytes:
    """The card RAM, read through the backdoor."""
    lanes = rig.tb.profile.width // 8
    return bytes(read_card_ram(rig.tb.dut, rig.drv.fpga_ram_size, lanes))


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_hot_reset_mid_transfer(dut):
    """A hot reset of the card (Secondary Bus Reset on the bridge above it, Linux's
    pci_reset_bus) in the middle of a 32 KiB H2C: the hard IP takes the link down and
    holds the user logic in reset, losing what was in flight; the ioctl returns EIO only
    after the reset, the config state is restored, the driver sets the engine up again
    (MPS and MRRS included), the card does not change afterwards and the next ioctl
    works."""
    rig = await bring_up(dut)
    tb = rig.tb
    task, data = await h2c_in_flight(rig, 32, 52)
    length = len(data)
    reset = cocotb.start_soon(rig.platform.pci_reset_bus())
    await expect_errno(task, errno.EIO, "H2C under a hot reset")
    assert reset.done() and reset.result() == 0, "the ioctl returned before the reset ended"
    assert tb.dev.hot_resets == 1 and not tb.dev.link_down
    assert rig.platform.bus_resets == 1 and rig.drv.resets == 0 and not rig.drv.dead
    f0 = tb.dev.functions[0].pcie_cap
    assert 128 << f0.max_payload_size == tb.profile.mps, "MPS not restored"
    await engine_idle(rig)
    await card_stays(rig)
    await round_trip(rig, length, 53, "after the hot reset")


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_link_down_mid_transfer(dut):
    """The card's link goes down for 20 us in the middle of a 32 KiB H2C (nobody asked:
    a surprise). The hard IP holds the user logic in reset and the function loses its
    config state; what was in flight is lost. Error recovery (as AER/DPC does it) gives
    the driver reset_prepare, restores the state saved at probe once the link is back,
    and reset_done sets the engine up again; the ioctl returns EIO only then, and the
    next one works."""
    rig = await bring_up(dut)
    tb = rig.tb
    task, data = await h2c_in_flight(rig, 32, 54)
    length = len(data)
    await tb.dev.link_down_for(20_000)
    await recovers_from_link_loss(rig, task, length, 55)


async def recovers_from_link_loss(rig: Rig, task, length: int, seed: int) -> None:
    """After a link loss in the middle of the H2C ioctl ``task``: error recovery (as
    AER/DPC does it) restores the function once the link is back, the ioctl returns EIO
    only then, the engine is idle, and an ioctl of ``length`` bytes of pattern ``seed``
    works."""
    assert not task.done(), "the ioctl returned while the link was down"
    assert await rig.platform.pcie_link_recovery() == 0
    await expect_errno(task, errno.EIO, "H2C across a link loss")
    assert rig.platform.link_recoveries == 1 and not rig.drv.dead
    await engine_idle(rig)
    await round_trip(rig, length, seed, "after the link came back")


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_link_down_with_completions_waiting(dut):
    """The link goes down for 20 us in the middle of a 32 KiB H2C while the RTL has
    taken no completion for a while, so that completions wait in the hard-IP model for
    the RC transactor to take them (on the picoevb: its buffer holds fewer than the hard
    IP's receive buffer): what waits is lost with the rest in flight, and recovery goes
    as in test_link_down_mid_transfer; once RC flows again the next ioctl works."""
    rig = await bring_up(dut)
    dev = rig.tb.dev
    rc = dev.rc_source
    length = min(32 << 10, rig.drv.fpga_ram_size)
    src = Side(rig, length, False, fill=pattern(length, 56))
    taken = rc._taken()
    task = cocotb.start_soon(rig.fd.h2c_dma(await src.pin(), 0, length))
    await hold_rc_until_waiting(dev, taken)
    await dev.link_down_for(20_000)
    rc.clear_pause_generator()
    rc.pause = False
    await recovers_from_link_loss(rig, task, length, 57)


async def c2h_mid_packet(rig: Rig, kib: int, seed: int):
    """Fill the card RAM with pattern ``seed`` and start a C2H ioctl of ``kib`` KiB to a
    host buffer; return in a clock where the engine is in the middle of a write request
    on RQ (a beat taken, not the last): (the ioctl's task, the destination, its bytes)."""
    length = min(kib << 10, rig.drv.fpga_ram_size)
    data = pattern(length, seed)
    src = Side(rig, length, False, fill=data)
    await rig.fd.h2c_dma(await src.pin(), 0, length)
    dst = Side(rig, length, False, skew=3)
    task = cocotb.start_soon(rig.fd.c2h_dma(await dst.pin(), 0, length))
    dut, clk = rig.tb.dut, rig.tb.dev.user_clk
    started = False
    for _ in range(200_000):
        await RisingEdge(clk)
        beat = int(dut.m_axis_rq_tvalid.value) and int(dut.m_axis_rq_tready.value)
        if beat and started and not int(dut.m_axis_rq_tlast.value):
            # a write's payload beat: the packet's header went out in an earlier beat
            return task, dst, data
        if beat and int(dut.m_axis_rq_tlast.value):
            started = True  # count from a packet boundary, so the next beat is a header
    raise AssertionError("the C2H sent no multi-beat write")


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_hot_reset_mid_c2h_packet(dut):
    """A hot reset in the middle of a C2H write request on RQ (a long write, cut between
    its beats): the hard IP drops the part it took, so nothing from before the reset is
    joined to what the engine sends after it; the ioctl returns EIO, the host buffer does
    not change after that, and the next transfers both ways are exact."""
    rig = await bring_up(dut)
    task, dst, _data = await c2h_mid_packet(rig, 32, 56)
    reset = cocotb.start_soon(rig.platform.pci_reset_bus())
    await expect_errno(task, errno.EIO, "C2H under a hot reset")
    assert reset.done() and reset.result() == 0
    assert rig.tb.dev.hot_resets == 1 and not rig.tb.dev.link_down
    after = dst.read_all()
    await Timer(20, "us")
    assert dst.read_all() == after, "a write landed in the buffer after the ioctl returned"
    await engine_idle(rig)
    await round_trip(rig, 32 << 10, 57, "after the hot reset")


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_link_down_mid_c2h_packet(dut):
    """The link goes down for 20 us in the middle of a C2H write request on RQ: as after
    a hot reset, the partial request is dropped, recovery restores the function, the
    ioctl returns EIO and the next transfers both ways are exact."""
    rig = await bring_up(dut)
    task, dst, _data = await c2h_mid_packet(rig, 32, 58)
    await rig.tb.dev.link_down_for(20_000)
    assert await rig.platform.pcie_link_recovery() == 0
    await expect_errno(task, errno.EIO, "C2H across a link loss")
    after = dst.read_all()
    await Timer(20, "us")
    assert dst.read_all() == after, "a write landed in the buffer after the ioctl returned"
    await engine_idle(rig)
    await round_trip(rig, 32 << 10, 59, "after the link came back")
