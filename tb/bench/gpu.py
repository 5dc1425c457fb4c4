"""cocotb side of ``make bench``'s GPU rows: on the drop-in with its bypass BAR (1 MiB at
AXI address 0), the GPU's copy engine moves ``$BENCH_BYTES`` from GPU memory into the
BAR (registered with cudaHostRegister(IoMemory)) and back, and a kernel's 32-bit store
and a host write each reach a DMA register. Writes the figures to ``$BENCH_OUT``: the
streaming time of each copy from its first to its last data TLP on the card's link, the
TLP header size, and each doorbell's latency from its issue to its arrival at the card.
"""

from __future__ import annotations

import json
import os

import cocotb
import numpy as np
from cocotb.triggers import Timer
from cocotb.utils import get_sim_time
from cocotbext.pcie.core.tlp import TlpType

from cuda_model.hostreg import Registration
from cuda_model.runtime import cudaMemcpyKind
from driver_model import regs
from driver_model.regs import Target

from ..env.axi_mem import ErrorAxiRam
from ..env.harness import setup
from ..env.link import DOWN, MEM_READS, MEM_WRITES
from ..env.streams import clock_and_reset

BAR_VA = 0x7F00_0400_0000  # where the process mapped the bypass BAR
DMA_VA = 0x7F00_0800_0000  # ... and the DMA BAR
DEFAULT = cudaMemcpyKind.cudaMemcpyDefault


class CardLink:
    """The GPU's requests as the card receives them, timed."""

    def __init__(self, gpu_id) -> None:
        self.gpu_id = gpu_id
        self.reset()

    def reset(self) -> None:
        self.first = self.last = None
        self.bytes = self.first_bytes = 0
        self.header = 0
        self.arrivals: list[float] = []  # of the GPU's requests and completions, in order

    def observe(self, link: str, direction: str, tlp) -> None:
        if link != "fpga":
            return
        now = get_sim_time("ns")
        ft = tlp.fmt_type
        mine = direction == DOWN and (ft in MEM_WRITES or ft in MEM_READS)
        if mine:
            self.arrivals.append(now)
        data = 0
        if direction == DOWN and ft in MEM_WRITES and tlp.requester_id == self.gpu_id:
            data = tlp.get_be_byte_count()
            self.header = tlp.get_header_size()
        elif ft == TlpType.CPL_DATA and tlp.requester_id == self.gpu_id:
            data = len(tlp.data) - (tlp.lower_address & 3)
        if data:
            if self.first is None:
                self.first, self.first_bytes = now, data
            self.last = now
            self.bytes += data


@cocotb.test(timeout_time=60000, timeout_unit="ms")
async def bench_gpu(dut):
    """The copy engine both ways through the bypass BAR, and the doorbells."""
    n = int(os.environ.get("BENCH_BYTES", str(256 << 10)))
    h = await setup(dut, hip=dut.hip)
    tb, rt = h.tb, h.tb.cuda
    clk, rst, level = clock_and_reset(dut)
    mem = ErrorAxiRam(dut, clk, rst, level, 1 << 20, prefix="m_axib")
    bar_addr = tb.pci.bar_addr[tb.bars.axib]
    pages = [bar_addr + i for i in range(0, 1 << 20, 4096)]
    rt.registered.add(Registration(BAR_VA, 1 << 20, pages, io=True, name="bypass BAR"))
    card = CardLink(tb.gpu_ep.pcie_id)
    tb.links.add_observer(card.observe)
    data = np.random.default_rng(3).integers(0, 256, n, dtype=np.uint8)
    dev, back = rt.cudaMalloc(n), rt.cudaMalloc(n)
    tb.gpu.write_va(dev, data)
    out: dict = {"bytes": n, "mps": tb.profile.mps, "mrrs": tb.profile.mrrs}
    for way, dst, src in (("to_bar", BAR_VA, dev), ("from_bar", back, BAR_VA)):
        card.reset()
        t0 = get_sim_time("ns")
        rt.cudaMemcpyAsync(dst, src, n, DEFAULT)
        await rt.synchronize()
        for _ in range(1000):  # the last posted writes may still be on their way
            if card.bytes >= n:
                break
            await Timer(1, "us")
        assert card.bytes == n, f"{way}: {card.bytes} of {n} bytes seen on the card's link"
        out[way] = {
            "op_ns": card.last - t0,
            "stream_ns": card.last - card.first,
            "stream_bytes": n - card.first_bytes,
            "tlp_header": card.header,
        }
    assert mem.read(0, n) == data.tobytes(), "the bypass BAR's memory"
    assert bytes(tb.gpu.read_va(back, n)) == data.tobytes(), "the copy back"

    # doorbells: a 32-bit register store from a kernel and a host write, issue to arrival
    dma = DMA_VA
    dma_size = tb.pci.bar_size[tb.bars.dma]
    dma_pages = [tb.pci.bar_addr[tb.bars.dma] + i for i in range(0, dma_size, 4096)]
    rt.registered.add(Registration(dma, dma_size, dma_pages, io=True, name="DMA BAR"))
    reg = regs.ch_reg(Target.H2C, regs.CH_POLL_WB_LO)
    issued: list[float] = []

    async def ring(k) -> None:
        issued.append(get_sim_time("ns"))
        await k.st32(dma + reg, 0x1000)

    latency = {}
    for who in ("kernel", "host"):
        card.reset()
        if who == "kernel":
            rt.launch(ring, 1, 1)
            await rt.synchronize()
            t0 = issued[-1]
        else:
            t0 = get_sim_time("ns")
            await tb.dma_write32(reg, 0x2000)
        for _ in range(1000):
            if card.arrivals:
                break
            await Timer(10, "ns")
        assert card.arrivals, f"the {who}'s doorbell never reached the card"
        latency[who] = card.arrivals[0] - t0
    assert await tb.dma_read32(reg) == 0x2000
    out["doorbell_ns"] = latency
    path = os.environ.get("BENCH_OUT")
    if path:
        with open(path, "w") as f:
            json.dump(out, f)
    tb.log.info("GPU bench: %s", out)
