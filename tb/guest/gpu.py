"""The GPU as a PCI device of the guest: a second function on the guest's bus, with the
modelled GPU's IDs (NVIDIA, GH100) and class 0x0302, one MSI vector, and in BAR0 a
control block through which the guest's driver hands the GPU model commands.

The GPU's BAR1 stays in the fabric: the guest's window is 256 MiB in all, and the bus
addresses nv-p2p hands out must be ones the card's TLPs reach. The control block says
where it is (``BAR1_BASE``, ``BAR1_SIZE``), with the VRAM's size.

Commands (:class:`Cmd`) are 64-byte entries in a ring in guest RAM (``RING_BASE``,
``RING_ENTRIES``, a power of two up to :data:`MAX_RING`). The driver fills entries and
writes the index after its last to ``DOORBELL``; the device runs them in order, writes
each one's ``status`` and ``result`` and sets its done flag, moves ``COMPLETED`` past it
and, with ``CONTROL_IRQ`` set, sends its MSI. A doorbell write returns at once: the
commands run in the simulation while the guest goes on (one that waits for the card, a
synchronisation, never holds the guest's bus). An entry::

    u32 opcode; u32 context; u64 arg[5]; s32 status; u32 flags; u64 result

``status`` is 0, a CUDA error (``cudaError``, positive), or a negative errno for a
command the device cannot take (an unknown opcode or context: ``-EINVAL``; guest memory
that is not there: ``-EFAULT``). A ring the device cannot read stops it with
``STATUS_RING_ERROR`` until the ring is set up again.

A context is one guest process's CUDA context (a :class:`cuda_model.CudaRuntime` on the
model's GPU); destroying it frees what it allocated, as a process's exit does.
"""

from __future__ import annotations

import collections
import errno
import logging
import struct
from collections.abc import Callable
from enum import IntEnum

from cuda_model import CallbackPending, CudaError, CudaRuntime, CUresult, NvidiaP2P, cudaError
from cuda_model.devtime import DeviceTimeError
from cuda_model.gpu import (
    GH100_DEVICE_ID,
    GH100_SUBSYSTEM_ID,
    PCI_CLASS_3D_CONTROLLER,
    PCI_VENDOR_ID_NVIDIA,
)
from cuda_model.kernels import KERNELS, find_kernel
from driver_model.platform import Completion

from .errors import GuestProtocolError

log = logging.getLogger("cocotb.guest")

BAR0_SIZE = 64 << 10
MSI_CAP = 0x40
PCI_CAP_ID_MSI = 0x05
CONFIG_SIZE = 4096
MAX_RING = 4096
MAX_COPY = 16 << 20  # the most one copy or memset command moves
MAX_KERNEL_NAME = 1024  # the longest kernel name KERNEL_LOOKUP takes
MAX_PARAMS = 4096  # the most bytes of kernel parameters (CUDA's limit before Volta)
MAGIC = 0x55504750  # "PGPU"
VERSION = 1

# the control block (BAR0), 32-bit registers
REG_MAGIC = 0x000
REG_VERSION = 0x004
REG_VRAM_SIZE = 0x008  # lo, hi at +4
REG_BAR1_BASE = 0x010  # lo, hi at +4: the GPU's BAR1 in the fabric
REG_BAR1_SIZE = 0x018  # lo, hi at +4
REG_RING_BASE = 0x020  # lo, hi at +4: guest physical
REG_RING_ENTRIES = 0x028
REG_CONTROL = 0x02C
REG_DOORBELL = 0x030
REG_COMPLETED = 0x034
REG_STATUS = 0x038
REG_EVENT_BASE = 0x040  # lo, hi at +4: guest physical
REG_EVENT_ENTRIES = 0x048
REG_EVENT_HEAD = 0x04C  # the device's: events written
REG_EVENT_TAIL = 0x050  # the driver's: events taken
REG_CALLBACK_DONE = 0x054  # write a pin's handle: its free callback has returned
CONTROL_RUN = 1 << 0  # take commands from the ring
CONTROL_IRQ = 1 << 1  # an MSI when commands complete or an event is written
STATUS_RING_ERROR = 1 << 0
STATUS_EVENT_LOST = 1 << 1  # an event found no room (or no event ring)

EVENT = struct.Struct("<IIQ")  # type, flags, handle
EVENT_SIZE = 16
# an entry the device wrote and the driver has not taken: the driver finds events by
# this flag in its own memory (no register read), and clears it as it takes each one
EVENT_FLAG_VALID = 1 << 0
EVENT_P2P_FREE = 1  # run the free callback of pin ``handle``, then write REG_CALLBACK_DONE
# how long (simulated ns) a command that freed pinned memory waits for their callbacks
CALLBACK_WAIT_NS = 1_000_000_000

ENTRY = struct.Struct("<II5QiIQ")
ENTRY_SIZE = 64
assert ENTRY.size == ENTRY_SIZE
FLAG_DONE = 1 << 0
_STATUS_OFFSET = 48  # status, flags, result: what the device writes back


