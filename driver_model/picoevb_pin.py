"""The picoevb-rdma driver model's pinning: PIN_CUDA through nv-p2p, PIN_DMABUF,
UNPIN_CUDA, and the GPU's free callback and the dma-buf move notification that end a
pin."""

from __future__ import annotations

import errno
import logging
from typing import TYPE_CHECKING

from cuda_model import CallbackPending

from . import uapi
from .dmabuf import (
    DMA_BIDIRECTIONAL,
    DmaBufAttachment,
    DmaBufAttachOps,
)
from .p2p import pin_range

if TYPE_CHECKING:
    pass

from .picoevb_state import (
    Surface,
    dmabuf_put,
)

log = logging.getLogger("driver_model.picoevb")


class PinCallbacks:
    """Of :class:`PicoevbRdma`: the driver side of pinning: the GPU's free callback and the
    dma-buf move notification (its state and helpers are PicoevbRdma's)."""

    def _dmabuf_move_notify(self, attach: DmaBufAttachment) -> None:
        """``move_notify`` of a pinned importer: nv-dmabuf never moves its memory, and a
        pinned attachment may not be moved, so this is a bug somewhere: logged."""
        log.error("%s: move_notify on a pinned dma-buf attachment (%s)", self.name, attach)

    def _p2p_free_callback(self, surf: Surface) -> CallbackPending | None:
        """nvidia.ko frees the memory behind a pin (cudaFree while pinned): drop the handle,
        free the page table and any live DMA mapping, abort DMAs using it. NVIDIA's
        contract: the callback returns only once the device can no longer touch the
        pages (the GPU unmaps the BAR1 pages, and may give them to another pin, when it
        returns). With DMAs in flight on the surface it sleeps until each has stopped its
        channel: the returned :class:`CallbackPending` is done when the last lets go."""
        f = surf.file
        if f.surfaces.get(surf.handle) is surf:
            del f.surfaces[surf.handle]
        for m in surf.maps:
            self.p2p.nvidia_p2p_free_dma_mapping(m)
        surf.maps.clear()
        rc = self.p2p.nvidia_p2p_free_page_table(surf.page_table)
        if rc:
            log.error("%s: nvidia_p2p_free_page_table: %d", self.name, rc)
        log.info(
            "%s: surface handle %d (va %#x) freed by the GPU driver",
            self.name,
            surf.handle,
            surf.va + surf.offset,
        )
        if not surf.transfers:
            return None
        surf.revoking = CallbackPending()
        for x in list(surf.transfers):
            x.abort(f"CUDA surface handle {surf.handle} freed during the transfer")
        return surf.revoking


class PinIoctls:
    """Of :class:`PicoevbFile`: the pinning ioctls: PIN_CUDA through nv-p2p, PIN_DMABUF,
    UNPIN_CUDA and the handles (its state and helpers are PicoevbFile's)."""

    def _idr_alloc(self, surf: Surface) -> int:
        h = 0
        while h in self.surfaces:
            h += 1
        self.surfaces[h] = surf
        return h

    async def _pin_cuda(self, p: uapi.picoevb_rdma_pin_cuda):
        if p.size == 0:
            return self._fail(errno.EINVAL, "size 0"), None
        va, offset, aligned_len = pin_range(p.va, p.size)
        surf = Surface(self, va, offset, p.size)
        rc, pt = self.drv.p2p.nvidia_p2p_get_pages(
            0, 0, va, aligned_len, self.drv._p2p_free_callback, surf
        )
        if rc:
            why = (
                f"nvidia_p2p_get_pages({va:#x}, {aligned_len:#x}): {rc} (not memory from "
                "cudaMalloc, or past the allocation it starts in)"
                if rc == -errno.EINVAL
                else f"nvidia_p2p_get_pages({va:#x}, {aligned_len:#x}): {rc}"
            )
            return self._fail(-rc, why), None
        surf.page_table = pt
        surf.handle = self._idr_alloc(surf)
        p.handle = surf.handle
        log.info(
            "%s: pinned va %#x + %#x as handle %d (%d pages)",
            self.drv.name,
            p.va,
            p.size,
            surf.handle,
            aligned_len >> 16,
        )
        return 0, p

    async def _pin_dmabuf(self, p: uapi.picoevb_rdma_pin_dmabuf):
        """PIN_DMABUF (an extension): import a dma-buf as a surface, pinned and mapped
        for good, as an RDMA driver's pinned import does: a dynamic attachment allowing
        peer-to-peer (the exporter refuses one without), dma_buf_pin and the map under
        the reservation lock. The handle shares the CUDA handles' IDR, so the DMA
        ioctls and UNPIN_CUDA take it."""
        if p.pad:
            # (a new ioctl's rule: unused fields must be zero, so they can mean something later)
            return self._fail(errno.EINVAL, f"padding {p.pad:#x} is not zero"), None
        core = self.drv.dmabuf
        if core is None:
            return self._fail(errno.EOPNOTSUPP, "this kernel has no dma-buf"), None
        buf = core.dma_buf_get(self.process, p.fd)
        if isinstance(buf, int):
            return self._fail(-buf, f"dma_buf_get({p.fd}): {buf}"), None
        ops = DmaBufAttachOps(move_notify=self.drv._dmabuf_move_notify, allow_peer2peer=True)
        att = core.dma_buf_dynamic_attach(buf, self.drv.dma_dev, ops)
        if isinstance(att, int):
            core.dma_buf_put(buf)
            return self._fail(-att, f"dma_buf_dynamic_attach of fd {p.fd}: {att}"), None
        core.dma_resv_lock(buf)
        rc = core.dma_buf_pin(att)
        sgt = core.dma_buf_map_attachment(att, DMA_BIDIRECTIONAL) if rc == 0 else rc
        if isinstance(sgt, int) and rc == 0:
            core.dma_buf_unpin(att)
        core.dma_resv_unlock(buf)
        if isinstance(sgt, int):
            core.dma_buf_detach(buf, att)
            core.dma_buf_put(buf)
            return self._fail(-sgt, f"mapping dma-buf fd {p.fd}: {sgt}"), None
        surf = Surface(self, 0, 0, buf.size, dmabuf=buf, attachment=att, sgt=sgt)
        surf.chunks = [(e.dma_address, e.length) for e in sgt.entries]
        surf.handle = self._idr_alloc(surf)
        p.handle, p.size = surf.handle, buf.size
        log.info(
            "%s: imported dma-buf fd %d (%s, %d bytes, %d segments) as handle %d",
            self.drv.name,
            p.fd,
            buf.name,
            buf.size,
            sgt.nents,
            surf.handle,
        )
        return 0, p

    async def _put(self, surf: Surface) -> int:
        if surf.dmabuf is not None:
            # DMAs still on it keep the mapping: the last to end lets it go
            if surf.transfers:
                surf.put_pending = True
            else:
                dmabuf_put(self.drv, surf)
            return 0
        rc = self.drv.p2p.nvidia_p2p_put_pages(0, 0, surf.va, surf.page_table)
        if rc:
            log.error("%s: nvidia_p2p_put_pages(handle %d): %d", self.drv.name, surf.handle, rc)
        return rc

    async def _unpin_cuda(self, p: uapi.picoevb_rdma_unpin_cuda):
        surf = self.surfaces.pop(p.handle, None)
        if surf is None:
            why = f"no CUDA surface has handle {p.handle} (never pinned, unpinned, or freed)"
            return self._fail(errno.EINVAL, why), None
        return await self._put(surf), None
