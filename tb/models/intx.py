"""Legacy interrupts (INTx) on the fabric: the Assert_INTx and Deassert_INTx messages and
the virtual wires they carry, from a function up to the root complex's interrupt lines.

A message is a TLP of type Msg routed "local" (terminated at the receiver, PCIe Base
2.2.8.1): no data, traffic class 0, its message code in byte 7 of the header. That
byte is where a request's byte enables sit, so a message TLP here keeps its code in
``last_be`` (high nibble) and ``first_be`` (low nibble), which every copy of a TLP
carries; :func:`message_code` reads it back.

Each hop ends the message and keeps the state it set, as PCIe describes:

- a switch's downstream port holds the four virtual wires of the device below it (a
  device on a PCIe link is device 0: no swizzle there);
- the switch's upstream port asserts the OR of its downstream ports' wires, each rotated
  by the port's device number on the switch's internal bus (INTx of device D maps to
  INT[(x + D) mod 4], the PCI-to-PCI bridge rule), and sends its own Assert or Deassert
  (requester: the upstream port) when that OR changes;
- a root port does the same for the root complex: the root complex's line is (root
  port, pin), high while the port's wire is asserted.

The messages a switch or root port makes travel through the switch's own queues
towards its upstream side, behind the posted writes it took earlier from the same port
(an interrupt does not pass the data it announces). A port whose link goes down drops
its wires (:meth:`IntxFabric.link_down`), as a downstream port in DL_Down does.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

import cocotb
from cocotbext.pcie.core.tlp import MsgType, Tlp, TlpType

ASSERT_INTA = int(MsgType.ASSERT_INTA)
DEASSERT_INTA = int(MsgType.DEASSERT_INTA)
PINS = "ABCD"  # the Interrupt Pin register's 1-4: INTA-INTD

Line = tuple[object, int]  # (root port bridge, pin 0-3)


def intx_message(requester_id, pin: int, asserted: bool) -> Tlp:
    """The Assert_INTx (``asserted``) or Deassert_INTx message of ``pin`` (0 = INTA)."""
    if not 0 <= pin < 4:
        raise ValueError(f"INTx pin {pin}: 0-3 (INTA-INTD)")
    tlp = Tlp()
    tlp.fmt_type = TlpType.MSG_LOCAL
    tlp.requester_id = requester_id
    code = (ASSERT_INTA if asserted else DEASSERT_INTA) + pin
    tlp.first_be, tlp.last_be = code & 0xF, code >> 4
    return tlp


def message_code(tlp: Tlp) -> int:
    """A message TLP's message code (header byte 7)."""
    return (tlp.last_be & 0xF) << 4 | (tlp.first_be & 0xF)


def message_name(tlp: Tlp) -> str:
    """A message by its code's name (``ASSERT_INTA``), or ``MSG_0x..``."""
    code = message_code(tlp)
    try:
        return MsgType(code).name
    except ValueError:
        return f"MSG_0x{code:02x}"


# the only type an INTx message has (Local: terminate at the receiver)
INTX_MESSAGES = frozenset({TlpType.MSG_LOCAL})


def intx_of(tlp: Tlp) -> tuple[int, bool] | None:
    """(pin, asserted) of an Assert_INTx or Deassert_INTx message; None for any other
    TLP."""
    if tlp.fmt_type != TlpType.MSG_LOCAL:
        return None
    code = message_code(tlp)
    if ASSERT_INTA <= code <= DEASSERT_INTA + 3:
        return code & 3, code < DEASSERT_INTA
    return None


def swizzle(wires: int, device: int) -> int:
    """Four virtual wires (bit x = INTx) of device ``device`` as its bridge's INTx."""
    d = device % 4
    return ((wires << d) | (wires >> (4 - d))) & 0xF


async def _to_upstream(port, upstream, tlp: Tlp) -> None:
    """Queue ``tlp`` from switch port ``port`` for the switch's upstream port, behind what
    the port queued there before (the TLP-level switch's deque, or cocotbext-pcie's
    Queue)."""
    tlp.ingress_port = port.bridge
    for other, queue in port.tx_queues:
        if other is upstream:
            if hasattr(other, "arbiter"):  # the TLP-level switch (tb.models.switch)
                queue.append(tlp)
                if not other.arbiter.busy:
                    other.arbiter.push(None)
            else:
                await queue.put(tlp)
                other.rx_event.set()
            return
    raise ValueError("switch port has no queue to the upstream port")