class Cmd(IntEnum):
    """What a ring entry asks for (``arg`` fields in order). A ``stream`` is 0 (the
    legacy default stream) or a handle STREAM_CREATE gave; guest physical buffers are
    read or written while the command runs, never after it completed."""

    NOP = 0
    CTX_CREATE = 1  # -> result: the context
    CTX_DESTROY = 2  # context
    MEM_ALLOC = 3  # size -> result: device pointer (cudaMalloc)
    MEM_FREE = 4  # device pointer (cudaFree)
    # device pointer, guest physical source, bytes, stream: the bytes are taken now and
    # written on the stream (done at once unless the memory has SYNC_MEMOPS)
    MEMCPY_HTOD = 5
    # guest physical destination, device pointer, bytes, stream: done once the stream's
    # earlier work and the copy have run
    MEMCPY_DTOH = 6
    MEMSET = 7  # device pointer, byte value, bytes, stream
    SYNCHRONIZE = 8  # (cudaDeviceSynchronize)
    # nvidia_p2p_get_pages: virtual address, length, guest physical table, its room in
    # entries -> result: the pin's handle; the table: u64 entries, u64 page size type
    # (1: 64 KiB), then each page's bus address (the GPU's BAR1 in the fabric)
    P2P_GET_PAGES = 9
    P2P_PUT_PAGES = 10  # handle, virtual address
    P2P_GET_PAGES_PERSISTENT = 11  # as P2P_GET_PAGES, with no free callback
    P2P_PUT_PAGES_PERSISTENT = 12  # handle, virtual address
    STREAM_CREATE = 13  # flags (1: non-blocking) -> result: the stream
    STREAM_DESTROY = 14  # stream
    STREAM_SYNCHRONIZE = 15  # stream
    STREAM_QUERY = 16  # stream -> status 0, or cudaErrorNotReady (600)
    EVENT_CREATE = 17  # flags -> result: the event
    EVENT_DESTROY = 18  # event
    EVENT_RECORD = 19  # event, stream
    EVENT_QUERY = 20  # event -> status 0, or cudaErrorNotReady
    EVENT_SYNCHRONIZE = 21  # event
    EVENT_ELAPSED = 22  # start, end -> result: milliseconds, the bits of an IEEE float
    STREAM_WAIT_EVENT = 23  # stream, event, flags
    WRITE_VALUE = 24  # stream, device pointer, value, flags, size (4 or 8)
    WAIT_VALUE = 25  # stream, device pointer, value, flags, size (4 or 8)
    MEMCPY_DTOD = 26  # destination, source, bytes, stream
    # kernel | stream << 32, grid x | y << 32, grid z | block x << 32, block y | z << 32,
    # guest physical parameters (u32 size, u32 0, then the packed parameters)
    LAUNCH = 27
    # guest physical buffer, the name's length: the name in, out: u32 parameters, then
    # each one's size (u32) -> result: the kernel (cudaErrorInvalidDeviceFunction: none)
    KERNEL_LOOKUP = 28
    POINTER_SET = 29  # attribute, device pointer, value (cuPointerSetAttribute)
    # attribute, pointer, which value (P2P_TOKENS has two) -> result
    POINTER_GET = 30
    DEVICE_ATTRIBUTE = 31  # attribute, API (0: cudaDeviceAttr, 1: CUdevice_attribute)
    MEM_GET_INFO = 32  # -> result: free bytes (the total is VRAM_SIZE)


_OPCODES = frozenset(int(c) for c in Cmd)

# the call of CUDA's (or nv-p2p's) each command serves, for the trace and timeline (an
# ...Async form and a driver-API twin send the same command)
CALLS: dict[Cmd, str] = {
    Cmd.NOP: "nop",
    Cmd.CTX_CREATE: "context (the process's first CUDA call)",
    Cmd.CTX_DESTROY: "context end (the process's exit)",
    Cmd.MEM_ALLOC: "cudaMalloc",
    Cmd.MEM_FREE: "cudaFree",
    Cmd.MEMCPY_HTOD: "cudaMemcpy HtoD",
    Cmd.MEMCPY_DTOH: "cudaMemcpy DtoH",
    Cmd.MEMSET: "cudaMemset",
    Cmd.SYNCHRONIZE: "cudaDeviceSynchronize",
    Cmd.P2P_GET_PAGES: "nvidia_p2p_get_pages",
    Cmd.P2P_PUT_PAGES: "nvidia_p2p_put_pages",
    Cmd.P2P_GET_PAGES_PERSISTENT: "nvidia_p2p_get_pages_persistent",
    Cmd.P2P_PUT_PAGES_PERSISTENT: "nvidia_p2p_put_pages_persistent",
    Cmd.STREAM_CREATE: "cudaStreamCreate",
    Cmd.STREAM_DESTROY: "cudaStreamDestroy",
    Cmd.STREAM_SYNCHRONIZE: "cudaStreamSynchronize",
    Cmd.STREAM_QUERY: "cudaStreamQuery",
    Cmd.EVENT_CREATE: "cudaEventCreate",
    Cmd.EVENT_DESTROY: "cudaEventDestroy",
    Cmd.EVENT_RECORD: "cudaEventRecord",
    Cmd.EVENT_QUERY: "cudaEventQuery",
    Cmd.EVENT_SYNCHRONIZE: "cudaEventSynchronize",
    Cmd.EVENT_ELAPSED: "cudaEventElapsedTime",
    Cmd.STREAM_WAIT_EVENT: "cudaStreamWaitEvent",
    Cmd.WRITE_VALUE: "cuStreamWriteValue",
    Cmd.WAIT_VALUE: "cuStreamWaitValue",
    Cmd.MEMCPY_DTOD: "cudaMemcpy DtoD",
    Cmd.LAUNCH: "cudaLaunchKernel",
    Cmd.KERNEL_LOOKUP: "kernel lookup (a kernel's first launch)",
    Cmd.POINTER_SET: "cuPointerSetAttribute",
    Cmd.POINTER_GET: "cuPointerGetAttribute",
    Cmd.DEVICE_ATTRIBUTE: "cudaDeviceGetAttribute",
    Cmd.MEM_GET_INFO: "cudaMemGetInfo",
}


