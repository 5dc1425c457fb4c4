"""pevb_c2h_wr alone (memory-mapped): descriptors of random lengths and addresses, every
MPS, and a model of the reader and requester behind it that reports each write TLP sent
(or dropped) in order after random delays, under random back-pressure. Checked against
PG195's C2H rules and a model of the mover:

- each descriptor becomes write TLP commands that cover its bytes in order, each ending
  at the next MPS boundary of the PCIe address (so never across 4 KiB) or at the end,
  the card address following, the first marked, with the descriptor's slot;
- no more than four descriptors in flight; each done once, in order, with its flags,
  once every TLP of it was reported;
- a TLP dropped with a read error fails its descriptor with those bits, and nothing is
  issued from the next cycle on; every descriptor behind it (until restart) is done
  aborted, and a
  source beyond the AXI address space fails with the decode error before anything moves.
"""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from driver_model.regs import AxiErr
from tb.config import bench_params
from tb.env.rtl_bench import offer_descriptor, pieces, start

INPUTS = ("restart", "mps_enc", "s_desc_valid", "s_desc_src", "s_desc_dst", "s_desc_len")
INPUTS += ("s_desc_flags", "m_wr_ready", "sent_valid", "sent_slot", "drop_valid", "drop_slot")
INPUTS += ("drop_err", "wb_disable", "end_valid", "end_slot", "end_len", "end_eop")
INPUTS += ("m_res_ready",)
READ_ERROR = int(AxiErr.SLAVE)


async def run(dut, rng, descs, mps_enc, fail_at=None) -> tuple[list, list]:
    """Play descriptors ``descs`` through; ``fail_at``: the number of the TLP command the
    reader drops with a read error (then drops every later one, as pevb_axi_rd does).
    The commands (addr, len, card, slot, first) and the dones (flags, rd_err, abort)."""
    cmds, dones = [], []
    pending = deque(descs)
    reports: deque = deque()  # (cycle due, slot, err or None for sent)
    dropping = False
    failed_at = None
    inflight = 0
    dut.mps_enc.value = mps_enc
    for cycle in range(200000):
        d = offer_descriptor(dut, pending, rng)
        dut.m_wr_ready.value = ready = int(rng.random() < 0.7)
        rep = reports.popleft() if reports and reports[0][0] <= cycle else None
        if rep is not None and rep[2]:
            failed_at = cycle  # nothing is issued once the failure is in
        dut.sent_valid.value = int(rep is not None and rep[2] is None)
        dut.drop_valid.value = int(rep is not None and rep[2] is not None)
        if rep is not None:
            dut.sent_slot.value = dut.drop_slot.value = rep[1]
            dut.drop_err.value = rep[2] or 0
        await ReadOnly()
        if d is not None and int(dut.s_desc_ready.value):
            pending.popleft()
            inflight += 1
        if int(dut.m_wr_valid.value) and ready:
            late = failed_at is not None and cycle > failed_at
            assert not late, f"cycle {cycle}: a TLP issued after the read error"
            cmd = (
                int(dut.m_wr_addr.value),
                int(dut.m_wr_len.value),
                int(dut.m_wr_card_addr.value),
                int(dut.m_wr_slot.value),
                int(dut.m_wr_first.value),
            )
            err = None
            if fail_at is not None and len(cmds) == fail_at:
                err, dropping = READ_ERROR, True
            elif dropping:
                err = 0  # dropped behind the error
            cmds.append(cmd)
            due = max(cycle + rng.randrange(2, 15), reports[-1][0] + 1 if reports else 0)
            reports.append((due, cmd[3], err))
        if int(dut.m_done_valid.value):
            dones.append(
                (
                    int(dut.m_done_flags.value),
                    int(dut.m_done_rd_err.value),
                    int(dut.m_done_abort.value),
                )
            )
            inflight -= 1
        assert 0 <= inflight <= 4, f"cycle {cycle}: {inflight} descriptors in flight"
        await RisingEdge(dut.clk)
        if not pending and len(dones) == len(descs) and not reports:
            return cmds, dones
    raise AssertionError(f"{len(dones)} of {len(descs)} descriptors done")


