"""The UltraScale+ hard-IP model's per-cycle loops, woken only when there is work: the
configuration status, control and interrupt outputs driven when the configuration space
or an interrupt input changes, the completer requests handed over when they come, the
requester sequence numbers dropped when nothing reports them. Each is the base model's
loop doing the same on the same edges, only not woken on idle ones; none adds behaviour
(that is :mod:`.hardip`). Where the extensions are off (an unverified cocotbext-pcie,
:func:`tb.models.install`) or a design connects a port these loops do not drive, the base
model's own loop runs instead."""

from __future__ import annotations

from collections.abc import Callable

from cocotb.triggers import Event, First, RisingEdge
from cocotb.utils import get_sim_time
from cocotbext.pcie.core.tlp import TlpType
from cocotbext.pcie.xilinx.us import UltraScalePlusPcieDevice

from . import active

# the configuration outputs and inputs the event-driven loop handles (the base model's
# status/control/interrupt loops handle many more; connecting any of those falls back)
FAST_CFG = {
    "cfg_function_status",
    "cfg_max_payload",
    "cfg_max_read_req",
    "cfg_bus_number",
    "cfg_config_space_enable",
    "user_lnk_up",
    "cfg_interrupt_msi_enable",
    "cfg_interrupt_msi_mmenable",
    "cfg_interrupt_msi_int",
    "cfg_interrupt_msi_sent",
    "cfg_interrupt_msi_fail",
    "cfg_interrupt_msi_function_number",
    "cfg_interrupt_msix_enable",
    "cfg_interrupt_msix_mask",
    "cfg_interrupt_msix_address",
    "cfg_interrupt_msix_data",
    "cfg_interrupt_msix_int",
    "cfg_interrupt_msix_sent",
    "cfg_interrupt_msix_fail",
}
BASE_CFG = FAST_CFG | {
    "cfg_phy_link_down",
    "cfg_phy_link_status",
    "cfg_negotiated_width",
    "cfg_current_speed",
    "cfg_local_error_out",
    "cfg_rcb_status",
    "cfg_interrupt_msi_attr",
    "cfg_interrupt_msi_data",
    "cfg_interrupt_msi_select",
    "cfg_interrupt_msi_pending_status",
    "cfg_interrupt_msi_pending_status_data_enable",
    "cfg_interrupt_msi_pending_status_function_num",
    "sys_reset",
}


