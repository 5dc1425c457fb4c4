"""cocotb tests of a frame store of our own in RTL (``tb/verilog/mm_top.v``) around the
XDMA drop-in in AXI memory-mapped mode with the PCIe-to-DMA bypass BAR and the AXI4-Lite
slave: the host writes each frame straight into the card's block RAM through the bypass
BAR (``m_axib``) and rings a doorbell; the design runs the C2H channel itself through
the IP's AXI4-Lite slave (``s_axil``) on a descriptor chain the driver prepared once per
slot, and the DMA (``m_axi``) copies the frame from the same block RAM into a pinned
CUDA surface. The driver never touches the channel's registers per frame.
"""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import with_timeout

from driver_model import regs
from driver_model.p2p import GPU_PAGE_SIZE
from driver_model.regs import BAR_AXIB, Stat, Target
from driver_model.xdma import XdmaChannel, XdmaUserIrq
from tb.env.harness import Surface, segments, setup

# the design's registers (AXI4-Lite, user BAR)
DOORBELL, JOBS_DONE, LAST_STATUS, LAST_COUNT, BUSY, DESC0 = 0x00, 0x04, 0x08, 0x0C, 0x10, 0x80
IRQ_VECTOR = 2


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_frames_through_the_bypass_bar_into_cuda(dut):
    """Six frames over three card slots into three slots of a pinned CUDA surface that
    straddles a GPU page boundary: each frame written through the bypass BAR, read back
    through it, and after the doorbell copied by the DMA the design started through the
    AXI4-Lite slave; one user interrupt per frame, the channel stopped cleanly with the
    chain's count, the surface slot holding the frame (cudaMemcpy) and nothing beside it
    changed, and the channel's Run bit clear again."""
    h = await setup(dut, hip=dut.xdma_0_i.hip)
    tb, p = h.tb, h.platform
    rng = random.Random(34)
    frame_bytes, slot, nslots, nframes = 5000, 8192, 3, 6
    bar = tb.pci.bar_window[BAR_AXIB]
    surf = Surface(tb, GPU_PAGE_SIZE + nslots * slot, xor_val=0x3C3C3C3C, width=128)
    # the ring starts 12 KiB before a GPU page ends: slot 1 crosses into the next page
    lead = (-surf.offset - 12 * 1024) % GPU_PAGE_SIZE
    before = surf.read(lead, nslots * slot)
    # one chain per slot, prepared once: card slot k -> surface slot k
    chains = []
    for k in range(nslots):
        segs = segments(surf.chunks(lead + k * slot, frame_bytes), k * slot, to_card=False)
        chain = h.place_chain(segs)
        chains.append(chain)
        await tb.user_write32(DESC0 + 8 * k, chain.first & 0xFFFFFFFF)
        await tb.user_write32(DESC0 + 8 * k + 4, chain.first >> 32)
        assert await tb.user_read32(DESC0 + 8 * k) == chain.first & 0xFFFFFFFF
    uirq = XdmaUserIrq(p, count=1)
    await uirq.set_vectors({0: IRQ_VECTOR})
    await uirq.enable(1)
    tb.clear_msi()
    c2h = XdmaChannel(p, Target.C2H, 0)
    last = {}
    for f in range(nframes):
        k = f % nslots
        frame = rng.randbytes(frame_bytes)
        await with_timeout(bar.write(k * slot, frame), 200, "us")
        back = await with_timeout(bar.read(k * slot, frame_bytes), 200, "us")
        assert back == frame, f"frame {f}: card RAM"
        await tb.user_write32(DOORBELL, k)
        deadline = p.now_ns() + 1e6
        while tb.msi_count[IRQ_VECTOR] <= f and p.now_ns() < deadline:
            await p.sleep_ns(1000)
        status = await tb.user_read32(LAST_STATUS)
        assert tb.msi_count[IRQ_VECTOR] == f + 1, (
            f"frame {f}: no user interrupt; {await tb.user_read32(JOBS_DONE)} jobs done, "
            f"busy {await tb.user_read32(BUSY)}, channel status "
            f"{regs.describe_status(await c2h.status(), Target.C2H)}"
        )
        assert await tb.user_read32(JOBS_DONE) == f + 1
        assert status & Stat.DESC_STOPPED and not status & regs.STAT_ERROR_MASK, (
            f"frame {f}: {regs.describe_status(status, Target.C2H)}"
        )
        assert await tb.user_read32(LAST_COUNT) == len(chains[k])
        assert not await c2h.read32(c2h.reg(regs.CH_CONTROL)) & regs.Ctrl.RUN
        got = surf.read(lead + k * slot, frame_bytes)
        assert got == frame, f"frame {f}: surface slot {k} differs"
        last[k] = frame
    after = surf.read(lead, nslots * slot)
    for k in range(nslots):
        assert after[k * slot : k * slot + frame_bytes] == last[k]
        gap = slice(k * slot + frame_bytes, (k + 1) * slot)
        assert after[gap] == before[gap], f"written beyond the frame in slot {k}"
