"""cocotb tests of fault handling and of the PCIe protocol checker.

Each fault has an expected outcome (status bits, completed count, card RAM contents) and is
followed by a good transfer in the same simulation.
"""

from __future__ import annotations

import itertools

import cocotb
import numpy as np
from cocotb.triggers import Timer, with_timeout
from cocotb.utils import get_sim_time
from cocotbext.pcie.core.caps import PciCapId
from cocotbext.pcie.core.tlp import Tlp, TlpType
from cocotbext.pcie.xilinx.us.tlp import Tlp_us

from driver_model import regs
from driver_model.desc import Segment
from driver_model.regs import Ctrl, PcieErr, Stat
from tb.env.backdoor import engine
from tb.env.faults import FAULT_STATUS, MALFORMED_KINDS, FaultRule, UpRule
from tb.env.harness import (
    Harness,
    Surface,
    check_ok,
    pattern,
    recover,
    roundtrip,
    segments,
    setup,
)
from tb.env.platform import PCI_EXP_DEVCTL2, PCI_EXP_DEVCTL2_COMP_TMOUT_DIS
from tb.env.system import TB
from tb.models.hardip import DEFAULT_CPL_TIMEOUT_NS
from tb.regress.scoreboard import Scoreboard

KIB = 1024


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_checker_sees_every_link(dut):
    """Host and peer traffic cross every link; the checker sees it and finds nothing wrong;
    the card RAM backdoor agrees with what H2C wrote."""
    h = await setup(dut)
    tb = h.tb
    seen: dict[tuple[str, str], int] = {}
    tb.links.add_observer(
        lambda link, d, tlp: seen.__setitem__((link, d), seen.get((link, d), 0) + 1)
    )
    sa, data = await h.host_source(3000, 1)
    res = await h.run(h.h2c, [Segment(sa, 100, 3000)])
    check_ok(res, 1, "H2C host")
    surf = Surface(tb, 256 * KIB)
    res = await h.run(h.h2c, segments(surf.chunks(60 * KIB, 8 * KIB), 8 * KIB, True))
    check_ok(res, len(surf.chunks(60 * KIB, 8 * KIB)), "H2C GPU")
    image = h.card_image()
    assert bytes(image[100:3100]) == data, "backdoor disagrees with the H2C data"
    assert bytes(image[8 * KIB : 16 * KIB]) == surf.read(60 * KIB, 8 * KIB)
    expected_links = {"fpga", "gpu"} | ({"switch"} if tb.switch is not None else set())
    for link in expected_links:
        for d in ("up", "down"):
            assert seen.get((link, d), 0) > 0, f"no TLP seen on {link} {d}: {seen}"
    assert tb.checker.violations == []
    assert tb.checker.outstanding("fpga") == [], tb.checker.outstanding("fpga")


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_checker_records_unexpected_completion(dut):
    """A completion nobody asked for is a violation the checker names; the engine ignores
    it (the hard IP flags its tag invalid) and keeps working."""
    h = await setup(dut, checker_mode="record")
    tb = h.tb
    tb.checker.violations.clear()
    await tb.dev.upstream_port.rx_handler(stray_completion(tb, tag=5))
    assert [v.rule for v in tb.checker.violations] == ["unexpected-completion"]
    assert "tag=5" in str(tb.checker.violations[0])
    await tb.wait_cycles(50)
    await recover(h)


