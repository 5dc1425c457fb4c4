"""Device work in simulated time (cuda_model.streams, cuda_model.device): streams run in
order after their launch latency (cuda_model/probes/stream_timing.txt), events time them,
kernels reach registered memory through the bus with the shapes the PTX memory model and
the knobs give, and a failed request is a sticky error. Run on VirtualTime, no simulator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda_model import CudaError, CudaRuntime, CUresult, Gpu, cudaError, memops
from cuda_model.bus import Access, BusError
from cuda_model.device import KernelContext
from cuda_model.devtime import DeviceTimeError, VirtualTime
from cuda_model.hostreg import Registration
from cuda_model.runtime import cudaMemcpyKind
from cuda_model.streams import DeviceTiming, cudaStreamNonBlocking
from driver_model.host import HostMemory, UserProcess

from .ram import Ram

LAUNCH = DeviceTiming().kernel_launch_ns
OP = DeviceTiming().op_launch_ns
DEFAULT = cudaMemcpyKind.cudaMemcpyDefault
HOST_VA = 0x7F00_0000_1000
BUS = 0x40_0000_0000
PROBES = Path(__file__).resolve().parents[2] / "cuda_model" / "probes"


class FakeBus:
    """Records every request; each takes ``ns`` of simulated time; reads answer from a
    dict of bus bytes, or fail with ``fail`` (a completion status)."""

    def __init__(self, vt: VirtualTime, ns: float = 100.0, ram: Ram | None = None) -> None:
        self.vt = vt
        self.ns = ns
        self.log: list[tuple[float, str, int, int, Access]] = []
        self.mem: dict[int, int] = {}
        self.fail: str | None = None
        self.ram = ram  # host RAM the requests reach where they fall in it

    def _in_ram(self, addr: int, length: int) -> bool:
        r = self.ram
        return r is not None and r.base <= addr and addr + length <= r.base + len(r.mem)

    async def write(self, addr: int, data: bytes, access: Access) -> None:
        self.log.append((self.vt.now_ns(), "w", addr, len(data), access))
        if self._in_ram(addr, len(data)):
            self.ram.write(addr, data)
        for i, b in enumerate(data):
            self.mem[addr + i] = b
        await self.vt.sleep(self.ns)

    async def read(self, addr: int, length: int, access: Access) -> bytes:
        self.log.append((self.vt.now_ns(), "r", addr, length, access))
        await self.vt.sleep(self.ns)
        if self.fail:
            raise BusError(self.fail, addr)
        if self._in_ram(addr, length):
            return self.ram.read(addr, length)
        return bytes(self.mem.get(addr + i, 0) for i in range(length))

    async def flush(self, addr: int, access: Access) -> None:
        self.log.append((self.vt.now_ns(), "f", addr, 0, access))
        await self.vt.sleep(self.ns)
        if self.fail:
            raise BusError(self.fail, addr)


def rig(**kw):
    vt = VirtualTime()
    gpu = Gpu(vram_size=64 << 20)
    gpu.device_time = vt
    gpu.bus = FakeBus(vt)
    rt = CudaRuntime(gpu)
    return vt, gpu, rt


def register(rt: CudaRuntime, pages: list[int], size: int | None = None, **kw) -> int:
    rt.registered.add(Registration(HOST_VA, size or 4096 * len(pages), pages, name="mailbox", **kw))
    return HOST_VA


def test_kernels_run_in_order_after_their_launch_latency() -> None:
    vt, _gpu, rt = rig()
    starts: list[float] = []

    async def work(k: KernelContext, ns: float) -> None:
        starts.append(vt.now_ns())
        await k.nanosleep(ns)

    async def main() -> None:
        rt.cudaLaunchKernel(work, 1, 32, (3000.0,))
        rt.cudaLaunchKernel(work, 1, 32, (10.0,))
        assert rt.cudaStreamQuery(0) == cudaError.cudaErrorNotReady
        await rt.synchronize()
        assert rt.cudaStreamQuery(0) == cudaError.cudaSuccess

    vt.run(main())
    assert starts == [LAUNCH, LAUNCH + 3000.0 + LAUNCH]


def test_events_time_the_work_between_them() -> None:
    vt, gpu, rt = rig()
    a, b = rt.cudaEventCreate(), rt.cudaEventCreate()
    buf = rt.cudaMalloc(1 << 20)

    async def main() -> float:
        rt.cudaEventRecord(a)
        rt.cudaMemsetAsync(buf, 0x5A, 1 << 20)
        rt.cudaEventRecord(b)
        assert rt.cudaEventQuery(b) == cudaError.cudaErrorNotReady
        with pytest.raises(CudaError) as e:
            rt.cudaEventElapsedTime(a, b)
        assert e.value.code == cudaError.cudaErrorNotReady
        await rt.event_synchronize(b)
        assert rt.cudaEventQuery(b) == cudaError.cudaSuccess
        return rt.cudaEventElapsedTime(a, b)

    ms = vt.run(main())
    # the memset's launch, its 1 MiB at the local rate, the second record's launch
    want = OP + (1 << 20) / DeviceTiming().local_bytes_per_ns + OP
    assert ms == pytest.approx(want / 1e6)
    assert (gpu.read_va(buf, 1 << 20) == 0x5A).all()


def test_streams_overlap_unless_they_synchronise() -> None:
    vt, _gpu, rt = rig()
    spans: dict[str, tuple[float, float]] = {}

    async def work(k: KernelContext, tag: str) -> None:
        t0 = vt.now_ns()
        await k.nanosleep(20_000)
        spans[tag] = (t0, vt.now_ns())

    async def main() -> None:
        free = rt.cudaStreamCreateWithFlags(cudaStreamNonBlocking)
        blocking = rt.cudaStreamCreate()
        rt.launch(work, 1, 1, "legacy")
        rt.cudaLaunchKernel(work, 1, 1, ("free",), free)
        rt.cudaLaunchKernel(work, 1, 1, ("blocking",), blocking)
        await rt.synchronize()
        # an event orders two non-blocking streams
        other = rt.cudaStreamCreateWithFlags(cudaStreamNonBlocking)
        ev = rt.cudaEventCreate()
        rt.cudaLaunchKernel(work, 1, 1, ("first",), free)
        rt.cudaEventRecord(ev, free)
        rt.cudaStreamWaitEvent(other, ev)
        rt.cudaLaunchKernel(work, 1, 1, ("second",), other)
        await rt.synchronize()

    vt.run(main())
    assert spans["free"][0] < spans["legacy"][1], "a non-blocking stream runs beside stream 0"
    assert spans["blocking"][0] >= spans["legacy"][1], "a blocking stream waits for stream 0"
    assert spans["second"][0] >= spans["first"][1], "cudaStreamWaitEvent orders them"


def test_kernel_stores_and_loads_reach_registered_memory_with_their_shapes() -> None:
    vt, gpu, rt = rig()
    bus: FakeBus = gpu.bus
    # two pages, not contiguous on the bus
    reg = register(rt, [BUS + 0x1000, BUS + 0x9000])

    async def kernel(k: KernelContext) -> None:
        await k.st32(reg + 0x10, 0x11223344)
        await k.st64(reg + 0x18, 0x0102030405060708)
        await k.store(reg + 0xFF0, bytes(range(32)))  # across the page boundary
        await k.threadfence_system()
        assert await k.ld32(reg + 0x10) == 0x11223344

    async def main() -> None:
        rt.launch(kernel, 1, 32)
        await rt.synchronize()

    vt.run(main())
    shapes = [(op, addr - BUS, n) for _, op, addr, n, _ in bus.log]
    assert shapes[:2] == [("w", 0x1010, 4), ("w", 0x1018, 8)]
    # plain stores without coalescing: one DW each, split where the pages split
    assert shapes[2:10] == [("w", 0x1FF0 + 4 * i, 4) for i in range(4)] + [
        ("w", 0x9000 + 4 * i, 4) for i in range(4)
    ]
    assert shapes[10] == ("r", 0x1010, 4)
    assert all(a.who == "kernel kernel" and a.range == "mailbox" for *_, a in bus.log)
    assert not any(a.relaxed for *_, a in bus.log)
    got = bytes(bus.mem[BUS + 0x9000 + i] for i in range(16))
    assert got == bytes(range(16, 32))


def test_coalescing_and_widened_loads_are_knobs() -> None:
    vt, gpu, rt = rig()
    bus: FakeBus = gpu.bus
    reg = register(rt, [BUS, BUS + 0x1000])
    rt.kernel_coalesce = 128
    rt.kernel_widen_loads = 32

    async def kernel(k: KernelContext) -> None:
        await k.store(reg, bytes(256))
        await k.store(reg + 0x320 + 8, bytes(256))  # unaligned: cut at the lines
        await k.st32(reg + 0x200, 1)  # mmio: never combined
        await k.ld32(reg + 0x44)

    async def main() -> None:
        rt.launch(kernel, 1, 32)
        await rt.synchronize()

    vt.run(main())
    shapes = [(op, addr - BUS, n) for _, op, addr, n, _ in bus.log]
    # the kernel's end flushes its writes: a zero-length read where the last one went
    assert shapes == [
        ("w", 0, 128),
        ("w", 128, 128),
        ("w", 0x328, 0x58),
        ("w", 0x380, 128),
        ("w", 0x400, 0x28),
        ("w", 0x200, 4),
        ("r", 0x40, 32),
        ("f", 0x200, 0),
    ]


def test_a_failed_load_is_a_sticky_kernel_error() -> None:
    vt, gpu, rt = rig()
    gpu.bus.fail = "UR"
    reg = register(rt, [BUS])
    ran_after: list[bool] = []

    async def kernel(k: KernelContext) -> None:
        await k.ld32(reg)

    async def later(k: KernelContext) -> None:
        ran_after.append(True)

    async def main() -> None:
        rt.launch(kernel, 1, 1)
        rt.launch(later, 1, 1)
        with pytest.raises(CudaError) as e:
            await rt.synchronize()
        assert e.value.code == cudaError.cudaErrorIllegalAddress and "UR" in str(e.value)

    vt.run(main())
    assert not ran_after, "nothing runs after a sticky error"
    with pytest.raises(CudaError):
        rt.cudaMalloc(4096)
    assert rt.cudaGetLastError() == cudaError.cudaErrorIllegalAddress


@pytest.mark.parametrize(
    "where, why",
    [(0x10, "read-only"), (0x2000, "past the registration"), (None, "unregistered")],
)
def test_a_store_outside_what_is_registered_is_an_illegal_address(where, why) -> None:
    vt, gpu, rt = rig()
    reg = register(rt, [BUS, BUS + 0x1000], size=0x2000, read_only=why == "read-only")
    ptr = 0x5000_0000 if where is None else reg + where - (4 if where == 0x2000 else 0)

    async def kernel(k: KernelContext) -> None:
        await k.st64(ptr, 7)

    async def main() -> None:
        rt.launch(kernel, 1, 1)
        await rt.synchronize()

    with pytest.raises(CudaError) as e:
        vt.run(main())
    assert e.value.code == cudaError.cudaErrorIllegalAddress, why
    assert gpu.bus.log == [], "nothing reached the bus"


def test_copy_engine_between_device_and_registered_memory() -> None:
    vt, gpu, rt = rig()
    bus: FakeBus = gpu.bus
    reg = register(rt, [BUS, BUS + 0x1000, BUS + 0x2000])
    dev = rt.cudaMalloc(0x3000)
    data = np.random.default_rng(1).integers(0, 256, 0x2800, dtype=np.uint8)
    gpu.write_va(dev, data)
    back = rt.cudaMalloc(0x3000)

    async def main() -> None:
        s = rt.cudaStreamCreate()
        rt.cudaMemcpyAsync(reg + 0x100, dev, 0x2800, DEFAULT, s)
        rt.cudaMemcpyAsync(back, reg + 0x100, 0x2800, DEFAULT, s)
        await rt.stream_synchronize(s)

    vt.run(main())
    assert (gpu.read_va(back, 0x2800) == data).all()
    writes = [(a - BUS, n) for _, op, a, n, _ in bus.log if op == "w"]
    assert writes == [(0x100, 0x2800)], "one contiguous piece: the endpoint splits by MPS"
    ops = [op for _, op, *_ in bus.log]
    assert ops[ops.index("w") + 1] == "f", "the copy ends once its writes have landed"
    assert {a.who for *_, a in bus.log} == {"cudaMemcpyAsync D2R", "cudaMemcpyAsync R2D"}
    with pytest.raises(CudaError):  # off the end of the registration
        rt.cudaMemcpyAsync(reg + 0x2F00, dev, 0x200, DEFAULT)


def test_host_alloc_memory_is_reached_over_the_bus() -> None:
    """cudaHostAlloc memory is host RAM the GPU reaches as it reaches registered memory
    (measured on an H200, cuda_model/probes/host_alloc.txt: a stream write, a kernel's
    stores and cudaMemsetAsync into it all land, seen by the host): each is a request
    to its bus addresses, ended by a flush, and the host's view holds the result."""
    vt, gpu, rt = rig()
    ram = Ram(BUS, 1 << 20)
    rt.process = UserProcess(HostMemory(ram, BUS, 1 << 20, 3))
    bus: FakeBus = gpu.bus
    bus.ram = ram
    h = rt.cudaHostAlloc(2 * 4096)
    view = rt.host_buffer(h)
    view[:] = b"\x5a" * len(view)
    (piece,) = rt.registered.bus_pieces(h, 2 * 4096, write=True)
    dev = rt.cudaMalloc(4096)
    gpu.write_va(dev, np.arange(256, dtype=np.uint8))

    async def kernel(k: KernelContext) -> None:
        await k.st32(h + 0x10, 0x11223344)

    async def main() -> None:
        rt.cuStreamWriteValue32(0, h, 0xC0FFEE)
        rt.launch(kernel, 1, 32)
        rt.cudaMemsetAsync(h + 0x1000, 0, 0x100)
        rt.cudaMemcpyAsync(h + 0x1800, dev, 256, DEFAULT)
        await rt.synchronize()

    vt.run(main())
    assert bytes(view[:4]) == (0xC0FFEE).to_bytes(4, "little")
    assert bytes(view[4:8]) == b"\x5a" * 4
    assert bytes(view[0x10:0x14]) == (0x11223344).to_bytes(4, "little")
    assert bytes(view[0x1000:0x1100]) == bytes(0x100) and view[0x1100] == 0x5A
    assert bytes(view[0x1800:0x1900]) == bytes(range(256))
    writes = [(addr - piece.addr, n, a.who) for _, op, addr, n, a in bus.log if op == "w"]
    assert writes == [
        (0, 4, "cuStreamWriteValue32"),
        (0x10, 4, "kernel kernel"),
        (0x1000, 0x100, "cudaMemsetAsync"),
        (0x1800, 256, "cudaMemcpyAsync D2R"),
    ]
    assert all(a.range == "cudaHostAlloc" for *_, a in bus.log)
    assert [op for _, op, *_ in bus.log].count("f") == 4, "each lands before it is done"


