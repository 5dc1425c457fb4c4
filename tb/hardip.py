"""The UltraScale+ hard-IP model with the requester completion timeout of the real core.

cocotbext-pcie's model keeps a non-posted request's tag busy until its last completion
arrives; a completion that never comes would hold the tag forever, and the engine reusing
it after its own timeout would trip the model's "active tag reused" assertion. The real
core (PG213, requester completion timeout) gives up on such a request: it frees the tag
and reports the timeout on the RC interface as a completion with error code 1001
(``ErrorCode.TIMEOUT``) and Request Completed set. This subclass does the same after
``cpl_timeout_ns`` and tells its listeners (the protocol checker) about it.
"""

from __future__ import annotations

from collections.abc import Callable

import cocotb
from cocotb.triggers import Timer
from cocotb.utils import get_sim_time
from cocotbext.pcie.core.tlp import TlpType
from cocotbext.pcie.xilinx.us import UltraScalePlusPcieDevice
from cocotbext.pcie.xilinx.us.tlp import ErrorCode, Tlp_us

# PCIe Device Control 2 completion timeout range A starts at 50 us
DEFAULT_CPL_TIMEOUT_NS = 50_000.0


class PevbUspDevice(UltraScalePlusPcieDevice):
    """``UltraScalePlusPcieDevice`` plus the requester completion timeout."""

    def __init__(self, *args, cpl_timeout_ns: float = DEFAULT_CPL_TIMEOUT_NS, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.cpl_timeout_ns = cpl_timeout_ns
        self.cpl_timeouts = 0
        self.timeout_listeners: list[Callable[[int, int], None]] = []
        self._first_seen: dict[int, tuple[object, float]] = {}
        cocotb.start_soon(self._run_cpl_timeout())

    async def _run_cpl_timeout(self) -> None:
        step = max(self.cpl_timeout_ns / 8, 10.0)
        while True:
            await Timer(step, "ns")
            now = get_sim_time("ns")
            for tag, req in enumerate(self.active_request):
                if req is None:
                    self._first_seen.pop(tag, None)
                    continue
                seen = self._first_seen.get(tag)
                if seen is None or seen[0] is not req:
                    self._first_seen[tag] = (req, now)
                elif now - seen[1] >= self.cpl_timeout_ns:
                    self._time_out(tag, req)

    def _time_out(self, tag: int, req) -> None:
        self.log.warning("completion timeout: tag %d, %r", tag, req)
        self.active_request[tag] = None
        self._first_seen.pop(tag, None)
        self.tag_available_count = self.get_available_tag_count()
        cpl = Tlp_us()
        cpl.fmt_type = TlpType.CPL
        cpl.requester_id = req.requester_id
        cpl.tag = tag
        cpl.tc = req.tc
        cpl.attr = req.attr
        cpl.error_code = ErrorCode.TIMEOUT
        cpl.request_completed = True
        cpl.lower_address = (req.address + req.get_first_be_offset()) & 0xFFF
        cpl.byte_count = req.get_be_byte_count() & 0x1FFF
        self.rx_buf_cplh_fc_count += 1
        self.rx_buf_cpld_fc_count += 1
        self.rc_queue.put_nowait(cpl)
        self.cpl_timeouts += 1
        for listener in self.timeout_listeners:
            listener(int(req.requester_id), tag)
