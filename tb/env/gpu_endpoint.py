"""The GPU model (:mod:`cuda_model`) as a PCIe endpoint on cocotbext-pcie, with the
H100's BAR layout: three 64-bit prefetchable BARs in slots 0-1, 2-3 and 4-5.

BAR0 (16 MiB) holds registers (NV_PMC_BOOT_0; the rest reads zero, writes are ignored).
BAR1 (the model's aperture size) resolves every access through the GPU's BAR1 page table
into VRAM via callbacks, never through a buffer the size of the aperture. BAR3 (32 MiB)
reads zero. A BAR1 read that touches
an unmapped page completes with Unsupported Request; an unmapped write is dropped, and so
is a poisoned write (EP set) to BAR1. All land in ``gpu.fault_log``.
"""

from __future__ import annotations

from cocotb.utils import get_sim_time
from cocotbext.pcie.core import Device, MemoryEndpoint
from cocotbext.pcie.core.tlp import Tlp

from cuda_model import Gpu
from cuda_model.gpu import (
    BAR0,
    BAR0_SIZE,
    BAR1,
    BAR3,
    BAR3_SIZE,
    GH100_DEVICE_ID,
    GH100_SUBSYSTEM_ID,
    PCI_CLASS_3D_CONTROLLER,
    PCI_VENDOR_ID_NVIDIA,
)


class GpuEndpoint(MemoryEndpoint):
    """PCIe function 0 of the GPU, backed by a :class:`cuda_model.Gpu`."""

    def __init__(self, gpu: Gpu, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.gpu = gpu
        self.vendor_id = PCI_VENDOR_ID_NVIDIA
        self.device_id = GH100_DEVICE_ID
        self.subsystem_vendor_id = PCI_VENDOR_ID_NVIDIA
        self.subsystem_id = GH100_SUBSYSTEM_ID
        self.class_code = PCI_CLASS_3D_CONTROLLER
        regions = (
            (BAR0, BAR0_SIZE, self._bar0_read, self._ignore_write),
            (BAR1, gpu.bar1_size, self._bar1_read, self._bar1_write),
            (BAR3, BAR3_SIZE, self._zero_read, self._ignore_write),
        )
        for slot, size, read, write in regions:
            assert self.bar_ptr == slot, f"BAR slot {self.bar_ptr}, expected {slot}"
            self.add_region(size, read=read, write=write, ext=True, prefetch=True)
        gpu.bar1_base_provider = self.bar1_bus_address
        gpu.bar_ranges = self.bar_ranges
        gpu.clock = lambda: get_sim_time("ns")

    def bar1_bus_address(self) -> int:
        """BAR1's address as programmed by enumeration (0 before)."""
        return ((self.bar[BAR1 + 1] << 32) | self.bar[BAR1]) & ~0xF

    def bar_ranges(self) -> list[tuple[int, int]]:
        """Every BAR as enumeration placed it: (bus address, size); none before."""
        out = []
        for slot, size in ((BAR0, BAR0_SIZE), (BAR1, self.gpu.bar1_size), (BAR3, BAR3_SIZE)):
            base = ((self.bar[slot + 1] << 32) | self.bar[slot]) & ~0xF
            if base:
                out.append((base, size))
        return out

    async def _bar0_read(self, addr: int, length: int) -> bytes:
        return self.gpu.bar0_read(addr, length)

    async def _zero_read(self, addr: int, length: int) -> bytes:
        return bytes(length)

    async def _ignore_write(self, addr: int, data: bytes) -> None:
        """BAR0 and BAR3 writes are ignored (their registers read-only in this model)."""

    async def _bar1_read(self, addr: int, length: int) -> bytes:
        data = self.gpu.bar1_read(addr, length)
        # handle_mem_read_tlp checked the mapping first; a miss here means the page was
        # revoked between the check and the read, which cannot happen in one coroutine
        assert data is not None
        return data

    async def _bar1_write(self, addr: int, data: bytes) -> None:
        self.gpu.bar1_write(addr, bytes(data))

    async def handle_mem_read_tlp(self, tlp: Tlp) -> None:
        bar = self.match_bar(tlp.address)
        if (
            bar is not None
            and bar[0] == BAR1
            and not self.gpu.bar1_readable(bar[1], tlp.length * 4)
        ):
            await self.send(Tlp.create_ur_completion_for_tlp(tlp, self.pcie_id))
            return
        await super().handle_mem_read_tlp(tlp)

    async def handle_mem_write_tlp(self, tlp: Tlp) -> None:
        bar = self.match_bar(tlp.address)
        if tlp.ep and bar is not None and bar[0] == BAR1:
            self.gpu.bar1_poisoned_write(bar[1], tlp.length * 4)
            return
        await super().handle_mem_write_tlp(tlp)


def make_gpu_device(gpu: Gpu) -> tuple[Device, GpuEndpoint]:
    """A cocotbext-pcie Device holding the GPU function, ready to connect to a port."""
    ep = GpuEndpoint(gpu)
    return Device(ep), ep
