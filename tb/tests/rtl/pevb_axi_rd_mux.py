"""pevb_axi_rd_mux alone: N read masters issue random bursts (each with its own ID, at
random times) against a slave that takes requests with random arready and returns the
bursts in random order, beats of different IDs interleaved, with random rready on each
master. Checked against the model: every request reaches the slave unchanged, a request
shown waits with its fields unchanged until taken (AXI4), grants go round-robin (a
master asking waits for no more than N - 1 grants to others), every master gets exactly
the beats of its own bursts in its order with the right last and response, and a beat
with an ID no master issued is taken and dropped."""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.config import bench_params
from tb.env.rtl_bench import start

TIMEOUT_CYCLES = 100_000
BURSTS_PER_MASTER = 40


def beat_data(addr: int, beat: int, width: int) -> int:
    """What the slave returns for beat ``beat`` of the burst at ``addr``."""
    rng = random.Random(addr * 1009 + beat)
    return rng.getrandbits(width)


@cocotb.test()
async def test_random_bursts_from_every_master(dut):
    p = bench_params()
    n_masters = p.get("N", 1)
    width = p.get("DATA_WIDTH", 64)
    aw = p.get("ADDR_WIDTH", 64)
    idw = p.get("ID_WIDTH", 4)
    rng = random.Random(cocotb.RANDOM_SEED)
    ar = ("id", "addr", "len", "size", "burst", "lock", "cache", "prot", "valid")
    r = ("rvalid", "rid", "rdata", "rresp", "rlast")
    inputs = [f"s_axi_ar{n}" for n in ar] + ["s_axi_rready", "m_axi_arready"]
    await start(dut, inputs + [f"m_axi_{n}" for n in r])

    # each master's bursts: (addr, len, size, burst, lock, cache, prot, resp)
    todo = [
        deque(
            (
                rng.getrandbits(aw) & ~0xF,
                rng.choice([0, rng.randrange(16), rng.randrange(256)]),
                rng.randrange(8),
                rng.randrange(4),
                rng.randrange(2),
                rng.randrange(16),
                rng.randrange(8),
                rng.choice([0, 0, 0, 2, 3]),
            )
            for _ in range(BURSTS_PER_MASTER)
        )
        for _ in range(n_masters)
    ]
    # what each master must get back, in order: (data, resp, last)
    want: list[deque[tuple[int, int, int]]] = [deque() for _ in range(n_masters)]
    for m in range(n_masters):
        for addr, length, *_rest, resp in todo[m]:
            for b in range(length + 1):
                want[m].append((beat_data(addr, b, width), resp, int(b == length)))
    resp_of = {}  # addr -> resp (the slave answers with the burst's)
    for m in range(n_masters):
        for burst in todo[m]:
            resp_of[burst[0]] = burst[7]
    presenting = [False] * n_masters
    ar_gap = rng.choice([0.0, 0.5])
    arready_p = rng.choice([1.0, 0.5, 0.2])
    rready_p = [rng.choice([1.0, 0.5, 0.2]) for _ in range(n_masters)]
    rvalid_p = rng.choice([1.0, 0.5])
    # the slave: bursts taken, per ID, and the beat it shows until taken
    outstanding: dict[int, deque[list[int]]] = {}
    shown_r: tuple | None = None
    shown_ar: tuple | None = None
    waited = [0] * n_masters  # grants to others while this master asked
    strays = 0
    for cycle in range(TIMEOUT_CYCLES):
        # the masters' requests
        ar = {k: 0 for k in ("id", "addr", "len", "size", "burst", "lock", "cache", "prot")}
        valid = 0
        for m in range(n_masters):
            if not presenting[m] and todo[m] and rng.random() >= ar_gap:
                presenting[m] = True
            if presenting[m]:
                addr, length, size, burst, lock, cache, prot, _ = todo[m][0]
                fields = {
                    "id": (m, idw),
                    "addr": (addr, aw),
                    "len": (length, 8),
                    "size": (size, 3),
                    "burst": (burst, 2),
                    "lock": (lock, 1),
                    "cache": (cache, 4),
                    "prot": (prot, 3),
                }
                for k, (v, w) in fields.items():
                    ar[k] |= v << (m * w)
                valid |= 1 << m
        for k, v in ar.items():
            getattr(dut, f"s_axi_ar{k}").value = v
        dut.s_axi_arvalid.value = valid
        dut.m_axi_arready.value = int(rng.random() < arready_p)
        ready = 0
        for m in range(n_masters):
            ready |= int(rng.random() < rready_p[m]) << m
        dut.s_axi_rready.value = ready
        # the slave's read data: the beat shown stays until taken
        if shown_r is None and rng.random() < rvalid_p:
            ids = [i for i, q in outstanding.items() if q]
            if n_masters < 4 and rng.random() < 0.01:
                stray_id = rng.randrange(n_masters, 4)
                shown_r = (stray_id, rng.getrandbits(width), 0, 1, None)
            elif ids:
                i = rng.choice(ids)
                burst = outstanding[i][0]  # [addr, len, next beat]
                b = burst[2]
                shown_r = (
                    i,
                    beat_data(burst[0], b, width),
                    resp_of[burst[0]],
                    int(b == burst[1]),
                    i,
                )
        if shown_r is not None:
            dut.m_axi_rvalid.value = 1
            dut.m_axi_rid.value = shown_r[0]
            dut.m_axi_rdata.value = shown_r[1]
            dut.m_axi_rresp.value = shown_r[2]
            dut.m_axi_rlast.value = shown_r[3]
        else:
            dut.m_axi_rvalid.value = 0
        await ReadOnly()
        # the request side
        m_valid = int(dut.m_axi_arvalid.value)
        m_fields = tuple(
            int(getattr(dut, f"m_axi_ar{k}").value)
            for k in ("id", "addr", "len", "size", "burst", "lock", "cache", "prot")
        )
        if shown_ar is not None:
            assert m_valid and m_fields == shown_ar, f"cycle {cycle}: a request shown changed"
        shown_ar = None
        arready = int(dut.s_axi_arready.value)
        if m_valid:
            g = m_fields[0]
            assert g < n_masters and valid >> g & 1, f"cycle {cycle}: a grant to {g}, not asking"
            want_fields = (g, *todo[g][0][:7])
            assert m_fields == want_fields, f"cycle {cycle}: {m_fields} for {want_fields}"
            if int(dut.m_axi_arready.value):
                assert arready == 1 << g, f"cycle {cycle}: arready {arready:b}, grant {g}"
                for m in range(n_masters):
                    if m != g and valid >> m & 1:
                        waited[m] += 1
                        assert waited[m] < n_masters, f"master {m} passed over {waited[m]} times"
                waited[g] = 0
                addr, length = todo[g][0][0], todo[g][0][1]
                outstanding.setdefault(g, deque()).append([addr, length, 0])
                todo[g].popleft()
                presenting[g] = False
            else:
                assert arready == 0, f"cycle {cycle}: arready {arready:b} with no slave ready"
                shown_ar = m_fields
        else:
            assert arready == 0 and not valid, f"cycle {cycle}: requests {valid:b} not shown"
        # the data side
        rvalid = int(dut.s_axi_rvalid.value)
        if shown_r is not None:
            rid = shown_r[0]
            if rid >= n_masters:  # a stray ID: taken at once, seen by no master
                assert rvalid == 0, f"cycle {cycle}: a stray beat reached a master"
                assert int(dut.m_axi_rready.value), f"cycle {cycle}: a stray beat held"
                strays += 1
                shown_r = None
            else:
                assert rvalid == 1 << rid, f"cycle {cycle}: rvalid {rvalid:b} for ID {rid}"
                taken = int(dut.m_axi_rready.value)
                assert taken == ready >> rid & 1, f"cycle {cycle}: rready {taken} for {rid}"
                sid = int(dut.s_axi_rid.value) >> (rid * idw) & ((1 << idw) - 1)
                assert sid == rid, f"cycle {cycle}: rid {sid} on master {rid}"
                if taken:
                    got = (shown_r[1], shown_r[2], shown_r[3])
                    assert want[rid] and got == want[rid][0], f"master {rid}: {got}"
                    want[rid].popleft()
                    burst = outstanding[rid][0]
                    burst[2] += 1
                    if burst[2] > burst[1]:
                        outstanding[rid].popleft()
                    shown_r = None
        else:
            assert rvalid == 0 and not int(dut.m_axi_rready.value), f"cycle {cycle}: no data"
        await RisingEdge(dut.clk)
        if not any(todo) and not any(want) and shown_r is None:
            break
    else:
        left = [len(q) for q in want]
        raise AssertionError(f"after {TIMEOUT_CYCLES} cycles beats still owed: {left}")
    if n_masters < 4:
        assert strays, "no stray ID was tried"
