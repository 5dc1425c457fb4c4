"""pevb_h2c_rd alone (memory-mapped): descriptors of random lengths and addresses at every
MRRS, and a model of what lies behind the read requests: each read's completions become
write jobs (pushed as pevb_rc_rx pushes them, written back later as pevb_axi_wr reports
them, in order) and its tag retires after its last completion. Checked against PG195's
H2C rules and a model of the mover:

- each descriptor becomes read requests that cover its bytes in order, each ending at the
  next MRRS boundary of the PCIe address (so never across 4 KiB) or at the end, the card
  address following, with the descriptor's slot, never more than MAX_TAGS outstanding;
- each descriptor done once, in order, with its flags, and only once its tags retired
  and its jobs were written back;
- a read that fails (its tag retired with an error) fails its descriptor with those
  read_error bits, a write job that fails its descriptor with the write_error bits;
  nothing is requested after the failure, every descriptor behind it (until restart) is
  done aborted, and the data of the failed and aborted ones is discarded.
"""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from driver_model.regs import AxiErr, PcieErr
from tb.config import bench_params
from tb.env.rtl_bench import offer_descriptor, pieces, start

INPUTS = ("restart", "mrrs_enc", "s_desc_valid", "s_desc_src", "s_desc_dst", "s_desc_len")
INPUTS += ("s_desc_flags", "m_rd_ready", "retire_valid", "retire_slot", "retire_err")
INPUTS += ("job_valid", "job_slot", "job_done_valid", "job_done_slot", "job_done_err")
INPUTS += ("ring_rd_pos", "ring_done_pos", "ring_marks_ok")
RD_ERROR = int(PcieErr.COMPLETER_ABORT)
WR_ERROR = int(AxiErr.SLAVE)


ACCEPTED = [0]  # descriptors taken since reset: the j-th takes slot j % 4


async def run(dut, rng, descs, mrrs_enc, fail=None):
    """Play ``descs`` through. ``fail``: ("rd" or "wr", n): the n-th read fails (its tag
    retires with an error, or one of its jobs is written back with one). The reads
    (addr, len, card, slot), the dones (flags, rd_err, wr_err, abort), and the discard bits
    seen for each slot once a failure was in."""
    max_tags = bench_params().get("MAX_TAGS", 32)
    reads, dones = [], []
    pending = deque(descs)
    events: list = []  # (cycle due, kind, slot, err): "job", "retire"
    done_queue: deque = deque()  # jobs pushed, written back in order: (slot, err)
    outstanding = 0
    failed_at = None
    discards = set()
    open_work = [0] * 4  # per slot: tags not retired, jobs not written back
    jobs_left: list[int] = []  # per read: jobs not pushed yet
    dut.mrrs_enc.value = mrrs_enc
    for cycle in range(300000):
        d = offer_descriptor(dut, pending, rng)
        dut.m_rd_ready.value = ready = int(rng.random() < 0.7)
        # one job pushed and one tag retired at most per cycle, one job written back
        due = sorted((e for e in events if e[0] <= cycle), key=lambda e: e[0])
        job = next((e for e in due if e[1] == "job"), None)
        # a tag retires only after every job of its read was pushed (its last completion)
        retire = next((e for e in due if e[1] == "retire" and not jobs_left[e[4]]), None)
        if job is not None:
            jobs_left[job[4]] -= 1
        for e in (job, retire):
            if e is not None:
                events.remove(e)
        dut.job_valid.value = int(job is not None)
        dut.job_slot.value = job[2] if job else 0
        if job is not None:
            done_queue.append((cycle + rng.randrange(1, 10), job[2], job[3]))
            open_work[job[2]] += 1
        dut.retire_valid.value = int(retire is not None)
        dut.retire_slot.value = retire[2] if retire else 0
        dut.retire_err.value = retire[3] if retire else 0
        wb = done_queue.popleft() if done_queue and done_queue[0][0] <= cycle else None
        dut.job_done_valid.value = int(wb is not None)
        dut.job_done_slot.value = wb[1] if wb else 0
        dut.job_done_err.value = wb[2] if wb else 0
        if (retire and retire[3]) or (wb and wb[2]):
            failed_at = cycle if failed_at is None else failed_at
        if retire is not None:
            outstanding -= 1
            open_work[retire[2]] -= 1
        if wb is not None:
            open_work[wb[1]] -= 1
        await ReadOnly()
        if d is not None and int(dut.s_desc_ready.value):
            pending.popleft()
        if int(dut.m_rd_valid.value) and ready:
            assert failed_at is None or cycle <= failed_at, (
                f"cycle {cycle}: a read after the failure"
            )
            slot = int(dut.m_rd_slot.value)
            reads.append(
                (int(dut.m_rd_addr.value), int(dut.m_rd_len.value), int(dut.m_rd_info.value), slot)
            )
            outstanding += 1
            open_work[slot] += 1
            assert outstanding <= max_tags, f"cycle {cycle}: {outstanding} reads outstanding"
            # its completions: one to three jobs, then the tag retires
            n = len(reads) - 1
            t = cycle + rng.randrange(2, 20)
            jobs = rng.randrange(1, 4)
            for k in range(jobs):
                err = WR_ERROR if fail == ("wr", n) and k == jobs - 1 else 0
                events.append((t + 2 * k, "job", slot, err, n))
            err = RD_ERROR if fail == ("rd", n) else 0
            events.append((t + 2 * jobs + rng.randrange(0, 3), "retire", slot, err, n))
            jobs_left.append(jobs)
        if int(dut.m_done_valid.value):
            head = (ACCEPTED[0] + len(dones)) % 4
            assert open_work[head] == 0, f"cycle {cycle}: done with {open_work[head]} open"
            dones.append(
                (
                    int(dut.m_done_flags.value),
                    int(dut.m_done_rd_err.value),
                    int(dut.m_done_wr_err.value),
                    int(dut.m_done_abort.value),
                )
            )
        if failed_at is not None and cycle > failed_at:  # (the failure is in from the edge)
            discards.add(int(dut.discard.value))
        await RisingEdge(dut.clk)
        settled = failed_at is None or cycle > failed_at + 2  # the discard bits seen
        if not pending and len(dones) == len(descs) and not events and not done_queue and settled:
            ACCEPTED[0] += len(descs)
            return reads, dones, discards
    raise AssertionError(f"{len(dones)} of {len(descs)} descriptors done")


