"""The GPU's BAR1 as a completer in the compiled data path (tb/dp/gpu.cpp) against the
Python it stands in for: tb/env/gpu_endpoint.py's ``GpuEndpoint`` on cocotbext-pcie's
``Function`` and ``MemoryEndpoint``, receiving random memory requests while pins come
and go, memory is freed and written. Two GPU models live the same life, one answered
by Python and one by the library wherever it answers: the same completions byte for
byte, the same VRAM, the same statistics on every pin, and the library refuses exactly
the requests Python must see (faults it records, writes to VRAM never written, other
BARs, a poisoned write, a zero-length read)."""

from __future__ import annotations

import ctypes
import random

from cocotbext.pcie.core.tlp import Tlp, TlpType
from cocotbext.pcie.core.utils import PcieId

from cuda_model import CudaRuntime, Gpu, NvidiaP2P
from cuda_model.api_types import cudaMemcpyKind
from cuda_model.gpu import BAR0, BAR1, BAR3, GPU_PAGE_SIZE
from tb import dp
from tb.env.gpu_endpoint import GpuEndpoint
from tb.models import install
from tb.models.native import GpuTable

MiB = 1 << 20
H2D = cudaMemcpyKind.cudaMemcpyHostToDevice
BAR1_BASE = {False: 0x9000_0000, True: 0x40_0000_0000}  # below and above 4 GiB
OTHER_BARS = {BAR0: 0x50_0000_0000, BAR3: 0x60_0000_0000}


class _World:
    """One GPU model, its CUDA runtime and nv-p2p, and its endpoint, whose sends are
    captured: what a test does to one world it does to the other."""

    def __init__(self, high: bool) -> None:
        self.gpu = Gpu(vram_size=256 * MiB, bar1_size=128 * MiB, bar1_driver_bytes=1 * MiB)
        self.gpu.bar1_base_provider = lambda: BAR1_BASE[high]
        self.rt, self.p2p = CudaRuntime(self.gpu), NvidiaP2P(self.gpu)
        self.ep = GpuEndpoint(self.gpu)
        self.gpu.clock = lambda: 0.0
        for slot, base in ((BAR1, BAR1_BASE[high]), *OTHER_BARS.items()):
            self.ep.bar[slot] = (base & 0xFFFF_FFFF) | (self.ep.bar[slot] & 0xF)
            self.ep.bar[slot + 1] = base >> 32
        self.sent: list[Tlp] = []

        async def capture(tlp: Tlp) -> None:
            self.sent.append(tlp)

        self.ep.upstream_tx_handler = capture
        self.ep.pcie_id = PcieId(3, 0, 0)
        self.tables: list = []  # (va, length, page table)
        self.buffers: list[tuple[int, int]] = []  # (pointer, bytes)

    def answer(self, tlp: Tlp) -> list[Tlp]:
        """What the endpoint sends for ``tlp``, received as the device hands it on."""
        self.sent = []
        coro = self.ep.upstream_recv(Tlp(tlp))
        try:
            coro.send(None)
        except StopIteration:
            pass
        else:
            raise AssertionError("the endpoint waited")
        return self.sent

    # what both worlds do, in the same order (each step the same on both)
    def malloc(self, n: int) -> int:
        ptr = self.rt.cudaMalloc(n)
        self.buffers.append((ptr, n))
        return ptr

    def fill(self, ptr: int, data: bytes) -> None:
        self.rt.cudaMemcpy(ptr, data, len(data), H2D)

    def pin(self, va: int, length: int) -> None:
        rc, pt = self.p2p.nvidia_p2p_get_pages(0, 0, va, length, lambda _d: None, None)
        if rc == 0:
            self.tables.append((va, length, pt))

    def unpin(self, k: int) -> None:
        va, _length, pt = self.tables.pop(k)
        assert self.p2p.nvidia_p2p_put_pages(0, 0, va, pt) == 0

    def free(self, k: int) -> None:
        self.rt.cudaFree(self.buffers.pop(k)[0])


