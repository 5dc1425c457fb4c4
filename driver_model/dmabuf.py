"""The kernel's dma-buf core (``drivers/dma-buf/dma-buf.c``, Linux 6.2 and later) as an
importing driver sees it, on the exporter's ``dma_buf_ops`` (``cuda_model.dmabuf``).

Calls keep the kernel's shape: a result or a negative errno (``ERR_PTR``). The locking
convention since 6.2 is checked: ``dma_buf_map_attachment``/``unmap`` and
``dma_buf_pin``/``unpin`` need the buffer's reservation lock held (their ``_unlocked``
twins take it); ``dma_buf_dynamic_attach`` needs ``move_notify`` in the importer's ops;
``dma_buf_pin`` wants a dynamic attachment. Misuse is reported the way the kernel
reports it: the call fails, or a ``WARN`` is logged and counted in ``warnings`` (a
lockdep splat counts as one).

What the core does that importers feel:
- ``peer2peer`` comes only from a dynamic importer's ``allow_peer2peer``: a static
  attachment (``dma_buf_attach``) never has it.
- When the importer and the exporter differ in being dynamic, the core maps the
  attachment at attach time (``DMA_BIDIRECTIONAL``) and caches it: a failed map fails
  the attach (a NULL from the exporter is -ENOMEM), and later maps return the cached
  table (another direction than the cached one: -EBUSY); the cached mapping goes at
  detach.
- The last ``dma_buf_put`` (the fd's close included) releases the buffer through the
  exporter's ``release``; attachments left then are a WARN.
"""

from __future__ import annotations

import dataclasses
import errno
import logging
from collections.abc import Callable

from cuda_model.dmabuf import DMA_BIDIRECTIONAL, SgTable

from .host import UserProcess

log = logging.getLogger(__name__)

# dma_get_max_seg_size of a device whose driver never set dma_parms (linux/dma-mapping.h)
DEFAULT_MAX_SEG_SIZE = 64 << 10


@dataclasses.dataclass(eq=False)
class DmaDevice:
    """The importer's ``struct device`` as dma-buf sees it: a name, and its maximum
    DMA segment size (``dma_set_max_seg_size``)."""

    name: str
    max_seg_size: int = DEFAULT_MAX_SEG_SIZE


@dataclasses.dataclass(frozen=True)
class DmaBufAttachOps:
    """``struct dma_buf_attach_ops`` of a dynamic importer."""

    move_notify: Callable[[DmaBufAttachment], None] | None
    allow_peer2peer: bool = False


@dataclasses.dataclass(eq=False)
class DmaBufAttachment:
    """``struct dma_buf_attachment``."""

    dmabuf: DmaBuf
    dev: DmaDevice
    importer_ops: DmaBufAttachOps | None
    importer_priv: object
    peer2peer: bool
    sgt: SgTable | None = None
    dir: int = DMA_BIDIRECTIONAL
    mapped: int = 0  # maps the importer holds (uncached)


@dataclasses.dataclass(eq=False)
class DmaBuf:
    """``struct dma_buf``: the exporter's ops, the file's references, the reservation
    object's lock and the attachments."""

    core: DmaBufCore
    ops: object
    size: int
    name: str
    refs: int = 1
    resv_held: bool = False
    attachments: list[DmaBufAttachment] = dataclasses.field(default_factory=list)
    released: bool = False

    @property
    def is_dynamic(self) -> bool:
        """``dma_buf_is_dynamic``: the exporter has pin/unpin."""
        return getattr(self.ops, "pin", None) is not None

    def fput(self) -> None:
        """The file's reference dropped (``close`` of an fd, or ``dma_buf_put``)."""
        self.core.dma_buf_put(self)


def is_dynamic_attachment(attach: DmaBufAttachment) -> bool:
    """``dma_buf_attachment_is_dynamic``."""
    return attach.importer_ops is not None


