"""The constrained-random regression: seeded chains over host memory, GPU BAR1 and the card,
with faults, checked whole by the numpy scoreboard, with functional coverage.

Environment: ``REGRESS_SEED`` (plan seed), ``REGRESS_STEPS``, ``REGRESS_MAX_LEN``,
``REGRESS_MAX_DESC``, ``REGRESS_COVERAGE`` (where to write this run's coverage JSON),
``REGRESS_NAME`` (the run's name in reports). The card RAM is the build's (the profile).
"""

from __future__ import annotations

import errno
import os
import random
from dataclasses import dataclass
from pathlib import Path

import cocotb
import numpy as np
from cocotb.triggers import Timer, with_timeout

from cuda_model import cudaMemcpyKind
from cuda_model.hostreg import cudaHostRegisterIoMemory
from cuda_model.runtime import CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD as DMA_BUF_FD
from cuda_model.streams import cudaStreamNonBlocking
from driver_model import regs, uapi
from driver_model.desc import DESC_SIZE, Segment, build_chain
from driver_model.regs import Ctrl, PcieErr, Stat, Target
from driver_model.xdma import Outcome, XdmaChannel
from tb.env.backdoor import channel_busy, read_card_ram
from tb.env.faults import FAULT_STATUS, FaultRule, UpRule
from tb.env.harness import RING_BYTES, SYNC_MEMOPS, Harness, Surface, bring_up, recover, setup
from tb.env.link import DOWN, MEM_WRITES, UP
from tb.env.platform import PCI_COMMAND, PCI_COMMAND_MEMORY
from tb.regress.coverage import COVERPOINTS, Coverage, chain_bin, length_bin
from tb.regress.generator import (
    DATA_READ_FAULTS,
    DRIVER_FAULTS,
    DRIVER_RACES,
    DRIVER_RESULTS,
    FAULT_OUTCOMES,
    FAULT_RESULTS,
    MALFORMED,
    MID_READ_FAULTS,
    MSI_FAULTS,
    POSTED_FAULTS,
    VICTIM_BYTES,
    Arena,
    ChainGenerator,
    ChainPlan,
    DriverGenerator,
    GpuStep,
    Limits,
    StepPlan,
    gpu_steps,
)
from tb.regress.scoreboard import Scoreboard

KIB = 1024
# the read_error bits each data-read fault must give (a malformed completion and one
# held past its request's timeout end the request as a dropped one does)
READ_ERROR_OF = {
    **{f: FAULT_STATUS[f] for f in FAULT_OUTCOMES},
    **dict.fromkeys((*MALFORMED, "late_cpl"), FAULT_STATUS["drop"]),
}
RING_SLOTS = RING_BYTES // DESC_SIZE
H2D = cudaMemcpyKind.cudaMemcpyHostToDevice
ANY = cudaMemcpyKind.cudaMemcpyDefault
SRC_CUDA = uapi.PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA
DST_CUDA = uapi.PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA


@dataclass
class Desc:
    """One descriptor of a planned chain: which piece it comes from and where it copies."""

    piece: int
    arena: str
    offset: int
    bus: int
    card: int
    length: int