def test_without_simulated_time_local_kernels_run_at_synchronisation() -> None:
    gpu = Gpu(vram_size=64 << 20)
    rt = CudaRuntime(gpu)
    buf = rt.cudaMalloc(4096)

    async def fill(k: KernelContext, value: int) -> None:
        await k.store(buf, np.full(1024, value, dtype="<u4"))

    rt.launch(fill, 1, 256, 7)
    assert gpu.read_va(buf, 4)[0] == 0 and rt.pending == 1  # not yet: no time
    rt.cudaDeviceSynchronize()
    assert (gpu.read_va(buf, 4096).view("<u4") == 7).all()
    # one that needs the bus cannot run in zero time: a named error, not a hang
    rt.registered.add(Registration(HOST_VA, 4096, [BUS], name="bar"))

    async def ring(k: KernelContext) -> None:
        await k.st32(HOST_VA, 1)

    rt.launch(ring, 1, 1)
    with pytest.raises(CudaError):
        rt.cudaDeviceSynchronize()


def test_a_synchronous_call_while_work_runs_in_simulated_time_is_named() -> None:
    vt, _gpu, rt = rig()

    async def slow(k: KernelContext) -> None:
        await k.nanosleep(50_000)

    async def main() -> None:
        rt.launch(slow, 1, 1)
        await vt.sleep(LAUNCH + 100)
        with pytest.raises(DeviceTimeError, match="kernel slow"):
            rt.cudaDeviceSynchronize()
        await rt.synchronize()

    vt.run(main())


