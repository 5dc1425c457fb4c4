"""The picoevb-rdma driver model's DMA: the engine side (descriptor chains built, started,
waited for and checked; H2C2H in chunks) and the DMA ioctls (H2C, C2H, H2C2H from user
buffers and surfaces)."""

from __future__ import annotations

import errno
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import regs, uapi
from .desc import MAX_CHAIN, Segment, build_chain, pair_scatter, split_segments
from .host import PAGE_MASK, PAGE_SIZE
from .p2p import p2p_chunks
from .regs import BAR_DMA, Target
from .sg import Scatter, overlaps, page_chunks, slice_scatter
from .xdma import ALL_ONES, Outcome

if TYPE_CHECKING:
    pass

from .picoevb_state import (
    DESC_CHUNK_MAX,
    FAIL_BITS,
    H2C2H_CHUNK_MAX,
    H2C2H_FLAGS,
    INT_MAX,
    Channel,
    RunRecord,
    Transfer,
    UserBuf,
)

log = logging.getLogger("driver_model.picoevb")


class DmaEngine:
    """Of :class:`PicoevbRdma`: the DMA engine side of the driver: descriptor chains
    started, waited for and checked, H2C2H in chunks (its state and helpers are
    PicoevbRdma's)."""

    def timeout_ns(self, nbytes: int) -> float:
        """The timeout of a chain moving ``nbytes``."""
        return self.config.timeout_base_ns + nbytes * self.config.timeout_ns_per_byte

    def _check_alignment(self, ch: Channel, segs: Sequence[Segment]) -> bool:
        addr_align, len_gran, _bits = self.alignments[ch.direction]
        return all(
            s.src % addr_align == 0 and s.dst % addr_align == 0 and s.length % len_gran == 0
            for s in segs
        )

    async def _start(self, ch: Channel, segs: list[Segment], xfer: Transfer) -> None:
        chain = build_chain(segs, ch.ring.bus, max_len=DESC_CHUNK_MAX)
        for addr, data in chain.blocks().items():
            ch.ring.write(addr - ch.ring.bus, data)
        ch.expected = len(chain)
        ch.nbytes = sum(s.length for s in chain.segments)
        poll = self.config.poll_mode
        if poll:
            ch.wb.write(0, bytes(4))
        xfer.waiting.add(ch)
        ch.t_start = self.platform.now_ns()
        ch.epoch = self.epoch
        await ch.xdma.start(chain, interrupt=not poll, poll_wb_addr=ch.wb.bus if poll else None)

    async def _dump(self, ch: Channel, status: int, count: int, why: str) -> None:
        p = self.platform
        x = ch.xdma
        desc = (await p.ioread32(BAR_DMA, x.sgreg(regs.SG_DESC_HI)) << 32) | await p.ioread32(
            BAR_DMA, x.sgreg(regs.SG_DESC_LO)
        )
        control = await p.ioread32(BAR_DMA, x.reg(regs.CH_CONTROL))
        req = await p.ioread32(BAR_DMA, regs.irq_reg(regs.IRQ_CHAN_INT_REQ))
        log.warning(
            "%s: %s %s: status %#010x (%s), completed %d of %d descriptors, "
            "control %#010x, first descriptor %#x, channel irq request %#x, "
            "MSIs on vector %d: %d",
            self.name,
            ch.name,
            why,
            status,
            regs.describe_status(status, ch.direction),
            count,
            ch.expected,
            control,
            desc,
            req,
            ch.vector,
            p.irq_count(ch.vector),
        )

    async def _finish(self, ch: Channel, xfer: Transfer) -> int:
        """Wait for the chain on ``ch``, stop the channel, check it: 0 or -errno. The
        channel is idle when this returns: one that does not drain is reset."""
        cfg = self.config
        outcome = Outcome.ABORT
        try:
            # (a reset for the other channel may already have ended this chain)
            if ch.epoch == self.epoch:
                outcome = await ch.xdma.wait(
                    ch.t_start + self.timeout_ns(ch.nbytes),
                    interrupt=not cfg.poll_mode,
                    writeback=ch.writeback if cfg.poll_mode else None,
                    expected=ch.expected,
                    aborted=lambda: xfer.aborted is not None,
                    poll_interval_ns=cfg.poll_interval_ns,
                    status_every=cfg.poll_status_every,
                )
        finally:
            xfer.waiting.discard(ch)
        if ch.epoch != self.epoch:
            # the function was or is being reset under this chain: the reset ends it
            await self._reset_ended()
            log.warning("%s: %s chain ended by a function reset", self.name, ch.name)
            return self._record(ch, xfer.fail(errno.EIO, f"{ch.name} ended by a function reset"))
        res = await ch.xdma.finish(outcome, ch.t_start, cfg.stop_drain_ns)
        status, count, outcome = res.status, res.completed_count, res.outcome
        if outcome is Outcome.DONE and ALL_ONES not in (status, count):
            if xfer.aborted:
                rc = -xfer.err
            elif status & FAIL_BITS:
                await self._dump(ch, status, count, "failed")
                rc = xfer.fail(errno.EIO, f"the {ch.name} engine reported an error ({status:#x})")
            elif count != ch.expected:
                why = f"{ch.name} completed {count} of {ch.expected} descriptors"
                await self._dump(ch, status, count, why)
                rc = xfer.fail(errno.EIO, why)
            else:
                rc = 0
        elif outcome is Outcome.NO_ANSWER or ALL_ONES in (res.status, res.completed_count):
            # a register read failed: what the engine did cannot be known
            log.error(
                "%s: %s: a register read returned all ones (the device did not answer); "
                "after stop: status %#010x, completed %#x",
                self.name,
                ch.name,
                status,
                count,
            )
            rc = xfer.fail(errno.EIO, f"{ch.name}: the device did not answer a register read")
        elif outcome is Outcome.TIMEOUT:
            hint = (
                "still busy after stop"
                if res.busy
                else "engine idle: the interrupt was lost"
                if count == ch.expected
                else "engine stopped early"
            )
            await self._dump(
                ch, status, count, f"timed out after {self.timeout_ns(ch.nbytes):.0f} ns ({hint})"
            )
            # an engine that stopped on an error whose interrupt never came failed (EIO)
            err = errno.EIO if status & regs.STAT_ERROR_MASK and not res.busy else errno.ETIMEDOUT
            rc = xfer.fail(err, f"{ch.name} timed out ({hint})")
        else:
            log.warning(
                "%s: %s stopped after %d of %d descriptors: %s",
                self.name,
                ch.name,
                count,
                ch.expected,
                xfer.aborted,
            )
            rc = -xfer.err
        if res.busy and ch.epoch == self.epoch:
            # its reads may still land: the buffers must not be given back before it stops
            why = f"{ch.name} still busy {cfg.stop_drain_ns:.0f} ns after it was stopped"
            await self.reset_engine(why)
            rc = rc or xfer.fail(errno.EIO, why)
        elif ch.epoch != self.epoch:
            # someone reset the function while this chain was being stopped
            await self._reset_ended()
            rc = rc or xfer.fail(errno.EIO, f"{ch.name} ended by a function reset")
        return self._record(ch, rc)

    def _record(self, ch: Channel, rc: int) -> int:
        p = self.platform
        self.runs.append(
            RunRecord(ch.direction, ch.t_start, p.now_ns(), ch.expected, ch.nbytes, rc)
        )
        return rc

    async def _run(self, direction: Target, segs: list[Segment], xfer: Transfer) -> int:
        """Move ``segs`` on one channel as chains of at most MAX_CHAIN descriptors."""
        ch = self._chans[direction]
        segs = split_segments(segs, DESC_CHUNK_MAX)
        if not self._check_alignment(ch, segs):
            return xfer.fail(errno.EINVAL, f"breaks the {ch.name} engine's alignment")
        for i in range(0, len(segs), MAX_CHAIN):
            if xfer.aborted:
                return -xfer.err
            await self._start(ch, segs[i : i + MAX_CHAIN], xfer)
            rc = await self._finish(ch, xfer)
            if rc:
                return rc
        return 0

    async def _h2c2h(self, src: Scatter, dst: Scatter, length: int, xfer: Transfer) -> int:
        """Source -> card RAM -> destination in chunks of half the card RAM, the H2C of
        chunk k+1 overlapping the C2H of chunk k. Where source and destination share
        bytes, that would read source bytes an earlier chunk already overwrote at another
        time than the original does: copy as the original does instead."""
        if overlaps(src, dst):
            return await self._h2c2h_in_order(src, dst, xfer)
        half = min(self.fpga_ram_size // 2, H2C2H_CHUNK_MAX)
        chunks = [
            (off, min(half, length - off), (k % 2) * half)
            for k, off in enumerate(range(0, length, half))
        ]
        h2c_segs = [
            pair_scatter(slice_scatter(src, off, n), [(card, n)]) for off, n, card in chunks
        ]
        c2h_segs = [
            pair_scatter([(card, n)], slice_scatter(dst, off, n)) for off, n, card in chunks
        ]
        h2c, c2h = self._chans[Target.H2C], self._chans[Target.C2H]
        if not all(self._check_alignment(h2c, s) for s in h2c_segs) or not all(
            self._check_alignment(c2h, s) for s in c2h_segs
        ):
            return xfer.fail(errno.EINVAL, "breaks the engines' alignment")
        if xfer.aborted:
            return -xfer.err
        await self._start(h2c, h2c_segs[0], xfer)
        rc = await self._finish(h2c, xfer)
        for k in range(len(chunks)):
            if rc:
                return rc
            if xfer.aborted:
                return -xfer.err
            await self._start(c2h, c2h_segs[k], xfer)
            more = k + 1 < len(chunks)
            if more:
                await self._start(h2c, h2c_segs[k + 1], xfer)
            rc_c2h = await self._finish(c2h, xfer)
            rc_h2c = await self._finish(h2c, xfer) if more else 0
            rc = rc_c2h or rc_h2c
        return rc

    async def _h2c2h_in_order(self, src: Scatter, dst: Scatter, xfer: Transfer) -> int:
        """The original's H2C2H: chunks no longer than a source run, a destination run
        and the card RAM, each copied to card RAM offset 0 and back before the next one
        is read."""
        h2c, c2h = self._chans[Target.H2C], self._chans[Target.C2H]
        limit = min(self.fpga_ram_size, DESC_CHUNK_MAX)
        for piece in split_segments(pair_scatter(src, dst), limit):
            h2c_segs = [Segment(piece.src, 0, piece.length)]
            c2h_segs = [Segment(0, piece.dst, piece.length)]
            if not self._check_alignment(h2c, h2c_segs) or not self._check_alignment(c2h, c2h_segs):
                return xfer.fail(errno.EINVAL, "breaks the engines' alignment")
            for ch, segs in ((h2c, h2c_segs), (c2h, c2h_segs)):
                if xfer.aborted:
                    return -xfer.err
                await self._start(ch, segs, xfer)
                rc = await self._finish(ch, xfer)
                if rc:
                    return rc
        return 0


class DmaIoctls:
    """Of :class:`PicoevbFile`: the DMA ioctls: user buffers and surfaces as scatter lists,
    H2C, C2H and H2C2H (its state and helpers are PicoevbFile's)."""

    def _get_userbuf(
        self, ptr: int, length: int, is_cuda: bool, xfer: Transfer, write: bool = False
    ) -> tuple[int, UserBuf | None]:
        """The bus chunks of a host pointer or a CUDA handle, ``length`` bytes; host pages
        the device writes (``write``) are pinned for writing (FOLL_WRITE)."""
        if is_cuda:
            if ptr > INT_MAX:
                return xfer.fail(errno.EINVAL, f"handle {ptr} is above INT_MAX"), None
            surf = self.surfaces.get(ptr)
            if surf is None:  # unknown, or dropped by the free callback
                why = f"no CUDA surface has handle {ptr} (never pinned, unpinned, or freed)"
                return xfer.fail(errno.EINVAL, why), None
            if length > surf.length:
                why = f"length {length} exceeds CUDA surface {ptr} ({surf.length} bytes)"
                return xfer.fail(errno.EINVAL, why), None
            if surf.dmabuf is not None:  # mapped at pin time, never moved nor revoked
                surf.transfers.add(xfer)
                return 0, UserBuf(slice_scatter(surf.chunks, 0, length), surf, None, xfer)
            rc, mapping = self.drv.p2p.nvidia_p2p_dma_map_pages(
                self.drv.platform.pci_dev, surf.page_table
            )
            if rc:
                return xfer.fail(-rc, f"nvidia_p2p_dma_map_pages of handle {ptr}: {rc}"), None
            surf.maps.append(mapping)
            surf.transfers.add(xfer)
            sg = p2p_chunks(mapping.dma_addresses, surf.offset, length)
            return 0, UserBuf(sg, surf, mapping, xfer)
        start = ptr & PAGE_MASK
        offset = ptr - start
        npages = (offset + length + PAGE_SIZE - 1) // PAGE_SIZE
        frames = self.process.get_user_pages(start, npages, write=write)
        if len(frames) != npages:
            self.process.put_user_pages(frames)  # the pages a short count did pin
            why = f"{length} bytes at {ptr:#x} are not all mapped in the process"
            return xfer.fail(errno.EFAULT, why), None
        return 0, UserBuf(
            page_chunks(frames, PAGE_SIZE, offset, length), frames=frames, process=self.process
        )

    async def _dma(
        self, src: tuple[int, bool] | None, dst: tuple[int, bool] | None, card: int, length: int
    ) -> tuple[int, int]:
        """Run one DMA ioctl's transfer; (rc, dma_time_ns)."""
        drv = self.drv
        xfer = Transfer(drv)
        drv._transfers.add(xfer)
        bufs: list[UserBuf] = []
        try:
            sides = []
            for side, write in ((src, False), (dst, True)):
                if side is None:
                    sides.append(None)
                    continue
                rc, buf = self._get_userbuf(side[0], length, side[1], xfer, write)
                if rc:
                    return rc, 0
                bufs.append(buf)
                sides.append(buf.sg)
            async with drv.dma_lock:
                await drv._reset_ended()
                if drv.dead:
                    log.error("%s: DMA refused: %s", drv.name, drv.dead)
                    return xfer.fail(errno.EIO, f"the device is dead ({drv.dead})"), 0
                t0 = drv.platform.now_ns()
                if sides[0] is not None and sides[1] is not None:
                    rc = await drv._h2c2h(sides[0], sides[1], length, xfer)
                elif sides[0] is not None:
                    rc = await drv._run(Target.H2C, pair_scatter(sides[0], [(card, length)]), xfer)
                else:
                    rc = await drv._run(Target.C2H, pair_scatter([(card, length)], sides[1]), xfer)
                t1 = drv.platform.now_ns()
            return rc, round(t1 - t0)
        finally:
            if xfer.why:
                self.last_error = xfer.why
            drv._transfers.discard(xfer)
            for b in bufs:
                b.release(drv)

    def _card_range_error(self, offset: int, length: int) -> str:
        """Why ``length`` bytes at card RAM ``offset`` are out of range ("" when fine)."""
        ram = self.drv.fpga_ram_size
        if length == 0:
            return "length 0"
        if length > ram:
            return f"length {length} exceeds the card RAM ({ram} bytes)"
        if offset > ram - length:
            return f"{length} bytes at card offset {offset:#x} run past the card RAM ({ram} bytes)"
        return ""

    async def _h2c2h_dma(self, p: uapi.picoevb_rdma_h2c2h_dma):
        if p.flags & ~H2C2H_FLAGS:
            return self._fail(errno.EINVAL, f"unknown flags {p.flags:#x}"), None
        if p.len == 0:
            return self._fail(errno.EINVAL, "length 0"), None
        rc, t = await self._dma(
            (p.src, bool(p.flags & uapi.PICOEVB_H2C2H_DMA_FLAG_SRC_IS_CUDA)),
            (p.dst, bool(p.flags & uapi.PICOEVB_H2C2H_DMA_FLAG_DST_IS_CUDA)),
            0,
            p.len,
        )
        p.dma_time_ns = t
        return rc, p

    async def _h2c_dma(self, p: uapi.picoevb_rdma_h2c_dma):
        src_cuda = uapi.PICOEVB_H2C_DMA_FLAG_SRC_IS_CUDA
        if p.flags & ~src_cuda:
            return self._fail(errno.EINVAL, f"unknown flags {p.flags:#x}"), None
        if why := self._card_range_error(p.dst, p.len):
            return self._fail(errno.EINVAL, why), None
        rc, t = await self._dma((p.src, bool(p.flags & src_cuda)), None, p.dst, p.len)
        p.dma_time_ns = t
        return rc, p

    async def _c2h_dma(self, p: uapi.picoevb_rdma_c2h_dma):
        dst_cuda = uapi.PICOEVB_C2H_DMA_FLAG_DST_IS_CUDA
        if p.flags & ~dst_cuda:
            return self._fail(errno.EINVAL, f"unknown flags {p.flags:#x}"), None
        if why := self._card_range_error(p.src, p.len):
            return self._fail(errno.EINVAL, why), None
        rc, t = await self._dma(None, (p.dst, bool(p.flags & dst_cuda)), p.src, p.len)
        p.dma_time_ns = t
        return rc, p