@cocotb.test(timeout_time=5, timeout_unit="ms", expect_fail=True)
async def test_checker_fails_the_test(dut):
    """In its default mode a violation fails the running test (this test must fail)."""
    h = await setup(dut)
    await h.tb.dev.upstream_port.rx_handler(stray_completion(h.tb, tag=3))
    await Timer(1, "us")


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_checker_names_bad_requests_from_the_rtl(dut):
    """A request the RTL hands the hard IP that it cannot send is a violation the checker
    names with the link (fpga, rq: the hard IP's user interface) and the time, and the
    hard IP drops it and keeps working: a write whose payload is a DWORD short of its
    length field (a TLP joined or cut across a reset), one with a reserved address type,
    and a read whose tag is still outstanding. The engine moves data afterwards."""
    h = await setup(dut, checker_mode="record")
    tb = h.tb
    tb.checker.violations.clear()
    buf = tb.alloc_host(4096)
    addr = buf.get_absolute_address(0)

    def request(fmt_type: TlpType, tag: int, data: bytes = b"") -> Tlp_us:
        tlp = Tlp_us()
        tlp.fmt_type = fmt_type
        tlp.requester_id = tb.dev.functions[0].pcie_id
        tlp.tag = tag
        tlp.set_addr_be(addr, len(data) or 64)
        if data:
            tlp.set_data(data)
        return tlp

    short = request(TlpType.MEM_WRITE, 0, bytes(range(32))).pack_us_rq()
    del short.data[-1], short.parity[-1]
    tb.dev.rq_sink._sink_frame(short)
    await Timer(1, "us")
    assert bytes(buf[0:32]) == bytes(32), "the malformed write landed"
    # a write with the reserved Address Type 3
    reserved = request(TlpType.MEM_WRITE, 0, bytes(range(32))).pack_us_rq()
    reserved.data[0] |= 3
    tb.dev.rq_sink._sink_frame(reserved)
    await Timer(1, "us")
    assert bytes(buf[0:32]) == bytes(32), "the write with a reserved address type landed"
    # a message (request type 12) and the reserved request type 15, which the model
    # names rather than stopping at
    for kind in (12, 15):
        frame = request(TlpType.MEM_READ, 1).pack_us_rq()
        frame.data[2] = frame.data[2] & ~(0xF << 11) | kind << 11
        tb.dev.rq_sink._sink_frame(frame)
    await Timer(1, "us")
    # tag 9 stays outstanding (its completions held), then a read asks for tag 9 again
    tb.faults.add(FaultRule("hold", target="host", count=0))
    tb.dev.rq_sink._sink_frame(request(TlpType.MEM_READ, 9).pack_us_rq())
    await Timer(1, "us")
    assert tb.dev.active_request[9] is not None
    tb.dev.rq_sink._sink_frame(request(TlpType.MEM_READ, 9).pack_us_rq())
    await Timer(1, "us")
    found = tb.checker.violations
    assert [(v.link, v.direction, v.rule) for v in found] == [
        ("fpga", "rq", "rq-malformed"),
        ("fpga", "rq", "rq-malformed"),
        ("fpga", "rq", "rq-unsupported"),
        ("fpga", "rq", "rq-malformed"),
        ("fpga", "rq", "tag-in-use"),
    ], found
    assert "request type 12 (a message)" in found[2].message
    assert "request type 15 (reserved)" in found[3].message
    assert all(v.time_ns > 0 and f"at {v.time_ns:.1f} ns" in str(v) for v in found)
    assert "tag 9 reused" in found[4].message
    tb.faults.clear()
    await tb.faults.release_held()
    await Timer(2, "us")
    assert tb.dev.active_request[9] is None
    await recover(h)


def stray_completion(tb: TB, tag: int) -> Tlp:
    cpl = Tlp()
    cpl.fmt_type = TlpType.CPL_DATA
    cpl.requester_id = tb.dev.functions[0].pcie_id
    cpl.tag = tag
    cpl.byte_count = 4
    cpl.set_data(b"\x11\x22\x33\x44")
    return cpl


async def h2c_with_fault(h: Harness, rule: FaultRule, source: str, surf: Surface | None):
    """Four 1 KiB H2C descriptors (two reads each); ``rule`` hits the third data read, in
    descriptor 1. Returns the result and the source bytes."""
    if source == "gpu":
        off = 64 * KIB - 2 * KIB  # across a 64 KiB GPU page boundary
        segs = [Segment(a, c, n) for a, c, n in split_kib(surf.chunks(off, 4 * KIB))]
        data = surf.read(off, 4 * KIB)
    else:
        sa, data = await h.host_source(4 * KIB, 7)
        segs = [Segment(sa + i * KIB, i * KIB, KIB) for i in range(4)]
    h.tb.faults.add(rule)
    res = await h.run(h.h2c, segs)
    h.tb.faults.clear()
    return res, data