def test_an_awaited_synchronisation_is_bounded() -> None:
    vt, _gpu, rt = rig()
    rt.sync_limit_ns = 1_000_000
    flag = rt.cudaMalloc(4096)

    async def spin(k: KernelContext) -> None:
        while await k.ld32(flag) == 0:  # nobody sets it
            await k.nanosleep(1000)

    async def main() -> None:
        rt.launch(spin, 1, 1)
        with pytest.raises(DeviceTimeError, match="still not done"):
            await rt.synchronize()

    vt.run(main(), limit_ns=2_000_000)


# --- stream memory operations ---------------------------------------------------------
def test_write_value_rings_a_doorbell_after_the_kernel_before_it() -> None:
    """cuStreamWriteValue32 (flags 0) reaches registered memory after the stream's kernel
    (GPUDirect Async's doorbell); NO_MEMORY_BARRIER, other flags, unaligned and unknown
    addresses are CUDA_ERROR_INVALID_VALUE (h200-host-register.txt, the driver API)."""
    vt, gpu, rt = rig()
    bus: FakeBus = gpu.bus
    reg = register(rt, [BUS])
    buf = rt.cudaMalloc(4096)
    order: list[str] = []

    async def produce(k: KernelContext) -> None:
        await k.nanosleep(2000)
        await k.st32(buf, 0xDA7A, mmio=False)
        order.append("kernel")

    async def main() -> None:
        rt.launch(produce, 1, 32)
        rt.cuStreamWriteValue32(0, reg + 8, 0xD00B, 0)
        rt.cuStreamWriteValue64(0, buf + 8, 0x1_0000_0002, 0)
        await rt.synchronize()

    vt.run(main())
    assert order == ["kernel"]
    (t, op, addr, n, access) = bus.log[0]
    assert (op, addr, n, access.who) == ("w", BUS + 8, 4, "cuStreamWriteValue32")
    assert t >= 2000 + LAUNCH, "the doorbell comes after the kernel"
    assert int(gpu.read_va(buf + 8, 8).view("<u8")[0]) == 0x1_0000_0002
    for args in ((0, reg, 1, 1), (0, reg + 2, 1, 0), (0, 0x1234_0000, 1, 0), (0, reg, 1, 4)):
        with pytest.raises(CudaError) as e:
            rt.cuStreamWriteValue32(*args)
        assert e.value.code == 1, args