class DmaBufCore:
    """The dma-buf core of one kernel: exports, the fd table glue, the importer API."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.live: list[DmaBuf] = []

    def _warn(self, what: str) -> None:
        log.warning("WARNING: %s", what)
        self.warnings.append(what)

    # ------------------------------------------------------------------ exporter side
    def export(self, ops: object, size: int, name: str = "") -> DmaBuf:
        """``dma_buf_export``: a buffer with one reference (the file's)."""
        buf = DmaBuf(self, ops, size, name or getattr(ops, "name", "dmabuf"))
        self.live.append(buf)
        return buf

    def export_fd(self, process: UserProcess, ops: object, size: int) -> int:
        """``dma_buf_export`` then ``dma_buf_fd`` into ``process``'s table: the fd."""
        return process.fd_install(self.export(ops, size))

    # ------------------------------------------------------------------ references
    def dma_buf_get(self, process: UserProcess, fd: int) -> DmaBuf | int:
        """The buffer behind ``fd`` with a reference taken; -EBADF for no file, -EINVAL
        for a file that is not a dma-buf."""
        file = process.fget(fd)
        if file is None:
            return -errno.EBADF
        if not isinstance(file, DmaBuf):
            return -errno.EINVAL
        file.refs += 1
        return file

    def dma_buf_put(self, buf: DmaBuf) -> None:
        """Drop a reference; the last one releases the buffer (exporter's ``release``)."""
        if buf.refs <= 0:
            self._warn(f"dma_buf_put of {buf.name} with no reference left")
            return
        buf.refs -= 1
        if buf.refs:
            return
        if buf.attachments:
            self._warn(f"{buf.name} released with {len(buf.attachments)} attachment(s)")
        buf.released = True
        self.live.remove(buf)
        buf.ops.release(buf)

    # ------------------------------------------------------------------ reservation lock
    def dma_resv_lock(self, buf: DmaBuf) -> None:
        """Take the reservation lock (the model runs each call to its end, so a lock
        already held here is a deadlock in the kernel: refused loudly)."""
        if buf.resv_held:
            raise RuntimeError(f"dma_resv_lock of {buf.name}: already held (deadlock)")
        buf.resv_held = True

    def dma_resv_unlock(self, buf: DmaBuf) -> None:
        if not buf.resv_held:
            self._warn(f"dma_resv_unlock of {buf.name}: not held")
        buf.resv_held = False

    def _assert_held(self, buf: DmaBuf, what: str) -> None:
        if not buf.resv_held:
            self._warn(f"{what}: {buf.name}'s reservation lock not held (lockdep)")

    # ------------------------------------------------------------------ attach / detach
    def dma_buf_dynamic_attach(
        self,
        buf: DmaBuf,
        dev: DmaDevice,
        importer_ops: DmaBufAttachOps | None,
        importer_priv: object = None,
    ) -> DmaBufAttachment | int:
        """Attach ``dev``; a dynamic importer passes its ops (``move_notify`` required)."""
        if buf.released:
            self._warn("dma_buf_dynamic_attach of a released buffer")
            return -errno.EINVAL
        if importer_ops is not None and importer_ops.move_notify is None:
            self._warn("dma_buf_dynamic_attach: importer_ops without move_notify")
            return -errno.EINVAL
        attach = DmaBufAttachment(
            buf,
            dev,
            importer_ops,
            importer_priv,
            peer2peer=bool(importer_ops and importer_ops.allow_peer2peer),
        )
        self.dma_resv_lock(buf)
        try:
            op = getattr(buf.ops, "attach", None)
            if op is not None:
                rc = op(buf, attach)
                if rc:
                    return rc
            buf.attachments.append(attach)
            if is_dynamic_attachment(attach) != buf.is_dynamic:
                if buf.is_dynamic:
                    rc = buf.ops.pin(attach)
                    if rc:
                        self._detach_locked(buf, attach)
                        return rc
                sgt = buf.ops.map_dma_buf(attach, DMA_BIDIRECTIONAL)
                if sgt is None:
                    if buf.is_dynamic:
                        buf.ops.unpin(attach)
                    self._detach_locked(buf, attach)
                    return -errno.ENOMEM
                attach.sgt = sgt
                attach.dir = DMA_BIDIRECTIONAL
        finally:
            buf.resv_held = False
        return attach

    def dma_buf_attach(self, buf: DmaBuf, dev: DmaDevice) -> DmaBufAttachment | int:
        """A static attachment (no importer ops: never peer2peer)."""
        return self.dma_buf_dynamic_attach(buf, dev, None)

    def dma_buf_detach(self, buf: DmaBuf, attach: DmaBufAttachment) -> None:
        """Detach; a cached mapping is unmapped here, maps the importer still holds are
        a WARN (and unmapped, so nothing leaks in the model)."""
        if attach not in buf.attachments:
            self._warn(f"dma_buf_detach: not an attachment of {buf.name}")
            return
        self.dma_resv_lock(buf)
        try:
            if attach.mapped:
                self._warn(f"dma_buf_detach of {buf.name} with {attach.mapped} map(s) held")
            self._detach_locked(buf, attach)
        finally:
            buf.resv_held = False

    def _detach_locked(self, buf: DmaBuf, attach: DmaBufAttachment) -> None:
        if attach.sgt is not None:
            buf.ops.unmap_dma_buf(attach, attach.sgt, attach.dir)
            attach.sgt = None
            if buf.is_dynamic:
                buf.ops.unpin(attach)
        if attach in buf.attachments:
            buf.attachments.remove(attach)
        op = getattr(buf.ops, "detach", None)
        if op is not None:
            op(buf, attach)

    # ------------------------------------------------------------------ pin / map
    def dma_buf_pin(self, attach: DmaBufAttachment) -> int:
        """Pin for a dynamic importer (reservation lock held); 0 when the exporter has
        nothing to pin (its memory never moves)."""
        if not is_dynamic_attachment(attach):
            self._warn("dma_buf_pin of a static attachment")
        self._assert_held(attach.dmabuf, "dma_buf_pin")
        op = getattr(attach.dmabuf.ops, "pin", None)
        return op(attach) if op is not None else 0

    def dma_buf_unpin(self, attach: DmaBufAttachment) -> None:
        if not is_dynamic_attachment(attach):
            self._warn("dma_buf_unpin of a static attachment")
        self._assert_held(attach.dmabuf, "dma_buf_unpin")
        op = getattr(attach.dmabuf.ops, "unpin", None)
        if op is not None:
            op(attach)

    def dma_buf_map_attachment(self, attach: DmaBufAttachment, direction: int) -> SgTable | int:
        """The attachment's sg_table (reservation lock held), or -errno."""
        buf = attach.dmabuf
        if attach not in buf.attachments:
            self._warn("dma_buf_map_attachment of a detached attachment")
            return -errno.EINVAL
        self._assert_held(buf, "dma_buf_map_attachment")
        if attach.sgt is not None:
            if attach.dir != direction and attach.dir != DMA_BIDIRECTIONAL:
                return -errno.EBUSY
            return attach.sgt
        sgt = buf.ops.map_dma_buf(attach, direction)
        if sgt is None:
            return -errno.ENOMEM
        attach.mapped += 1
        return sgt

    def dma_buf_unmap_attachment(
        self, attach: DmaBufAttachment, sgt: SgTable, direction: int
    ) -> None:
        """Give back a mapping (reservation lock held); a cached one stays until detach."""
        buf = attach.dmabuf
        self._assert_held(buf, "dma_buf_unmap_attachment")
        if attach.sgt is sgt:
            return
        if not attach.mapped:
            self._warn(f"dma_buf_unmap_attachment of {buf.name}: nothing mapped")
            return
        attach.mapped -= 1
        buf.ops.unmap_dma_buf(attach, sgt, direction)

    def dma_buf_map_attachment_unlocked(
        self, attach: DmaBufAttachment, direction: int
    ) -> SgTable | int:
        """:meth:`dma_buf_map_attachment` taking the reservation lock itself."""
        self.dma_resv_lock(attach.dmabuf)
        try:
            return self.dma_buf_map_attachment(attach, direction)
        finally:
            self.dma_resv_unlock(attach.dmabuf)

    def dma_buf_unmap_attachment_unlocked(
        self, attach: DmaBufAttachment, sgt: SgTable, direction: int
    ) -> None:
        self.dma_resv_lock(attach.dmabuf)
        try:
            self.dma_buf_unmap_attachment(attach, sgt, direction)
        finally:
            self.dma_resv_unlock(attach.dmabuf)

    # ------------------------------------------------------------------ user space
    def mmap(self, process: UserProcess, fd: int) -> int:
        """``mmap`` of a dma-buf fd (``dma_buf_mmap_internal``): 0 or -errno."""
        buf = self.dma_buf_get(process, fd)
        if isinstance(buf, int):
            return -errno.EBADF if buf == -errno.EBADF else -errno.ENODEV
        try:
            op = getattr(buf.ops, "mmap", None)
            return -errno.EINVAL if op is None else op(buf, None)
        finally:
            self.dma_buf_put(buf)
