"""The user logic's side of the XDMA drop-in's configuration extend port (PG213's
``cfg_ext_*``, Vivado's ``cfg_ext_if``): configuration registers a design implements
itself, answered as RTL would answer them.

:class:`UserConfigSpace` keeps a vendor-specific capability in each of the user's ranges
the build enables: at byte 0xB0 a PCI vendor-specific capability (ID 0x09, length 16)
and at byte 0x480 a vendor-specific extended capability (ID 0x000B, version 1, a VSEC
header of ID 0x1DE, revision 1, length 0x80). Their other DWORDs are read-write scratch
registers. A read is answered one cycle after ``cfg_ext_read_received`` is seen (the
data registered, as a block RAM would give it); a write is applied with its byte
enables. Every request seen is recorded in :attr:`UserConfigSpace.seen`, with the
cycles ``read_received`` or ``write_received`` stayed high.
"""

from __future__ import annotations

from dataclasses import dataclass

import cocotb
from cocotb.triggers import RisingEdge

from ..models.cfg_ext import EXTENDED_RANGE, LEGACY_RANGE

VSEC_ID = 0x1DE
VSEC_REV = 1


@dataclass
class Seen:
    """A request the user logic saw: its kind ("read" or "write"), function, register
    (DWORD number), write data and byte enables, and how many cycles it was shown."""

    kind: str
    function: int
    register: int
    data: int = 0
    byte_enable: int = 0
    cycles: int = 1


def default_registers(legacy: bool, extended: bool) -> dict[int, int]:
    """The registers of the two capabilities (DWORD number -> value)."""
    regs: dict[int, int] = {}
    if legacy:
        # cap ID 0x09, next 0 (the end of the list), length 16 bytes, then scratch
        regs[LEGACY_RANGE.start] = 16 << 16 | 0x09
        for r in LEGACY_RANGE[1:]:
            regs[r] = 0
    if extended:
        # extended cap ID 0x000B, version 1, next 0; VSEC ID, revision, length 0x80
        regs[EXTENDED_RANGE.start] = 1 << 16 | 0x000B
        regs[EXTENDED_RANGE.start + 1] = 0x80 << 20 | VSEC_REV << 16 | VSEC_ID
        for r in EXTENDED_RANGE[2:]:
            regs[r] = 0
    return regs


def _level(signal) -> int:
    """A 1-bit output's value, 0 while the model has not driven it yet (x)."""
    v = signal.value
    return int(v) if v.is_resolvable else 0


class UserConfigSpace:
    """Answers ``dut``'s ``cfg_ext_*`` port on ``clk`` from :attr:`regs`. Headers
    (the first DWORD of each capability, and the VSEC header) are read-only."""

    def __init__(self, dut, clk, legacy: bool, extended: bool) -> None:
        self.dut = dut
        self.clk = clk
        self.regs = default_registers(legacy, extended)
        self.read_only = {LEGACY_RANGE.start, EXTENDED_RANGE.start, EXTENDED_RANGE.start + 1}
        self.seen: list[Seen] = []
        # a test clears it to leave reads unanswered (as logic that forgot to would)
        self.answering = True
        dut.cfg_ext_read_data.value = 0
        dut.cfg_ext_read_data_valid.value = 0
        self._task = cocotb.start_soon(self._run())

    async def _run(self) -> None:
        dut = self.dut
        clk = RisingEdge(self.clk)
        answer: int | None = None  # the register read last cycle, answered this one
        current: Seen | None = None
        while True:
            await clk
            # what the edge sampled: the request shown during the cycle that ended
            read = _level(dut.cfg_ext_read_received)
            write = _level(dut.cfg_ext_write_received)
            if answer is not None and self.answering:
                dut.cfg_ext_read_data.value = self.regs.get(answer, 0)
                dut.cfg_ext_read_data_valid.value = 1
            else:
                dut.cfg_ext_read_data_valid.value = 0
            answer = None
            if not (read or write):
                current = None
                continue
            fn = int(dut.cfg_ext_function_number.value)
            reg = int(dut.cfg_ext_register_number.value)
            kind = "read" if read else "write"
            if current is not None and (current.kind, current.function, current.register) == (
                kind,
                fn,
                reg,
            ):
                current.cycles += 1  # still shown: counted, not taken twice
                continue
            current = Seen(kind, fn, reg)
            self.seen.append(current)
            if read:
                answer = reg if reg in self.regs else None
                if answer is None:
                    continue  # a core register: the core answers
            else:
                current.data = int(dut.cfg_ext_write_data.value)
                current.byte_enable = int(dut.cfg_ext_write_byte_enable.value)
                if reg in self.regs and reg not in self.read_only:
                    mask = sum(0xFF << (8 * b) for b in range(4) if current.byte_enable >> b & 1)
                    self.regs[reg] = (self.regs[reg] & ~mask) | (current.data & mask)
