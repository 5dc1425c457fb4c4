"""Hand-made TLPs for the tests that need no simulator."""

from __future__ import annotations

from cocotbext.pcie.core.tlp import Tlp, TlpType
from cocotbext.pcie.core.utils import PcieId

FPGA = PcieId(3, 0, 0)  # the FPGA function as the default topology enumerates it
HOST = PcieId(0, 0, 0)  # the root complex


def mem_read(addr: int, nbytes: int, tag: int = 0, requester: PcieId = FPGA) -> Tlp:
    """A memory read of ``nbytes`` at byte address ``addr`` (the 32-bit format below
    4 GiB, as PCIe requires)."""
    t = Tlp()
    t.fmt_type = TlpType.MEM_READ_64 if addr >> 32 else TlpType.MEM_READ
    t.requester_id = requester
    t.tag = tag
    t.set_addr_be(addr, nbytes)
    return t


def mem_write(addr: int, data: bytes, requester: PcieId = FPGA) -> Tlp:
    """A memory write of ``data`` at byte address ``addr`` (32-bit format below 4 GiB)."""
    t = Tlp()
    t.fmt_type = TlpType.MEM_WRITE_64 if addr >> 32 else TlpType.MEM_WRITE
    t.requester_id = requester
    t.set_addr_be_data(addr, data)
    return t
