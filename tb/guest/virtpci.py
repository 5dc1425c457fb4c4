"""The virt-pci protocol (``include/uapi/linux/virtio_pcidev.h``): what a guest's PCI bus
sends its device over the ``cmd`` virtqueue and gets back over ``irq``, and the interface
a device behind it implements (:class:`GuestPciDevice`), which does not depend on the
transport: User-mode Linux's virt-pci today, another guest's bus later.

Plain Python, no simulator.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

from .errors import GuestProtocolError

MSG = struct.Struct("<BBHIQ")  # op, bar, reserved, size, addr
CONFIG_SPACE = 4096
CONFIG_SIZES = (1, 2, 4, 8)
# the largest BAR access (a read, a write, a memset) the device takes in one message
MAX_ACCESS = 16 << 20
# UML programs every MSI and MSI-X vector with this address and the Linux IRQ number as
# its data (arch/um/drivers/virt-pci.c, um_pci_compose_msi_msg)
UML_MSI_ADDRESS = 0xA0000


class Op(IntEnum):
    """``VIRTIO_PCIDEV_OP_*``."""

    CFG_READ = 1
    CFG_WRITE = 2
    MMIO_READ = 3
    MMIO_WRITE = 4
    MMIO_MEMSET = 5
    INT = 6
    MSI = 7
    PME = 8


class VirtPciError(GuestProtocolError):
    """A virt-pci message the device cannot take (its op, size or address)."""


@dataclass(frozen=True)
class PciRequest:
    """One guest access: ``op`` on ``bar`` (BAR accesses) at ``addr``, ``size`` bytes;
    ``data`` what a write carries (a memset's one byte)."""

    op: Op
    bar: int
    size: int
    addr: int
    data: bytes = b""

    @property
    def posted(self) -> bool:
        """A write: the guest does not wait for it."""
        return self.op in (Op.CFG_WRITE, Op.MMIO_WRITE, Op.MMIO_MEMSET)

    def describe(self) -> str:
        where = (
            f"config 0x{self.addr:03x}"
            if self.op in (Op.CFG_READ, Op.CFG_WRITE)
            else (f"BAR{self.bar}+0x{self.addr:x}")
        )
        return f"{self.op.name} {where} ({self.size} bytes)"


def parse(message: bytes) -> PciRequest:
    """The request in a ``cmd`` queue message (:class:`VirtPciError` if malformed).

    A memset of a BAR reaches the device as a config write with ``bar`` set (Linux 6.1's
    ``um_pci_bar_set``), so a config write whose size no config access has (more than 8
    bytes) is taken as that memset.
    """
    if len(message) < MSG.size:
        raise VirtPciError(f"message of {len(message)} bytes (the header alone is {MSG.size})")
    op_, bar, _, size, addr = MSG.unpack_from(message)
    body = message[MSG.size :]
    try:
        op = Op(op_)
    except ValueError:
        raise VirtPciError(f"unknown op {op_}") from None
    if op in (Op.CFG_READ, Op.CFG_WRITE) and size not in CONFIG_SIZES:
        if op == Op.CFG_WRITE and body and size:
            if bar > 5 or size > MAX_ACCESS:
                raise VirtPciError(f"memset of BAR {bar}, {size} bytes (BARs 0-5, {MAX_ACCESS})")
            return PciRequest(Op.MMIO_MEMSET, bar, size, addr, body[:1])
        raise VirtPciError(f"config access of {size} bytes (1, 2, 4 or 8)")
    if op in (Op.CFG_READ, Op.CFG_WRITE) and addr + size > CONFIG_SPACE:
        raise VirtPciError(f"config access at 0x{addr:x}+{size}: the space is 4 KiB")
    if op in (Op.MMIO_READ, Op.MMIO_WRITE, Op.MMIO_MEMSET):
        if bar > 5:
            raise VirtPciError(f"BAR {bar}: a function has BARs 0-5")
        if not 0 < size <= MAX_ACCESS:
            raise VirtPciError(f"{op.name} of {size} bytes (1 to {MAX_ACCESS})")
    if op == Op.CFG_WRITE or op == Op.MMIO_WRITE:
        if len(body) < size:
            raise VirtPciError(f"{op.name} of {size} bytes carries {len(body)}")
        return PciRequest(op, bar, size, addr, body[:size])
    if op == Op.MMIO_MEMSET:
        if not body:
            raise VirtPciError("MMIO_MEMSET without its byte")
        return PciRequest(op, bar, size, addr, body[:1])
    if op in (Op.CFG_READ, Op.MMIO_READ):
        return PciRequest(op, bar, size, addr)
    raise VirtPciError(f"{op.name} travels from the device to the guest, not the other way")


def int_message(pin: int) -> bytes:
    """The ``irq`` queue message of a legacy interrupt on ``pin`` (1-4: INTA-INTD, the
    Interrupt Pin register's value). UML's virt-pci runs the device's one INTx handler
    chain for each such message: the bridge sends one per assertion of the line, and
    again while it stays asserted after the guest handled the last."""
    if not 1 <= pin <= 4:
        raise ValueError(f"INTx pin {pin}: 1-4 (INTA-INTD)")
    return MSG.pack(Op.INT, 0, 0, 0, pin)


def msi_message(data: int) -> bytes:
    """The ``irq`` queue message of an MSI or MSI-X write of ``data`` (32 bits)."""
    return MSG.pack(Op.MSI, 0, 0, 4, UML_MSI_ADDRESS) + struct.pack("<I", data & 0xFFFFFFFF)


class GuestPciDevice(Protocol):
    """A PCI function as a guest's bus reaches it: its configuration space and its BARs by
    index and offset. A read that fails (an Unsupported Request, a timeout) returns
    all-ones, as on hardware."""

    async def config_read(self, offset: int, size: int) -> int: ...

    async def config_write(self, offset: int, size: int, value: int) -> None: ...

    async def bar_read(self, bar: int, offset: int, size: int) -> bytes: ...

    async def bar_write(self, bar: int, offset: int, data: bytes) -> None: ...


async def execute(device: GuestPciDevice, req: PciRequest) -> bytes:
    """Perform ``req`` on ``device``; the bytes a read answers (empty for a write)."""
    if req.op == Op.CFG_READ:
        return (await device.config_read(req.addr, req.size)).to_bytes(req.size, "little")
    if req.op == Op.CFG_WRITE:
        await device.config_write(req.addr, req.size, int.from_bytes(req.data, "little"))
        return b""
    if req.op == Op.MMIO_READ:
        return await device.bar_read(req.bar, req.addr, req.size)
    if req.op == Op.MMIO_WRITE:
        await device.bar_write(req.bar, req.addr, req.data)
        return b""
    await device.bar_write(req.bar, req.addr, req.data * req.size)
    return b""