@pytest.mark.parametrize(
    "cond, start, mid, value, final",
    [
        (0, 5, 6, 7, 7),  # GEQ: 7 or more
        (0, 0xFFFF_FFF0, 0xF, 0x10, 0x10),  # GEQ is cyclic: 0xfffffff0 is before 0x10
        (1, 5, 8, 9, 9),  # EQ
        (2, 0x10, 0x3, 0x4, 0x6),  # AND: a common bit
        (3, 0xFFFF_FFFF, 0xFFFF_FFF8, 0xFFFF_FFF7, 0xFFFF_FFF0),  # NOR: a bit clear in both
    ],
)
def test_wait_value_holds_the_stream_until_its_condition(cond, start, mid, value, final) -> None:
    vt, gpu, rt = rig()
    flag = rt.cudaMalloc(4096)
    gpu.write_va(flag, np.array([start], dtype="<u4"))
    ran: list[float] = []

    async def after(k: KernelContext) -> None:
        ran.append(vt.now_ns())

    async def setter() -> None:
        await vt.sleep(50_000)
        gpu.write_va(flag, np.array([mid], dtype="<u4"))
        await vt.sleep(50_000)
        gpu.write_va(flag, np.array([final], dtype="<u4"))

    async def main() -> None:
        rt.cuStreamWaitValue32(0, flag, value, cond)
        rt.launch(after, 1, 1)
        vt.spawn(setter())
        await rt.synchronize()

    vt.run(main())
    assert ran and ran[0] >= 100_000, f"the kernel ran at {ran}, before the flag was set"


