"""User-side memory for the XDMA drop-in: a cocotbext-axi ``AxiRam`` on the AXI4 master
that answers with AXI error responses in chosen address windows, as a user's own
interconnect or slave would (SLVERR: the slave failed; DECERR: nothing decodes there).

A burst touching a window gets the window's response (on its B, or on each R beat of the
window) and changes nothing in the window; every error answered is counted in
:attr:`ErrorAxiRam.answered`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from cocotbext.axi import AxiBus, AxiRam
from cocotbext.axi.constants import AxiResp


class AxiError(enum.IntEnum):
    """The AXI error responses (the RESP field's values)."""

    SLVERR = int(AxiResp.SLVERR)
    DECERR = int(AxiResp.DECERR)


class AxiFaultError(Exception):
    """Raised inside the memory for an access to an error window (cocotbext-axi turns it
    into SLVERR; :class:`ErrorAxiRam` makes it the window's response)."""


@dataclass(frozen=True)
class ErrorWindow:
    """Addresses ``[base, base + size)`` answer ``resp`` to ``reads`` and/or ``writes``."""

    base: int
    size: int
    resp: AxiError
    reads: bool = True
    writes: bool = True

    def hits(self, addr: int, length: int, write: bool) -> bool:
        """Whether an access of ``length`` bytes at ``addr`` touches this window."""
        if not (self.writes if write else self.reads):
            return False
        return addr < self.base + self.size and self.base < addr + length


@dataclass(frozen=True)
class Burst:
    """One AXI burst as the master asked for it: the AW or AR channel's fields."""

    write: bool
    addr: int
    len: int  # AxLEN: beats - 1
    size: int  # AxSIZE: log2 of bytes per beat
    burst: int  # AxBURST (1: INCR)


class ErrorAxiRam(AxiRam):
    """An ``AxiRam`` of ``size`` bytes on the ``prefix`` (``m_axi``: the DMA master;
    ``m_axib``: the PCIe-to-DMA bypass master) ports of ``dut`` whose accesses to
    :attr:`windows` get an AXI error response instead of data. Every burst asked for is
    kept in :attr:`bursts`, and every write beat's strobes in :attr:`wstrbs`."""

    def __init__(
        self, dut, clock, reset, reset_active_level: bool, size: int, prefix: str = "m_axi"
    ) -> None:
        super().__init__(
            AxiBus.from_prefix(dut, prefix), clock, reset, reset_active_level, size=size
        )
        self.bursts: list[Burst] = []
        self.wstrbs: list[int] = []
        self._record(self.write_if.aw_channel, write=True)
        self._record(self.read_if.ar_channel, write=False)
        w_recv = self.write_if.w_channel.recv

        async def recv_w():
            w = await w_recv()
            self.wstrbs.append(int(w.wstrb))
            return w

        self.write_if.w_channel.recv = recv_w
        self.windows: list[ErrorWindow] = []
        # (write, response) of every error answered: one per write burst, one per read beat
        self.answered: list[tuple[bool, AxiError]] = []
        self._pending: dict[bool, AxiError | None] = {True: None, False: None}
        self.write_if._write = self._guarded_write
        self.read_if._read = self._guarded_read
        self._wrap_send(self.write_if.b_channel, write=True, field="bresp")
        self._wrap_send(self.read_if.r_channel, write=False, field="rresp")

    def _record(self, channel, write: bool) -> None:
        recv = channel.recv
        p = "aw" if write else "ar"

        async def recv_and_record():
            a = await recv()
            self.bursts.append(
                Burst(
                    write,
                    int(getattr(a, p + "addr")),
                    int(getattr(a, p + "len")),
                    int(getattr(a, p + "size")),
                    int(getattr(a, p + "burst")),
                )
            )
            return a

        channel.recv = recv_and_record

    def _check(self, addr: int, length: int, write: bool) -> None:
        for w in self.windows:
            if w.hits(addr % self.size, length, write):
                self._pending[write] = w.resp
                raise AxiFaultError(f"{'write' if write else 'read'} {addr:#x}+{length}")

    async def _guarded_write(self, address: int, data: bytes) -> None:
        self._check(address, len(data), True)
        self.write(address % self.size, data)

    async def _guarded_read(self, address: int, length: int) -> bytes:
        self._check(address, length, False)
        return self.read(address % self.size, length)

    def _wrap_send(self, channel, write: bool, field: str) -> None:
        """Give a response channel's SLVERR (cocotbext-axi's answer to the exception) the
        window's response, and count it."""
        send = channel.send

        async def send_with_resp(obj) -> None:
            resp = self._pending[write]
            if resp is not None and int(getattr(obj, field)) != int(AxiResp.OKAY):
                setattr(obj, field, int(resp))
                self.answered.append((write, resp))
                self._pending[write] = None
            await send(obj)

        channel.send = send_with_resp
