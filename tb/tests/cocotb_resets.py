"""The reset regression (tb/regress/resets.py): on the drop-in, every interruption (a
function-level reset, a hot reset, the link going down, ``dma_bridge_resetn``, Run
cleared, an error stop) strikes a transfer on every interface and in every direction
while its data moves (memory-mapped H2C, C2H and both at once, a descriptor-bypass
channel and a stream channel each way, a write or read burst through the bypass BAR,
and the GPU's copy engine writing through it).

After each step:

- nothing of the interrupted transfer lands afterwards: no C2H write the RTL issued
  after the reset began (beyond the packet it was handing the hard IP then) or after the
  stopped channel reported idle reaches its host buffer, and its AXI and host buffers do
  not change while the next transfers run. Writes are told apart by their place among
  the posted requests the hard IP took from the RTL (it sends them in order), not by when
  they arrive: a write the hard IP already held goes out after a reset of the engine
  alone (``dma_bridge_resetn``), as on hardware;
- the next H2C and C2H on the memory-mapped channels, and a transfer on the struck
  interface again, are byte-exact with guard bytes around them;
- no tag is used while still outstanding at the hard IP, and no TLP is joined or cut:
  the hard-IP model names either through the protocol checker, which fails the test;
- a channel stop that strikes a bypass-BAR burst (no channel drives it) leaves the burst
  whole;
- the GPU's copy into the bypass BAR ends whatever strikes it (its writes are posted:
  those a reset drops are lost, and the CUDA context sees no error), and the GPU's next
  copy into the BAR and back is exact;
- the scoreboard (tb/regress/scoreboard.py) compares, after every step, the whole of both
  AXI memories and of every host buffer the run made: the interrupted transfer's bytes
  are each old or new, every later transfer's are exact, nothing else changed.

Build: three channels each way (0 memory-mapped, 1 a stream, 2 descriptor bypass), the
bypass master, ``dma_bridge_resetn`` and the AXI4-Lite slave (tests/sim/plan.py).
Environment: ``REGRESS_SEED``, ``REGRESS_STEPS`` (rounded down to whole rounds of every
pair, at least one), ``REGRESS_NAME``, ``REGRESS_COVERAGE``.
"""

from __future__ import annotations

import logging
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge, Timer, with_timeout
from cocotb.utils import get_sim_time
from cocotbext.axi import AxiLiteBus, AxiLiteMaster
from cocotbext.axi.constants import AxiResp
from cocotbext.pcie.core.tlp import Tlp

from cuda_model.hostreg import Registration
from cuda_model.runtime import cudaMemcpyKind
from driver_model import regs
from driver_model.desc import C2H_RESULT_SIZE, C2hResult, DescriptorError, Segment, build_chain
from driver_model.regs import Stat, Target
from driver_model.xdma import XdmaChannel
from tb.env.axi_mem import AxiError, ErrorAxiRam, ErrorWindow
from tb.env.bypass import BypassDesc, DescBypass
from tb.env.faults import FaultRule
from tb.env.harness import GUARD, PAGE, RING_BYTES, Harness, pattern, setup
from tb.env.link import MEM_WRITES, UP
from tb.env.streams import c2h_source, clock_and_reset, h2c_sink
from tb.regress.coverage import Coverage
from tb.regress.resets import (
    AXIB_WRITES,
    ENGINE_RESETS,
    RESET_BINS,
    RegStep,
    ResetStep,
    regs_plan,
    reset_plan,
)
from tb.regress.scoreboard import Scoreboard

KIB = 1024
MEM_SIZE = 1 << 20
# the user's AXI memory: the interrupted transfer's card side (and a second one for the
# C2H of h2c2h), and the checks' own
STEP_AXI = 0x0_0000
STEP2_AXI = 0x1_0000
CHECK_AXI = 0x4_0000
# a C2H write the RTL was handing the hard IP when a reset began may still go out (a
# packet ends at its boundary): one, beyond those it had handed over
LATE_ALLOWED = 1
PIECE = 4 * KIB  # descriptor length of the interrupted transfers
STEP_LIMIT_NS = 2_000_000  # every wait of a step is bounded by this
BYPASS_VA = 0x7F00_0200_0000  # where the process mapped the bypass BAR for CUDA

_BEATS = {
    "w": ("m_axi_wvalid", "m_axi_wready"),
    "r": ("m_axi_rvalid", "m_axi_rready"),
    "sh": ("m_axis_h2c_tvalid_1", "m_axis_h2c_tready_1"),
    "sc": ("s_axis_c2h_tvalid_1", "s_axis_c2h_tready_1"),
    "bw": ("m_axib_wvalid", "m_axib_wready"),
    "br": ("m_axib_rvalid", "m_axib_rready"),
}
# the beats that show each target's data moving
MOVING = {
    "h2c": ("w",),
    "c2h": ("r",),
    "h2c2h": ("w", "r"),
    "bypass:h2c": ("w",),
    "bypass:c2h": ("r",),
    "stream:h2c": ("sh",),
    "stream:c2h": ("sc",),
    "m_axib:write": ("bw",),
    "m_axib:read": ("br",),
    "m_axib:gpu": ("bw",),
}
CHANNEL_OF = {"mm": 0, "stream": 1, "bypass": 2}


