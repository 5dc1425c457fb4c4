"""pevb_desc_eng alone: XDMA descriptor chains in a model of host memory, fetched through
a model of the read engine (reads answered after random delays, their completions
interleaved, a DWORD lane count per beat at random, retired when whole) and run by a
model of the data mover (random back-pressure, completions in order after random
delays), with random halts, MRRS settings and adjacency hints that are right, too large
or too small. Checked against the chain and PG195's rules:

- every descriptor of the chain reaches the data mover once, in order, with its source,
  destination, length and flags, and nothing else does (a prefetched descriptor the
  chain does not reach, or one fetched from the wrong place, would);
- each fetch reads whole descriptors from an aligned address, no more than MRRS, the
  buffer or the 4 KiB page allow, with no more than DESC_FETCHES in flight; with right
  hints, each descriptor of the chain is read once and nothing else is;
- the completed count, the poll-mode write-back of it after each descriptor with the
  Completed flag, the Stopped and Completed events, busy falling at the end;
- a descriptor with a bad magic or a zero length, or a fetch that fails, stops the chain
  with that event after the descriptors before it, and a write-back with the error bit.

With BYPASS the descriptors come from the byp_* port instead and run in load order, a
load taken in the cycle byp_ready falls too.

Not pinned here: how far ahead the engine prefetches past the next descriptor (it
extends a fetch by the adjacency a matched next pointer implies); that changes when
descriptors are read, not which, and the system tests' timing covers it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.config import bench_params
from tb.env.rtl_bench import start

MAGIC = 0xAD4B
RUN = 1 << 0
WB_ENABLE = 1 << 26
STOP, COMPLETED, EOP = 1 << 0, 1 << 1, 1 << 4
# event bits (pevb_regs.vh)
EV_STOPPED, EV_COMPLETED, EV_ALIGN, EV_MAGIC, EV_LENGTH, EV_IDLE = (1 << b for b in range(1, 7))
DESC_ERROR_LSB = 19
WB_ERROR = 1 << 31
CYCLE_LIMIT = 20000  # per chain: a chain that does not end by then hangs the engine

INPUTS = (
    "control",
    "desc_addr",
    "desc_adj",
    "wb_addr",
    "halt",
    "mrrs_enc",
    "m_fetch_ready",
    "buf_wr_en",
    "buf_wr_idx",
    "buf_wr_data",
    "fetch_retire_valid",
    "fetch_retire_err",
    "byp_load",
    "byp_src",
    "byp_dst",
    "byp_len",
    "byp_ctl",
    "m_desc_ready",
    "done_valid",
    "done_flags",
    "done_rd_err",
    "done_wr_err",
    "done_abort",
    "m_wb_ready",
)


@dataclass
class Desc:
    """One XDMA descriptor: where it is and what it says."""

    addr: int
    src: int
    dst: int
    length: int
    flags: int  # STOP, COMPLETED, EOP
    nxt: int = 0
    adj: int = 0
    magic: int = MAGIC

    def dwords(self) -> list[int]:
        control = self.magic << 16 | (self.adj & 0x3F) << 8 | self.flags
        return [
            control,
            self.length,
            self.src & 0xFFFFFFFF,
            self.src >> 32,
            self.dst & 0xFFFFFFFF,
            self.dst >> 32,
            self.nxt & 0xFFFFFFFF,
            self.nxt >> 32,
        ]

    def mover_flags(self) -> int:
        """The flags as the engine hands them to the data mover: {EOP, Completed, Stop}."""
        return (self.flags >> 4 & 1) << 2 | (self.flags >> 1 & 1) << 1 | (self.flags & 1)


@dataclass
class Fetch:
    addr: int
    length: int
    info: int
    written: int = 0  # DWORDs written so far
    err: int = 0


@dataclass
class Run:
    """What one chain did."""

    dispatched: list[tuple[int, int, int, int]] = field(default_factory=list)
    fetched: list[int] = field(default_factory=list)  # descriptor addresses read
    wb: list[int] = field(default_factory=list)
    events: int = 0
    cycles: int = 0


def make_chain(rng: random.Random, n: int, hints: str) -> list[Desc]:
    """``n`` descriptors in blocks of adjacent ones at random places (some near a 4 KiB
    boundary), the last with Stop; adjacency hints right, too large or too small."""
    descs: list[Desc] = []
    used: set[int] = set()
    while len(descs) < n:
        size = min(rng.randrange(1, 9), n - len(descs))
        page = rng.randrange(1 << 20) << 12
        off = rng.choice([rng.randrange(128), 128 - rng.randrange(1, 5)]) * 32
        base = page + off
        if any(base + 32 * k in used for k in range(size)):
            continue
        for k in range(size):
            addr = base + 32 * k
            used.add(addr)
            flags = (COMPLETED if rng.random() < 0.5 else 0) | (EOP if rng.random() < 0.3 else 0)
            descs.append(
                Desc(
                    addr, rng.getrandbits(64), rng.getrandbits(64), rng.randrange(1, 1 << 28), flags
                )
            )
    descs[-1].flags |= STOP
    for k, d in enumerate(descs[:-1]):
        d.nxt = descs[k + 1].addr
        run = 1  # descriptors adjacent from the next one on, the next one included
        while k + 1 + run < n and descs[k + 1 + run].addr == descs[k + run].addr + 32:
            run += 1
        d.adj = {"right": run - 1, "large": run - 1 + rng.randrange(1, 4), "small": 0}[hints]
        d.adj = min(d.adj, 63)
    return descs


class Memory:
    """Host memory holding the chain; anywhere else, descriptors with a good magic that
    name where they are (so one run by mistake is seen)."""

    def __init__(self, chain: list[Desc]) -> None:
        self.at = {d.addr: d.dwords() for d in chain}

    def dword(self, addr: int) -> int:
        base = addr & ~31
        if base not in self.at:
            self.at[base] = Desc(base, 0xBAD0_0000_0000_0000 | base, base, 32, 0).dwords()
        return self.at[base][(addr >> 2) & 7]


class Bench:
    """The engine's neighbours, one cycle at a time."""

    def __init__(self, dut, rng: random.Random) -> None:
        self.dut = dut
        self.rng = rng
        p = bench_params()
        self.keep = p.get("KEEP", 2)
        self.depth = p.get("DESC_DEPTH", 8)
        self.fetches_max = p.get("DESC_FETCHES", 2)
        self.idx_width = (self.depth * 8 - 1).bit_length()
        self.bypass = p.get("BYPASS", 0)

    async def run_chain(
        self,
        chain: list[Desc],
        first_adj: int,
        wb: bool,
        fail_fetch: int | None = None,
        loads: list[Desc] | None = None,
    ) -> Run:
        """Start the chain, play the neighbours until the engine is idle again, stop."""
        dut, rng = self.dut, self.rng
        mem = Memory(chain)
        mrrs = rng.randrange(8)
        max_bytes = (4 << min(mrrs, 5)) * 32
        dut.desc_addr.value = chain[0].addr if chain else 0
        dut.desc_adj.value = first_adj
        dut.mrrs_enc.value = mrrs
        dut.wb_addr.value = 0x1000
        dut.control.value = RUN | (WB_ENABLE if wb else 0)
        run = Run()
        fetches: list[Fetch] = []
        retiring: list[Fetch] = []
        moving: list[tuple[int, int]] = []  # (cycle done, mover flags)
        fetch_count = 0
        started = False
        loads = list(loads or [])
        byp_ready = 0  # as sampled last cycle: a load now is taken (room for one more)
        mover = rng.choice([0.6, 0.6, 0.15])  # a slow data mover fills the buffer
        for cycle in range(CYCLE_LIMIT):
            # inputs for this cycle
            dut.halt.value = int(rng.random() < 0.05)
            dut.m_fetch_ready.value = rd_ready = int(rng.random() < 0.7)
            dut.m_desc_ready.value = desc_ready = int(rng.random() < mover)
            dut.m_wb_ready.value = wb_ready = int(rng.random() < 0.5)
            en = idx = data = 0
            writable = [f for f in fetches if f.written < f.length // 4]
            if writable and rng.random() < 0.6:
                f = rng.choice(writable)
                lanes = min(rng.randrange(1, self.keep + 1), f.length // 4 - f.written)
                idx = (f.info + f.written) % (1 << self.idx_width)
                for g in range(lanes):
                    en |= 1 << g
                    data |= mem.dword(f.addr + 4 * (f.written + g)) << (32 * g)
                f.written += lanes
                if f.written == f.length // 4:
                    retiring.append(f)
            dut.buf_wr_en.value = en
            dut.buf_wr_idx.value = idx
            dut.buf_wr_data.value = data
            retire = None
            if retiring and rng.random() < 0.5:
                retire = retiring.pop(0)
            if retire is None and fail_fetch is not None:
                # the failing fetch retires with an error, its data never written
                failing = [f for f in fetches if f.err and f not in retiring]
                if failing:
                    retire = failing[0]
            dut.fetch_retire_valid.value = int(retire is not None)
            dut.fetch_retire_err.value = retire.err if retire is not None else 0
            if retire is not None:
                fetches.remove(retire)
            done = moving and moving[0][0] <= cycle
            dut.done_valid.value = int(bool(done))
            dut.done_flags.value = moving[0][1] if done else 0
            if done:
                moving.pop(0)
            # byp_ready high last cycle: a load now is taken, in the cycle it falls too
            load = loads.pop(0) if loads and byp_ready and rng.random() < 0.8 else None
            dut.byp_load.value = int(load is not None)
            if load is not None:
                dut.byp_src.value, dut.byp_dst.value = load.src, load.dst
                dut.byp_len.value, dut.byp_ctl.value = load.length, load.flags
            await ReadOnly()
            # outputs, and what the coming edge takes
            run.events |= int(dut.event_out.value)
            busy = int(dut.busy.value)
            byp_ready = int(dut.byp_ready.value)
            if int(dut.m_fetch_valid.value) and rd_ready:
                addr, length = int(dut.m_fetch_addr.value), int(dut.m_fetch_len.value)
                assert addr % 32 == 0, f"fetch from {addr:#x}: not a descriptor's address"
                assert length and length % 32 == 0, f"fetch of {length} bytes"
                assert length <= max_bytes, f"fetch of {length} bytes over MRRS {max_bytes}"
                assert length <= 32 * self.depth, f"fetch of {length} bytes, buffer {self.depth}"
                assert addr % 4096 + length <= 4096, f"fetch {addr:#x}+{length} crosses 4 KiB"
                assert len(fetches) < self.fetches_max, f"{len(fetches) + 1} fetches in flight"
                f = Fetch(addr, length, int(dut.m_fetch_info.value))
                run.fetched += range(addr, addr + length, 32)
                if fail_fetch is not None and fetch_count == fail_fetch:
                    f.err = 0b00100  # the read's completion came back with an error
                    f.written = f.length // 4  # none of its data will come
                fetch_count += 1
                fetches.append(f)
            if int(dut.m_desc_valid.value) and desc_ready:
                run.dispatched.append(
                    (
                        int(dut.m_desc_src.value),
                        int(dut.m_desc_dst.value),
                        int(dut.m_desc_len.value),
                        int(dut.m_desc_flags.value),
                    )
                )
                moving.append((cycle + rng.randrange(1, 12), int(dut.m_desc_flags.value)))
            if int(dut.m_wb_valid.value) and wb_ready:
                assert int(dut.m_wb_addr.value) == 0x1000
                run.wb.append(int(dut.m_wb_data.value))
            started |= bool(busy)
            await RisingEdge(dut.clk)
            if started and not busy and not moving and not fetches and not loads:
                run.cycles = cycle
                break
        else:
            raise AssertionError(f"the engine still busy after {CYCLE_LIMIT} cycles")
        dut.control.value = 0  # Run off: ready for the next chain
        for _ in range(4):
            await RisingEdge(dut.clk)
        return run


def expected(chain: list[Desc]) -> list[tuple[int, int, int, int]]:
    return [(d.src, d.dst, d.length, d.mover_flags()) for d in chain]


@cocotb.test()
async def test_random_chains(dut):
    """Chains of 1 to 40 descriptors with every kind of adjacency hint, each run whole."""
    rng = random.Random(cocotb.RANDOM_SEED)
    bench = Bench(dut, rng)
    if bench.bypass:
        return
    await start(dut, INPUTS)
    prefetch_beyond = 0
    for k in range(24):
        n = rng.choice([1, 2, rng.randrange(3, 41)])
        hints = ("right", "large", "small")[k % 3]
        chain = make_chain(rng, n, hints)
        run_len = 1
        while run_len < n and chain[run_len].addr == chain[run_len - 1].addr + 32:
            run_len += 1
        first_adj = {"right": run_len - 1, "large": run_len + 2, "small": 0}[hints]
        wb = rng.random() < 0.7
        run = await bench.run_chain(chain, min(first_adj, 63), wb)
        assert run.dispatched == expected(chain), f"chain {k} ({hints}): wrong descriptors run"
        if hints == "right":  # each descriptor read once, nothing else read
            assert sorted(run.fetched) == sorted(d.addr for d in chain), f"chain {k}: fetches"
        assert int(dut.count.value) == n, f"chain {k}: count {int(dut.count.value)}, not {n}"
        want_wb = [i + 1 for i, d in enumerate(chain) if d.flags & COMPLETED] if wb else []
        # the latest value wins while one waits: the write-backs are those counts, some
        # skipped, the last always there
        assert all(w in want_wb for w in run.wb) and run.wb == sorted(run.wb), run.wb
        assert (run.wb[-1] if run.wb else None) == (want_wb[-1] if want_wb else None), run.wb
        assert run.events & EV_STOPPED, f"chain {k}: no descriptor-stopped event"
        assert bool(run.events & EV_COMPLETED) == any(d.flags & COMPLETED for d in chain)
        assert run.events & ~(EV_STOPPED | EV_COMPLETED) == 0, f"events {run.events:#x}"
        prefetch_beyond += hints == "large"
    assert prefetch_beyond


@cocotb.test()
async def test_bad_descriptors_and_failed_fetches_stop_the_chain(dut):
    """A bad magic, a zero length, a fetch that fails: the chain stops there with its
    event, after the descriptors before it, and the write-back says the error."""
    rng = random.Random(cocotb.RANDOM_SEED + 1)
    bench = Bench(dut, rng)
    if bench.bypass:
        return
    await start(dut, INPUTS)
    for k in range(12):
        n = rng.randrange(3, 20)
        chain = make_chain(rng, n, "right")
        bad = rng.randrange(n)
        kind = ("magic", "length", "fetch")[k % 3]
        fail_fetch = None
        if kind == "magic":
            chain[bad].magic = 0x1234
        elif kind == "length":
            chain[bad].length = 0
        else:
            bad, fail_fetch = None, 0  # the first fetch fails: nothing runs
        run = await bench.run_chain(chain, 0, True, fail_fetch=fail_fetch)
        ran = bad if bad is not None else 0
        assert run.dispatched == expected(chain[:ran]), f"{kind}: ran {len(run.dispatched)}"
        want = {"magic": EV_MAGIC, "length": EV_LENGTH, "fetch": 0b00100 << DESC_ERROR_LSB}[kind]
        assert run.events & want == want, f"{kind}: events {run.events:#x}"
        assert run.wb and run.wb[-1] == WB_ERROR | ran, f"{kind}: write-backs {run.wb}"


@cocotb.test()
async def test_bypass_runs_loads_in_order(dut):
    """BYPASS: descriptors loaded on byp_* run in load order with their flags; Stop ends
    nothing; the count and the write-back follow."""
    rng = random.Random(cocotb.RANDOM_SEED + 2)
    bench = Bench(dut, rng)
    if not bench.bypass:
        return
    await start(dut, INPUTS)
    for k in range(10):
        n = rng.randrange(1, 30)
        loads = make_chain(rng, n, "right")
        for d in loads:
            d.flags = rng.choice([0, STOP, COMPLETED, EOP, COMPLETED | EOP, STOP | COMPLETED])
        run = await bench.run_chain([], 0, True, loads=loads)
        assert run.dispatched == expected(loads), f"loads {k}: wrong descriptors run"
        assert int(dut.count.value) == n
        want_wb = [i + 1 for i, d in enumerate(loads) if d.flags & COMPLETED]
        assert (run.wb[-1] if run.wb else None) == (want_wb[-1] if want_wb else None), run.wb
