"""The GPU as a PCIe requester: what the GPU endpoint gives the CUDA model, which runs its
streams on the simulator's clock (:class:`CocotbTime`) and sends its kernels' and copy
engines' accesses to memory outside the GPU as TLPs (:class:`GpuRequester`).

Requests follow the GPU function's own Device Control register: writes of at most its
MPS, reads of at most its MRRS, never across a 4 KiB boundary; as many reads outstanding
as its tags allow (32, or 256 with extended tags); relaxed ordering set on a write only
when the access asks for it (the model's knob, off as NVIDIA's driver leaves it) and
Device Control enables it. Every completion is matched by tag and requester ID and
checked (status, byte count, lower address, length); a failed, malformed or missing one
fails the read with :class:`cuda_model.bus.BusError`, which the model makes a sticky
kernel error. Each request is named by what the GPU was doing (:meth:`name_of`).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Coroutine
from typing import Any

import cocotb
from cocotb.triggers import Event, First, Timer
from cocotb.utils import get_sim_time
from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpAttr, TlpType

from cuda_model.bus import Access, BusError

PAGE = 4096
NAMES_KEPT = 4096  # requests whose names the trace can still look up


class CocotbTime:
    """:class:`cuda_model.devtime.DeviceTime` on cocotb's clock."""

    def now_ns(self) -> float:
        return get_sim_time("ns")

    def sleep(self, ns: float):
        return Timer(max(1, math.ceil(ns)), "ns")

    def event(self) -> Event:
        return Event()

    async def wait_for(self, ev: Event, ns: float) -> bool:
        if not ev.is_set():
            await First(ev.wait(), Timer(max(1, math.ceil(ns)), "ns"))
        return ev.is_set()

    def spawn(self, coro: Coroutine[Any, Any, Any]):
        return cocotb.start_soon(coro)


def _status(status: int) -> str:
    try:
        return CplStatus(status).name
    except ValueError:
        return f"status {status}"


