"""The GPU as a PCI device of the guest (tb/guest/gpu.py) without a guest or a simulator:
its configuration space, its control block, and the command ring run against the CUDA
model, with the guest's RAM a buffer here."""

from __future__ import annotations

import asyncio
import errno
import struct

import pytest

from cuda_model import CudaRuntime, Gpu, NvidiaP2P, PinState, cudaError
from cuda_model.gpu import GH100_DEVICE_ID, PCI_VENDOR_ID_NVIDIA
from tb.guest.gpu import (
    BAR0_SIZE,
    CONTROL_IRQ,
    CONTROL_RUN,
    ENTRY,
    ENTRY_SIZE,
    EVENT,
    EVENT_FLAG_VALID,
    EVENT_P2P_FREE,
    EVENT_SIZE,
    FLAG_DONE,
    MAGIC,
    MSI_CAP,
    REG_BAR1_BASE,
    REG_CALLBACK_DONE,
    REG_COMPLETED,
    REG_CONTROL,
    REG_DOORBELL,
    REG_EVENT_BASE,
    REG_EVENT_ENTRIES,
    REG_EVENT_HEAD,
    REG_EVENT_TAIL,
    REG_MAGIC,
    REG_RING_BASE,
    REG_RING_ENTRIES,
    REG_STATUS,
    REG_VRAM_SIZE,
    STATUS_EVENT_LOST,
    STATUS_RING_ERROR,
    Cmd,
    GuestGpu,
)

from .guestfakes import GuestRam

RAM_BASE = 0x1000_0000
RAM_SIZE = 1 << 20
RING = RAM_BASE + 0x1000
DATA = RAM_BASE + 0x8000
BAR1 = (0xE000_0000_0, 256 << 20)


class Rig:
    def __init__(self) -> None:
        self.gpu = Gpu(vram_size=1 << 30, bar1_size=256 << 20)
        self.tasks: list = []
        self.dev = GuestGpu(
            lambda: CudaRuntime(self.gpu), self.gpu.vram.size, lambda: BAR1, self.tasks.append
        )
        self.ram = GuestRam(RAM_BASE, RAM_SIZE)
        self.dev.mem = self.ram
        self.msis: list[int] = []
        self.dev.msi = self.msis.append
        self.next = 0

    def run(self, coro):
        return asyncio.run(coro)

    def cfg(self, off: int, size: int, value: int | None = None) -> int:
        if value is None:
            return self.run(self.dev.config_read(off, size))
        self.run(self.dev.config_write(off, size, value))
        return 0

    def reg(self, off: int, value: int | None = None) -> int:
        if value is None:
            return int.from_bytes(self.run(self.dev.bar_read(0, off, 4)), "little")
        self.run(self.dev.bar_write(0, off, value.to_bytes(4, "little")))
        return 0

    def start(self, entries: int = 8, irq: bool = True) -> None:
        self.cfg(0x04, 2, 0x6)  # memory space, bus master
        self.cfg(MSI_CAP + 4, 4, 0xA0000)
        self.cfg(MSI_CAP + 12, 2, 77)
        self.cfg(MSI_CAP + 2, 2, 1)
        self.reg(REG_RING_BASE, RING & 0xFFFFFFFF)
        self.reg(REG_RING_BASE + 4, RING >> 32)
        self.reg(REG_RING_ENTRIES, entries)
        self.reg(REG_CONTROL, CONTROL_RUN | (CONTROL_IRQ if irq else 0))

    def fill(self, n: int, cmds) -> list[int]:
        """Write ``cmds`` into the next entries of a ring of ``n``; each entry's slot."""
        slots = []
        for opcode, context, *args in cmds:
            slot = RING + (self.next % n) * ENTRY_SIZE
            args = [*args, 0, 0, 0, 0, 0][:5]
            self.ram.write(slot, ENTRY.pack(opcode, context, *args, 0x7777, 0, 0xDEAD))
            slots.append(slot)
            self.next += 1
        return slots

    def post(self, *cmds: tuple) -> list[int]:
        """Fill entries, ring the doorbell, run the device; each entry's slot."""
        slots = self.fill(self.reg(REG_RING_ENTRIES), cmds)
        self.reg(REG_DOORBELL, self.next & 0xFFFFFFFF)
        while self.tasks:
            self.run(self.tasks.pop(0))
        return slots

    def answer(self, slot: int) -> tuple[int, int, int]:
        return ENTRY.unpack(self.ram.read(slot, ENTRY_SIZE))[7:]


