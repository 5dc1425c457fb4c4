"""Seeded plans of the reset regression: every way the engine's work can be cut short,
in the middle of a transfer on every interface and in every direction.

A step is one *kind* of interruption (:data:`RESET_KINDS`) striking one *target* (a
transfer on one interface, :data:`RESET_TARGETS`) while its data moves. Four kinds reset
the engine (a function-level reset, a hot reset, the link going down, the drop-in's
``dma_bridge_resetn``); two stop a channel without a reset (Run cleared, an error). On
the PCIe-to-DMA bypass master (``m_axib``), which no channel drives, the channel stops
strike an H2C beside the burst, which must go on untouched. The bursts there come from
the host, or from the GPU's copy engine (its writes, through the BAR registered with
``cudaHostRegister(IoMemory)``: a GPU read cut by a reset is a sticky error that ends
the CUDA context, as on hardware, so only writes are struck).

A seed's plan holds every (kind, target) pair ``rounds`` times in a seeded order, so the
coverage goal (every pair) is met by any seed's default plan. The same seed always
gives the same plan.

Register races (:func:`regs_plan`): while a chain's descriptors complete, the host
(through the DMA BAR) and the user logic (through ``s_axil``) reach the same channel's
registers at once, one of them racing the engine's events with each kind of access the
register file has (:data:`REG_RACES`) and the other reading or writing beside it; no
event, write or access may be lost.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

KIB = 1024

# interruptions that reset the engine, then those that only stop a channel
ENGINE_RESETS = ("flr", "hot_reset", "link_down", "bridge_reset")
CHANNEL_STOPS = ("run_clear", "error_stop")
RESET_KINDS = (*ENGINE_RESETS, *CHANNEL_STOPS)
# what is moving when it strikes: the memory-mapped channels (each way, and both at
# once), a descriptor bypass channel and a stream channel each way, a host write or
# read burst through the bypass BAR to the m_axib master, and the GPU's copy engine
# writing through it
RESET_TARGETS = (
    "h2c",
    "c2h",
    "h2c2h",
    "bypass:h2c",
    "bypass:c2h",
    "stream:h2c",
    "stream:c2h",
    "m_axib:write",
    "m_axib:read",
    "m_axib:gpu",
)
# the targets that write through the bypass BAR
AXIB_WRITES = ("m_axib:write", "m_axib:gpu")
# the coverage bins: every kind crossed with every target
RESET_BINS = tuple(f"{k}@{t}" for k in RESET_KINDS for t in RESET_TARGETS)
# the drop-in build the steps run on (runner options): three channels each way (0
# memory-mapped, 1 a stream, 2 descriptor bypass), the bypass master behind a 64 KiB BAR
# at AXI 0x40000, dma_bridge_resetn and the AXI4-Lite slave
RESET_BUILD: dict[str, int] = {
    "H2C_CHANNELS": 3,
    "C2H_CHANNELS": 3,
    "H2C_STREAM": 2,
    "C2H_STREAM": 2,
    "H2C_BYPASS": 4,
    "C2H_BYPASS": 4,
    "AXIB": 1,
    "AXIB_BAR_ADDR_WIDTH": 16,
    "AXIB_AXI_BASE": 0x40000,
    "SOFT_RESET_EN": 1,
    "AXIL_SLAVE": 1,
}


@dataclass(frozen=True)
class ResetStep:
    """One step: ``kind`` strikes ``target`` once its data moves, ``cut_ns`` later. The
    transfer is ``length`` bytes at ``host_off`` of the step's host buffer and
    ``card_off`` of the user's AXI memory. ``hold`` is how long a reset lasts where the
    kind lets the test choose: clocks of ``dma_bridge_resetn`` low, or ns of the link
    down. ``skip`` places an error stop: the reads (or descriptor fetches) let through
    before the failing one."""

    index: int
    kind: str
    target: str
    length: int
    host_off: int
    card_off: int
    cut_ns: int
    hold: int
    skip: int

    @property
    def bin(self) -> str:
        return f"{self.kind}@{self.target}"

    @property
    def interface(self) -> str:
        """``mm``, ``bypass``, ``stream`` or ``m_axib``."""
        return self.target.split(":")[0] if ":" in self.target else "mm"

    @property
    def directions(self) -> tuple[str, ...]:
        """The engine's directions the target moves data in (none for ``m_axib``)."""
        if self.target == "h2c2h":
            return ("h2c", "c2h")
        if self.interface == "m_axib":
            return ()
        return (self.target.split(":")[-1],)


