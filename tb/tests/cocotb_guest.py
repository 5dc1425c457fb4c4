"""A real Linux kernel in the loop: a User-mode Linux guest whose PCI bus holds the
simulated card (tb/guest/). The guest's programs and the modules they load are in
guest/; ``make guest`` builds the kernel they run on.
"""

from __future__ import annotations

from pathlib import Path

import cocotb

from tb.env.system import TB
from tb.guest.bridge import GuestBridge
from tb.guest.card import FabricFunction
from tb.guest.uml import GuestOptions
from tb.runner import ROOT

GUEST = ROOT / "guest"
WALL_LIMIT_S = 300


async def boot(tb: TB, command: list[str], **options) -> GuestBridge:
    """Bring the fabric up (enumerated by the root complex, the card left unbound), then
    start a guest that runs ``command`` with the card on its bus."""
    await tb.init(bind=False)
    card = FabricFunction(tb.rc, tb.pci, "picoevb")
    await card.probe()
    bridge = GuestBridge(tb.rc, card, GuestOptions(command, **options), Path.cwd())
    await bridge.start()
    return bridge


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_guest_enumerates_card(dut):
    """The guest's PCI core finds the card with its IDs and class, sizes its BARs through
    the shadow registers and places them in its own window."""
    tb = TB(dut)
    f0 = tb.dev.functions[0]
    ids = [f"0x{f0.vendor_id:04x}", f"0x{f0.device_id:04x}", f"0x{f0.class_code:06x}"]
    bridge = await boot(tb, ["/bin/sh", str(GUEST / "tests" / "enumerate.sh"), *ids])
    status = await bridge.run(WALL_LIMIT_S)
    assert status == 0, f"guest command failed ({status}):\n{bridge.guest.tail()}"
    assert bridge.stats["CFG_READ"] > 20, dict(bridge.stats)
