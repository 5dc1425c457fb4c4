"""Constrained-random descriptor chains: a seeded plan generator.

The generator knows nothing of the simulator: from a seed and the sizes of the memories
(host buffers, GPU surfaces, card RAM) it plans *steps*. A step runs one chain (H2C or
C2H) or one of each concurrently, with an optional fault (fabric error on a data read or
a descriptor fetch, bad magic, Stop early, Run cleared mid-chain, a BAR1 mapping revoked
mid-chain) and a fabric mode (plain, completions split and reordered, added latency).
The same seed always gives the same plan, so a failure reproduces with ``SEED=``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

KIB = 1024
GPU_PAGE = 64 * KIB
FAULT_OUTCOMES = ("ur", "ca", "poison", "drop")
STEP_FAULTS = (
    "stop_early",
    "ur",
    "ca",
    "poison",
    "drop",
    "desc_fault",
    "bad_magic",
    "run_cleared",
    "bar1_revoked",
)


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
    fault_kind: str = ""  # ur/ca/poison/drop for data and descriptor faults
    fault_target: str = ""  # arena kind a data fault aims at
    fault_skip: int = 0
    magic_at: int = 0


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
    ) -> ChainPlan:
        """A chain whose card side stays in [card_lo, card_hi). ``busy`` holds PCIe-side
        ranges other chains of the step use; C2H destinations avoid them and each other.
        The PCIe side is host memory, GPU memory or a mix (chosen per chain)."""
        n = self._n_descriptors(long)
        kind = self.rng.choice(("host", "gpu", "mixed"))
        if kind != "mixed" and any(a.kind == kind for a in arenas):
            arenas = [a for a in arenas if a.kind == kind]
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
            for _ in range(20):
                arena = self.rng.choice(arenas)
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
        """The whole plan: every step fault appears once per seed, in a seeded order."""
        lim = self.limits
        faults: list[str | None] = list(STEP_FAULTS)
        faults += [None] * max(0, lim.steps - len(faults))
        self.rng.shuffle(faults)
        plans = []
        faults = faults[: max(lim.steps, len(STEP_FAULTS))]
        # one fault-free step per seed has a long chain (16 descriptors or more)
        long_at = next((i for i, f in enumerate(faults) if f is None), -1)
        for i, fault in enumerate(faults):
            plans.append(self.step(fault, long=i == long_at))
        return plans

    def step(self, fault: str | None, long: bool = False) -> StepPlan:
        lim = self.limits
        usable = [a for a in self.arenas if a.name != "victim"]
        busy: dict[str, list[tuple[int, int]]] = {}
        fabric = self.rng.choice(("plain", "plain", "split_reorder", "latency"))
        concurrent = fault is None and not long and self.rng.random() < 0.4
        if concurrent:
            split = self.rng.randrange(lim.card_size // 4, 3 * lim.card_size // 4, 64)
            h2c = self.chain("h2c", 0, split, busy, usable)
            for p in h2c.pieces:  # H2C sources are read while C2H writes
                busy.setdefault(p.arena, []).append((p.offset, p.length))
            c2h = self.chain("c2h", split, lim.card_size, busy, usable)
            return StepPlan([h2c, c2h], fabric)
        if fault in ("ur", "ca", "poison", "drop", "bar1_revoked"):
            direction = "h2c"  # only H2C reads data over PCIe
        elif fault == "run_cleared":
            direction = "h2c" if self.rng.random() < 0.5 else "c2h"
        else:
            direction = self.rng.choice(("h2c", "c2h"))
        if fault == "bar1_revoked":
            victim = [a for a in self.arenas if a.name == "victim"]
            plan = ChainPlan(direction, self.sequential_chain(direction, victim, 8, 14))
        elif fault in ("run_cleared", "stop_early"):
            # long enough that the stop lands inside the chain
            plan = ChainPlan(direction, self.sequential_chain(direction, usable, 6, 14))
        else:
            plan = self.chain(direction, 0, lim.card_size, busy, usable, long)
        self._flags(plan)
        k = len(plan.pieces)
        plan.fault = fault
        if fault in FAULT_OUTCOMES:
            plan.fault_kind = fault
            kinds = [next(a.kind for a in self.arenas if a.name == p.arena) for p in plan.pieces]
            plan.fault_target = self.rng.choice(sorted(set(kinds)))
            # every piece is at least one read: the fault always fires
            plan.fault_skip = self.rng.randint(0, kinds.count(plan.fault_target) - 1)
        elif fault == "desc_fault":
            plan.fault_kind = self.rng.choice(FAULT_OUTCOMES)
            plan.fault_skip = self.rng.randint(0, 1)
        elif fault == "bad_magic":
            plan.magic_at = self.rng.randint(0, k - 1)
        elif fault == "stop_early":
            plan.stop_at = self.rng.randint(0, k - 2)
        return StepPlan([plan], "plain" if fault in ("run_cleared", "bar1_revoked") else fabric)

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
