"""The upstream code the extensions rest on, by fingerprint: each class, function or
name of cocotb and cocotbext-pcie that a module of :mod:`tb.models` replaces, overrides,
subclasses through private methods or reads from a private module, with the SHA-256 of
its source (its first 64 bits) as it was when the extensions were checked against
:data:`tb.models.VERIFIED`.

The version check (:func:`tb.models.install`) keeps the extensions off on any other
version; this table says what to look at when a new version is verified.
``tests/unit/test_unit_upstream.py`` fails, naming each one, when the installed packages'
code differs from it: a new version that changed any of it needs the differential tests
of docs/extensions.md, then ``python -m tb.models.upstream`` prints the table anew.

A fingerprint is of the definition's source segment, found by name in the module's own
file (so a replacement installed at run time does not hide it); a name bound by an
assignment is its statement, one that only has to exist (a C function of cocotb's
simulator module) is ``"exists"``.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import inspect
import sys

EXISTS = "exists"


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body``'s statements, with those of its ``if`` and ``try`` blocks (a definition
    made one way or another, by version or platform) in their place."""
    out: list[ast.stmt] = []
    for item in body:
        if isinstance(item, ast.If):
            out += _statements(item.body) + _statements(item.orelse)
        elif isinstance(item, ast.Try):
            out += _statements(item.body)
            for handler in item.handlers:
                out += _statements(handler.body)
            out += _statements(item.orelse) + _statements(item.finalbody)
        else:
            out.append(item)
    return out


def _defines(item: ast.stmt, name: str) -> bool:
    if isinstance(item, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return item.name == name
    if isinstance(item, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in item.targets)
    if isinstance(item, ast.AnnAssign):
        return isinstance(item.target, ast.Name) and item.target.id == name
    return False


def _find(tree: ast.Module, parts: list[str]) -> list[ast.stmt]:
    """Every definition (or assignment) of ``parts`` (a qualified name) in ``tree``."""
    scopes: list[list[ast.stmt]] = [tree.body]
    found: list[ast.stmt] = []
    for part in parts:
        found = [item for body in scopes for item in _statements(body) if _defines(item, part)]
        scopes = [getattr(item, "body", []) for item in found]
    return found


def fingerprint(spec: str) -> str | None:
    """The fingerprint of ``spec`` (``module:qualified.name``) in the installed package,
    or None when the module or the name is not there."""
    module_name, _, qualname = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):  # a compiled module: the name has to exist
        obj = module
        for part in qualname.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return EXISTS
    nodes = _find(ast.parse(source), qualname.split("."))
    if not nodes:
        return None
    digest = hashlib.sha256()
    for node in nodes:
        digest.update((ast.get_source_segment(source, node) or "").encode())
    return digest.hexdigest()[:16]


def changed() -> dict[str, tuple[str, str | None]]:
    """Each entry whose installed code differs from the table: (recorded, installed)."""
    out = {}
    for spec, want in FINGERPRINTS.items():
        got = fingerprint(spec)
        if got != want:
            out[spec] = (want, got)
    return out


