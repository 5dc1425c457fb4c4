"""pevb_tlp_queue alone: random pushes (payload buffered, or dropped with an error) while
not full, and random takes of the head, checked cycle by cycle against a queue model:
the head shows as a TLP (``m_tlp_*``, taken with ready) or as a drop (``m_drop_*``,
gone the cycle it shows), in push order, and full says the queue holds DEPTH entries."""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.config import bench_params
from tb.env.rtl_bench import start

CYCLES = 3000
INPUTS = ("s_push", "s_addr", "s_len", "s_slot", "s_drop", "s_err", "m_tlp_ready")
# (push probability, take probability, drop probability), 500 cycles each: a slow
# reader (the queue fills), a fast one (it drains), drops only
PHASES = ((0.7, 0.1, 0.2), (0.3, 0.9, 0.2), (0.6, 0.6, 1.0))

Entry = tuple[int, int, int, int, int]  # addr, len, slot, drop, err


def _entry(rng: random.Random, drops: float) -> Entry:
    drop = int(rng.random() < drops)
    err = rng.randrange(1, 32) if drop and rng.random() < 0.7 else 0
    return (rng.getrandbits(64), rng.randrange(8192), rng.randrange(4), drop, err)


@cocotb.test()
async def test_random_pushes_and_takes(dut):
    depth = bench_params().get("DEPTH", 16)
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)
    model: deque[Entry] = deque()
    taken = {"tlp": 0, "drop": 0, "full": 0}
    for cycle in range(CYCLES):
        push_p, take_p, drops = PHASES[(cycle // 500) % len(PHASES)]
        push = len(model) < depth and rng.random() < push_p
        entry = _entry(rng, drops)
        take = rng.random() < take_p
        for name, value in zip(INPUTS, (int(push), *entry, int(take)), strict=True):
            getattr(dut, name).value = value
        await ReadOnly()
        full = int(dut.full.value)
        assert full == (len(model) == depth), f"cycle {cycle}: full {full}, {len(model)} held"
        taken["full"] += full
        tlp_valid, drop_valid = int(dut.m_tlp_valid.value), int(dut.m_drop_valid.value)
        head = model[0] if model else None
        if head is None:
            assert not tlp_valid and not drop_valid, f"cycle {cycle}: a head with none held"
        elif head[3]:
            assert drop_valid and not tlp_valid, f"cycle {cycle}: a drop not shown as one"
            got = (int(dut.m_drop_slot.value), int(dut.m_drop_err.value))
            assert got == (head[2], head[4]), f"cycle {cycle}: drop {got} for {head}"
            model.popleft()
            taken["drop"] += 1
        else:
            assert tlp_valid and not drop_valid, f"cycle {cycle}: a TLP not shown as one"
            got = (int(dut.m_tlp_addr.value), int(dut.m_tlp_len.value), int(dut.m_tlp_slot.value))
            assert got == head[:3], f"cycle {cycle}: TLP {got} for {head}"
            if take:
                model.popleft()
                taken["tlp"] += 1
        if push:
            model.append(entry)
        await RisingEdge(dut.clk)
    assert taken["full"] and taken["tlp"] > 100 and taken["drop"] > 100, taken
