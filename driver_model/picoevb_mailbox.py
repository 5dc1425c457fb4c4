"""The picoevb-rdma driver model's mailbox: MAILBOX_READ, woken by the card's user
interrupt, with its timeout."""

from __future__ import annotations

import errno
import logging
from typing import TYPE_CHECKING

from . import regs, uapi
from .regs import BAR_DMA, BAR_USER

if TYPE_CHECKING:
    pass

from .picoevb_state import (
    MAILBOX_MAX_WAIT_NS,
)

log = logging.getLogger("driver_model.picoevb")


class MailboxIoctls:
    """Of :class:`PicoevbFile`: the mailbox ioctl: MAILBOX_READ, its user interrupt and
    timeout (its state and helpers are PicoevbFile's)."""

    async def _mailbox_read(self, m: uapi.picoevb_rdma_mailbox):
        """The oldest value of the card's mailbox, waiting up to ``timeout_ns`` for its
        interrupt when it is empty: -EAGAIN (no wait asked), -ETIMEDOUT, -EINVAL for
        non-zero padding, -ENODEV once remove() has begun (a reader waiting wakes, and
        touches the card no more). The status read and the read of the value it counted
        are one step under the driver's mailbox lock, so two readers never take one
        value (nor the 0 an empty mailbox reads)."""
        if m.pad:
            return self._fail(errno.EINVAL, "non-zero padding"), None
        p, drv = self.drv.platform, self.drv
        # (a longer timeout waits this long, as the kernel's saturating jiffies would)
        end = p.now_ns() + min(m.timeout_ns, MAILBOX_MAX_WAIT_NS)
        while True:
            drv.mbox_event.reinit()  # (before the status read: no wake-up is lost)
            async with drv.mbox_lock:
                if drv.removed:
                    return self._fail(errno.ENODEV, "the device has been removed"), None
                if drv.intx:
                    # the legacy handler masked the mailbox's interrupt: enable it again
                    # (a value still queued raises the line at once)
                    await p.iowrite32(
                        BAR_DMA, regs.irq_reg(regs.IRQ_USER_INT_EN_W1S), 1 << regs.MAILBOX_IRQ
                    )
                status = await p.ioread32(BAR_USER, regs.USER_MAILBOX_STATUS)
                if status == 0xFFFFFFFF:
                    return self._fail(errno.EIO, "the card does not answer"), None
                if status & regs.MAILBOX_OVERFLOW:
                    await p.iowrite32(BAR_USER, regs.USER_MAILBOX_STATUS, regs.MAILBOX_OVERFLOW)
                    m.flags |= uapi.PICOEVB_MAILBOX_OVERFLOWED
                count = regs.MAILBOX_COUNT_FIELD.get(status)
                if count:
                    m.value = await p.ioread32(BAR_USER, regs.USER_MAILBOX)
                    m.left = count - 1
                    return 0, m
            left = end - p.now_ns()
            if m.timeout_ns == 0:
                return self._fail(errno.EAGAIN, "the mailbox is empty"), None
            if left <= 0:
                return self._fail(errno.ETIMEDOUT, "no mailbox value came"), None
            await drv.mbox_event.wait(left)