class EventDrivenLoops(UltraScalePlusPcieDevice):
    """``UltraScalePlusPcieDevice`` whose per-cycle loops wake only on work. The class
    built on it (:class:`tb.models.hardip.PevbUspDevice`) gives ``_issue(fn, msi_int,
    msix_int)``, how an interrupt the RTL asks for is sent (the output that answers,
    sent or fail), and sets ``_cfg_changed`` whenever the configuration space may have
    changed."""

    def __init__(self, *args, **kwargs) -> None:
        self._cfg_changed = Event()
        super().__init__(*args, **kwargs)

    def _fast_cfg(self) -> bool:
        return active() and all(getattr(self, name, None) is None for name in BASE_CFG - FAST_CFG)

    async def _run_cfg_status_logic(self) -> None:
        if not self._fast_cfg():
            await super()._run_cfg_status_logic()
        # else: driven by _run_cfg_int_logic

    async def _run_cfg_ctrl_logic(self) -> None:
        if not self._fast_cfg():
            await super()._run_cfg_ctrl_logic()

    def _fn_bits(self, ports: int, flag: Callable[[object], bool]) -> int:
        """A per-function output: bit k set where ``flag(function k)`` holds (the first
        ``ports`` functions, as wide as the hard IP's port)."""
        return sum(1 << k for k, f in enumerate(self.functions[:ports]) if flag(f))

    def _drive_cfg(self) -> None:
        """The status and control outputs (and the config-space-enable input), as the
        base model's loops drive them on each edge."""
        f0 = self.functions[0]
        if self.cfg_config_space_enable is not None:
            self.config_space_enable = bool(self.cfg_config_space_enable.value)
        outputs = (
            # (no sys_reset input on the fast path: the link is up from the start)
            (self.user_lnk_up, lambda: int(not self.link_down)),
            (self.cfg_max_payload, lambda: f0.pcie_cap.max_payload_size & 3),
            (self.cfg_max_read_req, lambda: f0.pcie_cap.max_read_request_size),
            (self.cfg_bus_number, lambda: self.bus_num),
            # per function, 4 bits each (PG213): I/O space, memory space and bus master
            # enable, INTx disable
            (
                self.cfg_function_status,
                lambda: sum(
                    (
                        bool(f.io_space_enable)
                        | bool(f.memory_space_enable) << 1
                        | bool(f.bus_master_enable) << 2
                        | bool(f.interrupt_disable) << 3
                    )
                    << (4 * k)
                    for k, f in enumerate(self.functions[:4])
                ),
            ),
            (
                self.cfg_interrupt_msi_enable,
                lambda: self._fn_bits(2, lambda f: f.msi_cap.msi_enable),
            ),
            (
                self.cfg_interrupt_msi_mmenable,
                lambda: sum(
                    (self.functions[k].msi_cap.msi_multiple_message_enable & 7) << (3 * k)
                    for k in range(min(len(self.functions), 2))
                ),
            ),
            (
                self.cfg_interrupt_msix_enable,
                lambda: self._fn_bits(4, lambda f: f.msix_cap.msix_enable),
            ),
            (
                self.cfg_interrupt_msix_mask,
                lambda: self._fn_bits(4, lambda f: f.msix_cap.msix_function_mask),
            ),
        )
        for signal, value in outputs:
            if signal is not None:
                signal.value = value()

    async def _run_cfg_int_logic(self) -> None:
        if not self._fast_cfg():
            await super()._run_cfg_int_logic()
            return
        edge = RisingEdge(self.user_clk)
        msi = self.cfg_interrupt_msi_int
        msix = self.cfg_interrupt_msix_int
        raised = []  # sent/fail outputs high for this one cycle
        for out in (self.cfg_interrupt_msi_fail, self.cfg_interrupt_msix_fail):
            if out is not None:
                out.value = 0
        while True:
            await edge
            self._cfg_changed.clear()
            self._drive_cfg()
            for out in raised:
                out.value = 0
            raised = []
            msi_int = int(msi.value) if msi is not None else 0
            msix_int = int(msix.value) if msix is not None else 0
            if msi_int or msix_int:
                fn = (
                    int(self.cfg_interrupt_msi_function_number.value)
                    if self.cfg_interrupt_msi_function_number is not None
                    else 0
                )
                issued = get_sim_time("step")
                out = await self._issue(fn, msi_int, msix_int)
                if get_sim_time("step") != issued:
                    # the message waited for the link: raise sent on a clock edge, as
                    # every other write of this loop, so that it is high for exactly one
                    # edge whatever order the simulator runs the edge's writes in
                    await edge
                if out is not None:
                    out.value = 1
                    raised.append(out)
                continue  # sampled on every edge while it is not zero
            if raised:
                continue
            # idle: until the RTL raises an interrupt or the host touches config space
            waits = [self._cfg_changed.wait()]
            waits += [sig.value_change for sig in (msi, msix) if sig is not None]
            await First(*waits)

    def seq_nums_dropped(self) -> bool:
        """Whether the requester sequence numbers are dropped as they come (nothing
        reports them to the RTL)."""
        return (
            active()
            and self.pcie_rq_seq_num0 is None
            and not getattr(self, "pcie_rq_seq_num1", None)
        )

    async def _run_rq_seq_num_logic(self) -> None:
        if not self.seq_nums_dropped():
            await super()._run_rq_seq_num_logic()
            return
        while True:  # nothing to report them on: drop the sequence numbers as they come
            await self.rq_seq_num.get()

    async def _run_cq_logic(self) -> None:
        if not active() or self.pcie_cq_np_req_count is not None:
            await super()._run_cq_logic()
            return
        edge = RisingEdge(self.user_clk)
        period = 1e9 / self.user_clk_frequency
        last = get_sim_time("ns")  # credit accrues from the start, as on every base edge
        exact = False  # pcie_cq_np_req was seen low: count credits edge by edge from now
        while True:
            pending = []
            if not exact and self.cq_queue.empty() and self.cq_np_queue.empty():
                pending.append(await self.cq_queue.get())
            await edge
            now = get_sim_time("ns")
            cycles = 1 if exact else max(1, round((now - last) / period))
            last = now
            if self.pcie_cq_np_req is None or self.pcie_cq_np_req.value:
                # the request credit grows by one per edge with pcie_cq_np_req high
                self.cq_np_req_count = min(self.cq_np_req_count + cycles, 32)
            else:
                exact = True
            while not self.cq_np_queue.empty() and self.cq_np_req_count > 0:
                self.cq_np_req_count -= 1
                await self.cq_source.send(self.cq_np_queue.get_nowait().pack_us_cq())
            while not self.cq_queue.empty():
                pending.append(self.cq_queue.get_nowait())
            for tlp in pending:
                if tlp.fmt_type in {
                    TlpType.IO_READ,
                    TlpType.IO_WRITE,
                    TlpType.MEM_READ,
                    TlpType.MEM_READ_64,
                }:
                    if self.cq_np_req_count > 0:
                        self.cq_np_req_count -= 1
                        await self.cq_source.send(tlp.pack_us_cq())
                    else:
                        self.cq_np_queue.put_nowait(tlp)
                else:
                    await self.cq_source.send(tlp.pack_us_cq())
            # requests left waiting for credit: the loop runs again on the next edge