def test_wait_value_polls_registered_memory_over_the_bus() -> None:
    """A flag in registered memory (a card writes it) is polled with bus reads; the FLUSH
    flag needs CAN_FLUSH_REMOTE_WRITES, 0 on Hopper (measured), so it is refused."""
    vt, gpu, rt = rig()
    bus: FakeBus = gpu.bus
    reg = register(rt, [BUS])

    async def card() -> None:
        await vt.sleep(20_000)
        bus.mem.update({BUS + 0x40 + i: b for i, b in enumerate((1).to_bytes(4, "little"))})

    async def main() -> None:
        rt.cuStreamWaitValue32(0, reg + 0x40, 1, 1)
        vt.spawn(card())
        await rt.synchronize()

    vt.run(main())
    polls = [e for e in bus.log if e[1] == "r"]
    assert len(polls) >= 10 and all(e[2] == BUS + 0x40 and e[3] == 4 for e in polls)
    assert polls[0][4].who == "cuStreamWaitValue32"


@pytest.mark.parametrize(
    "flags,code",
    [
        (0 | (1 << 30), CUresult.CUDA_ERROR_NOT_SUPPORTED),
        (1 | (1 << 30), CUresult.CUDA_ERROR_NOT_SUPPORTED),
        (1 << 29, CUresult.CUDA_ERROR_INVALID_VALUE),
    ],
)
def test_wait_value_flags_are_refused_as_the_h200_does(flags, code) -> None:
    """cuda_model/probes/queued_work.txt: CU_STREAM_WAIT_VALUE_FLUSH is 801
    CUDA_ERROR_NOT_SUPPORTED (no CAN_FLUSH_REMOTE_WRITES), an unknown flag 1."""
    text = (PROBES / "queued_work.txt").read_text()
    assert f"CU_STREAM_WAIT_VALUE_FLUSH) -> {int(CUresult.CUDA_ERROR_NOT_SUPPORTED)} " in text
    assert "1u << 29)" in text and "-> 1 CUDA_ERROR_INVALID_VALUE" in text
    _vt, _gpu, rt = rig()
    dev = rt.cudaMalloc(4096)
    with pytest.raises(CudaError) as e:
        rt.cuStreamWaitValue32(0, dev, 0, flags)
    assert e.value.code == code
    assert rt.pending == 0, "nothing was queued"


