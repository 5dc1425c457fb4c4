"""Peer-to-peer through the GPU model: the FPGA's DMA engine reads and writes pinned BAR1
pages, the data shows up through cudaMemcpy, and a revoked page answers UR / drops writes.

Runs on the topology in ``$PEVB_TOPOLOGY`` (``switch`` or ``root_ports``).
"""

from __future__ import annotations

import logging
import re

import cocotb
import numpy as np
from cocotb.triggers import with_timeout

from cuda_model import PinState
from cuda_model.gpu import (
    BAR0,
    BAR0_SIZE,
    BAR1,
    BAR3,
    BAR3_SIZE,
    GH100_BOOT_0,
    GH100_DEVICE_ID,
    PCI_CLASS_3D_CONTROLLER,
    PCI_VENDOR_ID_NVIDIA,
)
from driver_model import regs
from driver_model.desc import Segment
from driver_model.regs import PcieErr
from tb.env.harness import (
    D2H,
    GUARD,
    SYNC_MEMOPS,
    Surface,
    check_ok,
    pattern,
    recover,
    segments,
    setup,
)

W = H = 256  # a 256 KiB surface of 32-bit words


async def card_to_host(h, card: int, n: int) -> bytes:
    dst = h.tb.alloc_host(n)
    res = await h.run(h.c2h, [Segment(card, dst.get_absolute_address(0), n)])
    check_ok(res, 1, "C2H card->host")
    return bytes(dst[0:n])


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_peer_read_write_bar1(dut):
    """H2C reads GPU BAR1 across a 64 KiB page; C2H writes BAR1; cudaMemcpy sees it."""
    h = await setup(dut)
    tb = h.tb
    # the GPU as enumerated: IDs, class, BAR sizes, the boot register through BAR0
    pci = tb.gpu_pci
    assert (pci.vendor_id, pci.device_id) == (PCI_VENDOR_ID_NVIDIA, GH100_DEVICE_ID)
    assert await pci.config_read_dword(0x08) >> 8 == PCI_CLASS_3D_CONTROLLER
    assert [pci.bar_window[i].size for i in (BAR0, BAR1, BAR3)] == [
        BAR0_SIZE,
        tb.gpu.bar1_size,
        BAR3_SIZE,
    ]
    # the H100's layout: all three 64-bit prefetchable, in slots 0-1, 2-3 and 4-5
    for slot in (BAR0, BAR1, BAR3):
        assert await pci.config_read_dword(0x10 + 4 * slot) & 0xF == 0xC, f"slot {slot}"
    assert (BAR0, BAR1, BAR3) == (0, 2, 4)
    assert await with_timeout(pci.bar_window[BAR0].read_dword(0), 100, "us") == GH100_BOOT_0
    assert await with_timeout(pci.bar_window[BAR3].read_dword(0x100), 100, "us") == 0
    surf = Surface(tb, W * H * 4)
    stats = tb.p2p.pin_of(surf.pt).stats
    # GPU -> card: 40 KiB from an odd offset, crossing a 64 KiB page boundary
    off, n = 0x10000 - 0x3003, 40 * 1024
    chunks = surf.chunks(off, n)
    res = await h.run(h.h2c, segments(chunks, 0, True))
    check_ok(res, len(chunks), "H2C GPU->card")
    expect = surf.read(off, n)
    assert await card_to_host(h, 0, n) == expect, "card RAM differs from the GPU surface"
    assert stats.read_bytes >= n and stats.writes == 0
    words = np.frombuffer(expect[3:7], dtype="<u4")  # sanity: fill_surface data, not zeros
    assert words[0] != 0
    # host -> card -> GPU: 20000 bytes at an odd offset crossing the next page boundary
    off2, n2 = 0x20000 - 0x1001, 20000
    src = tb.alloc_host(n2)
    data = pattern(n2, 7)
    src[0:n2] = data
    res = await h.run(h.h2c, [Segment(src.get_absolute_address(0), 0x8000, n2)])
    check_ok(res, 1, "H2C host->card")
    before = surf.read(0, surf.size)
    chunks2 = surf.chunks(off2, n2)
    res = await h.run(h.c2h, segments(chunks2, 0x8000, False))
    check_ok(res, len(chunks2), "C2H card->GPU")
    after = surf.read(0, surf.size)
    assert after[off2 : off2 + n2] == data, "peer writes did not reach VRAM"
    assert after[:off2] == before[:off2] and after[off2 + n2 :] == before[off2 + n2 :], (
        "bytes outside the peer write changed"
    )
    assert stats.write_bytes == n2
    assert not tb.gpu.fault_log


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_gpu_logs_requests_when_asked(dut):
    """A level set on the GPU endpoint's logger mid-run takes effect at once: with INFO
    on, every peer read and write of BAR1 reaches the endpoint's own handlers, which
    log them (the compiled data path answers none in its library then, on arrival or
    after), and with it off again the peer data still moves whole."""
    h = await setup(dut)
    tb = h.tb
    # (the Max Payload Size the library answers with follows the capability too)
    cap, served = tb.gpu_ep.pcie_cap, getattr(tb, "native_gpu", None)
    mps = cap.max_payload_size
    for code in (mps ^ 1, mps):
        cap.max_payload_size = code
        assert served is None or served.flags.mps == code, "the library's MPS is stale"
    surf = Surface(tb, W * H * 4)
    n = 8192
    seen: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    chunks = surf.chunks(0x100, n)
    check_ok(await h.run(h.h2c, segments(chunks, 0, True)), len(chunks), "H2C GPU->card")
    log, catch = tb.gpu_ep.log, Catch()
    level = log.level
    log.addHandler(catch)
    try:
        log.setLevel(logging.INFO)
        check_ok(await h.run(h.h2c, segments(chunks, 0, True)), len(chunks), "H2C, logged")
        check_ok(await h.run(h.c2h, segments(chunks, 0, False)), len(chunks), "C2H, logged")
    finally:
        log.setLevel(level)
        log.removeHandler(catch)
    lo, hi = chunks[0][0], chunks[-1][0] + chunks[-1][1]
    logged = {"read": 0, "write": 0}  # the peer bytes, as the endpoint logged them
    for text in seen:
        m = re.match(r"Memory (read|write), address 0x([0-9a-f]+), length (\d+)", text)
        if m and lo <= int(m[2], 16) < hi:
            logged[m[1]] += 4 * int(m[3])
    assert min(logged.values()) >= n, f"{logged} of {n} bytes each way logged: {seen[:4]}"
    # the level back as it was: the library answers again, and the data is whole
    expect = surf.read(0x100, n)
    check_ok(await h.run(h.h2c, segments(chunks, 0, True)), len(chunks), "H2C GPU->card")
    assert await card_to_host(h, 0, n) == expect, "card RAM differs from the GPU surface"


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_revoked_page_ur_and_dropped_write(dut):
    """After cudaFree of a pinned surface: reads of its BAR1 pages get UR (read_error),
    writes are dropped; both are in the fault log; the engine recovers."""
    h = await setup(dut)
    tb = h.tb
    surf = Surface(tb, W * H * 4)
    chunks = surf.chunks(0x100, 4096)
    tb.cuda.cudaFree(surf.va)
    assert surf.freed == ["surface"]
    assert tb.gpu.pins[1].state is PinState.REVOKED
    res = await h.run(h.h2c, segments(chunks, 0, True))
    assert (
        not res.timed_out and regs.STAT_READ_ERROR.get(res.status) == PcieErr.UNSUPPORTED_REQUEST
    ), f"expected UR -> read_error, status {res.status:#x}"
    reads = [f for f in tb.gpu.fault_log if f.op == "read"]
    assert reads and "revoked" in reads[0].reason and "cudaFree" in reads[0].reason
    # a new allocation may reuse the VRAM: peer writes to the stale address must not land
    fresh = tb.cuda.cudaMalloc(W * H * 4)
    tb.cuda.cuPointerSetAttribute(1, SYNC_MEMOPS, fresh)
    tb.cuda.cudaMemset(fresh, GUARD, W * H * 4)
    await recover(h)
    res = await h.run(h.c2h, segments(chunks, 0, False))
    check_ok(res, len(chunks), "C2H to a revoked page (posted: the engine cannot tell)")
    writes = [f for f in tb.gpu.fault_log if f.op == "write"]
    assert sum(f.length for f in writes) == 4096
    out = bytearray(W * H * 4)
    tb.cuda.cudaMemcpy(out, fresh, len(out), D2H)
    assert bytes(out) == bytes([GUARD]) * len(out), "a write through a revoked page landed"
    # recovery: a normal transfer afterwards
    src = tb.alloc_host(512)
    src[0:512] = pattern(512, 3)
    res = await h.run(h.h2c, [Segment(src.get_absolute_address(0), 0, 512)])
    check_ok(res, 1, "H2C after the fault")
