"""A guest on a testbench (:class:`tb.env.system.TB`): the fabric brought up, the card
probed and left to the guest, the guest started with a command; and where the guest's
sources and built drivers are. Shared by the guest tests and the bench."""

from __future__ import annotations

from pathlib import Path

from ..config.sources import ROOT
from .bridge import GuestBridge
from .card import FabricFunction
from .uml import GUEST_DIR, GuestOptions

# the guest's sources (scripts in guest/tests, programs in guest/tools); its built drivers
GUEST_SOURCES = ROOT / "guest"
PEVB_KO = GUEST_DIR / "drivers" / "pevb" / "pevb.ko"
GPU_KO = GUEST_DIR / "drivers" / "gpu" / "pevb_gpu.ko"


async def boot(tb, command: list[str], gpu: bool = False, **options) -> GuestBridge:
    """Bring the fabric up (enumerated by the root complex, the card left unbound), then
    start a guest that runs ``command`` with the card on its bus (and with ``gpu`` the
    GPU after it). ``options`` are :class:`tb.guest.uml.GuestOptions`' (``time``...)."""
    await tb.init(bind=False)
    card = FabricFunction(tb.rc, tb.pci, "picoevb")
    await card.probe()
    bridge = GuestBridge.on_tb(tb, card, GuestOptions(command, **options), Path.cwd())
    if gpu:
        bridge.add_gpu(tb)
    await bridge.start()
    return bridge


async def run_to_end(
    tb, command: list[str], wall_s: float, gpu: bool = False, **options
) -> tuple[GuestBridge, str]:
    """:func:`boot` the guest with ``command``, run it to its end (``wall_s`` of wall time
    at most) and check that it exited 0 (``AssertionError`` with its console's last lines
    otherwise); the bridge and the whole console's text."""
    bridge = await boot(tb, command, gpu=gpu, **options)
    status = await bridge.run(wall_s)
    console = bridge.guest.console_text()
    assert status == 0, f"guest command failed ({status}):\n{bridge.guest.tail(60)}"
    return bridge, console
