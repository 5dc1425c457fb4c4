"""Constrained-random descriptor chains: a seeded plan generator.

The generator knows nothing of the simulator: from a seed and the sizes of the memories
(host buffers, GPU surfaces, card RAM) it plans *steps*. A step runs one chain (H2C or
C2H) or one of each concurrently, with an optional fault and a fabric mode (plain,
completions split and reordered, added latency). The faults (:data:`STEP_FAULTS`, every
one once per seed): a completion fault on a data read (UR, CA, poisoned, dropped, one of
the four malformed completions, or held past the request's timeout and delivered late)
or on a descriptor fetch, bad magic, Stop early, Run cleared mid-chain, a BAR1 mapping
revoked mid-chain, a C2H posted write dropped or poisoned on the way, the interrupt
failed by the hard IP or lost on the way, and either direction of the FPGA's link
starved of credit for a while. :data:`FAULT_RESULTS` says what the engine must report
for each. The same seed always gives the same plan, so a failure reproduces with
``SEED=``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

KIB = 1024
GPU_PAGE = 64 * KIB
FAULT_OUTCOMES = ("ur", "ca", "poison", "drop")
# completions the hard IP's checks (or the engine's) reject: the protocol checker names them
MALFORMED = ("bad_byte_count", "bad_lower_address", "bad_length", "wrong_requester")
# faults on the completions of a data read (H2C): the kind is the fault injector's rule
DATA_READ_FAULTS = (*FAULT_OUTCOMES, *MALFORMED, "late_cpl")
# the FPGA's C2H posted writes dropped or poisoned on the way (no completion: success)
POSTED_FAULTS = ("posted_drop", "posted_poison")
# the interrupt failed by the hard IP or lost; either link direction starved of credit
MSI_FAULTS = ("msi_fail", "msi_lost")
STALL_FAULTS = ("stall_down", "stall_up")
STEP_FAULTS = (
    "stop_early",
    *DATA_READ_FAULTS,
    "desc_fault",
    "bad_magic",
    "run_cleared",
    "bar1_revoked",
    *POSTED_FAULTS,
    *MSI_FAULTS,
    *STALL_FAULTS,
)
# the fault injector's rule kind of each fault that has one of another name
RULE_KIND = {"late_cpl": "hold", "posted_drop": "drop", "posted_poison": "poison"}
# what the engine reports for a chain, as the coverage names it
RESULTS = (
    "ok",  # every descriptor done, no error bit
    "read_error",  # a data read failed (read_error bits)
    "desc_error",  # a descriptor fetch failed
    "magic_stopped",
    "desc_stopped",  # a descriptor's Stop
    "idle_stopped",  # Run cleared
    "no_interrupt",  # done, but the interrupt never came
)
# the results each fault may legitimately give (the first is the one the goal asks for)
FAULT_RESULTS: dict[str, tuple[str, ...]] = {
    "none": ("ok",),
    **{f: ("read_error",) for f in DATA_READ_FAULTS},
    "stop_early": ("desc_stopped",),
    "desc_fault": ("desc_error",),
    "bad_magic": ("magic_stopped",),
    # Run cleared after the first completion; a chain that ended first is done
    "run_cleared": ("idle_stopped", "ok"),
    # the revoke lands mid-chain; a chain that ended first is done
    "bar1_revoked": ("read_error", "ok"),
    **{f: ("ok",) for f in POSTED_FAULTS},
    **dict.fromkeys(MSI_FAULTS, ("no_interrupt",)),
    **dict.fromkeys(STALL_FAULTS, ("ok",)),
}


def _overlaps(ranges: list[tuple[int, int]], off: int, n: int) -> bool:
    return any(off < o + m and o < off + n for o, m in ranges)


@dataclass(frozen=True)
class Arena:
    """A memory the PCIe side of a descriptor can address."""

    name: str
    kind: str  # "host" or "gpu"
    size: int


@dataclass
class Piece:
    """One range of a chain: ``length`` bytes at ``offset`` of ``arena`` <-> ``card``."""

    arena: str
    offset: int
    card: int
    length: int


@dataclass
class ChainPlan:
    """One chain: its direction, ranges, flags and fault."""

    direction: str  # "h2c" or "c2h"
    pieces: list[Piece]
    completed: list[int] = field(default_factory=list)
    stop_at: int | None = None
    layout: str = "adjacent"
    fault: str | None = None  # see STEP_FAULTS
    # the fault injector's rule kind: ur/ca/poison/drop/malformed/hold for data reads
    # and descriptor fetches, drop/poison for posted writes
    fault_kind: str = ""
    fault_target: str = ""  # arena kind a data fault aims at
    fault_skip: int = 0
    magic_at: int = 0
    stall_ns: int = 0  # stall_down/stall_up: how long the link delivers nothing


@dataclass
class StepPlan:
    """One step: one chain or two concurrent ones, and the fabric mode."""

    chains: list[ChainPlan]
    fabric: str = "plain"


@dataclass
class Limits:
    """Sizes the generator works within."""

    card_size: int = 64 * KIB
    max_len: int = 64 * KIB
    max_descriptors: int = 40
    steps: int = 12


class ChainGenerator:
    """Seeded plans over ``arenas``; ``victim`` names the GPU arena a revoke may free."""

    def __init__(self, seed: int, arenas: list[Arena], limits: Limits) -> None:
        self.rng = random.Random(seed)
        self.arenas = arenas
        self.limits = limits

    # --- lengths and offsets ------------------------------------------------------------
    def length(self, cap: int) -> int:
        r = self.rng.random()
        cap = max(1, cap)
        if r < 0.15:
            n = self.rng.randint(1, 3)
        elif r < 0.35:
            n = self.rng.randint(4, 63)
        elif r < 0.5:
            n = self.rng.randint(64, 255)
        elif r < 0.72:
            n = self.rng.randint(256, 4095)
        elif r < 0.8:
            n = 4096
        else:
            n = self.rng.randint(4097, max(4097, self.limits.max_len))
        return min(n, cap)

    def offset(self, size: int, n: int) -> int:
        """An offset for ``n`` bytes, half the time straddling a 4 KiB or 64 KiB boundary."""
        hi = size - n
        if hi <= 0:
            return 0
        if self.rng.random() < 0.5:
            unit = 4 * KIB if self.rng.random() < 0.5 else GPU_PAGE
            boundary = self.rng.randrange(unit, size, unit) if size > unit else 0
            off = boundary - self.rng.randint(1, max(1, min(n, 96)))
            return min(max(off, 0), hi)
        return self.rng.randint(0, hi)

    # --- plans --------------------------------------------------------------------------
    def _n_descriptors(self, long: bool = False) -> int:
        r = self.rng.random()
        top = self.limits.max_descriptors
        if long and top >= 16:
            return self.rng.randint(16, top)
        if r < 0.2:
            return 1
        if r < 0.45:
            return self.rng.randint(2, 3)
        if r < 0.8 or top < 16:
            return self.rng.randint(4, min(15, top))
        return self.rng.randint(16, top)

    def chain(
        self,
        direction: str,
        card_lo: int,
        card_hi: int,
        busy: dict[str, list[tuple[int, int]]],
        arenas: list[Arena],
        long: bool = False,
        kind: str | None = None,
    ) -> ChainPlan:
        """A chain whose card side stays in [card_lo, card_hi). ``busy`` holds PCIe-side
        ranges other chains of the step use; C2H destinations avoid them and each other.
        The PCIe side is host memory, GPU memory or a mix (``kind``; at random when
        None). A mixed chain has at least two pieces, the first two of different kinds."""
        n = self._n_descriptors(long)
        kind = kind or self.rng.choice(("host", "gpu", "mixed"))
        by_kind = {k: [a for a in arenas if a.kind == k] for k in ("host", "gpu")}
        mixed = kind == "mixed" and all(by_kind.values())
        if mixed:
            n = max(n, 2)
        if kind != "mixed" and by_kind.get(kind):
            arenas = by_kind[kind]
        span = card_hi - card_lo
        pieces: list[Piece] = []
        card_free = card_lo
        for i in range(n):
            left = n - i
            if direction == "h2c":
                # destinations on the card never overlap within a step
                room = card_hi - card_free
                if room <= 0:
                    break
                length = self.length(max(1, room // left if left > 1 else room))
                gap = self.rng.choice((0, 0, 1, 3, 64))
                card = min(card_free + gap, card_hi - length)
                card_free = card + length
            else:
                length = self.length(max(1, span // 2))
                card = card_lo + self.rng.randint(0, span - length)
            choices = by_kind[("host", "gpu")[i]] if mixed and i < 2 else arenas
            for _ in range(20):
                arena = self.rng.choice(choices)
                n_len = min(length, arena.size)
                off = self.offset(arena.size, n_len)
                if direction == "h2c" or not _overlaps(busy.get(arena.name, []), off, n_len):
                    break
            else:
                continue
            if direction == "c2h":
                busy.setdefault(arena.name, []).append((off, n_len))
            pieces.append(Piece(arena.name, off, card, n_len))
        if not pieces:
            a = arenas[0]
            pieces.append(Piece(a.name, 0, card_lo, 1))
        return self._flags(ChainPlan(direction, pieces))

    def _flags(self, plan: ChainPlan) -> ChainPlan:
        """Descriptor layout and Completed flags (the last always has Completed)."""
        plan.layout = self.rng.choice(("adjacent", "scattered"))
        k = len(plan.pieces)
        mode = self.rng.random()
        if mode < 0.4:
            plan.completed = []
        elif mode < 0.8:
            plan.completed = sorted(self.rng.sample(range(k), self.rng.randint(1, k)))
        else:
            plan.completed = list(range(k))
        return plan

    def steps(self) -> list[StepPlan]:
        """The whole plan: every step fault appears once per seed, in a seeded order, with
        at least two fault-free steps: one with a long chain (16 descriptors or more),
        one with an H2C and a C2H chain at once (the others either, at random)."""
        lim = self.limits
        faults: list[str | None] = list(STEP_FAULTS)
        faults += [None] * max(3, lim.steps - len(faults))
        self.rng.shuffle(faults)
        free = [i for i, f in enumerate(faults) if f is None]
        plans = []
        for i, fault in enumerate(faults):
            if fault is not None:
                plans.append(self.step(fault))
            elif i == free[2]:
                plans.append(self.short_step())
            else:
                plans.append(self.step(None, long=i == free[0], concurrent=i == free[1] or None))
        return plans

    def short_step(self) -> StepPlan:
        """One descriptor of 1 to 3 bytes, with added completion latency: the smallest
        transfer, on every seed."""
        usable = [a for a in self.arenas if a.name != "victim"]
        arena = self.rng.choice(usable)
        n = self.rng.randint(1, 3)
        off = self.offset(arena.size, n)
        card = self.rng.randint(0, self.limits.card_size - n)
        direction = self.rng.choice(("h2c", "c2h"))
        plan = self._flags(ChainPlan(direction, [Piece(arena.name, off, card, n)]))
        return StepPlan([plan], "latency")

    def step(
        self, fault: str | None, long: bool = False, concurrent: bool | None = None
    ) -> StepPlan:
        """One step with ``fault``; a fault-free one may be ``long`` or ``concurrent``
        (None: at random)."""
        lim = self.limits
        usable = [a for a in self.arenas if a.name != "victim"]
        busy: dict[str, list[tuple[int, int]]] = {}
        fabric = self.rng.choice(("plain", "plain", "split_reorder", "latency"))
        forced = fault is None and concurrent is True
        if concurrent is None:
            concurrent = fault is None and not long and self.rng.random() < 0.4
        if concurrent:
            # the step every seed has (forced): both directions mixed, completions split
            kind = "mixed" if forced else None
            split = self.rng.randrange(lim.card_size // 4, 3 * lim.card_size // 4, 64)
            h2c = self.chain("h2c", 0, split, busy, usable, kind=kind)
            for p in h2c.pieces:  # H2C sources are read while C2H writes
                busy.setdefault(p.arena, []).append((p.offset, p.length))
            c2h = self.chain("c2h", split, lim.card_size, busy, usable, kind=kind)
            return StepPlan([h2c, c2h], "split_reorder" if forced else fabric)
        if fault in DATA_READ_FAULTS or fault == "bar1_revoked":
            direction = "h2c"  # only H2C reads data over PCIe
        elif fault in POSTED_FAULTS:
            direction = "c2h"  # only C2H writes data over PCIe
        elif fault == "run_cleared":
            direction = "h2c" if self.rng.random() < 0.5 else "c2h"
        else:
            direction = self.rng.choice(("h2c", "c2h"))
        if fault == "bar1_revoked":
            victim = [a for a in self.arenas if a.name == "victim"]
            plan = ChainPlan(direction, self.sequential_chain(direction, victim, 8, 14))
        elif fault == "run_cleared":
            # longer than the engine's descriptor buffer (8) can hold in flight, so that
            # Run falls with descriptors not yet started
            plan = ChainPlan(direction, self.sequential_chain(direction, usable, 16, 24))
        elif fault == "stop_early":
            # long enough that the stop lands inside the chain
            plan = ChainPlan(direction, self.sequential_chain(direction, usable, 6, 14))
        else:
            plan = self.chain(direction, 0, lim.card_size, busy, usable, long)
        self._flags(plan)
        k = len(plan.pieces)
        if long:
            plan.completed = list(range(k))  # every descriptor completes: all flags, once
        plan.fault = fault
        if fault in DATA_READ_FAULTS or fault in POSTED_FAULTS:
            plan.fault_kind = RULE_KIND.get(fault, fault)
            kinds = [next(a.kind for a in self.arenas if a.name == p.arena) for p in plan.pieces]
            plan.fault_target = self.rng.choice(sorted(set(kinds)))
            # every piece is at least one read (H2C) or one write (C2H): the fault fires
            plan.fault_skip = self.rng.randint(0, kinds.count(plan.fault_target) - 1)
        elif fault == "desc_fault":
            plan.fault_kind = self.rng.choice(FAULT_OUTCOMES)
            plan.fault_skip = 0  # the first fetch: every chain has one, so it fires
        elif fault == "bad_magic":
            plan.magic_at = self.rng.randint(0, k - 1)
        elif fault == "stop_early":
            plan.stop_at = self.rng.randint(0, k - 2)
        elif fault in STALL_FAULTS:
            plan.stall_ns = self.rng.randrange(10_000, 60_001, 1000)
        elif fault in MSI_FAULTS:
            plan.completed = []  # one interrupt, at the end: the one that fails
        # a fabric of its own would act on the same completions as the fault's rule
        plain = ("run_cleared", "bar1_revoked", "late_cpl", *MALFORMED, *STALL_FAULTS)
        return StepPlan([plan], "plain" if fault in plain else fabric)

    def sequential_chain(
        self, direction: str, arenas: list[Arena], lo: int, hi: int
    ) -> list[Piece]:
        """``lo``..``hi`` pieces laid out one after the other on both sides (no overlap)."""
        n = self.rng.randint(lo, hi)
        arena = self.rng.choice(arenas)
        size = max(64, min(4 * KIB, self.limits.card_size // (n + 1), arena.size // (n + 1)))
        pieces, card, off = [], self.rng.randint(0, 63), self.rng.randint(0, 4 * KIB)
        for _ in range(n):
            length = self.rng.randint(size // 2, size)
            if card + length > self.limits.card_size or off + length > arena.size:
                break
            pieces.append(Piece(arena.name, off, card, length))
            card += length + self.rng.randint(0, 8)
            off += length + self.rng.randint(0, 8)
        return pieces


# --- the random driver regression ------------------------------------------------------
# the ioctls: kind, source > destination
DRIVER_OPS = (
    "h2c2h:host>host",
    "h2c2h:host>gpu",
    "h2c2h:gpu>host",
    "h2c2h:gpu>gpu",
    "h2c:host",
    "h2c:gpu",
    "c2h:host",
    "c2h:gpu",
)
# what strikes one call each seed, while its DMA runs: a fault on a GPU read's completion,
# on the driver's register reads (UR, CA, lost), Bus Master or Memory Space Enable
# cleared, a function reset from outside, a hot reset, the link going down
DRIVER_FAULTS = (
    "cpl_fault",
    "reg_ur",
    "reg_ca",
    "reg_drop",
    "bme_off",
    "mse_off",
    "flr",
    "hot_reset",
    "link_down",
)
# and what another party does meanwhile: close the call's file, unpin its CUDA handle,
# issue an ioctl from a second file at once, cudaFree its destination surface
DRIVER_RACES = ("close_during", "unpin_during", "two_files", "cudafree_during")
# how a step pins its CUDA surfaces: nv-p2p (PIN_CUDA of the range) or a dma-buf export
# imported by fd (PIN_DMABUF; its range 4 KiB aligned). cudafree_during's destination is
# always an nv-p2p pin: the race is the free callback's, and a dma-buf is not revoked
PIN_WAYS = ("p2p", "dmabuf")


def pin_ways(rng: random.Random, steps: int) -> list[str]:
    """The pin way of each step: alternating from a seeded start, so that a seed with two
    steps or more tries both."""
    first = rng.randrange(2)
    return [PIN_WAYS[(first + i) % 2] for i in range(steps)]


# the ioctl's result each event must give ("ok": the call is unharmed)
DRIVER_RESULTS: dict[str, str] = {
    "none": "ok",
    **dict.fromkeys(DRIVER_FAULTS, "EIO"),
    "close_during": "ok",
    "unpin_during": "ok",
    "two_files": "ok",
    "cudafree_during": "EFAULT",
}
# faults that need the engine's reads in flight (an H2C phase)
MID_READ_FAULTS = ("bme_off", "mse_off", "flr", "hot_reset", "link_down")


def fits(event: str, op: str) -> bool:
    """Whether ``event`` can strike ioctl ``op``."""
    kind, sides = op.split(":")
    src, _, dst = sides.partition(">")
    if event == "cpl_fault":
        return kind != "c2h" and src == "gpu"  # it reads GPU memory
    if event in MID_READ_FAULTS:
        return kind in ("h2c", "h2c2h")
    if event == "unpin_during":
        return "gpu" in sides
    if event == "two_files":
        return kind == "h2c2h"
    if event == "cudafree_during":
        return kind == "h2c2h" and dst == "gpu"
    return True


def driver_plan(rng: random.Random, steps: int) -> list[tuple[str, str]]:
    """The ioctls of a driver seed, each with the event that strikes it: ``steps`` plain
    calls (at least one of each op) and one call for every fault and race (an op added
    where none left fits), in a seeded order."""
    events_n = len(DRIVER_FAULTS) + len(DRIVER_RACES)
    extra = max(0, steps - len(DRIVER_OPS)) + events_n
    ops = list(DRIVER_OPS) + [rng.choice(DRIVER_OPS) for _ in range(extra)]
    rng.shuffle(ops)
    events = ["none"] * len(ops)
    for ev in (*DRIVER_FAULTS, *DRIVER_RACES):
        free = [i for i, op in enumerate(ops) if events[i] == "none" and fits(ev, op)]
        if free:
            i = rng.choice(free)
        else:
            i = rng.randint(0, len(ops))
            ops.insert(i, rng.choice([o for o in DRIVER_OPS if fits(ev, o)]))
            events.insert(i, "none")
        events[i] = ev
    return list(zip(ops, events, strict=True))


# a cudaFree'd destination (cudafree_during) is a surface of its own of this size
VICTIM_BYTES = 2 << 20

# the GPU's own step beside each ioctl of the driver regression: a kernel's plain stores
# and its 64-bit mmio store into registered host memory, the copy engine to and from it,
# a stream write, and a kernel's mark into the card's mailbox
GPU_STEPS = (
    "kernel_store",
    "kernel_st64",
    "copy_to_host",
    "copy_from_host",
    "stream_write",
    "mailbox",
)


@dataclass(frozen=True)
class GpuStep:
    """A GPU-initiated step: ``kind``, ``n`` bytes (``kernel_store`` and the copies) at
    ``off`` of the registered host buffer (and ``dev_off`` of the GPU's own buffer), the
    value a store or a mark writes, and ``coalesce`` (bytes a plain store's piece may be)."""

    kind: str
    n: int
    off: int
    dev_off: int
    value: int
    coalesce: int


def gpu_steps(seed: int, events: list[str], size: int) -> list[GpuStep]:
    """The GPU step beside each of a driver seed's ioctls (``events``: what strikes each):
    every kind at least once a seed, in a seeded order; a mailbox mark only beside a call
    nothing strikes (a reset of the card empties its mailbox, a register fault would hit
    the driver's reads of it). Drawn from a stream of their own (``seed``), so a seed's
    ioctls are the same with them as without. ``size``: the registered buffer's bytes."""
    rng = random.Random(seed * 7919 + 56)
    quiet = [i for i, e in enumerate(events) if e == "none"]
    kinds: list[str | None] = [None] * len(events)
    if quiet:
        kinds[rng.choice(quiet)] = "mailbox"
    others = [k for k in GPU_STEPS if k != "mailbox"]
    free = [i for i, k in enumerate(kinds) if k is None]
    rng.shuffle(free)
    for j, i in enumerate(free):
        if j < len(others):
            kinds[i] = others[j]
        else:
            kinds[i] = rng.choice(GPU_STEPS if events[i] == "none" else others)
    out = []
    for kind in kinds:
        assert kind is not None
        n = rng.randint(1, size // 4)
        if kind == "kernel_st64":
            n = 8
        elif kind in ("stream_write", "mailbox"):
            n = 4
        align = n if n in (4, 8) else 1
        off = rng.randrange(0, size - n + 1, align)
        dev_off = rng.randrange(0, size - n + 1)
        out.append(GpuStep(kind, n, off, dev_off, rng.getrandbits(32), rng.choice((4, 128))))
    return out


@dataclass(frozen=True)
class DriverStep:
    """One ioctl of the random driver test: ``op`` (``kind:src>dst``; ``c2h:gpu`` moves
    card RAM to the GPU), the event that strikes it, how its CUDA side is pinned
    (``p2p`` or ``dmabuf``), its length, the source and destination offsets in their
    memories (a C2H's destination offset is its source's), and the card RAM offset of an
    H2C or C2H. With ``cudafree_during`` the destination offset is in a surface of its
    own (:data:`VICTIM_BYTES`)."""

    index: int
    op: str
    event: str
    way: str
    n: int
    src_off: int
    dst_off: int
    card_off: int

    @property
    def kind(self) -> str:
        return self.op.split(":")[0]

    @property
    def src_kind(self) -> str:
        return self.op.split(":")[1].partition(">")[0]

    @property
    def dst_kind(self) -> str:
        """The destination memory (a C2H's is the memory its ``op`` names)."""
        src, _, dst = self.op.split(":")[1].partition(">")
        return src if self.kind == "c2h" else dst


class DriverGenerator:
    """The ioctls of a driver seed (:func:`driver_plan`, :func:`pin_ways`) and, step by
    step, their lengths and offsets: lengths and offsets from the chain generator
    ``gen``, the rest from the seed's stream ``rng``, drawn in a fixed order so that a
    seed always gives the same steps. ``size`` is the bytes of the host and GPU buffers,
    ``card_size`` the card RAM's, ``max_len`` the longest H2C2H."""

    def __init__(
        self,
        rng: random.Random,
        gen: ChainGenerator,
        steps: int,
        size: int,
        card_size: int,
        max_len: int,
    ) -> None:
        self.rng, self.gen = rng, gen
        self.size, self.card_size, self.max_len = size, card_size, max_len
        self.plan = driver_plan(rng, steps)
        self.ways = pin_ways(rng, len(self.plan))

    def __len__(self) -> int:
        return len(self.plan)

    def step(self, si: int) -> DriverStep:
        """Step ``si`` (call them in order: each draws from the streams)."""
        rng, gen, size = self.rng, self.gen, self.size
        op, event = self.plan[si]
        way = self.ways[si]
        kind, sides = op.split(":")
        src_kind, _, dst_kind = sides.partition(">")
        if kind == "c2h":
            dst_kind = src_kind
        limit = self.max_len if kind == "h2c2h" else self.card_size
        n = gen.length(limit)
        if event != "none" and event not in ("reg_ur", "reg_ca", "reg_drop"):
            n = min(max(n, 16 * KIB), limit)  # long enough to be acted on while it runs
        src_off = gen.offset(size, n)
        dst_off = gen.offset(size, n)
        if src_kind == dst_kind and src_off < dst_off + n and dst_off < src_off + n:
            dst_off = (src_off + n + rng.randint(0, 4 * KIB)) % (size - n)
            if dst_off < src_off + n and src_off < dst_off + n:
                dst_off = 0 if src_off >= n else size - n
        if kind == "c2h":
            dst_off = src_off
        if way == "dmabuf":  # a dma-buf's range starts on a 4 KiB page
            src_off &= ~0xFFF
            dst_off &= ~0xFFF
            if src_kind == dst_kind and src_off < dst_off + n and dst_off < src_off + n:
                dst_off = (src_off + -(-n // 4096) * 4096) % (size - n) & ~0xFFF
                if dst_off < src_off + n and src_off < dst_off + n:
                    way = "p2p"  # no two apart: this step pins through nv-p2p
        card_off = rng.randint(0, self.card_size - n) if kind != "h2c2h" else 0
        if event == "cudafree_during":
            dst_off = rng.randint(0, VICTIM_BYTES - n)
        return DriverStep(si, op, event, way, n, src_off, dst_off, card_off)
