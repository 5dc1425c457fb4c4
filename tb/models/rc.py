"""Where cocotbext-pcie's root complex answers other than PCIe says, set right.

Zero-length reads: a memory read of one DWORD with no byte enabled (a flush, which a
requester sends to make its earlier posted writes land first) is completed with one
DWORD of data, byte count 1 and the DWORD's own address in Lower Address (PCIe Base,
"Calculating Lower Address from 1st DW BE": 0000b gives [1:0] = 00b). cocotbext-pcie's
``RootComplex.handle_mem_read_tlp`` takes the first enabled byte's offset as 3 there,
which the protocol checker rightly flags. A flush of an address no RAM holds (inside the
root complex's pool, outside its regions) is a Completer Abort, as RootComplex answers
any read that fails.
"""

from __future__ import annotations

from cocotbext.pcie.core.tlp import Tlp, TlpType
from cocotbext.pcie.core.utils import PcieId


def fix_zero_length_reads(rc) -> None:
    """Answer zero-length memory reads of host memory as PCIe says (see above)."""
    inner = rc.handle_mem_read_tlp

    async def handle(tlp: Tlp) -> None:
        if (
            tlp.length != 1
            or tlp.first_be != 0
            or not rc.mem_address_space.find_regions(tlp.address, 4)
        ):
            await inner(tlp)
            return
        try:
            data = await rc.mem_address_space.read(tlp.address & ~3, 4)
        except Exception:  # (as RootComplex answers a read that fails: Completer Abort)
            await rc.send(Tlp.create_ca_completion_for_tlp(tlp, PcieId(0, 0, 0)))
            return
        cpl = Tlp.create_completion_data_for_tlp(tlp, PcieId(0, 0, 0))
        cpl.byte_count = 1
        cpl.lower_address = tlp.address & 0x7C
        cpl.set_data(data)
        await rc.send(cpl)

    rc.handle_mem_read_tlp = handle
    for ft in (TlpType.MEM_READ, TlpType.MEM_READ_64):
        rc.register_rx_tlp_handler(ft, handle)
