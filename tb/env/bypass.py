"""A cocotb driver of one channel's descriptor bypass port (PG195's ``h2c_dsc_byp_*_n`` /
``c2h_dsc_byp_*_n``): the user logic's side, loading descriptors into a channel built
with descriptor bypass (Vivado's ``dsc_bypass_rd``/``dsc_bypass_wr`` masks).

The port's rule (PG195): a descriptor is loaded by holding ``load`` high for one clock
with ``src_addr``, ``dst_addr``, ``len`` and ``ctl`` (bit 0 Stop, 1 Completed, 4 EOP);
``ready`` says the channel takes descriptors, and after it falls one more may still be
loaded. The driver loads on a cycle only when the rule allows it: ``ready`` high, or
(with ``use_allowance``) the one cycle after it fell. Signals are driven on the falling
edge and read settled there, so the driver behaves the same on every simulator.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import cocotb
from cocotb.triggers import Event, FallingEdge, RisingEdge, with_timeout

from driver_model.regs import Target

# the control bits of a bypassed descriptor (PG195's h2c_dsc_byp_ctl)
CTL_STOP = 1 << 0
CTL_COMPLETED = 1 << 1
CTL_EOP = 1 << 4
# the widest length a descriptor holds
MAX_LEN = (1 << 28) - 1


class BypassError(ValueError):
    """A descriptor the bypass port cannot carry (an address or length out of range)."""


@dataclass(frozen=True)
class BypassDesc:
    """One descriptor for the bypass port: source and destination (bus address on the
    PCIe side, AXI address on the card side; for a C2H stream channel ``src`` is where
    the result write-back goes), length in bytes and the control flags."""

    src: int
    dst: int
    length: int
    stop: bool = False
    completed: bool = False
    eop: bool = False

    def __post_init__(self) -> None:
        for name in ("src", "dst"):
            v = getattr(self, name)
            if not 0 <= v < 1 << 64:
                raise BypassError(f"{name} {v:#x} does not fit 64 bits")
        if not 0 <= self.length <= MAX_LEN:
            raise BypassError(f"length {self.length} does not fit the 28-bit field")

    @property
    def ctl(self) -> int:
        """The ``ctl`` port's value."""
        return (
            (CTL_STOP if self.stop else 0)
            | (CTL_COMPLETED if self.completed else 0)
            | (CTL_EOP if self.eop else 0)
        )


class DescBypass:
    """Drives the bypass port of channel ``n`` of ``direction`` on ``dut`` (a design
    with the drop-in's port names at its top, ``h2c_dsc_byp_load_0`` ...).

    :meth:`load` queues descriptors; the driver loads them in order as the port allows.
    ``loaded`` counts the descriptors that went in; ``ready_cycles`` and
    ``allowance_loads`` count cycles with ``ready`` high and loads made in the cycle after
    it fell."""

    def __init__(self, dut, clk, direction: Target, n: int, use_allowance: bool = True) -> None:
        prefix = f"{'h2c' if direction == Target.H2C else 'c2h'}_dsc_byp"
        self.name = f"{direction.name}{n}"
        self.clk = clk
        self.load_sig = getattr(dut, f"{prefix}_load_{n}")
        self.ready = getattr(dut, f"{prefix}_ready_{n}")
        self.src = getattr(dut, f"{prefix}_src_addr_{n}")
        self.dst = getattr(dut, f"{prefix}_dst_addr_{n}")
        self.len = getattr(dut, f"{prefix}_len_{n}")
        self.ctl = getattr(dut, f"{prefix}_ctl_{n}")
        self.use_allowance = use_allowance
        self.queue: deque[BypassDesc] = deque()
        self.loaded = 0
        self.ready_cycles = 0
        self.allowance_loads = 0
        self.forced_loads = 0
        self._forced: BypassDesc | None = None
        self._idle = Event()
        self._idle.set()
        self.load_sig.value = 0
        self.src.value = 0
        self.dst.value = 0
        self.len.value = 0
        self.ctl.value = 0
        cocotb.start_soon(self._run())

    def load(self, *descs: BypassDesc) -> None:
        """Queue descriptors for loading, in order."""
        self.queue.extend(descs)
        if self.queue:
            self._idle.clear()

    def force_load(self, desc: BypassDesc) -> None:
        """Hold ``load`` high with ``desc`` for the next clock whatever ``ready`` says (a
        user logic that breaks the rule: the channel must ignore it)."""
        self.queue.clear()
        self._forced = desc

    async def idle(self, timeout_ns: float) -> None:
        """Wait until every queued descriptor is loaded (raise on the timeout)."""
        await with_timeout(self._idle.wait(), timeout_ns, "ns")

    async def _run(self) -> None:
        ready_before = False
        while True:
            await FallingEdge(self.clk)
            ready = bool(self.ready.value.is_resolvable and int(self.ready.value))
            self.ready_cycles += ready
            desc, forced, allowance = self._forced, self._forced is not None, False
            if forced:
                self._forced = None
            elif self.queue and (ready or (self.use_allowance and ready_before)):
                desc = self.queue.popleft()
                allowance = not ready
            if desc is None:
                self.load_sig.value = 0
                if not self.queue:
                    self._idle.set()
            else:
                self.src.value = desc.src
                self.dst.value = desc.dst
                self.len.value = desc.length
                self.ctl.value = desc.ctl
                self.load_sig.value = 1
                if forced:
                    self.forced_loads += 1
                else:
                    self.loaded += 1
                    self.allowance_loads += allowance
            # a load in the cycle after ready fell is the one allowed: the next cycle
            # sees ready low before it, so never two in a row
            ready_before = ready
            await RisingEdge(self.clk)
