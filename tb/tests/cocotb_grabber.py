"""cocotb tests of a frame grabber of our own in RTL (``tb/verilog/grabber_top.v``)
around the XDMA drop-in in AXI-Stream mode with descriptor bypass on C2H channel 0: the
GPUDirect RDMA design the bypass ports exist for. The host pins a CUDA surface through
nvidia_p2p, writes the BAR1 bus addresses of its GPU pages and the capture settings into
the design's registers over the user BAR once, starts the channel and the capture, and
sleeps until the design's user interrupt says the frames are in. The design generates
the frames, cuts each into descriptors over the surface's pages, loads them on the
bypass port, and sets and clears the channel's Run bit through the IP's AXI4-Lite slave,
all by itself.
"""

from __future__ import annotations

import struct

import cocotb

from driver_model import regs
from driver_model.desc import C2H_RESULT_SIZE, C2hResult
from driver_model.p2p import GPU_PAGE_SIZE
from driver_model.regs import Target
from driver_model.xdma import XdmaChannel, XdmaUserIrq
from tb.env.harness import GUARD, Surface, setup

# the design's registers (AXI4-Lite, user BAR)
CONTROL, FRAME_BYTES, NFRAMES, SLOT_BYTES, NSLOTS = 0x00, 0x04, 0x08, 0x0C, 0x10
RESULT_LO, RESULT_HI, DESC_BYTES, FRAMES_DONE, LOADED = 0x14, 0x18, 0x1C, 0x20, 0x24
SEED, SURF_OFFSET, PAGE0 = 0x28, 0x2C, 0x80
MAX_PAGES, RESULT_ENTRIES = 16, 256
IRQ_VECTOR = 3


def frame_image(frame: int, seed: int, nbytes: int) -> bytes:
    """What the design's camera sends as frame ``frame``: beat ``b`` is the 64-bit word
    ``{seed + frame, 8 * b}``, little-endian."""
    word = (seed + frame) & 0xFFFFFFFF
    return b"".join(struct.pack("<II", 8 * b, word) for b in range(nbytes // 8))


def descriptors(
    pages: list[int], surf_offset: int, frames: int, frame_bytes: int, slot: int, nslots: int,
    desc_bytes: int,
) -> list[tuple[int, int, bool]]:  # fmt: skip
    """The (bus address, length, frame end) of every descriptor the design loads, by its
    rule: frame f into slot f % nslots, descriptors of at most ``desc_bytes`` that never
    cross a GPU page."""
    out = []
    for f in range(frames):
        pos = 0
        while pos < frame_bytes:
            q = surf_offset + (f % nslots) * slot + pos
            n = min(frame_bytes - pos, desc_bytes, GPU_PAGE_SIZE - q % GPU_PAGE_SIZE)
            out.append((pages[q // GPU_PAGE_SIZE] + q % GPU_PAGE_SIZE, n, pos + n == frame_bytes))
            pos += n
    return out


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_frames_into_a_cuda_ring(dut):
    """Seven frames into a ring of three slots of a pinned CUDA surface that straddles a
    GPU page boundary: the design loads every descriptor itself (its count matches the
    channel's completed count), the user interrupt comes once when the last frame is
    in, each slot holds the last frame that went to it (read back with cudaMemcpy),
    nothing between slots changes, and the results give each descriptor's length and
    its frame's end."""
    h = await setup(dut, hip=dut.xdma_0_i.hip)
    tb, p = h.tb, h.platform
    frame_bytes, slot, nslots, nframes, desc_bytes, seed = 6000, 8192, 3, 7, 2048, 0x1000
    surf = Surface(tb, GPU_PAGE_SIZE + nslots * slot, xor_val=0x5A5A5A5A, width=128)
    # the ring starts 20 KiB before a GPU page ends, so slot 2 crosses into the next page
    lead = (-surf.offset - 20 * 1024) % GPU_PAGE_SIZE
    before = surf.read(lead, nslots * slot)
    pages = list(surf.map.dma_addresses)
    assert len(pages) <= MAX_PAGES
    results = tb.alloc_host(RESULT_ENTRIES * C2H_RESULT_SIZE)
    results[0 : len(results)] = bytes([GUARD]) * len(results)
    ra = results.get_absolute_address(0)
    settings = {
        FRAME_BYTES: frame_bytes, NFRAMES: nframes, SLOT_BYTES: slot, NSLOTS: nslots,
        RESULT_LO: ra & 0xFFFFFFFF, RESULT_HI: ra >> 32, DESC_BYTES: desc_bytes, SEED: seed,
        SURF_OFFSET: surf.offset + lead,
    }  # fmt: skip
    for i, addr in enumerate(pages):
        settings[PAGE0 + 8 * i] = addr & 0xFFFFFFFF
        settings[PAGE0 + 8 * i + 4] = addr >> 32
    for off, value in settings.items():
        await tb.user_write32(off, value)
    for off, value in settings.items():
        assert await tb.user_read32(off) == value, f"register {off:#x}"
    uirq = XdmaUserIrq(p, count=1)
    await uirq.set_vectors({0: IRQ_VECTOR})
    await uirq.enable(1)
    tb.clear_msi()
    # the design sets the channel's Run bit itself (AXI4-Lite slave)
    c2h = XdmaChannel(p, Target.C2H, 0)
    assert not await c2h.read32(c2h.reg(regs.CH_CONTROL)) & regs.Ctrl.RUN
    await tb.user_write32(CONTROL, 1)
    deadline = p.now_ns() + 2e6
    while tb.msi_count[IRQ_VECTOR] == 0 and p.now_ns() < deadline:
        await p.sleep_ns(2000)
    assert tb.msi_count[IRQ_VECTOR] == 1, (
        f"no user interrupt: {await tb.user_read32(FRAMES_DONE)} frames done, "
        f"{await tb.user_read32(LOADED)} descriptors loaded, "
        f"{await c2h.completed_count()} completed, status "
        f"{regs.describe_status(await c2h.status(), Target.C2H)}"
    )
    want = descriptors(pages, surf.offset + lead, nframes, frame_bytes, slot, nslots, desc_bytes)
    assert await tb.user_read32(FRAMES_DONE) == nframes
    assert await tb.user_read32(LOADED) == len(want)
    assert await c2h.completed_count() == len(want)
    status = await c2h.status()
    assert not status & regs.STAT_ERROR_MASK, regs.describe_status(status, Target.C2H)
    # ... and clears it after the last frame: the channel has stopped
    assert not await c2h.read32(c2h.reg(regs.CH_CONTROL)) & regs.Ctrl.RUN
    assert not status & regs.Stat.BUSY
    after = surf.read(lead, nslots * slot)
    for s in range(nslots):
        last = max(f for f in range(nframes) if f % nslots == s)
        got = after[s * slot : s * slot + frame_bytes]
        assert got == frame_image(last, seed, frame_bytes), f"slot {s}: not frame {last}"
        gap = slice(s * slot + frame_bytes, (s + 1) * slot)
        assert after[gap] == before[gap], f"written after the frame in slot {s}"
    got = [
        C2hResult.parse(bytes(results[k * C2H_RESULT_SIZE : (k + 1) * C2H_RESULT_SIZE]))
        for k in range(len(want))
    ]
    assert got == [C2hResult(n, end) for _, n, end in want], got
    await p.sleep_ns(3000)
    assert tb.msi_count[IRQ_VECTOR] == 1, "the user interrupt came twice"