_CBX = "cocotbext.pcie"
# what each extension rests on (docs/extensions.md has the table of extensions)
SPECS = (
    # fastpaths.py: replaced in their classes
    f"{_CBX}.core.tlp:Tlp.fmt_type",
    f"{_CBX}.core.tlp:Tlp.check",
    f"{_CBX}.core.tlp:Tlp.__init__",
    f"{_CBX}.core.tlp:TlpType",
    f"{_CBX}.core.function:Function.match_tlp",
    f"{_CBX}.core.bridge:Bridge.match_tlp_secondary",
    f"{_CBX}.core.utils:PcieId",
    f"{_CBX}.xilinx.us.interface:dword_parity",
    f"{_CBX}.xilinx.us.interface:UsPcieFrame.update_parity",
    f"{_CBX}.xilinx.us.tlp:Tlp_us.pack_us_rc",
    f"{_CBX}.xilinx.us.tlp:Tlp_us.pack_us_cq",
    f"{_CBX}.xilinx.us.tlp:Tlp_us.unpack_us_rq",
    f"{_CBX}.xilinx.us.tlp:Tlp_us.unpack_us_cc",
    f"{_CBX}.xilinx.us.tlp:tlp_type_to_req_type",
    # link.py, switch.py: the port and the switch's ports
    f"{_CBX}.core.port:Port",
    f"{_CBX}.core.port:SimPort",
    f"{_CBX}.core.switch:Switch.add_switch_port",
    # compiled_link.py: the credit counters and channel state it keeps in the library
    f"{_CBX}.core.port:FcStateData",
    f"{_CBX}.core.port:FcChannelState",
    # native.py and tb/dp/fabric.cpp: the bridges' hops, switch ports and sends, and the
    # root complex's memory requests and the RAM it reads and writes, that it mirrors
    f"{_CBX}.core.bridge:Bridge",
    f"{_CBX}.core.function:Function.match_bar",
    f"{_CBX}.core.switch:SwitchPort",
    f"{_CBX}.core.tlp:Tlp.get_data_credits",
    f"{_CBX}.core.tlp:Tlp.get_wire_size",
    f"{_CBX}.core.rc:RootComplex.downstream_recv",
    f"{_CBX}.core.rc:RootComplex.downstream_send",
    f"{_CBX}.core.rc:RootComplex.handle_tlp",
    f"{_CBX}.core.rc:RootComplex.handle_mem_read_tlp",
    f"{_CBX}.core.rc:RootComplex.handle_mem_write_tlp",
    "cocotbext.axi.address_space:AddressSpace",
    "cocotbext.axi.address_space:MemoryRegion",
    # native.py's CardEnd and tb/dp/card.cpp: the hard IP's send of a posted write from
    # RQ (Tlp_us.unpack_us_rq above, the device's sends)
    f"{_CBX}.core.device:Device.send",
    f"{_CBX}.core.device:Device.upstream_send",
    # native.py's GpuServe and tb/dp/gpu.cpp: what a request to the GPU's BAR1 meets on
    # its way to tb/env/gpu_endpoint.py's handlers, and the endpoint's answers
    f"{_CBX}.core.device:Device.upstream_recv",
    f"{_CBX}.core.function:Function.upstream_recv",
    f"{_CBX}.core.function:Function.handle_tlp",
    f"{_CBX}.core.function:Function.send",
    f"{_CBX}.core.function:Function.upstream_send",
    f"{_CBX}.core.endpoint:MemoryEndpoint.read_region",
    f"{_CBX}.core.endpoint:MemoryEndpoint.write_region",
    f"{_CBX}.core.endpoint:MemoryEndpoint.handle_mem_read_tlp",
    f"{_CBX}.core.endpoint:MemoryEndpoint.handle_mem_write_tlp",
    f"{_CBX}.core.tlp:Tlp.create_completion_for_tlp",
    # streams.py, transactors.py: the UltraScale+ stream interfaces
    f"{_CBX}.xilinx.us.interface:RqSink",
    f"{_CBX}.xilinx.us.interface:CcSink",
    f"{_CBX}.xilinx.us.interface:RcSource",
    f"{_CBX}.xilinx.us.interface:CqSource",
    f"{_CBX}.xilinx.us.interface:UsPcieSource",
    f"{_CBX}.xilinx.us.interface:UsPcieSink",
    # hardip.py, hardip_speed.py: the hard IP's private loops
    f"{_CBX}.xilinx.us.usp_model:UltraScalePlusPcieDevice",
    # cfg_ext.py, pcie_id.py: configuration space
    f"{_CBX}.core.function:Function.read_config_register",
    f"{_CBX}.core.function:Function.write_config_register",
    f"{_CBX}.core.caps.common:PciCap",
    f"{_CBX}.core.caps.common:PciExtCap",
    # timeline.py: cocotb's triggers and tasks (LibraryAlarm runs a step as GPITrigger's
    # _react does: profiled, the current trigger set, then the event loop)
    "cocotb._gpi_triggers:GPITrigger",
    "cocotb._event_loop:EventLoop",
    "cocotb._gpi_triggers:current_gpi_trigger",
    "cocotb._base_triggers:_Event",
    "cocotb.task:_current_task",
    "cocotb.simulator:register_timed_callback",
    "cocotb.simulator:register_value_change_callback",
    "cocotb.simulator:get_sim_time",
    # clocks.py, signals.py: cocotb's clock and its write deferral
    "cocotb.clock:Clock",
    "cocotb.handle:_schedule_write",
    "cocotb.handle:_apply_scheduled_writes",
    "cocotb.handle:_GPISetAction",
    "cocotb.handle:_trust_inertial",
)

