"""The shared test harness: a booted :class:`~tb.env.system.TB` with a descriptor ring and
both channels, data patterns, result checks, pinned GPU surfaces and the recovery step;
and for the driver-level tests and demos, a booted machine with the driver model loaded
(:func:`bring_up`, :class:`Rig`).

Every cocotb test module builds on these; none of them exports helpers of its own.
"""

from __future__ import annotations

import itertools
import os
import random
from dataclasses import dataclass

import numpy as np
from cocotb.triggers import RisingEdge, Timer

from cuda_model import CUpointer_attribute, PeerDevice, cudaMemcpyKind, fill_surface
from cuda_model.gpu import BIG_PAGE_SIZE
from driver_model import regs
from driver_model.desc import DESC_SIZE, Segment, build_chain
from driver_model.host import UserProcess
from driver_model.p2p import p2p_chunks, pin_range
from driver_model.picoevb import DriverConfig, PicoevbFile, PicoevbRdma
from driver_model.regs import Stat, Target
from driver_model.xdma import ChannelResult, XdmaChannel

from .backdoor import engine, read_card_ram
from .platform import TbPlatform
from .system import TB

GUARD = 0xA5
PAGE = 4096
KIB = 1024
# a host address no region of the root complex decodes (reads complete with UR)
UNMAPPED_HOST = 0x0000_4000_0000_0000
# the descriptor ring's size and its name as a fault target (FaultRule(target="desc"))
RING_BYTES = 64 * PAGE
RING_TARGET = "desc"

D2H = cudaMemcpyKind.cudaMemcpyDeviceToHost
SYNC_MEMOPS = CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS


def pattern(n: int, seed: int) -> bytes:
    """``n`` seeded random bytes."""
    return random.Random(seed).randbytes(n)


