"""The compiled data path's TLP rules (tb/dp/tlp.cpp, completer.cpp) against the Python
code they stand in for, on random TLPs: the header's bits against cocotbext-pcie's
``Tlp.pack_header``/``unpack_header``, the root complex's completions of a memory read
and its writes of a memory write against ``RootComplex.handle_mem_read_tlp`` (with the
project's zero-length-read correction, tb/models/rc.py) and ``handle_mem_write_tlp``."""

from __future__ import annotations

import ctypes
import logging
import random
from types import SimpleNamespace

import pytest
from cocotbext.pcie.core.rc import RootComplex
from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpAttr, TlpTc, TlpType
from cocotbext.pcie.core.utils import PcieId

from tb import dp
from tb.models.rc import fix_zero_length_reads

REQUESTS = [
    TlpType.MEM_READ,
    TlpType.MEM_READ_64,
    TlpType.MEM_WRITE,
    TlpType.MEM_WRITE_64,
    TlpType.IO_READ,
    TlpType.IO_WRITE,
    TlpType.CFG_READ_0,
    TlpType.CFG_WRITE_0,
    TlpType.CFG_READ_1,
    TlpType.CFG_WRITE_1,
]
COMPLETIONS = [TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA]
FIELDS = (
    "length",
    "tag",
    "first_be",
    "last_be",
    "ph",
    "byte_count",
    "lower_address",
    "address",
)


def _random_tlp(rng: random.Random, kind: TlpType) -> Tlp:
    t = Tlp()
    t.fmt_type = kind
    t.tc = TlpTc(rng.randrange(8))
    t.attr = TlpAttr(rng.randrange(8))
    t.ep, t.td, t.th, t.ln = (rng.random() < 0.2 for _ in range(4))
    t.tag = rng.randrange(1024)
    t.requester_id = PcieId.from_int(rng.randrange(1 << 16))
    t.completer_id = PcieId.from_int(rng.randrange(1 << 16))
    t.length = rng.randrange(1024)
    t.first_be, t.last_be = rng.randrange(16), rng.randrange(16)
    t.address = rng.randrange(
        1 << (64 if kind in (TlpType.MEM_READ_64, TlpType.MEM_WRITE_64) else 32)
    )
    t.address &= ~3
    if kind in (TlpType.CFG_READ_0, TlpType.CFG_WRITE_0, TlpType.CFG_READ_1, TlpType.CFG_WRITE_1):
        t.address &= 0xFFC
    t.ph = rng.randrange(4)
    t.byte_count = rng.randrange(4096)
    t.bcm = rng.random() < 0.5
    t.status = rng.choice(list(CplStatus))
    t.lower_address = rng.randrange(128)
    return t


def _header(raw: bytes) -> dp.TlpHeader:
    lib = dp.library()
    h = dp.TlpHeader()
    buf = ctypes.create_string_buffer(bytes(raw), 16)
    assert lib.dp_tlp_unpack(buf, ctypes.byref(h)) == 1
    return h


def _packed(h: dp.TlpHeader) -> bytes:
    out = ctypes.create_string_buffer(16)
    size = dp.library().dp_tlp_pack(ctypes.byref(h), out)
    assert size in (12, 16)
    return out.raw[:size]


def test_headers_read_and_written_as_cocotbext_pcie_does() -> None:
    rng = random.Random(3)
    for _ in range(3000):
        kind = rng.choice(REQUESTS + COMPLETIONS)
        raw = bytes(_random_tlp(rng, kind).pack_header())
        want = Tlp.unpack_header(raw)
        h = _header(raw)
        assert (h.fmt, h.type) == (want.fmt, want.type), kind
        for name in FIELDS:
            assert getattr(h, name) == int(getattr(want, name)), (kind, name)
        assert h.attr == int(want.attr) and h.tc == int(want.tc) and h.at == int(want.at)
        assert (h.ep, h.td, h.th, h.ln) == (want.ep, want.td, want.th, want.ln), kind
        assert h.requester_id == int(want.requester_id), kind
        if kind in COMPLETIONS or kind.name.startswith("CFG"):
            assert h.completer_id == int(want.completer_id), kind
        if kind in COMPLETIONS:
            assert (h.status, h.bcm) == (int(want.status), want.bcm), kind
        assert _packed(h) == raw, kind


