"""What a kernel can do: the model's device API, and the bus its non-local accesses take.

A kernel is ``async def kernel(k: KernelContext, *args)``. Its loads and stores of device
memory are local (the GPU's own memory, no time on the link); those of memory registered
with CUDA (host memory, a third-party device's BAR) leave the GPU as PCIe requests through
the :class:`DeviceBus` the GPU endpoint gives, each named by what the GPU was doing. A
kernel written for the older host-only model, ``kernel(rt, grid, block, *args)``, still
runs as it did.

Access shapes (reference/gpu-requester.md, PTX ISA "mmio operation", measured SASS):

- ``st32``/``st64`` with ``mmio=True`` (``st.mmio.relaxed.sys``): always performed, never
  combined: one MWr of 4 or 8 bytes with its byte enables;
- plain and volatile stores (``store``): a warp's stores may reach the link combined;
  :attr:`KernelContext.coalesce` (bytes, a model knob) is the largest piece one store
  becomes, 4 when off; pieces end at multiples of it, as a warp's combined stores stay
  within one aligned line;
- ``ld32``/``ld64`` with ``mmio=True``: always performed; an implementation may read
  surrounding bytes: :attr:`KernelContext.widen_loads` (a knob, 0 = exact) widens each
  to that aligned size;
- ``threadfence_system()`` (``MEMBAR.SC.SYS``): every earlier write of the kernel is on
  its way before any later access.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .bus import Access, BusError, Piece
from .errors import CudaError, cudaError
from .gpu import MemoryType


class KernelContext:
    """One kernel's view of memory (see the module's docstring)."""

    def __init__(self, rt: Any, name: str, grid, block) -> None:
        # rt: the launching cuda_model.runtime.CudaRuntime
        self.rt = rt
        self.name = name
        self.grid = grid
        self.block = block
        self.coalesce = rt.kernel_coalesce
        self.widen_loads = rt.kernel_widen_loads
        self.stores = 0  # requests this kernel put on the bus
        self.loads = 0
        # the last bus write to host memory: the kernel's end flushes its writes there
        # (its writes to mapped host memory are visible to the host once it is done)
        self.last_write: tuple[int, Access] | None = None

    def _fail(self, what: str, ptr: int, n: int, detail: str = "") -> CudaError:
        return CudaError(
            cudaError.cudaErrorIllegalAddress,
            f"kernel {self.name}: {what} of {n} bytes at {ptr:#x}{': ' + detail if detail else ''}",
        )

    def _pieces(self, ptr: int, n: int, what: str, write: bool) -> list[Piece]:
        a = self.rt.gpu.find_allocation(ptr)
        if a is not None and a.memory_type is MemoryType.CU_MEMORYTYPE_DEVICE:
            if ptr + n > a.end:
                raise self._fail(what, ptr, n, "past the allocation")
            return [Piece(ptr, n, False)]
        pieces = self.rt.registered.bus_pieces(ptr, n, write)
        if pieces is None:
            raise self._fail(what, ptr, n, "not device memory nor registered")
        return pieces

    def _access(self, p: Piece) -> Access:
        return Access(f"kernel {self.name}", p.range, self.rt.relaxed_ordering)

    def _bus(self):
        bus = self.rt.gpu.bus
        if bus is None:
            raise CudaError(
                cudaError.cudaErrorIllegalAddress,
                f"kernel {self.name}: registered memory needs the GPU on a bus (a simulation)",
            )
        return bus

    async def _write(self, ptr: int, data: bytes, what: str, chunk: int) -> None:
        off = 0
        for p in self._pieces(ptr, len(data), what, True):
            part = data[off : off + p.length]
            off += p.length
            if not p.bus:
                self.rt.gpu.write_va(p.addr, np.frombuffer(part, dtype=np.uint8))
                continue
            bus = self._bus()
            i = 0
            while i < len(part):  # pieces end at multiples of chunk (a warp's lines)
                take = min(len(part) - i, chunk - (p.addr + i) % chunk)
                try:
                    await bus.write(p.addr + i, part[i : i + take], self._access(p))
                except BusError as e:
                    raise self._fail(what, ptr, len(data), str(e)) from None
                self.stores += 1
                if not p.io:  # (a device's registers may not be read to flush)
                    self.last_write = (p.addr + i, self._access(p))
                i += take

    async def _read(self, ptr: int, n: int, what: str) -> bytes:
        out = bytearray()
        for p in self._pieces(ptr, n, what, False):
            if not p.bus:
                out += self.rt.gpu.read_va(p.addr, p.length).tobytes()
                continue
            addr, length = p.addr, p.length
            if self.widen_loads:
                w = self.widen_loads
                lo = addr & ~(w - 1)
                hi = -(-(addr + length) // w) * w
                addr, length = lo, hi - lo
            try:
                got = await self._bus().read(addr, length, self._access(p))
            except BusError as e:
                raise self._fail(what, ptr, n, str(e)) from None
            self.loads += 1
            out += got[p.addr - addr : p.addr - addr + p.length]
        return bytes(out)

    # ------------------------------------------------------------------ the API
    async def st32(self, ptr: int, value: int, mmio: bool = True) -> None:
        """A 32-bit store (``st.mmio.relaxed.sys`` when ``mmio``): one 1-DW write."""
        if ptr % 4:
            raise self._fail("misaligned st32", ptr, 4)
        await self._write(ptr, (value & 0xFFFF_FFFF).to_bytes(4, "little"), "st32", 4)

    async def st64(self, ptr: int, value: int, mmio: bool = True) -> None:
        """A 64-bit store: one 2-DW write."""
        if ptr % 8:
            raise self._fail("misaligned st64", ptr, 8)
        await self._write(ptr, (value & (1 << 64) - 1).to_bytes(8, "little"), "st64", 8)

    async def ld32(self, ptr: int, mmio: bool = True) -> int:
        """A 32-bit load (``ld.mmio.relaxed.sys`` when ``mmio``: widened by the knob)."""
        if ptr % 4:
            raise self._fail("misaligned ld32", ptr, 4)
        return int.from_bytes(await self._read(ptr, 4, "ld32"), "little")

    async def ld64(self, ptr: int, mmio: bool = True) -> int:
        """A 64-bit load."""
        if ptr % 8:
            raise self._fail("misaligned ld64", ptr, 8)
        return int.from_bytes(await self._read(ptr, 8, "ld64"), "little")

    async def store(self, ptr: int, data, volatile: bool = False) -> None:
        """Plain (or volatile) stores of every thread, ``data`` in address order: pieces
        of at most :attr:`coalesce` bytes (4 when off) on the bus, cut at multiples of
        it (a warp's aligned lines)."""
        raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
        await self._write(ptr, raw, "store", max(4, self.coalesce))

    async def load(self, ptr: int, n: int) -> bytes:
        """Plain loads of ``n`` bytes."""
        return await self._read(ptr, n, "load")

    async def nanosleep(self, ns: float) -> None:
        """``__nanosleep(ns)``: the kernel waits (simulated time; a spin loop's pause)."""
        t = self.rt.gpu.device_time
        if t is None:
            raise CudaError(
                cudaError.cudaErrorIllegalAddress, f"kernel {self.name}: __nanosleep needs time"
            )
        await t.sleep(max(1.0, ns))

    async def finish(self) -> None:
        """The kernel's end: its writes to host memory flushed (a zero-length read where
        the last went), so that the host sees them once the kernel is done, as CUDA
        promises for mapped memory. Writes to a device's BAR are not flushed: a read
        there may have side effects (a FIFO register), and PCIe ordering alone governs
        them. A failed flush is the kernel's error."""
        if self.last_write is None:
            return
        addr, access = self.last_write
        self.last_write = None
        try:
            await self._bus().flush(addr, access)
        except BusError as e:
            raise self._fail("the end-of-kernel flush", addr, 0, str(e)) from None

    async def threadfence_system(self) -> None:
        """``__threadfence_system()``: earlier writes are ordered before later accesses
        (each bus write above already returns once on its way, so this orders by
        construction; with relaxed ordering on it still orders this kernel's own)."""
        return None
