"""The GPU's requests on PCIe, as the device model asks for them: :class:`DeviceBus` is
what the GPU endpoint gives (cuda_model.device and the copy engines use it), each request
named by an :class:`Access`."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable
from typing import Protocol


class BusError(Exception):
    """A request from the GPU failed on the bus: ``status`` is the completion status
    (``UR``, ``CA``) or ``timeout``."""

    def __init__(self, status: str, addr: int, detail: str = "") -> None:
        self.status = status
        self.addr = addr
        super().__init__(f"{status} at {addr:#x}{': ' + detail if detail else ''}")


@dataclasses.dataclass(frozen=True)
class Access:
    """What a request is for, as the trace names it: the activity (``kernel mailbox``,
    ``cudaMemcpyAsync``, ``cuStreamWriteValue32``) and the registered range it falls in."""

    who: str
    range: str = ""
    relaxed: bool = False


class DeviceBus(Protocol):
    """The GPU's side of PCIe: the endpoint turns these into TLPs."""

    def write(self, addr: int, data: bytes, access: Access) -> Awaitable[None]:
        """A posted write of ``data`` at bus address ``addr`` (split as the link needs);
        returns once it is on its way."""
        ...

    def read(self, addr: int, length: int, access: Access) -> Awaitable[bytes]:
        """A non-posted read; :class:`BusError` when a completion fails or none comes."""
        ...

    def flush(self, addr: int, access: Access) -> Awaitable[None]:
        """Until every write sent before has landed: a zero-length read of ``addr`` (a
        read may not pass the posted writes before it on their way); :class:`BusError`
        as :meth:`read`."""
        ...


@dataclasses.dataclass(frozen=True)
class Piece:
    """Part of an access: ``length`` bytes at ``addr`` of device memory (``bus`` False,
    ``addr`` a device VA) or of the bus (``bus`` True, ``addr`` a bus address; ``io``
    when it is a device's BAR rather than host RAM)."""

    addr: int
    length: int
    bus: bool
    range: str = ""
    io: bool = False  # a device's memory (registered with IoMemory), not host RAM
