"""The random chain generator, the scoreboard and the coverage model (no simulator)."""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest

from tb.env.faults import FAULT_KINDS
from tb.regress import coverage
from tb.regress.coverage import COVERPOINTS, Coverage, chain_bin, length_bin
from tb.regress.generator import (
    DATA_READ_FAULTS,
    DRIVER_FAULTS,
    DRIVER_OPS,
    DRIVER_RACES,
    DRIVER_RESULTS,
    FAULT_RESULTS,
    GPU_STEPS,
    MSI_FAULTS,
    POSTED_FAULTS,
    STALL_FAULTS,
    STEP_FAULTS,
    Arena,
    ChainGenerator,
    Limits,
    driver_plan,
    fits,
    gpu_steps,
)
from tb.regress.scoreboard import Scoreboard

ARENAS = [
    Arena("host0", "host", 256 << 10),
    Arena("host1", "host", 256 << 10),
    Arena("gpu0", "gpu", 1 << 20),
    Arena("victim", "gpu", 256 << 10),
]


def plans(seed: int, limits: Limits | None = None):
    return ChainGenerator(seed, ARENAS, limits or Limits()).steps()


def test_same_seed_same_plan_other_seed_other_plan() -> None:
    assert repr(plans(7)) == repr(plans(7))
    assert repr(plans(7)) != repr(plans(8))


@pytest.mark.parametrize("seed", range(1, 40))
def test_plans_respect_the_constraints(seed: int) -> None:
    lim = Limits()
    sizes = {a.name: a.size for a in ARENAS}
    steps = plans(seed, lim)
    faults = [c.fault for s in steps for c in s.chains if c.fault]
    assert sorted(faults) == sorted(STEP_FAULTS), "every fault once per seed"
    # every seed: a fault-free long chain and a fault-free H2C and C2H at once
    free = [s for s in steps if not any(c.fault for c in s.chains)]
    assert any(len(s.chains) == 1 and len(s.chains[0].pieces) >= 16 for s in free)
    assert any(len(s.chains) == 2 for s in free)
    for step in steps:
        for plan in step.chains:
            if plan.fault in DATA_READ_FAULTS:
                assert plan.direction == "h2c" and plan.fault_kind in FAULT_KINDS
            if plan.fault in POSTED_FAULTS:
                assert plan.direction == "c2h" and plan.fault_kind in ("drop", "poison")
            if plan.fault in MSI_FAULTS:
                assert plan.completed == [], "one interrupt, the one that fails"
            if plan.fault in STALL_FAULTS:
                assert 10_000 <= plan.stall_ns <= 60_000
                assert step.fabric == "plain"
            assert FAULT_RESULTS[plan.fault or "none"]
    for step in steps:
        assert 1 <= len(step.chains) <= 2
        card_written: list[tuple[int, int]] = []
        pcie_written: list[tuple[str, int, int]] = []
        pcie_read: list[tuple[str, int, int]] = []
        for plan in step.chains:
            assert plan.pieces
            for p in plan.pieces:
                assert p.length >= 1 and p.length <= lim.max_len
                assert 0 <= p.card and p.card + p.length <= lim.card_size
                assert 0 <= p.offset and p.offset + p.length <= sizes[p.arena]
                if plan.fault == "bar1_revoked":
                    assert p.arena == "victim"
                else:
                    assert p.arena != "victim"
                if plan.direction == "h2c":
                    card_written.append((p.card, p.length))
                    pcie_read.append((p.arena, p.offset, p.length))
                else:
                    pcie_written.append((p.arena, p.offset, p.length))
            if plan.stop_at is not None:
                assert 0 <= plan.stop_at < len(plan.pieces) - 1
            assert all(0 <= i < len(plan.pieces) for i in plan.completed)
        # no two writers of one byte, no write under a concurrent read
        card_written.sort()
        for (a, n), (b, _) in itertools.pairwise(card_written):
            assert a + n <= b, f"card destinations overlap in {step}"
        for i, (arena, o, n) in enumerate(pcie_written):
            for arena2, o2, n2 in pcie_written[i + 1 :] + pcie_read:
                assert arena != arena2 or o + n <= o2 or o2 + n2 <= o, "PCIe-side overlap"
        if len(step.chains) == 2:
            h2c, c2h = step.chains
            for p in h2c.pieces:
                for q in c2h.pieces:
                    assert p.card + p.length <= q.card or q.card + q.length <= p.card, (
                        "C2H reads card bytes the concurrent H2C writes"
                    )


