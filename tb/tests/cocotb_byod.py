"""cocotb tests of a user's own RTL design around the XDMA drop-in
(``tb/verilog/byod_top.v``): a toplevel written against the Vivado IP, its own AXI4
memory (that sums the bytes written to it) behind the AXI4 master, its own registers and
doorbell interrupt behind the AXI4-Lite master. The runner compiles it with the engine
and the drop-in in place of the IP, configured by defines from the profile; the
testbench reaches the hard IP's interface inside the user's instance (``xdma_0_i.hip``).
"""

from __future__ import annotations

import cocotb

from driver_model.desc import Segment
from driver_model.xdma import XdmaUserIrq
from tb.env.harness import GUARD, Harness, check_ok, pattern, setup

# the user design's registers (AXI4-Lite, user BAR)
SCRATCH, BYTE_SUM, DOORBELL, ACKS = 0x0, 0x4, 0x8, 0xC
MEM_BYTES = 16 << 10


async def boot(dut) -> Harness:
    """The TB on the hard-IP port inside the user's IP instance."""
    return await setup(dut, hip=dut.xdma_0_i.hip)


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_user_memory_behind_the_axi_master(dut):
    """H2C chains write the user's memory through its own AXI4 slave (bursts of every
    length the engine makes, odd offsets, across 4 KiB), the user logic sums the bytes it
    received, and C2H chains read them back exactly."""
    h = await boot(dut)
    tb = h.tb
    pieces = [(0x0005, 3000), (0x0FF0, 4096 + 33), (0x3000, 1)]
    src = tb.alloc_host(MEM_BYTES)
    dst = tb.alloc_host(MEM_BYTES)
    dst[0:MEM_BYTES] = bytes([GUARD]) * MEM_BYTES
    sa, da = src.get_absolute_address(0), dst.get_absolute_address(0)
    total = 0
    for i, (addr, n) in enumerate(pieces):
        data = pattern(n, 20 + i)
        src[addr : addr + n] = data
        total += sum(data)
    res = await h.run(h.h2c, [Segment(sa + a, a, n) for a, n in pieces], timeout_ns=5e6)
    check_ok(res, len(pieces), "H2C into the user's memory")
    assert await tb.user_read32(BYTE_SUM) == total & 0xFFFFFFFF, "the user logic's byte sum"
    res = await h.run(h.c2h, [Segment(a, da + a, n) for a, n in pieces], timeout_ns=5e6)
    check_ok(res, len(pieces), "C2H from the user's memory")
    image = bytearray([GUARD]) * MEM_BYTES
    for a, n in pieces:
        image[a : a + n] = bytes(src[a : a + n])
    assert bytes(dst[0:MEM_BYTES]) == bytes(image)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_user_registers_and_doorbell(dut):
    """The user BAR reaches the user's registers; the user logic's doorbell raises
    usr_irq_req[0], which arrives as one MSI on its vector and is acknowledged
    (usr_irq_ack, counted by the user logic) once until the request falls."""
    h = await boot(dut)
    tb = h.tb
    await tb.user_write32(SCRATCH, 0x600D_F00D)
    assert await tb.user_read32(SCRATCH) == 0x600D_F00D
    uirq = XdmaUserIrq(h.platform, count=1)
    await uirq.set_vectors({0: 3})
    await uirq.enable(1)
    tb.clear_msi()
    await tb.user_write32(DOORBELL, 1)
    await h.platform.sleep_ns(3000)
    assert tb.msi_count[3] == 1, f"MSI counts {tb.msi_count}"
    assert await tb.user_read32(ACKS) == 1
    assert await uirq.requests() == 1
    await h.platform.sleep_ns(3000)
    assert tb.msi_count[3] == 1, "a held request interrupted twice"
    await tb.user_write32(DOORBELL, 0)
    await tb.user_write32(DOORBELL, 1)
    await h.platform.sleep_ns(3000)
    assert tb.msi_count[3] == 2 and await tb.user_read32(ACKS) == 2