def test_configuration_space() -> None:
    """NVIDIA's GH100 IDs, class 0x030200, one 64 KiB BAR0 (the BAR probe answered from
    its size), no other BAR, the capability list leading to an MSI capability."""
    r = Rig()
    assert r.cfg(0x00, 2) == PCI_VENDOR_ID_NVIDIA and r.cfg(0x02, 2) == GH100_DEVICE_ID
    assert r.cfg(0x08, 4) >> 8 == 0x030200
    assert r.cfg(0x06, 2) & 0x10 and r.cfg(0x34, 1) == MSI_CAP and r.cfg(MSI_CAP, 1) == 0x05
    r.cfg(0x10, 4, 0xFFFFFFFF)
    assert r.cfg(0x10, 4) == (~(BAR0_SIZE - 1)) & 0xFFFFFFFF
    r.cfg(0x10, 4, 0xF0010000)
    assert r.cfg(0x10, 4) == 0xF0010000
    for bar in range(1, 6):
        r.cfg(0x10 + 4 * bar, 4, 0xFFFFFFFF)
        assert r.cfg(0x10 + 4 * bar, 4) == 0, f"BAR{bar}"
    assert r.cfg(0x3D, 1) == 0, "no INTx pin"
    r.cfg(MSI_CAP + 2, 2, 0xFFFF)
    assert r.cfg(MSI_CAP + 2, 2) == 0x0081, "MSI Enable set; one vector, 64-bit"


def test_control_block_identifies_the_gpu() -> None:
    r = Rig()
    assert r.reg(REG_MAGIC) == 0xFFFFFFFF, "memory space off: all ones"
    r.cfg(0x04, 2, 0x2)
    assert r.reg(REG_MAGIC) == MAGIC
    assert r.reg(REG_VRAM_SIZE) | r.reg(REG_VRAM_SIZE + 4) << 32 == 1 << 30
    assert r.reg(REG_BAR1_BASE) | r.reg(REG_BAR1_BASE + 4) << 32 == BAR1[0]


def test_commands_run_in_order_against_the_cuda_model() -> None:
    """A context, an allocation, a copy in, a memset of part, a copy out, a
    synchronisation, a free: results, done flags, COMPLETED and one MSI per doorbell's
    batch of completions; the bytes land in guest RAM."""
    r = Rig()
    r.start()
    (ctx_slot,) = r.post((Cmd.CTX_CREATE, 0))
    status, flags, ctx = r.answer(ctx_slot)
    assert (status, flags) == (0, FLAG_DONE) and ctx >= 1
    (alloc,) = r.post((Cmd.MEM_ALLOC, ctx, 4096))
    status, _, ptr = r.answer(alloc)
    assert status == 0 and ptr
    payload = bytes(range(256)) * 16
    r.ram.write(DATA, payload)
    slots = r.post(
        (Cmd.MEMCPY_HTOD, ctx, ptr, DATA, 4096),
        (Cmd.MEMSET, ctx, ptr + 100, 0xAB, 50),
        (Cmd.MEMCPY_DTOH, ctx, DATA + 0x2000, ptr, 4096),
        (Cmd.SYNCHRONIZE, ctx),
        (Cmd.MEM_FREE, ctx, ptr),
        (Cmd.NOP, 0),
    )
    assert [r.answer(s)[:2] for s in slots] == [(0, FLAG_DONE)] * 6
    want = bytearray(payload)
    want[100:150] = b"\xab" * 50
    assert r.ram.read(DATA + 0x2000, 4096) == bytes(want)
    assert r.reg(REG_COMPLETED) == r.next == 8
    assert r.msis and set(r.msis) == {77}
    assert r.dev.stats["MEMCPY_DTOH"] == 1


