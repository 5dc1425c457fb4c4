"""pevb_realign alone: random jobs (input lane, output lane, length, up to a few beats
past the width), back to back, with random gaps on the input and back-pressure on the
output; each output beat is checked against the model below (the job's bytes at its
lanes, first and last flags, job_done on the last beat) and no beat may come early,
late or twice."""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.config import bench_params
from tb.env.rtl_bench import start

TIMEOUT_CYCLES = 200_000
INPUTS = ("job_valid", "job_shift", "job_shift_neg", "job_in_beats", "job_out_beats")
INPUTS += ("s_data", "s_valid", "m_ready")


class Job:
    """A job of the model: ``n`` bytes from lane ``in_ofs`` of the first input beat to
    lane ``out_ofs`` of the first output beat."""

    def __init__(self, rng: random.Random, lanes: int) -> None:
        self.in_ofs = rng.randrange(lanes)
        self.out_ofs = rng.randrange(lanes)
        self.n = rng.choice([1, rng.randrange(1, lanes + 1), rng.randrange(1, 6 * lanes)])
        self.data = bytes(rng.randrange(256) for _ in range(self.n))
        self.lanes = lanes
        self.in_beats = -(-(self.in_ofs + self.n) // lanes)
        self.out_beats = -(-(self.out_ofs + self.n) // lanes)
        self.shift = (self.out_ofs - self.in_ofs) % lanes
        self.neg = self.out_ofs < self.in_ofs

    def input_beats(self, rng: random.Random) -> list[int]:
        """The input beats: the bytes at their lanes, other lanes random."""
        buf = bytearray(rng.randrange(256) for _ in range(self.in_beats * self.lanes))
        buf[self.in_ofs : self.in_ofs + self.n] = self.data
        w = self.lanes
        return [int.from_bytes(buf[i * w : (i + 1) * w], "little") for i in range(self.in_beats)]

    def expected(self) -> list[tuple[bytes, bytes]]:
        """Each output beat as (bytes, mask): which lanes carry the job's bytes."""
        w = self.lanes
        buf = bytearray(self.out_beats * w)
        mask = bytearray(self.out_beats * w)
        buf[self.out_ofs : self.out_ofs + self.n] = self.data
        mask[self.out_ofs : self.out_ofs + self.n] = b"\xff" * self.n
        return [
            (bytes(buf[i * w : (i + 1) * w]), bytes(mask[i * w : (i + 1) * w]))
            for i in range(self.out_beats)
        ]


def present(dut, pending: deque[Job]) -> None:
    """Show the first pending job on the job port (none: job_valid low)."""
    if not pending:
        dut.job_valid.value = 0
        return
    j = pending[0]
    dut.job_valid.value = 1
    dut.job_shift.value = j.shift
    dut.job_shift_neg.value = int(j.neg)
    dut.job_in_beats.value = j.in_beats
    dut.job_out_beats.value = j.out_beats


@cocotb.test()
async def test_random_jobs_with_backpressure(dut):
    p = bench_params()
    width = p.get("DATA_WIDTH", 64)
    lanes = width // 8
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)

    jobs = [Job(rng, lanes) for _ in range(150)]
    # the input beats of every job in order; each job's output beats expected in order
    inputs: deque[int] = deque()
    for job in jobs:
        inputs.extend(job.input_beats(rng))
    pending = deque(jobs)
    in_gap = rng.choice([0.0, 0.3, 0.7])
    out_gap = rng.choice([0.0, 0.3, 0.7])
    outs = 0

    present(dut, pending)
    s_valid = False
    beat_of_job = 0
    for cycle in range(TIMEOUT_CYCLES):
        if not s_valid and inputs and rng.random() >= in_gap:
            s_valid = True
        dut.s_valid.value = int(s_valid)
        dut.s_data.value = inputs[0] if s_valid else 0
        dut.m_ready.value = int(rng.random() >= out_gap)
        await ReadOnly()
        if int(dut.m_valid.value) and int(dut.m_ready.value):
            assert pending, f"cycle {cycle}: an output beat with no job"
            job = pending[0]
            want, mask = job.expected()[beat_of_job]
            got = int(dut.m_data.value).to_bytes(lanes, "little")
            for lane in range(lanes):
                if mask[lane]:
                    assert got[lane] == want[lane], (
                        f"job {len(jobs) - len(pending)} (in {job.in_ofs}, out {job.out_ofs}, "
                        f"{job.n} B) beat {beat_of_job} lane {lane}: {got[lane]:#x}, not "
                        f"{want[lane]:#x}"
                    )
            assert int(dut.m_first.value) == (beat_of_job == 0), f"first flag, beat {beat_of_job}"
            last = beat_of_job == job.out_beats - 1
            assert int(dut.m_last.value) == last, f"last flag, beat {beat_of_job}"
            assert int(dut.job_done.value) == last, f"job_done on beat {beat_of_job}"
            beat_of_job += 1
            outs += 1
        else:
            assert not int(dut.job_done.value), f"cycle {cycle}: job_done with no output beat"
        took = s_valid and int(dut.s_ready.value)
        done = int(dut.job_done.value)
        await RisingEdge(dut.clk)
        if took:
            inputs.popleft()
            s_valid = False
        if done:
            pending.popleft()
            beat_of_job = 0
            present(dut, pending)
        if not pending:
            break
    else:
        raise AssertionError(f"{len(pending)} jobs left after {TIMEOUT_CYCLES} cycles")
    assert not inputs, f"{len(inputs)} input beats never taken"
    assert outs == sum(j.out_beats for j in jobs)


@cocotb.test()
async def test_back_to_back_jobs_take_no_idle_cycles(dut):
    """With input always valid and output always ready, a run of jobs takes one cycle
    per output beat, plus one per job whose output lane is below its input lane (the
    first input beat loaded alone)."""
    p = bench_params()
    lanes = p.get("DATA_WIDTH", 64) // 8
    rng = random.Random(cocotb.RANDOM_SEED + 1)
    await start(dut, INPUTS)
    dut.m_ready.value = 1
    jobs = [Job(rng, lanes) for _ in range(40)]
    inputs: deque[int] = deque(b for j in jobs for b in j.input_beats(rng))
    pending = deque(jobs)
    cycles = 0
    while pending:
        present(dut, pending)
        dut.s_valid.value = int(bool(inputs))
        dut.s_data.value = inputs[0] if inputs else 0
        await ReadOnly()
        took = bool(inputs) and int(dut.s_ready.value)
        done = int(dut.job_done.value)
        await RisingEdge(dut.clk)
        cycles += 1
        if took:
            inputs.popleft()
        if done:
            pending.popleft()
        assert cycles < 10_000, "the jobs never finished"
    want = sum(j.out_beats + (1 if j.neg else 0) for j in jobs)
    assert cycles == want, f"{cycles} cycles for {want} beats and primes"