class IntxFabric:
    """The INTx virtual wires of a root complex ``rc`` and the ``switches`` below it.

    :meth:`line_of` names the root complex's line a function's pin reaches;
    :meth:`level` says whether a line is asserted and :meth:`watch` calls back on each
    change. ``counts`` counts the messages each hop took, by name.
    """

    def __init__(self, rc, switches=()) -> None:
        self.rc = rc
        self.counts: collections.Counter[str] = collections.Counter()
        self._wires: dict[object, int] = {}  # a downstream bridge: the wires below it
        self._sent: dict[object, int] = {}  # a switch: the wires its upstream port sent
        self._lines: dict[Line, bool] = {}
        self._watchers: dict[Line, list[Callable[[bool], None]]] = {}
        self._switch_of: dict[object, object] = {}  # a downstream bridge: its switch
        # the handlers it puts in front of the ports' own (each passes on what is not an
        # INTx message untouched): handler -> the handler it wraps
        self.wrappers: dict[object, object] = {}
        for sw in switches:
            self._install(sw, root=False)
        self._install(rc, root=True)
        rc.register_rx_tlp_handler(TlpType.MSG_LOCAL, self._at_host)

    # --- the fabric -------------------------------------------------------------------
    def _install(self, sw, root: bool) -> None:
        up = next(p for p in sw.switch_ports if p.upstream)
        for p in sw.switch_ports:
            if p.upstream:
                continue
            self._switch_of[p.bridge] = sw
            dport = p.bridge.downstream_port
            inner_rx = dport.rx_handler
            dport.rx_handler = self._receiver(sw, p, up, inner_rx, root)
            self.wrappers[dport.rx_handler] = inner_rx
        if not root:
            inner = up.tx_handler
            bridge = up.bridge

            async def up_send(tlp: Tlp) -> None:
                if intx_of(tlp) is None:
                    await inner(tlp)
                else:  # the upstream port's own message: out on its link
                    await bridge.upstream_send(tlp)

            up.tx_handler = up_send
            self.wrappers[up_send] = inner

    def _receiver(self, sw, port, up, inner, root: bool):
        async def receive(tlp: Tlp) -> None:
            got = intx_of(tlp)
            if got is None:
                await inner(tlp)
                return
            tlp.release_fc()
            pin, asserted = got
            self.counts[message_name(tlp)] += 1
            bit = 1 << pin
            old = self._wires.get(port.bridge, 0)
            self._wires[port.bridge] = old | bit if asserted else old & ~bit
            if root:
                # the root port's wire, to the host bridge behind the port's writes
                if (old ^ self._wires[port.bridge]) & bit:
                    msg = intx_message(port.bridge.pcie_id, pin, asserted)
                    await _to_upstream(port, up, msg)
            else:
                await self._collapse(sw, port, up)

        return receive

    async def _collapse(self, sw, port, up) -> None:
        wires = 0
        for p in sw.switch_ports:
            if not p.upstream:
                wires |= swizzle(self._wires.get(p.bridge, 0), p.bridge.device_num)
        sent = self._sent.get(sw, 0)
        self._sent[sw] = wires
        for pin in range(4):
            bit = 1 << pin
            if (wires ^ sent) & bit:
                msg = intx_message(sw.upstream_bridge.pcie_id, pin, bool(wires & bit))
                await _to_upstream(port, up, msg)

    async def _at_host(self, tlp: Tlp) -> None:
        """A root port's message at the host bridge: the root complex's line."""
        got = intx_of(tlp)
        if got is None:
            raise ValueError(f"root complex: unhandled message {message_name(tlp)}")
        pin, asserted = got
        self._set((tlp.ingress_port, pin), asserted)

    def _set(self, line: Line, asserted: bool) -> None:
        if self._lines.get(line, False) == asserted:
            return
        self._lines[line] = asserted
        for callback in list(self._watchers.get(line, ())):
            callback(asserted)

    def link_down(self, bridge) -> None:
        """The link below downstream ``bridge`` went down: the wires it held deassert,
        and the switch above (or the root complex) follows."""
        if not self._wires.get(bridge):
            return
        wires, self._wires[bridge] = self._wires[bridge], 0
        sw = self._switch_of.get(bridge)
        if sw is self.rc:
            for pin in range(4):
                if wires >> pin & 1:
                    self._set((bridge, pin), False)
            return
        if sw is None:
            return
        port = next(p for p in sw.switch_ports if p.bridge is bridge)
        up = next(p for p in sw.switch_ports if p.upstream)
        cocotb.start_soon(self._collapse(sw, port, up))

    # --- lines --------------------------------------------------------------------------
    def line_of(self, bridge, pin: int) -> Line:
        """The root complex's line that pin ``pin`` (0 = INTA) of a device reaches, where
        ``bridge`` is the downstream port (of a switch, or a root port) above it."""
        while True:
            sw = self._switch_of.get(bridge)
            if sw is None:
                raise ValueError("INTx: the bridge is not a port of this fabric")
            if sw is self.rc:
                return (bridge, pin)
            pin = (pin + bridge.device_num) % 4
            bridge = sw.upstream_bridge.upstream_port.other.parent

    def level(self, line: Line) -> bool:
        """Whether ``line`` is asserted."""
        return self._lines.get(line, False)

    def watch(self, line: Line, callback: Callable[[bool], None]) -> None:
        """Call ``callback(asserted)`` on each change of ``line``."""
        self._watchers.setdefault(line, []).append(callback)

    @staticmethod
    def line_name(line: Line) -> str:
        """``INTA@<root port>`` for the trace and the logs."""
        bridge, pin = line
        return f"INT{PINS[pin]}@{bridge.pcie_id}"