def _fake_rc(memory: bytes, mps: int, rcb_128: bool, split: bool, base: int):
    """What RootComplex.handle_mem_read_tlp/handle_mem_write_tlp use of the root complex,
    over ``memory`` at ``base``: the completions it sends and the writes it makes are
    kept."""
    sent: list[Tlp] = []
    writes: list[tuple[int, bytes]] = []

    async def read(addr: int, length: int) -> bytes:
        return memory[addr - base : addr - base + length]

    async def write(addr: int, data: bytes) -> None:
        writes.append((addr, bytes(data)))

    async def send(tlp: Tlp) -> None:
        sent.append(tlp)

    space = SimpleNamespace(
        read=read, write=write, find_regions=lambda a, n: [(base, len(memory), 0, None)]
    )
    rc = SimpleNamespace(
        log=logging.getLogger("test"),
        mem_address_space=space,
        max_payload_size=mps,
        read_completion_boundary=rcb_128,
        split_on_all_rcb=split,
        send=send,
        register_rx_tlp_handler=lambda *a: None,
    )
    rc.handle_mem_read_tlp = lambda tlp: RootComplex.handle_mem_read_tlp(rc, tlp)
    rc.handle_mem_write_tlp = lambda tlp: RootComplex.handle_mem_write_tlp(rc, tlp)
    fix_zero_length_reads(rc)
    return rc, sent, writes


def _run(coro) -> None:
    with pytest.raises(StopIteration):
        coro.send(None)  # nothing in it waits


def _request(rng: random.Random, kind: TlpType, base: int) -> Tlp:
    """A memory request within one 4 KiB page of ``base``'s 64 KiB, of any legal shape."""
    t = Tlp()
    t.fmt_type = kind
    t.requester_id = PcieId.from_int(rng.randrange(1 << 16))
    t.tag, t.tc, t.attr = rng.randrange(1024), TlpTc(rng.randrange(8)), TlpAttr(rng.randrange(8))
    page = base + 0x1000 * rng.randrange(16)
    start = rng.choice([0, rng.randrange(0x1000)])
    length = rng.choice([0, 1, 2, 3, 4, 5, rng.randrange(1, 0x1000 - start + 1)])
    length = min(length, 0x1000 - start)
    data = bytes(rng.randrange(256) for _ in range(length))
    if kind == TlpType.MEM_READ:
        t.set_addr_be(page + start, length)
    else:
        t.set_addr_be_data(page + start, data)
    return t


def test_read_completions_as_the_root_complex_makes_them() -> None:
    rng = random.Random(5)
    lib = dp.library()
    base = 0x10_0000
    memory = bytes(rng.randrange(256) for _ in range(0x10000))
    cpls = (dp.TlpHeader * 512)()
    offsets = (ctypes.c_uint32 * 512)()
    shapes = 0
    for _ in range(1500):
        mps, rcb_128, split = rng.randrange(6), rng.random() < 0.5, rng.random() < 0.3
        rc, sent, _ = _fake_rc(memory, mps, rcb_128, split, base)
        req = _request(rng, TlpType.MEM_READ, base)
        _run(rc.handle_mem_read_tlp(req))
        h = _header(bytes(req.pack_header()))
        n = lib.dp_rc_read_completions(ctypes.byref(h), mps, rcb_128, split, cpls, offsets, 512)
        assert n == len(sent), (req, mps, rcb_128, split)
        read = memory[req.address - base : req.address - base + req.length * 4]
        for k in range(n):
            data = read[offsets[k] * 4 : (offsets[k] + cpls[k].length) * 4]
            assert _packed(cpls[k]) + data == bytes(sent[k].pack()), (req, k)
        shapes += n > 1
    assert shapes > 100  # many reads took more than one completion