@dataclass
class Struck:
    """What a step started: the channels (direction, number), the buffers the transfer
    writes (host: (buffer, offset, length); AXI: (memory, address, length)), the
    background tasks (bypass-BAR accesses, a stream packet), and for a bypass-BAR target
    its bytes."""

    channels: list[tuple[Target, int]] = field(default_factory=list)
    host: list[tuple[object, int, int]] = field(default_factory=list)
    axi: list[tuple[ErrorAxiRam, int, int]] = field(default_factory=list)
    tasks: list = field(default_factory=list)
    axib: tuple[int, bytes] | None = None
    stream: bytes = b""  # the struck packet of a stream channel
    # a C2H stream's results: (buffer, offset of the first, how many), 16 bytes apart
    results: tuple[object, int, int] | None = None


class Bench:
    """The drop-in, its user side (the AXI memories on m_axi and m_axib, the stream sink
    and source of channel 1, the bypass drivers of channel 2) and the checks' records."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.tb = tb = h.tb
        dut = tb.dut
        clk, rst, level = clock_and_reset(dut)
        self.clk = clk
        self.mem = ErrorAxiRam(dut, clk, rst, level, MEM_SIZE)
        self.axib_mem = ErrorAxiRam(dut, clk, rst, level, MEM_SIZE, prefix="m_axib")
        self.sink = h2c_sink(dut, 1)
        self.source = c2h_source(dut, 1)
        self.byp = {d: DescBypass(dut, clk, d, 2) for d in (Target.H2C, Target.C2H)}
        self.ch = {
            (d, n): XdmaChannel(h.platform, d, n, h2c_channels=h.h2c_channels)
            for d in (Target.H2C, Target.C2H)
            for n in range(3)
        }
        extra = tb.profile.extra
        self.axib_base = extra.get("AXIB_AXI_BASE", 0)
        self.bar = tb.pci.bar_window[tb.bars.axib]
        self.beats = {k: (getattr(dut, v), getattr(dut, r)) for k, (v, r) in _BEATS.items()}
        # C2H writes of the FPGA: (time ns, address, bytes, ordinal); the ordinal is the
        # write's place among the posted requests the RTL handed the hard IP (which sends
        # them in order), so a write can be told from one issued after a reset began
        self.writes: list[tuple[float, int, int, int]] = []
        self.up_writes = 0
        self.ordinal_base = 0
        tb.links.add_observer(self._observe)
        self.user = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), clk, rst, level)
        for log in (self.user.write_if.log, self.user.read_if.log):
            log.setLevel(logging.WARNING)  # (a line per access otherwise)
        # the scoreboard's memories: name -> how to read the whole of it
        self.sb = Scoreboard()
        self.tracked: dict[str, object] = {}
        self.names: dict[int, str] = {}  # id() of a memory or host buffer -> its name
        self._track("axi", self.mem, lambda: self.mem.read(0, MEM_SIZE))
        self._track("axib", self.axib_mem, lambda: self.axib_mem.read(0, MEM_SIZE))
        # the GPU: the bypass BAR registered with CUDA as I/O memory (what
        # cudaHostRegister(IoMemory) of a mapping of it gives), a stream, a buffer
        self.rt = rt = tb.cuda
        size = 1 << extra["AXIB_BAR_ADDR_WIDTH"]
        pages = [tb.pci.bar_addr[tb.bars.axib] + i for i in range(0, size, PAGE)]
        rt.registered.add(Registration(BYPASS_VA, size, pages, io=True, name="bypass BAR"))
        self.stream = rt.cudaStreamCreate()
        self.gpu_buf = rt.cudaMalloc(2 * 16 * KIB)

    async def gpu_copy(self, dst: int, src: int, n: int) -> None:
        """A cudaMemcpyAsync on the bench's stream, awaited (bounded); the CUDA context
        must be without error after it."""
        self.rt.cudaMemcpyAsync(dst, src, n, cudaMemcpyKind.cudaMemcpyDefault, self.stream)
        await self.rt.stream_synchronize(self.stream)
        err = self.rt.cudaGetLastError()
        assert err == 0, f"the GPU's copy left {err!r}"

    def _track(self, name: str, obj, read) -> None:
        self.names[id(obj)] = name
        self.tracked[name] = read
        self.sb.load(name, read())

    def put(self, mem: ErrorAxiRam, addr: int, data: bytes) -> None:
        """The testbench writes the user's AXI memory (a source, guard bytes)."""
        mem.write(addr, data)
        self.sb.put(self.names[id(mem)], addr, data)

    def land(self, where, offset: int, data: bytes, state: str) -> None:
        """A transfer writes ``data`` at ``offset`` of an AXI memory or a host buffer:
        ``done`` or ``maybe`` (see Scoreboard.land)."""
        self.sb.land(self.names[id(where)], offset, data, state)

    def check_images(self, what: str) -> None:
        """Every tracked memory, whole, against the scoreboard."""
        for name, read in self.tracked.items():
            msg = self.sb.check(name, read())
            assert msg is None, f"{what}: {msg}"

    def _observe(self, link: str, direction: str, tlp: Tlp) -> None:
        if link == "fpga" and direction == UP and tlp.fmt_type in MEM_WRITES:
            if self.tb.faults.target_of(tlp.address) == "msi":
                return  # (the core's own: MSIs are not RQ requests)
            self.up_writes += 1
            ordinal = self.up_writes + self.ordinal_base
            self.writes.append((get_sim_time("ns"), tlp.address, tlp.length * 4, ordinal))

    async def sync_ordinals(self) -> None:
        """Align the link's count of writes with the hard IP's, once the writes still on
        their way have arrived (the engine idle, no write for 2 us; a reset of the link
        may have dropped writes the core had counted)."""
        for _ in range(100):
            seen = self.up_writes
            await Timer(2, "us")
            if self.up_writes == seen:
                break
        self.ordinal_base = self.tb.dev.rq_posted - self.up_writes

    def host(self, size: int, fill: bytes | None = None):
        """A host buffer of ``size`` guard bytes (or ``fill``), and its bus address; the
        region runs on past it (a read's last DWORD may reach beyond its last byte)."""
        name = f"host{len(self.tracked) - 1}"  # (also its name in the TLP trace)
        buf = self.tb.alloc_host(size + 64, name)
        buf[0 : size + 64] = bytes([GUARD]) * (size + 64)
        if fill is not None:
            buf[0:size] = fill
        self._track(name, buf, lambda: bytes(buf[0 : size + 64]))
        return buf, buf.get_absolute_address(0)

    async def wait_moving(self, target: str) -> None:
        """Until a beat of each of the target's interfaces was taken (bounded)."""
        need = set(MOVING[target])
        for _ in range(200_000):
            await RisingEdge(self.clk)
            for k in list(need):
                valid, ready = self.beats[k]
                if valid.value.is_resolvable and int(valid.value) and int(ready.value):
                    need.discard(k)
            if not need:
                return
        raise AssertionError(f"{target}: no data moved ({sorted(need)} never took a beat)")

    async def status(self, d: Target, n: int) -> int:
        return await self.ch[(d, n)].read32(self.ch[(d, n)].reg(regs.CH_STATUS))

    async def wait_idle(self, d: Target, n: int, limit_ns: float = STEP_LIMIT_NS) -> int:
        """Until the channel is not busy (polled; bounded): its status."""
        end = get_sim_time("ns") + limit_ns
        while True:
            status = await self.status(d, n)
            if not status & Stat.BUSY:
                return status
            assert get_sim_time("ns") < end, f"{d.name}{n} still busy: {status:#x}"
            await Timer(500, "ns")

    async def quiet(self) -> None:
        """Every channel stopped, its status cleared, nothing loaded or queued."""
        for (d, n), ch in self.ch.items():
            await ch.write32(ch.reg(regs.CH_CONTROL), 0)
            await self.wait_idle(d, n)
            await ch.read32(ch.reg(regs.CH_STATUS_RC))
        for byp in self.byp.values():
            byp.queue.clear()
        self.sink.clear()
        self.source.clear()
        self.tb.faults.clear()
        self.mem.windows.clear()