def descriptors(rng: random.Random, n: int) -> list:
    """``n`` descriptors (card source within the AXI space, PCIe destination, length,
    flags)."""
    width = bench_params().get("ADDR_WIDTH", 64)
    out = []
    for _ in range(n):
        length = rng.choice([1, 4, 100, 128, 4096, rng.randrange(1, 20000)])
        src = rng.randrange((1 << min(width, 40)) - length)
        out.append((src, rng.getrandbits(48), length, rng.randrange(8)))
    return out


@cocotb.test()
async def test_descriptors_into_tlps(dut):
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)
    for _ in range(4):
        mps_enc = rng.randrange(8)
        mps = 128 << min(mps_enc, 5)
        descs = descriptors(rng, 12)
        cmds, dones = await run(dut, rng, descs, mps_enc)
        want = []
        for k, (src, dst, length, _) in enumerate(descs):
            for n, (a, ln, off) in enumerate(pieces(dst, length, mps)):
                want.append((a, ln, src + off, k % 4, int(n == 0)))
        # (slots are taken in turn: descriptor k in slot k % 4 within a run from reset)
        got = [(a, ln, card, first) for a, ln, card, _, first in cmds]
        assert got == [(a, ln, card, first) for a, ln, card, _, first in want], "TLP commands"
        assert dones == [(f, 0, 0) for *_, f in descs], "dones: flags, errors, aborts"
        assert len({c[3] for c in cmds}) == min(4, len(descs))


@cocotb.test()
async def test_a_read_error_aborts_what_follows(dut):
    rng = random.Random(cocotb.RANDOM_SEED + 1)
    await start(dut, INPUTS)
    for _ in range(4):
        descs = descriptors(rng, 10)
        mps_enc = rng.randrange(6)
        total = sum(len(pieces(d[1], d[2], 128 << mps_enc)) for d in descs)
        fail_at = rng.randrange(total)
        cmds, dones = await run(dut, rng, descs, mps_enc, fail_at)
        # the failing command's descriptor: the one whose TLPs it is among
        counts = [len(pieces(d[1], d[2], 128 << mps_enc)) for d in descs]
        failing = next(k for k in range(len(descs)) if sum(counts[: k + 1]) > fail_at)
        for k, (flags, err, abort) in enumerate(dones):
            want = (descs[k][3], 0, 0)
            if k == failing:
                want = (descs[k][3], READ_ERROR, 0)
            elif k > failing:
                want = (descs[k][3], 0, 1)
            assert (flags, err, abort) == want, f"descriptor {k} of {failing} failing"
        assert len(cmds) <= sum(counts) and len(cmds) > fail_at
        dut.restart.value = 1  # the channel restarts: descriptors run again
        await RisingEdge(dut.clk)
        dut.restart.value = 0


@cocotb.test()
async def test_a_source_beyond_the_axi_space_fails(dut):
    width = bench_params().get("ADDR_WIDTH", 64)
    if width >= 48:
        return  # (the parameter set with a narrow AXI space runs this)
    rng = random.Random(cocotb.RANDOM_SEED + 2)
    await start(dut, INPUTS)
    descs = descriptors(rng, 6)
    bad = rng.randrange(len(descs))
    _, dst, length, flags = descs[bad]
    descs[bad] = ((1 << width) - length // 2 - 1, dst, length + 2, flags)
    cmds, dones = await run(dut, rng, descs, 1)
    for k, (f, err, abort) in enumerate(dones):
        want = (descs[k][3], int(AxiErr.DECODE) if k == bad else 0, int(k > bad))
        assert (f, err, abort) == want, f"descriptor {k} ({bad} beyond the AXI space)"
    before = sum(len(pieces(d[1], d[2], 256)) for d in descs[:bad])
    assert len(cmds) == before, "TLPs issued for the failed descriptor or those behind it"