def process_rig():
    """The rig with a process: its RAM is what the bus reaches."""
    vt, gpu, rt = rig()
    ram = Ram(BUS, 1 << 20)
    host = HostMemory(ram, BUS, 1 << 20, 3)
    rt.process = UserProcess(host)
    gpu.bus.ram = ram
    return vt, gpu, rt, ram


def test_unregister_waits_for_the_work_queued_on_its_pages() -> None:
    """cuda_model/probes/queued_work.txt: cudaHostUnregister returns once the stream's
    wait on those pages is satisfied and the write and memset behind it have landed.
    Awaited, the model unregisters after every queued operation has run; no request
    reaches the frames afterwards, so a mapping that reuses a frame keeps its bytes. The
    synchronous form, with work queued in simulated time, is a named error that leaves
    the registration as it was."""
    text = (PROBES / "queued_work.txt").read_text()
    assert "unregister returned after the flag was set (>= 400 ms): 1" in text
    assert "write landed: 1, memset landed: 1" in text
    vt, gpu, rt, ram = process_rig()
    bus: FakeBus = gpu.bus
    p = rt.process.malloc(3 * 4096)
    page = p & ~4095
    rt.cudaHostRegister(page, 2 * 4096, 0)
    dev = rt.cudaMalloc(4096)
    gpu.write_va(dev, np.full(4096, 0x77, dtype=np.uint8))
    done_at: list[float] = []

    async def card() -> None:  # sets the flag the stream waits on, 30 us on
        await vt.sleep(30_000)
        rt.process.write(page, (1).to_bytes(4, "little"))

    async def main() -> None:
        rt.cuStreamWaitValue32(0, page, 1, 1)
        rt.cuStreamWriteValue32(0, page + 0x100, 0xABCD)
        rt.cudaMemsetAsync(page + 0x1000, 0x5A, 0x100)
        rt.cudaMemcpyAsync(page + 0x1800, dev, 0x100, DEFAULT)
        with pytest.raises(DeviceTimeError, match="still queued run in simulated time"):
            rt.cudaHostUnregister(page)
        assert rt.registered.find(page) is not None, "the refused call changed nothing"
        vt.spawn(card())
        await rt.host_unregister(page)
        done_at.append(vt.now_ns())

    vt.run(main())
    assert done_at[0] >= 30_000, "unregistered before the wait's flag came"
    assert rt.registered.find(page) is None and rt.pending == 0
    assert rt.process.read(page + 0x100, 4) == (0xABCD).to_bytes(4, "little")
    assert rt.process.read(page + 0x1000, 0x100) == b"\x5a" * 0x100
    assert rt.process.read(page + 0x1800, 0x100) == b"\x77" * 0x100
    last = max(t for t, *_ in bus.log)
    assert last < done_at[0], "a request after the registration went"
    # the frames go back to the process's allocator and a new mapping may take them
    frames = {addr & ~4095 for _, op, addr, _n, _a in bus.log if op == "w"}
    rt.process.free(p)
    q = rt.process.malloc(3 * 4096)
    rt.process.write(q, b"\x11" * 3 * 4096)
    before = bytes(ram.read(min(frames), 4096))

    async def later() -> None:
        await vt.sleep(100_000)

    vt.run(later())
    assert bytes(ram.read(min(frames), 4096)) == before, "a queued request wrote a freed frame"