def segments(src: int, dst: int, n: int) -> list[Segment]:
    """``n`` bytes in descriptors of at most :data:`PIECE`."""
    return [Segment(src + o, dst + o, min(PIECE, n - o)) for o in range(0, n, PIECE)]


def last(segs: list[Segment]) -> BypassDesc:
    """The last segment as a bypassed descriptor with Completed."""
    g = segs[-1]
    return BypassDesc(g.src, g.dst, g.length, completed=True)


def spaced_chain(h: Harness, segs: list[Segment], **kw):
    """A chain whose descriptors sit 2 KiB apart in the ring (each its own fetch)."""
    need = -(-len(segs) * 2 * KIB // PAGE) * PAGE
    if h.ring_next + need > RING_BYTES:
        h.ring_next = 0
    base = h.ring_base + h.ring_next
    h.ring_next += need + PAGE
    chain = build_chain(segs, [base + 2 * KIB * i for i in range(len(segs))], **kw)
    h.write_chain(chain)
    return chain


def read_skip(b: Bench, s: ResetStep) -> int:
    """The data reads an error stop lets through: those of the first ``skip`` descriptors
    and half the next one's (a stream channel sends a descriptor's data only once it is
    whole, so the error must not strike the first). Reads are counted as at least one
    per MRRS bytes of each descriptor, so the one that fails exists."""
    mrrs = b.tb.profile.mrrs
    reads = [-(-min(PIECE, s.length - o) // mrrs) for o in range(0, s.length, PIECE)]
    k = min(s.skip, len(reads) - 1)
    return sum(reads[:k]) + reads[k] // 2


async def start(b: Bench, s: ResetStep) -> Struck:
    """Start the step's transfer (and, for a channel stop on a bypass-BAR burst, the H2C
    beside it that the stop strikes), with an error stop's fault armed."""
    h, tb, n = b.h, b.tb, s.length
    out = Struck()
    error = s.kind == "error_stop"

    async def h2c(ch_n: int, dst: int) -> None:
        src = pattern(s.host_off + n, 200 + s.index)
        _buf, sa = b.host(s.host_off + n, src)
        b.put(b.mem, dst, bytes([GUARD]) * (n + 64))
        b.land(b.mem, dst, src[s.host_off :], "maybe")
        if error:
            tb.faults.add(FaultRule("ur", target="host", skip=read_skip(b, s)))
        if ch_n == 2:
            await b.ch[(Target.H2C, 2)].start(None, interrupt=False)
            segs = segments(sa + s.host_off, dst, n)
            descs = [BypassDesc(g.src, g.dst, g.length) for g in segs]
            b.byp[Target.H2C].load(*descs[:-1], last(segs))
        else:
            chain = h.place_chain(segments(sa + s.host_off, dst, n))
            await b.ch[(Target.H2C, ch_n)].start(chain, interrupt=False)
        out.channels.append((Target.H2C, ch_n))
        out.axi.append((b.mem, dst, n + 64))

    async def c2h(ch_n: int, src: int) -> None:
        buf, da = b.host(s.host_off + n + 64)
        b.put(b.mem, src, pattern(n, 300 + s.index))
        b.land(buf, s.host_off, pattern(n, 300 + s.index), "maybe")
        if error:
            at = src + min(n - 1, s.skip * PIECE + 100)
            b.mem.windows.append(ErrorWindow(at, 64, AxiError.SLVERR, writes=False))
        segs = segments(src, da + s.host_off, n)
        if ch_n == 2:
            await b.ch[(Target.C2H, 2)].start(None, interrupt=False)
            descs = [BypassDesc(g.src, g.dst, g.length) for g in segs]
            b.byp[Target.C2H].load(*descs[:-1], last(segs))
        else:
            chain = h.place_chain(segs)
            await b.ch[(Target.C2H, ch_n)].start(chain, interrupt=False)
        out.channels.append((Target.C2H, ch_n))
        out.host.append((buf, 0, s.host_off + n + 64))

    if s.target in ("h2c", "h2c2h"):
        await h2c(0, STEP_AXI + s.card_off)
    if s.target in ("c2h", "h2c2h"):
        await c2h(0, STEP2_AXI + s.card_off)
    if s.target == "bypass:h2c":
        await h2c(2, STEP_AXI + s.card_off)
    if s.target == "bypass:c2h":
        await c2h(2, STEP2_AXI + s.card_off)
    if s.target == "stream:h2c":
        _buf, sa = b.host(s.host_off + n, pattern(s.host_off + n, 400 + s.index))
        if error:
            tb.faults.add(FaultRule("ur", target="host", skip=read_skip(b, s)))
        chain = h.place_chain(segments(sa + s.host_off, 0, n))
        await b.ch[(Target.H2C, 1)].start(chain, interrupt=False)
        out.channels.append((Target.H2C, 1))
        out.stream = pattern(s.host_off + n, 400 + s.index)[s.host_off :]
    if s.target == "stream:c2h":
        pieces = -(-n // PIECE)
        buf, da = b.host(pieces * (PIECE + 64) + 64)
        if error:  # a later descriptor's fetch fails: each sits in a fetch of its own
            tb.faults.add(FaultRule("ur", target="desc", skip=min(s.skip, pieces - 1)))
        segs = [Segment(da + pieces * PIECE + 16 * i, da + PIECE * i, PIECE) for i in range(pieces)]
        chain = spaced_chain(h, segs)
        await b.ch[(Target.C2H, 1)].start(chain, interrupt=False)
        out.channels.append((Target.C2H, 1))
        out.host.append((buf, 0, pieces * (PIECE + 64) + 64))
        out.results = (buf, pieces * PIECE, pieces)
        out.stream = pattern(n, 500 + s.index)
        b.land(buf, 0, out.stream, "maybe")  # (piece i at PIECE * i: the packet in order)
        b.sb.anything(b.names[id(buf)], pieces * PIECE, 16 * pieces)  # where it was cut
        out.tasks.append(cocotb.start_soon(b.source.send(out.stream)))
    if s.target.startswith("m_axib"):
        off = s.card_off & ~3
        data = pattern(n, 600 + s.index)
        if s.target in AXIB_WRITES:
            b.put(b.axib_mem, b.axib_base + off, bytes([GUARD]) * (n + 64))
            b.land(b.axib_mem, b.axib_base + off, data, "maybe")
            if s.target == "m_axib:gpu":
                tb.gpu.write_va(b.gpu_buf, np.frombuffer(data, dtype=np.uint8))
                copy = b.gpu_copy(BYPASS_VA + off, b.gpu_buf, n)
            else:
                copy = b.bar.write(off, data)
            out.tasks.append(cocotb.start_soon(copy))
        else:
            b.put(b.axib_mem, b.axib_base + off, data)
            out.tasks.append(cocotb.start_soon(b.bar.read(off, n)))
        out.axib = (off, data)
        if s.kind not in ENGINE_RESETS:
            await h2c(0, STEP_AXI + s.card_off)  # the channel the stop strikes
    return out


async def strike(b: Bench, s: ResetStep, st: Struck) -> int:
    """The interruption; returns when the engine is back (or the channel stopped), with
    the posted requests the RTL may have issued by then (:attr:`Bench.writes`' ordinals):
    none of the transfer's writes after those may land."""
    h, tb, dut = b.h, b.tb, b.tb.dut
    issued = tb.dev.rq_posted
    if s.kind in ("flr", "hot_reset"):
        # Linux saves the function's state and turns bus mastering off first (the FPGA's
        # writes until then land); the reset begins when the hard IP starts it
        count = (lambda: tb.dev.flr_count) if s.kind == "flr" else (lambda: tb.dev.hot_resets)
        before = count()
        call = h.platform.pci_reset_function if s.kind == "flr" else h.platform.pci_reset_bus
        task = cocotb.start_soon(call())
        while count() == before and not task.done():
            await Timer(20, "ns")
        issued = tb.dev.rq_posted
        assert await with_timeout(task, STEP_LIMIT_NS, "ns") == 0, f"{s.kind} failed"
    elif s.kind == "link_down":
        await tb.dev.link_down_for(s.hold)
        assert await h.platform.pcie_link_recovery() == 0, "link recovery failed"
    elif s.kind == "bridge_reset":
        # the engine holds its inputs at packet boundaries, then its outputs, and only
        # then resets (axi_aresetn falls): its requests until then are the transfer's
        # last, and none may follow
        dut.dma_bridge_resetn.value = 0
        fell = False
        for i in range(20_000):
            if i == s.hold:
                dut.dma_bridge_resetn.value = 1
            await RisingEdge(b.clk)
            if not fell and not int(dut.axi_aresetn.value):
                fell, issued = True, tb.dev.rq_posted
            if i >= s.hold and fell and int(dut.axi_aresetn.value):
                break
        assert fell and int(dut.axi_aresetn.value), f"no bridge reset (axi_aresetn fell: {fell})"
    if s.kind in ENGINE_RESETS:
        return issued + LATE_ALLOWED
    # a channel stop: Run cleared now, or the error stops the channel by itself
    for d, n in st.channels:
        if s.kind == "run_clear":
            await b.ch[(d, n)].write32(b.ch[(d, n)].reg(regs.CH_CONTROL_W1C), int(regs.Ctrl.RUN))
        status = await b.wait_idle(d, n)
        if s.kind == "error_stop" and not status & regs.STAT_ERROR_MASK:
            # the fault's read came before the chain ended, so the chain must report it
            raise AssertionError(f"{d.name}{n}: error stop without an error: {status:#x}")
    return tb.dev.rq_posted  # (the status read left after every write issued before it)


async def settle(b: Bench, s: ResetStep, st: Struck) -> None:
    """The background tasks end (a bypass-BAR access cut by a reset may fail: it must
    end, and a channel stop must leave it whole)."""
    for task in st.tasks:
        try:
            got = await with_timeout(task, STEP_LIMIT_NS, "ns")
        except Exception as e:  # (a reset may fail the access however it likes)
            if s.kind not in ENGINE_RESETS or s.target == "m_axib:gpu":
                raise AssertionError(f"{s.target} failed under {s.kind}: {e!r}") from None
            continue
        if s.target == "m_axib:read" and st.axib and s.kind not in ENGINE_RESETS and got:
            assert bytes(got) == st.axib[1], "a channel stop changed a bypass-BAR read"
    if s.target in AXIB_WRITES and st.axib and s.kind not in ENGINE_RESETS:
        off, data = st.axib
        for _ in range(200):  # (the GPU's posted writes may still be on their way)
            got = b.axib_mem.read(b.axib_base + off, len(data))
            if got == data:
                break
            await Timer(500, "ns")
        assert got == data, "a channel stop changed a bypass-BAR write"
    await Timer(5, "us")


def snapshot(st: Struck) -> list[bytes]:
    return [bytes(buf[o : o + n]) for buf, o, n in st.host] + [
        mem.read(a, n) for mem, a, n in st.axi
    ]


def packet_ended(st: Struck) -> bool:
    """Whether the struck C2H stream packet ended in one of its descriptors (a result
    written with EOP)."""
    buf, first, count = st.results
    for i in range(count):
        try:
            if C2hResult.parse(bytes(buf[first + 16 * i : first + 16 * i + 8])).eop:
                return True
        except DescriptorError:
            pass  # not written
    return False


async def check_next(b: Bench, s: ResetStep, st: Struck) -> None:
    """The next H2C and C2H on channel 0, and the struck interface again: byte-exact,
    guards untouched. A stream packet a channel stop cut stays open, as on the Vivado
    IP: after Run cleared the next H2C data continues it, after an error the restart
    ends it where it was cut; a C2H packet cut by a stop goes on into the next run. A
    reset of the engine resets the user side too, so nothing of the packet is left."""
    n = 1000 + s.length % 2000
    data = pattern(n, 700 + s.index)
    _buf, sa = b.host(n, data)
    b.put(b.mem, CHECK_AXI, bytes([GUARD]) * (n + 128))
    b.land(b.mem, CHECK_AXI + 64, data, "done")
    res = await b.ch[(Target.H2C, 0)].run(
        b.h.place_chain([Segment(sa, CHECK_AXI + 64, n)]), interrupt=False
    )
    assert res.ok and res.completed_count == 1, f"H2C after: {res}"
    want = bytes([GUARD]) * 64 + data + bytes([GUARD]) * 64
    assert b.mem.read(CHECK_AXI, n + 128) == want, "H2C after the step is not exact"
    back, ba = b.host(n + 128)
    b.land(back, 64, data, "done")
    res = await b.ch[(Target.C2H, 0)].run(
        b.h.place_chain([Segment(CHECK_AXI + 64, ba + 64, n)]), interrupt=False
    )
    assert res.ok and res.completed_count == 1, f"C2H after: {res}"
    assert bytes(back[0 : n + 128]) == want, "C2H after the step is not exact"
    kind, _, way = s.target.partition(":")
    if kind == "bypass":
        d = Target.H2C if way == "h2c" else Target.C2H
        ch = b.ch[(d, 2)]
        await ch.start(None, interrupt=False)
        out, oa = b.host(n + 128)
        if d == Target.H2C:
            b.put(b.mem, CHECK_AXI + 0x8000, bytes([GUARD]) * (n + 128))
            b.land(b.mem, CHECK_AXI + 0x8000 + 64, data, "done")
            b.byp[d].load(BypassDesc(sa, CHECK_AXI + 0x8000 + 64, n, completed=True))
        else:
            b.land(out, 64, data, "done")
            b.byp[d].load(BypassDesc(CHECK_AXI + 64, oa + 64, n, completed=True))
        status = await b.wait_idle(d, 2)
        count = await ch.completed_count()
        assert count == 1 and not status & regs.STAT_ERROR_MASK, f"bypass after: {status:#x}"
        await ch.write32(ch.reg(regs.CH_CONTROL), 0)
        got = b.mem.read(CHECK_AXI + 0x8000, n + 128) if d == Target.H2C else bytes(out[: n + 128])
        assert got == want, f"bypass {way} after the step is not exact"
    elif s.target == "stream:h2c":
        ch = b.ch[(Target.H2C, 1)]
        res = await ch.run(b.h.place_chain([Segment(sa, 0, n)]), interrupt=False)
        assert res.ok, f"H2C stream after: {res}"
        frames = [bytes((await with_timeout(b.sink.recv(), 100, "us")).tdata)]
        if s.kind == "error_stop" and frames[0] != data:  # the cut packet, ended
            frames.append(bytes((await with_timeout(b.sink.recv(), 100, "us")).tdata))
        head = b"".join(frames)[: -len(data)] if b"".join(frames).endswith(data) else None
        assert head is not None and st.stream.startswith(head), "H2C stream after the step"
        assert not head or s.kind in ("run_clear", "error_stop"), "a reset left a packet open"
        assert s.kind == "run_clear" or frames[-1] == data, "the new packet joined the cut one"
    elif s.target == "stream:c2h":
        ch = b.ch[(Target.C2H, 1)]
        if not packet_ended(st) and s.kind in ("run_clear", "error_stop"):
            # a stop left the packet open: the next run takes the rest
            m = len(st.stream)
            wb = -(-2 * m // 8) * 8  # the result's place (aligned), past room for the rest
            rest, ra = b.host(wb + 64)  # (room for more than the rest: a wrong one shows)
            res = await ch.run(b.h.place_chain([Segment(ra + wb, ra, 2 * m)]), interrupt=False)
            assert res.ok, f"C2H stream, the rest of the cut packet: {res}"
            got = C2hResult.parse(bytes(rest[wb : wb + 8]))
            b.tb.log.info("the rest of the cut C2H packet: %d of %d bytes", got.length, m)
            assert got.eop and got.length <= m, got
            assert st.stream.endswith(bytes(rest[: got.length])), "the rest is not the packet's"
            b.land(rest, 0, st.stream[m - got.length :], "done")
            b.land(rest, wb, got.pack(), "done")
        out, oa = b.host(0x2000 + 64)
        b.land(out, 0, data, "done")
        b.land(out, 0x2000, C2hResult(n, True).pack(), "done")
        await b.source.send(data)
        res = await ch.run(b.h.place_chain([Segment(oa + 0x2000, oa, 0x2000)]), interrupt=False)
        assert res.ok, f"C2H stream after: {res}"
        assert bytes(out[0:n]) == data, "C2H stream after the step is not exact"
        assert bytes(out[n:0x2000]) == bytes([GUARD]) * (0x2000 - n)
        got = C2hResult.parse(bytes(out[0x2000 : 0x2000 + C2H_RESULT_SIZE]))
        assert got == C2hResult(n, True), got
    elif s.target == "m_axib:gpu":  # the GPU's copy into the BAR, and back
        off = 0x8000 + (s.card_off & ~3)
        b.land(b.axib_mem, b.axib_base + off, data, "done")
        b.tb.gpu.write_va(b.gpu_buf, np.frombuffer(data, dtype=np.uint8))
        back = b.gpu_buf + 16 * KIB
        await with_timeout(b.gpu_copy(BYPASS_VA + off, b.gpu_buf, n), 200, "us")
        await with_timeout(b.gpu_copy(back, BYPASS_VA + off, n), 200, "us")
        got = b.tb.gpu.read_va(back, n).tobytes()
        assert got == data, "the GPU's copy through the bypass BAR after the step is not exact"
    elif kind == "m_axib":
        off = 0x8000 + (s.card_off & ~3)
        b.land(b.axib_mem, b.axib_base + off, data, "done")
        await b.bar.write(off, data)
        got = await with_timeout(b.bar.read(off, n), 200, "us")
        assert bytes(got) == data, "bypass BAR after the step is not exact"


async def run_step(b: Bench, s: ResetStep, cov: Coverage) -> None:
    b.tb.log.info("reset step %d: %s (%d B, cut %d ns)", s.index, s.bin, s.length, s.cut_ns)
    moved = cocotb.start_soon(b.wait_moving(s.target))  # (watching before anything starts)
    b.sb.begin_step()
    await b.sync_ordinals()
    st = await start(b, s)
    await moved
    await Timer(max(1, s.cut_ns), "ns")
    moving = any(not t.done() for t in st.tasks) or any(
        int(getattr(b.tb.dut, f"{d.name.lower()}_sts_{n}").value) & 1 for d, n in st.channels
    )
    issued = await strike(b, s, st)
    await settle(b, s, st)
    before = snapshot(st)
    await b.quiet()
    # no C2H write into the struck transfer's host buffers after the reset (or the stop)
    for buf, o, n in st.host:
        lo = buf.get_absolute_address(o)
        late = [w for w in b.writes if w[3] > issued and w[1] < lo + n and lo < w[1] + w[2]]
        assert not late, (
            f"step {s.index} {s.bin}: C2H writes issued after the first {issued} "
            f"(time, address, bytes, ordinal): {late[:3]}"
        )
    await check_next(b, s, st)
    assert snapshot(st) == before, f"step {s.index} {s.bin}: a late write changed a buffer"
    if s.target in AXIB_WRITES and st.axib:
        # the writes the hard IP still held land after a reset that kept the link: each
        # byte is the host's (or the GPU's) or untouched, nothing else
        off, data = st.axib
        got = b.axib_mem.read(b.axib_base + off, len(data) + 64)
        bad = [i for i, v in enumerate(got) if v != GUARD and (i >= len(data) or v != data[i])]
        assert not bad, f"step {s.index} {s.bin}: bypass-BAR bytes {bad[:4]} are neither"
    b.check_images(f"step {s.index} {s.bin}")
    b.sb.end_step()
    b.writes.clear()
    cov.hit("reset_step", s.bin)
    cov.hit("reset_cut", "mid_transfer" if moving else "after_end")


# --- register races ------------------------------------------------------------------------

# the control and interrupt-mask bits the two sides toggle (error enables: the chain's
# stopped and completed events stay logged whatever they do), one group each
BIT_GROUPS = (
    int(regs.Ctrl.IE_ALIGN_MISMATCH | regs.Ctrl.IE_MAGIC_STOPPED | regs.Ctrl.IE_READ_ERROR),
    int(regs.Ctrl.IE_WRITE_ERROR | regs.Ctrl.IE_DESC_ERROR),
)
LOGGED = int(Stat.DESC_STOPPED | Stat.DESC_COMPLETED)
# the W1S/W1C races: the register, its W1S and W1C offsets, and whether Run is in it
TOGGLED = {
    "control_w1s_w1c": (regs.CH_CONTROL, regs.CH_CONTROL_W1S, regs.CH_CONTROL_W1C, True),
    "mask_w1s_w1c": (regs.CH_INT_MASK, regs.CH_INT_MASK_W1S, regs.CH_INT_MASK_W1C, False),
}


class Side:
    """The host (the DMA BAR) or the user logic (``s_axil``): every access must be
    answered (a host read within 100 us, an AXI4-Lite response OKAY)."""

    def __init__(self, b: Bench, name: str) -> None:
        self.b, self.name, self.accesses = b, name, 0

    async def read(self, off: int) -> int:
        self.accesses += 1
        if self.name == "host":
            return await self.b.tb.dma_read32(off)
        r = await with_timeout(self.b.user.read(off, 4), 100, "us")
        assert r.resp == AxiResp.OKAY, f"s_axil read of {off:#x}: {r.resp!r}"
        return int.from_bytes(bytes(r.data), "little")

    async def write(self, off: int, value: int) -> None:
        self.accesses += 1
        if self.name == "host":
            # a read behind each write, as a CPU's flush: posted writes alone would pile
            # up without bound ahead of the read completions the channel is waiting for
            await self.b.tb.dma_write32(off, value)
            await self.b.tb.dma_read32(off)
            return
        w = await with_timeout(self.b.user.write(off, value.to_bytes(4, "little")), 100, "us")
        assert w.resp == AxiResp.OKAY, f"s_axil write of {off:#x}: {w.resp!r}"


async def toggle_bits(side: Side, reg: int, w1s: int, w1c: int, group: int, rng, run: bool):
    """Set then clear random bits of ``group`` through W1S/W1C, reading the register back
    after each: this side's bits are what it made them (a write the other side's access
    beside it lost would show), and Run stays set while the chain runs (``run``)."""
    bits = rng.getrandbits(32) & group or group & -group
    await side.write(w1c, group)  # (the channel's start set them all)
    await side.write(w1s, bits)
    got = await side.read(reg)
    assert got & group == bits, f"{side.name}: W1S {bits:#x} of {reg:#x} gave {got:#x}"
    assert not run or got & regs.Ctrl.RUN, f"{side.name}: Run lost from {got:#x}"
    await side.write(w1c, bits)
    got = await side.read(reg)
    assert got & group == 0, f"{side.name}: W1C {bits:#x} of {reg:#x} left {got:#x}"


async def run_reg_step(b: Bench, r: RegStep) -> None:
    """One register race while a chain of Completed descriptors runs (see RegStep)."""
    b.tb.log.info("register race %d: %s, %s channel 0", r.index, r.bin, r.direction)
    rng = random.Random(r.values)
    d = Target.H2C if r.direction == "h2c" else Target.C2H
    ch = b.ch[(d, 0)]
    n, k = r.length, r.descriptors
    total = n * k
    data = pattern(total, r.values & 0xFF)
    b.sb.begin_step()
    if d == Target.H2C:
        _buf, sa = b.host(total, data)
        segs = [Segment(sa + i * n, CHECK_AXI + i * n, n) for i in range(k)]
        b.land(b.mem, CHECK_AXI, data, "done")
    else:
        b.put(b.mem, CHECK_AXI, data)
        out, oa = b.host(total)
        segs = [Segment(CHECK_AXI + i * n, oa + i * n, n) for i in range(k)]
        b.land(out, 0, data, "done")
    chain = b.h.place_chain(segs, completed=range(k))
    await ch.start(chain, interrupt=False)
    racer, other = (Side(b, "host"), Side(b, "user"))[:: 1 if r.agent == "host" else -1]
    status_reg, rc_reg = ch.reg(regs.CH_STATUS), ch.reg(regs.CH_STATUS_RC)
    busy = getattr(b.tb.dut, f"{d.name.lower()}_sts_0")
    seen = 0  # what the clear-on-read status gave
    counts: list[int] = []

    async def race(side: Side, role: int) -> None:
        nonlocal seen
        end = get_sim_time("ns") + STEP_LIMIT_NS
        i = 0
        while get_sim_time("ns") < end:
            await RisingEdge(b.clk)  # (a host write is posted: it takes no time)
            running = bool(int(busy.value) & 1)
            if not running and i >= 8:
                return
            i += 1
            if r.race == "status_w1c":
                if role == 0:
                    await side.write(status_reg, 0)  # RW1C: a 0 clears nothing
                else:
                    counts.append(await side.read(ch.reg(regs.CH_COMPLETED_COUNT)))
            elif r.race == "status_rc":
                if role == 0:
                    seen |= await side.read(rc_reg)
                else:
                    await side.write(status_reg, 0)
            elif r.race in TOGGLED:
                reg, w1s, w1c, run = TOGGLED[r.race]
                await toggle_bits(
                    side, ch.reg(reg), ch.reg(w1s), ch.reg(w1c), BIT_GROUPS[role], rng, run
                )
            else:  # rw: each side its own RW register of an idle channel, read back
                idle = b.ch[(Target.H2C if role == 0 else Target.C2H, 1)]
                reg = idle.reg(regs.CH_POLL_WB_LO)
                value = rng.getrandbits(32) & ~3
                await side.write(reg, value)
                got = await side.read(reg)
                assert got == value, f"{side.name}: wrote {value:#x} to {reg:#x}, read {got:#x}"
        raise AssertionError(f"{r.bin}: the chain never ended")

    a = cocotb.start_soon(race(racer, 0))
    o = cocotb.start_soon(race(other, 1))
    await with_timeout(a, STEP_LIMIT_NS, "ns")
    await with_timeout(o, STEP_LIMIT_NS, "ns")
    status = await b.wait_idle(d, 0)
    count = await ch.completed_count()
    assert count == k, f"{r.bin}: completed count {count}, {k} descriptors"
    assert counts == sorted(counts), f"{r.bin}: the completed count went back: {counts}"
    assert (status | seen) & LOGGED == LOGGED, (
        f"{r.bin}: an event was lost: status {status:#x}, clear-on-read reads {seen:#x}"
    )
    assert not status & regs.STAT_ERROR_MASK, f"{r.bin}: status {status:#x}"
    assert racer.accesses >= 8 and other.accesses >= 8
    b.check_images(f"register race {r.index} {r.bin}")
    b.sb.end_step()
    await b.quiet()


@cocotb.test(timeout_time=4000, timeout_unit="ms")
async def test_random_resets(dut):
    """Every interruption on every interface and direction, as the seed orders them."""
    seed = int(os.environ.get("REGRESS_SEED", "1"))
    # REGRESS_STEPS: steps at least, in whole rounds of every pair (one round is every bin)
    rounds = max(1, int(os.environ.get("REGRESS_STEPS", "1")) // len(RESET_BINS))
    name = os.environ.get("REGRESS_NAME", f"resets-seed{seed}")
    h = await setup(dut, hip=dut.hip)
    b = Bench(h)
    await h.platform.pci_save_state()  # what link recovery restores
    cov = Coverage()
    plan = reset_plan(seed, rounds)
    for s in plan:
        await run_step(b, s, cov)
    races = regs_plan(seed, rounds)
    for r in races:
        await run_reg_step(b, r)
        cov.hit("reg_race", r.bin)
    cov.runs.append({"name": name, "seed": seed, "steps": len(plan) + len(races)})
    out = os.environ.get("REGRESS_COVERAGE")
    if out:
        cov.write(Path(out))
    missed = cov.missed()
    for point in ("reset_step", "reg_race"):
        assert not missed.get(point), f"{point} bins missed: {missed[point]}"


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_reset_mid_bypass_bar_read(dut):
    """A function-level reset, then dma_bridge_resetn, each in the middle of a host read
    of the bypass BAR (its requests still arriving on CQ while the first completions go
    out on CC): the engine holds its inputs at a packet boundary before its outputs, so
    the reset happens (the FLR is confirmed, axi_aresetn falls) and the registers and
    the bypass BAR answer afterwards, exactly."""
    h = await setup(dut, hip=dut.hip)
    b = Bench(h)
    await h.platform.pci_save_state()
    for kind in ("flr", "bridge_reset"):
        s = ResetStep(0, kind, "m_axib:read", 6000, 0, 0x100, 300, 2, 1)
        moved = cocotb.start_soon(b.wait_moving(s.target))
        b.sb.begin_step()
        st = await start(b, s)
        await moved
        await Timer(s.cut_ns, "ns")
        await strike(b, s, st)
        assert b.tb.dev.flr_unconfirmed == 0, "the FLR never finished"
        await settle(b, s, st)
        await b.quiet()
        await check_next(b, s, st)
        b.check_images(kind)
        b.sb.end_step()
