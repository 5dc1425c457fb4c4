"""The UltraScale+ hard-IP model with the requester completion timeout of the real core
(PG213): a request whose completion never comes frees its tag and its completion credits
after the timeout its function's Device Control 2 selects, and is reported on RC with
error code 1001. A request made with bus mastering disabled is not sent, and ends the
same way. Its per-cycle loops wake only when there is work (:mod:`.hardip_speed`, kept
apart from the behaviour here). See docs/internals.md.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import cocotb
from cocotb.queue import Queue
from cocotb.triggers import Event, First, RisingEdge, Timer
from cocotb.utils import get_sim_time
from cocotbext.pcie.core.device import Device
from cocotbext.pcie.core.tlp import Tlp, TlpAttr, TlpType
from cocotbext.pcie.core.utils import PcieId
from cocotbext.pcie.xilinx.us.interface import UsPcieFrame
from cocotbext.pcie.xilinx.us.tlp import ErrorCode, Tlp_us

from ..dp import RC_BUSY, RC_DEFERRED, RC_SOURCE, RC_WAITER, RQ_BUSY, RQ_FC, RQ_MODEL, RQ_NP, Hip
from . import clocks
from .hardip_speed import EventDrivenLoops
from .intx import PINS, intx_message

# The timeout of Device Control 2's default range (Completion Timeout Value 0). PCIe
# allows 50 us to 50 ms there and recommends at least 10 ms, which would cost minutes of
# simulation per timed-out read; 200 us is 4x the longest legal wait measured here (32
# reads of 512 bytes queued behind each other on a Gen2 x1 link, about 50 us).
DEFAULT_CPL_TIMEOUT_NS = 200_000.0
# the Req Type of an RQ descriptor (DW2 bits 14:11, PG213) that is a memory write
_RQ_MEM_WRITE = 0b0001
# the other Completion Timeout Values: the low end of each sub-range (PCIe 7.5.3.16)
# how long the RTL may take to confirm an FLR (software waits 100 ms before touching the
# function again; the model finishes well inside the wait the driver model uses)
DEFAULT_FLR_DONE_TIMEOUT_NS = 5_000.0
CPL_TIMEOUT_RANGES_NS = {
    0x1: 50e3,  # range A: 50 us to 100 us
    0x2: 1e6,  # range A: 1 ms to 10 ms
    0x5: 16e6,  # range B: 16 ms to 55 ms
    0x6: 65e6,  # range B: 65 ms to 210 ms
    0x9: 260e6,  # range C: 260 ms to 900 ms
    0xA: 1e9,  # range C: 1 s to 3.5 s
    0xD: 4e9,  # range D: 4 s to 13 s
    0xE: 17e9,  # range D: 17 s to 64 s
}

MEMORY_REQUESTS = {
    TlpType.MEM_READ,
    TlpType.MEM_READ_64,
    TlpType.MEM_WRITE,
    TlpType.MEM_WRITE_64,
}
COMPLETION_TLPS = {TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA}
CONFIG_TLPS = {TlpType.CFG_READ_0, TlpType.CFG_WRITE_0, TlpType.CFG_READ_1, TlpType.CFG_WRITE_1}


MEMORY_READS = (TlpType.MEM_READ, TlpType.MEM_READ_64)
# RQ descriptors' request types from 12 (PG213, "Requester Request Descriptor Format"):
# messages, which this model does not send, and one reserved code
_RQ_MESSAGE, _RQ_RESERVED = 12, 15
_RQ_TYPES = ("a message", "a vendor-defined message", "an ATS message", "reserved")
# what the RC queue holds for a completion the compiled data path's library took for the
# card (tb.models.native.CardCpl): the next of the library's own queue
LIBRARY_CPL = object()
# what the RC queue holds first where Python's RC loop takes over the library's
# (tb/dp/rcloop.cpp): the completion the library's loop holds, in the wait it was in
RC_ADOPTED = object()


class _Requests(list):
    """The requests the hard IP has outstanding, by tag (cocotbext-pcie's
    ``active_request``): each one set or cleared here is set or cleared in the library's
    table too (``tb/dp/hip.cpp``), which the compiled data path's checks of a completion
    read. A request the library ends (its last completion taken with no Python) is gone
    from here as it is from the table, and one it issues (a memory read from RQ,
    ``tb/dp/rqdrain.cpp``) is here as the RQ logic would have set it: every read looks at
    the table's counts of the requests it ended and issued first."""

    __slots__ = ("_ended", "_hip", "_issued", "_live", "_table")

    def __init__(self, hip: Any, items: list) -> None:
        super().__init__(items)
        self._hip, self._table = hip, hip.request
        self._ended = hip.ended
        self._issued = hip.issued_count
        self._live: set[int] = set()  # the tags set here and not cleared since
        for tag, req in enumerate(items):
            self[tag] = req

    def _sync(self) -> None:
        """Drop the requests the library has ended since the last look, then take in
        those it has issued."""
        hip = self._hip
        ended = hip.ended
        if ended != self._ended:
            self._ended = ended
            table, put = self._table, super().__setitem__
            for tag in [t for t in self._live if not table[t].active]:
                put(tag, None)
                self._live.discard(tag)
        if hip.issued_count != self._issued:
            self._issued = hip.issued_count
            self._take_issued()

    def _take_issued(self) -> None:
        """The requests the library issued since the last look that are still active,
        each as the model's Tlp the RQ logic would have made of its frame."""
        hip, table, put = self._hip, self._table, super().__setitem__
        for word in range(len(hip.issued)):
            bits = hip.issued[word]
            if not bits:
                continue
            hip.issued[word] = 0
            while bits:
                low = bits & -bits
                bits ^= low
                tag = word * 64 + low.bit_length() - 1
                if not table[tag].active:
                    continue  # (ended already)
                be = hip.rq_be[tag]
                frame = UsPcieFrame()
                frame.data = list(hip.rq_desc[tag])
                frame.first_be, frame.last_be, frame.seq_num = be & 0xF, (be >> 4) & 0xF, be >> 8
                req = Tlp_us.unpack_us_rq(frame)
                req.requester_id = PcieId.from_int(table[tag].requester_id)
                put(tag, req)
                self._live.add(tag)

    def __getitem__(self, tag: Any) -> Any:
        self._sync()
        return super().__getitem__(tag)

    def __iter__(self) -> Any:
        self._sync()
        return super().__iter__()

    def __reversed__(self) -> Any:
        self._sync()
        return super().__reversed__()

    def __contains__(self, req: Any) -> bool:
        self._sync()
        return super().__contains__(req)

    def __repr__(self) -> str:
        self._sync()
        return super().__repr__()

    def count(self, req: Any) -> int:
        self._sync()
        return super().count(req)

    def index(self, req: Any, *args: Any) -> int:
        self._sync()
        return super().index(req, *args)

    def copy(self) -> list:
        self._sync()
        return super().copy()

    def __setitem__(self, tag: Any, req: Any) -> None:
        self._sync()
        super().__setitem__(tag, req)
        slot = self._table[tag]
        if req is None:
            slot.active = 0
            self._live.discard(tag)
            return
        self._live.add(tag)
        slot.requester_id = int(req.requester_id)
        slot.attr = int(req.attr)
        slot.tc = int(req.tc)
        slot.mem_read = req.fmt_type in MEMORY_READS
        slot.first_be_offset = req.get_first_be_offset()
        slot.be_byte_count = req.get_be_byte_count()
        slot.address = req.address
        slot.active = 1