def test_scoreboard_hole_keeps_the_old_bytes_of_a_dropped_write() -> None:
    """A C2H write dropped on the way: its bytes keep what they held before the step,
    the rest of the descriptor lands; the new bytes there are an error."""
    src = np.arange(256, dtype=np.uint8)
    old = np.full(256, 0xEE, dtype=np.uint8)
    sb = Scoreboard()
    sb.load("card", src)
    sb.load("host", old)
    sb.begin_step()
    sb.copy("card", 0, "host", 16, 128, "done")
    sb.hole("host", 48, 32)
    good = old.copy()
    good[16:48] = src[0:32]
    good[80:144] = src[64:128]
    assert sb.holes == [("host", 48, 32)]
    landed = good.copy()
    landed[48:80] = src[32:64]  # the dropped write's bytes arrived after all
    assert sb.check("host", landed) is not None
    assert sb.check("host", good) is None
    sb.end_step()
    # a hole inside a maybe-copy (an AXI error window in a failed descriptor): old only
    sb.begin_step()
    sb.copy("card", 0, "host", 0, 64, "maybe")
    sb.hole("host", 8, 8)
    partly = good.copy()
    partly[0:8] = src[0:8]  # landed before the window: allowed
    assert sb.check("host", partly) is None
    sb.end_step()
    sb.begin_step()
    sb.copy("card", 0, "host", 0, 64, "maybe")
    sb.hole("host", 8, 8)
    into = good.copy()
    into[8:16] = src[8:16]  # into the window
    assert sb.check("host", into) is not None


def test_lengths_and_boundaries_are_exercised() -> None:
    lengths, crossings = [], 0
    for seed in range(1, 30):
        for step in plans(seed):
            for plan in step.chains:
                for p in plan.pieces:
                    lengths.append(p.length)
                    crossings += (p.offset % 4096) + p.length > 4096
    assert min(lengths) == 1 and max(lengths) > 32 << 10
    assert crossings > len(lengths) // 5


def test_scoreboard_catches_wrong_missing_and_stray_bytes() -> None:
    sb = Scoreboard()
    src = np.arange(256, dtype=np.uint8)
    sb.load("host", src)
    sb.load("card", np.zeros(256, dtype=np.uint8))
    sb.begin_step()
    sb.copy("host", 10, "card", 100, 20, "done")
    good = np.zeros(256, dtype=np.uint8)
    good[100:120] = src[10:30]
    assert sb.check("card", good) is None
    sb.end_step()
    for mutate in (
        lambda a: a.__setitem__(105, 0),  # a byte that should change
        lambda a: a.__setitem__(99, 1),  # a byte outside the target
        lambda a: a.__setitem__(120, 7),
    ):
        sb2 = Scoreboard()
        sb2.load("host", src)
        sb2.load("card", np.zeros(256, dtype=np.uint8))
        sb2.begin_step()
        sb2.copy("host", 10, "card", 100, 20, "done")
        bad = good.copy()
        mutate(bad)
        assert sb2.check("card", bad) is not None


def test_scoreboard_maybe_means_old_or_new_per_byte() -> None:
    sb = Scoreboard()
    sb.load("host", np.full(64, 0xAA, dtype=np.uint8))
    sb.load("card", np.full(64, 0x11, dtype=np.uint8))
    sb.begin_step()
    sb.copy("host", 0, "card", 8, 16, "maybe")
    sb.copy("host", 0, "card", 40, 8, "none")
    got = np.full(64, 0x11, dtype=np.uint8)
    got[8:12] = 0xAA  # the first four landed
    assert sb.check("card", got) is None
    assert (sb.images["card"][8:12] == 0xAA).all(), "the image follows what landed"
    got[13] = 0x55  # neither old nor new
    sb.end_step()
    sb.begin_step()
    sb.copy("host", 0, "card", 8, 16, "maybe")
    assert "card" in (sb.check("card", got) or "")


