"""pevb_cq_demux alone: random completer requests (memory reads and writes to random
BARs, messages, payloads of 0 to several beats) with random gaps on the input and
random back-pressure on each port. The model routes a TLP to port 1 when its BAR id is
the module's BAR and it is not a message, else to port 0; each port must see exactly its
TLPs' beats, in order, unchanged (data, keep, last, user), and a beat shown to a port must
stay, unchanged, until that port takes it (AXI4-Stream)."""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.config import bench_params
from tb.env.rtl_bench import start

TIMEOUT_CYCLES = 100_000
# request types (descriptor DWORD 2, bits 14:11): memory read and write, I/O, messages
REQ_TYPES = (0b0000, 0b0001, 0b0010, 0b0011, 0b1100, 0b1101, 0b1110)


def make_tlp(rng: random.Random, keep: int, user_width: int) -> tuple[int, list[tuple]]:
    """A random request: its port (by the BAR id and type, for the module's BAR) and its
    beats (data, keep, last, user)."""
    payload = rng.choice([0, rng.randrange(1, 2 * keep + 3)])
    req_type = rng.choice(REQ_TYPES)
    bar = rng.randrange(8)
    dw = [rng.getrandbits(32), rng.getrandbits(32), 0, 0]
    dw[2] = (rng.getrandbits(32) & ~(0xF << 11)) | req_type << 11
    dw[3] = (rng.getrandbits(32) & ~(0x7 << 16)) | bar << 16
    dws = dw + [rng.getrandbits(32) for _ in range(payload)]
    beats = []
    for i in range(0, len(dws), keep):
        chunk = dws[i : i + keep]
        data = sum(d << (32 * k) for k, d in enumerate(chunk))
        # lanes past the TLP's end carry junk the demux must pass as it is
        data |= rng.getrandbits(32 * keep) & ~((1 << (32 * len(chunk))) - 1)
        last = i + keep >= len(dws)
        beats.append((data, (1 << len(chunk)) - 1, int(last), rng.getrandbits(user_width)))
    return (bar, req_type), beats


@cocotb.test()
async def test_random_requests_to_both_ports(dut):
    p = bench_params()
    width = p.get("AXIS_PCIE_DATA_WIDTH", 64)
    bar_param = p.get("BAR", 2)
    keep = width // 32
    user_width = 88 if width < 512 else 183
    rng = random.Random(cocotb.RANDOM_SEED)
    inputs = [f"s_axis_cq_t{n}" for n in ("valid", "data", "keep", "last", "user")]
    await start(dut, [*inputs, "m_axis_cq_tready"])

    inputs: deque[tuple] = deque()
    want: list[deque[tuple]] = [deque(), deque()]
    routed = [0, 0]
    for _ in range(300):
        (bar, req_type), beats = make_tlp(rng, keep, user_width)
        port = int(bar == bar_param and req_type >> 2 != 0b11)
        routed[port] += 1
        inputs.extend(beats)
        want[port].extend(beats)
    assert all(routed), "the random requests never reached one of the ports"
    in_gap = rng.choice([0.0, 0.4])
    ready_p = [rng.choice([1.0, 0.6, 0.2]), rng.choice([1.0, 0.6, 0.2])]
    s_valid = False
    shown: list[tuple | None] = [None, None]  # a beat a port saw and did not take
    for cycle in range(TIMEOUT_CYCLES):
        if not s_valid and inputs and rng.random() >= in_gap:
            s_valid = True
        beat = inputs[0] if s_valid else (0, 0, 0, 0)
        dut.s_axis_cq_tvalid.value = int(s_valid)
        dut.s_axis_cq_tdata.value = beat[0]
        dut.s_axis_cq_tkeep.value = beat[1]
        dut.s_axis_cq_tlast.value = beat[2]
        dut.s_axis_cq_tuser.value = beat[3]
        ready = [int(rng.random() < ready_p[0]), int(rng.random() < ready_p[1])]
        dut.m_axis_cq_tready.value = ready[0] | ready[1] << 1
        await ReadOnly()
        valid = int(dut.m_axis_cq_tvalid.value)
        assert valid != 3, f"cycle {cycle}: a beat shown to both ports"
        out = (
            int(dut.m_axis_cq_tdata.value),
            int(dut.m_axis_cq_tkeep.value),
            int(dut.m_axis_cq_tlast.value),
            int(dut.m_axis_cq_tuser.value),
        )
        for port in (0, 1):
            if shown[port] is not None:
                assert valid >> port & 1 and out == shown[port], (
                    f"cycle {cycle}: port {port} lost or changed a beat it had not taken"
                )
            shown[port] = None
            if valid >> port & 1:
                assert want[port], f"cycle {cycle}: port {port} got a beat of no TLP of its"
                assert out == want[port][0], (
                    f"cycle {cycle}: port {port} got {out}, not {want[port][0]}"
                )
                if ready[port]:
                    want[port].popleft()
                else:
                    shown[port] = out
        took = s_valid and int(dut.s_axis_cq_tready.value)
        await RisingEdge(dut.clk)
        if took:
            inputs.popleft()
            s_valid = False
        if not inputs and not want[0] and not want[1]:
            break
    else:
        raise AssertionError(
            f"after {TIMEOUT_CYCLES} cycles: {len(inputs)} beats not taken, "
            f"{len(want[0])} and {len(want[1])} not delivered"
        )
