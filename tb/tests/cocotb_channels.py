"""cocotb tests of an engine built with several channels each way (the plan runs this
module on 2+2 and 4+4 channel builds of the card): the probe finds exactly the channels
built, every channel moves its own data at the same time as all the others, the PCIe
requester is shared fairly, each channel interrupts on its own MSI vector, and an error
on one channel leaves the others untouched. The builds have the MSI-X table: MSI-X
vectors per channel and per user interrupt, masking and the pending bits. Descriptor
prefetch is sized as PG195 says, on both builds' buffer sizes and fetch limits.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import RisingEdge
from cocotbext.pcie.core.caps import PciCapId

from driver_model import regs
from driver_model.desc import DESC_SIZE, Segment
from driver_model.regs import AxiErr, PcieErr, Target
from driver_model.xdma import (
    ChannelResult,
    Engine,
    WriteBack,
    XdmaChannel,
    XdmaMsix,
    XdmaUserIrq,
    probe_engines,
)
from tb.env.harness import GUARD, PAGE, UNMAPPED_HOST, Harness, check_ok, pattern, setup
from tb.env.link import COMPLETIONS, DOWN, MEM_READS, UP, ends_request

# each channel's chain: pieces of these lengths (times the scale) at odd offsets: several
# descriptors in flight per channel, partial first and last beats, and together about
# three times the data an H2C channel's share of the read tags covers, so the channels
# compete for tags
PIECES = (1500, 2048 + 13, 777, 4096 + 100, 3000)
REGION_UNIT = 16384  # the card bytes the unscaled pieces need (with their gaps)
REGION = 16384  # card bytes per channel in the error test


def chunks(region: int) -> list[tuple[int, int]]:
    """(offset, length) pieces of PIECES, scaled to a card region of ``region`` bytes,
    laid out with odd gaps."""
    out, pos = [], 3
    for n in PIECES:
        out.append((pos, n * (region // REGION_UNIT)))
        pos += out[-1][1] + 5
    assert pos <= region
    return out


async def start_all(runs: list[tuple[XdmaChannel, list[Segment]]], h: Harness):
    """Start every chain at the same moment (each channel programmed and running with its
    descriptor fetches halted, then one write releases them all); their results and when,
    after the release, each channel's last interrupt arrived (the engine's finishing
    order: the MMIO status reads that end each wait queue behind the data)."""
    tb = h.tb
    tb.clear_msi()
    msi_at: dict[int, float] = {}

    def stamp(vector: int):
        return lambda: msi_at.__setitem__(vector, h.platform.now_ns())

    stamps = [(ch.vector, stamp(ch.vector)) for ch, _ in runs]
    for vector, fn in stamps:
        tb.irq_handlers[vector].append(fn)
    sgc = regs.sgc_reg(regs.SGC_CONTROL)
    await tb.dma_write32(sgc, regs.SGC_CHANNELS_MASK)
    for ch, segs in runs:
        await ch.start(h.place_chain(segs))
    await tb.dma_write32(sgc, 0)
    await tb.dma_read32(sgc)
    t0 = h.platform.now_ns()
    ends: dict[int, float] = {}

    async def one(i: int, ch: XdmaChannel) -> ChannelResult:
        outcome = await ch.wait(t0 + 20e6)
        ends[i] = msi_at.get(ch.vector, h.platform.now_ns()) - t0
        return await ch.finish(outcome, t0)

    tasks = [cocotb.start_soon(one(i, ch)) for i, (ch, _) in enumerate(runs)]
    results = [await t for t in tasks]
    for vector, fn in stamps:
        tb.irq_handlers[vector].remove(fn)
    for (ch, _), r in zip(runs, results, strict=True):
        if r.timed_out:
            h.snapshot(ch)
    tb.log.info(
        "finished after (ns): %s",
        ", ".join(f"{ch.name} {ends[i]:.0f}" for i, (ch, _) in enumerate(runs)),
    )
    return results, [ends[i] for i in range(len(runs))]


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_probe(dut):
    """A libxdma-style probe finds exactly the channels built; channels not built read as
    zero and ignore writes; the channel interrupt bits are one per channel."""
    h = await setup(dut)
    tb = h.tb
    nh, nc = h.h2c_channels, h.c2h_channels
    found = await probe_engines(h.platform)
    want = [Engine(Target.H2C, n, False) for n in range(nh)]
    want += [Engine(Target.C2H, n, False) for n in range(nc)]
    assert found == want, f"probe found {found}"
    for d, count in ((Target.H2C, nh), (Target.C2H, nc)):
        for n in range(count, 4):
            ctl = regs.ch_reg(d, regs.CH_CONTROL, n)
            await tb.dma_write32(ctl, 0xFFFFFFFF)
            await tb.dma_write32(regs.sg_reg(d, regs.SG_DESC_LO, n), 0x1000)
            assert await tb.dma_read32(ctl) == 0, f"{d.name}{n} control"
            assert await tb.dma_read32(regs.sg_reg(d, regs.SG_DESC_LO, n)) == 0
            assert await tb.dma_read32(regs.ch_reg(d, regs.CH_IDENTIFIER, n)) == 0
        for n in range(count):
            ch = XdmaChannel(h.platform, d, n, h2c_channels=nh)
            await ch.identify()
            # the registers are the channel's own: a write to one shows in no other
            await tb.dma_write32(ch.reg(regs.CH_POLL_WB_LO), 0x100 * (n + 1) + int(d) * 0x10)
    for d, count in ((Target.H2C, nh), (Target.C2H, nc)):
        for n in range(count):
            got = await tb.dma_read32(regs.ch_reg(d, regs.CH_POLL_WB_LO, n))
            assert got == 0x100 * (n + 1) + int(d) * 0x10, f"{d.name}{n} write-back address"
    await tb.dma_write32(regs.irq_reg(regs.IRQ_CHAN_INT_EN), 0xFFFFFFFF)
    assert await tb.dma_read32(regs.irq_reg(regs.IRQ_CHAN_INT_EN)) == (1 << (nh + nc)) - 1
    await tb.dma_write32(regs.irq_reg(regs.IRQ_CHAN_INT_EN), 0)
    # the halt bits of each direction's channels stop that channel's fetches only
    halt = regs.SGC_H2C_DESC_HALT.put((1 << nh) - 1) | regs.SGC_C2H_DESC_HALT.put((1 << nc) - 1)
    await tb.dma_write32(regs.sgc_reg(regs.SGC_CONTROL), halt)
    assert await tb.dma_read32(regs.sgc_reg(regs.SGC_CONTROL)) & halt == halt
    await tb.dma_write32(regs.sgc_reg(regs.SGC_CONTROL), 0)


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_all_channels_at_once(dut):
    """Every H2C channel fills its own card region while, next, every C2H channel reads a
    region back at the same time as the H2C channels write new ones: all data checked
    with guards, each channel interrupting on its own vector, equal chains finishing
    close together (round-robin, not priority)."""
    h = await setup(dut)
    tb = h.tb
    chans = await h.all_channels()
    h2c = [c for c in chans if c.direction == Target.H2C]
    c2h = [c for c in chans if c.direction == Target.C2H]
    # half of the card RAM for each phase, a region per H2C channel
    region_size = h.ram_size // (2 * len(h2c))
    assert region_size >= REGION_UNIT, "the build needs more card RAM"
    pieces = chunks(region_size)
    src = tb.alloc_host(h.ram_size)
    sa = src.get_absolute_address(0)
    images: dict[int, bytes] = {}  # card region base -> its expected bytes

    def h2c_run(ch: XdmaChannel, region: int, seed: int):
        image = bytearray(region_size)
        segs = []
        for k, (off, n) in enumerate(pieces):
            data = pattern(n, seed * 100 + k)
            src[region + off : region + off + n] = data  # source laid out as the card
            segs.append(Segment(sa + region + off, region + off, n))
            image[off : off + n] = data
        images[region] = bytes(image)
        return ch, segs

    # phase 1: the H2C channels alone, regions 0..n-1
    runs = [h2c_run(ch, ch.channel * region_size, 10 + ch.channel) for ch in h2c]
    results, ends = await start_all(runs, h)
    for (ch, segs), r in zip(runs, results, strict=True):
        check_ok(r, len(segs), ch.name)
    # equal chains sharing the requester (and its read tags) finish together: under fixed
    # priority, or with one channel holding every tag, the first would finish in a
    # fraction of the last one's time
    assert max(ends) < 1.25 * min(ends), f"H2C finish times {ends} (ns)"
    card = h.card_image()
    for region, image in images.items():
        for off, n in pieces:
            got = bytes(card[region + off : region + off + n])
            assert got == image[off : off + n], f"card region {region:#x} piece {off:#x}"

    # phase 2: C2H channel n reads H2C channel n's region (modulo) while the H2C channels
    # write regions n..2n-1
    outs = []
    runs = []
    span = region_size + 2 * PAGE
    for ch in c2h:
        region = (ch.channel % len(h2c)) * region_size
        out = tb.alloc_host(span)
        out[0:span] = bytes([GUARD]) * span
        oa = out.get_absolute_address(PAGE)
        runs.append((ch, [Segment(region + off, oa + off, n) for off, n in pieces]))
        outs.append((ch, out, images[region]))
    phase2 = [(len(h2c) + ch.channel) * region_size for ch in h2c]
    runs += [h2c_run(ch, base, 20 + ch.channel) for ch, base in zip(h2c, phase2, strict=True)]
    results, ends = await start_all(runs, h)
    for (ch, segs), r in zip(runs, results, strict=True):
        check_ok(r, len(segs), ch.name)
    for ch, out, image in outs:
        got = bytes(out[0:span])
        for off, n in pieces:
            assert got[PAGE + off : PAGE + off + n] == image[off : off + n], f"{ch.name} data"
        assert got[:PAGE] == bytes([GUARD]) * PAGE, f"{ch.name} wrote before its buffer"
        assert got[PAGE + region_size :] == bytes([GUARD]) * PAGE, f"{ch.name} wrote past it"
        gaps = [(0, pieces[0][0])] + [
            (o + n, pieces[k + 1][0] if k + 1 < len(pieces) else region_size)
            for k, (o, n) in enumerate(pieces)
        ]
        for a, b in gaps:
            assert got[PAGE + a : PAGE + b] == bytes([GUARD]) * (b - a), f"{ch.name} gap {a:#x}"
    card = h.card_image()
    for ch, region in zip(h2c, phase2, strict=True):
        for off, n in pieces:
            want = images[region][off : off + n]
            assert bytes(card[region + off : region + off + n]) == want, f"{ch.name} phase 2"
    # each channel's interrupts came on its own vector, and on no vector of none
    for ch in chans:
        assert tb.msi_count[ch.vector] >= 1, f"{ch.name}: no MSI on vector {ch.vector}"
    assert sum(tb.msi_count[len(chans) :]) == 0, f"MSI on unused vectors {tb.msi_count}"
    # the same both ways with every channel running
    h2c_ends = ends[len(c2h) :]
    assert max(h2c_ends) < 1.25 * min(h2c_ends), f"H2C finish times {h2c_ends} (ns)"
    c2h_ends = ends[: len(c2h)]
    assert max(c2h_ends) < 1.25 * min(c2h_ends), f"C2H finish times {c2h_ends} (ns)"


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_error_isolated_to_its_channel(dut):
    """One H2C channel reads an unmapped host address and one C2H channel reads past the
    card RAM (DECERR) while every other channel copies data: the two stop with their own
    error bits, the others finish with their data right, and both recover on a Run
    toggle."""
    h = await setup(dut)
    tb = h.tb
    chans = await h.all_channels()
    h2c = [c for c in chans if c.direction == Target.H2C]
    c2h = [c for c in chans if c.direction == Target.C2H]
    bad_h2c, bad_c2h = h2c[-1], c2h[-1]
    n = 3000
    src = tb.alloc_host(len(chans) * PAGE * 2)
    out = tb.alloc_host(len(chans) * PAGE * 2)
    sa, oa = src.get_absolute_address(0), out.get_absolute_address(0)
    out[0 : len(chans) * PAGE * 2] = bytes([GUARD]) * (len(chans) * PAGE * 2)
    runs, expect = [], []
    for i, ch in enumerate(chans):
        card = i * REGION
        if ch is bad_h2c:
            segs = [Segment(UNMAPPED_HOST, card, n)]
        elif ch is bad_c2h:
            segs = [Segment(h.ram_size + 64, oa + 2 * i * PAGE, 512)]
        elif ch.direction == Target.H2C:
            data = pattern(n, 40 + i)
            src[2 * i * PAGE : 2 * i * PAGE + n] = data
            segs = [Segment(sa + 2 * i * PAGE, card, n)]
            expect.append((ch, card, data))
        else:
            # read back what the setup wrote there
            data = pattern(n, 60 + i)
            src[2 * i * PAGE : 2 * i * PAGE + n] = data
            setup_ch = h2c[0]
            r = await setup_ch.run(h.place_chain([Segment(sa + 2 * i * PAGE, card, n)]))
            check_ok(r, 1, "setup")
            segs = [Segment(card, oa + 2 * i * PAGE, n)]
            expect.append((ch, 2 * i * PAGE, data))
        runs.append((ch, segs))
    results, _ = await start_all(runs, h)
    for (ch, _segs), r in zip(runs, results, strict=True):
        if ch is bad_h2c:
            assert not r.timed_out
            assert regs.STAT_READ_ERROR.get(r.status) == PcieErr.UNSUPPORTED_REQUEST, (
                f"{ch.name}: {regs.describe_status(r.status, ch.direction)}"
            )
        elif ch is bad_c2h:
            assert not r.timed_out
            assert regs.STAT_READ_ERROR.get(r.status) == AxiErr.DECODE, (
                f"{ch.name}: {regs.describe_status(r.status, ch.direction)}"
            )
        else:
            check_ok(r, 1, ch.name)
    card_img = h.card_image()
    for ch, where, data in expect:
        if ch.direction == Target.H2C:
            assert bytes(card_img[where : where + n]) == data, f"{ch.name} card data"
        else:
            assert bytes(out[where : where + n]) == data, f"{ch.name} host data"
    # the failed C2H channel wrote nothing of its failed read
    i = chans.index(bad_c2h)
    assert bytes(out[2 * i * PAGE : 2 * i * PAGE + 512]) == bytes([GUARD]) * 512
    # both recover on a fresh chain
    data = pattern(n, 77)
    src[0:n] = data
    r = await bad_h2c.run(h.place_chain([Segment(sa, 0, n)]))
    check_ok(r, 1, f"{bad_h2c.name} after its error")
    r = await bad_c2h.run(h.place_chain([Segment(0, oa + 2 * i * PAGE, n)]))
    check_ok(r, 1, f"{bad_c2h.name} after its error")
    assert bytes(out[2 * i * PAGE : 2 * i * PAGE + n]) == data


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_libxdma_style_poll_mode(dut):
    """The engine used as libxdma uses it: probe the channels, run every one at once in
    poll mode (libxdma's control value, bit 26 without ie_descriptor_completed), each
    waiting on its own write-back word, while the user logic raises a user interrupt that
    arrives on its vector and is acknowledged: all data and every write-back checked."""
    h = await setup(dut)
    tb = h.tb
    engines = await probe_engines(h.platform)
    chans = [
        XdmaChannel(h.platform, e.direction, e.channel, h2c_channels=h.h2c_channels)
        for e in engines
    ]
    uirq = XdmaUserIrq(h.platform, count=len(dut.usr_irq_req))
    user_vector = 20
    await uirq.set_vectors({0: user_vector})
    await uirq.enable(1)
    n = 2000
    src = tb.alloc_host(len(chans) * PAGE)
    out = tb.alloc_host(len(chans) * PAGE)
    wbs = tb.alloc_host(PAGE)
    sa, oa, wa = (b.get_absolute_address(0) for b in (src, out, wbs))
    wbs[0:PAGE] = b"\xff" * PAGE
    for i in range(len(chans)):  # what the C2H channels will read
        src[i * PAGE : i * PAGE + n] = pattern(n, 90 + i)
    setup_chain = h.place_chain([Segment(sa + i * PAGE, i * REGION, n) for i in range(len(chans))])
    check_ok(await h.h2c.run(setup_chain), len(chans), "setup")
    for i in range(len(chans)):  # what the H2C channels will write
        src[i * PAGE : i * PAGE + n] = pattern(n, 190 + i)
    tb.clear_msi()
    t0 = h.platform.now_ns()
    waits = []
    for i, ch in enumerate(chans):
        if ch.direction == Target.H2C:
            dst = i * REGION + REGION // 2  # beside what the C2H channels read
            segs = [Segment(sa + i * PAGE + k, dst + k, 500) for k in range(0, n, 500)]
        else:
            segs = [Segment(i * REGION + k, oa + i * PAGE + k, 500) for k in range(0, n, 500)]
        chain = h.place_chain(segs)
        word = wa + 16 * i
        await ch.start(
            chain, interrupt=False, poll_wb_addr=word, control=int(regs.LIBXDMA_POLL_CONTROL)
        )

        def reader(off: int = 16 * i) -> int:
            return int.from_bytes(bytes(wbs[off : off + 4]), "little")

        waits.append(
            cocotb.start_soon(
                ch.wait(
                    t0 + 20e6,
                    interrupt=False,
                    writeback=WriteBack(word, reader),
                    expected=len(segs),
                )
            )
        )
    dut.usr_irq_req.value = 1
    outcomes = [await w for w in waits]
    for _ in range(100):
        if int(dut.usr_irq_ack.value) or tb.msi_count[user_vector]:
            break
        await h.platform.sleep_ns(100)
    dut.usr_irq_req.value = 0
    for i, (ch, outcome) in enumerate(zip(chans, outcomes, strict=True)):
        res = await ch.finish(outcome, t0)
        check_ok(res, 4, f"{ch.name} (poll)")
        word = int.from_bytes(bytes(wbs[16 * i : 16 * i + 4]), "little")
        assert regs.WB_COUNT.get(word) == 4 and not regs.WB_ERROR.get(word), f"{word:#x}"
    card = h.card_image()
    for i, ch in enumerate(chans):
        if ch.direction == Target.H2C:
            base = i * REGION + REGION // 2
            assert bytes(card[base : base + n]) == pattern(n, 190 + i), f"{ch.name} data"
        else:
            assert bytes(out[i * PAGE : i * PAGE + n]) == pattern(n, 90 + i), f"{ch.name} data"
    assert tb.msi_count[user_vector] == 1, f"user interrupt MSIs {tb.msi_count}"
    assert sum(tb.msi_count) == 1, "a channel in poll mode interrupted"


# MSI-X Message Control (capability offset 2): Function Mask
MSIX_FUNCTION_MASK = 1 << 14


async def _until(h: Harness, cond, what: str, timeout_ns: float = 50_000.0) -> None:
    """Wait until ``cond()`` holds, at most ``timeout_ns``."""
    end = h.platform.now_ns() + timeout_ns
    while not cond():
        assert h.platform.now_ns() < end, f"timed out waiting for {what}"
        await h.platform.sleep_ns(100)


async def _user_irq(h: Harness, dut, irq: int, timeout_cycles: int = 10_000) -> None:
    """Raise user interrupt ``irq`` as user logic does: hold the request until its ack
    (a one-cycle pulse, sampled on every clock edge)."""
    clk = h.tb.hip.user_clk
    req = int(dut.usr_irq_req.value)
    dut.usr_irq_req.value = req | 1 << irq
    for _ in range(timeout_cycles):
        await RisingEdge(clk)
        if int(dut.usr_irq_ack.value) >> irq & 1:
            break
    else:
        raise AssertionError(f"no usr_irq_ack[{irq}] in {timeout_cycles} cycles")
    dut.usr_irq_req.value = req


async def _run_polled(h: Harness, ch: XdmaChannel, segs) -> ChannelResult:
    """Run a chain with the channel's interrupt enabled, waiting by polling its status
    (for a vector whose message is held back)."""
    chain = h.place_chain(segs)
    t0 = h.platform.now_ns()
    await ch.start(chain, interrupt=True)
    return await ch.finish(await ch.wait(t0 + 1e6, interrupt=False), t0)


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_msix(dut):
    """MSI-X as libxdma uses it: the host programs the engine's table (PG195, 0x8000) and
    enables MSI-X, not MSI; each channel interrupts on its own vector and each user
    interrupt on its own; a masked vector's message waits in the PBA (0x8FE0) and goes
    once when unmasked, user interrupts included; the function mask holds every vector;
    the message goes where the table entry says."""
    h = await setup(dut, irq="msix")
    tb = h.tb
    msix = XdmaMsix(h.platform)
    cfg = await tb.dma_read32(regs.cfg_reg(regs.CFG_MSI_ENABLE))
    assert regs.CFG_MSIX_FIELD.get(cfg) and not regs.CFG_MSI_FIELD.get(cfg), f"{cfg:#x}"
    assert int(dut.msix_enable.value) == 1 and int(dut.msi_enable.value) == 0
    # the table holds what the host wrote into it, every vector unmasked
    for v in range(regs.MSIX_VECTORS):
        want = tb.pci.msi_vectors[v]
        got = await msix.entry(v)
        assert (got.address, got.data, got.masked) == (want.addr, want.data, False), v
    assert await msix.pending() == 0
    assert await tb.dma_read32(regs.MSIX_PBA_OFFSET + 4) == 0

    # every channel on its own vector
    chans = await h.all_channels()
    src = tb.alloc_host(PAGE)
    out = tb.alloc_host(len(chans) * PAGE)
    sa, oa = src.get_absolute_address(0), out.get_absolute_address(0)
    data = pattern(1000, 7)
    src[0:1000] = data
    counts = [0] * regs.MSIX_VECTORS
    for i, ch in enumerate(chans):
        if ch.direction == Target.H2C:
            seg = Segment(sa, ch.channel * REGION, 1000)
        else:
            seg = Segment(0, oa + i * PAGE, 1000)
        check_ok(await h.run(ch, [seg]), 1, ch.name)
        await _until(h, lambda v=ch.vector: tb.msi_count[v] >= 1, f"{ch.name} vector")
        counts[ch.vector] += tb.msi_count[ch.vector]
        assert sum(tb.msi_count) == tb.msi_count[ch.vector], f"{ch.name}: {tb.msi_count}"
    for i, ch in enumerate(chans):
        if ch.direction == Target.C2H:
            assert bytes(out[i * PAGE : i * PAGE + 1000]) == data, f"{ch.name} data"

    # user interrupts 0-3 on vectors 16-19
    uirq = XdmaUserIrq(h.platform, count=len(dut.usr_irq_req))
    await uirq.set_vectors({u: 16 + u for u in range(4)})
    await uirq.enable(0xF)
    tb.clear_msi()
    for u in (0, 3):
        await _user_irq(h, dut, u)
        await _until(h, lambda u=u: tb.msi_count[16 + u] == 1, f"user {u} vector")
    assert sum(tb.msi_count) == 2, f"{tb.msi_count}"

    # a masked channel vector: the run ends (polled) with no message, the PBA holds it,
    # and unmasking sends it exactly once
    ch = chans[-1]
    await msix.mask(ch.vector)
    assert (await msix.entry(ch.vector)).masked
    tb.clear_msi()
    check_ok(await _run_polled(h, ch, [Segment(0, oa, 1000)]), 1, f"{ch.name} masked")
    assert sum(tb.msi_count) == 0, f"masked vector sent: {tb.msi_count}"
    assert await msix.pending() == 1 << ch.vector
    await msix.mask(ch.vector, False)
    await _until(h, lambda: tb.msi_count[ch.vector] == 1, "the pending message")
    assert await msix.pending() == 0
    await h.platform.sleep_ns(2000)
    assert sum(tb.msi_count) == 1, f"{tb.msi_count}"

    # a masked user vector: the request is acknowledged (logged pending), then delivered
    await msix.mask(17)
    tb.clear_msi()
    await _user_irq(h, dut, 1)
    await h.platform.sleep_ns(1000)
    assert tb.msi_count[17] == 0 and await msix.pending() == 1 << 17
    await msix.mask(17, False)
    await _until(h, lambda: tb.msi_count[17] == 1, "user 1 after unmask")
    assert await msix.pending() == 0

    # the function mask holds every vector; clearing it sends each pending one once
    ctrl = await tb.pci.capability_read_word(PciCapId.MSIX, 2)
    await tb.pci.capability_write_word(PciCapId.MSIX, 2, ctrl | MSIX_FUNCTION_MASK)
    tb.clear_msi()
    h2c = chans[0]
    check_ok(await _run_polled(h, h2c, [Segment(sa, 0, 1000)]), 1, "masked H2C")
    await _user_irq(h, dut, 2)
    await h.platform.sleep_ns(1000)
    assert sum(tb.msi_count) == 0, f"function masked, yet {tb.msi_count}"
    assert await msix.pending() == (1 << h2c.vector) | (1 << 18)
    await tb.pci.capability_write_word(PciCapId.MSIX, 2, ctrl)
    await _until(h, lambda: tb.msi_count[h2c.vector] == 1 and tb.msi_count[18] == 1, "unmask")
    assert await msix.pending() == 0
    await h.platform.sleep_ns(2000)
    assert sum(tb.msi_count) == 2, f"{tb.msi_count}"

    # the entry decides: user 3's entry carrying vector 30's message arrives on vector 30
    v30 = tb.pci.msi_vectors[30]
    await msix.program(19, v30.addr, v30.data)
    tb.clear_msi()
    await _user_irq(h, dut, 3)
    await _until(h, lambda: tb.msi_count[30] == 1, "vector 30")
    assert tb.msi_count[19] == 0


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_descriptor_prefetch(dut):
    """Descriptor fetches as PG195 sizes them: each read as many descriptors as the
    adjacent block, the free buffer space and MRRS allow (the first, into an empty
    buffer, exactly that), none across 4 KiB, every descriptor read once, in chain order;
    as many reads in flight as the build allows (DESC_FETCHES), and no more. MRRS is
    128 bytes here (4 descriptors), so the buffer (DESC_DEPTH) is never the limit."""
    h = await setup(dut)
    tb = h.tb
    p = tb.profile
    mrrs = 128
    await tb.program_device_control(p.mps, mrrs)
    per_read = mrrs // DESC_SIZE
    fetches = p.desc_fetches
    depth = p.desc_depth
    n = 120  # libxdma-style adjacency: blocks of up to 64 inside 2 KiB groups
    src = tb.alloc_host(PAGE)
    src[0:PAGE] = pattern(PAGE, 3)
    sa = src.get_absolute_address(0)
    segs = [Segment(sa + (i * 32) % PAGE, (i * 64) % h.ram_size, 32) for i in range(n)]
    # the chain starts 3 descriptors before a page's end: its first block is those 3
    chain = h.place_chain(segs, ring_offset=PAGE - 3 * DESC_SIZE)
    reads: list[tuple[int, int]] = []  # (address, bytes) of each descriptor fetch
    open_tags: set[int] = set()
    peak = 0
    lo, hi = chain.addresses[0], chain.addresses[-1] + DESC_SIZE

    def observe(link, direction, tlp):
        nonlocal peak
        if link != "fpga":
            return
        if direction == UP and tlp.fmt_type in MEM_READS and lo <= tlp.address < hi:
            reads.append((tlp.address, tlp.length * 4))
            open_tags.add(tlp.tag)
            peak = max(peak, len(open_tags))
        elif direction == DOWN and tlp.fmt_type in COMPLETIONS and tlp.tag in open_tags:
            if ends_request(tlp):
                open_tags.discard(tlp.tag)

    tb.links.add_observer(observe)
    try:
        check_ok(await h.h2c.run(chain, timeout_ns=5e6), n, "chain")
    finally:
        tb.links.remove_observer(observe)
        await tb.program_device_control(p.mps, p.mrrs)
    card = h.card_image()
    for seg in segs[-4:]:
        want = bytes(src[seg.src - sa : seg.src - sa + 32])
        assert bytes(card[seg.dst : seg.dst + 32]) == want, f"data at {seg.dst:#x}"

    # the adjacent blocks: (index of the block's first descriptor, its size)
    blocks, i, size = [], 0, chain.first_adj + 1
    while i < n:
        blocks.append((i, size))
        i += size
        if i < n:
            size = chain.descriptors[i - 1].nxt_adj + 1
    block_end = {k: start + size for start, size in blocks for k in range(start, start + size)}
    k = 0
    for addr, nbytes in reads:
        count = nbytes // DESC_SIZE
        assert nbytes % DESC_SIZE == 0 and count >= 1, f"read of {nbytes} bytes"
        assert addr == chain.addresses[k], f"read at {addr:#x}, descriptor {k} expected"
        assert k + count <= block_end[k], f"read of {count} at {k} leaves its block"
        assert count <= min(per_read, depth), f"read of {count} descriptors"
        assert addr // PAGE == (addr + nbytes - 1) // PAGE, f"read at {addr:#x} crosses 4 KiB"
        k += count
    assert k == n, f"{k} descriptors fetched of {n}: some twice or never"
    first = reads[0][1] // DESC_SIZE
    assert first == min(blocks[0][1], per_read, depth), f"first read of {first}"
    # a full block is read MRRS at a time while the buffer has room
    assert reads[1][1] == min(per_read, depth) * DESC_SIZE, f"second read {reads[1]}"
    assert peak == fetches, f"{peak} descriptor reads in flight at most, the build allows {fetches}"


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_msi_never_overtakes_its_data(dut):
    """An MSI is a posted write behind the writes the engine made (see
    :func:`_interrupt_behind_data`)."""
    await _interrupt_behind_data(dut, "msi")


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_msix_never_overtakes_its_data(dut):
    """An MSI-X message is a posted write behind the writes the engine made (see
    :func:`_interrupt_behind_data`)."""
    await _interrupt_behind_data(dut, "msix")


async def _interrupt_behind_data(dut, irq: str) -> None:
    """The moment a driver is woken by the interrupt, every byte of a C2H chain's data
    and its poll-mode write-back are in host memory. The chains are long (many writes
    queued at the core when the engine raises its interrupt) and run with back-pressure
    on RQ and idle cycles on RC, in several lengths, so the interrupt meets the writes at
    every stage of the core's pipeline."""
    h = await setup(dut, irq=irq)
    tb = h.tb
    chans = await h.all_channels()
    h2c = next(c for c in chans if c.direction == Target.H2C)
    c2h = next(c for c in chans if c.direction == Target.C2H)
    n = 16 << 10
    src, out, wb = tb.alloc_host(n), tb.alloc_host(n), tb.alloc_host(PAGE)
    sa, oa, wa = (r.get_absolute_address(0) for r in (src, out, wb))
    data = pattern(n, 11)
    src[0:n] = data
    check_ok(await h.run(h2c, [Segment(sa, 0, n)]), 1, "H2C")
    woken: list[tuple[int, bool, int]] = []

    def isr() -> None:  # the driver's view at the interrupt, in zero time
        length = woken_len[0]
        here = tb.peek_host(oa, length) == data[:length]
        woken.append((length, here, int.from_bytes(tb.peek_host(wa, 4), "little")))

    woken_len = [0]
    tb.irq_handlers[c2h.vector].append(isr)
    for i, length in enumerate((n, 4093, n - 60, 257)):
        tb.set_idle_backpressure(seed=i + 3, duty=0.4 if i % 2 else 0.0)
        out[0:n] = bytes(n)
        wb[0:4] = bytes(4)
        woken.clear()
        woken_len[0] = length
        segs = [Segment(0, oa, length)]
        check_ok(await h.run(c2h, segs, poll_wb_addr=wa), 1, f"C2H {length}")
        await _until(h, lambda: woken, f"the interrupt of C2H {length}")
        _, whole, count = woken[0]
        assert whole, f"{irq}: the interrupt of a {length}-byte C2H came before its data"
        assert count & 0xFFFF == 1, f"{irq}: the write-back read {count:#x} at the interrupt"
    tb.set_idle_backpressure(None)
    tb.irq_handlers[c2h.vector].remove(isr)