def test_write_runs_as_the_root_complex_writes() -> None:
    rng = random.Random(6)
    lib = dp.library()
    base = 0x10_0000
    runs = (ctypes.c_uint32 * 16)()
    for _ in range(2000):
        rc, _, writes = _fake_rc(bytes(0x10000), 0, False, False, base)
        req = _request(rng, TlpType.MEM_WRITE, base)
        if rng.random() < 0.3:  # any byte enables, not only a contiguous run's
            req.first_be = rng.randrange(16)
            req.last_be = rng.randrange(16) if req.length > 1 else 0
        _run(rc.handle_mem_write_tlp(req))
        h = _header(bytes(req.pack_header()))
        n = lib.dp_mem_write_runs(ctypes.byref(h), runs)
        got = [
            (
                req.address + runs[2 * k],
                bytes(req.data[runs[2 * k] : runs[2 * k] + runs[2 * k + 1]]),
            )
            for k in range(n)
        ]
        assert got == writes, (req, got, writes)


def _random_bars(rng: random.Random) -> tuple[list[int], list[int]]:
    """Six BAR registers and their masks: unimplemented, I/O, 32-bit and 64-bit memory."""
    bars, masks = [0] * 6, [0] * 6
    k = 0
    while k < 6:
        kind = rng.choice(["none", "io", "mem32", "mem64"])
        size = 1 << rng.randrange(4 if kind == "io" else 12, 20 if kind != "mem64" else 32)
        base = rng.randrange(1 << (16 if kind == "io" else 32 if kind == "mem32" else 48))
        base &= ~(size - 1)
        if kind == "io":
            bars[k], masks[k] = base | 1, (0xFFFFFFFF & ~(size - 1)) & ~3
        elif kind == "mem32":
            bars[k], masks[k] = base, (0xFFFFFFFF & ~(size - 1)) & ~0xF
        elif kind == "mem64" and k < 5:
            full = ((1 << 64) - 1) & ~(size - 1)
            bars[k], masks[k] = (base & 0xFFFFFFF0) | 4, full & 0xFFFFFFF0
            bars[k + 1], masks[k + 1] = base >> 32, full >> 32
            k += 1
        k += 1
    return bars, masks


def test_routing_as_bridges_and_functions_decide() -> None:
    """The library's Function.match_tlp and Bridge.match_tlp_secondary against
    cocotbext-pcie's own, on random configurations and TLPs aimed near their windows,
    BARs and buses."""
    from cocotbext.pcie.core.bridge import Bridge
    from cocotbext.pcie.core.endpoint import Endpoint
    from cocotbext.pcie.core.function import Function

    rng = random.Random(8)
    lib = dp.library()
    kinds = [*REQUESTS, *COMPLETIONS]
    seen = {True: 0, False: 0}
    for _ in range(300):
        fn = Endpoint()
        fn.bar, fn.bar_mask = _random_bars(rng)
        fn.pcie_id = PcieId(rng.randrange(256), rng.randrange(32), rng.randrange(8))
        br = Bridge()
        lo = rng.randrange(1 << 32)
        br.mem_base, br.mem_limit = lo, lo + rng.randrange(1 << 28)
        lo = rng.randrange(1 << 60)
        br.prefetchable_mem_base, br.prefetchable_mem_limit = lo, lo + rng.randrange(1 << 36)
        br.io_base = rng.randrange(1 << 16)
        br.io_limit = br.io_base + rng.randrange(1 << 12)
        if rng.random() < 0.5:  # windows that end on a DW (an address can hit the limit)
            br.mem_limit &= ~3
            br.prefetchable_mem_limit &= ~3
        br.sec_bus_num = rng.choice([0, rng.randrange(256)])
        br.sub_bus_num = min(255, br.sec_bus_num + rng.randrange(8))
        fview, bview = dp.FunctionView.of(fn), dp.BridgeView.of(br)
        near = [
            br.mem_base,
            br.mem_limit,
            br.prefetchable_mem_base,
            br.prefetchable_mem_limit,
            br.io_base,
            br.io_limit,
            *(b for b in fn.bar),
        ]
        for _ in range(40):
            t = _random_tlp(rng, rng.choice(kinds))
            if rng.random() < 0.7 and not t.fmt_type.name.startswith("CFG"):
                t.address = (rng.choice(near) + rng.randrange(-8, 9) * 4) & ((1 << 64) - 4)
                if t.fmt_type not in (TlpType.MEM_READ_64, TlpType.MEM_WRITE_64):
                    t.address &= 0xFFFFFFFC
            if rng.random() < 0.5:
                bus = rng.choice([br.sec_bus_num, br.sub_bus_num, fn.pcie_id.bus])
                t.requester_id = PcieId(bus, rng.randrange(32), rng.randrange(8))
                t.completer_id = t.requester_id if rng.random() < 0.5 else fn.pcie_id
                if rng.random() < 0.1:  # no ID, which no bridge routes by
                    t.requester_id = t.completer_id = PcieId(0, 0, 0)
            h = _header(bytes(t.pack_header()))
            want = bool(Function.match_tlp(fn, Tlp.unpack_header(bytes(t.pack_header()))))
            assert lib.dp_match_function(ctypes.byref(fview), ctypes.byref(h)) == want, t
            want2 = bool(Bridge.match_tlp_secondary(br, Tlp.unpack_header(bytes(t.pack_header()))))
            assert lib.dp_match_secondary(ctypes.byref(bview), ctypes.byref(h)) == want2, t
            seen[want] += 1
            seen[want2] += 1
    assert min(seen.values()) > 1000, seen  # both answers, many times