class _RcQueue(Queue):
    """The model's RC queue (cocotbext-pcie's ``rc_queue``). Whatever is put in it makes
    the RC loop's next turn Python's (``RC_BUSY``, until the loop is idle in its get with
    the queue empty again), and where the library runs the loop, first hands it back
    (``adopt``, told whether the item is the marker of the last completion the library
    took)."""

    def __init__(self, hip: Any, adopt: Callable[[bool], None]) -> None:
        super().__init__()
        self._hip, self._adopt = hip, adopt

    def put_nowait(self, item: Any) -> None:
        hip = self._hip
        if hip.rc_owned:
            self._adopt(item is LIBRARY_CPL)
        hip.rc_blocks |= RC_BUSY
        super().put_nowait(item)


class _CreditsIn:
    """The completion data credits each active request has received, by tag (a mapping
    to the model's code, with 0 for a tag it has none for), in the library's table."""

    __slots__ = ("_credits",)

    def __init__(self, credits: Any) -> None:
        self._credits = credits

    def get(self, tag: int, default: int = 0) -> int:
        return self._credits[tag] or default

    def __setitem__(self, tag: int, value: int) -> None:
        self._credits[tag] = value

    def pop(self, tag: int, default: int = 0) -> int:
        value = self._credits[tag]
        self._credits[tag] = 0
        return value or default

    def clear(self) -> None:
        for tag in range(len(self._credits)):
            self._credits[tag] = 0


def _in_table(name: str) -> property:
    """A counter of the requester side kept in the library's table (``Hip``)."""

    def get(self: Any) -> int:
        return getattr(self._hip, name)

    def put(self: Any, value: int) -> None:
        setattr(self._hip, name, value)

    return property(get, put, doc=f"``{name}``, in the library's table")


