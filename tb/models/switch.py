"""The switch of the TLP-level fabric: cocotbext-pcie's ``Switch`` routing in the caller
and arbitrating in a lane instead of two coroutines per switch port."""

from __future__ import annotations

import functools
from collections import deque

import cocotb
from cocotbext.pcie.core.tlp import TlpAttr, TlpType

from .timeline import Lane

_POSTED_WRITES = frozenset({TlpType.MEM_WRITE, TlpType.MEM_WRITE_64})

# --- the switch --------------------------------------------------------------------------
# cocotbext-pcie's Switch (and RootComplex, a Switch) runs a routing and an arbitration
# coroutine per switch port: a TLP a bridge hands to the switch waits in the port's
# ingress queue for its routing coroutine, then in a queue per port pair for the egress
# port's arbitration coroutine. This switch routes in the bridge's own call (the same
# matches, in the same port order) and runs the egress port's arbitration (the same
# passes over the same queues) in a lane. A TLP no port takes goes to the switch's own
# routing coroutine, which warns and answers it as before.
#
# Relaxed ordering: with ``ro_passing`` set on an egress port (TB.set_relaxed_passing), a
# posted write with the RO attribute that finds posted writes waiting for that port goes
# ahead of them, as PCIe's ordering rules allow (a posted request with RO set may pass
# earlier posted requests): what can happen when the link is congested. Off, every
# posted write keeps its order.


def add_switch_port(self, port) -> None:
    """``Switch.add_switch_port`` for the TLP-level fabric: later ports of this switch are
    added the same way."""
    self.add_switch_port = add_switch_port.__get__(self)
    self.switch_ports.append(port)
    port.ro_passing = False
    cocotb.start_soon(self._run_routing(port))  # what no port takes (see above)
    port.arbiter = Lane(lambda _: _arbitrate(port))
    for other in self.switch_ports[:-1]:
        to_other: deque = deque()
        from_other: deque = deque()
        port.tx_queues.append((other, to_other))
        port.rx_queues.append(from_other)
        other.rx_queues.append(to_other)
        other.tx_queues.append((port, from_other))
    ingress = functools.partial(_route, port)
    if port.upstream:
        port.bridge.downstream_tx_handler = ingress
    else:
        port.bridge.upstream_tx_handler = ingress


async def _route(port, tlp) -> None:
    """Where the switch's routing coroutine sends a TLP that ``port``'s bridge hands it."""
    tlp.ingress_port = port.bridge
    for other, queue in port.tx_queues:
        bridge = other.bridge
        if (
            bridge.match_tlp(tlp)
            or (other.upstream and not bridge.match_tlp_secondary(tlp))
            or (not other.upstream and bridge.match_tlp_secondary(tlp))
        ):
            if other.ro_passing and tlp.fmt_type in _POSTED_WRITES and tlp.attr & TlpAttr.RO:
                at = len(queue)
                while at and queue[at - 1].fmt_type in _POSTED_WRITES:
                    at -= 1
                queue.insert(at, tlp)
            else:
                queue.append(tlp)
            if not other.arbiter.busy:  # a running arbiter finds it on its next pass
                other.arbiter.push(None)
            return
    await port.ingress_queue.put(tlp)


async def _arbitrate(port) -> None:
    """The switch's arbitration for egress ``port``: passes over the queues from the
    other ports, one TLP from each that holds one, until a pass finds none."""
    queues = port.rx_queues
    moved = True
    while moved:
        moved = False
        for queue in queues:
            if queue:
                await port.tx_handler(queue.popleft())
                moved = True
