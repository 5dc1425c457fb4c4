"""pevb_axi_wr_route alone: random write bursts, each to the AXI4 master or to a stream
port's ring, with random gaps on every source channel and random ready on every sink,
a slave on the master that answers its bursts after random delays with random IDs and
responses. Checked against the model: the master sees exactly its bursts and their
beats, in order, unchanged, each held until taken; a ring burst's beats come out as ring
writes on its port at its first word plus the beat's number, with the data and
strobes; responses go back in burst order, the master's as it gave them, a ring burst's
(ID 0, OKAY) only once its last beat is written; no more than DEPTH bursts wait for
their responses."""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.config import bench_params
from tb.env.rtl_bench import start

BURSTS = 200
TIMEOUT_CYCLES = 100_000
AW_FIELDS = ("id", "addr", "len", "size", "burst", "lock", "cache", "prot")
AW_WIDTHS = (4, 64, 8, 3, 2, 1, 4, 3)


@cocotb.test()
async def test_random_bursts_to_master_and_rings(dut):
    p = bench_params()
    width = p.get("DATA_WIDTH", 64)
    ports = p.get("PORTS", 1)
    depth = p.get("DEPTH", 16)
    lanes = width // 8
    log_bytes = lanes.bit_length() - 1
    rng = random.Random(cocotb.RANDOM_SEED)
    inputs = [f"s_axi_aw{n}" for n in (*AW_FIELDS, "valid")] + ["s_aw_int", "s_aw_port"]
    inputs += [f"s_axi_w{n}" for n in ("data", "strb", "last", "valid")] + ["s_axi_bready"]
    inputs += ["m_axi_awready", "m_axi_wready", "m_axi_bid", "m_axi_bresp", "m_axi_bvalid"]
    await start(dut, inputs)

    bursts = []
    for _ in range(BURSTS):
        ring = rng.random() < 0.5
        fields = tuple(rng.getrandbits(w) for w in AW_WIDTHS)
        fields = (fields[0], fields[1] & ((1 << 64) - 1), rng.choice([0, rng.randrange(16)]))
        fields += tuple(rng.getrandbits(w) for w in AW_WIDTHS[3:])
        beats = [(rng.getrandbits(width), rng.getrandbits(lanes)) for _ in range(fields[2] + 1)]
        bursts.append((ring, rng.randrange(ports), fields, beats))
    aw_q = deque(bursts)
    w_q = deque((b, k) for b in bursts for k in range(len(b[3])))
    # what must come out, in order
    m_aw = deque(b[2] for b in bursts if not b[0])
    m_w = deque(
        (beat, k == len(b[3]) - 1) for b in bursts if not b[0] for k, beat in enumerate(b[3])
    )
    ring_w = deque(
        (b[1], ((b[2][1] >> log_bytes) + k) & 0xFFFFFFFF, beat)
        for b in bursts
        if b[0]
        for k, beat in enumerate(b[3])
    )
    resp = deque(bursts)  # responses in burst order
    # the slave's answers for its bursts, in order, each given (AXI4) only after the
    # burst's last beat, a random delay later: (bid, bresp), and the cycle it may go
    slave_b: deque[tuple[int, int]] = deque()
    slave_due: deque[int] = deque()
    gaps = [rng.choice([0.0, 0.5]) for _ in range(2)]
    ready_p = [rng.choice([1.0, 0.5, 0.2]) for _ in range(4)]
    aw_valid = w_valid = False
    shown_aw = shown_w = None
    # ring beats written so far, and the count each ring burst's response waits for
    ring_written = 0
    ring_ends: deque[int] = deque()
    total = 0
    for b in bursts:
        if b[0]:
            total += len(b[3])
            ring_ends.append(total)
    waiting = 0  # bursts taken and not yet answered
    for cycle in range(TIMEOUT_CYCLES):
        if not aw_valid and aw_q and rng.random() >= gaps[0]:
            aw_valid = True
        if not w_valid and w_q and rng.random() >= gaps[1]:
            w_valid = True
        ring, port, fields, beats = aw_q[0] if aw_valid else (0, 0, (0,) * 8, [])
        for name, v in zip(AW_FIELDS, fields, strict=True):
            getattr(dut, f"s_axi_aw{name}").value = v
        dut.s_axi_awvalid.value = int(aw_valid)
        dut.s_aw_int.value = int(ring)
        dut.s_aw_port.value = port
        wb, wk = w_q[0] if w_valid else (None, 0)
        beat = wb[3][wk] if wb else (0, 0)
        dut.s_axi_wdata.value = beat[0]
        dut.s_axi_wstrb.value = beat[1]
        dut.s_axi_wlast.value = int(bool(wb) and wk == len(wb[3]) - 1)
        dut.s_axi_wvalid.value = int(w_valid)
        dut.s_axi_bready.value = int(rng.random() < ready_p[0])
        dut.m_axi_awready.value = int(rng.random() < ready_p[1])
        dut.m_axi_wready.value = int(rng.random() < ready_p[2])
        b_give = bool(slave_due) and slave_due[0] <= cycle
        dut.m_axi_bvalid.value = int(b_give)
        dut.m_axi_bid.value = slave_b[0][0] if b_give else 0
        dut.m_axi_bresp.value = slave_b[0][1] if b_give else 0
        await ReadOnly()
        # the master's address channel
        if int(dut.m_axi_awvalid.value):
            got = tuple(int(getattr(dut, f"m_axi_aw{n}").value) for n in AW_FIELDS)
            if shown_aw is not None:
                assert got == shown_aw, f"cycle {cycle}: a burst shown changed"
            assert m_aw and got == m_aw[0], f"cycle {cycle}: master burst {got}"
            if int(dut.m_axi_awready.value):
                m_aw.popleft()
                shown_aw = None
                slave_b.append((rng.getrandbits(4), rng.choice([0, 0, 2, 3])))
            else:
                shown_aw = got
        else:
            assert shown_aw is None, f"cycle {cycle}: a burst shown was taken back"
        # the master's data channel
        if int(dut.m_axi_wvalid.value):
            got_w = (
                (int(dut.m_axi_wdata.value), int(dut.m_axi_wstrb.value)),
                int(dut.m_axi_wlast.value),
            )
            if shown_w is not None:
                assert got_w == shown_w, f"cycle {cycle}: a beat shown changed"
            assert m_w and got_w == (m_w[0][0], int(m_w[0][1])), (
                f"cycle {cycle}: master beat {got_w} for {m_w[0] if m_w else None}"
            )
            if int(dut.m_axi_wready.value):
                if m_w.popleft()[1]:  # the burst's last beat: its answer may follow
                    slave_due.append(cycle + rng.randrange(1, 30))
                shown_w = None
            else:
                shown_w = got_w
        else:
            assert shown_w is None, f"cycle {cycle}: a beat shown was taken back"
        # ring writes
        en = int(dut.ring_wr_en.value)
        if en:
            assert ring_w, f"cycle {cycle}: a ring write of no ring burst"
            rport, word, (data, strb) = ring_w.popleft()
            assert en == 1 << rport, f"cycle {cycle}: ring enable {en:b}, port {rport}"
            assert int(dut.ring_wr_word.value) == word, f"cycle {cycle}: ring word, not {word:#x}"
            assert int(dut.ring_wr_data.value) == data and int(dut.ring_wr_strb.value) == strb
            ring_written += 1
        # responses
        s_bvalid = int(dut.s_axi_bvalid.value)
        if s_bvalid:
            assert resp, f"cycle {cycle}: a response for no burst"
            head = resp[0]
            bid, bresp = int(dut.s_axi_bid.value), int(dut.s_axi_bresp.value)
            if head[0]:
                assert (bid, bresp) == (0, 0), f"cycle {cycle}: a ring burst's response"
                assert ring_written >= ring_ends[0], f"cycle {cycle}: answered before its data"
            else:
                assert b_give and (bid, bresp) == slave_b[0], f"cycle {cycle}: master response"
            if int(dut.s_axi_bready.value):
                resp.popleft()
                waiting -= 1
                if head[0]:
                    ring_ends.popleft()
                if not head[0]:
                    slave_b.popleft()
                    slave_due.popleft()
        if b_give and int(dut.m_axi_bready.value) and not s_bvalid:
            raise AssertionError(f"cycle {cycle}: the slave's response taken but not passed")
        aw_took = aw_valid and int(dut.s_axi_awready.value)
        w_took = w_valid and int(dut.s_axi_wready.value)
        await RisingEdge(dut.clk)
        if aw_took:
            aw_q.popleft()
            aw_valid = False
            waiting += 1
            assert waiting <= depth, f"{waiting} bursts taken and not answered (DEPTH {depth})"
        if w_took:
            w_q.popleft()
            w_valid = False
        if not aw_q and not w_q and not resp:
            break
    else:
        raise AssertionError(f"after {TIMEOUT_CYCLES} cycles: {len(resp)} responses owed")
    assert not m_aw and not m_w and not ring_w
