"""pevb_rc_rx alone: the read tag table and the requester completion handler, with read
requests allocated at random (H2C data reads, H2C and C2H descriptor fetches) and their
completions driven by cocotbext-pcie's RC source, split at random DWORD boundaries,
interleaved across tags at random with each request's completions in address order,
under random back-pressure. Checked against a model of the table:

- each allocation takes the lowest free tag (not in flight, not given up);
- every completion of H2C data becomes a write job at the card address of its bytes
  (the request's card address plus their offset), with its length and first lane, and
  beats that carry exactly those bytes, in the order the completions came;
- every descriptor DWORD lands in its channel's buffer at the request's index plus its
  offset;
- each request retires once, on its final completion, with its kind and owner, and the
  XDMA error bits of what went wrong: UR, CA, poisoned data (which also drops the data);
- a completion for a tag not in flight is flagged and changes nothing; discarded slots
  get no jobs but still retire;
- a request never answered times out (CPL_TIMEOUT_CYCLES) with the unexpected-completion
  error, and its tag stays unused until its late completion arrives.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge, Timer
from cocotbext.axi import AxiStreamBus
from cocotbext.pcie.core.tlp import CplStatus, TlpType
from cocotbext.pcie.core.utils import PcieId
from cocotbext.pcie.xilinx.us.interface import RcSource
from cocotbext.pcie.xilinx.us.tlp import Tlp_us

from driver_model.regs import PcieErr
from tb.config import bench_params
from tb.env.rtl_bench import start

H2C_DESC, C2H_DESC, H2C_DATA = 0, 1, 2
SLOTS = 4  # SLOT_WIDTH 2
IDX_WIDTH = 6  # DESC_IDX_WIDTH
UR, CA, EP, UNEXP = (
    int(PcieErr.UNSUPPORTED_REQUEST),
    int(PcieErr.COMPLETER_ABORT),
    int(PcieErr.POISONED),
    int(PcieErr.UNEXPECTED_COMPLETION),
)
INPUTS = ("rst_keeps_tags", "alloc_valid", "alloc_kind", "alloc_slot", "alloc_addr_lo")
INPUTS += ("alloc_info", "alloc_len", "h2c_discard", "wr_space_ok")


@dataclass
class Request:
    tag: int
    kind: int
    slot: int
    host: int  # the read's host address (its low 12 bits reach the table)
    info: int  # card address of H2C data; buffer index of a descriptor fetch
    length: int
    payload: bytes
    # completions still to send, in order, each with the jobs and descriptor writes it
    # should make
    cpls: list = field(default_factory=list)
    err: int = 0  # the error its retirement reports


def completion(req: Request, offset: int, nbytes: int, status=CplStatus.SC, **kw) -> Tlp_us:
    """A completion of ``req``'s bytes from ``offset``, ``nbytes`` of them (its byte count:
    all that remain), DWORD-aligned as PCIe carries them."""
    t = Tlp_us()
    addr = req.host + offset
    t.fmt_type = TlpType.CPL_DATA if status == CplStatus.SC and nbytes else TlpType.CPL
    t.status = status
    t.tag = req.tag
    t.requester_id = PcieId(1, 0, 0)
    t.lower_address = addr & 0xFFF
    t.byte_count = req.length - offset
    if t.fmt_type == TlpType.CPL_DATA:
        first = addr & 3
        dws = (first + nbytes + 3) // 4
        raw = bytes(random.getrandbits(8) for _ in range(first))
        raw += req.payload[offset : offset + nbytes]
        raw += bytes(dws * 4 - len(raw))
        t.set_data(raw)
    for name, value in kw.items():
        setattr(t, name, value)
    return t


class Bench:
    def __init__(self, dut, rng: random.Random) -> None:
        self.dut, self.rng = dut, rng
        p = bench_params()
        self.width = p.get("AXIS_PCIE_DATA_WIDTH", 64)
        self.tags = p.get("TAG_COUNT", 32)
        self.timeout = p.get("CPL_TIMEOUT_CYCLES", 131072)
        self.active: dict[int, Request] = {}
        self.dead: set[int] = set()
        self.jobs: list = []  # (addr, len, ofs, slot, bytes) seen
        self.descs: Counter = Counter()
        self.retired: list = []  # (kind, slot, err) seen
        self.unexpected = 0
        self.discard = 0
        self.space = 0.8
        self.want_jobs: list = []
        self.want_descs: Counter = Counter()
        self.strays = 0
        self._job: list | None = None

    async def begin(self) -> None:
        dut = self.dut
        await start(dut, INPUTS)
        dut.wr_space_ok.value = 1
        self.source = RcSource(AxiStreamBus.from_prefix(dut, "s_axis_rc"), dut.clk, dut.rst)
        cocotb.start_soon(self._monitor())

    def free_tag(self) -> int | None:
        for t in range(self.tags):
            if t not in self.active and t not in self.dead:
                return t
        return None

    async def allocate(self, kind: int, slot: int, length: int) -> Request:
        """One allocation on the next cycle it can go: the tag the table gives."""
        dut, rng = self.dut, self.rng
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.tag_avail.value):
                break
        await RisingEdge(dut.clk)
        if kind == H2C_DATA:
            host = rng.randrange(1 << 40)
            length = min(length, 0x1000 - (host & 0xFFF))
            info = rng.getrandbits(64)
        else:
            host = rng.randrange(1 << 35) << 5
            length = max(32, min(length, 0x1000 - (host & 0xFFF)) & ~31)
            info = rng.randrange(1 << IDX_WIDTH) & ~7
        dut.alloc_valid.value = 1
        dut.alloc_kind.value, dut.alloc_slot.value = kind, slot
        dut.alloc_addr_lo.value, dut.alloc_info.value = host & 0xFFF, info
        dut.alloc_len.value = length
        await ReadOnly()
        assert int(dut.tag_avail.value)
        tag = int(dut.tag_free.value)
        assert tag == self.free_tag(), f"tag {tag} given, {self.free_tag()} is the lowest free"
        req = Request(tag, kind, slot, host, info, length, rng.randbytes(length))
        self.active[tag] = req
        await RisingEdge(dut.clk)
        dut.alloc_valid.value = 0
        return req

    def split(self, req: Request, errors: bool) -> None:
        """The request's completions, split at random DWORD boundaries, each with what it
        should produce; with ``errors`` maybe a UR or CA instead, or a poisoned piece
        (which drops its data and the rest of the request's)."""
        rng = self.rng
        fate = rng.choice(["ok"] * 4 + ["ur", "ca", "poison"]) if errors else "ok"
        if fate in ("ur", "ca"):
            status = CplStatus.UR if fate == "ur" else CplStatus.CA
            req.cpls.append((completion(req, 0, 0, status), []))
            req.err = UR if fate == "ur" else CA
            return
        pieces = []
        offset = 0
        while offset < req.length:
            first = (req.host + offset) & 3
            n = req.length - offset
            if rng.random() < 0.6:
                n = max(1, min(n, rng.randrange(1, 64) * 4 - first))
            pieces.append((offset, n))
            offset += n
        poisoned = rng.randrange(len(pieces)) if fate == "poison" else len(pieces)
        for k, (offset, n) in enumerate(pieces):
            if k == poisoned:
                req.cpls.append((completion(req, offset, n, ep=True), []))
                req.err = EP
            else:
                req.cpls.append(
                    (completion(req, offset, n), self._expect(req, offset, n, k < poisoned))
                )

    def _expect(self, req: Request, offset: int, n: int, trusted: bool) -> list:
        """What a completion of ``req``'s bytes at ``offset`` produces: a write job of H2C
        data (none for a discarded slot), descriptor DWORDs of a fetch."""
        data = req.payload[offset : offset + n]
        if not trusted:
            return []
        if req.kind == H2C_DATA:
            if self.discard >> req.slot & 1:
                return []
            return [("job", ((req.info + offset) % (1 << 64), n, req.slot, data))]
        out = []
        for k in range(0, n, 4):
            dw = int.from_bytes(data[k : k + 4], "little")
            idx = (req.info + (offset + k) // 4) % (1 << IDX_WIDTH)
            out.append(("desc", (req.kind, req.slot, idx, dw)))
        return out

    async def _monitor(self) -> None:
        dut = self.dut
        nbytes = self.width // 8
        while True:
            await RisingEdge(dut.clk)
            dut.wr_space_ok.value = int(self.rng.random() < self.space)
            await ReadOnly()
            if int(dut.m_job_valid.value):
                assert self._job is None, "a job before the last one's data"
                self._job = [
                    int(dut.m_job_addr.value),
                    int(dut.m_job_len.value),
                    int(dut.m_job_ofs.value),
                    int(dut.m_job_slot.value),
                    b"",
                ]
            if int(dut.m_dat_valid.value):
                assert self._job is not None, "data beat without a job"
                self._job[4] += int(dut.m_dat_data.value).to_bytes(nbytes, "little")
                addr, length, ofs, slot, raw = self._job
                if len(raw) >= ofs + length:
                    self.jobs.append((addr, length, slot, raw[ofs : ofs + length]))
                    self._job = None
            for kind, name in ((H2C_DESC, "desc_wr_en_h2c"), (C2H_DESC, "desc_wr_en_c2h")):
                en = int(getattr(dut, name).value)
                if en:
                    idx, slot = int(dut.desc_wr_idx.value), int(dut.desc_wr_slot.value)
                    data = int(dut.desc_wr_data.value)
                    for lane in range(self.width // 32):
                        if en >> lane & 1:
                            dw = data >> (32 * lane) & 0xFFFFFFFF
                            self.descs[(kind, slot, (idx + lane) % (1 << IDX_WIDTH), dw)] += 1
            if int(dut.retire_valid.value):
                self.retired.append(
                    (
                        int(dut.retire_kind.value),
                        int(dut.retire_slot.value),
                        int(dut.retire_err.value),
                    )
                )
            self.unexpected += int(dut.unexpected_cpl.value)

    async def send(self, tlp: Tlp_us, effects: list = ()) -> None:
        """Send a completion; ``effects``: the jobs and descriptor writes it should make."""
        for kind, what in effects:
            if kind == "job":
                self.want_jobs.append(what)
            else:
                self.want_descs[what] += 1
        await self.source.send(tlp.pack_us_rc())

    async def drain(self, retired: int, cycles: int = 20) -> None:
        """Wait until ``retired`` retirements in all have been seen and the source has
        been idle ``cycles`` clocks (the source's queue is empty a while before the last
        frame is on the bus); 20000 clocks at most."""
        quiet = 0
        for _ in range(20000):
            await RisingEdge(self.dut.clk)
            quiet = quiet + 1 if self.source.idle() and len(self.retired) >= retired else 0
            if quiet >= cycles:
                return
        raise AssertionError(f"{len(self.retired)} of {retired} requests retired")


async def _traffic(bench: Bench, rounds: int, errors: bool) -> list[Request]:
    """Rounds of allocations and their completions, interleaved across tags; each round
    ends when the table has taken them all."""
    rng = bench.rng
    done: list[Request] = []
    for _ in range(rounds):
        reqs = []
        for _ in range(rng.randrange(1, min(bench.tags, 12) + 1)):
            kind = rng.choice([H2C_DATA, H2C_DATA, H2C_DESC, C2H_DESC])
            length = rng.choice([4, 32, 64, 96, 128, 256, 512, 1024, 4096, rng.randrange(1, 4097)])
            req = await bench.allocate(kind, rng.randrange(SLOTS), length)
            bench.split(req, errors)
            reqs.append(req)
        pending = [r for r in reqs if r.cpls]
        while pending:
            req = rng.choice(pending)
            tlp, effects = req.cpls.pop(0)
            if not req.cpls:
                pending.remove(req)
            await bench.send(tlp, effects)
            tag = bench.free_tag()
            if errors and tag is not None and rng.random() < 0.05:
                # a stray: a completion for a tag no request holds
                stray = Request(tag, H2C_DATA, 0, 0, 0, 64, bytes(64))
                await bench.send(completion(stray, 0, 64))
                bench.strays += 1
        done += reqs
        await bench.drain(len(done))
        for r in reqs:
            del bench.active[r.tag]  # retired by its final completion
    return done


def _check(bench: Bench, reqs: list[Request]) -> None:
    assert bench.jobs == bench.want_jobs, "write jobs differ from the completions sent"
    assert bench.descs == bench.want_descs, "descriptor writes differ from the completions"
    want_retired = Counter((r.kind, r.slot, r.err) for r in reqs)
    assert Counter(bench.retired) == want_retired, f"retired {bench.retired}"


@cocotb.test()
async def test_completions_in_any_order(dut):
    rng = random.Random(cocotb.RANDOM_SEED)
    bench = Bench(dut, rng)
    await bench.begin()
    reqs = await _traffic(bench, 12, errors=False)
    _check(bench, reqs)
    assert bench.jobs and bench.descs and bench.unexpected == 0
    assert not bench.active and int(dut.tags_in_flight.value) == 0


@cocotb.test()
async def test_errors_strays_and_discards(dut):
    rng = random.Random(cocotb.RANDOM_SEED + 1)
    bench = Bench(dut, rng)
    bench.discard = 1 << rng.randrange(SLOTS)
    await bench.begin()
    dut.h2c_discard.value = bench.discard
    reqs = await _traffic(bench, 12, errors=True)
    _check(bench, reqs)
    assert any(r.err for r in reqs)
    assert bench.unexpected == bench.strays


@cocotb.test()
async def test_timeouts_and_late_completions(dut):
    """Requests never answered retire by timeout; their tags stay out of use until the
    late completion comes (flagged unexpected), then are free again."""
    rng = random.Random(cocotb.RANDOM_SEED + 2)
    bench = Bench(dut, rng)
    if bench.timeout > 20000:
        return  # (the parameter sets with a short timeout run this)
    await bench.begin()
    lost = [await bench.allocate(H2C_DATA, rng.randrange(SLOTS), 64) for _ in range(3)]
    answered = await bench.allocate(H2C_DESC, 1, 64)
    bench.split(answered, errors=False)
    for tlp, effects in answered.cpls:
        await bench.send(tlp, effects)
    del bench.active[answered.tag]
    await Timer((bench.timeout + 2 * 256 + 50) * 4, "ns")  # (the clock is 4 ns)
    await bench.drain(4)
    for r in lost:
        del bench.active[r.tag]
        bench.dead.add(r.tag)
        r.err = UNEXP
    _check(bench, [*lost, answered])
    # the given-up tags are not handed out again
    fresh = await bench.allocate(H2C_DATA, 0, 32)
    assert fresh.tag not in {r.tag for r in lost}
    # the late final completion of one: flagged, its tag free again, nothing else done
    late = lost[0]
    await bench.send(completion(late, 0, late.length))
    await bench.drain(4)
    bench.dead.discard(late.tag)
    assert bench.unexpected == 1
    await bench.allocate(H2C_DATA, 0, 32)  # the lowest free tag, the late one's among them