def reset_plan(seed: int, rounds: int = 1) -> list[ResetStep]:
    """Every (kind, target) pair ``rounds`` times, in a seeded order, each with seeded
    sizes, offsets and timing. Lengths are long enough (8 to 24 KiB; 2 to 8 KiB through
    the bypass BAR) that the transfer is still moving when the interruption comes."""
    if rounds < 1:
        raise ValueError(f"rounds must be 1 or more, not {rounds}")
    rng = random.Random(seed)
    pairs = [(k, t) for _ in range(rounds) for k in RESET_KINDS for t in RESET_TARGETS]
    rng.shuffle(pairs)
    steps = []
    for i, (kind, target) in enumerate(pairs):
        if target.startswith("m_axib"):
            length = rng.randrange(2 * KIB, 8 * KIB + 1, 4)
        else:
            length = rng.randint(8 * KIB, 24 * KIB)
        host_off = rng.randint(0, 4 * KIB - 1)
        card_off = rng.randint(0, 4 * KIB - 1)
        if kind == "bridge_reset":
            hold = rng.choice((2, 16, 60, 250, 1000))  # clocks low
        elif kind == "link_down":
            hold = rng.randrange(1_000, 20_001, 1_000)  # ns down
        else:
            hold = 0
        steps.append(
            ResetStep(
                index=i,
                kind=kind,
                target=target,
                length=length,
                host_off=host_off,
                card_off=card_off,
                cut_ns=rng.randrange(0, 2_001, 8),
                hold=hold,
                skip=rng.randint(1, 3),
            )
        )
    return steps


# the register races: a write of 0 to the RW1C status and reads of the clear-on-read
# status while events arrive; W1S/W1C of the control's interrupt enables and of the
# interrupt mask while the channel runs; plain writes of RW registers read back
REG_RACES = ("status_w1c", "status_rc", "control_w1s_w1c", "mask_w1s_w1c", "rw")
# who races: the host through the DMA BAR, or the user logic through s_axil (the other
# one accesses the same registers beside it)
REG_AGENTS = ("host", "user")
REG_BINS = tuple(f"{r}@{a}" for r in REG_RACES for a in REG_AGENTS)


@dataclass(frozen=True)
class RegStep:
    """One register race: ``race`` by ``agent`` on channel 0 of ``direction`` while a
    chain of ``descriptors`` descriptors of ``length`` bytes each (every one Completed)
    runs; ``values`` seeds the values written."""

    index: int
    race: str
    agent: str
    direction: str
    descriptors: int
    length: int
    values: int

    @property
    def bin(self) -> str:
        return f"{self.race}@{self.agent}"


def regs_plan(seed: int, rounds: int = 1) -> list[RegStep]:
    """Every (race, agent) pair ``rounds`` times, in a seeded order (a stream of its own,
    so the reset plan of the same seed stays as it is)."""
    if rounds < 1:
        raise ValueError(f"rounds must be 1 or more, not {rounds}")
    rng = random.Random(f"regs-{seed}")
    pairs = [(r, a) for _ in range(rounds) for r in REG_RACES for a in REG_AGENTS]
    rng.shuffle(pairs)
    return [
        RegStep(
            index=i,
            race=race,
            agent=agent,
            direction=rng.choice(("h2c", "c2h")),
            descriptors=rng.randint(4, 12),
            length=rng.randrange(64, 1025, 4),
            values=rng.getrandbits(32),
        )
        for i, (race, agent) in enumerate(pairs)
    ]