def test_a_sticky_error_is_reported_once_a_running_wait_ends() -> None:
    """cuda_model/probes/queued_work.txt: a kernel faults on one stream while a
    cuStreamWaitValue32 on another waits on a host flag; the faulting stream's
    synchronisation returns cudaErrorIllegalAddress only after the flag is set, and the
    wait polled on until then. Nothing that had not started runs after the fault."""
    text = (PROBES / "queued_work.txt").read_text()
    assert "the faulting stream's sync returned after the flag was set (>= 2500 ms): 1" in text
    vt, gpu, rt = rig()
    bus: FakeBus = gpu.bus
    reg = register(rt, [BUS])
    s1 = rt.cudaStreamCreateWithFlags(cudaStreamNonBlocking)
    s2 = rt.cudaStreamCreateWithFlags(cudaStreamNonBlocking)
    flag_at = 50_000.0
    raised_at: list[float] = []
    later: list[bool] = []

    async def fault(k: KernelContext) -> None:
        bus.fail = "UR"
        try:
            await k.ld32(reg + 0x800)
        finally:
            bus.fail = None

    async def after(k: KernelContext) -> None:
        later.append(True)

    async def card() -> None:
        await vt.sleep(flag_at)
        bus.mem.update({BUS + 0x40 + i: b for i, b in enumerate((1).to_bytes(4, "little"))})

    async def main() -> None:
        rt.cuStreamWaitValue32(s2, reg + 0x40, 1, 1)
        vt.spawn(card())
        await vt.sleep(10_000)
        rt.cudaLaunchKernel(fault, 1, 1, (), stream=s1)
        rt.cudaLaunchKernel(after, 1, 1, (), stream=s1)
        with pytest.raises(CudaError) as e:
            await rt.stream_synchronize(s1)
        raised_at.append(vt.now_ns())
        assert e.value.code == cudaError.cudaErrorIllegalAddress

    vt.run(main())
    assert raised_at[0] >= flag_at, "the error came before the other stream's wait ended"
    polls = [t for t, op, addr, *_ in bus.log if op == "r" and addr == BUS + 0x40]
    assert polls[-1] >= flag_at, "the wait stopped polling before its value came"
    last = flag_at + memops.poll_ns + 2 * bus.ns  # the poll that finds the value
    assert max(t for t, *_ in bus.log) <= last, "requests after the wait ended"
    assert not later, "an operation started after the fault"


def test_writes_to_a_device_bar_are_not_flushed_by_a_read() -> None:
    """A kernel's end (and a copy's) flushes its writes to host memory with a zero-length
    read; writes to a device's BAR (IoMemory) are left to PCIe ordering, since a read of
    a device register may have side effects (a FIFO that pops)."""
    vt, gpu, rt = rig()
    bus: FakeBus = gpu.bus
    rt.registered.add(Registration(HOST_VA, 4096, [BUS], io=True, name="card"))
    dev = rt.cudaMalloc(4096)

    async def ring(k: KernelContext) -> None:
        await k.st32(HOST_VA + 8, 1)

    async def main() -> None:
        rt.launch(ring, 1, 1)
        rt.cudaMemcpyAsync(HOST_VA + 64, dev, 256, DEFAULT)
        rt.cuStreamWriteValue32(0, HOST_VA + 4, 2)
        await rt.synchronize()

    vt.run(main())
    assert [op for _, op, *_ in bus.log] == ["w", "w", "w"]