class RandomRig:
    """The memories of the regression, their images, and the chain runner."""

    def __init__(self, h: Harness, seed: int, card_size: int) -> None:
        self.h = h
        self.tb = h.tb
        self.card_size = card_size
        self.rng = random.Random(seed ^ 0x5A5A)
        self.sb = Scoreboard()
        self.host: dict[str, object] = {}
        self.gpu: dict[str, Surface] = {}
        self.arenas: list[Arena] = []

    def add_host(self, name: str, size: int) -> None:
        region = self.tb.alloc_host(size)
        region[0:size] = self.rng.randbytes(size)
        self.host[name] = region
        self.tb.faults.name_range(region.get_absolute_address(0), size, "host")
        self.arenas.append(Arena(name, "host", size))
        self.sb.load(name, region[0:size])

    def add_gpu(self, name: str, size: int) -> None:
        # the victim's cudaFree must revoke its pin: a range of its own, not a pool chunk
        # that the other surfaces keep alive
        surf = Surface(self.tb, size, xor_val=self.rng.getrandbits(32), own_range=name == "victim")
        self.gpu[name] = surf
        if not any(a.name == name for a in self.arenas):
            self.arenas.append(Arena(name, "gpu", size))
        self.sb.load(name, self.tb.gpu.read_va(surf.va, size))

    def kind(self, arena: str) -> str:
        return "gpu" if arena in self.gpu else "host"

    def card_image(self, whole: bool = False):
        return self.h.card_image(whole)

    def descriptors(self, plan: ChainPlan) -> list[Desc]:
        """Pieces to descriptors: a GPU range is split at its BAR1 pages."""
        out = []
        for i, p in enumerate(plan.pieces):
            if p.arena in self.gpu:
                chunks = self.gpu[p.arena].chunks(p.offset, p.length)
            else:
                chunks = [(self.host[p.arena].get_absolute_address(p.offset), p.length)]
            done = 0
            for addr, n in chunks:
                out.append(Desc(i, p.arena, p.offset + done, addr, p.card + done, n))
                done += n
        return out

    def place(self, plan: ChainPlan, descs: list[Desc], half: int):
        """Build and write the chain in its half of the descriptor ring."""
        n = len(descs)
        lo = half * (RING_SLOTS // 2)
        if plan.layout == "adjacent":
            first = lo + self.rng.randrange(0, RING_SLOTS // 2 - n)
            slots = list(range(first, first + n))
        else:
            slots = self.rng.sample(range(lo, lo + RING_SLOTS // 2), n)
        addrs = [self.h.ring_base + s * DESC_SIZE for s in slots]
        segs = [
            Segment(d.bus, d.card, d.length)
            if plan.direction == "h2c"
            else Segment(d.card, d.bus, d.length)
            for d in descs
        ]
        last_of = {d.piece: i for i, d in enumerate(descs)}
        first_of = {}
        for i, d in enumerate(descs):
            first_of.setdefault(d.piece, i)
        completed = [last_of[p] for p in plan.completed]
        stop_at = last_of[plan.stop_at] if plan.stop_at is not None else None
        chain = build_chain(segs, addrs, completed=completed, stop_at=stop_at)
        magic_at = None
        if plan.fault == "bad_magic":
            magic_at = first_of[plan.magic_at]
            chain.descriptors[magic_at].magic = 0xBAD
        self.h.write_chain(chain)
        return chain, stop_at, magic_at


# A chain whose interrupt a fault stops is given up on once its channel has been idle this
# long (plus any link stall of its step): an interrupt the engine raises at its end reaches
# the driver within a few microseconds, latency faults included. Its budget alone, made for
# the slowest chain, is about three times the chain's own time.
QUIET_NS = 20_000
QUIET_POLL_NS = 1_000


async def wait_no_interrupt(ch: XdmaChannel, deadline_ns: float, busy, quiet_ns: float) -> Outcome:
    """``ch.wait`` for a chain whose interrupt a fault stops: the same wait, given up on
    (``TIMEOUT``, as at the deadline) once ``busy()``, the channel's status bit read in the
    RTL (no TLP), has been low for ``quiet_ns``. An interrupt that comes anyway ends the
    wait as it would without the watch."""
    given_up = False

    async def watch() -> None:
        nonlocal given_up
        idle_ns = 0
        while idle_ns < quiet_ns:
            await Timer(QUIET_POLL_NS, "ns")
            idle_ns = 0 if busy() else idle_ns + QUIET_POLL_NS
        given_up = True
        ch.interrupt()  # wakes the wait, which then sees it given up

    watcher = cocotb.start_soon(watch())
    try:
        outcome = await ch.wait(deadline_ns, aborted=lambda: given_up)
    finally:
        watcher.cancel()
    return Outcome.TIMEOUT if outcome is Outcome.ABORT else outcome


async def run_chain(
    rig: RandomRig, ch: XdmaChannel, chain, plan: ChainPlan, nbytes: int, stall_ns: int = 0
):
    """Start, act on the running chain (Run clear, cudaFree, a link stall), wait, collect,
    stop; then deliver what a late-completion fault held. ``stall_ns``: the longest link
    stall of the step (either chain's)."""
    tb = rig.tb
    t0 = ch.platform.now_ns()
    await ch.start(chain)
    if plan.fault == "stall_down":
        tb.faults.stall.start(plan.stall_ns)
    elif plan.fault == "stall_up":
        tb.up_faults.stall.start(plan.stall_ns)
    if plan.fault in ("run_cleared", "bar1_revoked"):
        while await ch.completed_count() < 1 and (await ch.status()) & Stat.BUSY:
            await Timer(100, "ns")
        if plan.fault == "run_cleared":
            await tb.dma_write32(ch.reg(regs.CH_CONTROL_W1C), int(Ctrl.RUN))
        else:
            tb.cuda.cudaFree(rig.gpu["victim"].va)
    # a chain whose interrupt never comes has a shorter budget, and is given up on once
    # its channel is quiet; a link stall of the step (either chain's) delays both
    if plan.fault in MSI_FAULTS:
        deadline = t0 + 60e3 + 8 * nbytes + stall_ns
        busy = channel_busy(tb.dut, plan.direction == "c2h", ch.channel)
        outcome = await wait_no_interrupt(ch, deadline, busy, QUIET_NS + stall_ns)
    else:
        outcome = await ch.wait(t0 + 400e3 + 40 * nbytes + stall_ns)
    res = await ch.finish(outcome, t0)
    if plan.fault == "late_cpl":
        # the held completion arrives after the hard IP ended its request, with the engine
        # idle: it must land nowhere (the scoreboard checks the card after it). Its tag
        # may have served another request since, which the checker then cannot tell from
        # an unexpected completion: expected here.
        with tb.checker.expecting("fpga", DOWN):
            released = await tb.faults.release_held()
            await Timer(2, "us")
        if not released:
            return res, "late_cpl: no completion was held"
    return res, None


def result_of(res, n: int) -> str:
    """What the engine reported for a chain of ``n`` descriptors, named as the coverage
    names it (:data:`tb.regress.generator.RESULTS`), or a name no fault allows."""
    status, count = res.status, res.completed_count
    if res.timed_out:
        done = not res.busy and not res.errors and count == n
        return "no_interrupt" if done else "timed_out"
    if regs.STAT_DESC_ERROR.get(status):
        return "desc_error"
    if status & Stat.MAGIC_STOPPED:
        return "magic_stopped"
    if regs.STAT_READ_ERROR.get(status):
        return "read_error"
    if res.errors:
        return f"error_{res.errors:#x}"
    if count == n:
        return "ok"
    if status & Stat.IDLE_STOPPED:
        return "idle_stopped"
    if status & Stat.DESC_STOPPED:
        return "desc_stopped"
    return f"short_{count}_of_{n}"


def expect(plan: ChainPlan, fired: bool, res, n: int, stop_at, magic_at) -> list[str]:
    """What must hold for this chain's result; the broken rules."""
    fault = plan.fault or "none"
    status, count = res.status, res.completed_count
    result = result_of(res, n)
    errs = []
    if result not in FAULT_RESULTS[fault]:
        direction = Target.H2C if plan.direction == "h2c" else Target.C2H
        errs.append(
            f"{result}, want {' or '.join(FAULT_RESULTS[fault])}: status {status:#x} "
            f"({regs.describe_status(status, direction)}) count {count}/{n}"
        )
    if fault in DATA_READ_FAULTS or fault in POSTED_FAULTS or fault in ("desc_fault", "msi_lost"):
        if not fired:
            errs.append("the fault did not fire")
    rd = regs.STAT_READ_ERROR.get(status)
    if fault in READ_ERROR_OF and result == "read_error":
        if rd != READ_ERROR_OF[fault]:
            errs.append(f"read_error {rd:#x}, want {READ_ERROR_OF[fault]!r}")
        if count >= n:
            errs.append(f"count {count} with a failed read")
    elif fault == "desc_fault":
        want = FAULT_STATUS[plan.fault_kind]
        if regs.STAT_DESC_ERROR.get(status) != want:
            errs.append(f"descr_error {regs.STAT_DESC_ERROR.get(status):#x}, want {want!r}")
    elif fault == "bad_magic" and count != magic_at:
        errs.append(f"bad magic at {magic_at}: count {count}")
    elif fault == "stop_early" and count != stop_at + 1:
        errs.append(f"stop at {stop_at}: count {count}")
    elif fault == "bar1_revoked" and result == "read_error" and rd != PcieErr.UNSUPPORTED_REQUEST:
        errs.append(f"revoke: read_error {rd:#x}, want UR")
    return errs


def holes(rig: RandomRig, descs: list[Desc], injected) -> None:
    """The C2H writes that never landed: dropped on the way, or poisoned on the way to
    GPU BAR1 (whose completer discards poisoned data; the host's stores it). Each leaves
    its bytes as they were before the step."""
    for hit in injected:
        if hit.kind != "write:drop" and not (hit.kind == "write:poison" and hit.target == "gpu"):
            continue
        for d in descs:
            if d.bus <= hit.address < d.bus + d.length:
                n = min(hit.nbytes, d.bus + d.length - hit.address)
                rig.sb.hole(d.arena, d.offset + hit.address - d.bus, n)
                break


def record_coverage(
    cov: Coverage, rig: RandomRig, plan: ChainPlan, descs: list[Desc], result: str, step: StepPlan
) -> None:
    cov.hit("chain_length", chain_bin(len(descs)))
    for d in descs:
        cov.hit("desc_length", length_bin(d.length))
        cov.hit("pcie_align", str(d.bus & 3))
        cov.hit("card_align", str(d.card & 3))
        cov.hit("crosses_4k", "yes" if (d.bus & 0xFFF) + d.length > 4096 else "no")
    for p in plan.pieces:
        if p.arena in rig.gpu:
            start = rig.gpu[p.arena].offset + p.offset  # offset inside the first GPU page
        else:
            start = rig.host[p.arena].get_absolute_address(p.offset)
        crosses = (start % (64 * KIB)) + p.length > 64 * KIB
        cov.hit("crosses_64k", "yes" if crosses else "no")
    kinds = {rig.kind(p.arena) for p in plan.pieces}
    cov.hit("target", f"{plan.direction}:{kinds.pop() if len(kinds) == 1 else 'mixed'}")
    if result in COVERPOINTS["outcome"]:
        cov.hit("outcome", result)
    crossed = f"{plan.fault or 'none'}:{result}"
    if crossed in COVERPOINTS["fault_outcome"]:
        cov.hit("fault_outcome", crossed)
    k = len(plan.pieces)
    flags = (
        "all"
        if len(plan.completed) == k
        else "last_only"
        if not plan.completed or (plan.completed == [k - 1])
        else "some"
    )
    cov.hit("completed_flags", flags)
    cov.hit("descriptor_layout", plan.layout)
    cov.hit("fabric", step.fabric)


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def test_random_chains(dut):
    """Seeded random steps (chains, concurrency, faults), every memory checked whole."""
    seed = int(os.environ.get("REGRESS_SEED", "1"))
    h = await setup(dut)
    tb = h.tb
    card_size = h.ram_size
    limits = Limits(
        card_size=card_size,
        max_len=int(os.environ.get("REGRESS_MAX_LEN", str(min(card_size, 65536)))),
        max_descriptors=int(os.environ.get("REGRESS_MAX_DESC", "40")),
        steps=int(os.environ.get("REGRESS_STEPS", "12")),
    )
    name = os.environ.get("REGRESS_NAME", f"seed{seed}")
    rig = RandomRig(h, seed, card_size)
    host_size = max(256 * KIB, 2 * limits.max_len)
    rig.add_host("host0", host_size)
    rig.add_host("host1", host_size)
    rig.add_gpu("gpu0", max(1024 * KIB, 2 * limits.max_len))
    rig.add_gpu("victim", 256 * KIB)
    rig.sb.load("card", rig.card_image())
    cov = Coverage()
    gen = ChainGenerator(seed, rig.arenas, limits)
    plans = gen.steps()
    tb.log.info("random regression %s: %d steps, limits %s", name, len(plans), limits)
    failures: list[str] = []
    for si, step in enumerate(plans):
        rig.sb.begin_step()
        tb.faults.clear()
        tb.up_faults.clear()
        chans, jobs = [], []
        for ci, plan in enumerate(step.chains):
            ch = h.h2c if plan.direction == "h2c" else h.c2h
            descs = rig.descriptors(plan)
            chain, stop_at, magic_at = rig.place(plan, descs, ci)
            rules: list = []
            if plan.fault in DATA_READ_FAULTS:
                rules.append(
                    FaultRule(plan.fault_kind, target=plan.fault_target, skip=plan.fault_skip)
                )
            elif plan.fault == "desc_fault":
                rules.append(FaultRule(plan.fault_kind, target="desc", skip=plan.fault_skip))
            elif plan.fault in POSTED_FAULTS:
                rule = UpRule(plan.fault_kind, "write", plan.fault_target, skip=plan.fault_skip)
                rules.append(tb.up_faults.add(rule))
            elif plan.fault == "msi_lost":
                rules.append(tb.up_faults.add(UpRule("drop", "write", target="msi")))
            elif plan.fault == "msi_fail":
                tb.dev.fail_interrupts = 1
            for r in rules:
                if isinstance(r, FaultRule):
                    tb.faults.add(r)
            chans.append((plan, ch, descs, chain, stop_at, magic_at, rules))
        if step.fabric == "split_reorder":
            tb.faults.add(FaultRule("split", count=0))
        elif step.fabric == "latency":
            tb.faults.add(FaultRule("latency", count=0, max_delay_ns=1500))
        # a malformed completion is a protocol violation on the FPGA's link, provoked:
        # expected there during this step (and required), failing anywhere else
        malformed = any(plan.fault in MALFORMED for plan in step.chains)
        provoked = tb.checker.expecting("fpga") if malformed else None
        tb.clear_msi()
        msi_failed = tb.dev.msi_failed
        up_before = len(tb.up_faults.injected)
        stall_ns = max(plan.stall_ns for plan, *_ in chans)
        for plan, ch, descs, chain, *_ in chans:
            nbytes = sum(d.length for d in descs)
            jobs.append(cocotb.start_soon(run_chain(rig, ch, chain, plan, nbytes, stall_ns)))
        results = [await j for j in jobs]
        tb.faults.clear()
        tb.up_faults.clear()
        tb.dev.fail_interrupts = 0
        if provoked is not None:
            provoked.close()
            if not provoked.seen:
                failures.append(f"step {si}: the checker saw no malformed completion")
        concurrency = "both" if len(chans) == 2 else chans[0][0].direction
        cov.hit("concurrency", concurrency)
        for (plan, _ch, descs, _chain, stop_at, magic_at, rules), (res, problem) in zip(
            chans, results, strict=True
        ):
            n = len(descs)
            status, count = res.status, res.completed_count
            what = (
                f"step {si} {plan.direction} {n} desc fault={plan.fault} "
                f"{plan.fault_kind} fabric={step.fabric}"
            )
            result = result_of(res, n)
            tb.log.info("%s: status %#010x count %d -> %s", what, status, count, result)
            if problem:
                failures.append(f"{what}: {problem}")
            fired = any(r.fired for r in rules)
            if plan.fault == "msi_fail":
                fired = tb.dev.msi_failed == msi_failed + 1
                if not fired:
                    failures.append(f"{what}: the hard IP failed no interrupt")
            stop = stop_at if stop_at is not None and stop_at < n - 1 else None
            failures += [f"{what}: {e}" for e in expect(plan, fired, res, n, stop, magic_at)]
            record_coverage(cov, rig, plan, descs, result, step)
            # what may have landed: the engine reported `count` descriptors done
            errored = bool(status & regs.STAT_ERROR_MASK) and not status & Stat.MAGIC_STOPPED
            for i, d in enumerate(descs):
                state = "done" if i < count else "maybe" if errored else "none"
                if plan.direction == "h2c":
                    rig.sb.copy(d.arena, d.offset, "card", d.card, d.length, state)
                else:
                    rig.sb.copy("card", d.card, d.arena, d.offset, d.length, state)
            if plan.direction == "c2h":
                holes(rig, descs, tb.up_faults.injected[up_before:])
        # every memory, whole
        for nm, region in rig.host.items():
            if (msg := rig.sb.check(nm, region[0 : len(rig.sb.images[nm])])) is not None:
                failures.append(f"step {si}: {msg}")
        for nm, surf in list(rig.gpu.items()):
            if surf.freed:
                continue
            if (msg := rig.sb.check(nm, tb.gpu.read_va(surf.va, surf.size))) is not None:
                failures.append(f"step {si}: {msg}")
        if (msg := rig.sb.check("card", rig.card_image())) is not None:
            failures.append(f"step {si}: {msg}")
        rig.sb.end_step()
        if rig.gpu["victim"].freed:
            rig.sb.forget("victim")
            rig.add_gpu("victim", 256 * KIB)
        if failures:
            break
    # the pages read again after each step were all the written ones: every word read
    # now gives the same RAM as the last step's read
    if not failures and not np.array_equal(rig.card_image(), rig.card_image(whole=True)):
        failures.append("the card RAM read whole differs from the pages read after each step")
    if not failures:
        await recover(h)
    assert tb.checker.violations == []
    tb.log.info("provoked protocol violations (expected): %d", len(tb.checker.expected))
    out = os.environ.get("REGRESS_COVERAGE")
    if out:
        cov.runs.append({"name": name, "seed": seed, "steps": len(plans), "passed": not failures})
        cov.write(Path(out))
    tb.log.info("coverage of this run:\n%s", cov.report())
    assert not failures, "\n".join(failures)


BIG_PAGE = VICTIM_BYTES  # a cudaMalloc of a range of its own (cudaFree revokes its pins)


def watch_gpu_writes(tb, rt) -> list[str]:
    """Every write the GPU sends (as it leaves it) must fall in a range registered with
    its CUDA context; the list of those that do not, filled as they go."""
    stray: list[str] = []
    gpu_id = tb.gpu_ep.pcie_id

    def observe(link: str, direction: str, tlp) -> None:
        if link != "gpu" or direction != UP or tlp.fmt_type not in MEM_WRITES:
            return
        if tlp.requester_id != gpu_id:
            return
        lo = tlp.address + tlp.get_first_be_offset()
        n = tlp.get_be_byte_count()
        reg = rt.registered.at_bus(lo, n)
        if reg is None or reg.read_only:
            stray.append(f"{n} B at {lo:#x}")

    tb.links.add_observer(observe)
    return stray


async def gpu_step(rig, g: GpuStep, stream: int, reg_va: int, gdev: int, mailbox: int, sb):
    """Run GPU step ``g`` on ``stream`` and tell the scoreboard what it wrote ("reg": the
    registered host buffer, "gdev": the GPU's own); "ok" or what went wrong."""
    rt = rig.cuda
    rt.kernel_coalesce = g.coalesce
    data = random.Random(g.value).randbytes(g.n)
    try:
        if g.kind == "kernel_store":

            async def store(k) -> None:
                await k.store(reg_va + g.off, data)

            rt.cudaLaunchKernel(store, 1, 32, (), stream)
            sb.land("reg", g.off, data, "done")
        elif g.kind == "kernel_st64":
            value = g.value << 32 | g.value ^ 0xFFFF_FFFF

            async def st64(k) -> None:
                await k.st64(reg_va + g.off, value)

            rt.cudaLaunchKernel(st64, 1, 1, (), stream)
            sb.land("reg", g.off, value.to_bytes(8, "little"), "done")
        elif g.kind == "copy_to_host":
            rt.cudaMemcpyAsync(
                reg_va + g.off, gdev + g.dev_off, g.n, cudaMemcpyKind.cudaMemcpyDefault, stream
            )
            sb.copy("gdev", g.dev_off, "reg", g.off, g.n, "done")
        elif g.kind == "copy_from_host":
            rt.cudaMemcpyAsync(
                gdev + g.dev_off, reg_va + g.off, g.n, cudaMemcpyKind.cudaMemcpyDefault, stream
            )
            sb.copy("reg", g.off, "gdev", g.dev_off, g.n, "done")
        elif g.kind == "stream_write":
            rt.cuStreamWriteValue32(stream, reg_va + g.off, g.value)
            sb.land("reg", g.off, g.value.to_bytes(4, "little"), "done")
        else:  # mailbox: a kernel's mark, which the host then reads

            async def mark(k) -> None:
                await k.st32(mailbox, g.value)

            rt.cudaLaunchKernel(mark, 1, 1, (), stream)
        await rt.stream_synchronize(stream)
        if g.kind == "mailbox":
            m = uapi.picoevb_rdma_mailbox(timeout_ns=2_000_000)
            if (r := await _errno_of(rig.fd.mailbox_read(m))) != "ok":
                return f"the mark was not read: {r}"
            if m.value != g.value:
                return f"the mailbox gave {m.value:#x}, not {g.value:#x}"
    except Exception as e:  # (a failure is the step's result, not the test's crash)
        return f"{type(e).__name__}: {e}"
    return "ok"


async def _errno_of(call) -> str:
    """ "ok", or the name of the errno the ioctl ``call`` failed with."""
    try:
        await call
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    return "ok"


async def _until(cond, limit_ns: float, step_ns: int = 100) -> bool:
    """Wait until ``cond()`` holds, at most ``limit_ns``; whether it does."""
    waited = 0.0
    while not cond():
        if waited >= limit_ns:
            return False
        await Timer(step_ns, "ns")
        waited += step_ns
    return True


@cocotb.test(timeout_time=8000, timeout_unit="ms")
async def test_random_driver(dut):
    """Seeded random ioctls through the driver model (H2C2H in all four host/CUDA
    combinations, H2C, C2H) at random offsets and lengths, every memory checked whole
    after each call. Each seed strikes one call with each fault while its DMA runs (a
    UR, CA, poisoned or dropped completion on a GPU read; a UR, CA or lost completion to
    one of the driver's register reads; Bus Master or Memory Space Enable cleared; a
    function reset from outside; a hot reset; the link going down: each EIO, the next
    call unharmed), and races one call each way (its file closed, its CUDA handle
    unpinned, a second file's ioctl at once: each must succeed; its destination surface
    cudaFree'd: EFAULT, and a surface pinned at once after the free gets not a byte)."""
    seed = int(os.environ.get("REGRESS_SEED", "1"))
    steps = int(os.environ.get("REGRESS_STEPS", "10"))
    max_len = int(os.environ.get("REGRESS_MAX_LEN", str(48 * KIB)))
    name = os.environ.get("REGRESS_NAME", f"driver-seed{seed}")
    rig = await bring_up(dut)
    tb, fd, rt = rig.tb, rig.fd, rig.cuda
    rng = random.Random(seed)
    card_size = rig.drv.fpga_ram_size
    size = max(512 * KIB, 4 * max_len)
    gpu_va = rt.cudaMalloc(size)
    rt.cuPointerSetAttribute(1, SYNC_MEMOPS, gpu_va)
    rt.cudaMemcpy(gpu_va, rng.randbytes(size), size, H2D)
    host_va = rig.process.malloc(size)
    rig.process.write(host_va, rng.randbytes(size))
    # the second file's own buffer (two_files)
    host2_size = 64 * KIB
    host2_va = rig.process.malloc(host2_size)
    rig.process.write(host2_va, rng.randbytes(host2_size))
    tb.faults.name_range(tb.gpu_ep.bar1_bus_address(), tb.gpu.bar1_size, "gpu")
    sb = Scoreboard()
    cov = Coverage()
    # the GPU's own steps beside the ioctls (GPU_STEPS): a host buffer registered with
    # CUDA, the GPU's own buffer, and the card's user BAR (its mailbox) registered as I/O
    # memory; a stream of their own; every write the GPU sends must land in a registered
    # range
    reg_size = 64 * KIB
    gpu_rng = np.random.default_rng(seed)
    reg_va = rig.process.malloc(reg_size)
    rig.process.write(reg_va, gpu_rng.integers(0, 256, reg_size, dtype=np.uint8).tobytes())
    rt.cudaHostRegister(reg_va, reg_size, 0)
    gdev = rt.cudaMalloc(reg_size)
    tb.gpu.write_va(gdev, gpu_rng.integers(0, 256, reg_size, dtype=np.uint8))
    user_bar = fd.mmap(4096, regs.BAR_USER << uapi.PICOEVB_MMAP_BAR_SHIFT)
    rt.cudaHostRegister(user_bar, 4096, cudaHostRegisterIoMemory)
    gpu_stream = rt.cudaStreamCreateWithFlags(cudaStreamNonBlocking)
    stray = watch_gpu_writes(tb, rt)

    def read_gpu() -> np.ndarray:
        return tb.gpu.read_va(gpu_va, size)

    def read_card() -> np.ndarray:
        return read_card_ram(dut, card_size, tb.profile.width // 8)

    sb.load("gpu", read_gpu())
    sb.load("host", rig.process.read(host_va, size))
    sb.load("host2", rig.process.read(host2_va, host2_size))
    sb.load("card", read_card())
    sb.load("reg", rig.process.read(reg_va, reg_size))
    sb.load("gdev", tb.gpu.read_va(gdev, reg_size))
    gen = ChainGenerator(
        seed,
        [Arena("host", "host", size), Arena("gpu", "gpu", size)],
        Limits(card_size=card_size, max_len=max_len),
    )
    steps_of = DriverGenerator(rng, gen, steps, size, card_size, max_len)
    gpu_plan = gpu_steps(seed, [e for _, e in steps_of.plan], reg_size)
    dmabuf_fds: list[int] = []
    failures: list[str] = []
    for si in range(len(steps_of)):
        step = steps_of.step(si)
        op, event, way, n = step.op, step.event, step.way, step.n
        kind, src_kind, dst_kind = step.kind, step.src_kind, step.dst_kind
        src_off, dst_off, card_off = step.src_off, step.dst_off, step.card_off
        f = rig.open() if event == "close_during" else fd
        sb.begin_step()
        handles: list[int] = []
        # cudafree_during: the destination is a surface of its own, freed mid-DMA
        victim_va = 0
        if event == "cudafree_during":
            victim_va = rt.cudaMalloc(BIG_PAGE)
            rt.cuPointerSetAttribute(1, SYNC_MEMOPS, victim_va)

        pinned: list[str] = []

        async def side(
            k: str,
            off: int,
            dst: bool,
            n: int = n,
            handles=handles,
            f=f,
            victim=victim_va,
            way=way,
            pinned=pinned,
        ) -> int:
            """A user pointer, or the handle of a pin of the range (unpinned after): an
            nv-p2p pin, or a dma-buf export of it imported by fd."""
            if k == "host":
                return host_va + off
            pinned.append("p2p" if way == "p2p" or (dst and victim) else "dmabuf")
            if way == "dmabuf" and not (dst and victim):
                span = -(-n // 4096) * 4096
                dfd = rt.cuMemGetHandleForAddressRange(gpu_va + off, span, DMA_BUF_FD, 0)
                dmabuf_fds.append(dfd)
                h_, _size = await f.pin_dmabuf(dfd)
                handles.append(h_)
                return h_
            base = victim if dst and victim else gpu_va
            h_ = await f.pin_cuda(base + off, n)
            handles.append(h_)
            return h_

        rule = None
        if event == "cpl_fault":
            # the first GPU read of the call: every op it strikes reads GPU memory
            rule = tb.faults.add(FaultRule(rng.choice(FAULT_OUTCOMES), target="gpu"))
        elif event in ("reg_ur", "reg_ca", "reg_drop"):
            # the call's third register read answered UR or CA, or never: the first
            # status check of its first chain (the two before it, in start(), clear the
            # status and flush the writes, their values unused)
            rule = tb.up_faults.add(UpRule(event[4:], "completion", skip=2))
        if kind == "h2c2h":
            flags = (SRC_CUDA if src_kind == "gpu" else 0) | (DST_CUDA if dst_kind == "gpu" else 0)
            src_arg = await side(src_kind, src_off, False)
            call = f.h2c2h_dma(src_arg, await side(dst_kind, dst_off, True), n, flags)
        elif kind == "h2c":
            cuda = uapi.PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA if src_kind == "gpu" else 0
            call = f.h2c_dma(await side(src_kind, src_off, False), card_off, n, cuda)
        else:
            cuda = uapi.PICOEVB_C2H_DMA_FLAG_DST_IS_CUDA if dst_kind == "gpu" else 0
            call = f.c2h_dma(await side(dst_kind, dst_off, True), card_off, n, cuda)
        runs_before = len(rig.drv.runs)
        msis = sum(tb.msi_count)
        task = cocotb.start_soon(_errno_of(call))
        g = gpu_plan[si]
        gpu_task = cocotb.start_soon(
            gpu_step(rig, g, gpu_stream, reg_va, gdev, user_bar + regs.USER_MAILBOX, sb)
        )
        second = None
        if event == "two_files":
            # another file's H2C2H between two places of its own buffer, at once: the
            # device's DMA lock runs one after the other
            m = rng.randint(1, min(host2_size // 2, max_len))
            a = rng.randint(0, host2_size // 2 - m)
            b = rng.randint(host2_size // 2, host2_size - m)
            f2 = rig.open()
            second = (f2, a, b, m)
            second_task = cocotb.start_soon(
                _errno_of(f2.h2c2h_dma(host2_va + a, host2_va + b, m, 0))
            )
        what = f"step {si} {op} {n} B src+{src_off:#x} dst+{dst_off:#x} [{event}, {way}]"
        # strike once the DMA is under way
        if event in MID_READ_FAULTS:
            if not await _until(lambda t=task: any(tb.dev.active_request) or t.done(), 200_000):
                failures.append(f"{what}: the engine issued no read")
        elif event == "cudafree_during":
            # the C2H half runs: its H2C run has finished
            if not await _until(
                lambda t=task, k=runs_before: len(rig.drv.runs) > k or t.done(), 5_000_000, 1000
            ):
                failures.append(f"{what}: the H2C half never finished")
        elif event in ("close_during", "unpin_during", "two_files"):
            await _until(lambda t=task: rig.drv._transfers or t.done(), 1_000_000, 10)
        if event not in ("none", "cpl_fault", "reg_ur", "reg_ca", "reg_drop") and task.done():
            failures.append(f"{what}: the DMA was over before the {event}")
        new_pin = None
        if event == "bme_off":
            await tb.pci.clear_master()
        elif event == "mse_off":
            command = await tb.pci.config_read_word(PCI_COMMAND)
            await tb.pci.config_write_word(PCI_COMMAND, command & ~PCI_COMMAND_MEMORY)
            # the transfer goes on and interrupts; the driver's reads fail meanwhile
            await _until(lambda t=task, k=msis: sum(tb.msi_count) > k or t.done(), 2_000_000, 1000)
            await Timer(5, "us")
            await tb.pci.config_write_word(PCI_COMMAND, command)
        elif event == "flr":
            reset = cocotb.start_soon(rig.platform.pci_reset_function())
        elif event == "hot_reset":
            reset = cocotb.start_soon(rig.platform.pci_reset_bus())
        elif event == "link_down":
            await tb.dev.link_down_for(20_000)
            if (rc := await rig.platform.pcie_link_recovery()) != 0:
                failures.append(f"{what}: link recovery returned {rc}")
        elif event == "close_during":
            await f.release()
            handles.clear()  # the file's release puts them
        elif event == "unpin_during":
            unpin = cocotb.start_soon(_errno_of(f.unpin_cuda(handles.pop(0))))
        elif event == "cudafree_during":
            # (cudaFree synchronises the device: the GPU's own step ends first)
            await with_timeout(gpu_task, 10, "ms")
            # the free callback sleeps until the channel has stopped; a surface pinned at
            # once (by a file of its own) must get other BAR1 pages and not a byte
            rt.cudaFree(victim_va)
            new_va = rt.cudaMalloc(BIG_PAGE)
            rt.cuPointerSetAttribute(1, SYNC_MEMOPS, new_va)
            rt.cudaMemcpy(new_va, rng.randbytes(BIG_PAGE), BIG_PAGE, H2D)
            f3 = rig.open()
            new_pin = (f3, new_va, await f3.pin_cuda(new_va, BIG_PAGE))
            before_new = tb.gpu.read_va(new_va, BIG_PAGE)
        result = await task
        if event == "bme_off":
            await tb.pci.set_master()
        elif event in ("flr", "hot_reset"):
            if not reset.done() or reset.result() != 0:
                failures.append(f"{what}: the ioctl returned before the reset ended")
        elif event == "unpin_during" and (unpin_result := await unpin) != "ok":
            failures.append(f"{what}: unpin during the DMA failed with {unpin_result}")
        elif event == "close_during":
            if not f.released:
                failures.append(f"{what}: the closed file was not released after the DMA")
            if any(p.state.name == "LIVE" for p in tb.gpu.pins.values()):
                failures.append(f"{what}: a pin outlived the close of its file")
        elif event == "two_files":
            f2, a, b, m = second
            if (r2 := await second_task) != "ok":
                failures.append(f"{what}: the second file's H2C2H failed with {r2}")
            sb.copy("host2", a, "host2", b, m, "done")
            await f2.release()
        elif event == "cudafree_during":
            await Timer(20, "us")  # let anything in flight land
            f3, new_va, h3 = new_pin
            if not np.array_equal(tb.gpu.read_va(new_va, BIG_PAGE), before_new):
                failures.append(f"{what}: bytes reached a surface pinned after the free")
            gone = handles.pop()  # the freed destination's pin: revoked
            if (r := await _errno_of(f.unpin_cuda(gone))) != "EINVAL":
                failures.append(f"{what}: unpin of the revoked handle gave {r}")
            await f3.unpin_cuda(h3)
            await f3.release()
            rt.cudaFree(new_va)
        if (gres := await with_timeout(gpu_task, 10, "ms")) != "ok":
            failures.append(f"step {si} GPU {g.kind}: {gres}")
        cov.hit("gpu_step", g.kind)
        if stray:
            failures.append(f"step {si} GPU {g.kind}: writes outside registered memory {stray}")
        tb.faults.clear()
        tb.up_faults.clear()
        for h_ in handles:
            await f.unpin_cuda(h_)
        for dfd in dmabuf_fds:
            rig.process.close(dfd)
        dmabuf_fds.clear()
        for w in pinned:
            cov.hit("driver_pin", w)
        tb.log.info("%s -> %s", what, result)
        race = event if event in DRIVER_RACES else "none"
        fault = event if event in DRIVER_FAULTS else "none"
        cov.hit("driver_race", race)
        cov.hit("driver_fault", fault)
        if rule is not None and not rule.fired:
            failures.append(f"{what}: the {rule.kind} fault never fired")
        if result != DRIVER_RESULTS[event]:
            failures.append(f"{what}: returned {result}, expected {DRIVER_RESULTS[event]}")
        cov.hit("driver_op", op)
        if result in COVERPOINTS["driver_result"]:
            cov.hit("driver_result", result)
        # the device works again: the next call must succeed (checked as it runs)
        state = "done" if result == "ok" else "maybe"
        dst_name = "victim" if victim_va else dst_kind
        if kind == "h2c2h":
            sb.copy(src_kind, src_off, dst_name, dst_off, n, state)
        elif kind == "h2c":
            sb.copy(src_kind, src_off, "card", card_off, n, state)
        else:
            sb.copy("card", card_off, dst_kind, dst_off, n, state)
        current = (
            ("gpu", read_gpu()),
            ("host", rig.process.read(host_va, size)),
            ("host2", rig.process.read(host2_va, host2_size)),
            ("reg", rig.process.read(reg_va, reg_size)),
            ("gdev", tb.gpu.read_va(gdev, reg_size)),
        )
        for nm, actual in current:
            if (msg := sb.check(nm, actual)) is not None:
                failures.append(f"{what}: {msg}")
        card = read_card()
        if kind == "h2c2h" or event in ("flr", "hot_reset", "link_down"):
            # the bounce buffer's contents are the driver's business; a reset may land
            # part of what was in flight
            sb.load("card", card)
        elif (msg := sb.check("card", card)) is not None:
            failures.append(f"{what}: {msg}")
        sb.end_step()
        if failures:
            break
    assert tb.checker.violations == []
    out = os.environ.get("REGRESS_COVERAGE")
    if out:
        cov.runs.append(
            {"name": name, "seed": seed, "steps": len(steps_of), "passed": not failures}
        )
        cov.write(Path(out))
    assert not failures, "\n".join(failures)