# "module:qualified.name" -> fingerprint, for the versions in tb.models.VERIFIED: recorded
# with cocotb 2.1.0 and cocotbext-pcie 0.2.16 (python -m tb.models.upstream)
FINGERPRINTS = {
    "cocotbext.pcie.core.tlp:Tlp.fmt_type": "a154f2daa35ac960",
    "cocotbext.pcie.core.tlp:Tlp.check": "908b3d1fdf8c44d6",
    "cocotbext.pcie.core.tlp:Tlp.__init__": "51da57ad3f326afc",
    "cocotbext.pcie.core.tlp:TlpType": "b65c97b380e306f3",
    "cocotbext.pcie.core.function:Function.match_tlp": "4230b23c15b425e4",
    "cocotbext.pcie.core.bridge:Bridge.match_tlp_secondary": "0c9c75ad3acafe78",
    "cocotbext.pcie.core.utils:PcieId": "2b5c827572520b48",
    "cocotbext.pcie.xilinx.us.interface:dword_parity": "6e7d4f2af02c2d59",
    "cocotbext.pcie.xilinx.us.interface:UsPcieFrame.update_parity": "d3f9913b1cf362c5",
    "cocotbext.pcie.xilinx.us.tlp:Tlp_us.pack_us_rc": "a3ef03dfc4b9082c",
    "cocotbext.pcie.xilinx.us.tlp:Tlp_us.pack_us_cq": "3ae7b7380f7a28cf",
    "cocotbext.pcie.xilinx.us.tlp:Tlp_us.unpack_us_rq": "d8031c54caf53cf1",
    "cocotbext.pcie.xilinx.us.tlp:Tlp_us.unpack_us_cc": "d06e0e5f2cf1579b",
    "cocotbext.pcie.xilinx.us.tlp:tlp_type_to_req_type": "25feb87e60ea2362",
    "cocotbext.pcie.core.port:Port": "20ae14c755dba7c8",
    "cocotbext.pcie.core.port:SimPort": "d3a58cbe9603cfb0",
    "cocotbext.pcie.core.switch:Switch.add_switch_port": "a1415b53241bb6c0",
    "cocotbext.pcie.core.port:FcStateData": "4bcc23bcca89a004",
    "cocotbext.pcie.core.port:FcChannelState": "49a586a8b8d347e4",
    "cocotbext.pcie.core.bridge:Bridge": "9b031fd0cb23a909",
    "cocotbext.pcie.core.function:Function.match_bar": "e79ca6a687e291f0",
    "cocotbext.pcie.core.switch:SwitchPort": "3336e2dfaaa86a87",
    "cocotbext.pcie.core.tlp:Tlp.get_data_credits": "6f383d97af0eae1e",
    "cocotbext.pcie.core.tlp:Tlp.get_wire_size": "ef347d6aa7ad5a5a",
    "cocotbext.pcie.core.rc:RootComplex.downstream_recv": "7a4b843da3deb55f",
    "cocotbext.pcie.core.rc:RootComplex.downstream_send": "a5e9977dfb66f4fc",
    "cocotbext.pcie.core.rc:RootComplex.handle_tlp": "f2bbe8820424e4ed",
    "cocotbext.pcie.core.rc:RootComplex.handle_mem_read_tlp": "55f2029446e13551",
    "cocotbext.pcie.core.rc:RootComplex.handle_mem_write_tlp": "81ee5a6fed9caa4f",
    "cocotbext.axi.address_space:AddressSpace": "afc33b43b63ea48d",
    "cocotbext.axi.address_space:MemoryRegion": "a15dbb11918fb821",
    "cocotbext.pcie.core.device:Device.send": "c7e97fd4da89a6d0",
    "cocotbext.pcie.core.device:Device.upstream_send": "33b1f3d2453d23e2",
    "cocotbext.pcie.core.device:Device.upstream_recv": "480323ac9985d6f8",
    "cocotbext.pcie.core.function:Function.upstream_recv": "0a9f7c6529bb9070",
    "cocotbext.pcie.core.function:Function.handle_tlp": "927d115e875a56db",
    "cocotbext.pcie.core.function:Function.send": "6b9a1b7e3d66fc71",
    "cocotbext.pcie.core.function:Function.upstream_send": "3c7ec9c6045f268f",
    "cocotbext.pcie.core.endpoint:MemoryEndpoint.read_region": "c1cba1378f245171",
    "cocotbext.pcie.core.endpoint:MemoryEndpoint.write_region": "b4552a722e81578a",
    "cocotbext.pcie.core.endpoint:MemoryEndpoint.handle_mem_read_tlp": "9ce2eeee5e3a7488",
    "cocotbext.pcie.core.endpoint:MemoryEndpoint.handle_mem_write_tlp": "09253edcf5bf800b",
    "cocotbext.pcie.core.tlp:Tlp.create_completion_for_tlp": "28c919321b52e3a0",
    "cocotbext.pcie.xilinx.us.interface:RqSink": "52607d2e75bbe384",
    "cocotbext.pcie.xilinx.us.interface:CcSink": "f12f3928a860490b",
    "cocotbext.pcie.xilinx.us.interface:RcSource": "1bb9d0876456e001",
    "cocotbext.pcie.xilinx.us.interface:CqSource": "dd331b2203d528dc",
    "cocotbext.pcie.xilinx.us.interface:UsPcieSource": "82724e08753b659a",
    "cocotbext.pcie.xilinx.us.interface:UsPcieSink": "a2cbd913067684be",
    "cocotbext.pcie.xilinx.us.usp_model:UltraScalePlusPcieDevice": "21e020368a677ef5",
    "cocotbext.pcie.core.function:Function.read_config_register": "7da2b454de2be063",
    "cocotbext.pcie.core.function:Function.write_config_register": "429e490b9d8f6061",
    "cocotbext.pcie.core.caps.common:PciCap": "7479f725d7e69ccc",
    "cocotbext.pcie.core.caps.common:PciExtCap": "e4c80c0e3afbb982",
    "cocotb._gpi_triggers:GPITrigger": "6d0e721913d1e299",
    "cocotb._event_loop:EventLoop": "1d205c80d1c29f57",
    "cocotb._gpi_triggers:current_gpi_trigger": "c731947bf976fe50",
    "cocotb._base_triggers:_Event": "efd5e03ebeb29f9c",
    "cocotb.task:_current_task": "2380b5d2cc5a2dd6",
    "cocotb.simulator:register_timed_callback": "exists",
    "cocotb.simulator:register_value_change_callback": "exists",
    "cocotb.simulator:get_sim_time": "exists",
    "cocotb.clock:Clock": "a5636f4b3251e15f",
    "cocotb.handle:_schedule_write": "2d738f1336d0f16a",
    "cocotb.handle:_apply_scheduled_writes": "d287b5b0271a48af",
    "cocotb.handle:_GPISetAction": "748279e0879479f2",
    "cocotb.handle:_trust_inertial": "f144cb4dc1fae663",
}


def _table_text() -> str:
    lines = ["FINGERPRINTS = {"]
    for spec in SPECS:
        lines.append(f'    "{spec}": "{fingerprint(spec)}",')
    lines.append("}")
    return "\n".join(lines)


if __name__ == "__main__":  # print the table for the installed packages
    sys.stdout.write(_table_text() + "\n")