def test_command_errors_are_named_and_the_ring_goes_on() -> None:
    r = Rig()
    r.start()
    (c,) = r.post((Cmd.CTX_CREATE, 0))
    ctx = r.answer(c)[2]
    (a,) = r.post((Cmd.MEM_ALLOC, ctx, 64))
    ptr = r.answer(a)[2]
    slots = r.post(
        (99, ctx),  # no such command
        (Cmd.MEM_ALLOC, ctx + 5, 64),  # no such context
        (Cmd.MEMCPY_DTOH, ctx, 0x10, ptr, 16),  # guest memory that is not there
        (Cmd.MEM_FREE, ctx, 0x1234),  # not an allocation: CUDA's error
        (Cmd.MEMSET, ctx, 0, 0, 64 << 20),  # more than one command moves
        (Cmd.MEM_ALLOC, ctx, 64),
    )
    got = [r.answer(s)[0] for s in slots]
    assert got[:3] == [-errno.EINVAL, -errno.EINVAL, -errno.EFAULT], got
    assert got[3] == int(cudaError.cudaErrorInvalidValue), got
    assert got[4] == -errno.EINVAL and got[5] == 0, got
    assert all(r.answer(s)[1] == FLAG_DONE for s in slots)


def test_destroying_a_context_frees_what_it_allocated() -> None:
    r = Rig()
    r.start()
    free = r.gpu.vram_free_bytes
    (c,) = r.post((Cmd.CTX_CREATE, 0))
    ctx = r.answer(c)[2]
    r.post((Cmd.MEM_ALLOC, ctx, 8 << 20), (Cmd.MEM_ALLOC, ctx, 4 << 20))
    assert r.gpu.vram_free_bytes < free
    (d,) = r.post((Cmd.CTX_DESTROY, ctx))
    assert r.answer(d)[0] == 0 and r.gpu.vram_free_bytes == free
    (again,) = r.post((Cmd.MEM_ALLOC, ctx, 64))
    assert r.answer(again)[0] == -errno.EINVAL, "the context is gone"


@pytest.mark.parametrize(
    "setup",
    ["entries", "alignment", "bus_master", "runaway"],
)
def test_a_ring_the_device_cannot_read_stops_it(setup: str) -> None:
    """A ring of a size that is not a power of two, a misaligned base, no bus mastering,
    or a doorbell more than the ring ahead: nothing runs, STATUS_RING_ERROR, and Run
    clears until the ring is set up again."""
    r = Rig()
    r.start(entries=6 if setup == "entries" else 8)
    if setup == "alignment":
        r.reg(REG_RING_BASE, (RING + 8) & 0xFFFFFFFF)
    if setup == "bus_master":
        r.cfg(0x04, 2, 0x2)
    if setup == "runaway":
        r.reg(REG_DOORBELL, 9)
        while r.tasks:
            r.run(r.tasks.pop(0))
    else:
        r.post((Cmd.NOP, 0))
    assert r.reg(REG_STATUS) & STATUS_RING_ERROR
    assert not r.reg(REG_CONTROL) & CONTROL_RUN
    assert r.reg(REG_COMPLETED) == 0 and not r.dev.stats
    r.cfg(0x04, 2, 0x6)
    r.reg(REG_RING_BASE, RING & 0xFFFFFFFF)
    r.reg(REG_RING_ENTRIES, 8)
    r.reg(REG_CONTROL, CONTROL_RUN)
    assert r.reg(REG_STATUS) == 0 and r.reg(REG_DOORBELL) == 0, "a restarted ring is empty"
    r.next = 0
    (s,) = r.post((Cmd.NOP, 0))
    assert r.answer(s)[:2] == (0, FLAG_DONE)


def test_entry_layout() -> None:
    """64 bytes: opcode, context, five arguments, then what the device writes."""
    raw = ENTRY.pack(1, 2, 3, 4, 5, 6, 7, -8, 9, 10)
    assert struct.unpack_from("<II", raw) == (1, 2)
    assert struct.unpack_from("<iIQ", raw, 48) == (-8, 9, 10)


# --- nv-p2p through the ring ---------------------------------------------------------------


class AioCompletion:
    """``struct completion`` on asyncio (the device's bounded wait for a callback)."""

    def __init__(self) -> None:
        self.ev = asyncio.Event()

    def complete(self) -> None:
        self.ev.set()

    def reinit(self) -> None:
        self.ev.clear()

    @property
    def done(self) -> bool:
        return self.ev.is_set()

    async def wait(self, timeout_ns: float) -> bool:
        try:
            await asyncio.wait_for(self.ev.wait(), timeout=2.0)
        except TimeoutError:
            return False
        return True


EVENTS = RAM_BASE + 0x4000
TABLE = RAM_BASE + 0x6000


