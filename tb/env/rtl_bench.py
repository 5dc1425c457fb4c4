"""What the RTL modules' benches (tb/tests/rtl) share: a module's clock started and its
reset held with every input at rest."""

from __future__ import annotations

from collections.abc import Iterable

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

PERIOD_NS = 4
RESET_CYCLES = 3


async def start(dut, inputs: Iterable[str], reset: str = "rst") -> None:
    """Start ``dut.clk``, and hold the reset (``dut.rst``, or the input ``reset`` names)
    high for a few clocks with each of ``inputs`` at 0; returns with it released."""
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
    rst = getattr(dut, reset)
    rst.value = 1
    for name in inputs:
        getattr(dut, name).value = 0
    for _ in range(RESET_CYCLES):
        await RisingEdge(dut.clk)
    rst.value = 0


class PayloadReader:
    """The requester's side of pevb_axi_rd and pevb_axis_rd, as pevb_rq_tx reads them: a
    TLP taken at random (``m_tlp_*``), then its payload beats with ``pay_rd_en`` (data the
    cycle after), each TLP's bytes from its first payload lane (16 header bytes and the
    PCIe address's low bits in). What leaves, in the order it leaves, goes to ``out``:
    ``("tlp", addr, len, slot, bytes)`` or ``("drop", slot, err)``."""

    def __init__(self, dut, nbytes: int, rng, out: list) -> None:
        self.dut, self.nbytes, self.rng, self.out = dut, nbytes, rng, out
        self._reading: list | None = None  # [fields, beats left to ask for, words, place]
        self._pending = False  # a read asked for last cycle
        self._take = 0
        self._rd_en = False

    @property
    def idle(self) -> bool:
        """Nothing taken and not yet read whole."""
        return self._reading is None and not self._pending

    def drive(self) -> None:
        """This cycle's ready and read enable (before the cycle's outputs are read)."""
        self._take = int(self._reading is None and self.rng.random() < 0.6)
        self.dut.m_tlp_ready.value = self._take
        r = self._reading
        self._rd_en = r is not None and r[1] > 0 and self.rng.random() < 0.8
        self.dut.pay_rd_en.value = int(self._rd_en)

    def sample(self) -> None:
        """Read the outputs (in the ReadOnly phase): data, drops, the TLP taken."""
        dut, nbytes = self.dut, self.nbytes
        r = self._reading
        if self._pending:  # the data of last cycle's read
            r[2].append(int(dut.pay_rd_data.value))
            self._pending = False
        if int(dut.m_drop_valid.value):
            self.out.append(("drop", int(dut.m_drop_slot.value), int(dut.m_drop_err.value)))
        if self._take and int(dut.m_tlp_valid.value):
            addr, length = int(dut.m_tlp_addr.value), int(dut.m_tlp_len.value)
            lane = 16 % nbytes + (addr & 3)
            fields = (addr, length, int(dut.m_tlp_slot.value))
            self._reading = [fields, (lane + length + nbytes - 1) // nbytes, [], len(self.out)]
            self.out.append(None)  # its place among what leaves
        elif self._rd_en:
            r[1] -= 1
            self._pending = True
        r = self._reading
        if r is not None and r[1] == 0 and not self._pending:
            (addr, length, slot), _, words, place = r
            raw = b"".join(w.to_bytes(nbytes, "little") for w in words)
            lane = 16 % nbytes + (addr & 3)
            self.out[place] = ("tlp", addr, length, slot, raw[lane : lane + length])
            self._reading = None


def pauses(rng, p: float = 0.3):
    """A pause generator for cocotbext's drivers and sinks: paused with probability ``p``
    on each cycle."""
    return iter(lambda: rng.random() < p, None)


def pieces(addr: int, length: int, size: int) -> list[tuple[int, int, int]]:
    """``length`` bytes from ``addr`` cut where the address crosses a multiple of
    ``size`` (a max payload or read request size): (address, length, offset) of each."""
    out, off = [], 0
    while off < length:
        a = addr + off
        n = min(length - off, size - (a % size))
        out.append((a, n, off))
        off += n
    return out


def offer_descriptor(dut, pending, rng):
    """The next of ``pending`` descriptors (source, destination, length, flags) on a
    mover's s_desc_* port this cycle, at random; the one offered, or None."""
    d = pending[0] if pending and rng.random() < 0.5 else None
    dut.s_desc_valid.value = int(d is not None)
    if d is not None:
        src, dst, length, flags = d
        dut.s_desc_src.value, dut.s_desc_dst.value = src, dst
        dut.s_desc_len.value, dut.s_desc_flags.value = length, flags
    return d