def _detail(opcode: int, args) -> str:
    """What a command was about, in a few words (its sizes, pointers, kernel)."""
    if opcode == Cmd.LAUNCH:
        ident = args[0] & 0xFFFFFFFF
        name = _KERNEL_LIST[ident].name if ident < len(_KERNEL_LIST) else f"kernel {ident}"
        grid = (args[1] & 0xFFFFFFFF, args[1] >> 32, args[2] & 0xFFFFFFFF)
        block = (args[2] >> 32, args[3] & 0xFFFFFFFF, args[3] >> 32)
        return f"{name}<<<{grid}, {block}>>> stream {args[0] >> 32}"
    if opcode in (Cmd.MEMCPY_HTOD, Cmd.MEMCPY_DTOH, Cmd.MEMCPY_DTOD, Cmd.MEMSET):
        return f"{args[2]} B stream {args[3]}"
    if opcode == Cmd.MEM_ALLOC:
        return f"{args[0]} B"
    if opcode in (Cmd.MEM_FREE, Cmd.P2P_PUT_PAGES, Cmd.P2P_PUT_PAGES_PERSISTENT):
        return f"0x{args[1 if opcode != Cmd.MEM_FREE else 0]:x}"
    if opcode in (Cmd.P2P_GET_PAGES, Cmd.P2P_GET_PAGES_PERSISTENT):
        return f"0x{args[0]:x} + {args[1]} B"
    if opcode in (Cmd.WRITE_VALUE, Cmd.WAIT_VALUE):
        return f"0x{args[1]:x} {args[4] * 8}-bit value {args[2]} stream {args[0]}"
    return ""


def _ring_size_ok(n: int) -> bool:
    """A ring's entries: a power of two, 1 to MAX_RING."""
    return 0 < n <= MAX_RING and n & (n - 1) == 0


# the commands of the GPU's one virtual address space (nv-p2p): no context needed
_P2P = frozenset(
    {
        Cmd.P2P_GET_PAGES,
        Cmd.P2P_PUT_PAGES,
        Cmd.P2P_GET_PAGES_PERSISTENT,
        Cmd.P2P_PUT_PAGES_PERSISTENT,
    }
)


