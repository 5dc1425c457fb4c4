"""The PCIe ID interface (Vivado's ``pcie_id_if`` on the XDMA IP): the function's vendor,
device, revision, subsystem vendor and subsystem IDs come from input ports
(``cfg_vend_id``, ``cfg_dev_id_pf0``, ``cfg_rev_id_pf0``, ``cfg_subsys_vend_id``,
``cfg_subsys_id_pf0``) instead of the core's attributes. The model reads the ports each
time the configuration space shows an ID (registers 0x00, 0x08 and 0x2C), so the host
reads what the user logic drives. A port not driven (x or z) shows the model's own ID
(and says so once in the log).
"""

from __future__ import annotations

from typing import Any

SIGNALS = ("vend_id", "dev_id_pf0", "rev_id_pf0", "subsys_vend_id", "subsys_id_pf0")
# the DWORDs that hold the IDs
ID_REGS = {0x00 // 4, 0x08 // 4, 0x2C // 4}


def ids_from_ports(function: Any, signals: dict[str, Any], log) -> None:
    """Make ``function``'s configuration reads take its IDs from ``signals`` (the names
    of :data:`SIGNALS` to handles)."""
    missing = [n for n in SIGNALS if n not in signals]
    if missing:
        raise ValueError(f"PCIe ID ports missing: {missing}")
    read = function.read_config_register
    warned: set[str] = set()

    def port(name: str, own: int) -> int:
        v = signals[name].value
        if v.is_resolvable:
            return int(v)
        if name not in warned:
            warned.add(name)
            log.warning("cfg_%s is not driven: the configuration space shows %#x", name, own)
        return own

    async def read_config_register(reg: int) -> int:
        value = await read(reg)
        if reg not in ID_REGS:
            return value
        f = function
        if reg == 0:
            return port("dev_id_pf0", f.device_id) << 16 | port("vend_id", f.vendor_id)
        if reg == 2:
            return (value & ~0xFF) | port("rev_id_pf0", f.revision_id)
        sub = port("subsys_id_pf0", f.subsystem_id)
        return sub << 16 | port("subsys_vend_id", f.subsystem_vendor_id)

    function.read_config_register = read_config_register
