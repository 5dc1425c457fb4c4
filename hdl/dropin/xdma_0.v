// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * SIMULATION ONLY: a drop-in for the Vivado DMA/Bridge Subsystem for PCI
 * Express IP (XDMA, PG195) in DMA mode, port for port.  A design written
 * against the generated IP (instance of module xdma_0) compiles against this
 * file with no edit beyond the file list; the module takes another name with
 * +define+PEVB_XDMA_MODULE=<name>.  The generated IP has no parameters: its
 * configuration comes from defines, each with the Vivado option it stands for
 * (or from parameters where the testbench instantiates it):
 *
 *   PEVB_XDMA_DATA_WIDTH     axi_data_width (64, 128, 256, 512)
 *   PEVB_XDMA_LANES          pl_link_cap_max_link_width (pci_exp_* width)
 *   PEVB_XDMA_H2C_CHANNELS   xdma_rnum_chnl (1-4)
 *   PEVB_XDMA_C2H_CHANNELS   xdma_wnum_chnl (1-4)
 *   PEVB_XDMA_STREAM         xdma_axi_intf_mm = AXI_Stream (1: every channel
 *                            streams; PEVB_XDMA_H2C_STREAM/_C2H_STREAM masks
 *                            choose per channel, which XDMA cannot)
 *   PEVB_XDMA_DSC_BYPASS_RD  dsc_bypass_rd, descriptor bypass for read (H2C):
 *                            channel mask (Vivado's "0011" is 3)
 *   PEVB_XDMA_DSC_BYPASS_WR  dsc_bypass_wr, descriptor bypass for write (C2H)
 *   PEVB_XDMA_USR_IRQ        xdma_num_usr_irq (1-16)
 *   PEVB_XDMA_MSIX           pf0_msix_enabled (0, 1: the MSI-X table and PBA
 *                            at 0x8000 of the DMA BAR, 32 vectors)
 *   PEVB_XDMA_AXILITE_SLAVE  xdma_axilite_slave (0, 1: s_axil_* reaches the DMA
 *                            registers from the user side)
 *   PEVB_XDMA_SOFT_RESET_EN  soft_reset_en (0, 1: dma_bridge_resetn low resets the
 *                            DMA and axi_aresetn, the link kept up)
 *   PEVB_XDMA_AXIST_BYPASS   axist_bypass_en (0, 1: the PCIe-to-DMA bypass master
 *                            m_axib_* behind its own BAR, after the DMA BAR)
 *   PEVB_XDMA_AXILITE_MASTER axilite_master_en (1, 0: no AXI4-Lite master BAR;
 *                            m_axil_* stays idle and the DMA BAR becomes BAR0)
 *   PEVB_XDMA_AXIL_MASTER_64BIT  axil_master_64bit_en, PEVB_XDMA_PCIE_64BIT
 *                            xdma_pcie_64bit_en (the DMA BAR), PEVB_XDMA_AXI_BYPASS_64BIT
 *                            axi_bypass_64bit_en (0, 1: a 64-bit BAR); each BAR takes
 *                            the next free BAR, a 64-bit one the next even pair
 *                            (PG195 "Target Bridge": 32-bit BAR0, 1, 2; 64-bit BAR0,
 *                            2, 4); the _PREFETCHABLE twins mark a BAR prefetchable
 *                            (the testbench's configuration space reads them)
 *   PEVB_XDMA_AXIST_BYPASS_ADDR_WIDTH  axist_bypass_size/_scale as log2 of bytes
 *                            (20: Vivado's default 1 Megabytes; 12 to 31)
 *   PEVB_XDMA_AXIST_BYPASS_AXI_BASE    pciebar2axibar_axist_bypass (64-bit, 4 KiB
 *                            aligned): the AXI address of the BAR's first byte
 *   PEVB_XDMA_CFG_MGMT       cfg_mgmt_if (0, 1: cfg_mgmt_* reads and writes the
 *                            configuration space through the hard IP's management
 *                            interface)
 *   PEVB_XDMA_CFG_EXT        cfg_ext_if (0, 1: cfg_ext_* shows the configuration
 *                            requests from the link to the user side)
 *   PEVB_XDMA_CFG_EXT_LEGACY legacy_ext_pcie_cfg_space_enabled (0, 1: the user
 *                            answers reads of bytes 0xB0-0xBF, linked into the
 *                            capability list; read by the testbench's model only)
 *   PEVB_XDMA_CFG_EXT_EXTENDED  ext_pcie_cfg_space_enabled (0, 1: the user answers
 *                            reads of bytes 0x480-0x4FF, linked into the extended
 *                            capability list; the model's too)
 *   PEVB_XDMA_PCIE_ID_IF     pcie_id_if (0, 1: the function's vendor, device, revision
 *                            and subsystem IDs come from the cfg_*_id ports)
 *   PEVB_XDMA_AXI_ID_WIDTH   axi_id_width
 *   PEVB_XDMA_7SERIES        the part's family (0: UltraScale+, 1: 7 series): the
 *                            PIPE simulation ports take its widths
 *
 * and the engine's own, which no Vivado option sets: PEVB_XDMA_DESC_DEPTH (descriptor
 * buffer entries per channel), PEVB_XDMA_DESC_FETCHES (fetches in flight per channel),
 * PEVB_XDMA_CPL_TIMEOUT_CYCLES and PEVB_XDMA_H2C_READ_TAGS.
 *
 * The serial lanes, reference clocks, PIPE simulation ports, shared-logic QPLL
 * outputs, transceiver status ports and DRP are ports, as on the IP (UltraScale+; and
 * a 7-series template's transceiver debug ports), and tied off:
 * the PCIe link is the testbench's hard-IP model, which drives the hard IP's
 * user interface inside (instance hip, pevb_hip_port) through the hierarchy.
 * Propagate Parity gives the DMA's outgoing data its odd parity (m_axis_h2c_tuser_n,
 * m_axi_wuser); the parity the user sends is not checked.  The AXI Bridge mode's
 * ports are not provided.
 */

`ifndef PEVB_XDMA_MODULE
`define PEVB_XDMA_MODULE xdma_0
`endif
`ifndef PEVB_XDMA_DATA_WIDTH
`define PEVB_XDMA_DATA_WIDTH 64
`endif
`ifndef PEVB_XDMA_LANES
`define PEVB_XDMA_LANES 1
`endif
`ifndef PEVB_XDMA_H2C_CHANNELS
`define PEVB_XDMA_H2C_CHANNELS 1
`endif
`ifndef PEVB_XDMA_C2H_CHANNELS
`define PEVB_XDMA_C2H_CHANNELS 1
`endif
`ifndef PEVB_XDMA_STREAM
`define PEVB_XDMA_STREAM 0
`endif
`ifndef PEVB_XDMA_H2C_STREAM
`define PEVB_XDMA_H2C_STREAM ((`PEVB_XDMA_STREAM) ? 15 : 0)
`endif
`ifndef PEVB_XDMA_C2H_STREAM
`define PEVB_XDMA_C2H_STREAM ((`PEVB_XDMA_STREAM) ? 15 : 0)
`endif
`ifndef PEVB_XDMA_DSC_BYPASS_RD
`define PEVB_XDMA_DSC_BYPASS_RD 0
`endif
`ifndef PEVB_XDMA_DSC_BYPASS_WR
`define PEVB_XDMA_DSC_BYPASS_WR 0
`endif
`ifndef PEVB_XDMA_USR_IRQ
`define PEVB_XDMA_USR_IRQ 1
`endif
`ifndef PEVB_XDMA_MSIX
`define PEVB_XDMA_MSIX 0
`endif
`ifndef PEVB_XDMA_AXILITE_SLAVE
`define PEVB_XDMA_AXILITE_SLAVE 0
`endif
`ifndef PEVB_XDMA_SOFT_RESET_EN
`define PEVB_XDMA_SOFT_RESET_EN 0
`endif
`ifndef PEVB_XDMA_AXIST_BYPASS
`define PEVB_XDMA_AXIST_BYPASS 0
`endif
`ifndef PEVB_XDMA_AXIST_BYPASS_ADDR_WIDTH
`define PEVB_XDMA_AXIST_BYPASS_ADDR_WIDTH 20
`endif
`ifndef PEVB_XDMA_AXIST_BYPASS_AXI_BASE
`define PEVB_XDMA_AXIST_BYPASS_AXI_BASE 64'h0
`endif
`ifndef PEVB_XDMA_AXILITE_MASTER
`define PEVB_XDMA_AXILITE_MASTER 1
`endif
`ifndef PEVB_XDMA_AXIL_MASTER_64BIT
`define PEVB_XDMA_AXIL_MASTER_64BIT 0
`endif
`ifndef PEVB_XDMA_AXIL_MASTER_PREFETCHABLE
`define PEVB_XDMA_AXIL_MASTER_PREFETCHABLE 0
`endif
`ifndef PEVB_XDMA_PCIE_64BIT
`define PEVB_XDMA_PCIE_64BIT 0
`endif
`ifndef PEVB_XDMA_PCIE_PREFETCHABLE
`define PEVB_XDMA_PCIE_PREFETCHABLE 0
`endif
`ifndef PEVB_XDMA_AXI_BYPASS_64BIT
`define PEVB_XDMA_AXI_BYPASS_64BIT 0
`endif
`ifndef PEVB_XDMA_AXI_BYPASS_PREFETCHABLE
`define PEVB_XDMA_AXI_BYPASS_PREFETCHABLE 0
`endif
`ifndef PEVB_XDMA_7SERIES
`define PEVB_XDMA_7SERIES 0
`endif
`ifndef PEVB_XDMA_CFG_MGMT
`define PEVB_XDMA_CFG_MGMT 0
`endif
`ifndef PEVB_XDMA_CFG_EXT
`define PEVB_XDMA_CFG_EXT 0
`endif
`ifndef PEVB_XDMA_CFG_EXT_LEGACY
`define PEVB_XDMA_CFG_EXT_LEGACY 0
`endif
`ifndef PEVB_XDMA_CFG_EXT_EXTENDED
`define PEVB_XDMA_CFG_EXT_EXTENDED 0
`endif
`ifndef PEVB_XDMA_PCIE_ID_IF
`define PEVB_XDMA_PCIE_ID_IF 0
`endif
`ifndef PEVB_XDMA_AXI_ID_WIDTH
`define PEVB_XDMA_AXI_ID_WIDTH 4
`endif
`ifndef PEVB_XDMA_DESC_DEPTH
`define PEVB_XDMA_DESC_DEPTH 8
`endif
`ifndef PEVB_XDMA_DESC_FETCHES
`define PEVB_XDMA_DESC_FETCHES 2
`endif
`ifndef PEVB_XDMA_CPL_TIMEOUT_CYCLES
`define PEVB_XDMA_CPL_TIMEOUT_CYCLES 131072
`endif
`ifndef PEVB_XDMA_H2C_READ_TAGS
`define PEVB_XDMA_H2C_READ_TAGS (32 / H2C_CHANNELS)
`endif

// the file keeps its name when a design renames the module (PEVB_XDMA_MODULE)
/* verilator lint_off DECLFILENAME */
module `PEVB_XDMA_MODULE #
(
    parameter AXIS_PCIE_DATA_WIDTH = `PEVB_XDMA_DATA_WIDTH,
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    parameter AXIS_PCIE_RQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 62 : 137,
    parameter AXIS_PCIE_RC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 75 : 161,
    parameter AXIS_PCIE_CQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 88 : 183,
    parameter AXIS_PCIE_CC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 33 : 81,
    parameter LANES = `PEVB_XDMA_LANES,
    // GT quads of the link (the shared-logic QPLL outputs' width)
    parameter QUADS = (LANES + 3) / 4,
    // the PIPE simulation ports' widths: a 7 series part's (PEVB_XDMA_7SERIES) or an
    // UltraScale+ part's
    parameter PIPE_CMD_WIDTH = `PEVB_XDMA_7SERIES ? 12 : 26,
    parameter PIPE_SIG_WIDTH = `PEVB_XDMA_7SERIES ? 25 : 84,
    parameter AXI_ADDR_WIDTH = 64,
    parameter AXI_ID_WIDTH = `PEVB_XDMA_AXI_ID_WIDTH,
    parameter H2C_CHANNELS = `PEVB_XDMA_H2C_CHANNELS,
    parameter C2H_CHANNELS = `PEVB_XDMA_C2H_CHANNELS,
    parameter H2C_STREAM = `PEVB_XDMA_H2C_STREAM & ((1 << H2C_CHANNELS) - 1),
    parameter C2H_STREAM = `PEVB_XDMA_C2H_STREAM & ((1 << C2H_CHANNELS) - 1),
    parameter H2C_BYPASS = `PEVB_XDMA_DSC_BYPASS_RD & ((1 << H2C_CHANNELS) - 1),
    parameter C2H_BYPASS = `PEVB_XDMA_DSC_BYPASS_WR & ((1 << C2H_CHANNELS) - 1),
    parameter USER_IRQS = `PEVB_XDMA_USR_IRQ,
    parameter MSIX = `PEVB_XDMA_MSIX,
    parameter AXIL_SLAVE = `PEVB_XDMA_AXILITE_SLAVE,
    parameter SOFT_RESET_EN = `PEVB_XDMA_SOFT_RESET_EN,
    parameter CFG_MGMT = `PEVB_XDMA_CFG_MGMT,
    parameter CFG_EXT = `PEVB_XDMA_CFG_EXT,
    parameter PCIE_ID_IF = `PEVB_XDMA_PCIE_ID_IF,
    // the user's configuration ranges: the testbench's model answers from them, the
    // RTL only carries them
    parameter CFG_EXT_LEGACY = `PEVB_XDMA_CFG_EXT_LEGACY,
    parameter CFG_EXT_EXTENDED = `PEVB_XDMA_CFG_EXT_EXTENDED,
    parameter AXIB = `PEVB_XDMA_AXIST_BYPASS,
    parameter AXIB_BAR_ADDR_WIDTH = `PEVB_XDMA_AXIST_BYPASS_ADDR_WIDTH,
    parameter [63:0] AXIB_AXI_BASE = `PEVB_XDMA_AXIST_BYPASS_AXI_BASE,
    // the PCIe BARs options: which BARs exist and which are 64-bit (the placement
    // below), and which are prefetchable (the testbench's configuration space)
    parameter AXIL_MASTER = `PEVB_XDMA_AXILITE_MASTER,
    parameter AXIL_MASTER_64BIT = `PEVB_XDMA_AXIL_MASTER_64BIT,
    parameter AXIL_MASTER_PREFETCHABLE = `PEVB_XDMA_AXIL_MASTER_PREFETCHABLE,
    parameter PCIE_64BIT = `PEVB_XDMA_PCIE_64BIT,
    parameter PCIE_PREFETCHABLE = `PEVB_XDMA_PCIE_PREFETCHABLE,
    parameter AXIB_64BIT = `PEVB_XDMA_AXI_BYPASS_64BIT,
    parameter AXIB_PREFETCHABLE = `PEVB_XDMA_AXI_BYPASS_PREFETCHABLE,
    // the engine's own (not Vivado options): read tags an H2C channel may hold,
    // descriptor buffer entries and fetches in flight per channel, the completion
    // timeout in user clock cycles
    parameter H2C_READ_TAGS = `PEVB_XDMA_H2C_READ_TAGS,
    parameter DESC_DEPTH = `PEVB_XDMA_DESC_DEPTH,
    parameter DESC_FETCHES = `PEVB_XDMA_DESC_FETCHES,
    parameter CPL_TIMEOUT_CYCLES = `PEVB_XDMA_CPL_TIMEOUT_CYCLES
)
(
    /* PCIe reference clock, reset and lanes (unused: the link is modelled) */
    input  wire                               sys_clk,
    input  wire                               sys_clk_gt,
    input  wire                               sys_rst_n,
    output wire [LANES-1:0]                   pci_exp_txp,
    output wire [LANES-1:0]                   pci_exp_txn,
    input  wire [LANES-1:0]                   pci_exp_rxp,
    input  wire [LANES-1:0]                   pci_exp_rxn,

    /* The physical layer the testbench replaces, tied off: PIPE simulation
       (Enable PIPE Simulation: lanes 0-15, a design connects its link width's) and
       the shared-logic QPLL outputs, one bit per GT quad (locked, clocks idle) */
    input  wire [PIPE_CMD_WIDTH-1:0]          common_commands_in,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_0_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_1_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_2_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_3_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_4_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_5_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_6_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_7_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_8_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_9_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_10_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_11_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_12_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_13_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_14_sigs,
    input  wire [PIPE_SIG_WIDTH-1:0]          pipe_rx_15_sigs,
    output wire [PIPE_CMD_WIDTH-1:0]          common_commands_out,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_0_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_1_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_2_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_3_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_4_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_5_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_6_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_7_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_8_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_9_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_10_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_11_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_12_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_13_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_14_sigs,
    output wire [PIPE_SIG_WIDTH-1:0]          pipe_tx_15_sigs,
    output wire [QUADS-1:0]                   int_qpll1lock_out,
    output wire [QUADS-1:0]                   int_qpll1outrefclk_out,
    output wire [QUADS-1:0]                   int_qpll1outclk_out,
    // 7 series Gen2 shared logic (PG195 "New Ports"): the internal GT_COMMON and
    // clocking outputs, the shared GT_COMMON's QPLL ports and the shared clocking's
    // PIPE clock ports
    output wire                               int_dclk_out,
    output wire                               int_oobclk_out,
    input  wire [LANES-1:0]                   int_pclk_sel_slave,
    output wire                               int_pclk_out_slave,
    output wire                               int_pipe_rxusrclk_out,
    output wire [1:0]                         int_qplllock_out,
    output wire [1:0]                         int_qplloutclk_out,
    output wire [1:0]                         int_qplloutrefclk_out,
    output wire [LANES-1:0]                   int_rxoutclk_out,
    output wire                               int_userclk1_out,
    output wire                               int_userclk2_out,
    input  wire [11:0]                        qpll_drp_crscode,
    input  wire [17:0]                        qpll_drp_fsm,
    input  wire [1:0]                         qpll_drp_done,
    input  wire [1:0]                         qpll_drp_reset,
    input  wire [1:0]                         qpll_qplllock,
    input  wire [1:0]                         qpll_qplloutclk,
    input  wire [1:0]                         qpll_qplloutrefclk,
    output wire                               qpll_qplld,
    output wire [1:0]                         qpll_qpllreset,
    output wire                               qpll_drp_clk,
    output wire                               qpll_drp_rst_n,
    output wire                               qpll_drp_ovrd,
    output wire                               qpll_drp_gen3,
    output wire                               qpll_drp_start,
    input  wire                               pipe_pclk_in,
    input  wire                               pipe_rxusrclk_in,
    input  wire [LANES-1:0]                   pipe_rxoutclk_in,
    input  wire                               pipe_dclk_in,
    input  wire                               pipe_userclk1_in,
    input  wire                               pipe_userclk2_in,
    input  wire                               pipe_oobclk_in,
    input  wire                               pipe_mmcm_lock_in,
    output wire                               pipe_txoutclk_out,
    output wire [LANES-1:0]                   pipe_rxoutclk_out,
    output wire [LANES-1:0]                   pipe_pclk_sel_out,
    output wire                               pipe_gen3_out,
    input  wire                               pipe_mmcm_rst_n,
    // the PIPE clock and lane-0 outputs a 3.0 template lists, and the buffered
    // reference clock
    output wire                               pipe_clk,
    output wire                               pipe_tx0_rcvr_det,
    output wire [1:0]                         pipe_tx0_powerdown,
    output wire                               sys_clk_bufg,

    /* Transceiver control and status (en_transceiver_status_ports), tied off:
       resets done, PLLs locked, power good, no PRBS errors, loopback and PRBS
       controls ignored.  Per lane unless the width says otherwise. */
    input  wire [LANES-1:0]                   gt_pcieuserratedone,
    input  wire [3*LANES-1:0]                 gt_loopback,
    input  wire [LANES-1:0]                   gt_txprbsforceerr,
    input  wire [LANES-1:0]                   gt_txinhibit,
    input  wire [4*LANES-1:0]                 gt_txprbssel,
    input  wire [4*LANES-1:0]                 gt_rxprbssel,
    input  wire [LANES-1:0]                   gt_rxprbscntreset,
    input  wire [LANES-1:0]                   gt_dmonfiforeset,
    input  wire [LANES-1:0]                   gt_dmonitorclk,
    input  wire [LANES-1:0]                   gt_txpmareset,
    input  wire [LANES-1:0]                   gt_rxpmareset,
    input  wire [LANES-1:0]                   gt_txpcsreset,
    input  wire [LANES-1:0]                   gt_rxpcsreset,
    input  wire [LANES-1:0]                   gt_rxbufreset,
    input  wire [LANES-1:0]                   gt_rxcdrreset,
    input  wire [LANES-1:0]                   gt_rxdfelpmreset,
    output wire [LANES-1:0]                   gt_txelecidle,
    output wire [LANES-1:0]                   gt_txresetdone,
    output wire [LANES-1:0]                   gt_rxresetdone,
    output wire [LANES-1:0]                   gt_rxpmaresetdone,
    output wire [LANES-1:0]                   gt_txphaligndone,
    output wire [LANES-1:0]                   gt_txphinitdone,
    output wire [LANES-1:0]                   gt_txdlysresetdone,
    output wire [LANES-1:0]                   gt_rxphaligndone,
    output wire [LANES-1:0]                   gt_rxdlysresetdone,
    output wire [LANES-1:0]                   gt_rxsyncdone,
    output wire [LANES-1:0]                   gt_eyescandataerror,
    output wire [LANES-1:0]                   gt_rxprbserr,
    output wire [17*LANES-1:0]                gt_dmonitorout,
    output wire [LANES-1:0]                   gt_rxcommadet,
    output wire [LANES-1:0]                   gt_phystatus,
    output wire [LANES-1:0]                   gt_rxvalid,
    output wire [LANES-1:0]                   gt_rxcdrlock,
    output wire [LANES-1:0]                   gt_pcierateidle,
    output wire [LANES-1:0]                   gt_pcieuserratestart,
    output wire [LANES-1:0]                   gt_gtpowergood,
    output wire [LANES-1:0]                   gt_cplllock,
    output wire [LANES-1:0]                   gt_rxoutclk,
    output wire [LANES-1:0]                   gt_rxrecclkout,
    output wire [QUADS-1:0]                   gt_qpll0lock,
    output wire [QUADS-1:0]                   gt_qpll1lock,
    output wire [3*LANES-1:0]                 gt_rxstatus,
    output wire [3*LANES-1:0]                 gt_rxbufstatus,
    output wire [8:0]                         gt_bufgtdiv,
    output wire [LANES-1:0]                   gt_gen34_eios_det,
    output wire [LANES-1:0]                   gt_txoutclk,
    output wire [LANES-1:0]                   gt_txoutclkfabric,
    output wire [LANES-1:0]                   gt_rxoutclkfabric,
    output wire [LANES-1:0]                   gt_txoutclkpcs,
    output wire [LANES-1:0]                   gt_rxoutclkpcs,
    output wire [LANES-1:0]                   gt_txprogdivresetdone,
    output wire [LANES-1:0]                   gt_txpmaresetdone,
    output wire [LANES-1:0]                   gt_txsyncdone,
    output wire [LANES-1:0]                   gt_rxprbslocked,
    output wire [2*LANES-1:0]                 phy_txeq_ctrl,
    output wire [4*LANES-1:0]                 phy_txeq_preset,
    output wire [3:0]                         phy_rst_fsm,
    output wire [3*LANES-1:0]                 phy_txeq_fsm,
    output wire [3*LANES-1:0]                 phy_rxeq_fsm,
    output wire                               phy_rst_idle,
    output wire                               phy_rrst_n,
    output wire                               phy_prst_n,

    /* The hard block's DRP (en_pcie_drp): every access is acknowledged one drp_clk
       cycle later; the block's attributes are not modelled (reads return 0, writes
       have no effect) */
    input  wire                               drp_clk,
    input  wire                               drp_en,
    input  wire                               drp_we,
    input  wire [10:0]                        drp_addr,
    input  wire [15:0]                        drp_di,
    output wire                               drp_rdy,
    output wire [15:0]                        drp_do,

    /* Tandem configuration and MCAP (mcap_enablement): the whole design is present, so
       the stage-2 switch reads done; the MCAP never asks for the configuration port
       (cap_req low) and ignores grants and releases */
    output wire                               mcap_design_switch,
    output wire                               cap_req,
    input  wire                               cap_gnt,
    input  wire                               cap_rel,

    /* 7-series transceiver debug (the x1 template's widths, per lane where they are
       per lane), tied off: resets and alignment done, PLLs locked, wrappers idle, no
       PRBS, disparity or eye-scan errors */
    input  wire [2:0]                         pipe_txprbssel,
    input  wire [2:0]                         pipe_rxprbssel,
    input  wire                               pipe_txprbsforceerr,
    input  wire                               pipe_rxprbscntreset,
    input  wire [2:0]                         pipe_loopback,
    input  wire [LANES-1:0]                   pipe_txinhibit,
    output wire [LANES-1:0]                   pipe_rxprbserr,
    output wire [4:0]                         pipe_rst_fsm,
    output wire [11:0]                        pipe_qrst_fsm,
    output wire [5*LANES-1:0]                 pipe_rate_fsm,
    output wire [6*LANES-1:0]                 pipe_sync_fsm_tx,
    output wire [7*LANES-1:0]                 pipe_sync_fsm_rx,
    output wire [7*LANES-1:0]                 pipe_drp_fsm,
    output wire                               pipe_rst_idle,
    output wire                               pipe_qrst_idle,
    output wire                               pipe_rate_idle,
    output wire [LANES-1:0]                   pipe_eyescandataerror,
    output wire [3*LANES-1:0]                 pipe_rxstatus,
    output wire [15*LANES-1:0]                pipe_dmonitorout,
    output wire [LANES-1:0]                   pipe_cpll_lock,
    output wire [QUADS-1:0]                   pipe_qpll_lock,
    output wire [LANES-1:0]                   pipe_rxpmaresetdone,
    output wire [3*LANES-1:0]                 pipe_rxbufstatus,
    output wire [LANES-1:0]                   pipe_txphaligndone,
    output wire [LANES-1:0]                   pipe_txphinitdone,
    output wire [LANES-1:0]                   pipe_txdlysresetdone,
    output wire [LANES-1:0]                   pipe_rxphaligndone,
    output wire [LANES-1:0]                   pipe_rxdlysresetdone,
    output wire [LANES-1:0]                   pipe_rxsyncdone,
    output wire [8*LANES-1:0]                 pipe_rxdisperr,
    output wire [8*LANES-1:0]                 pipe_rxnotintable,
    output wire [LANES-1:0]                   pipe_rxcommadet,
    output wire [LANES-1:0]                   gt_ch_drp_rdy,
    output wire [LANES-1:0]                   pipe_debug_0,
    output wire [LANES-1:0]                   pipe_debug_1,
    output wire [LANES-1:0]                   pipe_debug_2,
    output wire [LANES-1:0]                   pipe_debug_3,
    output wire [LANES-1:0]                   pipe_debug_4,
    output wire [LANES-1:0]                   pipe_debug_5,
    output wire [LANES-1:0]                   pipe_debug_6,
    output wire [LANES-1:0]                   pipe_debug_7,
    output wire [LANES-1:0]                   pipe_debug_8,
    output wire [LANES-1:0]                   pipe_debug_9,
    output wire [31:0]                        pipe_debug,

    /* Link up, and the user side's clock and reset */
    output wire                               user_lnk_up,
    output wire                               axi_aclk,
    output wire                               axi_aresetn,
    // low: reset the DMA and the user side, the link kept up (PEVB_XDMA_SOFT_RESET_EN)
    input  wire                               dma_bridge_resetn,

    /* User interrupts: hold a request high until its ack pulses */
    input  wire [USER_IRQS-1:0]               usr_irq_req,
    output wire [USER_IRQS-1:0]               usr_irq_ack,
    // MSI enabled by the host, and the vectors it granted (log2)
    output wire                               msi_enable,
    output wire [2:0]                         msi_vector_width,
    // MSI-X enabled by the host
    output wire                               msix_enable,

`include "pevb_xdma_axi_ports.vh"

`include "pevb_xdma_stream_ports.vh"

`include "pevb_xdma_byp_ports.vh"

    /* Configuration management (PEVB_XDMA_CFG_MGMT): a configuration register,
       addr [9:0] its DWORD number and [17:10] the function, held with read or write
       until read_write_done pulses; type1_cfg_reg_access (7 series) only matters to a
       Root Port and has no effect on this Endpoint */
    input  wire [18:0]                        cfg_mgmt_addr,
    input  wire                               cfg_mgmt_write,
    input  wire [31:0]                        cfg_mgmt_write_data,
    input  wire [3:0]                         cfg_mgmt_byte_enable,
    input  wire                               cfg_mgmt_read,
    output wire [31:0]                        cfg_mgmt_read_data,
    output wire                               cfg_mgmt_read_write_done,
    input  wire                               cfg_mgmt_type1_cfg_reg_access,

    /* Configuration status, as the hard IP drives it: LTSSM state (L0, 6'h10, while
       the link is up; Detect.Quiet otherwise), per function (4 bits each) I/O space,
       memory space and bus master enable and INTx disable, and function 0's max
       payload and read request sizes (PG213 encodings) */
    output wire [5:0]                         cfg_ltssm_state,
    output wire [15:0]                        cfg_function_status,
    output wire [1:0]                         cfg_max_payload,
    output wire [2:0]                         cfg_max_read_req,
    // an uncorrectable internal error from the user side: accepted, not reported
    // (the model has no AER)
    input  wire                               cfg_err_uncor_in,
    // function-level reset in process (as the hard IP raises it); the DMA itself
    // acknowledges it, so cfg_flr_done is accepted and has no effect
    output wire [3:0]                         cfg_flr_in_process,
    input  wire [3:0]                         cfg_flr_done,
    // SR-IOV virtual functions: XDMA's DMA mode has none
    output wire [251:0]                       cfg_vf_flr_in_process,
    input  wire [7:0]                         cfg_vf_flr_func_num,
    input  wire [0:0]                         cfg_vf_flr_done,

    /* PCIe ID interface (PEVB_XDMA_PCIE_ID_IF, pcie_id_if): the function's IDs as the
       configuration space shows them, read by the hard IP from these inputs */
    input  wire [15:0]                        cfg_vend_id,
    input  wire [15:0]                        cfg_subsys_vend_id,
    input  wire [15:0]                        cfg_dev_id_pf0,
    input  wire [7:0]                         cfg_rev_id_pf0,
    input  wire [15:0]                        cfg_subsys_id_pf0,

    /* Configuration extend (PEVB_XDMA_CFG_EXT, cfg_ext_if): every configuration
       request from the link pulses read_received or write_received for a cycle with
       its register (DWORD) and function numbers (and a write's data and byte
       enables); a read of the user's ranges (PEVB_XDMA_CFG_EXT_LEGACY: bytes
       0xB0-0xBF, PEVB_XDMA_CFG_EXT_EXTENDED: bytes 0x480-0x4FF) is answered with
       read_data on the cycle read_data_valid is high */
    output wire                               cfg_ext_read_received,
    output wire                               cfg_ext_write_received,
    output wire [9:0]                         cfg_ext_register_number,
    output wire [7:0]                         cfg_ext_function_number,
    output wire [31:0]                        cfg_ext_write_data,
    output wire [3:0]                         cfg_ext_write_byte_enable,
    input  wire [31:0]                        cfg_ext_read_data,
    input  wire                               cfg_ext_read_data_valid,

`include "pevb_xdma_user_ports.vh"

    /* The IP's user bits beside those interfaces: Propagate Parity's odd parity of
       each byte the DMA sends (m_axi_wuser, m_axis_h2c_tuser_n), the user's parity
       (m_axi_ruser, s_axis_c2h_tuser_n: accepted, not checked), and the user bits of
       a 3.0 template's bypass master (its function number: 0, one function) and
       AXI4-Lite master (undocumented since: 0) */
    output wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axi_wuser,
    input  wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axi_ruser,
    output wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axis_h2c_tuser_0,
    output wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axis_h2c_tuser_1,
    output wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axis_h2c_tuser_2,
    output wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axis_h2c_tuser_3,
    input  wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  s_axis_c2h_tuser_0,
    input  wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  s_axis_c2h_tuser_1,
    input  wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  s_axis_c2h_tuser_2,
    input  wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  s_axis_c2h_tuser_3,
    output wire [7:0]                     m_axib_awuser,
    output wire [7:0]                     m_axib_aruser,
    output wire [10:0]                        m_axil_awuser,
    output wire [10:0]                        m_axil_aruser,

    // the last channel status port (pevb_xdma_stream_ports.vh declares the others)
    output wire [7:0]                         c2h_sts_3
);
/* verilator lint_on DECLFILENAME */

assign pci_exp_txp = {LANES{1'b0}};
assign pci_exp_txn = {LANES{1'b1}};
wire unused_phy = ^{sys_clk, sys_clk_gt, sys_rst_n, pci_exp_rxp, pci_exp_rxn};
assign common_commands_out = {PIPE_CMD_WIDTH{1'b0}};
assign pipe_tx_0_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_1_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_2_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_3_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_4_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_5_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_6_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_7_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_8_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_9_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_10_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_11_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_12_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_13_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_14_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign pipe_tx_15_sigs = {PIPE_SIG_WIDTH{1'b0}};
assign int_qpll1lock_out = {QUADS{1'b1}};
assign int_qpll1outrefclk_out = {QUADS{1'b0}};
assign int_qpll1outclk_out = {QUADS{1'b0}};
// 7 series shared logic: QPLLs locked, clocks still, the QPLL DRP idle out of reset
assign int_dclk_out = 1'b0;
assign int_oobclk_out = 1'b0;
assign int_pclk_out_slave = 1'b0;
assign int_pipe_rxusrclk_out = 1'b0;
assign int_qplllock_out = 2'b11;
assign int_qplloutclk_out = 2'b00;
assign int_qplloutrefclk_out = 2'b00;
assign int_rxoutclk_out = {LANES{1'b0}};
assign int_userclk1_out = 1'b0;
assign int_userclk2_out = 1'b0;
assign qpll_qplld = 1'b0;
assign qpll_qpllreset = 2'b00;
assign qpll_drp_clk = 1'b0;
assign qpll_drp_rst_n = 1'b1;
assign qpll_drp_ovrd = 1'b0;
assign qpll_drp_gen3 = 1'b0;
assign qpll_drp_start = 1'b0;
assign pipe_txoutclk_out = 1'b0;
assign pipe_rxoutclk_out = {LANES{1'b0}};
assign pipe_pclk_sel_out = {LANES{1'b0}};
assign pipe_gen3_out = 1'b0;
wire unused_shared_7series = ^{int_pclk_sel_slave, qpll_drp_crscode, qpll_drp_fsm,
                               qpll_drp_done, qpll_drp_reset, qpll_qplllock,
                               qpll_qplloutclk, qpll_qplloutrefclk, pipe_pclk_in,
                               pipe_rxusrclk_in, pipe_rxoutclk_in, pipe_dclk_in,
                               pipe_userclk1_in, pipe_userclk2_in, pipe_oobclk_in,
                               pipe_mmcm_lock_in, pipe_mmcm_rst_n};
wire unused_pipe = ^{common_commands_in, pipe_rx_0_sigs, pipe_rx_1_sigs, pipe_rx_2_sigs,
                    pipe_rx_3_sigs, pipe_rx_4_sigs, pipe_rx_5_sigs, pipe_rx_6_sigs,
                    pipe_rx_7_sigs, pipe_rx_8_sigs, pipe_rx_9_sigs, pipe_rx_10_sigs,
                    pipe_rx_11_sigs, pipe_rx_12_sigs, pipe_rx_13_sigs, pipe_rx_14_sigs,
                    pipe_rx_15_sigs};

/* Transceiver, PIPE clock and DRP tie-offs (the link is modelled above them) */
assign pipe_clk = 1'b0;
assign pipe_tx0_rcvr_det = 1'b0;
assign pipe_tx0_powerdown = 2'b00;
assign sys_clk_bufg = sys_clk;
assign gt_txelecidle = {LANES{1'b0}};
assign gt_txresetdone = {LANES{1'b1}};
assign gt_rxresetdone = {LANES{1'b1}};
assign gt_rxpmaresetdone = {LANES{1'b1}};
assign gt_txphaligndone = {LANES{1'b1}};
assign gt_txphinitdone = {LANES{1'b1}};
assign gt_txdlysresetdone = {LANES{1'b1}};
assign gt_rxphaligndone = {LANES{1'b1}};
assign gt_rxdlysresetdone = {LANES{1'b1}};
assign gt_rxsyncdone = {LANES{1'b1}};
assign gt_eyescandataerror = {LANES{1'b0}};
assign gt_rxprbserr = {LANES{1'b0}};
assign gt_dmonitorout = {17*LANES{1'b0}};
assign gt_rxcommadet = {LANES{1'b0}};
assign gt_phystatus = {LANES{1'b0}};
assign gt_rxvalid = {LANES{1'b1}};
assign gt_rxcdrlock = {LANES{1'b1}};
assign gt_pcierateidle = {LANES{1'b0}};
assign gt_pcieuserratestart = {LANES{1'b0}};
assign gt_gtpowergood = {LANES{1'b1}};
assign gt_cplllock = {LANES{1'b1}};
assign gt_rxoutclk = {LANES{1'b0}};
assign gt_rxrecclkout = {LANES{1'b0}};
assign gt_qpll0lock = {QUADS{1'b1}};
assign gt_qpll1lock = {QUADS{1'b1}};
assign gt_rxstatus = {3*LANES{1'b0}};
assign gt_rxbufstatus = {3*LANES{1'b0}};
assign gt_bufgtdiv = 9'd0;
assign gt_gen34_eios_det = {LANES{1'b0}};
assign gt_txoutclk = {LANES{1'b0}};
assign gt_txoutclkfabric = {LANES{1'b0}};
assign gt_rxoutclkfabric = {LANES{1'b0}};
assign gt_txoutclkpcs = {LANES{1'b0}};
assign gt_rxoutclkpcs = {LANES{1'b0}};
assign gt_txprogdivresetdone = {LANES{1'b1}};
assign gt_txpmaresetdone = {LANES{1'b1}};
assign gt_txsyncdone = {LANES{1'b1}};
assign gt_rxprbslocked = {LANES{1'b0}};
assign phy_txeq_ctrl = {2*LANES{1'b0}};
assign phy_txeq_preset = {4*LANES{1'b0}};
assign phy_rst_fsm = 4'd0;
assign phy_txeq_fsm = {3*LANES{1'b0}};
assign phy_rxeq_fsm = {3*LANES{1'b0}};
assign phy_rst_idle = 1'b1;
assign phy_rrst_n = 1'b1;
assign phy_prst_n = 1'b1;
wire unused_gt = ^{gt_pcieuserratedone, gt_loopback, gt_txprbsforceerr, gt_txinhibit,
                  gt_txprbssel, gt_rxprbssel, gt_rxprbscntreset, gt_dmonfiforeset,
                  gt_dmonitorclk, gt_txpmareset, gt_rxpmareset, gt_txpcsreset,
                  gt_rxpcsreset, gt_rxbufreset, gt_rxcdrreset, gt_rxdfelpmreset};

// DRP: ready one drp_clk cycle after each access, read data 0 (an open drp_en
// accesses nothing)
reg drp_rdy_reg;
always @(posedge drp_clk) begin
    drp_rdy_reg <= drp_en === 1'b1;
end
assign drp_rdy = drp_rdy_reg;
assign drp_do = 16'd0;
wire unused_drp = ^{drp_we, drp_addr, drp_di};

/* Propagate Parity (PG195): odd parity of each byte the DMA sends on its stream and
   AXI4 write data; the user's parity (c2h tuser, ruser) is accepted and not checked */
genvar pb;
generate
    for (pb = 0; pb < AXIS_PCIE_DATA_WIDTH/8; pb = pb + 1) begin : parity
        assign m_axis_h2c_tuser_0[pb] = ~^m_axis_h2c_tdata_0[8*pb +: 8];
        assign m_axis_h2c_tuser_1[pb] = ~^m_axis_h2c_tdata_1[8*pb +: 8];
        assign m_axis_h2c_tuser_2[pb] = ~^m_axis_h2c_tdata_2[8*pb +: 8];
        assign m_axis_h2c_tuser_3[pb] = ~^m_axis_h2c_tdata_3[8*pb +: 8];
        assign m_axi_wuser[pb] = ~^m_axi_wdata[8*pb +: 8];
    end
endgenerate
wire unused_parity = ^{m_axi_ruser, s_axis_c2h_tuser_0, s_axis_c2h_tuser_1,
                      s_axis_c2h_tuser_2, s_axis_c2h_tuser_3};

/* 7-series transceiver debug tie-offs */
assign pipe_rxprbserr = {LANES{1'b0}};
assign pipe_rst_fsm = 5'd0;
assign pipe_qrst_fsm = 12'd0;
assign pipe_rate_fsm = {5*LANES{1'b0}};
assign pipe_sync_fsm_tx = {6*LANES{1'b0}};
assign pipe_sync_fsm_rx = {7*LANES{1'b0}};
assign pipe_drp_fsm = {7*LANES{1'b0}};
assign pipe_rst_idle = 1'b1;
assign pipe_qrst_idle = 1'b1;
assign pipe_rate_idle = 1'b1;
assign pipe_eyescandataerror = {LANES{1'b0}};
assign pipe_rxstatus = {3*LANES{1'b0}};
assign pipe_dmonitorout = {15*LANES{1'b0}};
assign pipe_cpll_lock = {LANES{1'b1}};
assign pipe_qpll_lock = {QUADS{1'b1}};
assign pipe_rxpmaresetdone = {LANES{1'b1}};
assign pipe_rxbufstatus = {3*LANES{1'b0}};
assign pipe_txphaligndone = {LANES{1'b1}};
assign pipe_txphinitdone = {LANES{1'b1}};
assign pipe_txdlysresetdone = {LANES{1'b1}};
assign pipe_rxphaligndone = {LANES{1'b1}};
assign pipe_rxdlysresetdone = {LANES{1'b1}};
assign pipe_rxsyncdone = {LANES{1'b1}};
assign pipe_rxdisperr = {8*LANES{1'b0}};
assign pipe_rxnotintable = {8*LANES{1'b0}};
assign pipe_rxcommadet = {LANES{1'b0}};
assign gt_ch_drp_rdy = {LANES{1'b0}};
assign pipe_debug_0 = {LANES{1'b0}};
assign pipe_debug_1 = {LANES{1'b0}};
assign pipe_debug_2 = {LANES{1'b0}};
assign pipe_debug_3 = {LANES{1'b0}};
assign pipe_debug_4 = {LANES{1'b0}};
assign pipe_debug_5 = {LANES{1'b0}};
assign pipe_debug_6 = {LANES{1'b0}};
assign pipe_debug_7 = {LANES{1'b0}};
assign pipe_debug_8 = {LANES{1'b0}};
assign pipe_debug_9 = {LANES{1'b0}};
assign pipe_debug = 32'd0;
wire unused_pipe_debug = ^{pipe_txprbssel, pipe_rxprbssel, pipe_txprbsforceerr,
                          pipe_rxprbscntreset, pipe_loopback, pipe_txinhibit};

/* Tandem / MCAP tie-offs */
assign mcap_design_switch = 1'b1;
assign cap_req = 1'b0;
wire unused_mcap = ^{cap_gnt, cap_rel};

/* 3.0 templates' AXI user bits */
assign m_axil_awuser = 11'd0;
assign m_axil_aruser = 11'd0;
assign m_axib_awuser = 8'd0;
assign m_axib_aruser = 8'd0;

wire                               user_clk, user_reset;
wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_rq_tdata, s_axis_rc_tdata, s_axis_cq_tdata, m_axis_cc_tdata;
wire [AXIS_PCIE_KEEP_WIDTH-1:0]    m_axis_rq_tkeep, s_axis_rc_tkeep, s_axis_cq_tkeep, m_axis_cc_tkeep;
wire                               m_axis_rq_tlast, m_axis_rq_tready, m_axis_rq_tvalid;
wire                               s_axis_rc_tlast, s_axis_rc_tready, s_axis_rc_tvalid;
wire                               s_axis_cq_tlast, s_axis_cq_tready, s_axis_cq_tvalid;
wire                               m_axis_cc_tlast, m_axis_cc_tready, m_axis_cc_tvalid;
wire [AXIS_PCIE_RQ_USER_WIDTH-1:0] m_axis_rq_tuser;
wire [AXIS_PCIE_RC_USER_WIDTH-1:0] s_axis_rc_tuser;
wire [AXIS_PCIE_CQ_USER_WIDTH-1:0] s_axis_cq_tuser;
wire [AXIS_PCIE_CC_USER_WIDTH-1:0] m_axis_cc_tuser;
wire [1:0]                         pcie_cq_np_req;
wire [2:0]                         hip_cfg_max_payload, hip_cfg_max_read_req;
wire [7:0]                         cfg_bus_number;
wire                               cfg_config_space_enable;
wire [3:0]                         cfg_interrupt_msi_enable;
wire [11:0]                        cfg_interrupt_msi_mmenable;
wire [31:0]                        cfg_interrupt_msi_int;
wire                               cfg_interrupt_msi_sent, cfg_interrupt_msi_fail;
wire [7:0]                         cfg_interrupt_msi_function_number;
wire [3:0]                         cfg_interrupt_msix_enable, cfg_interrupt_msix_mask;
wire [63:0]                        cfg_interrupt_msix_address;
wire [31:0]                        cfg_interrupt_msix_data;
wire                               cfg_interrupt_msix_int, cfg_interrupt_msix_sent, cfg_interrupt_msix_fail;
wire [3:0]                         cfg_interrupt_int, cfg_interrupt_pending;
wire                               cfg_interrupt_sent;
wire [3:0]                         hip_cfg_flr_in_process, hip_cfg_flr_done;
wire [31:0]                        hip_cfg_mgmt_read_data;
wire                               hip_cfg_mgmt_done;
// without the option the interface is off: its inputs never reach the hard IP
wire                               mgmt_on = CFG_MGMT != 0;
assign cfg_mgmt_read_data = mgmt_on ? hip_cfg_mgmt_read_data : 32'd0;
assign cfg_mgmt_read_write_done = mgmt_on && hip_cfg_mgmt_done;
wire unused_mgmt = ^{cfg_mgmt_addr[18], cfg_mgmt_type1_cfg_reg_access};

/* Configuration status from the hard IP */
wire [15:0]                        hip_cfg_function_status;
assign cfg_ltssm_state = user_lnk_up ? 6'h10 : 6'h00;
assign cfg_function_status = hip_cfg_function_status;
assign cfg_max_payload = hip_cfg_max_payload[1:0];
assign cfg_max_read_req = hip_cfg_max_read_req;
assign cfg_flr_in_process = hip_cfg_flr_in_process;
assign cfg_vf_flr_in_process = 252'd0;
// configuration extend: the model drives the hip's outputs only with the option
wire                               ext_on = CFG_EXT != 0;
wire                               hip_ext_read, hip_ext_write;
wire [9:0]                         hip_ext_register;
wire [7:0]                         hip_ext_function;
wire [31:0]                        hip_ext_write_data;
wire [3:0]                         hip_ext_byte_enable;
assign cfg_ext_read_received = ext_on && hip_ext_read;
assign cfg_ext_write_received = ext_on && hip_ext_write;
assign cfg_ext_register_number = ext_on ? hip_ext_register : 10'd0;
assign cfg_ext_function_number = ext_on ? hip_ext_function : 8'd0;
assign cfg_ext_write_data = ext_on ? hip_ext_write_data : 32'd0;
assign cfg_ext_write_byte_enable = ext_on ? hip_ext_byte_enable : 4'd0;
wire [5:0]                         unused_options = {CFG_EXT_LEGACY != 0, CFG_EXT_EXTENDED != 0,
                                                      PCIE_ID_IF != 0,
                                                      AXIL_MASTER_PREFETCHABLE != 0,
                                                      PCIE_PREFETCHABLE != 0,
                                                      AXIB_PREFETCHABLE != 0};

/* the BARs, in Vivado's order (PG195 "Target Bridge"): the AXI4-Lite master's, the
   DMA's, the bypass master's, each in the next free BAR and a 64-bit one in the next
   even pair (BAR0/1, 2/3, 4/5); 7: no such BAR */
localparam [2:0] BAR_USER = AXIL_MASTER ? 3'd0 : 3'd7;
localparam USER_END = AXIL_MASTER ? (AXIL_MASTER_64BIT ? 2 : 1) : 0;
localparam DMA_AT = PCIE_64BIT ? USER_END + USER_END % 2 : USER_END;
localparam [2:0] BAR_DMA = DMA_AT;
localparam DMA_END = DMA_AT + (PCIE_64BIT ? 2 : 1);
localparam AXIB_AT = AXIB_64BIT ? DMA_END + DMA_END % 2 : DMA_END;
localparam [2:0] BAR_AXIB = AXIB ? AXIB_AT : 3'd7;
wire unused_status = ^{hip_cfg_max_payload[2], cfg_err_uncor_in, cfg_flr_done,
                      cfg_vf_flr_func_num, cfg_vf_flr_done};

pevb_hip_port #(
    .AXIS_PCIE_DATA_WIDTH(AXIS_PCIE_DATA_WIDTH),
    .AXIS_PCIE_KEEP_WIDTH(AXIS_PCIE_KEEP_WIDTH),
    .AXIS_PCIE_RQ_USER_WIDTH(AXIS_PCIE_RQ_USER_WIDTH),
    .AXIS_PCIE_RC_USER_WIDTH(AXIS_PCIE_RC_USER_WIDTH),
    .AXIS_PCIE_CQ_USER_WIDTH(AXIS_PCIE_CQ_USER_WIDTH),
    .AXIS_PCIE_CC_USER_WIDTH(AXIS_PCIE_CC_USER_WIDTH)
) hip (
    .user_clk(user_clk),
    .user_reset(user_reset),
    .user_lnk_up(user_lnk_up),
    .m_axis_rq_tdata(m_axis_rq_tdata),
    .m_axis_rq_tkeep(m_axis_rq_tkeep),
    .m_axis_rq_tlast(m_axis_rq_tlast),
    .m_axis_rq_tready(m_axis_rq_tready),
    .m_axis_rq_tuser(m_axis_rq_tuser),
    .m_axis_rq_tvalid(m_axis_rq_tvalid),
    .s_axis_rc_tdata(s_axis_rc_tdata),
    .s_axis_rc_tkeep(s_axis_rc_tkeep),
    .s_axis_rc_tlast(s_axis_rc_tlast),
    .s_axis_rc_tready(s_axis_rc_tready),
    .s_axis_rc_tuser(s_axis_rc_tuser),
    .s_axis_rc_tvalid(s_axis_rc_tvalid),
    .s_axis_cq_tdata(s_axis_cq_tdata),
    .s_axis_cq_tkeep(s_axis_cq_tkeep),
    .s_axis_cq_tlast(s_axis_cq_tlast),
    .s_axis_cq_tready(s_axis_cq_tready),
    .s_axis_cq_tuser(s_axis_cq_tuser),
    .s_axis_cq_tvalid(s_axis_cq_tvalid),
    .m_axis_cc_tdata(m_axis_cc_tdata),
    .m_axis_cc_tkeep(m_axis_cc_tkeep),
    .m_axis_cc_tlast(m_axis_cc_tlast),
    .m_axis_cc_tready(m_axis_cc_tready),
    .m_axis_cc_tuser(m_axis_cc_tuser),
    .m_axis_cc_tvalid(m_axis_cc_tvalid),
    .pcie_cq_np_req(pcie_cq_np_req),
    .cfg_max_payload(hip_cfg_max_payload),
    .cfg_max_read_req(hip_cfg_max_read_req),
    .cfg_bus_number(cfg_bus_number),
    .cfg_config_space_enable(cfg_config_space_enable),
    .cfg_interrupt_msi_enable(cfg_interrupt_msi_enable),
    .cfg_interrupt_msi_mmenable(cfg_interrupt_msi_mmenable),
    .cfg_interrupt_msi_int(cfg_interrupt_msi_int),
    .cfg_interrupt_msi_sent(cfg_interrupt_msi_sent),
    .cfg_interrupt_msi_fail(cfg_interrupt_msi_fail),
    .cfg_interrupt_msi_function_number(cfg_interrupt_msi_function_number),
    .cfg_interrupt_msix_enable(cfg_interrupt_msix_enable),
    .cfg_interrupt_msix_mask(cfg_interrupt_msix_mask),
    .cfg_interrupt_msix_address(cfg_interrupt_msix_address),
    .cfg_interrupt_msix_data(cfg_interrupt_msix_data),
    .cfg_interrupt_msix_int(cfg_interrupt_msix_int),
    .cfg_interrupt_msix_sent(cfg_interrupt_msix_sent),
    .cfg_interrupt_msix_fail(cfg_interrupt_msix_fail),
    .cfg_interrupt_int(cfg_interrupt_int),
    .cfg_interrupt_pending(cfg_interrupt_pending),
    .cfg_interrupt_sent(cfg_interrupt_sent),
    .cfg_flr_in_process(hip_cfg_flr_in_process),
    .cfg_flr_done(hip_cfg_flr_done),
    .cfg_function_status(hip_cfg_function_status),
    .cfg_mgmt_addr(cfg_mgmt_addr[9:0]),
    .cfg_mgmt_function_number(cfg_mgmt_addr[17:10]),
    .cfg_mgmt_write(mgmt_on && cfg_mgmt_write),
    .cfg_mgmt_write_data(cfg_mgmt_write_data),
    .cfg_mgmt_byte_enable(cfg_mgmt_byte_enable),
    .cfg_mgmt_read(mgmt_on && cfg_mgmt_read),
    .cfg_mgmt_read_data(hip_cfg_mgmt_read_data),
    .cfg_mgmt_read_write_done(hip_cfg_mgmt_done),
    .cfg_mgmt_debug_access(1'b0),
    .cfg_ext_read_received(hip_ext_read),
    .cfg_ext_write_received(hip_ext_write),
    .cfg_ext_register_number(hip_ext_register),
    .cfg_ext_function_number(hip_ext_function),
    .cfg_ext_write_data(hip_ext_write_data),
    .cfg_ext_write_byte_enable(hip_ext_byte_enable),
    .cfg_ext_read_data(cfg_ext_read_data),
    .cfg_ext_read_data_valid(ext_on && cfg_ext_read_data_valid),
    .cfg_vend_id(cfg_vend_id),
    .cfg_subsys_vend_id(cfg_subsys_vend_id),
    .cfg_dev_id_pf0(cfg_dev_id_pf0),
    .cfg_rev_id_pf0(cfg_rev_id_pf0),
    .cfg_subsys_id_pf0(cfg_subsys_id_pf0)
);

pevb_xdma_ip #(
`include "pevb_xdma_params_map.vh"
) ip (
    .user_clk(user_clk),
    .user_reset(user_reset),
`include "pevb_xdma_hip_map.vh"
    .pcie_cq_np_req(pcie_cq_np_req),
    .cfg_max_payload(hip_cfg_max_payload),
    .cfg_max_read_req(hip_cfg_max_read_req),
    .cfg_bus_number(cfg_bus_number),
    .cfg_config_space_enable(cfg_config_space_enable),
    .cfg_interrupt_msi_enable(cfg_interrupt_msi_enable),
    .cfg_interrupt_msi_mmenable(cfg_interrupt_msi_mmenable),
    .cfg_interrupt_msi_int(cfg_interrupt_msi_int),
    .cfg_interrupt_msi_sent(cfg_interrupt_msi_sent),
    .cfg_interrupt_msi_fail(cfg_interrupt_msi_fail),
    .cfg_interrupt_msi_function_number(cfg_interrupt_msi_function_number),
    .cfg_flr_in_process(hip_cfg_flr_in_process),
    .cfg_flr_done(hip_cfg_flr_done),
    .cfg_interrupt_msix_enable(cfg_interrupt_msix_enable),
    .cfg_interrupt_msix_mask(cfg_interrupt_msix_mask),
    .cfg_interrupt_msix_address(cfg_interrupt_msix_address),
    .cfg_interrupt_msix_data(cfg_interrupt_msix_data),
    .cfg_interrupt_msix_int(cfg_interrupt_msix_int),
    .cfg_interrupt_msix_sent(cfg_interrupt_msix_sent),
    .cfg_interrupt_msix_fail(cfg_interrupt_msix_fail),
    .cfg_interrupt_int(cfg_interrupt_int),
    .cfg_interrupt_pending(cfg_interrupt_pending),
    .cfg_interrupt_sent(cfg_interrupt_sent),
    .axi_aclk(axi_aclk),
    .axi_aresetn(axi_aresetn),
    .dma_bridge_resetn(dma_bridge_resetn),
    .usr_irq_req(usr_irq_req),
    .usr_irq_ack(usr_irq_ack),
    .msi_enable(msi_enable),
    .msi_vector_width(msi_vector_width),
    .msix_enable(msix_enable),
`include "pevb_xdma_axi_map.vh"
`include "pevb_xdma_stream_map.vh"
    .h2c_dsc_byp_load({h2c_dsc_byp_load_3, h2c_dsc_byp_load_2, h2c_dsc_byp_load_1, h2c_dsc_byp_load_0}),
    .h2c_dsc_byp_ready({h2c_dsc_byp_ready_3, h2c_dsc_byp_ready_2, h2c_dsc_byp_ready_1, h2c_dsc_byp_ready_0}),
    .h2c_dsc_byp_src_addr({h2c_dsc_byp_src_addr_3, h2c_dsc_byp_src_addr_2, h2c_dsc_byp_src_addr_1, h2c_dsc_byp_src_addr_0}),
    .h2c_dsc_byp_dst_addr({h2c_dsc_byp_dst_addr_3, h2c_dsc_byp_dst_addr_2, h2c_dsc_byp_dst_addr_1, h2c_dsc_byp_dst_addr_0}),
    .h2c_dsc_byp_len({h2c_dsc_byp_len_3, h2c_dsc_byp_len_2, h2c_dsc_byp_len_1, h2c_dsc_byp_len_0}),
    .h2c_dsc_byp_ctl({h2c_dsc_byp_ctl_3, h2c_dsc_byp_ctl_2, h2c_dsc_byp_ctl_1, h2c_dsc_byp_ctl_0}),
    .c2h_dsc_byp_load({c2h_dsc_byp_load_3, c2h_dsc_byp_load_2, c2h_dsc_byp_load_1, c2h_dsc_byp_load_0}),
    .c2h_dsc_byp_ready({c2h_dsc_byp_ready_3, c2h_dsc_byp_ready_2, c2h_dsc_byp_ready_1, c2h_dsc_byp_ready_0}),
    .c2h_dsc_byp_src_addr({c2h_dsc_byp_src_addr_3, c2h_dsc_byp_src_addr_2, c2h_dsc_byp_src_addr_1, c2h_dsc_byp_src_addr_0}),
    .c2h_dsc_byp_dst_addr({c2h_dsc_byp_dst_addr_3, c2h_dsc_byp_dst_addr_2, c2h_dsc_byp_dst_addr_1, c2h_dsc_byp_dst_addr_0}),
    .c2h_dsc_byp_len({c2h_dsc_byp_len_3, c2h_dsc_byp_len_2, c2h_dsc_byp_len_1, c2h_dsc_byp_len_0}),
    .c2h_dsc_byp_ctl({c2h_dsc_byp_ctl_3, c2h_dsc_byp_ctl_2, c2h_dsc_byp_ctl_1, c2h_dsc_byp_ctl_0}),
`include "pevb_xdma_user_map.vh"
    .c2h_sts_3(c2h_sts_3)
);

endmodule

`resetall