class P2pRig(Rig):
    """The device with nv-p2p and an event ring, its commands run as asyncio tasks."""

    def __init__(self, events: bool = True) -> None:
        super().__init__()
        self.p2p = NvidiaP2P(self.gpu)
        self.dev.p2p = self.p2p
        self.dev.completion = AioCompletion
        self.dev.spawn = lambda coro: self.tasks.append(asyncio.ensure_future(coro))
        self.events = events

    async def areg(self, off: int, value: int | None = None) -> int:
        if value is None:
            return int.from_bytes(await self.dev.bar_read(0, off, 4), "little")
        await self.dev.bar_write(0, off, value.to_bytes(4, "little"))
        return 0

    async def apost(self, *cmds: tuple) -> list[int]:
        slots = self.fill(await self.areg(REG_RING_ENTRIES), cmds)
        await self.areg(REG_DOORBELL, self.next & 0xFFFFFFFF)
        return slots

    async def settle(self) -> None:
        for _ in range(20):
            await asyncio.sleep(0)

    async def begin(self) -> int:
        d = self.dev
        await d.config_write(0x04, 2, 0x6)
        await d.config_write(MSI_CAP + 4, 4, 0xA0000)
        await d.config_write(MSI_CAP + 12, 2, 77)
        await d.config_write(MSI_CAP + 2, 2, 1)
        await self.areg(REG_RING_BASE, RING & 0xFFFFFFFF)
        await self.areg(REG_RING_BASE + 4, RING >> 32)
        await self.areg(REG_RING_ENTRIES, 8)
        await self.areg(REG_CONTROL, CONTROL_RUN | CONTROL_IRQ)
        if self.events:
            await self.areg(REG_EVENT_BASE, EVENTS & 0xFFFFFFFF)
            await self.areg(REG_EVENT_BASE + 4, EVENTS >> 32)
            await self.areg(REG_EVENT_ENTRIES, 4)
        (c,) = await self.apost((Cmd.CTX_CREATE, 0))
        await self.settle()
        return self.answer(c)[2]


def test_p2p_pages_free_callback_and_release() -> None:
    """get_pages writes the pin's BAR1 bus addresses into the guest's table; cudaFree of
    pinned memory posts a free-callback event (and its MSI) and does not complete, nor
    unmap BAR1, until the driver writes the handle to CALLBACK_DONE; put_pages then
    finds the pin gone; a pin released with put_pages never calls back."""

    async def scenario() -> None:
        r = P2pRig()
        ctx = await r.begin()
        (a,) = await r.apost((Cmd.MEM_ALLOC, ctx, 2 << 20))
        await r.settle()
        va = r.answer(a)[2]
        (g,) = await r.apost((Cmd.P2P_GET_PAGES, ctx, va, 128 << 10, TABLE, 8))
        await r.settle()
        status, _, handle = r.answer(g)
        assert status == 0 and handle
        entries, size, *pages = struct.unpack("<QQ2Q", r.ram.read(TABLE, 32))
        assert (entries, size) == (2, 1)  # 64 KiB pages
        pin = next(iter(r.gpu.pins.values()))
        base = r.gpu.bar1_bus_address
        assert pages == [base + b * (64 << 10) for b in pin.bar1_pages]
        msis = len(r.msis)
        (f,) = await r.apost((Cmd.MEM_FREE, ctx, va))
        await r.settle()
        assert await r.areg(REG_EVENT_HEAD) == 1 and len(r.msis) > msis
        got = EVENT.unpack(r.ram.read(EVENTS, EVENT_SIZE))
        assert got == (EVENT_P2P_FREE, EVENT_FLAG_VALID, handle)
        assert r.answer(f)[1] == 0, "cudaFree returned before the free callback"
        assert pin.state == PinState.REVOKING, "BAR1 unmapped before the callback returned"
        await r.areg(REG_EVENT_TAIL, 1)
        await r.areg(REG_CALLBACK_DONE, handle)
        await r.settle()
        assert r.answer(f)[:2] == (0, FLAG_DONE)
        assert pin.state == PinState.REVOKED
        (p,) = await r.apost((Cmd.P2P_PUT_PAGES, ctx, handle, va))
        await r.settle()
        assert r.answer(p)[0] == -errno.EINVAL, "the pin is gone"
        # pinned and released: no callback; persistent: its own put
        (a2,) = await r.apost((Cmd.MEM_ALLOC, ctx, 2 << 20))
        await r.settle()
        va2 = r.answer(a2)[2]
        g2, gp = await r.apost(
            (Cmd.P2P_GET_PAGES, ctx, va2, 64 << 10, TABLE, 8),
            (Cmd.P2P_GET_PAGES_PERSISTENT, ctx, va2 + (64 << 10), 64 << 10, TABLE + 0x100, 8),
        )
        await r.settle()
        h2, hp = r.answer(g2)[2], r.answer(gp)[2]
        slots = await r.apost(
            (Cmd.P2P_PUT_PAGES_PERSISTENT, ctx, h2, va2),  # the wrong kind
            (Cmd.P2P_PUT_PAGES, ctx, h2, va2),
            (Cmd.P2P_PUT_PAGES_PERSISTENT, ctx, hp, va2 + (64 << 10)),
            (Cmd.MEM_FREE, ctx, va2),
        )
        await r.settle()
        assert [r.answer(s)[0] for s in slots] == [-errno.EINVAL, 0, 0, 0]
        assert await r.areg(REG_EVENT_HEAD) == 1, "a released pin called back"
        assert not r.dev.pins and r.p2p.live_mappings() == 0

    asyncio.run(scenario())


