"""Stream memory operations (driver API): ``cuStreamWriteValue32/64`` and
``cuStreamWaitValue32/64``, the GPUDirect Async doorbell and flag.

Rules (cuda_model/probes/h200-host-register.txt, CUDA's driver API documentation):

- a write goes to device memory or to memory registered with CUDA (a doorbell in a
  card's BAR, a flag in pinned host memory), after every earlier operation of its stream
  and a fence scoped to the stream, like ``__threadfence_system()`` (flags 0);
  ``CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER`` is refused with CUDA_ERROR_INVALID_VALUE on
  the measured driver, as is any other flag, managed or unknown memory, and an address
  not aligned to the value's size;
- a wait holds its stream until the location satisfies the condition (GEQ, cyclic, on
  the value's width; EQ; AND: a common bit; NOR: ``~(*addr | value)`` not zero);
  ``CU_STREAM_WAIT_VALUE_FLUSH`` needs CAN_FLUSH_REMOTE_WRITES, 0 on Hopper, so it is
  refused with CUDA_ERROR_NOT_SUPPORTED, any other flag with CUDA_ERROR_INVALID_VALUE
  (both measured: probes/queued_work.txt). The GPU polls: device memory every
  :attr:`poll_ns`, registered memory with a read on the bus each time (a model knob: the
  front end's real polling rate is not known).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .bus import Access, BusError
from .devtime import DeviceTimeError
from .errors import CudaError, CUresult
from .gpu import MemoryType

CU_STREAM_WRITE_VALUE_DEFAULT = 0
CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER = 1
CU_STREAM_WAIT_VALUE_GEQ = 0
CU_STREAM_WAIT_VALUE_EQ = 1
CU_STREAM_WAIT_VALUE_AND = 2
CU_STREAM_WAIT_VALUE_NOR = 3
CU_STREAM_WAIT_VALUE_FLUSH = 1 << 30

poll_ns = 1_000.0  # how often a wait polls its location (simulated ns)


def _bad(what: str) -> CudaError:
    return CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, what)


def _place(rt: Any, addr: int, size: int, write: bool, what: str):
    """Where ``size`` bytes at ``addr`` are: ("local", addr) or ("bus", piece)."""
    if addr % size:
        raise _bad(f"{what}: {addr:#x} is not {size}-byte aligned")
    a = rt.gpu.find_allocation(addr)
    if a is not None and a.memory_type is MemoryType.CU_MEMORYTYPE_DEVICE:
        if addr + size > a.end:
            raise _bad(f"{what}: {addr:#x} past its allocation")
        return ("local", addr)
    pieces = rt.registered.bus_pieces(addr, size, write)
    if not pieces or len(pieces) != 1:
        raise _bad(f"{what}: {addr:#x} is neither device memory nor registered")
    return ("bus", pieces[0])


def write_value(rt: Any, stream: int, addr: int, value: int, size: int, flags: int):
    """Queue ``cuStreamWriteValue{32,64}``; the stream operation."""
    what = f"cuStreamWriteValue{8 * size}"
    if flags:
        raise _bad(f"{what}: flags {flags:#x}")
    where = _place(rt, addr, size, True, what)
    data = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    async def body() -> None:
        kind, at = where
        if kind == "local":
            rt.gpu.write_va(at, np.frombuffer(data, dtype=np.uint8))
            return
        bus = rt._need_bus(what)
        access = Access(what, at.range, rt.relaxed_ordering)
        await bus.write(at.addr, data, access)
        if at.io:  # (a doorbell: PCIe ordering alone, no read of a device's register)
            return
        try:  # done once it has landed in host memory
            await bus.flush(at.addr, access)
        except BusError as e:
            raise CudaError(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, f"{what}: {e}") from None

    return rt.engine.submit(stream, what, "memop", body)


def _holds(got: int, value: int, cond: int, size: int) -> bool:
    mask = (1 << (8 * size)) - 1
    if cond == CU_STREAM_WAIT_VALUE_GEQ:
        return ((got - value) & mask) < (1 << (8 * size - 1))
    if cond == CU_STREAM_WAIT_VALUE_EQ:
        return got == value & mask
    if cond == CU_STREAM_WAIT_VALUE_AND:
        return bool(got & value)
    return bool(~(got | value) & mask)


def wait_value(rt: Any, stream: int, addr: int, value: int, size: int, flags: int):
    """Queue ``cuStreamWaitValue{32,64}``; the stream operation."""
    what = f"cuStreamWaitValue{8 * size}"
    cond = flags & 0x3
    if flags & ~(0x3 | CU_STREAM_WAIT_VALUE_FLUSH):
        raise _bad(f"{what}: flags {flags:#x}")
    if flags & CU_STREAM_WAIT_VALUE_FLUSH:
        raise CudaError(
            CUresult.CUDA_ERROR_NOT_SUPPORTED,
            f"{what}: CU_STREAM_WAIT_VALUE_FLUSH needs CAN_FLUSH_REMOTE_WRITES, 0 here",
        )
    kind, at = _place(rt, addr, size, False, what)

    async def read() -> int:
        if kind == "local":
            return int.from_bytes(rt.gpu.read_va(at, size).tobytes(), "little")
        try:
            got = await rt._need_bus(what).read(at.addr, size, Access(what, at.range))
        except BusError as e:
            raise CudaError(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, f"{what}: {e}") from None
        return int.from_bytes(got, "little")

    async def body() -> None:
        t = rt.gpu.device_time
        while not _holds(await read(), value, cond, size):
            if t is None:
                raise DeviceTimeError(f"{what}: the condition does not hold, and no time passes")
            await t.sleep(poll_ns)

    return rt.engine.submit(stream, what, "memop", body)
