"""The hard IP's configuration extend interface (PG213 "Configuration Extend
Interface"), on the model's functions.

Every configuration request a function receives is shown to the user side for one
``user_clk`` cycle: ``cfg_ext_read_received`` or ``cfg_ext_write_received`` with the
register's DWORD number and the function's number (and, for a write, its data and byte
enables). A read of one of the user's ranges waits for the user logic's answer: the data
on ``cfg_ext_read_data`` on a cycle where ``cfg_ext_read_data_valid`` is high.

The user's ranges are those PG213 (and PG344) give the UltraScale+ PCIE4 block, in
bytes: 0xB0-0xBF in the legacy space (Vivado's legacy_ext_pcie_cfg_space_enabled) and
0x480-0x4FF in the extended space (ext_pcie_cfg_space_enabled). The model links them
into the function's capability lists (the core's last legacy capability points to 0xB0,
its last extended capability to 0x480), so software finds them by walking the lists; the
user logic answers every DWORD of its range, its capability header (and next pointer)
included. How the real core sets those next pointers is not documented in PG213: the
link is this model's choice, so that a driver can find the capability.

Requests the model makes through ``cfg_mgmt`` reach a function the same way and are
shown too. A user range read that gets no answer within ``timeout_cycles`` reads 0 and
is counted in :attr:`CfgExt.timeouts` (and logged as an error).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from cocotb.triggers import Lock, RisingEdge
from cocotbext.pcie.core.caps.common import PciCap, PciExtCap

# the user's ranges, as DWORD numbers (PG213: bytes 0xB0-0xBF and 0x480-0x4FF)
LEGACY_RANGE = range(0xB0 // 4, 0xC0 // 4)
EXTENDED_RANGE = range(0x480 // 4, 0x500 // 4)
# where the extended list starts (byte 0x100)
FIRST_EXT = 0x100 // 4
DEFAULT_TIMEOUT_CYCLES = 1000
SIGNALS = (
    "read_received",
    "write_received",
    "register_number",
    "function_number",
    "write_data",
    "write_byte_enable",
    "read_data",
    "read_data_valid",
)


class _NullExtCap(PciExtCap):
    """An extended capability of ID 0 (its header only), holding the list's start."""

    async def _read_register(self, reg: int) -> int:
        return 0

    async def _write_register(self, reg: int, data: int, mask: int) -> None:
        pass


class _UserRange:
    """A capability whose every DWORD (its header included) the user logic answers; its
    writes are shown by the function's write and kept by nothing here."""

    def __init__(self, ext: CfgExt, fn: int, span: range) -> None:
        super().__init__()
        self.ext, self.fn, self.first = ext, fn, span.start
        self.offset, self.length = span.start, len(span)

    async def read_register(self, reg: int) -> int:
        return await self.ext.user_read(self.fn, self.first + reg)

    async def write_register(self, reg: int, data: int, mask: int) -> None:
        pass


class _UserCap(_UserRange, PciCap):
    """The user's range in the legacy capability list."""


class _UserExtCap(_UserRange, PciExtCap):
    """The user's range in the extended capability list."""


class CfgExt:
    """Drives the ``cfg_ext_*`` signals of ``device`` (a
    :class:`~tb.models.hardip.PevbUspDevice`): ``signals`` maps the names of :data:`SIGNALS`
    to handles; ``legacy`` and ``extended`` give the user logic its ranges."""

    def __init__(
        self,
        device: Any,
        signals: dict[str, Any],
        legacy: bool = False,
        extended: bool = False,
        timeout_cycles: int = DEFAULT_TIMEOUT_CYCLES,
    ) -> None:
        missing = [n for n in SIGNALS if n not in signals]
        if missing:
            raise ValueError(f"cfg_ext signals missing: {missing}")
        self.dev = device
        self.sig = signals
        self.timeout_cycles = timeout_cycles
        # the user's ranges this build has
        self.legacy, self.extended = legacy, extended
        self.timeouts = 0
        # (read or write, function, register) of each request shown, in order
        self.shown: list[tuple[str, int, int]] = []
        self._lock = Lock()
        for name in ("read_received", "write_received", "register_number"):
            self.sig[name].value = 0
        self.sig["function_number"].value = 0
        self.sig["write_data"].value = 0
        self.sig["write_byte_enable"].value = 0
        for k, f in enumerate(device.functions):
            if legacy:
                f.register_capability(_UserCap(self, k, LEGACY_RANGE))
            if extended:
                if f.ext_capabilities.find_by_reg(FIRST_EXT) is None:
                    # nothing at 0x100: a null capability there starts the list (PCIe
                    # allows ID 0 with a next pointer), or software would never find
                    # the user's
                    f.register_extended_capability(_NullExtCap(), FIRST_EXT)
                f.register_extended_capability(_UserExtCap(self, k, EXTENDED_RANGE))
            f.read_config_register = self._shown_read(k, f.read_config_register)
            f.write_config_register = self._shown_write(k, f.write_config_register)
        self._user_ranges = (
            (LEGACY_RANGE if legacy else range(0)),
            (EXTENDED_RANGE if extended else range(0)),
        )

    def _in_user_range(self, reg: int) -> bool:
        return any(reg in r for r in self._user_ranges)

    def _shown_read(self, fn: int, read: Callable[[int], Awaitable[int]]):
        async def read_config_register(reg: int) -> int:
            if self._in_user_range(reg):
                return await read(reg)  # the user cap shows it and waits for the answer
            async with self._lock:
                await self._pulse("read_received", fn, reg)
            return await read(reg)

        return read_config_register

    def _shown_write(self, fn: int, write: Callable[[int, int, int], Awaitable[None]]):
        async def write_config_register(reg: int, data: int, mask: int) -> None:
            async with self._lock:
                self.sig["write_data"].value = data & 0xFFFFFFFF
                self.sig["write_byte_enable"].value = mask & 0xF
                await self._pulse("write_received", fn, reg)
            await write(reg, data, mask)

        return write_config_register

    async def _pulse(self, name: str, fn: int, reg: int) -> None:
        """Show a request for one cycle (from one rising edge of user_clk to the next)."""
        clk = RisingEdge(self.dev.user_clk)
        await clk
        self.sig["register_number"].value = reg & 0x3FF
        self.sig["function_number"].value = fn & 0xFF
        self.sig[name].value = 1
        self.shown.append((name.split("_")[0], fn, reg))
        await clk
        self.sig[name].value = 0

    async def user_read(self, fn: int, reg: int) -> int:
        """A read of the user's range: shown, then the user logic's answer (0, counted
        in :attr:`timeouts`, when none comes in time)."""
        async with self._lock:
            await self._pulse("read_received", fn, reg)
            clk = RisingEdge(self.dev.user_clk)
            # the cycle the request is seen may already carry the answer
            for _ in range(self.timeout_cycles):
                valid = self.sig["read_data_valid"].value
                if valid.is_resolvable and int(valid):
                    return int(self.sig["read_data"].value)
                await clk
        self.timeouts += 1
        self.dev.log.error(
            "cfg_ext: no cfg_ext_read_data_valid for register 0x%03x of function %d in %d "
            "cycles: read as 0",
            reg,
            fn,
            self.timeout_cycles,
        )
        return 0