class PevbUspDevice(EventDrivenLoops):
    """``UltraScalePlusPcieDevice`` plus the requester completion timeout, the completion
    credits a timed-out request held, requests made with bus mastering disabled, FLR, hot
    reset and link down.

    ``cpl_timeout_ns`` is the timeout of Device Control 2's default range; a driver that
    programs another Completion Timeout Value gets that range's (:data:`CPL_TIMEOUT_RANGES_NS`),
    and Completion Timeout Disable turns it off (the engine's own timeout remains).

    Function-level reset (with ``cfg_flr_in_process``/``cfg_flr_done`` connected, the
    capability is advertised): Initiate FLR ends every request the function has
    outstanding with error code 1000 on RC, raises ``cfg_flr_in_process`` until the RTL
    pulses ``cfg_flr_done`` (at most ``flr_done_timeout_ns``), then resets the
    function's configuration state: Command, BARs, MSI and MSI-X enables, Device Control
    2; software restores them (Linux: ``pci_restore_state``). :meth:`set_hot_reset` and
    :meth:`link_down_for` take the link down (the TB calls the first when the bridge
    above sets Secondary Bus Reset). Bus Master Enable and Memory Space Enable are obeyed
    as PCIe asks (see docs/internals.md).
    """

    def __init__(
        self,
        *args,
        cpl_timeout_ns: float = DEFAULT_CPL_TIMEOUT_NS,
        flr_done_timeout_ns: float = DEFAULT_FLR_DONE_TIMEOUT_NS,
        **kwargs,
    ) -> None:
        # the requester side's state where the compiled data path's library can read and
        # move it on (tb/dp/hip.cpp): the counters below, the active requests, the data
        # credits each has received; the card's completions the library took for RC
        self._hip = Hip()
        self.card_cpl: Any = None  # (tb.models.native.CardCpl, on the compiled path)
        super().__init__(*args, **kwargs)
        self.active_request = _Requests(self._hip, self.active_request)
        # the RC loop's turn for a completion the library took is the library's too while
        # the loop is idle on an empty queue (tb/dp/hip.cpp, dp_card_turn)
        self._hip.rc_blocks = RC_BUSY | RC_SOURCE | RC_DEFERRED
        # RQ's frames are Python's until the library drains the sinks (CardEnd.drain)
        self._hip.rq_blocks = RQ_MODEL | RQ_FC
        self.rc_queue = _RcQueue(self._hip, self._rc_adopt)
        self._rc_parked = False
        self._rc_adopted: tuple[int, int, int] = (0, 0, 0)
        if hasattr(self.rc_source, "on_clear"):  # (a transactor's: tb.models.transactors)
            self.rc_source.on_clear = self._rc_cleared
        clocks.on_timed_writes(self._rc_idle)
        self.cpl_timeout_ns = cpl_timeout_ns
        self.cpl_timeouts = 0
        # requests the RTL made while its function's bus mastering was off (not sent)
        self.bme_dropped = 0
        # interrupts the hard IP answered with cfg_interrupt_msi(x)_fail; a test sets
        # fail_interrupts to make the next ones fail (a message the core could not send)
        self.msi_failed = 0
        self.fail_interrupts = 0
        # called with (requester ID, tag) when a request ends without its completions
        # (completion timeout, FLR): later completions for it are late
        self.timeout_listeners: list[Callable[[int, int], None]] = []
        # called with (rule, message, the TLP described) for a request the RTL hands the
        # core that it cannot send (malformed, or its tag still in use); the core drops
        # it. None: such a request stops the simulation with an AssertionError
        self.on_violation: Callable[[str, str, str], None] | None = None
        # memory writes the RTL has handed RQ, counted as each frame ends (the core sends
        # them on in order: the n-th write on the link is the n-th of these, unless the
        # core dropped some: bus mastering off, a reset of the link)
        self.rq_posted = 0
        self._first_seen: dict[int, tuple[object, float]] = {}
        # completion data credits received so far per active tag
        self._credits_in = _CreditsIn(self._hip.credits_in)
        # hot resets and link-down events; the link is down now (told to
        # ``link_state_listeners`` on each change)
        self.hot_resets = 0
        self.link_state_listeners: list[Callable[[], None]] = []
        self.link_down = False
        # function-level resets started (and those the RTL did not confirm in time)
        self.flr_count = 0
        self.flr_unconfirmed = 0
        self.flr_done_timeout_ns = flr_done_timeout_ns
        self._flr_active = [False] * len(self.functions)
        for k, f in enumerate(self.functions):
            f.pcie_cap.completion_timeout_ranges_supported = 0xF  # ranges A-D
            f.pcie_cap.completion_timeout_disable_supported = True
            f.pcie_cap.function_level_reset_capability = self.cfg_flr_in_process is not None
            f.pcie_cap.initiate_function_level_reset = self._flr_starter(k)
            f.read_config_register = self._reserved_reads_zero(f.read_config_register)
            self._fence_interrupts(f)
        if self.cfg_flr_in_process is not None:
            self.cfg_flr_in_process.value = 0
        # legacy interrupts, when the design has the INTx interface: every function's
        # Interrupt Pin is INTA (the IP's default), ``intx_sent`` holds the virtual
        # wires the link was last told are asserted (bit = pin), ``intx_messages``
        # counts the Assert and Deassert messages sent
        self.intx_sent = 0
        self.intx_messages = 0
        self._intx_wake = Event()
        # called when the link goes down (the port above drops the wires it held)
        self.link_down_listeners: list[Callable[[], None]] = []
        self._track_order()
        self._functions_changed()
        cocotb.start_soon(self._run_cpl_timeout())
        if self.cfg_interrupt_int is not None:
            for f in self.functions:
                f.interrupt_pin = 1
            if self.cfg_interrupt_sent is not None:
                self.cfg_interrupt_sent.value = 0
            cocotb.start_soon(self._run_intx_logic())

    cpld_credit_count = _in_table("cpld_credit_count")
    rx_buf_cplh_fc_count = _in_table("rx_buf_cplh_fc_count")
    rx_buf_cpld_fc_count = _in_table("rx_buf_cpld_fc_count")
    rx_buf_cplh_fc_limit = _in_table("rx_buf_cplh_fc_limit")
    rx_buf_cpld_fc_limit = _in_table("rx_buf_cpld_fc_limit")
    tag_available_count = _in_table("tag_available_count")
    rq_posted = _in_table("rq_posted")
    _rq_seen = _in_table("rq_seen")
    cpld_credit_limit = _in_table("cpld_credit_limit")

    @property
    def bus_num(self) -> int:
        """The bus number the core captured (cocotbext-pcie's), as the library's table
        reads it too."""
        return self._bus_num

    @bus_num.setter
    def bus_num(self, value: int) -> None:
        Device.bus_num.fset(self, value)
        if getattr(self, "functions", None):
            self._functions_changed()

    def _config_changed(self) -> None:
        """The configuration space may differ (a write, a reset): the loops that drive
        the configuration outputs look again."""
        self._cfg_changed.set()
        self._intx_wake.set()
        self._functions_changed()

    def _functions_changed(self) -> None:
        """The functions' IDs and function 0's Extended Tag Field Enable, as the
        library's table reads them."""
        hip = self._hip
        hip.extended_tags = int(bool(self.functions[0].pcie_cap.extended_tag_field_enable))
        hip.functions = len(self.functions)
        bme = 0
        for k, f in enumerate(self.functions):
            hip.function_id[k] = int(f.pcie_id)
            bme |= int(bool(f.bus_master_enable)) << k
        hip.rq_bme = bme
        hip.bus = self.bus_num

    def _fence_interrupts(self, f) -> None:
        """Send ``f``'s interrupt messages behind every posted request RQ took before
        them (an interrupt is a posted write the transaction layer makes: it passes none
        of the writes the core has accepted, so a driver it wakes finds the data and the
        write-back in memory; PG195 and PG302 count a transfer done once the core has
        accepted its last write), whichever loop issues them: this model's or
        cocotbext-pcie's own."""
        for cap_name, name in (
            ("msi_cap", "issue_msi_interrupt"),
            ("msix_cap", "issue_msix_interrupt"),
        ):
            cap = getattr(f, cap_name, None)
            if cap is None:
                continue
            issue = getattr(cap, name)

            async def fenced(*args, _issue=issue, **kwargs):
                await self._rq_passed_through(self._rq_seen)
                return await _issue(*args, **kwargs)

            setattr(cap, name, fenced)

    @staticmethod
    def _reserved_reads_zero(read: Callable[[int], Awaitable[int | None]]):
        """A function's config read where reserved registers read 0, as PCIe requires
        (the base model has no value for some and fails the completion)."""

        async def read_config_register(reg: int) -> int:
            value = await read(reg)
            return 0 if value is None else value

        return read_config_register

    def request_timeout_ns(self, req) -> float | None:
        """The completion timeout of ``req`` (None: disabled), from its function's Device
        Control 2."""
        cap = self.functions[req.requester_id.function].pcie_cap
        if cap.completion_timeout_disable:
            return None
        return CPL_TIMEOUT_RANGES_NS.get(cap.completion_timeout_value, self.cpl_timeout_ns)

    async def _run_cpl_timeout(self) -> None:
        while True:
            # checked 8 times per timeout: a request times out within 1/8 of it late
            step = min(
                [self.cpl_timeout_ns]
                + [t for t in map(self.request_timeout_ns, filter(None, self.active_request)) if t]
            )
            await Timer(max(step / 8, 10.0), "ns")
            now = get_sim_time("ns")
            for tag, req in enumerate(self.active_request):
                if req is None:
                    self._first_seen.pop(tag, None)
                    continue
                seen = self._first_seen.get(tag)
                limit = self.request_timeout_ns(req)
                if seen is None or seen[0] is not req:
                    self._first_seen[tag] = (req, now)
                elif limit is not None and now - seen[1] >= limit:
                    self._time_out(tag, req)

    def _time_out(self, tag: int, req) -> None:
        self.log.warning("completion timeout: tag %d, %r", tag, req)
        self.cpl_timeouts += 1
        self._terminate(tag, req, ErrorCode.TIMEOUT)

    def _terminate(self, tag: int, req, code: ErrorCode) -> None:
        """End an outstanding request without its completions: free its tag and the
        credits they would have used, and report it on RC with error ``code``."""
        self.active_request[tag] = None
        self._first_seen.pop(tag, None)
        self.tag_available_count = self.get_available_tag_count()
        # the credits the rest of its completions would have used are free again
        owed = req.get_data_credits() - self._credits_in.pop(tag, 0)
        self.cpld_credit_count = max(self.cpld_credit_count - max(owed, 0), 0)
        self.cpld_credit_released.set()
        cpl = Tlp_us()
        cpl.fmt_type = TlpType.CPL
        cpl.requester_id = req.requester_id
        cpl.tag = tag
        cpl.tc = req.tc
        cpl.attr = req.attr
        cpl.error_code = code
        cpl.request_completed = True
        cpl.lower_address = (req.address + req.get_first_be_offset()) & 0xFFF
        cpl.byte_count = req.get_be_byte_count() & 0x1FFF
        self.rx_buf_cplh_fc_count += 1
        self.rx_buf_cpld_fc_count += 1
        self.rc_queue.put_nowait(cpl)
        for listener in self.timeout_listeners:
            listener(int(req.requester_id), tag)

    @property
    def link_down(self) -> bool:
        """Whether the link is down (a hot reset, a link-down event)."""
        return self._link_down

    @link_down.setter
    def link_down(self, down: bool) -> None:
        self._link_down = down
        for listener in self.link_state_listeners:
            listener()

    @staticmethod
    def _reset_config(f, conventional: bool = False) -> None:
        """A function's configuration state after a reset: Command, BARs, MSI and MSI-X
        enables, Device Control 2; a conventional (hot) reset also Device Control."""
        f.io_space_enable = f.memory_space_enable = f.bus_master_enable = False
        f.interrupt_disable = False
        for i, mask in enumerate(f.bar_mask):
            f.bar[i] &= ~mask & 0xFFFFFFFF
        msi, msix = getattr(f, "msi_cap", None), getattr(f, "msix_cap", None)
        if msi is not None:
            msi.msi_enable = False
            msi.msi_multiple_message_enable = 0
            msi.msi_message_address = msi.msi_message_data = msi.msi_mask_bits = 0
        if msix is not None:
            msix.msix_enable = msix.msix_function_mask = False
        cap = f.pcie_cap
        cap.completion_timeout_value = 0
        cap.completion_timeout_disable = False
        if conventional:
            cap.max_payload_size = 0
            cap.max_read_request_size = 2
            cap.extended_tag_field_enable = False
            cap.enable_relaxed_ordering = cap.enable_no_snoop = True

    # --- hot reset and link down ------------------------------------------------------------
    def set_hot_reset(self, active: bool) -> None:
        """A hot reset (the bridge above holds Secondary Bus Reset) or the link down:
        while ``active`` the link is down (``user_lnk_up`` low) and the user logic held in
        reset (``user_reset``); what the core had in flight is lost and the functions'
        configuration resets. When it ends the link trains again."""
        if active and not self.link_down:
            self.link_down = True
            self.hot_resets += 1
            self.log.warning("link down / hot reset: user logic held in reset")
            for tag, req in enumerate(self.active_request):
                if req is not None:
                    self.active_request[tag] = None
                    for listener in self.timeout_listeners:
                        listener(int(req.requester_id), tag)
            self._credits_in.clear()
            self._first_seen.clear()
            self.cpld_credit_count = 0
            self.rx_buf_cplh_fc_count = self.rx_buf_cpld_fc_count = 0
            self.tag_available_count = self.get_available_tag_count()
            for q in (self.rc_queue, self.cq_queue, self.cq_np_queue, self.rq_np_queue):
                while not q.empty():
                    q.get_nowait()
                    if q is self.rq_np_queue:
                        self._np_held = max(self._np_held - 1, 0)
            self._np_changed()
            if self.card_cpl is not None:
                self.card_cpl.clear()
            self._drop_partial_tlps()
            for f in self.functions:
                self._reset_config(f, conventional=True)
            self.user_reset.value = 1
            self.intx_sent = 0  # lost with the link; the port above drops them itself
            for listener in self.link_down_listeners:
                listener()
            self._config_changed()
        elif not active and self.link_down:
            cocotb.start_soon(self._link_up())

    def _drop_partial_tlps(self) -> None:
        """The user interface's streams lose what they hold: the TLPs taken from the RTL
        and not yet sent, one taken in part (its beats are never joined to a TLP the RTL
        sends after the reset), and those queued for the RTL with the rest of one in the
        middle of its beats."""
        for sink in (self.rq_sink, self.cc_sink):
            if sink is None:
                continue
            while not sink.empty():
                sink.recv_nowait()
            if hasattr(sink, "drop_partial"):
                sink.drop_partial()
            else:
                restart_unpacker(sink)
        # nothing left holds a completion back
        self._rq_pending.clear()
        if self.card_end is not None:  # (what the library's drain holds, alike)
            self.card_end.drop_held()
        self._cc_after.clear()
        self._rq_moved.set()
        for source in (self.rc_source, self.cq_source):
            if source is None:
                continue
            if hasattr(source, "drop_partial"):
                source.drop_partial()
            else:
                source.clear()  # (cocotbext-pcie's own source ends a TLP it has begun)

    async def link_down_for(self, duration_ns: float) -> None:
        """The link goes down for ``duration_ns`` (a surprise: nobody asked), then up."""
        self.set_hot_reset(True)
        await Timer(max(1, round(duration_ns)), "ns")
        self.set_hot_reset(False)

    async def _link_up(self) -> None:
        for _ in range(16):  # training, then the user logic out of reset
            await RisingEdge(self.user_clk)
        # (the edge that put the user logic in reset may have taken one more beat)
        self._drop_partial_tlps()
        self.link_down = False
        self.user_reset.value = 0
        self._config_changed()
        self.log.warning("link up")

    # --- function-level reset -------------------------------------------------------------
    def _flr_starter(self, fn: int) -> Callable[[], Awaitable[None]]:
        async def initiate() -> None:
            # the configuration write that asked for it completes first
            if self.cfg_flr_in_process is not None and not self._flr_active[fn]:
                self._flr_active[fn] = True
                cocotb.start_soon(self._run_flr(fn))

        return initiate

    async def _run_flr(self, fn: int) -> None:
        self.flr_count += 1
        self.log.warning("function-level reset of function %d", fn)
        for tag, req in enumerate(self.active_request):
            if req is not None and req.requester_id.function == fn:
                self._terminate(tag, req, ErrorCode.FLR)
        self.cfg_flr_in_process.value = int(self.cfg_flr_in_process.value) | (1 << fn)
        edge = RisingEdge(self.user_clk)
        end = get_sim_time("ns") + self.flr_done_timeout_ns
        while True:
            await edge
            if self.cfg_flr_done is not None and int(self.cfg_flr_done.value) >> fn & 1:
                break
            if get_sim_time("ns") >= end:
                self.flr_unconfirmed += 1
                self.log.error("FLR of function %d: no cfg_flr_done from the RTL", fn)
                break
        self._reset_config(self.functions[fn])
        self.cfg_flr_in_process.value = int(self.cfg_flr_in_process.value) & ~(1 << fn)
        self._flr_active[fn] = False
        self._config_changed()
        self.log.warning("function-level reset of function %d done", fn)

    # --- the requester request path (RQ) ------------------------------------------------
    def _np_fits(self, tlp) -> bool:
        """Completion buffer space (and, with core-managed tags, a tag) for ``tlp``."""
        return self.cpld_credit_count + tlp.get_data_credits() <= self.cpld_credit_limit and (
            self.enable_client_tag or self.tag_available_count > 0
        )

    async def _issue_np(self, tlp) -> None:
        """Track a non-posted request and send it; with its function's bus mastering off,
        track it without sending it, so that it ends by completion timeout."""
        if not self.enable_client_tag:
            tlp.tag = self.get_free_tag()
            self.rq_tag.put_nowait(tlp.tag)
        limit = 256 if self.functions[0].pcie_cap.extended_tag_field_enable else 32
        if tlp.tag >= limit:
            self._violation(
                "tag-width", f"tag {tlp.tag} out of range ({limit} tags enabled)", repr(tlp)
            )
            return
        if self.active_request[tlp.tag]:
            self._violation(
                "tag-in-use",
                f"tag {tlp.tag} reused while {self.active_request[tlp.tag]!r} is outstanding",
                repr(tlp),
            )
            return
        self.active_request[tlp.tag] = tlp
        self._credits_in[tlp.tag] = 0
        self.tag_available_count = self.get_available_tag_count()
        self.cpld_credit_count += tlp.get_data_credits()
        if self.functions[tlp.requester_id.function].bus_master_enable:
            await self.send(Tlp(tlp))
        else:
            self.bme_dropped += 1
            self.log.warning("bus mastering disabled: request not sent: %r", tlp)
        self.rq_seq_num.put_nowait(tlp.seq_num)

    def _violation(self, rule: str, message: str, what: str) -> None:
        if self.on_violation is None:
            raise AssertionError(f"{message}: {what}")
        self.log.error("request dropped: %s: %s", message, what)
        self.on_violation(rule, message, what)

    async def _run_rq_logic(self) -> None:
        while True:
            self._rq_busy = False
            if not self._rq_pending and self.rq_sink.empty():  # (the library's from here)
                self._hip.rq_blocks &= ~RQ_BUSY
            frame = await self.rq_sink.recv()
            self._rq_busy = True
            passed = False
            try:
                passed = await self._rq_frame(frame)
            finally:
                if not passed:
                    self._rq_passed()

    def _rq_passed(self) -> None:
        """The oldest RQ TLP not yet passed no longer holds completions back: sent,
        dropped, or a non-posted request (completions may pass those)."""
        if self._rq_pending:
            self._rq_pending.popleft()
            self._rq_moved.set()

    async def _rq_frame(self, frame) -> bool:
        """Handle one TLP from RQ; True if it is not to pass here: passed already (a
        non-posted request), or a write the library's drain took to wait for the link
        with (with the frames queued behind it)."""
        end = self.card_end
        if (
            end is not None and _posted_write(frame) and self._rq_write_movable(frame)
        ):  # a posted write the library sends, as below
            got = end.write(frame, self.bus_num)
            if got == 2:
                got = end.adopt(frame)  # (the library waits for the link with it)
                if got == 1:
                    self._rq_adopted()
                    return True
                if got != 2:
                    await end.gate()
                    got = end.write(frame, self.bus_num, gated=True)
            if got in (1, 2):
                return False
        kind = (frame.data[2] >> 11) & 0xF if len(frame.data) > 2 else 0
        if kind >= _RQ_MESSAGE:  # (cocotbext-pcie's unpacker has no TLP type for these)
            self._violation(
                "rq-unsupported" if kind < _RQ_RESERVED else "rq-malformed",
                f"request type {kind} ({_RQ_TYPES[kind - _RQ_MESSAGE]}) on RQ, which this "
                "model of the hard IP does not carry",
                f"RQ frame of {len(frame.data)} DW: {frame!r}"[:400],
            )
            return False
        try:
            tlp = Tlp_us.unpack_us_rq(frame, self.enable_parity)
            ok = tlp.check()
        except (AssertionError, ValueError):  # (ValueError: a reserved field's value)
            ok = False
        if not ok:
            self._violation(
                "rq-malformed",
                "a request whose header does not match its data (length field, parity, type "
                "or a reserved value)",
                f"RQ frame of {len(frame.data)} DW: {frame!r}"[:400],
            )
            return False
        if tlp.discontinue:
            self.log.warning("discontinue bit set, TLP discarded: %r", tlp)
            return False
        if not tlp.requester_id_enable:
            tlp.requester_id = tlp.requester_id._replace(bus=self.bus_num)
        if not tlp.is_nonposted():
            if self.functions[tlp.requester_id.function].bus_master_enable:
                await self.send(Tlp(tlp))
                self.rq_seq_num.put_nowait(tlp.seq_num)
            else:
                self.bme_dropped += 1
                self.log.warning("bus mastering disabled: write dropped: %r", tlp)
            return False
        self._rq_passed()  # a completion may pass a non-posted request
        if self.rq_np_queue.empty() and self._np_fits(tlp):
            await self._issue_np(tlp)  # nothing queued before it: send now, in order
            return True
        self._np_held += 1  # (the library issues no read before it: RQ_NP)
        self._np_changed()
        while self.rq_np_queue.qsize() >= self.rq_np_limit:
            self.rq_np_queue_dequeue.clear()
            await self.rq_np_queue_dequeue.wait()
        self.rq_np_queue.put_nowait(tlp)
        return True

    def _rq_adopted(self) -> None:
        """The library's drain holds the write the RQ logic was about to wait for the
        link with: every frame queued in the sink goes behind it there, and the frames
        counted as received and not passed (that one and those) are counted there."""
        sink, end = self.rq_sink, self.card_end
        count = 1
        while not sink.empty():
            end.adopt_more(sink.recv_nowait())
            count += 1
        for _ in range(min(count, len(self._rq_pending))):
            self._rq_pending.popleft()

    def _np_changed(self) -> None:
        """Tell the library whether a memory read from RQ is Python's whatever else
        holds: non-posted requests queued or being issued here, or tags the core
        manages."""
        hip = self._hip
        if self._np_held or not self.enable_client_tag:
            hip.rq_blocks |= RQ_NP
        else:
            hip.rq_blocks &= ~RQ_NP

    # --- the requester completion path (RC) -----------------------------------------------
    async def _run_rc_logic(self) -> None:
        """cocotbext-pcie's RC loop; a completion the RC source can take whole (the
        transactor model on the compiled data path) goes in without a frame made."""
        while True:
            if self.rc_queue.empty():
                self._rc_parked = True
                self._rc_idle()
            tlp = await self.rc_queue.get()
            self._rc_parked = False
            self._hip.rc_blocks |= RC_BUSY
            source = self.rc_source
            if tlp is LIBRARY_CPL or tlp is RC_ADOPTED:  # the library's (CardCpl)
                if tlp is LIBRARY_CPL:
                    dc = await source.send_queued(self.card_cpl.queue)
                else:  # from where the library's loop stood
                    dc = await source.send_adopted(self.card_cpl.queue, *self._rc_adopted)
                self.rx_buf_cplh_fc_count = max(self.rx_buf_cplh_fc_count - 1, 0)
                self.rx_buf_cpld_fc_count = max(self.rx_buf_cpld_fc_count - (dc + 1), 0)
                continue
            packs = getattr(source, "packs", None)
            if packs is not None and packs(tlp):
                await source.send_completion(tlp)
            else:
                await source.send(tlp.pack_us_rc())
            self.rx_buf_cplh_fc_count = max(self.rx_buf_cplh_fc_count - 1, 0)
            self.rx_buf_cpld_fc_count = max(
                self.rx_buf_cpld_fc_count - (tlp.get_data_credits() + 1), 0
            )

    def _rc_adopt(self, marked: bool) -> None:
        """The library's RC loop handed to Python's where it stands: the completion it
        holds first in the queue, in its wait, then a marker for each it queued after
        (but the last where ``marked``: its marker is being put)."""
        got = self.card_cpl.adopt()
        if got is None:
            return
        point, phase, ndw, queued = got
        self._rc_adopted = (point, phase, ndw)
        put = super(_RcQueue, self.rc_queue).put_nowait
        put(RC_ADOPTED)
        for _ in range(queued - marked):
            put(LIBRARY_CPL)
        self._hip.rc_blocks |= RC_BUSY

    def _rc_cleared(self) -> None:
        """The RC source dropped what it holds (a reset): Python's RC loop goes on from
        where the library's stands, as it would have."""
        if self._hip.rc_owned:
            self._rc_adopt(False)

    def _rc_idle(self) -> None:
        """The RC loop is idle in its get, the queue empty (or, while it is, a timer
        callback's writes began to reach the simulator at once): the library may take
        its next turn while the RQ logic waits for no credit, the RC source is one it
        writes into, and a write from a timer callback reaches the simulator at once, as
        the loop's own would (hip.cpp's RC_ bits)."""
        if not self._rc_parked:
            return
        hip = self._hip
        blocks = hip.rc_blocks & RC_WAITER
        if getattr(self.rc_source, "rc_state", None) is None:
            blocks |= RC_SOURCE
        if not clocks.timed_writes_now():
            blocks |= RC_DEFERRED
        hip.rc_blocks = blocks

    # --- the completer completion path (CC) -----------------------------------------------
    def _track_order(self) -> None:
        """Stamp each TLP the RTL hands the core with its place in arrival order: a
        completion from CC waits until every posted request RQ took before it has left
        (PCIe: a completion must not pass a posted request), so a register read that says
        a channel is idle never overtakes that channel's last data write."""
        self._rq_pending: collections.deque[None] = collections.deque()
        self._rq_busy = False  # the RQ logic is handling a TLP
        # non-posted requests of the RQ logic's queued or being issued from the queue
        self._np_held = 0
        self._np_changed()
        # the compiled data path's end of the link (tb.models.native.CardEnd), which
        # sends the RTL's posted writes that nothing holds back as they come
        self.card_end = None
        self._cc_after: collections.deque[int] = collections.deque()
        self._rq_seen = 0  # RQ TLPs received in all
        self._rq_moved = Event()
        rq_sink, cc_sink = self.rq_sink._sink_frame, self.cc_sink._sink_frame

        def rq_arrived(frame) -> None:
            self._rq_seen += 1
            if _posted_write(frame):
                self.rq_posted += 1
                if self.card_end is not None and self._rq_write_now(frame):
                    return  # sent as it came: passed
            self._rq_pending.append(None)
            self._hip.rq_blocks |= RQ_BUSY  # (the frames after it are Python's too)
            rq_sink(frame)

        def cc_arrived(frame) -> None:
            # (the RQ TLPs received so far that must leave first: those still pending)
            self._cc_after.append(self._rq_seen)
            cc_sink(frame)

        self.rq_sink._sink_frame = rq_arrived
        self.cc_sink._sink_frame = cc_arrived

    def _rq_write_movable(self, frame) -> bool:
        """Whether the library may send RQ frame ``frame`` as the RQ logic would
        (:meth:`_rq_frame`), should it be a well-formed posted write: not discontinued,
        its function's bus mastering on, and nothing of :meth:`_rq_writes_held` (the
        library checks the rest)."""
        if frame.discontinue:
            return False
        fn = (frame.data[2] >> 16) & 0x7
        if fn >= len(self.functions) or not self.functions[fn].bus_master_enable:
            return False
        return not self._rq_writes_held()

    def _rq_writes_held(self) -> bool:
        """Whether the model would send no posted write from RQ in the library, whatever
        the frame: parity on, the link down, the sequence numbers reported, something
        above the core's own send in the way, or its logger at DEBUG."""
        own = self.__dict__
        return bool(
            self.enable_parity
            or self.link_down
            or "send" in own
            or "upstream_send" in own
            or not self.seq_nums_dropped()
            or self.log.isEnabledFor(logging.DEBUG)
        )

    def _rq_write_now(self, frame) -> bool:
        """Send the posted write of RQ frame ``frame`` in the library as it comes, where
        the RQ logic would send it at once: no TLP the RTL handed RQ before it still
        here, and the link need not wait. Whether it did."""
        if self._rq_busy or self._rq_pending or not self.rq_sink.empty():
            return False
        return self._rq_write_movable(frame) and self.card_end.write(frame, self.bus_num) == 1

    def _rq_left_through(self, seen: int) -> bool:
        """Every RQ TLP of the first ``seen`` received has passed (those the library's
        drain holds, waiting for the link, have not)."""
        return self._rq_seen - len(self._rq_pending) - self._hip.rq_held >= seen

    async def _rq_passed_through(self, seen: int) -> None:
        """Until every RQ TLP of the first ``seen`` received has passed (the library's
        drain tells of each it held that passes while this waits)."""
        hip = self._hip
        while not self._rq_left_through(seen):
            self._rq_moved.clear()
            hip.rq_waiters += 1
            try:
                await self._rq_moved.wait()
            finally:
                hip.rq_waiters -= 1

    async def _run_cc_logic(self) -> None:
        while True:
            frame = await self.cc_sink.recv()
            await self._rq_passed_through(self._cc_after.popleft() if self._cc_after else 0)
            tlp = Tlp_us.unpack_us_cc(frame, self.enable_parity)
            if not tlp.completer_id_enable:
                tlp.completer_id = tlp.completer_id._replace(bus=self.bus_num)
            if not tlp.discontinue:
                await self.send(Tlp(tlp))

    async def _run_rq_np_queue_logic(self) -> None:
        while True:
            tlp = await self.rq_np_queue.get()
            self.rq_np_queue_dequeue.set()
            while not self._np_fits(tlp):
                self.cpld_credit_released.clear()
                self.tag_release.clear()
                self._hip.rc_blocks |= RC_WAITER  # (a turn of the RC loop sets the event)
                try:
                    await First(self.cpld_credit_released.wait(), self.tag_release.wait())
                finally:
                    self._hip.rc_blocks &= ~RC_WAITER
            try:
                await self._issue_np(tlp)
            finally:
                self._np_held = max(self._np_held - 1, 0)
                self._np_changed()

    async def upstream_recv(self, tlp) -> None:
        if self.link_down:
            tlp.release_fc()  # nothing reaches a function whose link is down
            self.log.warning("link down: %s lost", tlp.fmt_type.name)
            return
        if tlp.fmt_type in MEMORY_REQUESTS:
            for f in self.functions:
                if f.match_bar(tlp.address) and not f.memory_space_enable:
                    # Memory Space Enable clear: the function decodes none of its BARs
                    tlp.release_fc()
                    self.log.warning("memory space disabled: %s refused", tlp.fmt_type.name)
                    if tlp.fmt_type in (TlpType.MEM_READ, TlpType.MEM_READ_64):
                        ur = Tlp.create_ur_completion_for_tlp(tlp, PcieId(self.bus_num, 0, 0))
                        await self.upstream_send(ur)
                    return
        if tlp.fmt_type in COMPLETION_TLPS and tlp.tag < len(self.active_request):
            req = self.active_request[tlp.tag]
            if req is None:
                # a late completion: its credits were freed when its request timed out,
                # and the base model frees them again (keep the count)
                if any(f.pcie_id == tlp.requester_id for f in self.functions):
                    self.cpld_credit_count += tlp.get_data_credits()
            elif tlp.requester_id == req.requester_id:
                self._credits_in[tlp.tag] = self._credits_in.get(tlp.tag, 0) + (
                    tlp.get_data_credits()
                )
        if tlp.fmt_type == TlpType.CFG_READ_0:
            # Device Status: Transactions Pending while any request of the function is
            # outstanding (software polls it before an FLR)
            for f in self.functions:
                if f.pcie_id == tlp.completer_id:
                    f.pcie_cap.transactions_pending = any(
                        r is not None and r.requester_id == f.pcie_id for r in self.active_request
                    )
        await super().upstream_recv(tlp)
        if tlp.fmt_type in CONFIG_TLPS:
            self._config_changed()  # config space (MPS, MSI enable, bus number) may differ

    async def _run_cfg_mgmt_logic(self) -> None:
        """The configuration management interface (PG213), waking on a request instead
        of every clock: the user logic holds ``cfg_mgmt_read`` or ``cfg_mgmt_write``
        (register ``cfg_mgmt_addr`` of function ``cfg_mgmt_function_number``) until
        ``cfg_mgmt_read_write_done`` pulses for a cycle, with the read data. The
        access goes to the function's configuration space as a configuration request
        from the link would, three cycles after the request is seen (the base model's
        latency). A function the core does not have reads 0 and ignores writes (and
        says so in the log)."""
        clk = RisingEdge(self.user_clk)
        request = First(RisingEdge(self.cfg_mgmt_read), RisingEdge(self.cfg_mgmt_write))

        def level(signal) -> int:  # an open input (z, x) requests nothing
            v = signal.value
            return int(v) if v.is_resolvable else 0

        while True:
            read = level(self.cfg_mgmt_read)
            if not (read or level(self.cfg_mgmt_write)):
                await request
                await clk
                continue
            for _ in range(3):
                await clk
            function = int(self.cfg_mgmt_function_number.value)
            reg = int(self.cfg_mgmt_addr.value)
            if function >= len(self.functions):
                self.log.warning("cfg_mgmt access to function %d, which does not exist", function)
                self.cfg_mgmt_read_data.value = 0
            elif read:
                f = self.functions[function]
                self.cfg_mgmt_read_data.value = await f.read_config_register(reg)
            else:
                value = int(self.cfg_mgmt_write_data.value)
                await self.functions[function].write_config_register(
                    reg, value, int(self.cfg_mgmt_byte_enable.value)
                )
                self._config_changed()  # as for a configuration write from the link
            self.cfg_mgmt_read_write_done.value = 1
            await clk
            self.cfg_mgmt_read_write_done.value = 0
            # the user logic drops its request on the edge that shows done
            await clk

    async def _issue(self, fn: int, msi_int: int, msix_int: int):
        """Send the message the RTL asked for (behind the posted requests RQ took before
        it: :meth:`_fence_interrupts`); the output that answers (sent or fail)."""
        if fn >= len(self.functions):
            return None
        func = self.functions[fn]
        if self.fail_interrupts:
            self.fail_interrupts -= 1
            self.msi_failed += 1
            self.log.warning("interrupt not sent (fault injected): fail indicated")
            return self.cfg_interrupt_msix_fail if msix_int else self.cfg_interrupt_msi_fail
        if not func.bus_master_enable:
            # a message is a memory write: not sent without bus mastering
            self.log.warning("interrupt requested with bus mastering disabled: not sent")
            self.msi_failed += 1
            return self.cfg_interrupt_msix_fail if msix_int else self.cfg_interrupt_msi_fail
        if msix_int:
            if not func.msix_cap.msix_enable:
                self.log.warning("MSI-X interrupt requested with MSI-X disabled")
                self.msi_failed += 1
                return self.cfg_interrupt_msix_fail
            addr = int(self.cfg_interrupt_msix_address.value)
            data = int(self.cfg_interrupt_msix_data.value)
            self.log.info("Issue MSI-X interrupt (addr 0x%08x, data 0x%08x)", addr, data)
            await func.msix_cap.issue_msix_interrupt(addr, data, attr=TlpAttr(0))
            return self.cfg_interrupt_msix_sent
        bits = [i for i in range(32) if msi_int >> i & 1]
        if len(bits) != 1:
            return None
        self.log.info("Issue MSI interrupt (index %d)", bits[0])
        await func.msi_cap.issue_msi_interrupt(bits[0], attr=TlpAttr(0))
        return self.cfg_interrupt_msi_sent

    # --- legacy interrupts (INTx) -------------------------------------------------------
    async def _run_intx_logic(self) -> None:
        """The legacy interrupt interface (PG213): ``cfg_interrupt_int[3:0]`` are the
        levels of INTA-INTD. A change of one sends Assert_INTx or Deassert_INTx from
        function 0, behind every posted request RQ took before it (a message is a posted
        request), and pulses ``cfg_interrupt_sent`` for a cycle. While the function's
        Interrupt Disable is set the wire is held deasserted on the link (Deassert sent
        if it was asserted) and the change is still answered with ``sent``; clearing it
        asserts the wire again if the level is still high (PCIe Base 7.5.1.1.3).
        ``cfg_interrupt_pending[k]`` is function k's Interrupt Status (the Status
        register's bit 3), whatever Interrupt Disable says."""
        edge = RisingEdge(self.user_clk)
        level_sig, sent_sig = self.cfg_interrupt_int, self.cfg_interrupt_sent
        pending_sig = self.cfg_interrupt_pending
        f0 = self.functions[0]

        def read(sig) -> int:  # an open input (z, x) asks for nothing
            v = sig.value
            return int(v) & 0xF if v.is_resolvable else 0

        asked = 0  # the levels the RTL set last (a change is answered with sent)
        while True:
            level = read(level_sig)
            if pending_sig is not None:
                pending = read(pending_sig)
                for k, f in enumerate(self.functions[:4]):
                    f.interrupt_status = bool(pending >> k & 1)
            want = 0 if self.link_down or f0.interrupt_disable else level
            if want != self.intx_sent:
                await self._rq_passed_through(self._rq_seen)
                for pin in range(4):
                    bit = 1 << pin
                    if (want ^ self.intx_sent) & bit and not self.link_down:
                        self.log.info("%s INT%s", "Assert" if want & bit else "Deassert", PINS[pin])
                        self.intx_sent ^= bit
                        self.intx_messages += 1
                        await self.send(intx_message(f0.pcie_id, pin, bool(want & bit)))
            if level != asked:
                asked = level
                if sent_sig is not None:
                    await edge
                    sent_sig.value = 1
                    await edge
                    sent_sig.value = 0
                continue
            self._intx_wake.clear()
            await First(level_sig.value_change, self._intx_wake.wait())


def _posted_write(frame) -> bool:
    """Whether RQ frame ``frame``'s descriptor asks for a memory write."""
    return len(frame.data) > 2 and (frame.data[2] >> 11) & 0xF == _RQ_MEM_WRITE


def restart_unpacker(sink) -> None:
    """Start a cocotbext-pcie sink's frame unpacker afresh, forgetting the TLP it holds
    in part: the old one waits on an event nothing sets again, and the clock side hands
    the next beat to the new one."""
    sink.sample_obj = None
    sink.sample_sync = Event()
    sink.active = False
    cocotb.start_soon(sink._run())