def descriptors(rng: random.Random, n: int) -> list:
    width = bench_params().get("ADDR_WIDTH", 64)
    out = []
    for _ in range(n):
        length = rng.choice([1, 4, 100, 128, 4096, rng.randrange(1, 20000)])
        dst = rng.randrange((1 << min(width, 40)) - length)
        out.append((rng.getrandbits(48), dst, length, rng.randrange(8)))
    return out


@cocotb.test()
async def test_descriptors_into_reads(dut):
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)
    ACCEPTED[0] = 0
    dut.ring_marks_ok.value = 1
    for _ in range(4):
        mrrs_enc = rng.randrange(8)
        mrrs = 128 << min(mrrs_enc, 5)
        descs = descriptors(rng, 12)
        reads, dones, _ = await run(dut, rng, descs, mrrs_enc)
        want = [
            (a, ln, dst + off)
            for src, dst, length, _ in descs
            for a, ln, off in pieces(src, length, mrrs)
        ]
        assert [r[:3] for r in reads] == want, "read requests differ from the descriptors"
        assert dones == [(f, 0, 0, 0) for *_, f in descs], "dones: flags, errors, aborts"


@cocotb.test()
async def test_failures_abort_what_follows(dut):
    rng = random.Random(cocotb.RANDOM_SEED + 1)
    await start(dut, INPUTS)
    ACCEPTED[0] = 0
    dut.ring_marks_ok.value = 1
    for k in range(6):
        descs = descriptors(rng, 10)
        mrrs_enc = rng.randrange(6)
        counts = [len(pieces(d[0], d[2], 128 << mrrs_enc)) for d in descs]
        n = rng.randrange(sum(counts))
        kind = ("rd", "wr")[k % 2]
        reads, dones, discards = await run(dut, rng, descs, mrrs_enc, (kind, n))
        failing = next(j for j in range(len(descs)) if sum(counts[: j + 1]) > n)
        for j, got in enumerate(dones):
            want = (descs[j][3], 0, 0, 0)
            if j == failing:
                want = (
                    descs[j][3],
                    RD_ERROR if kind == "rd" else 0,
                    WR_ERROR if kind == "wr" else 0,
                    0,
                )
            elif j > failing:
                want = (descs[j][3], 0, 0, 1)
            assert got == want, f"descriptor {j} ({kind} failure in {failing}): {got}"
        assert len(reads) > n
        assert any(discards), "failed or aborted data not discarded"
        dut.restart.value = 1
        await RisingEdge(dut.clk)
        dut.restart.value = 0