def test_p2p_refusals() -> None:
    """Unaligned or non-GPU memory (nv-p2p's -EINVAL), a table too small (-ENOSPC, the pin
    undone), and pinned memory freed with no event ring: the event is lost
    (STATUS_EVENT_LOST) and the pages unmapped at once, nobody being able to run the
    callback."""

    async def scenario() -> None:
        r = P2pRig(events=False)
        ctx = await r.begin()
        (a,) = await r.apost((Cmd.MEM_ALLOC, ctx, 2 << 20))
        await r.settle()
        va = r.answer(a)[2]
        slots = await r.apost(
            (Cmd.P2P_GET_PAGES, ctx, va + 4096, 64 << 10, TABLE, 8),
            (Cmd.P2P_GET_PAGES, ctx, 0x1000_0000_0000, 64 << 10, TABLE, 8),
            (Cmd.P2P_GET_PAGES, ctx, va, 256 << 10, TABLE, 2),
            (Cmd.P2P_GET_PAGES, ctx, va, 64 << 10, TABLE, 1),
            (Cmd.MEM_FREE, ctx, va),
        )
        await r.settle()
        got = [r.answer(s)[0] for s in slots]
        assert got[:3] == [-errno.EINVAL, -errno.EINVAL, -errno.ENOSPC], got
        assert got[3] == 0 and got[4] == 0, got
        assert await r.areg(REG_STATUS) & STATUS_EVENT_LOST
        states = [p.state for p in r.gpu.pins.values()]
        assert states == [PinState.RELEASED, PinState.REVOKED], states  # ENOSPC's undone

    asyncio.run(scenario())


def test_the_c_header_is_the_device() -> None:
    """guest/include/pevb_gpu_regs.h, which the guest's driver builds with, says what
    the device model does: every register, bit, size and command."""
    import re
    from pathlib import Path

    import tb.guest.gpu as gpu

    header = Path(__file__).parents[2] / "guest" / "include" / "pevb_gpu_regs.h"
    macros = {
        m.group(1): int(m.group(2), 0)
        for m in re.finditer(r"#define PEVB_GPU_(\w+) (0x[0-9a-fA-F]+|\d+)", header.read_text())
    }
    want = {
        "BAR0_SIZE": gpu.BAR0_SIZE,
        "MAGIC": gpu.MAGIC,
        "VERSION": gpu.VERSION,
        "MAX_RING": gpu.MAX_RING,
        "MAX_COPY": gpu.MAX_COPY,
        "MAX_KERNEL_NAME": gpu.MAX_KERNEL_NAME,
        "MAX_PARAMS": gpu.MAX_PARAMS,
        "ENTRY_SIZE": gpu.ENTRY_SIZE,
        "EVENT_SIZE": gpu.EVENT_SIZE,
        "FLAG_DONE": gpu.FLAG_DONE,
        "EVENT_P2P_FREE": gpu.EVENT_P2P_FREE,
        "EVENT_FLAG_VALID": gpu.EVENT_FLAG_VALID,
    }
    for name in dir(gpu):
        if name.startswith(("REG_", "CONTROL_", "STATUS_")):
            want[name] = getattr(gpu, name)
    want.update({f"CMD_{c.name}": int(c) for c in gpu.Cmd})
    assert {k: macros.get(k) for k in want} == want
    assert set(macros) == set(want), set(macros) ^ set(want)
