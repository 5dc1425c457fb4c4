"""The guest GPU's CUDA commands (tb/guest/gpu.py) against the CUDA model in device time
(cuda_model.devtime.VirtualTime), without a guest: streams and events, stream memory
operations, kernels launched by name, pointer and device queries, and the rule that a
command waiting on the GPU's work holds neither the ring nor the commands after it."""

from __future__ import annotations

import errno
import struct

import numpy as np

from cuda_model import CudaRuntime, Gpu, cudaError
from cuda_model.devtime import VirtualTime
from cuda_model.kernels import surface_word
from tb.guest.gpu import (
    CONTROL_RUN,
    ENTRY,
    ENTRY_SIZE,
    FLAG_DONE,
    MSI_CAP,
    REG_CONTROL,
    REG_DOORBELL,
    REG_RING_BASE,
    REG_RING_ENTRIES,
    Cmd,
    GuestGpu,
)

from .guestfakes import GuestRam

RAM_BASE = 0x1000_0000
RING = RAM_BASE + 0x1000
BUF = RAM_BASE + 0x10000
ENTRIES = 16


def now(coro):
    """Run a coroutine that never waits (a register access)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("it waited")


class Rig:
    """The device on a virtual clock; commands posted one batch at a time."""

    def __init__(self) -> None:
        self.vt = VirtualTime()
        self.gpu = Gpu(vram_size=64 << 20)
        self.gpu.device_time = self.vt
        self.dev = GuestGpu(
            lambda: CudaRuntime(self.gpu), self.gpu.vram.size, lambda: (0, 0), self.vt.spawn
        )
        self.ram = GuestRam(RAM_BASE, 1 << 20)
        self.dev.mem = self.ram
        self.dev.msi = lambda data: None
        self.next = 0
        now(self.dev.config_write(0x04, 2, 0x6))
        now(self.dev.config_write(MSI_CAP + 2, 2, 1))
        for off, value in (
            (REG_RING_BASE, RING),
            (REG_RING_BASE + 4, 0),
            (REG_RING_ENTRIES, ENTRIES),
            (REG_CONTROL, CONTROL_RUN),
        ):
            now(self.dev.bar_write(0, off, value.to_bytes(4, "little")))
        self.ctx = self.call(Cmd.CTX_CREATE)

    def post(self, opcode: Cmd, *args: int, context: int | None = None) -> int:
        """Write one entry and ring the doorbell; its slot."""
        slot = RING + (self.next % ENTRIES) * ENTRY_SIZE
        ctx = self.ctx if context is None and opcode is not Cmd.CTX_CREATE else context or 0
        self.ram.write(slot, ENTRY.pack(opcode, ctx, *[*args, 0, 0, 0, 0, 0][:5], -1, 0, 0))
        self.next += 1
        now(self.dev.bar_write(0, REG_DOORBELL, self.next.to_bytes(4, "little")))
        return slot

    def run(self, ns: float) -> None:
        """Let ``ns`` of device time pass."""
        t = self.vt.now_ns() + ns

        async def sleeper() -> None:
            await self.vt.sleep(ns)

        task = self.vt.spawn(sleeper())
        self.vt.advance(t + 1, until=lambda: task.finished)

    def wait(self, slot: int) -> tuple[int, int]:
        """Run until the entry is answered (bounded); its (status, result)."""
        self.vt.advance(self.vt.now_ns() + 50_000_000, until=lambda: self.answer(slot) is not None)
        got = self.answer(slot)
        assert got is not None, "never answered"
        return got

    def answer(self, slot: int) -> tuple[int, int, int] | None:
        """(status, result) once done, else None."""
        status, flags, result = ENTRY.unpack(self.ram.read(slot, ENTRY_SIZE))[7:]
        return (status, result) if flags & FLAG_DONE else None

    def call(self, opcode: Cmd, *args: int, want: int = 0) -> int:
        got = self.wait(self.post(opcode, *args))
        assert got[0] == want, f"{opcode.name}: status {got[0]}, wanted {want}"
        return got[1]

    def read(self, ptr: int, n: int) -> bytes:
        self.call(Cmd.MEMCPY_DTOH, BUF, ptr, n, 0)
        return self.ram.read(BUF, n)


def test_a_stream_wait_holds_neither_the_ring_nor_later_commands() -> None:
    """cuStreamWaitValue32 on a stream, work behind it, and a synchronisation of that
    stream: the synchronisation stays pending while later commands run and answer;
    the value written from another stream releases the wait, then the work runs and
    the synchronisation completes."""
    r = Rig()
    flag = r.call(Cmd.MEM_ALLOC, 4096)
    data = r.call(Cmd.MEM_ALLOC, 4096)
    r.call(Cmd.MEMSET, flag, 0, 4096, 0)
    s = r.call(Cmd.STREAM_CREATE, 1)  # non-blocking
    r.call(Cmd.WAIT_VALUE, s, flag, 7, 0, 4)  # GEQ 7
    r.call(Cmd.MEMSET, data, 0xAB, 256, s)
    sync = r.post(Cmd.STREAM_SYNCHRONIZE, s)
    r.run(100_000)
    assert r.answer(sync) is None  # waiting, as the GPU would
    assert r.call(Cmd.STREAM_QUERY, s, want=cudaError.cudaErrorNotReady) == 0
    other = r.call(Cmd.STREAM_CREATE, 1)
    assert r.read(data, 4) == bytes(4)  # (the legacy stream does not wait for s)
    r.call(Cmd.WRITE_VALUE, other, flag, 7, 0, 4)
    assert r.wait(sync) == (0, 0)
    assert r.read(data, 256) == b"\xab" * 256
    r.call(Cmd.STREAM_QUERY, s)
    assert not r.dev.busy


def test_fill_surface_by_name_with_its_parameter_layout() -> None:
    """KERNEL_LOOKUP gives the kernel and its parameters' sizes; LAUNCH unpacks the
    arguments by them and runs the model's kernel on the stream."""
    r = Rig()
    w = h = 32
    out = r.call(Cmd.MEM_ALLOC, w * h * 4)
    name = b"_Z12fill_surfacePjj"  # the C++ name finds the same kernel
    r.ram.write(BUF, name)
    kernel = r.call(Cmd.KERNEL_LOOKUP, BUF, len(name))
    assert struct.unpack("<3I", r.ram.read(BUF, 12)) == (2, 8, 4)
    params = BUF + 0x100
    r.ram.write(params, struct.pack("<IIQI", 12, 0, out, 0x1234))
    r.call(Cmd.LAUNCH, kernel, w // 16 | (h // 16) << 32, 1 | 16 << 32, 16 | 1 << 32, params)
    words = np.frombuffer(r.read(out, w * h * 4), dtype="<u4").reshape(h, w)
    assert words[3, 5] == surface_word(5, 3, 0x1234)
    assert words[31, 31] == surface_word(31, 31, 0x1234)


def test_an_unknown_kernel_and_bad_launches_are_refused() -> None:
    r = Rig()
    r.ram.write(BUF, b"no_such_kernel")
    r.call(Cmd.KERNEL_LOOKUP, BUF, 14, want=cudaError.cudaErrorInvalidDeviceFunction)
    r.call(Cmd.KERNEL_LOOKUP, BUF, 0, want=-errno.EINVAL)
    r.ram.write(BUF, struct.pack("<II", 4, 0))  # too few parameter bytes
    r.call(
        Cmd.LAUNCH,
        0,
        1 | 1 << 32,
        1 | 16 << 32,
        16 | 1 << 32,
        BUF,
        want=cudaError.cudaErrorInvalidValue,
    )
    r.call(
        Cmd.LAUNCH,
        99,
        1 | 1 << 32,
        1 | 1 << 32,
        1 | 1 << 32,
        BUF,
        want=cudaError.cudaErrorInvalidDeviceFunction,
    )


def test_events_time_the_work_between_them() -> None:
    r = Rig()
    ptr = r.call(Cmd.MEM_ALLOC, 8 << 20)
    a, b = r.call(Cmd.EVENT_CREATE, 0), r.call(Cmd.EVENT_CREATE, 0)
    r.call(Cmd.EVENT_RECORD, a, 0)
    r.call(Cmd.MEMSET, ptr, 1, 8 << 20, 0)
    r.call(Cmd.EVENT_RECORD, b, 0)
    r.call(Cmd.EVENT_SYNCHRONIZE, b)
    r.call(Cmd.EVENT_QUERY, b)
    ms = struct.unpack("<f", struct.pack("<I", r.call(Cmd.EVENT_ELAPSED, a, b)))[0]
    assert 0.008 < ms < 0.02  # 8 MiB at the model's 1000 B/ns, and an op's launch
    r.call(Cmd.EVENT_DESTROY, a)
    r.call(Cmd.EVENT_RECORD, a, 0, want=cudaError.cudaErrorInvalidResourceHandle)


def test_pointer_and_device_queries() -> None:
    r = Rig()
    ptr = r.call(Cmd.MEM_ALLOC, 4096)
    assert r.call(Cmd.POINTER_GET, 6, ptr, 0) == 0  # SYNC_MEMOPS
    r.call(Cmd.POINTER_SET, 6, ptr, 1)
    assert r.call(Cmd.POINTER_GET, 6, ptr, 0) == 1
    assert r.call(Cmd.POINTER_GET, 5, ptr, 0) == 0  # P2P_TOKENS: p2pToken
    assert r.call(Cmd.POINTER_GET, 5, ptr, 2, want=-errno.EINVAL) == 0
    r.call(Cmd.POINTER_GET, 6, 0x1000, 0, want=1)  # not CUDA memory
    assert r.call(Cmd.DEVICE_ATTRIBUTE, 16, 0) == 132  # SMs
    assert r.call(Cmd.DEVICE_ATTRIBUTE, 116, 1) == 1  # GPUDirect RDMA
    free = r.call(Cmd.MEM_GET_INFO)
    r.call(Cmd.MEM_ALLOC, 2 << 20)
    assert r.call(Cmd.MEM_GET_INFO) == free - (2 << 20)


def test_copies_on_streams_keep_stream_order() -> None:
    """A host-to-device copy on a stream lands after the wait before it; the copy back
    on that stream waits for it too; a copy between device buffers does as well."""
    r = Rig()
    flag, a, b = (r.call(Cmd.MEM_ALLOC, 4096) for _ in range(3))
    r.call(Cmd.MEMSET, flag, 0, 4, 0)
    s = r.call(Cmd.STREAM_CREATE, 1)
    r.call(Cmd.WAIT_VALUE, s, flag, 1, 0, 4)
    r.ram.write(BUF, b"peer-to-peer")
    r.call(Cmd.MEMCPY_HTOD, a, BUF, 12, s)  # staged now, lands later
    r.ram.write(BUF, bytes(12))
    r.call(Cmd.MEMCPY_DTOD, b, a, 12, s)
    back = r.post(Cmd.MEMCPY_DTOH, BUF + 64, b, 12, s)
    r.run(50_000)
    assert r.answer(back) is None
    r.call(Cmd.WRITE_VALUE, 0, flag, 1, 0, 4)
    assert r.wait(back) == (0, 0)
    assert r.ram.read(BUF + 64, 12) == b"peer-to-peer"


def test_each_command_is_a_named_record_for_the_trace_and_timeline() -> None:
    """Every command the device answers is a ``gpu`` record (the TLP trace's events):
    taken and answered times, the CUDA call it serves and what about (a kernel by name,
    a copy's bytes), its context and status; the Perfetto timeline puts the commands on
    a track per context, a command that waited spanning the time it waited."""
    from tb.debug import perfetto

    from .test_unit_perfetto import check_trace_event_format

    r = Rig()
    records: list[dict] = []
    r.dev.clock = lambda: int(r.vt.now_ns())
    r.dev.on_command = records.append
    flag = r.call(Cmd.MEM_ALLOC, 4096)
    out = r.call(Cmd.MEM_ALLOC, 32 * 32 * 4)
    r.call(Cmd.MEMSET, flag, 0, 4096, 0)
    name = b"fill_surface"
    r.ram.write(BUF, name)
    kernel = r.call(Cmd.KERNEL_LOOKUP, BUF, len(name))
    r.ram.write(BUF + 0x100, struct.pack("<IIQI", 12, 0, out, 7))
    r.call(Cmd.LAUNCH, kernel, 2 | 2 << 32, 1 | 16 << 32, 16 | 1 << 32, BUF + 0x100)
    s = r.call(Cmd.STREAM_CREATE, 1)
    r.call(Cmd.WAIT_VALUE, s, flag, 1, 0, 4)
    sync = r.post(Cmd.STREAM_SYNCHRONIZE, s)
    r.run(50_000)
    r.call(Cmd.WRITE_VALUE, 0, flag, 1, 0, 4)
    r.wait(sync)
    r.call(Cmd.MEM_FREE, 0xDEAD, want=cudaError.cudaErrorInvalidValue)
    assert [x["cmd"] for x in records[:3]] == ["MEM_ALLOC", "MEM_ALLOC", "MEMSET"]
    assert records[0]["call"] == "cudaMalloc" and records[0]["detail"] == "4096 B"
    launch = next(x for x in records if x["cmd"] == "LAUNCH")
    assert launch["call"] == "cudaLaunchKernel"
    assert launch["detail"].startswith("fill_surface<<<(2, 2, 1), (16, 16, 1)>>>"), launch
    waited = next(x for x in records if x["cmd"] == "STREAM_SYNCHRONIZE")
    assert waited["t"] - waited["start"] >= 50_000  # it waited for the value
    assert records[-1]["status"] == cudaError.cudaErrorInvalidValue
    assert all(x["event"] == "gpu" and x["ctx"] == r.ctx and x["t"] >= x["start"] for x in records)
    events = check_trace_event_format(perfetto.convert(records))
    track = {
        e["tid"]
        for e in events
        if e["ph"] == "M" and e["pid"] == perfetto.GPU_PID and e["args"]["name"] == f"ctx {r.ctx}"
    }
    slices = [e for e in events if e["ph"] == "X" and e["pid"] == perfetto.GPU_PID]
    assert len(slices) == len(records) and {e["tid"] for e in slices} >= track
    assert any(e["name"].startswith("cudaLaunchKernel fill_surface<<<") for e in slices)
    failed = f"-> error {int(cudaError.cudaErrorInvalidValue)}"
    assert any(e["name"].endswith(failed) for e in slices)
