"""A cocotb driver of the XDMA drop-in's configuration management port (PG195's
``cfg_mgmt_*``, Vivado's ``cfg_mgmt_if``): the user logic's side, reading and writing
the function's configuration space through the hard IP.

The port's rule (PG195, PG213): ``cfg_mgmt_addr`` holds the register's DWORD number in
[9:0] and the function in [17:10]; ``cfg_mgmt_read`` or ``cfg_mgmt_write`` (with the
data and byte enables) stays high until ``cfg_mgmt_read_write_done`` pulses, with the
read data. Signals are driven on the falling edge and read settled there, so the driver
behaves the same on every simulator.
"""

from __future__ import annotations

from cocotb.triggers import FallingEdge, with_timeout


class CfgMgmtError(ValueError):
    """An access the port cannot carry (a register, function or value out of range)."""


class CfgMgmt:
    """The ``cfg_mgmt_*`` port of ``dut``, clocked by ``clk``."""

    def __init__(self, dut, clk, timeout_ns: float = 10_000) -> None:
        self.dut = dut
        self.clk = clk
        self.timeout_ns = timeout_ns
        dut.cfg_mgmt_read.value = 0
        dut.cfg_mgmt_write.value = 0
        dut.cfg_mgmt_addr.value = 0
        dut.cfg_mgmt_write_data.value = 0
        dut.cfg_mgmt_byte_enable.value = 0
        dut.cfg_mgmt_type1_cfg_reg_access.value = 0

    @staticmethod
    def _addr(reg: int, function: int) -> int:
        if not 0 <= reg < 1 << 10:
            raise CfgMgmtError(f"register {reg:#x} is not a DWORD number of 10 bits")
        if not 0 <= function < 1 << 8:
            raise CfgMgmtError(f"function {function} does not fit 8 bits")
        return function << 10 | reg

    async def _access(self, write: bool) -> int:
        await FallingEdge(self.clk)
        (self.dut.cfg_mgmt_write if write else self.dut.cfg_mgmt_read).value = 1
        while True:
            await FallingEdge(self.clk)
            if int(self.dut.cfg_mgmt_read_write_done.value):
                data = int(self.dut.cfg_mgmt_read_data.value)
                self.dut.cfg_mgmt_read.value = 0
                self.dut.cfg_mgmt_write.value = 0
                self.dut.cfg_mgmt_type1_cfg_reg_access.value = 0
                return data

    async def read(self, reg: int, function: int = 0) -> int:
        """Configuration register ``reg`` (a DWORD number) of ``function``."""
        self.dut.cfg_mgmt_addr.value = self._addr(reg, function)
        return await with_timeout(self._access(False), self.timeout_ns, "ns")

    async def write(
        self, reg: int, value: int, byte_enable: int = 0xF, function: int = 0, type1: bool = False
    ) -> None:
        """Write the bytes of ``value`` that ``byte_enable`` selects to register ``reg``
        of ``function``; ``type1`` raises ``cfg_mgmt_type1_cfg_reg_access`` with it."""
        if not 0 <= value < 1 << 32 or not 0 <= byte_enable < 16:
            raise CfgMgmtError(f"value {value:#x} / byte enables {byte_enable:#x} out of range")
        self.dut.cfg_mgmt_addr.value = self._addr(reg, function)
        self.dut.cfg_mgmt_write_data.value = value
        self.dut.cfg_mgmt_byte_enable.value = byte_enable
        self.dut.cfg_mgmt_type1_cfg_reg_access.value = int(type1)
        await with_timeout(self._access(True), self.timeout_ns, "ns")