def test_scoreboard_tracks_the_testbench_writes_and_known_bytes_mid_step() -> None:
    """The reset regression's use: buffers loaded in a step, guard bytes the testbench
    writes, patterns that land (done or maybe), a result record that may hold anything."""
    sb = Scoreboard()
    sb.load("axi", np.zeros(64, dtype=np.uint8))
    sb.begin_step()
    sb.load("host1", np.full(32, 0xEE, dtype=np.uint8))  # a buffer made in the step
    sb.put("axi", 0, bytes([0xEE]) * 24)  # guard bytes, then a transfer that may land
    sb.land("axi", 4, bytes(range(1, 17)), "maybe")
    sb.land("host1", 8, b"\x01\x02\x03\x04", "done")
    sb.anything("host1", 20, 8)
    axi = np.zeros(64, dtype=np.uint8)
    axi[0:24] = 0xEE
    axi[4:10] = range(1, 7)  # cut after six bytes
    host = np.full(32, 0xEE, dtype=np.uint8)
    host[8:12] = (1, 2, 3, 4)
    host[20:28] = 0x5A
    assert sb.check("axi", axi) is None
    assert sb.check("host1", host) is None
    sb.end_step()
    sb.begin_step()  # the next step: what landed is now the expected image
    assert sb.check("axi", axi) is None and sb.check("host1", host) is None
    for name, arr, at, value in (
        ("axi", axi, 30, 1),  # a stray byte past the guards
        ("axi", axi, 2, 0),  # a guard byte the transfer never owned
        ("axi", axi, 12, 0x77),  # a maybe byte neither old nor new
        ("host1", host, 9, 0),  # a done byte missing
    ):
        bad = arr.copy()
        bad[at] = value
        assert name in (sb.check(name, bad) or ""), (name, at)
    sb.forget("host1")
    assert "host1" not in sb.images and "host1" not in sb.old


def test_coverage_bins_merge_report_and_goals(tmp_path) -> None:
    assert [chain_bin(n) for n in (1, 2, 4, 16, 64)] == list(COVERPOINTS["chain_length"])
    assert [length_bin(n) for n in (1, 4, 64, 256, 4096, 4097, 65536)] == list(
        COVERPOINTS["desc_length"]
    )
    a, b = Coverage(), Coverage()
    for name, bins in COVERPOINTS.items():
        for i, bin_ in enumerate(bins):
            (a if i % 2 else b).hit(name, bin_)
    a.runs.append({"name": "a"})
    b.runs.append({"name": "b"})
    assert a.missed() and b.missed()
    a.write(tmp_path / "a.json")
    b.write(tmp_path / "sub" / "b.json")
    merged = coverage.load([tmp_path])
    assert merged.missed() == {}
    assert "goal met" in merged.report() and "a, b" in merged.report()
    with pytest.raises(KeyError):
        a.hit("outcome", "nonsense")
    assert coverage.main([str(tmp_path / "a.json"), "--goals"]) == 1
    assert coverage.main([str(tmp_path), "--goals", "-o", str(tmp_path / "m.json")]) == 0
    assert json.loads((tmp_path / "m.json").read_text())["coverpoints"]["outcome"]["ok"] == 1


def test_coverage_report_lists_a_few_runs_and_counts_the_rest() -> None:
    cov = Coverage()
    cov.runs.extend({"name": f"seed{n:03d}"} for n in range(1000))
    first = cov.report().splitlines()[0]
    assert first.startswith("functional coverage over 1000 run(s): seed000, seed001, ")
    n = coverage.RUNS_LISTED
    assert first.endswith(f"seed{n - 1:03d}, ... {1000 - n} more")


@pytest.mark.parametrize("seed", range(1, 30))
def test_driver_plan_strikes_every_event_once_on_a_call_it_fits(seed: int) -> None:
    plan = driver_plan(random.Random(seed), 10)
    events = [e for _, e in plan if e != "none"]
    assert sorted(events) == sorted((*DRIVER_FAULTS, *DRIVER_RACES))
    assert all(fits(e, op) for op, e in plan if e != "none")
    assert {op for op, _ in plan} == set(DRIVER_OPS)
    assert sum(e == "none" for _, e in plan) >= 10, "plain calls beside the struck ones"
    assert all(DRIVER_RESULTS[e] in ("ok", "EIO", "EFAULT") for _, e in plan)
    # the faults that need the engine's reads in flight strike calls with an H2C half
    for op, e in plan:
        if e in ("bme_off", "mse_off", "flr", "hot_reset", "link_down", "cpl_fault"):
            assert not op.startswith("c2h")
        if e == "cudafree_during":
            assert op.startswith("h2c2h") and op.endswith(">gpu")