def _space(seed: int):
    """A root complex's address space as cocotbext-pcie makes it (a pool of RAM regions
    inside the 64-bit space), with four regions filled from ``seed``; and the regions."""
    from cocotbext.axi.address_space import AddressSpace

    space = AddressSpace(2**64)
    pool = space.create_pool(0, 0x8000_0000)
    rng = random.Random(seed)
    regions = [pool.alloc_region(size) for size in (0x4000, 0x1000, 0x10000, 0x2000)]
    for region in regions:
        region.mem[:] = rng.randbytes(region.size)
    return space, regions


def test_memory_requests_as_the_root_complex_answers_them() -> None:
    """The library's answer to reads and writes of the root complex's RAM (regions found
    through a pool, as cocotbext-pcie nests them) against RootComplex's own, on random
    requests inside, across and outside the regions: the same completions, the same
    memory after the writes; what the library leaves to Python (across regions, outside
    them, across 4 KiB) is what Python answers otherwise (UR, CA, a discard)."""
    rng = random.Random(9)
    py_space, py_regions = _space(1)
    c_space, c_regions = _space(1)
    mem = dp.Memory()
    assert mem.mirror(c_space) == len(c_regions)
    left_to_python = answered = 0
    for _ in range(3000):
        region = rng.choice(py_regions)
        base = region.get_absolute_address(0)
        start = base + rng.randrange(region.size) if rng.random() < 0.9 else rng.randrange(1 << 32)
        length = rng.choice([0, 1, 4, 64, rng.randrange(1, 1025)])
        t = Tlp()
        t.requester_id = PcieId.from_int(rng.randrange(1 << 16))
        t.tag = rng.randrange(256)
        mps, rcb_128, split = rng.randrange(6), rng.random() < 0.5, rng.random() < 0.3
        if rng.random() < 0.5:
            t.fmt_type = TlpType.MEM_WRITE_64 if start >> 32 else TlpType.MEM_WRITE
            t.set_addr_be_data(start, rng.randbytes(max(length, 1)))
        else:
            t.fmt_type = TlpType.MEM_READ_64 if start >> 32 else TlpType.MEM_READ
            t.set_addr_be(start, length)
        raw = bytes(t.pack())
        got = mem.request(raw, mps, rcb_128, split)
        rc, sent, _ = _fake_rc(b"", mps, rcb_128, split, 0)
        rc.mem_address_space = py_space
        handler = (
            rc.handle_mem_write_tlp
            if t.fmt_type in (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64)
            else rc.handle_mem_read_tlp
        )
        coro = handler(Tlp.unpack(raw))
        try:
            coro.send(None)
        except StopIteration:
            pass
        if got is None:
            left_to_python += 1
            c_space_write = t.fmt_type in (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64)
            if c_space_write and sent == []:  # Python wrote (or dropped) it: follow it
                for pr, cr in zip(py_regions, c_regions, strict=True):
                    cr.mem[:] = pr.mem[:]
            continue
        answered += 1
        assert got == b"".join(bytes(c.pack()) for c in sent), f"completions of {t}"
    for pr, cr in zip(py_regions, c_regions, strict=True):
        assert bytes(pr.mem) == bytes(cr.mem), "the memory after the writes differs"
    assert answered > 2000 and left_to_python > 50, (answered, left_to_python)