class Harness:
    """A TB plus a host descriptor ring and the H2C and C2H channels of the engine (MSI
    vector 0 wakes both)."""

    def __init__(self, tb: TB) -> None:
        self.tb = tb
        self.platform = TbPlatform(tb)
        self.h2c_channels = tb.profile.h2c_channels
        self.c2h_channels = tb.profile.c2h_channels
        self.h2c = XdmaChannel(self.platform, Target.H2C, h2c_channels=self.h2c_channels)
        self.c2h = XdmaChannel(self.platform, Target.C2H, h2c_channels=self.h2c_channels)
        for ch in (self.h2c, self.c2h):  # both on the channel vector register's reset value
            tb.irq_handlers[ch.vector].append(ch.interrupt)
        self.ram_size = tb.profile.ram_size
        self.ring = tb.alloc_host(RING_BYTES, "descriptor ring")
        self.ring_base = self.ring.get_absolute_address(0)
        self.ring_next = 0
        tb.faults.name_range(self.ring_base, RING_BYTES, RING_TARGET)

    async def all_channels(self) -> list[XdmaChannel]:
        """Every channel of the build (H2C first), each on an MSI vector of its own: the
        index of its interrupt bit, programmed into the channel vector registers. (The
        ``h2c``/``c2h`` channels keep vector 0: use these instead after this call.)"""
        chans = [
            XdmaChannel(self.platform, d, n, h2c_channels=self.h2c_channels)
            for d, count in ((Target.H2C, self.h2c_channels), (Target.C2H, self.c2h_channels))
            for n in range(count)
        ]
        words = [0] * len(regs.IRQ_CHAN_VECTOR)
        for ch in chans:
            bit = ch.irq_bit.bit_length() - 1
            ch.vector = bit
            reg, field = regs.vector_field(bit)
            words[reg] |= field.put(bit)
            self.tb.irq_handlers[ch.vector].append(ch.interrupt)
        for off, word in zip(regs.IRQ_CHAN_VECTOR, words, strict=True):
            await self.tb.dma_write32(regs.irq_reg(off), word)
        return chans

    def place_chain(self, segments, **kw):
        """Build a chain for ``segments`` in the descriptor ring and write it to host
        memory; ``build_chain`` keywords pass through (``ring_offset`` shifts the chain)."""
        n = len(segments)
        need = ((n * DESC_SIZE + PAGE - 1) // PAGE) * PAGE
        if self.ring_next + need > RING_BYTES:
            self.ring_next = 0
        base = self.ring_base + self.ring_next + kw.pop("ring_offset", 0)
        self.ring_next += need + PAGE
        chain = build_chain(segments, base, **kw)
        self.write_chain(chain)
        return chain

    def write_chain(self, chain) -> None:
        """(Re)write a chain's descriptors into the ring."""
        for addr, data in chain.blocks().items():
            off = addr - self.ring_base
            self.ring[off : off + len(data)] = data

    async def run(self, ch: XdmaChannel, segments, **kw) -> ChannelResult:
        """Place a chain for ``segments`` and run it on ``ch``; the keywords of
        :meth:`XdmaChannel.run` and of :meth:`place_chain` both pass through."""
        run_kw = {
            k: kw.pop(k) for k in ("interrupt", "poll_wb_addr", "timeout_ns", "control") if k in kw
        }
        chain = self.place_chain(segments, **kw)
        self.tb.clear_msi()
        res = await ch.run(chain, **run_kw)
        if res.timed_out:
            self.snapshot(ch)
        return res

    def snapshot(self, ch: XdmaChannel) -> None:
        """Log the descriptor engine's state (debug aid for timeouts)."""
        xdma = engine(self.tb.dut)
        d = (xdma.h2c if ch.direction == Target.H2C else xdma.c2h)[ch.channel].chan_inst.desc_inst
        names = (
            "running_reg",
            "stopping_reg",
            "error_reg",
            "inflight_reg",
            "fetch_out_reg",
            "fetch_rem_reg",
            "flush_pending_reg",
            "wb_pending_reg",
            "rd_ptr_reg",
            "wr_ptr_reg",
            "count_reg",
        )
        self.tb.log.warning("engine: %s", " ".join(f"{n}={getattr(d, n).value}" for n in names))

    def card_image(self, whole: bool = False) -> np.ndarray:
        """The whole card RAM, read through the backdoor (``whole``: every word read,
        not only the pages written since the last read)."""
        return read_card_ram(self.tb.dut, self.ram_size, self.tb.profile.width // 8, whole=whole)

    async def host_source(self, n: int, seed: int) -> tuple[int, bytes]:
        """A fresh host buffer of ``n`` pattern bytes: (bus address, the bytes)."""
        buf = self.tb.alloc_host(n)
        data = pattern(n, seed)
        buf[0:n] = data
        return buf.get_absolute_address(0), data


async def setup(dut, irq: str = "msi", **tb_kwargs) -> Harness:
    """Boot a TB (keywords go to :class:`TB`) with the function bound on ``irq`` ("msi"
    or "msix"), and its harness."""
    tb = TB(dut, **tb_kwargs)
    await tb.init(irq=irq)
    return Harness(tb)


def check_ok(res: ChannelResult, count: int, what: str) -> None:
    """The run finished, without an error, having completed ``count`` descriptors."""
    assert not res.timed_out, f"{what}: timed out, status {res.status:#010x}"
    assert res.errors == 0, f"{what}: error status {res.status:#010x}"
    assert res.completed_count == count, f"{what}: completed {res.completed_count} != {count}"
    assert not res.status & Stat.BUSY


async def run_pair(h: Harness, h2c_segs, c2h_segs) -> None:
    """One H2C chain, then one C2H chain, each checked."""
    res = await h.run(h.h2c, h2c_segs, timeout_ns=20e6)
    check_ok(res, len(h2c_segs), "H2C")
    res = await h.run(h.c2h, c2h_segs, timeout_ns=20e6)
    check_ok(res, len(c2h_segs), "C2H")


def _slot(off: int, n: int) -> int:
    return ((off + n + 2 * PAGE) // PAGE + 1) * PAGE


async def roundtrip(h: Harness, pieces: list[tuple[int, int, int]], seed: int = 1) -> None:
    """Copy host -> card -> host for (src_offset, card_addr, length) pieces, checking guards.

    Each piece gets its own source and destination area in fresh host buffers, so the
    chains are scatter lists; the destination is fully compared, guard bytes included.
    """
    total_span = sum(_slot(off, n) for off, _, n in pieces)
    src = h.tb.alloc_host(total_span)
    dst = h.tb.alloc_host(total_span)
    dst[0:total_span] = bytes([GUARD]) * total_span
    sbase, dbase = src.get_absolute_address(0), dst.get_absolute_address(0)
    h2c_segs, c2h_segs, expect = [], [], []
    pos = 0
    for i, (off, card, n) in enumerate(pieces):
        data = pattern(n, seed * 1000 + i)
        src[pos + off : pos + off + n] = data
        h2c_segs.append(Segment(sbase + pos + off, card, n))
        c2h_segs.append(Segment(card, dbase + pos + off, n))
        expect.append((pos + off, data))
        pos += _slot(off, n)
    await run_pair(h, h2c_segs, c2h_segs)
    image = bytearray([GUARD]) * total_span
    for off, data in expect:
        image[off : off + len(data)] = data
    got = bytes(dst[0:total_span])
    if got != bytes(image):
        first = next(i for i in range(total_span) if got[i] != image[i])
        raise AssertionError(
            f"destination differs at offset {first:#x}: "
            f"got {got[first]:#04x} expected {image[first]:#04x}"
        )


async def hold_rc_until_waiting(dev, taken: int) -> None:
    """Once the RC transactor has played what the model wrote past ``taken`` beats (a
    descriptor's completion went to the RTL), pause RC (the caller lifts the pause: the
    RTL then takes nothing on RC) until completions wait in the hard-IP model ``dev``
    for the transactor to take them (more than 8 of them, or 200 us)."""
    rc = dev.rc_source
    edge = RisingEdge(dev.user_clk)
    for _ in range(200_000):
        await edge
        if rc._pushed > taken and rc._taken() == rc._pushed:
            break
    rc.set_pause_generator(itertools.repeat(1))
    for _ in range(200):
        await Timer(1, "us")
        if dev.rx_buf_cplh_fc_count > 8:
            break


async def recover(h: Harness) -> None:
    """After an error: a fresh chain (a Run toggle) copies correctly."""
    await roundtrip(h, [(1, 100, 3000)], seed=99)


class Surface:
    """A cudaMalloc'd, filled and pinned surface mapped for the FPGA (as picoevb does):
    ``fill_surface`` words of a surface ``width`` words wide, XORed with ``xor_val``."""

    def __init__(
        self, tb: TB, size: int, xor_val: int = 0, width: int = 256, own_range: bool = False
    ) -> None:
        self.tb, self.size = tb, size
        rt = tb.cuda
        # a small surface shares a 2 MiB pool chunk, which (and whose pins) outlives its
        # cudaFree while other buffers live in it; ``own_range`` allocates at least
        # 2 MiB, a range of its own that cudaFree releases (and revokes) at once
        self.va = rt.cudaMalloc(max(size, BIG_PAGE_SIZE) if own_range else size)
        rt.cuPointerSetAttribute(1, SYNC_MEMOPS, self.va)
        fill_surface(rt, self.va, xor_val, width, size // (4 * width))
        rt.cudaDeviceSynchronize()
        self.va_aligned, self.offset, aligned_len = pin_range(self.va, size)
        self.freed: list = []
        rc, self.pt = tb.p2p.nvidia_p2p_get_pages(
            0, 0, self.va_aligned, aligned_len, self._free_callback, "surface"
        )
        assert rc == 0, f"nvidia_p2p_get_pages: {rc}"
        rc, self.map = tb.p2p.nvidia_p2p_dma_map_pages(PeerDevice("fpga"), self.pt)
        assert rc == 0, f"nvidia_p2p_dma_map_pages: {rc}"

    def _free_callback(self, data) -> None:
        self.freed.append(data)
        assert self.tb.p2p.nvidia_p2p_free_dma_mapping(self.map) == 0
        assert self.tb.p2p.nvidia_p2p_free_page_table(self.pt) == 0

    def chunks(self, offset: int, length: int) -> list[tuple[int, int]]:
        """Bus (address, length) runs of ``[offset, offset+length)`` of the surface."""
        return p2p_chunks(self.map.dma_addresses, self.offset + offset, length)

    def read(self, offset: int, length: int) -> bytes:
        """Surface bytes through cudaMemcpy."""
        out = bytearray(length)
        self.tb.cuda.cudaMemcpy(out, self.va + offset, length, D2H)
        return bytes(out)


def segments(chunks, card: int, to_card: bool) -> list[Segment]:
    """Descriptors between bus ``chunks`` and consecutive card addresses from ``card``."""
    segs = []
    for addr, n in chunks:
        segs.append(Segment(addr, card, n) if to_card else Segment(card, addr, n))
        card += n
    return segs


@dataclass
class Rig:
    """A booted machine: the system, the loaded driver, one user process with the device
    open, and that process's CUDA runtime."""

    tb: TB
    platform: TbPlatform
    drv: PicoevbRdma
    process: UserProcess
    fd: PicoevbFile

    @property
    def cuda(self):
        return self.tb.cuda

    def open(self) -> PicoevbFile:
        """Another ``open("/dev/picoevb")`` by the same process."""
        return self.drv.open(self.process)


async def bring_up(dut, config: DriverConfig | None = None, **tb_kwargs) -> Rig:
    """Reset and enumerate, load the driver (probe), start a process that opens the device."""
    tb = TB(dut, **tb_kwargs)
    await tb.init(bind=False)
    seed = int(os.environ.get("SEED", "1"))
    platform = TbPlatform(tb, seed=seed)
    drv = PicoevbRdma(platform, tb.p2p, config, dmabuf=tb.dmabuf)
    await drv.probe()
    process = UserProcess(platform.host)
    tb.cuda.process = process  # (what cudaHostRegister pins)
    # the process's CUDA exports dma-bufs into its own descriptor table
    tb.cuda.dma_buf_export = lambda ops, size: tb.dmabuf.export_fd(process, ops, size)
    return Rig(tb, platform, drv, process, drv.open(process))