def test_pin_ways_alternate_from_a_seeded_start():
    """Each driver seed pins through nv-p2p and through dma-buf: the ways alternate, so
    any two steps try both; the start depends on the seed."""
    from tb.regress.generator import PIN_WAYS, pin_ways

    starts = set()
    for seed in range(20):
        ways = pin_ways(random.Random(seed), 7)
        assert all(a != b for a, b in itertools.pairwise(ways))
        assert set(ways) == set(PIN_WAYS)
        starts.add(ways[0])
    assert starts == set(PIN_WAYS)


# --- the reset regression's plan ---------------------------------------------------------


def test_reset_plan_holds_every_pair_on_any_seed():
    """Every (interruption, target) pair once per round, whatever the seed: the coverage
    goal is met by any seed's default plan. The same seed gives the same plan, another
    seed another order."""
    from tb.regress.coverage import COVERPOINTS
    from tb.regress.resets import RESET_BINS, RESET_KINDS, RESET_TARGETS, reset_plan

    assert len(RESET_BINS) == len(RESET_KINDS) * len(RESET_TARGETS) == 60
    assert "m_axib:gpu" in RESET_TARGETS, "the GPU's copy engine through the bypass BAR"
    assert COVERPOINTS["reset_step"] == RESET_BINS
    for seed in range(1, 201):
        plan = reset_plan(seed)
        assert sorted(s.bin for s in plan) == sorted(RESET_BINS), seed
        assert [s.index for s in plan] == list(range(len(plan)))
        for s in plan:
            if s.target.startswith("m_axib"):
                assert 2048 <= s.length <= 8192 and s.length % 4 == 0
                assert s.directions == () and s.interface == "m_axib"
            else:
                assert 8192 <= s.length <= 24576
            assert (s.hold > 0) == (s.kind in ("bridge_reset", "link_down"))
            assert 0 <= s.cut_ns <= 2000 and 1 <= s.skip <= 3
    assert reset_plan(7) == reset_plan(7) and reset_plan(7) != reset_plan(8)
    assert reset_plan(3)[0].directions in {(), ("h2c",), ("c2h",), ("h2c", "c2h")}
    twice = reset_plan(5, rounds=2)
    assert len(twice) == 120 and all(sum(s.bin == b for s in twice) == 2 for b in RESET_BINS)
    with pytest.raises(ValueError, match="rounds"):
        reset_plan(1, rounds=0)


def test_regs_plan_holds_every_race_on_any_seed():
    """Every (register race, side) pair once per round, whatever the seed, from a stream
    of its own: adding the races leaves the reset plan of a seed as it was."""
    from tb.regress.coverage import COVERPOINTS
    from tb.regress.resets import REG_BINS, REG_RACES, regs_plan

    assert COVERPOINTS["reg_race"] == REG_BINS and len(REG_BINS) == 2 * len(REG_RACES)
    for seed in range(1, 201):
        plan = regs_plan(seed)
        assert sorted(r.bin for r in plan) == sorted(REG_BINS), seed
        for r in plan:
            assert r.direction in ("h2c", "c2h") and 4 <= r.descriptors <= 12
            assert 64 <= r.length <= 1024 and r.length % 4 == 0
    assert regs_plan(4) == regs_plan(4) and regs_plan(4) != regs_plan(5)
    assert len(regs_plan(2, rounds=3)) == 3 * len(REG_BINS)
    with pytest.raises(ValueError, match="rounds"):
        regs_plan(1, rounds=0)


@pytest.mark.parametrize("seed", range(1, 30))
def test_gpu_steps_hold_every_kind_and_keep_the_mailbox_quiet(seed: int) -> None:
    """The GPU's own steps of a driver seed: every kind at least once, a mailbox mark
    only beside an ioctl nothing strikes, lengths inside the registered buffer, aligned
    stores; the same seed the same steps, and the seed's ioctls untouched by them."""
    rng = random.Random(seed)
    events = [e for _, e in driver_plan(rng, 10)]
    size = 64 * 1024
    steps = gpu_steps(seed, events, size)
    assert steps == gpu_steps(seed, events, size)
    assert {g.kind for g in steps} == set(GPU_STEPS)
    for g, event in zip(steps, events, strict=True):
        assert g.kind != "mailbox" or event == "none", (g, event)
        assert 0 <= g.off and g.off + g.n <= size and g.dev_off + g.n <= size
        if g.kind == "kernel_st64":
            assert g.n == 8 and g.off % 8 == 0
        if g.kind in ("stream_write", "mailbox"):
            assert g.n == 4 and g.off % 4 == 0
    assert [e for _, e in driver_plan(random.Random(seed), 10)] == events