class GuestGpu:
    """The GPU function the guest sees. ``runtime()`` makes a context's
    :class:`CudaRuntime`; ``mem`` is the guest's RAM (``read``/``write`` by guest physical
    address), set once the guest shared it; ``msi(data)`` sends the function's MSI;
    ``spawn(coro)`` runs the command loop beside the simulation (cocotb's
    ``start_soon``); ``bar1()`` gives (bus address, size) of the GPU's BAR1 in the
    fabric. ``stats`` counts the commands run, by name."""

    def __init__(
        self,
        runtime: Callable[[], CudaRuntime],
        vram_size: int,
        bar1: Callable[[], tuple[int, int]],
        spawn: Callable[[object], object],
        p2p: NvidiaP2P | None = None,
        completion: Callable[[], Completion] | None = None,
    ) -> None:
        self.runtime = runtime
        self.p2p = p2p
        self.completion = completion
        self.vram_size = vram_size
        self.bar1 = bar1
        self.spawn = spawn
        self.mem = None
        self.msi: Callable[[int], None] | None = None
        # called with a line for each command run (the bridge's journal)
        self.note: Callable[[str], None] | None = None
        # called with a record of each command run (the TLP trace's ``gpu`` events), and
        # the clock (ns) their times come from
        self.on_command: Callable[[dict], None] | None = None
        self.clock: Callable[[], int] | None = None
        self.stats: collections.Counter[str] = collections.Counter()
        self.contexts: dict[int, CudaRuntime] = {}
        self._allocations: dict[int, set[int]] = {}
        self._next_context = 1
        self._config = bytearray(CONFIG_SIZE)
        self._bar0 = 0
        self._ring_base = 0
        self._ring_entries = 0
        self._control = 0
        self._doorbell = 0
        self._completed = 0
        self._status = 0
        self._running = False
        # pins by handle: (page table, its callback's pending, persistent); the events'
        # ring; the callbacks a command waits for
        self.pins: dict[int, tuple[object, CallbackPending | None, bool]] = {}
        self._next_pin = 1
        self._event_base = 0
        self._event_entries = 0
        self._event_head = 0
        self._event_tail = 0
        # while a command frees memory: where the callbacks it starts are gathered
        self._awaited: list[CallbackPending] | None = None
        self._inflight = 0  # commands taken and not yet answered
        self._init_config()

    @property
    def busy(self) -> bool:
        """Commands are being taken or run (shared time does not jump meanwhile)."""
        return self._running or self._inflight > 0

    # --- configuration space ------------------------------------------------------------
    def _init_config(self) -> None:
        c = self._config
        struct.pack_into("<HH", c, 0x00, PCI_VENDOR_ID_NVIDIA, GH100_DEVICE_ID)
        struct.pack_into("<H", c, 0x06, 0x0010)  # capabilities list
        struct.pack_into("<I", c, 0x08, PCI_CLASS_3D_CONTROLLER << 8 | 0xA1)
        struct.pack_into("<HH", c, 0x2C, PCI_VENDOR_ID_NVIDIA, GH100_SUBSYSTEM_ID)
        c[0x34] = MSI_CAP
        c[MSI_CAP] = PCI_CAP_ID_MSI
        struct.pack_into("<H", c, MSI_CAP + 2, 0x0080)  # 64-bit address, one vector

    @property
    def memory_enabled(self) -> bool:
        return bool(self._config[0x04] & 0x2)

    @property
    def master_enabled(self) -> bool:
        return bool(self._config[0x04] & 0x4)

    def _msi_enabled(self) -> tuple[bool, int]:
        control = struct.unpack_from("<H", self._config, MSI_CAP + 2)[0]
        data = struct.unpack_from("<H", self._config, MSI_CAP + 12)[0]
        return bool(control & 1), data

    async def config_read(self, offset: int, size: int) -> int:
        if offset == 0x10 and size == 4:
            return self._bar0
        if 0x10 < offset < 0x28 or offset == 0x30:
            return 0  # BAR1-5 and the ROM: none
        return int.from_bytes(self._config[offset : offset + size], "little")

    async def config_write(self, offset: int, size: int, value: int) -> None:
        data = value.to_bytes(size, "little")
        for i, byte in enumerate(data):
            self._write_config_byte(offset + i, byte)

    def _write_config_byte(self, at: int, byte: int) -> None:
        c = self._config
        if at in (0x04, 0x05):  # Command: memory, bus master, Interrupt Disable
            c[at] = byte & (0x06 if at == 0x04 else 0x04)
        elif 0x10 <= at < 0x14:  # BAR0: 32-bit memory, BAR0_SIZE
            shift = 8 * (at - 0x10)
            value = (self._bar0 & ~(0xFF << shift)) | byte << shift
            self._bar0 = value & ~(BAR0_SIZE - 1) & 0xFFFFFFFF
        elif at == 0x3C:
            c[at] = byte  # Interrupt Line
        elif at == MSI_CAP + 2:
            c[at] = (c[at] & ~0x71) | (byte & 0x01)  # MSI Enable (one vector: MME 0)
        elif MSI_CAP + 4 <= at < MSI_CAP + 14:
            c[at] = byte & (0xFC if at == MSI_CAP + 4 else 0xFF)

    # --- the control block (BAR0) ---------------------------------------------------------
    def _registers(self) -> dict[int, int]:
        base, size = self.bar1()
        return {
            REG_MAGIC: MAGIC,
            REG_VERSION: VERSION,
            REG_VRAM_SIZE: self.vram_size & 0xFFFFFFFF,
            REG_VRAM_SIZE + 4: self.vram_size >> 32,
            REG_BAR1_BASE: base & 0xFFFFFFFF,
            REG_BAR1_BASE + 4: base >> 32,
            REG_BAR1_SIZE: size & 0xFFFFFFFF,
            REG_BAR1_SIZE + 4: size >> 32,
            REG_RING_BASE: self._ring_base & 0xFFFFFFFF,
            REG_RING_BASE + 4: self._ring_base >> 32,
            REG_RING_ENTRIES: self._ring_entries,
            REG_CONTROL: self._control,
            REG_DOORBELL: self._doorbell,
            REG_COMPLETED: self._completed,
            REG_STATUS: self._status,
            REG_EVENT_BASE: self._event_base & 0xFFFFFFFF,
            REG_EVENT_BASE + 4: self._event_base >> 32,
            REG_EVENT_ENTRIES: self._event_entries,
            REG_EVENT_HEAD: self._event_head,
            REG_EVENT_TAIL: self._event_tail,
        }

    async def bar_read(self, bar: int, offset: int, size: int) -> bytes:
        if bar != 0 or offset + size > BAR0_SIZE or not self.memory_enabled:
            return b"\xff" * size
        regs = self._registers()
        out = bytearray()
        for at in range(offset & ~3, offset + size, 4):
            out += regs.get(at, 0).to_bytes(4, "little")
        skip = offset & 3
        return bytes(out[skip : skip + size])

    async def bar_write(self, bar: int, offset: int, data: bytes) -> None:
        if bar != 0 or offset & 3 or len(data) != 4 or not self.memory_enabled:
            log.warning(
                "guest GPU: BAR%d write of %d bytes at 0x%x ignored", bar, len(data), offset
            )
            return
        value = int.from_bytes(data, "little")
        if offset == REG_RING_BASE:
            self._ring_base = (self._ring_base & ~0xFFFFFFFF) | value
        elif offset == REG_RING_BASE + 4:
            self._ring_base = (self._ring_base & 0xFFFFFFFF) | value << 32
        elif offset == REG_RING_ENTRIES:
            self._ring_entries = value
        elif offset == REG_CONTROL:
            if value & CONTROL_RUN and not self._control & CONTROL_RUN:
                # a ring (re)started: empty, no error
                self._doorbell = self._completed = 0
                self._status = 0
            self._control = value & (CONTROL_RUN | CONTROL_IRQ)
        elif offset == REG_DOORBELL:
            self._doorbell = value
            self._kick()
        elif offset == REG_EVENT_BASE:
            self._event_base = (self._event_base & ~0xFFFFFFFF) | value
        elif offset == REG_EVENT_BASE + 4:
            self._event_base = (self._event_base & 0xFFFFFFFF) | value << 32
        elif offset == REG_EVENT_ENTRIES:
            self._event_entries = value
            self._event_head = self._event_tail = 0
        elif offset == REG_EVENT_TAIL:
            self._event_tail = value
        elif offset == REG_CALLBACK_DONE:
            self._callback_done(value)

    # --- pins and their free callbacks ---------------------------------------------------
    def _event(self, kind: int, handle: int) -> bool:
        """Write an event for the driver and send the MSI; False (STATUS_EVENT_LOST) when
        it found no room."""
        n = self._event_entries
        full = (self._event_head - self._event_tail) % (1 << 32) >= n
        try:
            if not _ring_size_ok(n) or self.mem is None or full:
                raise GuestProtocolError("no room")
            slot = self._event_base + (self._event_head % n) * EVENT_SIZE
            self.mem.write(slot, EVENT.pack(kind, EVENT_FLAG_VALID, handle))
        except GuestProtocolError:
            self._status |= STATUS_EVENT_LOST
            return False
        self._event_head = (self._event_head + 1) & 0xFFFFFFFF
        self._interrupt()
        return True

    def _free_callback(self, handle: int) -> CallbackPending | None:
        """The model frees pinned memory: the driver runs the pin's callback (an event),
        and the GPU keeps the pages mapped until it says the callback returned."""
        pending = CallbackPending()
        table, _, persistent = self.pins[handle]
        self.pins[handle] = (table, pending, persistent)
        self.stats["free_callback"] += 1
        if not self._event(EVENT_P2P_FREE, handle):
            log.error("guest GPU: pin %d freed, and its event found no room", handle)
            del self.pins[handle]
            return None  # nobody can run it: unmapped at once
        if self._awaited is not None:  # a command frees: it waits for the callback
            self._awaited.append(pending)
        return pending

    def _callback_done(self, handle: int) -> None:
        entry = self.pins.get(handle)
        if entry is None or entry[1] is None:
            log.warning("guest GPU: callback done for pin %d, which is not being freed", handle)
            return
        del self.pins[handle]
        entry[1].done()

    async def _wait_callbacks(self, awaited: list[CallbackPending]) -> bool:
        """Until the free callbacks a command started have returned (bounded)."""
        for pending in awaited:
            if pending.is_done:
                continue
            if self.completion is None:
                return False
            done = self.completion()
            pending.on_done(done.complete)
            if not await done.wait(CALLBACK_WAIT_NS):
                log.error("guest GPU: a free callback did not return in %d ns", CALLBACK_WAIT_NS)
                return False
        return True

    def _interrupt(self) -> None:
        enabled, data = self._msi_enabled()
        if self._control & CONTROL_IRQ and enabled and self.master_enabled and self.msi:
            self.msi(data)

    # --- the ring -------------------------------------------------------------------------
    def _kick(self) -> None:
        if self._running or not self._control & CONTROL_RUN:
            return
        self._running = True
        self.spawn(self._run())

    def _ring_ok(self) -> str | None:
        n = self._ring_entries
        if not _ring_size_ok(n):
            return f"{n} ring entries (a power of two, 1-{MAX_RING})"
        if self._ring_base % ENTRY_SIZE:
            return f"ring at 0x{self._ring_base:x}: not {ENTRY_SIZE}-byte aligned"
        if (self._doorbell - self._completed) % (1 << 32) > n:
            return f"doorbell {self._doorbell} more than {n} ahead of {self._completed}"
        if self.mem is None or not self.master_enabled:
            return "the device may not read guest memory (no memory shared, or no bus master)"
        return None

    async def _run(self) -> None:
        """Take the ring's commands up to the doorbell, in order, each one started as a
        task of its own: one that waits (a synchronisation, a copy behind a stream's
        work, a free whose callbacks run in the guest) holds neither the ring nor the
        commands after it."""
        try:
            while self._control & CONTROL_RUN and self._completed != self._doorbell:
                try:
                    why = self._ring_ok()
                    if why is not None:
                        raise GuestProtocolError(why)
                    slot = self._ring_base + (self._completed % self._ring_entries) * ENTRY_SIZE
                    entry = ENTRY.unpack(self.mem.read(slot, ENTRY_SIZE))
                except GuestProtocolError as e:
                    log.error("guest GPU: ring stopped: %s", e)
                    self._status |= STATUS_RING_ERROR
                    self._control &= ~CONTROL_RUN
                    break
                self._completed = (self._completed + 1) & 0xFFFFFFFF
                self._inflight += 1
                self.spawn(self._command(slot, entry))
        finally:
            self._running = False

    async def _command(self, slot: int, entry: tuple) -> None:
        """Run one command and answer it: its status and result, its done flag, an MSI."""
        try:
            start = self.clock() if self.clock is not None else 0
            status, result = await self._execute(entry[0], entry[1], entry[2:7])
            name = Cmd(entry[0]).name if entry[0] in _OPCODES else f"opcode {entry[0]}"
            if self.note is not None:
                self.note(f"GPU {name} ctx {entry[1]}: status {status} result 0x{result:x}")
            if self.on_command is not None and self.clock is not None:
                known = entry[0] in _OPCODES
                self.on_command(
                    {
                        "t": self.clock(),
                        "event": "gpu",
                        "start": start,
                        "cmd": name,
                        "call": CALLS[Cmd(entry[0])] if known else name,
                        "detail": _detail(entry[0], entry[2:7]) if known else "",
                        "ctx": entry[1],
                        "entry": (slot - self._ring_base) // ENTRY_SIZE,
                        "status": status,
                        "result": result,
                    }
                )
            try:
                self.mem.write(
                    slot + _STATUS_OFFSET, struct.pack("<iIQ", status, FLAG_DONE, result)
                )
            except GuestProtocolError as e:  # the guest took its RAM away meanwhile
                log.error("guest GPU: an answer was lost: %s", e)
                return
            self._interrupt()
        finally:
            self._inflight -= 1

    async def _execute(self, opcode: int, context: int, args) -> tuple[int, int]:
        try:
            cmd = Cmd(opcode)
        except ValueError:
            return -errno.EINVAL, 0
        self.stats[cmd.name] += 1
        if cmd is Cmd.NOP:
            return 0, 0
        if cmd is Cmd.CTX_CREATE:
            ctx = self._next_context
            self._next_context += 1
            self.contexts[ctx] = self.runtime()
            self._allocations[ctx] = set()
            return 0, ctx
        rt = self.contexts.get(context)
        if rt is None and cmd not in _P2P:
            return -errno.EINVAL, 0
        awaited: list[CallbackPending] = []
        try:
            if cmd in _P2P:  # the GPU's one virtual address space: no context
                result = self._p2p(cmd, args)
            else:
                result = await self._cuda(cmd, context, rt, args, awaited)
            status = 0
        except CudaError as e:
            result, status = 0, int(e.code)
        except GuestProtocolError:
            result, status = 0, -errno.EFAULT
        except _BadArgument as e:
            result, status = 0, -e.errno
        except DeviceTimeError as e:
            log.error("guest GPU: %s: %s", cmd.name, e)
            result, status = 0, -errno.ETIMEDOUT
        # memory freed under pins (cudaFree, a context's end): done once their callbacks
        # have returned, as cudaFree is
        if awaited and not await self._wait_callbacks(awaited):
            status = status or -errno.ETIMEDOUT
        return status, result

    def _freeing(self, awaited: list[CallbackPending]):
        """Collect the free callbacks what runs now starts (the model calls them back
        synchronously, inside cudaFree)."""
        return _Collect(self, awaited)

    async def _cuda(
        self, cmd: Cmd, context: int, rt: CudaRuntime, args, awaited: list[CallbackPending]
    ) -> int:
        handler = _CUDA_COMMANDS.get(cmd)
        if handler is None:
            raise _BadArgument()
        return await handler(self, context, rt, args, awaited)

    # each takes (context, runtime, args, the free callbacks it awaits) -> result
    async def _ctx_destroy(self, context, rt, args, awaited) -> int:
        await rt.synchronize()  # a process's end waits for its work, as cudaFree does
        with self._freeing(awaited):
            for ptr in sorted(self._allocations[context]):
                rt.cudaFree(ptr)
        del self.contexts[context], self._allocations[context]
        return 0

    async def _mem_alloc(self, context, rt, args, awaited) -> int:
        ptr = rt.cudaMalloc(args[0])
        if ptr:
            self._allocations[context].add(ptr)
        return ptr

    async def _mem_free(self, context, rt, args, awaited) -> int:
        await rt.synchronize()
        with self._freeing(awaited):
            rt.cudaFree(args[0])
        self._allocations[context].discard(args[0])
        return 0

    async def _memcpy_htod(self, context, rt, args, awaited) -> int:
        dst, src, count, stream = args[:4]
        _copy_size(count)
        op = rt.memcpy_to_device(dst, self.mem.read(src, count), stream)
        if rt.sync_memops(dst):
            await rt.engine.wait_ops([op], "cudaMemcpy", rt.sync_limit_ns)
            rt.raise_sticky()
        return 0

    async def _memcpy_dtoh(self, context, rt, args, awaited) -> int:
        dst, src, count, stream = args[:4]
        _copy_size(count)
        got: list[bytes] = []
        op = rt.memcpy_from_device(src, count, stream, got.append)
        await rt.engine.wait_ops([op], "cudaMemcpy", rt.sync_limit_ns)
        rt.raise_sticky()
        self.mem.write(dst, got[0])
        return 0

    async def _memcpy_dtod(self, context, rt, args, awaited) -> int:
        dst, src, count, stream = args[:4]
        _copy_size(count)
        op = rt.memcpy_device_to_device(dst, src, count, stream)
        if rt.sync_memops(dst):
            await rt.engine.wait_ops([op], "cudaMemcpy", rt.sync_limit_ns)
            rt.raise_sticky()
        return 0

    async def _memset(self, context, rt, args, awaited) -> int:
        ptr, value, count, stream = args[:4]
        _copy_size(count)
        op = rt.cudaMemsetAsync(ptr, value & 0xFF, count, stream)
        if op is not None and rt.sync_memops(ptr):
            await rt.engine.wait_ops([op], "cudaMemset", rt.sync_limit_ns)
            rt.raise_sticky()
        return 0

    async def _synchronize(self, context, rt, args, awaited) -> int:
        await rt.synchronize()
        return 0

    async def _stream_create(self, context, rt, args, awaited) -> int:
        return rt.cudaStreamCreateWithFlags(args[0])

    async def _stream_destroy(self, context, rt, args, awaited) -> int:
        rt.cudaStreamDestroy(args[0])
        return 0

    async def _stream_synchronize(self, context, rt, args, awaited) -> int:
        await rt.stream_synchronize(args[0])
        return 0

    async def _stream_query(self, context, rt, args, awaited) -> int:
        _raise_unless_success(rt.cudaStreamQuery(args[0]))
        return 0

    async def _event_create(self, context, rt, args, awaited) -> int:
        return rt.cudaEventCreate(args[0])

    async def _event_destroy(self, context, rt, args, awaited) -> int:
        rt.cudaEventDestroy(args[0])
        return 0

    async def _event_record(self, context, rt, args, awaited) -> int:
        rt.cudaEventRecord(args[0], args[1])
        return 0

    async def _event_query(self, context, rt, args, awaited) -> int:
        _raise_unless_success(rt.cudaEventQuery(args[0]))
        return 0

    async def _event_synchronize(self, context, rt, args, awaited) -> int:
        await rt.event_synchronize(args[0])
        return 0

    async def _event_elapsed(self, context, rt, args, awaited) -> int:
        ms = rt.cudaEventElapsedTime(args[0], args[1])
        return struct.unpack("<I", struct.pack("<f", ms))[0]

    async def _stream_wait_event(self, context, rt, args, awaited) -> int:
        rt.cudaStreamWaitEvent(args[0], args[1], args[2])
        return 0

    async def _write_value(self, context, rt, args, awaited) -> int:
        _memop(rt.cuStreamWriteValue32, rt.cuStreamWriteValue64, args)
        return 0

    async def _wait_value(self, context, rt, args, awaited) -> int:
        _memop(rt.cuStreamWaitValue32, rt.cuStreamWaitValue64, args)
        return 0

    async def _kernel_lookup(self, context, rt, args, awaited) -> int:
        at, length = args[:2]
        if not 0 < length <= MAX_KERNEL_NAME:
            raise _BadArgument()
        name = self.mem.read(at, length).decode("utf-8", "replace")
        kernel = find_kernel(name)
        if kernel is None:
            log.warning("guest GPU: kernel %r is not one of the model's", name)
            raise CudaError(
                cudaError.cudaErrorInvalidDeviceFunction, f"no kernel {name!r} in the model"
            )
        layout = struct.pack(f"<I{len(kernel.params)}I", len(kernel.params), *kernel.params)
        self.mem.write(at, layout)
        return _KERNEL_IDS[kernel.name]

    async def _launch(self, context, rt, args, awaited) -> int:
        ident, stream = args[0] & 0xFFFFFFFF, args[0] >> 32
        grid = (args[1] & 0xFFFFFFFF, args[1] >> 32, args[2] & 0xFFFFFFFF)
        block = (args[2] >> 32, args[3] & 0xFFFFFFFF, args[3] >> 32)
        if ident >= len(_KERNEL_LIST):
            raise CudaError(cudaError.cudaErrorInvalidDeviceFunction, f"kernel {ident}")
        kernel = _KERNEL_LIST[ident]
        size = struct.unpack("<I", self.mem.read(args[4], 4))[0]
        if size > MAX_PARAMS:
            raise _BadArgument()
        params = kernel.unpack(self.mem.read(args[4] + 8, size))
        rt.cudaLaunchKernel(kernel.run, grid, block, params, stream)
        return 0

    async def _pointer_set(self, context, rt, args, awaited) -> int:
        rt.cuPointerSetAttribute(args[2], args[0], args[1])
        return 0

    async def _pointer_get(self, context, rt, args, awaited) -> int:
        try:
            value = rt.cuPointerGetAttribute(args[0], args[1])
        except ValueError:
            raise CudaError(CUresult.CUDA_ERROR_INVALID_VALUE, f"attribute {args[0]}") from None
        if isinstance(value, tuple):
            if args[2] >= len(value):
                raise _BadArgument()
            return int(value[args[2]])
        return int(value)

    async def _device_attribute(self, context, rt, args, awaited) -> int:
        if args[1] == 0:
            return rt.cudaDeviceGetAttribute(args[0])
        return rt.cuDeviceGetAttribute(args[0])

    async def _mem_get_info(self, context, rt, args, awaited) -> int:
        return rt.cudaMemGetInfo()[0]

    def _p2p(self, cmd: Cmd, args) -> int:
        if cmd in (Cmd.P2P_GET_PAGES, Cmd.P2P_GET_PAGES_PERSISTENT):
            return self._get_pages(cmd is Cmd.P2P_GET_PAGES_PERSISTENT, args)
        return self._put_pages(cmd is Cmd.P2P_PUT_PAGES_PERSISTENT, args[0], args[1])

    def _get_pages(self, persistent: bool, args) -> int:
        if self.p2p is None:
            raise _BadArgument(errno.ENODEV)
        va, length, table_at, room = args[:4]
        handle = self._next_pin
        if persistent:
            rc, table = self.p2p.nvidia_p2p_get_pages_persistent(va, length)
        else:
            rc, table = self.p2p.nvidia_p2p_get_pages(
                0, 0, va, length, lambda _: self._free_callback(handle)
            )
        if rc:
            raise _BadArgument(-rc)
        pages = [p.physical_address for p in table.pages]
        if len(pages) > room:
            self._unpin(persistent, va, table)
            raise _BadArgument(errno.ENOSPC)
        try:
            self.mem.write(
                table_at, struct.pack(f"<QQ{len(pages)}Q", len(pages), int(table.page_size), *pages)
            )
        except GuestProtocolError:
            self._unpin(persistent, va, table)
            raise
        self._next_pin += 1
        self.pins[handle] = (table, None, persistent)
        return handle

    def _unpin(self, persistent: bool, va: int, table) -> int:
        if persistent:
            return self.p2p.nvidia_p2p_put_pages_persistent(va, table)
        return self.p2p.nvidia_p2p_put_pages(0, 0, va, table)

    def _put_pages(self, persistent: bool, handle: int, va: int) -> int:
        entry = self.pins.get(handle)
        if entry is None or entry[2] != persistent or entry[1] is not None:
            # not pinned here, the other kind, or being freed (its callback runs)
            raise _BadArgument(errno.EINVAL)
        rc = self._unpin(persistent, va, entry[0])
        if rc:
            raise _BadArgument(-rc)
        del self.pins[handle]
        return 0