def split_kib(chunks: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    out, card = [], 0
    for addr, n in chunks:
        for o in range(0, n, KIB):
            out.append((addr + o, card, min(KIB, n - o)))
            card += min(KIB, n - o)
    return out


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_completion_faults(dut):
    """UR, CA, poisoned and dropped completions on data reads from host memory and from GPU
    BAR1: read_error names the fault, descriptors before it complete and land, the rest
    do not run, and a good transfer follows."""
    h = await setup(dut)
    surf = Surface(h.tb, 256 * KIB)
    for source in ("host", "gpu"):
        for kind, bits in FAULT_STATUS.items():
            rule = FaultRule(kind, target=source, skip=2)
            before = h.card_image()
            res, data = await h2c_with_fault(h, rule, source, surf)
            what = f"{kind} on {source}"
            assert rule.fired == 1, f"{what}: the fault did not fire"
            assert not res.timed_out, f"{what}: timed out"
            assert regs.STAT_READ_ERROR.get(res.status) == bits, (
                f"{what}: status {res.status:#010x} "
                f"({regs.describe_status(res.status, regs.Target.H2C)})"
            )
            assert res.completed_count == 1, f"{what}: count {res.completed_count}"
            after = h.card_image()
            assert bytes(after[0:KIB]) == data[0:KIB], f"{what}: descriptor 0 not landed"
            # descriptors from the faulted one on may have landed in part (reads were in
            # flight when the fault came), with the right bytes only; nothing else changed
            src = np.frombuffer(data, dtype=np.uint8)
            maybe = (after[KIB : 4 * KIB] == before[KIB : 4 * KIB]) | (
                after[KIB : 4 * KIB] == src[KIB:]
            )
            assert maybe.all(), f"{what}: wrong bytes in the aborted descriptors' range"
            assert (after[4 * KIB :] == before[4 * KIB :]).all(), (
                f"{what}: the card changed outside the chain's destinations"
            )
            await recover(h)
    assert h.tb.dev.cpl_timeouts == 2, "each dropped completion ends in one hard-IP timeout"


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_completion_timeout_follows_device_control_2(dut):
    """The hard IP ends a read whose completion never comes after the timeout Device
    Control 2 selects: the default range's (the model's 200 us), range A's 50 us, and
    none with Completion Timeout Disable, where the engine's own timeout
    (CPL_TIMEOUT_CYCLES) ends it instead. Each time the engine reports the read as
    failed (read_error 'unexpected completion') and recovers. In the last case the
    completion then arrives late: the engine kept the tag out of use until it came,
    writes none of it, and frees the tag."""
    h = await setup(dut)
    tb = h.tb
    exp = tb.pci.get_capability_offset(PciCapId.EXP)
    devctl2 = await tb.pci.config_read_word(exp + PCI_EXP_DEVCTL2)
    ended: list[float] = []
    tb.dev.timeout_listeners.append(lambda rid, tag: ended.append(get_sim_time("ns")))
    engine_timeout_ns = tb.profile.cpl_timeout_cycles * tb.clock_period_ns
    for value, want_ns in ((0x0, DEFAULT_CPL_TIMEOUT_NS), (0x1, 50_000.0), (None, None)):
        what = "disabled" if value is None else f"value {value:#x}"
        setting = devctl2 | PCI_EXP_DEVCTL2_COMP_TMOUT_DIS if value is None else value
        await tb.pci.config_write_word(exp + PCI_EXP_DEVCTL2, setting)
        ended.clear()
        rule = FaultRule("drop" if want_ns else "hold", target="host", skip=2)
        res, _ = await h2c_with_fault_timed(h, rule, timeout_ns=3 * engine_timeout_ns)
        assert rule.fired == 1, f"{what}: the fault did not fire"
        assert not res.timed_out, f"{what}: the engine never gave the read up"
        assert regs.STAT_READ_ERROR.get(res.status) == PcieErr.UNEXPECTED_COMPLETION, (
            f"{what}: status {res.status:#010x}"
        )
        dropped_at = tb.faults.injected[-1].time_ns
        if want_ns is None:
            assert not ended, f"{what}: the hard IP timed the read out"
            assert res.elapsed_ns >= engine_timeout_ns, f"{what}: ended after {res.elapsed_ns}"
            rc_rx = engine(tb.dut).rc_rx_inst
            assert int(rc_rx.dead_reg.value) != 0, "the timed-out tag was free for reuse"
            card = h.card_image()
            assert await tb.faults.release_held() >= 1
            await Timer(5, "us")
            assert (h.card_image() == card).all(), f"{what}: the late completion landed"
            assert int(rc_rx.dead_reg.value) == 0, "the late completion did not free the tag"
        else:
            assert len(ended) == 1, f"{what}: {len(ended)} hard-IP timeouts"
            # timed from the request, checked 8 times per timeout period
            waited = ended[0] - dropped_at
            assert want_ns - 10_000 <= waited <= want_ns * 1.125 + 1_000, f"{what}: {waited}"
        await recover(h)
    await tb.pci.config_write_word(exp + PCI_EXP_DEVCTL2, devctl2)


async def h2c_with_fault_timed(h: Harness, rule: FaultRule, timeout_ns: float):
    """Like :func:`h2c_with_fault` from host memory, with a chain timeout of its own."""
    sa, data = await h.host_source(4 * KIB, 7)
    segs = [Segment(sa + i * KIB, i * KIB, KIB) for i in range(4)]
    h.tb.faults.add(rule)
    res = await h.run(h.h2c, segs, timeout_ns=timeout_ns)
    h.tb.faults.clear()
    return res, data


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_malformed_completions(dut):
    """Completions with a wrong byte count, lower address or length, or answering another
    requester, on data reads from host memory and GPU BAR1: the hard IP's checks or the
    engine's (each completion continues its request where the last ended, with the
    bytes that remain) flag them as 'unexpected completion'; no wrong byte reaches the
    card, and a good transfer follows. The protocol checker names each one."""
    h = await setup(dut, checker_mode="record")
    surf = Surface(h.tb, 256 * KIB)
    for source in ("host", "gpu"):
        for kind in MALFORMED_KINDS:
            seen = len(h.tb.checker.violations)
            rule = FaultRule(kind, target=source, skip=2)
            before = h.card_image()
            res, data = await h2c_with_fault(h, rule, source, surf)
            what = f"{kind} on {source}"
            assert rule.fired == 1, f"{what}: the fault did not fire"
            assert not res.timed_out, f"{what}: timed out"
            assert regs.STAT_READ_ERROR.get(res.status) == PcieErr.UNEXPECTED_COMPLETION, (
                f"{what}: status {res.status:#010x}"
            )
            assert res.completed_count == 1, f"{what}: count {res.completed_count}"
            after = h.card_image()
            src = np.frombuffer(data, dtype=np.uint8)
            assert bytes(after[0:KIB]) == data[0:KIB], f"{what}: descriptor 0 not landed"
            maybe = (after[KIB : 4 * KIB] == before[KIB : 4 * KIB]) | (
                after[KIB : 4 * KIB] == src[KIB:]
            )
            assert maybe.all(), f"{what}: a wrong byte reached the card"
            assert (after[4 * KIB :] == before[4 * KIB :]).all(), f"{what}: outside changed"
            rules = {v.rule for v in h.tb.checker.violations[seen:]}
            assert rules, f"{what}: the protocol checker saw nothing wrong"
            h.tb.log.info("%s: the checker flagged %s", what, sorted(rules))
            await recover(h)


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_posted_write_faults(dut):
    """The FPGA's posted writes dropped or poisoned on the way, C2H to host memory and to
    GPU BAR1. Posted writes have no completion: the engine reports success. A dropped
    write leaves exactly its bytes old. A poisoned one is the completer's business: the
    host (cocotbext's root complex) stores its data, the GPU model discards it and logs
    it. The scoreboard sees nothing else change; a good transfer follows."""
    h = await setup(dut)
    tb = h.tb
    surf = Surface(tb, 256 * KIB)
    card_data = pattern(4 * KIB, 21 * 1000)  # what roundtrip(seed=21) puts at card 0
    for target in ("host", "gpu"):
        for kind in ("drop", "poison"):
            what = f"{kind} of a C2H write to {target}"
            await roundtrip(h, [(0, 0, 4 * KIB)], seed=21)
            if target == "host":
                buf = tb.alloc_host(4 * KIB)
                buf[0 : 4 * KIB] = bytes([0xA5]) * (4 * KIB)
                chunks = [(buf.get_absolute_address(0), 4 * KIB)]

                def read_back(buf=buf) -> bytes:
                    return bytes(buf[0 : 4 * KIB])
            else:
                off = 64 * KIB - 2 * KIB  # across a GPU page boundary
                tb.cuda.cudaMemset(surf.va + off, 0xA5, 4 * KIB)
                chunks = surf.chunks(off, 4 * KIB)

                def read_back(off=off) -> bytes:
                    return surf.read(off, 4 * KIB)

            faults_before = len(tb.gpu.fault_log)
            rule = tb.up_faults.add(UpRule(kind, "write", target=target, skip=3))
            res = await h.run(h.c2h, segments(chunks, 0, False))
            tb.up_faults.clear()
            check_ok(res, len(chunks), what)
            assert rule.fired == 1, f"{what}: did not fire"
            hit = tb.up_faults.injected[-1]
            lost = kind == "drop" or target == "gpu"
            want = bytearray(card_data)
            if lost:
                lo = offset_in(chunks, hit.address)
                want[lo : lo + hit.nbytes] = bytes([0xA5]) * hit.nbytes
            assert read_back() == bytes(want), f"{what}: not exactly the write's bytes differ"
            if target == "gpu" and kind == "poison":
                assert len(tb.gpu.fault_log) == faults_before + 1
                assert "poisoned" in tb.gpu.fault_log[-1].reason, tb.gpu.fault_log[-1]
            tb.log.info("%s: the completer %s the data", what, "lost" if lost else "stored")
            await recover(h)


def offset_in(chunks: list[tuple[int, int]], addr: int) -> int:
    """The transfer offset of bus address ``addr`` in a scatter list."""
    pos = 0
    for base, n in chunks:
        if base <= addr < base + n:
            return pos + addr - base
        pos += n
    raise AssertionError(f"{addr:#x} is not in the transfer")


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_interrupt_failed_or_lost(dut):
    """The hard IP fails to send the MSI (cfg_interrupt_msi_fail), or the MSI write is
    dropped on the way: the chain is complete and its data landed, but no interrupt
    comes; the wait times out, the channel is found idle with every descriptor done, and
    the next transfer interrupts again."""
    h = await setup(dut)
    tb = h.tb
    for how in ("fail", "lost"):
        sa, data = await h.host_source(2 * KIB, 31)
        if how == "fail":
            tb.dev.fail_interrupts = 1
        else:
            rule = tb.up_faults.add(UpRule("drop", "write", target="msi"))
        failed = tb.dev.msi_failed
        res = await h.run(h.h2c, [Segment(sa, 0, 2 * KIB)], timeout_ns=50_000)
        tb.up_faults.clear()
        assert res.timed_out and not res.busy, f"{how}: {res}"
        assert res.completed_count == 1 and not res.errors, f"{how}: status {res.status:#x}"
        assert bytes(h.card_image()[: 2 * KIB]) == data, f"{how}: data"
        if how == "fail":
            assert tb.dev.msi_failed == failed + 1
        else:
            assert rule.fired == 1
        await recover(h)


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_long_backpressure_and_credit_starvation(dut):
    """Long stalls: each hard-IP stream held for 5000 cycles (RQ and CC not ready, RC and
    CQ idle), then each direction of the FPGA's link starved of credit for 60 us (what
    it carries is held, so the sender runs out of credit and blocks). The transfers wait
    and then finish with every byte right; nothing times out."""
    h = await setup(dut)
    tb = h.tb
    period = tb.clock_period_ns
    streams = {
        "RQ": tb.dev.rq_sink,
        "CC": tb.dev.cc_sink,
        "RC": tb.dev.rc_source,
        "CQ": tb.dev.cq_source,
    }
    for i, (name, stream) in enumerate(streams.items()):
        stream.set_pause_generator(itertools.chain(itertools.repeat(1, 5000), itertools.repeat(0)))
        t0 = get_sim_time("ns")
        await roundtrip(h, [(3, 0, 8 * KIB)], seed=60 + i)
        assert get_sim_time("ns") - t0 > 5000 * period, f"{name}: the stall did not hold"
        stream.clear_pause_generator()
    for i, (name, stall) in enumerate((("down", tb.faults.stall), ("up", tb.up_faults.stall))):
        stall.start(60_000)
        t0 = get_sim_time("ns")
        await roundtrip(h, [(5, 0, 8 * KIB)], seed=70 + i)
        assert get_sim_time("ns") - t0 > 60_000, f"link {name}: the stall did not hold"
    assert tb.dev.cpl_timeouts == 0


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_descriptor_fetch_faults(dut):
    """Faults on descriptor fetches: descr_error names the fault, nothing moves."""
    h = await setup(dut)
    dst = h.tb.alloc_host(4 * KIB)
    dst[0 : 4 * KIB] = bytes(4 * KIB)
    da = dst.get_absolute_address(0)
    for kind, bits in FAULT_STATUS.items():
        for ch in (h.h2c, h.c2h):
            rule = h.tb.faults.add(FaultRule(kind, target="desc"))
            if ch is h.h2c:
                sa, _ = await h.host_source(KIB, 3)
                res = await h.run(ch, [Segment(sa, 0, KIB)])
            else:
                dst[0 : 4 * KIB] = bytes(4 * KIB)
                res = await h.run(ch, [Segment(0, da, KIB)])
            h.tb.faults.clear()
            what = f"{kind} on {ch.direction.name} descriptor fetch"
            assert rule.fired == 1, f"{what}: did not fire"
            assert regs.STAT_DESC_ERROR.get(res.status) == bits, f"{what}: {res.status:#x}"
            assert res.completed_count == 0
            if ch is h.c2h:
                assert bytes(dst[0 : 4 * KIB]) == bytes(4 * KIB), f"{what}: data moved"
            await recover(h)


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_split_reorder_and_latency(dut):
    """Completions split at every 64 B boundary and delivered out of order across tags, then
    completions held for random times: the data lands right, in both directions at once."""
    h = await setup(dut)
    for rule in (FaultRule("split", count=0), FaultRule("latency", count=0, max_delay_ns=3000)):
        h.tb.faults.add(rule)
        sa, data = await h.host_source(24 * KIB, 11)
        # odd offsets and lengths, several reads in flight
        pieces = [
            (sa + 3, 5, 6 * KIB + 1),
            (sa + 8 * KIB + 2, 8 * KIB, 7 * KIB - 3),
            (sa + 16 * KIB, 20 * KIB, 8 * KIB),
        ]
        res = await h.run(h.h2c, [Segment(a, c, n) for a, c, n in pieces])
        check_ok(res, 3, rule.kind)
        image = h.card_image()
        for a, c, n in pieces:
            assert bytes(image[c : c + n]) == data[a - sa : a - sa + n], f"{rule.kind}: {c:#x}"
        assert rule.fired > 6, f"{rule.kind}: fired only {rule.fired} times"
        h.tb.faults.clear()
    assert h.tb.checker.violations == []


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_bar1_revoked_mid_chain(dut):
    """cudaFree of a pinned surface while H2C reads it: later reads complete with UR, the
    descriptors before land; C2H writes to a revoked surface are dropped by the GPU."""
    h = await setup(dut)
    tb = h.tb
    surf = Surface(tb, 1024 * KIB)
    # sixteen 4 KiB descriptors, one per 64 KiB GPU page
    segs = []
    for i in range(16):
        ((addr, n),) = surf.chunks(i * 64 * KIB, 4 * KIB)
        segs.append(Segment(addr, i * 4 * KIB, n))
    expect = [surf.read(i * 64 * KIB, 4 * KIB) for i in range(16)]
    chain = h.place_chain(segs)
    tb.clear_msi()
    task = cocotb.start_soon(h.h2c.run(chain, timeout_ns=5e6))

    async def free_after_two() -> None:
        while await h.h2c.completed_count() < 2:
            await Timer(200, "ns")
        tb.cuda.cudaFree(surf.va)

    await with_timeout(free_after_two(), 2, "ms")
    res = await task
    assert surf.freed, "the free callback did not run"
    assert regs.STAT_READ_ERROR.get(res.status) == PcieErr.UNSUPPORTED_REQUEST, (
        f"status {res.status:#010x}"
    )
    assert 2 <= res.completed_count < 16, res.completed_count
    image = h.card_image()
    for i in range(res.completed_count):
        assert bytes(image[i * 4 * KIB : (i + 1) * 4 * KIB]) == expect[i], f"descriptor {i}"
    reads_refused = sum(1 for f in tb.gpu.fault_log if f.op == "read")
    assert reads_refused >= 1
    await recover(h)
    # C2H into a revoked surface: posted writes, dropped at the GPU; the engine completes
    victim = Surface(tb, 256 * KIB)
    chunks = victim.chunks(0, 8 * KIB)
    tb.cuda.cudaFree(victim.va)
    writes_before = sum(1 for f in tb.gpu.fault_log if f.op == "write")
    res = await h.run(h.c2h, segments(chunks, 0, False))
    check_ok(res, len(chunks), "C2H to revoked")
    assert sum(1 for f in tb.gpu.fault_log if f.op == "write") > writes_before
    await recover(h)


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_run_cleared_mid_chain(dut):
    """Clearing Run while a chain runs (the driver's engine stop): the channel drains what
    is in flight and goes idle with idle_stopped; completed descriptors landed, later ones
    never started; a new chain then runs normally."""
    h = await setup(dut)
    tb = h.tb
    n, size = 16, 4 * KIB
    sa0, old = await h.host_source(n * size, 21)
    res = await h.run(h.h2c, [Segment(sa0, 0, n * size)])
    check_ok(res, 1, "preload")
    sa, new = await h.host_source(n * size, 22)
    chain = h.place_chain([Segment(sa + i * size, i * size, size) for i in range(n)])
    await h.h2c.start(chain, interrupt=False)
    while await h.h2c.completed_count() < 2:
        await Timer(200, "ns")
    await tb.dma_write32(h.h2c.reg(regs.CH_CONTROL_W1C), int(Ctrl.RUN))

    async def idle() -> int:
        while (status := await h.h2c.status()) & Stat.BUSY:
            await Timer(200, "ns")
        return status

    status = await with_timeout(idle(), 1, "ms")
    count = await h.h2c.completed_count()
    assert status & Stat.IDLE_STOPPED, f"status {status:#010x}"
    assert not status & regs.STAT_ERROR_MASK
    assert 2 <= count < n, count
    image = h.card_image()
    assert bytes(image[: count * size]) == new[: count * size], "completed descriptors"
    assert bytes(image[count * size : n * size]) == old[count * size :], (
        "descriptors after the stop ran"
    )
    await recover(h)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_scoreboard_sees_silent_corruption(dut):
    """A completion byte flipped in the fabric: the engine reports success, and the
    scoreboard's whole-image check finds exactly that byte."""
    h = await setup(dut)
    sb = Scoreboard()
    sa, data = await h.host_source(3 * KIB, 31)
    sb.load("src", data)
    sb.load("card", h.card_image())
    sb.begin_step()
    sb.copy("src", 0, "card", 512, 3 * KIB, "done")
    rule = h.tb.faults.add(FaultRule("corrupt", target="host", skip=1))
    res = await h.run(h.h2c, [Segment(sa, 512, 3 * KIB)])
    check_ok(res, 1, "corrupted H2C")
    assert rule.fired == 1
    msg = sb.check("card", h.card_image())
    assert msg is not None and "1 byte(s) differ" in msg, msg
    flipped = h.tb.faults.injected[-1].address - sa  # first byte of the second read
    assert f"first at {512 + flipped:#x}" in msg, (msg, flipped)
