// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

// the drop-in's options this design is built with (tb/flow/runner: the drop-in's defines)
`ifndef PEVB_XDMA_MODULE
`define PEVB_XDMA_MODULE xdma_0
`endif
`ifndef PEVB_XDMA_LANES
`define PEVB_XDMA_LANES 1
`endif
`ifndef PEVB_XDMA_7SERIES
`define PEVB_XDMA_7SERIES 0
`endif

/*
 * A user's design written against the Vivado XDMA IP in memory-mapped mode,
 * a 16 KiB block RAM on its AXI4 master (tb/tests/cocotb_ipconf.py moves data
 * through it), built in the configurations the suite's profiles are not: the IP
 * named otherwise (the drop-in's MODULE option: the instance is of
 * `PEVB_XDMA_MODULE), a link of other lanes (LANES: the serial ports' width), a
 * 7 series part (7SERIES: the PIPE simulation inputs at that family's widths).
 */
module ipconf_top
(
    input  wire                          sys_clk,
    input  wire                          sys_clk_gt,
    input  wire                          sys_rst_n,
    output wire [`PEVB_XDMA_LANES-1:0]   pci_exp_txp,
    output wire [`PEVB_XDMA_LANES-1:0]   pci_exp_txn,
    input  wire [`PEVB_XDMA_LANES-1:0]   pci_exp_rxp,
    input  wire [`PEVB_XDMA_LANES-1:0]   pci_exp_rxn,
    output wire                          user_lnk_up
);

// the PIPE simulation ports' widths of the part's family (PG195)
localparam PIPE_CMD_WIDTH = `PEVB_XDMA_7SERIES ? 12 : 26;
localparam PIPE_SIG_WIDTH = `PEVB_XDMA_7SERIES ? 25 : 84;

wire axi_aclk, axi_aresetn;
wire [3:0] m_axi_awid, m_axi_bid, m_axi_arid, m_axi_rid;
wire [63:0] m_axi_awaddr, m_axi_araddr, m_axi_wdata, m_axi_rdata;
wire [7:0] m_axi_awlen, m_axi_arlen, m_axi_wstrb;
wire [2:0] m_axi_awsize, m_axi_arsize, m_axi_awprot, m_axi_arprot;
wire [1:0] m_axi_awburst, m_axi_arburst, m_axi_bresp, m_axi_rresp;
wire [3:0] m_axi_awcache, m_axi_arcache;
wire m_axi_awlock, m_axi_arlock, m_axi_awvalid, m_axi_awready, m_axi_wlast;
wire m_axi_wvalid, m_axi_wready, m_axi_bvalid, m_axi_bready, m_axi_arvalid;
wire m_axi_arready, m_axi_rlast, m_axi_rvalid, m_axi_rready;

`PEVB_XDMA_MODULE ip_i (
    .sys_clk(sys_clk),
    .sys_clk_gt(sys_clk_gt),
    .sys_rst_n(sys_rst_n),
    .user_lnk_up(user_lnk_up),
    .pci_exp_txp(pci_exp_txp),
    .pci_exp_txn(pci_exp_txn),
    .pci_exp_rxp(pci_exp_rxp),
    .pci_exp_rxn(pci_exp_rxn),
    .axi_aclk(axi_aclk),
    .axi_aresetn(axi_aresetn),
    .usr_irq_req(1'b0),
    // the PIPE simulation inputs, at the part's widths
    .common_commands_in({PIPE_CMD_WIDTH{1'b0}}),
    .pipe_rx_0_sigs({PIPE_SIG_WIDTH{1'b0}}),
    .m_axi_awid(m_axi_awid),
    .m_axi_awaddr(m_axi_awaddr),
    .m_axi_awlen(m_axi_awlen),
    .m_axi_awsize(m_axi_awsize),
    .m_axi_awburst(m_axi_awburst),
    .m_axi_awlock(m_axi_awlock),
    .m_axi_awcache(m_axi_awcache),
    .m_axi_awprot(m_axi_awprot),
    .m_axi_awvalid(m_axi_awvalid),
    .m_axi_awready(m_axi_awready),
    .m_axi_wdata(m_axi_wdata),
    .m_axi_wstrb(m_axi_wstrb),
    .m_axi_wlast(m_axi_wlast),
    .m_axi_wvalid(m_axi_wvalid),
    .m_axi_wready(m_axi_wready),
    .m_axi_bid(m_axi_bid),
    .m_axi_bresp(m_axi_bresp),
    .m_axi_bvalid(m_axi_bvalid),
    .m_axi_bready(m_axi_bready),
    .m_axi_arid(m_axi_arid),
    .m_axi_araddr(m_axi_araddr),
    .m_axi_arlen(m_axi_arlen),
    .m_axi_arsize(m_axi_arsize),
    .m_axi_arburst(m_axi_arburst),
    .m_axi_arlock(m_axi_arlock),
    .m_axi_arcache(m_axi_arcache),
    .m_axi_arprot(m_axi_arprot),
    .m_axi_arvalid(m_axi_arvalid),
    .m_axi_arready(m_axi_arready),
    .m_axi_rid(m_axi_rid),
    .m_axi_rdata(m_axi_rdata),
    .m_axi_rresp(m_axi_rresp),
    .m_axi_rlast(m_axi_rlast),
    .m_axi_rvalid(m_axi_rvalid),
    .m_axi_rready(m_axi_rready)
);

/* the user's memory: a 16 KiB block RAM on the AXI4 master */
pevb_axi_ram #(
    .DATA_WIDTH(64),
    .ADDR_WIDTH(64),
    .ID_WIDTH(4),
    .SIZE(16384)
) ram_i (
    .clk(axi_aclk),
    .rst(!axi_aresetn),
    .s_axi_awid(m_axi_awid),
    .s_axi_awaddr(m_axi_awaddr),
    .s_axi_awlen(m_axi_awlen),
    .s_axi_awsize(m_axi_awsize),
    .s_axi_awburst(m_axi_awburst),
    .s_axi_awlock(m_axi_awlock),
    .s_axi_awcache(m_axi_awcache),
    .s_axi_awprot(m_axi_awprot),
    .s_axi_awvalid(m_axi_awvalid),
    .s_axi_awready(m_axi_awready),
    .s_axi_wdata(m_axi_wdata),
    .s_axi_wstrb(m_axi_wstrb),
    .s_axi_wlast(m_axi_wlast),
    .s_axi_wvalid(m_axi_wvalid),
    .s_axi_wready(m_axi_wready),
    .s_axi_bid(m_axi_bid),
    .s_axi_bresp(m_axi_bresp),
    .s_axi_bvalid(m_axi_bvalid),
    .s_axi_bready(m_axi_bready),
    .s_axi_arid(m_axi_arid),
    .s_axi_araddr(m_axi_araddr),
    .s_axi_arlen(m_axi_arlen),
    .s_axi_arsize(m_axi_arsize),
    .s_axi_arburst(m_axi_arburst),
    .s_axi_arlock(m_axi_arlock),
    .s_axi_arcache(m_axi_arcache),
    .s_axi_arprot(m_axi_arprot),
    .s_axi_arvalid(m_axi_arvalid),
    .s_axi_arready(m_axi_arready),
    .s_axi_rid(m_axi_rid),
    .s_axi_rdata(m_axi_rdata),
    .s_axi_rresp(m_axi_rresp),
    .s_axi_rlast(m_axi_rlast),
    .s_axi_rvalid(m_axi_rvalid),
    .s_axi_rready(m_axi_rready)
);

endmodule

`resetall
