"""cocotb tests of the DMA engine: registers, descriptor chains, errors, interrupts.

Every destination is checked with guard bytes on both sides; every status by named bit.
"""

from __future__ import annotations

import logging
import random
import re

import cocotb
from cocotb.triggers import RisingEdge, Timer

from driver_model import regs
from driver_model.desc import DescFlag, Segment, build_chain
from driver_model.regs import AxiErr, Ctrl, PcieErr, Stat, Target
from driver_model.xdma import Engine, XdmaUserIrq, probe_engines
from tb.env.backdoor import engine
from tb.env.harness import (
    GUARD,
    PAGE,
    UNMAPPED_HOST,
    Harness,
    check_ok,
    hold_rc_until_waiting,
    pattern,
    recover,
    roundtrip,
    run_pair,
    setup,
)


def card_layout(lengths: list[int], ram_size: int, align_pad: int = 7) -> list[int]:
    """Card addresses for pieces placed back to back with odd gaps (all must fit)."""
    addrs, a = [], 0
    for n in lengths:
        if a + n > ram_size:
            a = 0
        addrs.append(a)
        a += n + align_pad
    return addrs


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_identifiers(dut):
    """Every block reports its identifier; LED, alignment and config registers read right."""
    h = await setup(dut)
    tb = h.tb
    await h.h2c.identify()
    await h.c2h.identify()
    # a libxdma-style probe finds the one channel each way the card has
    assert await probe_engines(h.platform) == [
        Engine(Target.H2C, 0, False),
        Engine(Target.C2H, 0, False),
    ]
    for target, base in (
        (Target.IRQ, regs.irq_reg(0)),
        (Target.CONFIG, regs.cfg_reg(0)),
        (Target.SGDMA_COMMON, regs.sgc_reg(0)),
    ):
        assert await tb.dma_read32(base) == regs.identifier(target)
    assert await tb.dma_read32(regs.ch_reg(Target.H2C, 0, channel=1)) == 0, "absent channel"
    assert await tb.dma_read32(h.h2c.reg(regs.CH_ALIGNMENTS)) == regs.ALIGNMENTS_VALUE
    assert await tb.dma_read32(regs.cfg_reg(regs.CFG_SYSTEM_ID)) == regs.SYSTEM_ID_VALUE
    assert (
        await tb.dma_read32(regs.cfg_reg(regs.CFG_DATA_WIDTH))
        == regs.DATA_WIDTH_ENCODING[tb.profile.width]
    )
    assert await tb.dma_read32(regs.cfg_reg(regs.CFG_MSI_ENABLE)) & 1 == 1
    pcie_control = await tb.dma_read32(regs.cfg_reg(regs.CFG_PCIE_CONTROL))
    assert pcie_control == regs.CFG_PCIE_CONTROL_RESET, f"PCIe control {pcie_control:#x}"
    assert await tb.user_read32(regs.USER_LED) == regs.LED_RESET_VALUE
    assert await tb.user_read32(regs.USER_RAM_SIZE) == tb.profile.ram_size
    await tb.user_write32(regs.USER_LED, 0x5)
    assert await tb.user_read32(regs.USER_LED) == 0x5
    assert dut.led.value == 0x5


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_register_access(dut):
    """Control W1S/W1C, interrupt mask, SGDMA, halt and vector registers keep their values."""
    h = await setup(dut)
    tb = h.tb
    ctl = h.h2c.reg(regs.CH_CONTROL)
    await tb.dma_write32(ctl, 0xFFFFFFFE)
    assert await tb.dma_read32(ctl) == regs.CTRL_WRITABLE & ~int(Ctrl.RUN)
    await tb.dma_write32(h.h2c.reg(regs.CH_CONTROL_W1C), int(Ctrl.IE_READ_ERROR))
    assert await tb.dma_read32(ctl) == regs.CTRL_WRITABLE & ~int(Ctrl.RUN | Ctrl.IE_READ_ERROR)
    await tb.dma_write32(h.h2c.reg(regs.CH_CONTROL_W1S), int(Ctrl.IE_READ_ERROR))
    await tb.dma_write32(h.h2c.reg(regs.CH_CONTROL_W1C), 0xFFFFFFFF)
    assert await tb.dma_read32(ctl) == 0
    await tb.dma_write32(h.c2h.reg(regs.CH_INT_MASK), 0xFFFFFFFF)
    assert await tb.dma_read32(h.c2h.reg(regs.CH_INT_MASK)) == regs.STAT_LOGGED_MASK
    await tb.dma_write32(h.c2h.reg(regs.CH_INT_MASK_W1C), int(Stat.DESC_COMPLETED))
    assert await tb.dma_read32(h.c2h.reg(regs.CH_INT_MASK)) == regs.STAT_LOGGED_MASK & ~int(
        Stat.DESC_COMPLETED
    )
    for d, v in ((Target.H2C, 0x1234_5660), (Target.C2H, 0xDEAD_BEE0)):
        await tb.dma_write32(regs.sg_reg(d, regs.SG_DESC_LO), v)
        await tb.dma_write32(regs.sg_reg(d, regs.SG_DESC_HI), ~v & 0xFFFFFFFF)
        await tb.dma_write32(regs.sg_reg(d, regs.SG_DESC_ADJ), 0xFF)
        assert await tb.dma_read32(regs.sg_reg(d, regs.SG_DESC_LO)) == v
        assert await tb.dma_read32(regs.sg_reg(d, regs.SG_DESC_HI)) == ~v & 0xFFFFFFFF
        assert await tb.dma_read32(regs.sg_reg(d, regs.SG_DESC_ADJ)) == 0x3F
    halt = regs.SGC_H2C_DESC_HALT.put(1) | regs.SGC_C2H_DESC_HALT.put(1)
    await tb.dma_write32(regs.sgc_reg(regs.SGC_CONTROL_W1S), 0xFFFFFFFF)
    assert (
        await tb.dma_read32(regs.sgc_reg(regs.SGC_CONTROL))
        == regs.SGC_H2C_DESC_HALT.mask | regs.SGC_C2H_DESC_HALT.mask
    )
    await tb.dma_write32(regs.sgc_reg(regs.SGC_CONTROL_W1C), 0xFFFFFFFF)
    assert await tb.dma_read32(regs.sgc_reg(regs.SGC_CONTROL)) == 0
    await tb.dma_write32(regs.sgc_reg(regs.SGC_CONTROL), halt)
    assert await tb.dma_read32(regs.sgc_reg(regs.SGC_CONTROL)) == halt
    await tb.dma_write32(regs.sgc_reg(regs.SGC_CONTROL), 0)
    for off in regs.IRQ_CHAN_VECTOR:
        await tb.dma_write32(regs.irq_reg(off), 0xFFFFFFFF)
        assert await tb.dma_read32(regs.irq_reg(off)) == 0x1F1F1F1F
    await tb.dma_write32(regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1S), 0x3)
    assert await tb.dma_read32(regs.irq_reg(regs.IRQ_CHAN_INT_EN)) == 0x3
    await tb.dma_write32(regs.irq_reg(regs.IRQ_CHAN_INT_EN_W1C), 0x1)
    assert await tb.dma_read32(regs.irq_reg(regs.IRQ_CHAN_INT_EN)) == 0x2


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def test_chain_lengths(dut):
    """Chains of 1, 2, 64 and 1000 descriptors over scattered, non-contiguous host pages."""
    h = await setup(dut)
    rng = random.Random(11)
    for count in (1, 2, 64, 1000):
        n = max(1, min(4096, (h.ram_size - 8 * count) // count))
        lengths = [rng.randint(max(1, n // 2), n) for _ in range(count)]
        cards = card_layout(lengths, h.ram_size)
        pieces = [(rng.randint(0, 3), c, n) for c, n in zip(cards, lengths, strict=True)]
        if count >= 64:
            # fewer, shared host buffers keep the 1000-descriptor case quick
            await roundtrip_scattered(h, pieces, seed=count)
        else:
            await roundtrip(h, pieces, seed=count)


async def roundtrip_scattered(h: Harness, pieces, seed: int) -> None:
    """Like roundtrip, but pieces live in shuffled pages of one source and one destination."""
    slot = PAGE * ((max(off + n for off, _, n in pieces) + PAGE - 1) // PAGE + 1)
    order = list(range(len(pieces)))
    random.Random(seed).shuffle(order)
    span = slot * len(pieces)
    src = h.tb.alloc_host(span)
    dst = h.tb.alloc_host(span)
    dst[0:span] = bytes([GUARD]) * span
    sbase, dbase = src.get_absolute_address(0), dst.get_absolute_address(0)
    h2c_segs, c2h_segs = [], []
    image = bytearray([GUARD]) * span
    blob = pattern(sum(n for _, _, n in pieces), seed)
    p = 0
    for i, (off, card, n) in enumerate(pieces):
        at = order[i] * slot + off
        data = blob[p : p + n]
        p += n
        src[at : at + n] = data
        image[at : at + n] = data
        h2c_segs.append(Segment(sbase + at, card, n))
        c2h_segs.append(Segment(card, dbase + at, n))
    # the card holds every piece at once only if they do not overlap: copy in batches
    batch: list[int] = []
    used_end = 0
    for i, (_, card, n) in enumerate(pieces):
        if card < used_end and batch:
            await run_pair(h, [h2c_segs[j] for j in batch], [c2h_segs[j] for j in batch])
            batch = []
        batch.append(i)
        used_end = card + n
    await run_pair(h, [h2c_segs[j] for j in batch], [c2h_segs[j] for j in batch])
    got = bytes(dst[0:span])
    assert got == bytes(image), "destination image differs"


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_lengths_and_offsets(dut):
    """Lengths 1..bus+3, around 128 B, 4 KiB and 64 KiB; offsets 0-3 and 4093-4095."""
    h = await setup(dut)
    bus_bytes = h.tb.profile.width // 8
    rng = random.Random(5)
    lengths = [*list(range(1, bus_bytes + 4)), 127, 128, 129, 4095, 4096, 4097]
    offsets = [0, 1, 2, 3, 4093, 4094, 4095]
    pieces = []
    for i, n in enumerate(lengths):
        pieces.append((offsets[i % len(offsets)], rng.randrange(0, h.ram_size - n), n))
    # card destinations must not overlap inside one chain
    cards = card_layout([n for _, _, n in pieces], h.ram_size, align_pad=5)
    pieces = [(off, c, n) for (off, _, n), c in zip(pieces, cards, strict=True)]
    await roundtrip(h, pieces, seed=2)
    # the whole card RAM in one descriptor, and 64 KiB - 1 at an odd card address
    big = h.ram_size
    await roundtrip(h, [(4093, 0, big)], seed=3)
    await roundtrip(h, [(1, 1, big - 1)], seed=4)


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_idle_backpressure(dut):
    """Chains with idle cycles on CQ/RC and back-pressure on RQ/CC."""
    h = await setup(dut)
    h.tb.set_idle_backpressure(seed=3, duty=0.4)
    bus_bytes = h.tb.profile.width // 8
    lengths = [1, bus_bytes - 1, bus_bytes + 3, 128, 129, 1000, 4096]
    cards = card_layout(lengths, h.ram_size)
    pieces = [
        (i % 4 if i % 2 else 4093 + i % 3, c, n)
        for i, (c, n) in enumerate(zip(cards, lengths, strict=True))
    ]
    await roundtrip(h, pieces, seed=7)
    h.tb.rc.split_on_all_rcb = True
    await roundtrip(h, pieces, seed=8)
    h.tb.set_idle_backpressure(None)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_rcb_split_completions(dut):
    """Completions split at every RCB are reassembled (reads and descriptor fetches)."""
    h = await setup(dut)
    h.tb.rc.split_on_all_rcb = True
    cards = card_layout([4096, 3000, 333], h.ram_size)
    await roundtrip(h, [(3, cards[0], 4096), (4094, cards[1], 3000), (0, cards[2], 333)], 9)


async def h2c_logged(h, log: logging.Logger, seed: int, n: int = 4096) -> tuple[int, list[str]]:
    """An H2C of ``n`` bytes from a host buffer with the level of ``log`` as it is (the
    buffer's memory known to the compiled data path by then), then the same with INFO on
    ``log`` (set mid-run, then put back): the buffer's bus address and what ``log`` said
    meanwhile."""
    src = h.tb.alloc_host(n)
    src[0:n] = pattern(n, seed)
    sa = src.get_absolute_address(0)
    seen: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    check_ok(await h.run(h.h2c, [Segment(sa, 0, n)]), 1, "H2C")
    catch, level = Catch(), log.level
    log.addHandler(catch)
    try:
        log.setLevel(logging.INFO)
        check_ok(await h.run(h.h2c, [Segment(sa, 0, n)]), 1, "H2C, logged")
    finally:
        log.setLevel(level)
        log.removeHandler(catch)
    return sa, seen


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_root_complex_logs_requests_when_asked(dut):
    """A level set on the root complex's logger mid-run takes effect at once: with INFO
    on, every memory read of the card's reaches the root complex's own handler, which
    logs it (the compiled data path answers none of them in its library then), and
    with it off again the transfers still move the right bytes."""
    h = await setup(dut)
    n = 4096
    sa, seen = await h2c_logged(h, h.tb.rc.log, 31, n)
    logged = 0  # the data bytes read from the buffer, as logged
    for text in seen:
        m = re.match(r"Memory read, address 0x([0-9a-f]+), length (\d+)", text)
        if m and sa <= int(m[1], 16) < sa + n:
            logged += 4 * int(m[2])
    assert logged >= n, f"{logged} of {n} bytes' reads logged: {seen[:4]}"
    await roundtrip(h, [(0, 0, n)], seed=32)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_card_logs_completions_when_asked(dut):
    """A level set on the RC source's logger mid-run takes effect at once: with INFO on,
    every completion for the card's reads goes to RC through the hard-IP model's own
    path, which logs each frame (the compiled data path takes none of them in its
    library then), and with it off again the transfers still move the right bytes."""
    h = await setup(dut)
    n = 4096
    _, seen = await h2c_logged(h, h.tb.dev.rc_source.log, 33, n)
    frames = [text for text in seen if "RC frame" in text]
    # (at most 256 bytes of data a completion: the profiles' largest Max Payload Size)
    assert len(frames) >= n // 256, f"{len(frames)} RC frames logged for {n} bytes"
    await roundtrip(h, [(0, 0, n)], seed=34)


async def _backlog(h: Harness, n: int, seed: int, handover=None) -> None:
    """An H2C of ``n`` bytes during which, once the RTL has its descriptor, it takes
    nothing on RC until completions wait in the hard-IP model for the RC transactor to
    take them (more than 8, or 200 us): ``handover()`` is called then, while the model's
    RC loop waits, and what it returns after the H2C; then RC flows again, and every
    byte must arrive."""
    tb = h.tb
    rc, dev = tb.dev.rc_source, tb.dev
    src = tb.alloc_host(n)
    src[0:n] = pattern(n, seed)
    taken = rc._taken()
    run = cocotb.start_soon(h.run(h.h2c, [Segment(src.get_absolute_address(0), 0, n)]))
    await hold_rc_until_waiting(dev, taken)
    undo = handover() if handover is not None else None
    try:
        await Timer(20, "us")  # (more completions arrive meanwhile)
        rc.clear_pause_generator()
        rc.pause = False
        check_ok(await run, 1, "H2C")
    finally:
        if undo is not None:
            undo()
    assert bytes(h.card_image()[0:n]) == pattern(n, seed), "H2C through a backlog"


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_rc_backlog_handed_over(dut):
    """The RTL takes no completion for a while: the model's RC loop waits for the RC
    stream (in the library on the compiled data path), first for cocotbext-pcie's queue
    occupancy limit (4 frames), then for room in the RC transactor's buffer. Something
    that needs the completions after in Python, set while it waits, takes the loop over
    where it stands: a level set on the RC source's logger (the model's own path takes
    them and logs each frame it sends), an observer added at the card's link (shown
    each completion, which the model then takes as the library would). Every byte
    arrives in order, none dropped, no request timed out."""
    h = await setup(dut)
    tb = h.tb
    rc = tb.dev.rc_source
    seen: list[str] = []
    shown: list[int] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    def logged():
        level = rc.log.level
        rc.log.setLevel(logging.INFO)
        return lambda: rc.log.setLevel(level)

    def observed():
        def observe(link, direction, tlp) -> None:
            shown.append(len(tlp.data))

        tb.links.add_observer(observe, links=("fpga",), passive=True)
        return lambda: tb.links.remove_observer(observe)

    catch = Catch()
    rc.log.addHandler(catch)
    rc.queue_occupancy_limit_frames = 4
    try:
        await _backlog(h, min(h.ram_size, 16 * 1024), 51, logged)
    finally:
        rc.queue_occupancy_limit_frames = -1
        rc.log.removeHandler(catch)
    assert any("RC frame" in text for text in seen), "no completion took the model's path"
    await _backlog(h, min(h.ram_size, 20 * 1024), 52, observed)
    assert sum(shown) > 0, "the observer was shown no completion"
    assert tb.dev.cpl_timeouts == 0
    await roundtrip(h, [(0, 0, 4096)], seed=53)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_reads_queued_for_completion_credit(dut):
    """The hard IP holds the card's reads in its non-posted queue while they do not fit
    its completion credit (its limit lowered from the descriptor's fetch on); with the
    limit back, the reads the RTL hands it after those still queue behind them until
    the model's next credit event, and all leave in the order the RTL made them: every
    byte arrives, no request times out."""
    h = await setup(dut)
    tb = h.tb
    dev = tb.dev
    n = min(h.ram_size, 32 * 1024)
    src = tb.alloc_host(n)
    src[0:n] = pattern(n, 61)
    limit = dev.cpld_credit_limit
    run = cocotb.start_soon(h.run(h.h2c, [Segment(src.get_absolute_address(0), 0, n)]))

    async def until(done, what: str) -> None:
        for _ in range(20000):
            if done():
                return
            await RisingEdge(dev.user_clk)
        raise AssertionError(what)

    seen = dev._rq_seen
    await until(lambda: dev._rq_seen > seen, "the descriptor was not fetched")
    dev.cpld_credit_limit = -1  # (no data read fits: each queues, none in flight)
    await until(lambda: dev._np_held >= 2, "no reads queued for completion credit")
    dev.cpld_credit_limit = limit
    queued = dev._np_held
    await Timer(2, "us")  # (the RTL's next reads arrive meanwhile, behind the queued)
    assert dev._np_held > queued, "no read queued behind those held"
    dev.cpld_credit_released.set()
    check_ok(await run, 1, "H2C")
    assert bytes(h.card_image()[0:n]) == pattern(n, 61), "H2C after reads queued for credit"
    assert dev.cpl_timeouts == 0
    await roundtrip(h, [(0, 0, 4096)], seed=62)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_stop_mid_chain(dut):
    """Stop on descriptor 2 of 6: count 3, descriptor_stopped, later descriptors not run."""
    h = await setup(dut)
    src = h.tb.alloc_host(6 * 256)
    dst = h.tb.alloc_host(6 * 256)
    src[0 : 6 * 256] = pattern(6 * 256, 1)
    dst[0 : 6 * 256] = bytes([GUARD]) * (6 * 256)
    sa, da = src.get_absolute_address(0), dst.get_absolute_address(0)
    res = await h.run(h.h2c, [Segment(sa + 256 * i, 256 * i, 256) for i in range(6)])
    check_ok(res, 6, "H2C")
    res = await h.run(h.c2h, [Segment(256 * i, da + 256 * i, 256) for i in range(6)], stop_at=2)
    check_ok(res, 3, "C2H stopped")
    assert res.status & Stat.DESC_STOPPED
    got = bytes(dst[0 : 6 * 256])
    assert got[:768] == bytes(src[0:768])
    assert got[768:] == bytes([GUARD]) * (3 * 256), "descriptors after Stop were executed"


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_completed_and_writeback(dut):
    """Completed on some descriptors only; poll-mode write-back of the count; no MSI masked."""
    h = await setup(dut)
    src = h.tb.alloc_host(PAGE)
    wb = h.tb.alloc_host(PAGE)
    sa, wa = src.get_absolute_address(0), wb.get_absolute_address(0)
    segs = [Segment(sa + 64 * i, 64 * i, 64) for i in range(8)]
    # no Completed except on the last (build_chain sets Stop|EOP|Completed there)
    res = await h.run(h.h2c, segs)
    check_ok(res, 8, "H2C")
    assert res.status & Stat.DESC_COMPLETED and res.status & Stat.DESC_STOPPED
    # Completed on 1 and 3 only, last one forced Completed too; poll mode, interrupts off
    wb[0:4] = b"\xff\xff\xff\xff"
    chain = h.place_chain(segs[:4], completed=[1])
    chain.descriptors[-1].flags = DescFlag.STOP | DescFlag.EOP  # no Completed on the last
    h.write_chain(chain)
    h.tb.clear_msi()
    res = await h.h2c.run(chain, interrupt=False, poll_wb_addr=wa)
    check_ok(res, 4, "H2C poll")
    assert res.status & Stat.DESC_COMPLETED
    value = int.from_bytes(bytes(wb[0:4]), "little")
    assert regs.WB_ERROR.get(value) == 0
    assert regs.WB_COUNT.get(value) == 2, f"write-back {value:#x}: count after descriptor 1"
    assert sum(h.tb.msi_count) == 0, "MSI sent with the channel interrupt masked"
    # no Completed anywhere: no descriptor_completed status, count still 4
    chain = h.place_chain(segs[:4])
    chain.descriptors[-1].flags = DescFlag.STOP
    h.write_chain(chain)
    res = await h.h2c.run(chain, interrupt=False)
    check_ok(res, 4, "H2C no completed")
    assert not res.status & Stat.DESC_COMPLETED
    assert res.status & Stat.DESC_STOPPED


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_poll_writeback_libxdma_control(dut):
    """libxdma's poll mode: pollmode_wb_enable without ie_descriptor_completed still writes back."""
    h = await setup(dut)
    src = h.tb.alloc_host(PAGE)
    src[0:PAGE] = pattern(PAGE, 12)
    wb = h.tb.alloc_host(PAGE)
    sa, wa = src.get_absolute_address(0), wb.get_absolute_address(0)
    control = int(regs.LIBXDMA_POLL_CONTROL)
    assert not control & Ctrl.IE_DESC_COMPLETED
    for n in (1, 5):
        wb[0:4] = b"\xff\xff\xff\xff"
        chain = h.place_chain([Segment(sa + 128 * i, 128 * i, 128) for i in range(n)])
        h.write_chain(chain)
        res = await h.h2c.run(chain, interrupt=False, poll_wb_addr=wa, control=control)
        check_ok(res, n, f"H2C poll, {n} descriptors")
        value = int.from_bytes(bytes(wb[0:4]), "little")
        assert regs.WB_ERROR.get(value) == 0, f"write-back {value:#x} flags an error"
        assert regs.WB_COUNT.get(value) == n, f"write-back {value:#x}, expected count {n}"
        # descriptor_completed is not logged without its enable
        assert not res.status & Stat.DESC_COMPLETED
    assert bytes(h.card_image()[: 5 * 128]) == bytes(src[0 : 5 * 128])


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_msi_one_per_completion(dut):
    """One MSI per completed chain when enabled, none when the channel interrupt is masked."""
    h = await setup(dut)
    src = h.tb.alloc_host(PAGE)
    sa = src.get_absolute_address(0)
    for i in range(3):
        res = await h.run(h.h2c, [Segment(sa, 0, 512), Segment(sa + 512, 512, 512)])
        check_ok(res, 2, f"H2C run {i}")
        await h.tb.wait_cycles(200)
        assert h.tb.msi_count[0] == 1, f"run {i}: {h.tb.msi_count[0]} MSIs"
    res = await h.run(h.h2c, [Segment(sa, 0, 512)], interrupt=False)
    check_ok(res, 1, "H2C masked")
    await h.tb.wait_cycles(200)
    assert sum(h.tb.msi_count) == 0


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_concurrent_h2c_c2h(dut):
    """H2C and C2H channels running at the same time on separate card regions."""
    h = await setup(dut)
    half = h.ram_size // 2
    n = min(half, 16384)
    src = h.tb.alloc_host(2 * n)
    out = h.tb.alloc_host(n + 2 * PAGE)
    data_a, data_b = pattern(n, 21), pattern(n, 22)
    src[0:n] = data_a
    src[n : 2 * n] = data_b
    out[0 : n + 2 * PAGE] = bytes([GUARD]) * (n + 2 * PAGE)
    sa, oa = src.get_absolute_address(0), out.get_absolute_address(0)
    res = await h.run(h.h2c, [Segment(sa, half, n)])
    check_ok(res, 1, "preload")
    chain_in = h.place_chain([Segment(sa + n + i, i, 1024) for i in range(0, n, 1024)])
    chain_out = h.place_chain([Segment(half + i, oa + PAGE + i, 1024) for i in range(0, n, 1024)])
    h.tb.clear_msi()
    t_in = cocotb.start_soon(h.h2c.run(chain_in))
    t_out = cocotb.start_soon(h.c2h.run(chain_out))
    r_in, r_out = await t_in, await t_out
    for ch, r in ((h.h2c, r_in), (h.c2h, r_out)):
        if r.timed_out:
            h.snapshot(ch)
    check_ok(r_in, n // 1024, "H2C")
    check_ok(r_out, n // 1024, "C2H")
    got = bytes(out[0 : n + 2 * PAGE])
    assert got[PAGE : PAGE + n] == data_a
    assert got[:PAGE] == bytes([GUARD]) * PAGE and got[PAGE + n :] == bytes([GUARD]) * PAGE
    await roundtrip(h, [(0, 0, n)], seed=23)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_bad_magic(dut):
    """A descriptor with bad magic stops the channel (magic_stopped), nothing is written."""
    h = await setup(dut)
    src = h.tb.alloc_host(PAGE)
    dst = h.tb.alloc_host(PAGE)
    dst[0:PAGE] = bytes([GUARD]) * PAGE
    sa, da = src.get_absolute_address(0), dst.get_absolute_address(0)
    res = await h.run(h.h2c, [Segment(sa, 0, 512)])
    check_ok(res, 1, "H2C")
    chain = h.place_chain([Segment(0, da, 256), Segment(256, da + 256, 256)])
    chain.descriptors[1].magic = 0xAD4C
    h.write_chain(chain)
    res = await h.c2h.run(chain)
    assert not res.timed_out
    assert res.status & Stat.MAGIC_STOPPED
    assert res.completed_count == 1
    assert bytes(dst[256:PAGE]) == bytes([GUARD]) * (PAGE - 256), "bad descriptor executed"
    # bad magic on the first descriptor: nothing at all
    dst[0:PAGE] = bytes([GUARD]) * PAGE
    chain.descriptors[0].magic = 0
    h.write_chain(chain)
    res = await h.c2h.run(chain)
    assert res.status & Stat.MAGIC_STOPPED and res.completed_count == 0
    assert bytes(dst[0:PAGE]) == bytes([GUARD]) * PAGE
    await recover(h)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_unmapped_read(dut):
    """H2C from an unmapped host address: UR -> read_error, channel stops, Run toggle recovers."""
    h = await setup(dut)
    res = await h.run(h.h2c, [Segment(UNMAPPED_HOST, 0, 1000)])
    assert not res.timed_out
    assert regs.STAT_READ_ERROR.get(res.status) == PcieErr.UNSUPPORTED_REQUEST
    assert res.completed_count == 0
    await recover(h)
    # error in the middle of a chain: the first descriptor counts, the rest does not run
    src = h.tb.alloc_host(PAGE)
    sa = src.get_absolute_address(0)
    res = await h.run(
        h.h2c, [Segment(sa, 0, 256), Segment(UNMAPPED_HOST, 256, 256), Segment(sa, 512, 256)]
    )
    assert regs.STAT_READ_ERROR.get(res.status) == PcieErr.UNSUPPORTED_REQUEST
    assert res.completed_count == 1
    await recover(h)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_descriptor_fetch_error(dut):
    """A descriptor address that does not decode: UR -> descr_error; misaligned: align_mismatch."""
    h = await setup(dut)
    chain = build_chain([Segment(0, 0, 64)], UNMAPPED_HOST)
    res = await h.h2c.run(chain)
    assert regs.STAT_DESC_ERROR.get(res.status) == PcieErr.UNSUPPORTED_REQUEST
    assert res.completed_count == 0
    await recover(h)
    good = h.place_chain([Segment(0, 0, 64)])
    good.addresses[0] += 8
    res = await h.c2h.run(good)
    assert res.status & Stat.ALIGN_MISMATCH
    await recover(h)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_card_out_of_range(dut):
    """Card addresses beyond card RAM: H2C write_error decode, C2H read_error decode."""
    h = await setup(dut)
    src = h.tb.alloc_host(PAGE)
    dst = h.tb.alloc_host(PAGE)
    dst[0:PAGE] = bytes([GUARD]) * PAGE
    sa, da = src.get_absolute_address(0), dst.get_absolute_address(0)
    res = await h.run(h.h2c, [Segment(sa, h.ram_size - 10, 11)])
    assert regs.STAT_WRITE_ERROR.get(res.status) == AxiErr.DECODE
    assert res.completed_count == 0
    await recover(h)
    res = await h.run(h.c2h, [Segment(h.ram_size, da, 4)])
    assert regs.STAT_READ_ERROR.get(res.status) == AxiErr.DECODE
    assert bytes(dst[0:PAGE]) == bytes([GUARD]) * PAGE
    res = await h.run(h.c2h, [Segment(1 << 40, da, 4)])
    assert regs.STAT_READ_ERROR.get(res.status) == AxiErr.DECODE
    await recover(h)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_zero_length(dut):
    """A zero-length descriptor stops the channel with invalid_length."""
    h = await setup(dut)
    chain = h.place_chain([Segment(0, 0, 1)])
    chain.descriptors[0].length = 0
    h.write_chain(chain)
    res = await h.h2c.run(chain)
    assert res.status & Stat.INVALID_LENGTH and res.completed_count == 0
    await recover(h)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_user_interrupts(dut):
    """usr_irq_req/usr_irq_ack as PG195: an enabled request held high sends one MSI on the
    vector its user vector field holds and its ack pulses once; a request not enabled
    waits (seen in the request register, not in pending) and goes out when enabled; a
    request must fall before it interrupts again."""
    h = await setup(dut)
    tb = h.tb
    uirq = XdmaUserIrq(h.platform, count=len(dut.usr_irq_req))
    vectors = {i: 8 + i for i in range(uirq.count)}
    await uirq.set_vectors(vectors)
    assert await tb.dma_read32(regs.irq_reg(regs.IRQ_USER_VECTOR[3])) == 0x17161514
    acks = [0] * uirq.count
    req = 0

    async def count_acks() -> None:
        while True:
            await RisingEdge(tb.hip.user_clk)
            v = int(dut.usr_irq_ack.value)
            for i in range(uirq.count):
                acks[i] += v >> i & 1

    cocotb.start_soon(count_acks())

    def raise_irqs(mask: int) -> None:
        nonlocal req
        req |= mask
        dut.usr_irq_req.value = req

    def drop_irqs(mask: int) -> None:
        nonlocal req
        req &= ~mask
        dut.usr_irq_req.value = req

    async def settle(us: float = 3.0) -> None:
        await h.platform.sleep_ns(us * 1000)

    tb.clear_msi()
    await uirq.enable(1 << 0 | 1 << 5 | 1 << 15)
    raise_irqs(1 << 0 | 1 << 3 | 1 << 5)
    await settle()
    assert acks[0] == 1 and acks[5] == 1 and acks[3] == 0, f"acks {acks}"
    assert tb.msi_count[vectors[0]] == 1 and tb.msi_count[vectors[5]] == 1
    assert tb.msi_count[vectors[3]] == 0, "an interrupt not enabled was sent"
    assert await uirq.requests() == 1 << 0 | 1 << 3 | 1 << 5
    assert await uirq.pending() == 1 << 0 | 1 << 5
    await settle()
    assert acks[0] == 1 and tb.msi_count[vectors[0]] == 1, "a held request repeated"
    await uirq.enable(1 << 3)
    await settle()
    assert acks[3] == 1 and tb.msi_count[vectors[3]] == 1, "enabling did not send it"
    drop_irqs(1 << 0 | 1 << 3 | 1 << 5)
    await settle(0.2)
    raise_irqs(1 << 0 | 1 << 15)
    await settle()
    assert acks[0] == 2 and tb.msi_count[vectors[0]] == 2, "a new request was not sent"
    assert acks[15] == 1 and tb.msi_count[vectors[15]] == 1
    drop_irqs(1 << 0 | 1 << 15)
    await uirq.disable(0xFFFF)
    assert sum(acks) == 5 and sum(tb.msi_count) == 5, f"acks {acks}, MSI {tb.msi_count}"


def c2h_read_beats(segments: list[Segment], mps: int, lanes: int) -> int:
    """AXI read beats a C2H chain takes: one read per write TLP (split at the MPS
    boundaries of the destination), each covering its card bytes' bus words."""
    beats = 0
    for s in segments:
        pos = 0
        while pos < s.length:
            n = min(s.length - pos, mps - (s.dst + pos) % mps)
            beats += -(-((s.src + pos) % lanes + n) // lanes)
            pos += n
    return beats


async def read_perf(ch, lo: int, hi: int) -> tuple[int, bool]:
    """A 42-bit performance counter and its maxed flag."""
    low, high = await ch.read32(ch.reg(lo)), await ch.read32(ch.reg(hi))
    return regs.PERF_COUNT_HI.get(high) << 32 | low, bool(regs.PERF_MAXED.get(high))


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_performance_counters(dut):
    """PG195's performance monitor: in auto mode the cycle counter counts the cycles the
    channel is busy and the data counter its data beats (C2H: exactly the AXI read beats
    of its TLPs; H2C: the completion beats from PCIe), both cleared by Clear; a counter at
    its 42-bit maximum stops there with the maxed flag set."""
    h = await setup(dut)
    tb = h.tb
    lanes = tb.profile.width // 8
    src = tb.alloc_host(3 * PAGE)
    dst = tb.alloc_host(3 * PAGE)
    sa, da = src.get_absolute_address(0), dst.get_absolute_address(0)
    src[0 : 3 * PAGE] = pattern(3 * PAGE, 5)
    h2c_segs = [Segment(sa + 3, 5, 1000), Segment(sa + PAGE + 1, 2000, 3001)]
    c2h_segs = [Segment(7, da + 1, 1000), Segment(2001, da + PAGE + 99, 3000)]
    for ch, segs in ((h.h2c, h2c_segs), (h.c2h, c2h_segs)):
        ctrl = ch.reg(regs.CH_PERF_CTRL)
        await ch.write32(ctrl, int(regs.Perf.CLEAR))
        assert await read_perf(ch, regs.CH_PERF_CYC_LO, regs.CH_PERF_CYC_HI) == (0, False)
        assert await ch.read32(ctrl) & regs.Perf.CLEAR == 0, "Clear is self-clearing"
        t0 = h.platform.now_ns()
        res = await h.run(ch, segs)
        elapsed = h.platform.now_ns() - t0
        check_ok(res, len(segs), ch.name)
        cycles, cmax = await read_perf(ch, regs.CH_PERF_CYC_LO, regs.CH_PERF_CYC_HI)
        beats, dmax = await read_perf(ch, regs.CH_PERF_DATA_LO, regs.CH_PERF_DATA_HI)
        total = sum(s.length for s in segs)
        assert not cmax and not dmax
        if ch is h.c2h:
            assert beats == c2h_read_beats(segs, tb.profile.mps, lanes), f"C2H beats {beats}"
        else:
            # at least the data's bus words; at most that plus two per 64-byte completion
            assert -(-total // lanes) <= beats <= total // lanes + 2 * -(-total // 64), beats
        assert beats <= cycles <= elapsed / tb.clock_period_ns, f"{cycles} cycles"
        # counting stops with the channel (auto), and Clear zeroes both counters
        await h.platform.sleep_ns(2000)
        assert await read_perf(ch, regs.CH_PERF_CYC_LO, regs.CH_PERF_CYC_HI) == (cycles, False)
        await ch.write32(ctrl, int(regs.Perf.CLEAR))
        assert await read_perf(ch, regs.CH_PERF_DATA_LO, regs.CH_PERF_DATA_HI) == (0, False)
    # a cycle counter one short of its maximum, running free (not auto): it reaches the
    # maximum, stops there, and flags it
    top = (1 << regs.PERF_COUNT_BITS) - 1
    engine(dut).regs_inst.perf[0].built.cyc_reg.value = top - 1
    await h.h2c.write32(h.h2c.reg(regs.CH_PERF_CTRL), int(regs.Perf.RUN))
    await h.platform.sleep_ns(1000)
    assert await read_perf(h.h2c, regs.CH_PERF_CYC_LO, regs.CH_PERF_CYC_HI) == (top, True)
    await h.h2c.write32(h.h2c.reg(regs.CH_PERF_CTRL), int(regs.Perf.CLEAR))
    assert await read_perf(h.h2c, regs.CH_PERF_CYC_LO, regs.CH_PERF_CYC_HI) == (0, False)


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_run_set_again_before_idle(dut):
    """Run cleared after a chain's first completion, a new chain programmed and Run set
    again while the channel is still busy with the old chain's descriptors in flight
    (software that restarts at once, without waiting for idle): the old chain's
    descriptors not started never run (PG195: clearing Run ends the chain after the
    descriptors in flight), and the new chain then runs whole from the first-descriptor
    registers, with the completed count counting its descriptors only."""
    h = await setup(dut)
    tb, ch = h.tb, h.h2c
    n_old, n_new, size = 12, 6, 2048
    src = tb.alloc_host((n_old + n_new) * size)
    old_data, new_data = pattern(n_old * size, 81), pattern(n_new * size, 82)
    src[0 : n_old * size] = old_data
    src[n_old * size : (n_old + n_new) * size] = new_data
    sa = src.get_absolute_address(0)
    old_card, new_card = 0, 32 * 1024
    before = h.card_image().tobytes()
    old = h.place_chain([Segment(sa + i * size, old_card + i * size, size) for i in range(n_old)])
    new = h.place_chain(
        [Segment(sa + (n_old + i) * size, new_card + i * size, size) for i in range(n_new)]
    )
    await ch.start(old, interrupt=False)
    for _ in range(1000):
        if await ch.completed_count() >= 1:
            break
    await tb.dma_write32(ch.reg(regs.CH_CONTROL_W1C), int(Ctrl.RUN))
    await tb.dma_write32(ch.sgreg(regs.SG_DESC_LO), new.first & 0xFFFFFFFF)
    await tb.dma_write32(ch.sgreg(regs.SG_DESC_HI), new.first >> 32)
    await tb.dma_write32(ch.sgreg(regs.SG_DESC_ADJ), new.first_adj)
    await tb.dma_write32(ch.reg(regs.CH_CONTROL_W1S), int(Ctrl.RUN))
    assert await ch.status() & Stat.BUSY, "idle before Run was set again: no race to test"
    await h.platform.sleep_ns(500_000)
    status = await ch.status()
    assert not status & Stat.BUSY and not status & regs.STAT_ERROR_MASK, regs.describe_status(
        status, Target.H2C
    )
    assert await ch.completed_count() == n_new, "the count is the new chain's"
    await ch.stop()
    image = h.card_image().tobytes()
    assert image[new_card : new_card + n_new * size] == new_data, "the new chain's data"
    ran = [
        image[i * size : (i + 1) * size] == old_data[i * size : (i + 1) * size]
        for i in range(n_old)
    ]
    untouched = [
        image[i * size : (i + 1) * size] == before[i * size : (i + 1) * size] for i in range(n_old)
    ]
    k = ran.index(False) if False in ran else n_old
    assert 1 <= k < n_old, f"{k} of the old chain's descriptors ran"
    assert all(untouched[k:]), f"old descriptors after the first {k} ran after Run was cleared"