class GpuRequester:
    """:class:`cuda_model.bus.DeviceBus` for the GPU function ``func`` (a cocotbext-pcie
    Function). ``cpl_timeout_ns``: how long a read waits for each completion."""

    def __init__(self, func, cpl_timeout_ns: float = 1_000_000.0) -> None:
        self.func = func
        self.cpl_timeout_ns = cpl_timeout_ns
        self._names: collections.OrderedDict[tuple, Access] = collections.OrderedDict()
        self.writes = 0  # TLPs sent
        self.reads = 0
        # told (requester ID, tag) of each read given up on (no completion in time), as
        # the hard IP's completion timeout tells the checker
        self.timeout_listeners: list[Callable[[int, int], None]] = []

    # --- what the Device Control allows -------------------------------------------------
    @property
    def mps(self) -> int:
        return 128 << (self.func.pcie_cap.max_payload_size & 7)

    @property
    def mrrs(self) -> int:
        return 128 << (self.func.pcie_cap.max_read_request_size & 7)

    def _check_master(self, addr: int) -> None:
        if not self.func.bus_master_enable:
            raise BusError("blocked", addr, "bus mastering is off in the GPU's Command register")

    def _remember(self, key: tuple, access: Access) -> None:
        self._names[key] = access
        self._names.move_to_end(key)
        while len(self._names) > NAMES_KEPT:
            self._names.popitem(last=False)

    @staticmethod
    def _key(tlp: Tlp) -> tuple:
        if tlp.fmt_type in (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64):
            return ("w", tlp.address, tlp.first_be, tlp.last_be, bytes(tlp.data[:8]))
        return ("r", tlp.address, tlp.tag)

    def name_of(self, tlp: Tlp) -> Access | None:
        """What the GPU was doing when it sent ``tlp`` (a request of this GPU, as seen on
        any link), or None."""
        if tlp.requester_id != self.func.pcie_id:
            return None
        return self._names.get(self._key(tlp))

    @staticmethod
    def _pieces(addr: int, length: int, limit: int):
        while length:
            n = min(length, limit - addr % 4, PAGE - addr % PAGE)
            yield addr, n
            addr += n
            length -= n

    # --- the DeviceBus ----------------------------------------------------------------
    async def write(self, addr: int, data: bytes, access: Access) -> None:
        """Posted writes of at most MPS bytes (less the first DW's offset)."""
        self._check_master(addr)
        off = 0
        for a, n in self._pieces(addr, len(data), self.mps):
            tlp = Tlp()
            tlp.fmt_type = TlpType.MEM_WRITE_64 if a + n > 1 << 32 else TlpType.MEM_WRITE
            tlp.requester_id = self.func.pcie_id
            if access.relaxed and self.func.pcie_cap.enable_relaxed_ordering:
                tlp.attr = TlpAttr.RO
            tlp.set_addr_be_data(a, data[off : off + n])
            off += n
            self._remember(self._key(tlp), access)
            self.writes += 1
            await self.func.send(tlp)

    async def read(self, addr: int, length: int, access: Access) -> bytes:
        """Reads of at most MRRS bytes, all outstanding at once (as tags allow)."""
        self._check_master(addr)
        tasks = [
            cocotb.start_soon(self._read_one(a, n, access))
            for a, n in self._pieces(addr, length, self.mrrs)
        ]
        out = bytearray()
        failure: BusError | None = None
        for t in tasks:
            try:
                out += await t
            except BusError as e:
                failure = failure or e
        if failure is not None:
            raise failure
        return bytes(out)

    async def flush(self, addr: int, access: Access) -> None:
        """A zero-length read of ``addr`` (one DW, no byte enabled): its completion comes
        back only after the writes sent before it have landed."""
        self._check_master(addr)
        tlp = self._read_tlp(addr & ~3, 4)
        tlp.first_be = 0

        async def answer(tag: int) -> None:
            cpl = await self._next_completion(tag, addr)
            if cpl.status != CplStatus.SC:
                raise BusError(_status(cpl.status), addr, "a flush")

        await self._nonposted(tlp, access, answer)

    async def _read_one(self, addr: int, n: int, access: Access) -> bytes:
        tlp = self._read_tlp(addr, n)
        return await self._nonposted(tlp, access, lambda tag: self._collect(tag, addr, n))

    def _read_tlp(self, addr: int, n: int) -> Tlp:
        tlp = Tlp()
        tlp.fmt_type = TlpType.MEM_READ_64 if addr + n > 1 << 32 else TlpType.MEM_READ
        tlp.requester_id = self.func.pcie_id
        tlp.set_addr_be(addr, n)
        return tlp

    async def _nonposted(self, tlp: Tlp, access: Access, answer):
        """Send a read under a tag of its own and ``await answer(tag)``; the tag is free
        again after, however it ended."""
        func = self.func
        tag = await func.alloc_tag()
        try:
            queue = func.rx_cpl_queues[tag]
            while not queue.empty():  # a completion that came after its request timed out
                queue.get_nowait().release_fc()
            tlp.tag = tag
            self._remember(self._key(tlp), access)
            self.reads += 1
            await func.send(tlp)
            return await answer(tag)
        finally:
            func.release_tag(tag)

    async def _next_completion(self, tag: int, addr: int) -> Tlp:
        """The next completion under ``tag``, or a timeout (the checker is told)."""
        cpl = await self.func.recv_cpl(tag, self.cpl_timeout_ns, "ns")
        if cpl is None:
            for listener in self.timeout_listeners:
                listener(int(self.func.pcie_id), tag)
            raise BusError("timeout", addr, f"no completion in {self.cpl_timeout_ns} ns")
        return cpl

    async def _collect(self, tag: int, addr: int, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            cpl = await self._next_completion(tag, addr)
            if cpl.requester_id != self.func.pcie_id:
                raise BusError("malformed", addr, f"completion for {cpl.requester_id}")
            if cpl.status != CplStatus.SC:
                raise BusError(_status(cpl.status), addr)
            left = n - len(data)
            at = addr + len(data)
            if cpl.byte_count != left or cpl.lower_address != at & 0x7F:
                raise BusError(
                    "malformed",
                    addr,
                    f"byte count {cpl.byte_count} lower address {cpl.lower_address:#x}, "
                    f"expected {left} and {at & 0x7F:#x}",
                )
            if cpl.fmt_type != TlpType.CPL_DATA or not cpl.length:
                raise BusError("malformed", addr, "a successful completion without data")
            body = bytes(cpl.get_data())[at & 3 :]
            if len(body) > left + 3 or (len(body) < left and (at + len(body)) % 64):
                raise BusError("malformed", addr, f"{len(body)} bytes for {left} left")
            data += body[:left]
        return bytes(data)
