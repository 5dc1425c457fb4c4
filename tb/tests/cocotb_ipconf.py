"""cocotb tests of a user design around the drop-in configured as the suite's profiles
are not (``tb/verilog/ipconf_top.v``, one design built three ways): an IP instance named
``xdma_ip``, a Gen2 x2 link, a 7 series part. Each is built through
:func:`tb.flow.runner.run` with the drop-in's options (``MODULE``, ``LANES``, ``7SERIES``);
data moves through the design's block RAM."""

from __future__ import annotations

import cocotb

from driver_model.desc import Segment
from tb.config.build import current_profile
from tb.env.harness import GUARD, check_ok, pattern, setup

MEM_BYTES = 16 << 10
# the PIPE simulation ports' widths: common_commands, pipe_*_sigs (PG195)
PIPE_WIDTHS = {0: (26, 84), 1: (12, 25)}


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_data_through_the_design(dut):
    """The design's ports have the widths its options give (the serial lanes, the PIPE
    ports of its part's family), the hard-IP model trains the link at that width, and H2C
    and C2H chains move data into the design's RAM and back exactly."""
    p = current_profile()
    ip = dut.ip_i
    assert len(ip.pci_exp_txp) == len(dut.pci_exp_txp) == p.lanes
    cmd, sig = PIPE_WIDTHS[int(p.extra.get("7SERIES", 0))]
    assert (len(ip.common_commands_in), len(ip.pipe_rx_0_sigs)) == (cmd, sig)
    h = await setup(dut, hip=ip.hip)
    tb = h.tb
    # the hard-IP model's link trained at the design's width (cocotbext-pcie models no
    # Link Status register: the port's width is where the model keeps it)
    port = tb.dev.upstream_port
    assert (tb.dev.pcie_link_width, port.cur_link_width, port.cur_link_speed) == (
        p.lanes,
        p.lanes,
        p.gen,
    )
    pieces = [(0x0003, 2000), (0x0FF8, 4096 + 17), (0x3FFF, 1)]
    src = tb.alloc_host(MEM_BYTES)
    dst = tb.alloc_host(MEM_BYTES)
    dst[0:MEM_BYTES] = bytes([GUARD]) * MEM_BYTES
    sa, da = src.get_absolute_address(0), dst.get_absolute_address(0)
    for i, (addr, n) in enumerate(pieces):
        src[addr : addr + n] = pattern(n, 40 + i)
    res = await h.run(h.h2c, [Segment(sa + a, a, n) for a, n in pieces], timeout_ns=5e6)
    check_ok(res, len(pieces), "H2C into the design's RAM")
    res = await h.run(h.c2h, [Segment(a, da + a, n) for a, n in pieces], timeout_ns=5e6)
    check_ok(res, len(pieces), "C2H from the design's RAM")
    image = bytearray([GUARD]) * MEM_BYTES
    for a, n in pieces:
        image[a : a + n] = bytes(src[a : a + n])
    assert bytes(dst[0:MEM_BYTES]) == bytes(image)