class _BadArgument(Exception):
    """A command the device refuses: ``errno`` (EINVAL unless given)."""

    def __init__(self, code: int = errno.EINVAL) -> None:
        super().__init__(errno.errorcode.get(code, str(code)))
        self.errno = code


class _Collect:
    """Gathers, while it is entered, the free callbacks the device starts."""

    def __init__(self, gpu: GuestGpu, into: list[CallbackPending]) -> None:
        self.gpu = gpu
        self.into = into

    def __enter__(self) -> None:
        self.gpu._awaited = self.into

    def __exit__(self, *exc) -> None:
        self.gpu._awaited = None


def _copy_size(count: int) -> None:
    if count > MAX_COPY:
        raise _BadArgument()


def _memop(op32, op64, args) -> None:
    """A stream memory operation of ``args`` (stream, address, value, flags, size)."""
    stream, addr, value, flags, size = args
    if size == 8:
        op64(stream, addr, value, flags)
    elif size == 4:
        op32(stream, addr, value & 0xFFFFFFFF, flags)
    else:
        raise _BadArgument()


def _raise_unless_success(code) -> None:
    if code:
        raise CudaError(code, "not ready")


_CUDA_COMMANDS = {
    Cmd.CTX_DESTROY: GuestGpu._ctx_destroy,
    Cmd.MEM_ALLOC: GuestGpu._mem_alloc,
    Cmd.MEM_FREE: GuestGpu._mem_free,
    Cmd.MEMCPY_HTOD: GuestGpu._memcpy_htod,
    Cmd.MEMCPY_DTOH: GuestGpu._memcpy_dtoh,
    Cmd.MEMCPY_DTOD: GuestGpu._memcpy_dtod,
    Cmd.MEMSET: GuestGpu._memset,
    Cmd.SYNCHRONIZE: GuestGpu._synchronize,
    Cmd.STREAM_CREATE: GuestGpu._stream_create,
    Cmd.STREAM_DESTROY: GuestGpu._stream_destroy,
    Cmd.STREAM_SYNCHRONIZE: GuestGpu._stream_synchronize,
    Cmd.STREAM_QUERY: GuestGpu._stream_query,
    Cmd.EVENT_CREATE: GuestGpu._event_create,
    Cmd.EVENT_DESTROY: GuestGpu._event_destroy,
    Cmd.EVENT_RECORD: GuestGpu._event_record,
    Cmd.EVENT_QUERY: GuestGpu._event_query,
    Cmd.EVENT_SYNCHRONIZE: GuestGpu._event_synchronize,
    Cmd.EVENT_ELAPSED: GuestGpu._event_elapsed,
    Cmd.STREAM_WAIT_EVENT: GuestGpu._stream_wait_event,
    Cmd.WRITE_VALUE: GuestGpu._write_value,
    Cmd.WAIT_VALUE: GuestGpu._wait_value,
    Cmd.KERNEL_LOOKUP: GuestGpu._kernel_lookup,
    Cmd.LAUNCH: GuestGpu._launch,
    Cmd.POINTER_SET: GuestGpu._pointer_set,
    Cmd.POINTER_GET: GuestGpu._pointer_get,
    Cmd.DEVICE_ATTRIBUTE: GuestGpu._device_attribute,
    Cmd.MEM_GET_INFO: GuestGpu._mem_get_info,
}
assert set(_CUDA_COMMANDS) | _P2P | {Cmd.NOP, Cmd.CTX_CREATE} == set(Cmd)

# the model's kernels by number (KERNEL_LOOKUP's result, LAUNCH's kernel)
_KERNEL_LIST = sorted(KERNELS.values(), key=lambda k: k.name)
_KERNEL_IDS = {k.name: i for i, k in enumerate(_KERNEL_LIST)}