def _request(rng: random.Random, world: _World) -> Tlp:
    """A random memory request at the GPU: mostly into pinned BAR1 pages, some into
    unmapped or reserved BAR1, past its end, into the other BARs; random lengths and
    byte enables, some poisoned."""
    base = world.gpu.bar1_bus_address
    where = rng.random()
    if where < 0.75 and world.tables:
        _va, length, pt = rng.choice(world.tables)
        page = rng.choice(pt.pages).physical_address
        addr = page + rng.randrange(0, GPU_PAGE_SIZE, 4)
    elif where < 0.85:
        addr = base + rng.randrange(0, world.gpu.bar1_size, 4)
    elif where < 0.9:
        addr = base + world.gpu.bar1_size - 4 * rng.randrange(1, 8)
    else:
        addr = rng.choice(list(OTHER_BARS.values())) + rng.randrange(0, 1 << 16, 4)
    in_page = 0x1000 - (addr & 0xFFF)
    cap = max(1, min(256, in_page // 4))  # (a crossing fails Tlp.check: never sent)
    length = min(cap, rng.choice([1, 2, 3, rng.randrange(1, cap + 1), cap]))
    write = rng.random() < 0.5
    tlp = Tlp()
    high = addr > 0xFFFF_FFFF
    if write:
        tlp.fmt_type = TlpType.MEM_WRITE_64 if high else TlpType.MEM_WRITE
        tlp.set_data(rng.randbytes(4 * length))
        tlp.ep = rng.random() < 0.05
    else:
        tlp.fmt_type = TlpType.MEM_READ_64 if high else TlpType.MEM_READ
        tlp.length = length
        tlp.tag = rng.randrange(256)
    tlp.address = addr
    tlp.requester_id = PcieId(1, 0, rng.randrange(8))
    tlp.tc = rng.randrange(8) if rng.random() < 0.2 else 0
    tlp.attr = rng.randrange(8) if rng.random() < 0.3 else 0
    if length == 1:
        tlp.first_be, tlp.last_be = rng.randrange(16) if rng.random() < 0.3 else 0xF, 0
    else:
        tlp.first_be = rng.randrange(1, 16) if rng.random() < 0.3 else 0xF
        tlp.last_be = rng.randrange(1, 16) if rng.random() < 0.3 else 0xF
    return tlp


def _pythons(world: _World, tlp: Tlp) -> bool:
    """Whether Python must answer ``tlp`` (the library must refuse it), from the model's
    own state: not BAR1, poisoned, a zero-length read, a 4 KiB crossing, past BAR1's
    end, an unmapped page, or a write to VRAM never written."""
    bar = world.ep.match_bar(tlp.address)
    if bar is None or bar[0] != BAR1:
        return True
    offset, nbytes = bar[1], tlp.length * 4
    if tlp.ep or tlp.first_be == 0 or nbytes > 0x1000 - (offset & 0xFFF):
        return True
    if offset + nbytes > world.gpu.bar1_size:
        return True
    hit = world.gpu.bar1_lookup(offset)
    if hit is None:
        return True
    vram_page = hit[0] // GPU_PAGE_SIZE
    return tlp.fmt_type in (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64) and vram_page not in dict(
        world.gpu.vram.backings()
    )


def _step(rng: random.Random, worlds: tuple[_World, _World]) -> None:
    """Something that changes the table or VRAM, done to both worlds."""
    what = rng.random()
    a = worlds[0]
    if what < 0.35 or not a.buffers:
        n = rng.choice([64 << 10, 256 << 10, 2 * MiB, 3 * MiB])
        ptrs = [w.malloc(n) for w in worlds]
        assert ptrs[0] == ptrs[1]
        if rng.random() < 0.7:
            data = rng.randbytes(rng.randrange(1, min(n, 200 << 10)))
            for w in worlds:
                w.fill(ptrs[0], data)
        length = n - n % GPU_PAGE_SIZE if ptrs[0] % GPU_PAGE_SIZE == 0 else 0
        if length:
            for w in worlds:
                w.pin(ptrs[0], length)
    elif what < 0.6 and a.tables:
        k = rng.randrange(len(a.tables))
        for w in worlds:
            w.unpin(k)
    elif what < 0.75:
        k = rng.randrange(len(a.buffers))
        for w in worlds:
            w.free(k)
    else:
        ptr, n = rng.choice(a.buffers)
        off = rng.randrange(0, n, 4)
        data = rng.randbytes(rng.randrange(1, min(8192, n - off) + 1))
        for w in worlds:
            w.fill(ptr + off, data)


def _stats(world: _World) -> dict:
    return {
        pid: (p.stats.reads, p.stats.read_bytes, p.stats.writes, p.stats.write_bytes)
        for pid, p in world.gpu.pins.items()
    }


def test_bar1_requests_as_the_gpu_endpoint_answers_them() -> None:
    install()
    lib = dp.library()
    out = ctypes.create_string_buffer(4096 + 1024 * 16)
    sizes = (ctypes.c_uint32 * 1024)()
    answered = refused = reads = split = 0
    for seed in range(10):
        rng = random.Random(seed)
        high = bool(seed & 1)
        worlds = (_World(high), _World(high))
        python, library = worlds
        table = GpuTable(lib, library.gpu)
        table.view(library.ep)
        library.gpu.attach_peer(table)
        for n in range(700):
            if n % 25 == 0:
                _step(rng, worlds)
            if n % 100 == 0:
                assert _stats(python) == _stats(library)
            tlp = _request(rng, python)
            mps = rng.randrange(6)
            python.ep.pcie_cap.max_payload_size = mps
            library.ep.pcie_cap.max_payload_size = mps
            must = _pythons(python, tlp)
            want = python.answer(tlp)
            raw = bytes(tlp.pack())
            got = lib.dp_gpu_request(table.g, raw, len(raw), mps, out, len(out), sizes)
            assert (got < 0) == must, f"{tlp!r}: library {got}, Python's: {must}"
            if got < 0:
                refused += 1
                theirs = library.answer(tlp)  # Python answers it in both worlds
                assert [t.pack() for t in theirs] == [t.pack() for t in want]
                continue
            answered += 1
            if tlp.fmt_type in (TlpType.MEM_READ, TlpType.MEM_READ_64):
                reads += 1
                split += got > 1
                assert got == len(want), f"{got} completions, Python {len(want)}: {tlp!r}"
                mine = out.raw[: sum(sizes[:got])]
                assert mine == b"".join(t.pack() for t in want), repr(tlp)
            else:
                assert got == 0 and not want
                offset = python.ep.match_bar(tlp.address)[1]
                assert python.gpu.bar1_read(offset & ~0xFFF, 4096) == library.gpu.bar1_read(
                    offset & ~0xFFF, 4096
                ), repr(tlp)
        assert _stats(python) == _stats(library)
        assert python.gpu.fault_log == library.gpu.fault_log
    assert answered > 3000 and refused > 3000 and reads > 1500 and split > 250, (
        answered,
        refused,
        reads,
        split,
    )
