"""pevb_axi_wr alone: write jobs (card address, length, first byte's lane, owner) and
their beats pushed as pevb_rc_rx pushes them, with random gaps and only while space_ok
says there is room, into an AXI4 slave model with random ready on every channel, write
responses after random delays, and 4 KiB windows that answer SLVERR or DECERR. Checked
against a byte model of the card's memory and AXI's rules:

- the memory holds every job's bytes at its address, in job order, and nothing else
  changed (strobes cover exactly the job's bytes);
- every burst is INCR, full width, word-aligned, at most 256 beats, within a 4 KiB page,
  its W beats in AW order ending with WLAST on the burst's last, tagged with the job's
  owner on AW, with no more than BURSTS awaiting their response;
- each job is done once, in job order, with its owner and the XDMA write_error bits of
  the worst response among its bursts.
"""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from driver_model.regs import AxiErr
from tb.config import bench_params
from tb.env.rtl_bench import start

MEM_SIZE = 1 << 18
OKAY, SLVERR, DECERR = 0, 2, 3
ERR_BITS = {OKAY: 0, SLVERR: int(AxiErr.SLAVE), DECERR: int(AxiErr.DECODE)}
INPUTS = ("s_job_valid", "s_job_addr", "s_job_len", "s_job_ofs", "s_job_slot")
INPUTS += ("s_dat_valid", "s_dat_data", "m_axi_awready", "m_axi_wready")
INPUTS += ("m_axi_bid", "m_axi_bresp", "m_axi_bvalid")


@cocotb.test()
async def test_jobs_to_memory(dut):
    p = bench_params()
    width = p.get("DATA_WIDTH", 64)
    nbytes = width // 8
    bursts_max = p.get("BURSTS", 16)
    rng = random.Random(cocotb.RANDOM_SEED)
    await start(dut, INPUTS)

    background = rng.randbytes(MEM_SIZE)
    mem = bytearray(background)  # what the slave holds
    want = bytearray(background)  # the model
    windows = {w: rng.choice([SLVERR, DECERR]) for w in rng.sample(range(MEM_SIZE >> 12), 3)}

    # jobs: (addr, length, lane, slot, bytes), and the beats that carry them
    jobs = []
    for _ in range(160):
        length = rng.choice([1, 2, 3, 4, 64, 128, 256, 512, rng.randrange(1, 4097)])
        addr = rng.randrange(MEM_SIZE - length)
        if rng.random() < 0.3:  # up against a page boundary
            addr = max(0, (addr | 0xFFF) + 1 - rng.randrange(1, 64))
            addr = min(addr, MEM_SIZE - length)
        jobs.append((addr, length, rng.randrange(nbytes), rng.randrange(4), rng.randbytes(length)))
    want_done = []
    for addr, length, _, slot, data in jobs:
        err = 0
        for k in range(length):
            a = addr + k
            if a >> 12 in windows:
                err |= ERR_BITS[windows[a >> 12]]
            else:
                want[a] = data[k]
        want_done.append((slot, err))

    beats: deque = deque()  # (job or None, data) to push, in order
    for job in jobs:
        _, length, lane, _, data = job
        raw = bytes(lane) + data
        raw += bytes(-len(raw) % nbytes)
        for k in range(0, len(raw), nbytes):
            beats.append((job if k == 0 else None, int.from_bytes(raw[k : k + nbytes], "little")))

    aws: deque = deque()  # bursts accepted, waiting for their W beats
    w_beats: list = []  # the W beats of the burst at the head of aws
    responses: deque = deque()  # (cycle due, resp) of bursts fully written
    outstanding = 0
    done = []
    space = 0
    b_shown = None
    for cycle in range(200000):
        # the pusher: a beat (with its job on the first) while there is room
        push = beats and space and rng.random() < 0.8
        if push:
            job, word = beats.popleft()
            dut.s_dat_valid.value = 1
            dut.s_dat_data.value = word
            dut.s_job_valid.value = int(job is not None)
            if job is not None:
                addr, length, lane, slot, _ = job
                dut.s_job_addr.value, dut.s_job_len.value = addr, length
                dut.s_job_ofs.value, dut.s_job_slot.value = lane, slot
        else:
            dut.s_dat_valid.value = dut.s_job_valid.value = 0
        dut.m_axi_awready.value = awready = int(rng.random() < 0.6)
        dut.m_axi_wready.value = wready = int(rng.random() < 0.6)
        if b_shown is None and responses and responses[0][0] <= cycle:
            b_shown = responses.popleft()[1]
        dut.m_axi_bvalid.value = int(b_shown is not None)
        dut.m_axi_bresp.value = b_shown or 0
        await ReadOnly()
        space = int(dut.space_ok.value)
        if int(dut.m_done_valid.value):
            done.append((int(dut.m_done_slot.value), int(dut.m_done_err.value)))
        if int(dut.m_axi_awvalid.value) and awready:
            a = int(dut.m_axi_awaddr.value)
            n = int(dut.m_axi_awlen.value) + 1
            assert int(dut.m_axi_awburst.value) == 1, "not an INCR burst"
            assert 1 << int(dut.m_axi_awsize.value) == nbytes, "not a full-width burst"
            assert a % nbytes == 0, f"burst at {a:#x} not word-aligned"
            assert a >> 12 == (a + n * nbytes - 1) >> 12, f"burst {a:#x}+{n} beats crosses 4 KiB"
            aws.append((a, n, int(dut.m_aw_slot.value)))
            outstanding += 1
            assert outstanding <= bursts_max, f"{outstanding} bursts outstanding"
        if int(dut.m_axi_wvalid.value) and wready:
            w_beats.append(
                (int(dut.m_axi_wdata.value), int(dut.m_axi_wstrb.value), int(dut.m_axi_wlast.value))
            )
        if aws and len(w_beats) >= aws[0][1]:  # a burst whole: write it, respond later
            a, n, _ = aws.popleft()
            mine, w_beats = w_beats[:n], w_beats[n:]
            assert [last for _, _, last in mine] == [0] * (n - 1) + [1], "WLAST misplaced"
            resp = windows.get(a >> 12, OKAY)
            if resp == OKAY:
                for k, (word, strb, _) in enumerate(mine):
                    for b in range(nbytes):
                        if strb >> b & 1:
                            mem[a + k * nbytes + b] = word >> (8 * b) & 0xFF
            responses.append((cycle + rng.randrange(1, 20), resp))
        if b_shown is not None and int(dut.m_axi_bready.value):
            b_shown = None
            outstanding -= 1
        await RisingEdge(dut.clk)
        if not beats and len(done) == len(jobs):
            break
    else:
        raise AssertionError(f"{len(done)} of {len(jobs)} jobs done")
    assert done == want_done, "jobs done out of order, with the wrong owner or error"
    first_bad = next((k for k in range(MEM_SIZE) if mem[k] != want[k]), None)
    assert first_bad is None, f"memory differs from the jobs' bytes at {first_bad:#x}"
    assert not aws and not w_beats and outstanding == 0
