// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * The engine's completer side: requests from the host to the function's BARs.
 * The DMA BAR reaches the register file (its port shared with the AXI4-Lite
 * slave, s_axil_*, which PG195 gives the user side: the slave's access goes in a
 * cycle without one from the link); the user BAR goes out on the AXI4-Lite
 * master (m_axil_*); with AXIB the bypass BAR goes out on the PCIe-to-DMA bypass
 * master (m_axib_*) as AXI4 bursts, its completions merged with the registers'.
 */
module pevb_completer #
(
    // PCIe AXI stream data width (64, 128, 256 or 512) and tkeep width
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    // CQ and CC tuser widths
    parameter AXIS_PCIE_CQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 88 : 183,
    parameter AXIS_PCIE_CC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 33 : 81,
    // the bypass master's AXI4 address and ID widths
    parameter AXI_ADDR_WIDTH = 64,
    parameter AXI_ID_WIDTH = 4,
    // the AXI4-Lite slave to the DMA registers (0 or 1): when 0 its ports are idle
    parameter AXIL_SLAVE = 0,
    // the PCIe-to-DMA bypass master behind BAR_AXIB (0 or 1): when 0 its ports are
    // idle and requests to that BAR get UR; log2 of its BAR's size and the AXI
    // address of its first byte
    parameter AXIB = 0,
    parameter AXIB_BAR_ADDR_WIDTH = 20,
    parameter [63:0] AXIB_AXI_BASE = 64'd0,
    // the BARs (ids 0-5 of the CQ descriptor; 7: none)
    parameter [2:0] BAR_USER = `PEVB_BAR_USER,
    parameter [2:0] BAR_DMA = `PEVB_BAR_DMA,
    parameter [2:0] BAR_AXIB = `PEVB_BAR_AXIB
)
(
    input  wire                               clk,
    input  wire                               rst,

    /* Completer request (CQ), held by the caller at FLR packet boundaries */
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_cq_tdata,
    input  wire [AXIS_PCIE_KEEP_WIDTH-1:0]    s_axis_cq_tkeep,
    input  wire                               s_axis_cq_tlast,
    output wire                               s_axis_cq_tready,
    input  wire [AXIS_PCIE_CQ_USER_WIDTH-1:0] s_axis_cq_tuser,
    input  wire                               s_axis_cq_tvalid,

    /* Completer completion (CC) */
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_cc_tdata,
    output wire [AXIS_PCIE_KEEP_WIDTH-1:0]    m_axis_cc_tkeep,
    output wire                               m_axis_cc_tlast,
    input  wire                               m_axis_cc_tready,
    output wire [AXIS_PCIE_CC_USER_WIDTH-1:0] m_axis_cc_tuser,
    output wire                               m_axis_cc_tvalid,

    /* Max payload size (the bypass master's read completions) */
    input  wire [2:0]                         cfg_max_payload,

    /* The register file's port: an access and its combinational read data */
    output wire                               regs_valid,
    output wire                               regs_we,
    output wire [2:0]                         regs_bar,
    output wire [`PEVB_BAR_DMA_ADDR_WIDTH-1:0] regs_addr,
    output wire [31:0]                        regs_wdata,
    output wire [3:0]                         regs_be,
    input  wire [31:0]                        dma_rd_data,

`include "pevb_axib_ports.vh"

`include "pevb_axil_master_ports.vh"

    /* AXI4-Lite slave: the DMA registers from the user side (AXIL_SLAVE) */
    input  wire [31:0]                        s_axil_awaddr,
    input  wire [2:0]                         s_axil_awprot,
    input  wire                               s_axil_awvalid,
    output wire                               s_axil_awready,
    input  wire [31:0]                        s_axil_wdata,
    input  wire [3:0]                         s_axil_wstrb,
    input  wire                               s_axil_wvalid,
    output wire                               s_axil_wready,
    output wire                               s_axil_bvalid,
    output wire [1:0]                         s_axil_bresp,
    input  wire                               s_axil_bready,
    input  wire [31:0]                        s_axil_araddr,
    input  wire [2:0]                         s_axil_arprot,
    input  wire                               s_axil_arvalid,
    output wire                               s_axil_arready,
    output wire [31:0]                        s_axil_rdata,
    output wire [1:0]                         s_axil_rresp,
    output wire                               s_axil_rvalid,
    input  wire                               s_axil_rready
);

localparam DW = AXIS_PCIE_DATA_WIDTH;
localparam KEEP = AXIS_PCIE_KEEP_WIDTH;

/* register access: the completer's, and the AXI4-Lite slave's to the DMA BAR */
wire reg_req_valid;
wire reg_req_we;
wire [2:0] reg_req_bar;
wire [`PEVB_BAR_DMA_ADDR_WIDTH-1:0] reg_req_addr;
wire [31:0] reg_req_wdata;
wire [3:0] reg_req_be;
wire [31:0] reg_rd_data;
wire reg_ack;
wire [31:0] user_rd_data;
wire user_ack;
wire dma_bar = reg_req_bar == BAR_DMA;
// DMA registers answer at once (combinational read data); the user BAR when the
// AXI-Lite slave does
assign reg_ack = dma_bar ? reg_req_valid : user_ack;
assign reg_rd_data = dma_bar ? dma_rd_data : user_rd_data;

// the register file's port: the completer's access, or in a cycle without one to the
// DMA BAR, the AXI4-Lite slave's (it holds its request until taken)
wire s_req_valid;
wire s_req_we;
wire [`PEVB_BAR_DMA_ADDR_WIDTH-1:0] s_req_addr;
wire [31:0] s_req_wdata;
wire [3:0] s_req_be;
wire s_take = s_req_valid && !(reg_req_valid && dma_bar);
assign regs_valid = reg_req_valid || s_take;
assign regs_we = s_take ? s_req_we : reg_req_we;
assign regs_bar = s_take ? BAR_DMA : reg_req_bar;
assign regs_addr = s_take ? s_req_addr : reg_req_addr;
assign regs_wdata = s_take ? s_req_wdata : reg_req_wdata;
assign regs_be = s_take ? s_req_be : reg_req_be;

generate
    if (AXIL_SLAVE) begin : axil_slave
        pevb_axil_slave #(
            .ADDR_WIDTH(`PEVB_BAR_DMA_ADDR_WIDTH)
        ) axil_slave_inst (
            .clk(clk),
            .rst(rst),
            .s_axil_awaddr(s_axil_awaddr),
            .s_axil_awprot(s_axil_awprot),
            .s_axil_awvalid(s_axil_awvalid),
            .s_axil_awready(s_axil_awready),
            .s_axil_wdata(s_axil_wdata),
            .s_axil_wstrb(s_axil_wstrb),
            .s_axil_wvalid(s_axil_wvalid),
            .s_axil_wready(s_axil_wready),
            .s_axil_bvalid(s_axil_bvalid),
            .s_axil_bresp(s_axil_bresp),
            .s_axil_bready(s_axil_bready),
            .s_axil_araddr(s_axil_araddr),
            .s_axil_arprot(s_axil_arprot),
            .s_axil_arvalid(s_axil_arvalid),
            .s_axil_arready(s_axil_arready),
            .s_axil_rdata(s_axil_rdata),
            .s_axil_rresp(s_axil_rresp),
            .s_axil_rvalid(s_axil_rvalid),
            .s_axil_rready(s_axil_rready),
            .req_valid(s_req_valid),
            .req_we(s_req_we),
            .req_addr(s_req_addr),
            .req_wdata(s_req_wdata),
            .req_be(s_req_be),
            .req_ack(s_take),
            .rd_data(dma_rd_data)
        );
    end else begin : no_axil_slave
        assign s_axil_awready = 1'b0;
        assign s_axil_wready = 1'b0;
        assign s_axil_bvalid = 1'b0;
        assign s_axil_bresp = 2'b00;
        assign s_axil_arready = 1'b0;
        assign s_axil_rdata = 32'd0;
        assign s_axil_rresp = 2'b00;
        assign s_axil_rvalid = 1'b0;
        assign s_req_valid = 1'b0;
        assign s_req_we = 1'b0;
        assign s_req_addr = {`PEVB_BAR_DMA_ADDR_WIDTH{1'b0}};
        assign s_req_wdata = 32'd0;
        assign s_req_be = 4'd0;
        wire unused_s_axil = ^{s_axil_awaddr, s_axil_awprot, s_axil_awvalid, s_axil_wdata,
                               s_axil_wstrb, s_axil_wvalid, s_axil_bready, s_axil_araddr,
                               s_axil_arprot, s_axil_arvalid, s_axil_rready};
    end
endgenerate

/* completer: the register BARs, and with AXIB the bypass BAR beside them */
wire [DW-1:0] rg_cq_tdata;
wire [KEEP-1:0] rg_cq_tkeep;
wire rg_cq_tvalid, rg_cq_tready, rg_cq_tlast;
wire [AXIS_PCIE_CQ_USER_WIDTH-1:0] rg_cq_tuser;
wire [DW-1:0] rg_cc_tdata;
wire [KEEP-1:0] rg_cc_tkeep;
wire rg_cc_tvalid, rg_cc_tready, rg_cc_tlast;
wire [AXIS_PCIE_CC_USER_WIDTH-1:0] rg_cc_tuser;

generate
    if (AXIB) begin : axib
        wire [DW-1:0] cq_tdata;
        wire [KEEP-1:0] cq_tkeep;
        wire cq_tlast;
        wire [AXIS_PCIE_CQ_USER_WIDTH-1:0] cq_tuser;
        wire [1:0] cq_tvalid, cq_tready;
        wire [DW-1:0] cc_tdata;
        wire [KEEP-1:0] cc_tkeep;
        wire cc_tvalid, cc_tready, cc_tlast;
        wire [AXIS_PCIE_CC_USER_WIDTH-1:0] cc_tuser;

        pevb_cq_demux #(
            .AXIS_PCIE_DATA_WIDTH(DW),
            .AXIS_PCIE_KEEP_WIDTH(KEEP),
            .AXIS_PCIE_CQ_USER_WIDTH(AXIS_PCIE_CQ_USER_WIDTH),
            .BAR(BAR_AXIB)
        ) demux_inst (
            .clk(clk),
            .rst(rst),
            .s_axis_cq_tdata(s_axis_cq_tdata),
            .s_axis_cq_tkeep(s_axis_cq_tkeep),
            .s_axis_cq_tvalid(s_axis_cq_tvalid),
            .s_axis_cq_tready(s_axis_cq_tready),
            .s_axis_cq_tlast(s_axis_cq_tlast),
            .s_axis_cq_tuser(s_axis_cq_tuser),
            .m_axis_cq_tdata(cq_tdata),
            .m_axis_cq_tkeep(cq_tkeep),
            .m_axis_cq_tlast(cq_tlast),
            .m_axis_cq_tuser(cq_tuser),
            .m_axis_cq_tvalid(cq_tvalid),
            .m_axis_cq_tready(cq_tready)
        );

        assign rg_cq_tdata = cq_tdata;
        assign rg_cq_tkeep = cq_tkeep;
        assign rg_cq_tvalid = cq_tvalid[0];
        assign rg_cq_tlast = cq_tlast;
        assign rg_cq_tuser = cq_tuser;
        assign cq_tready[0] = rg_cq_tready;

        pevb_axib #(
            .AXIS_PCIE_DATA_WIDTH(DW),
            .AXIS_PCIE_KEEP_WIDTH(KEEP),
            .AXIS_PCIE_CQ_USER_WIDTH(AXIS_PCIE_CQ_USER_WIDTH),
            .AXIS_PCIE_CC_USER_WIDTH(AXIS_PCIE_CC_USER_WIDTH),
            .AXI_ADDR_WIDTH(AXI_ADDR_WIDTH),
            .AXI_ID_WIDTH(AXI_ID_WIDTH),
            .BAR_ADDR_WIDTH(AXIB_BAR_ADDR_WIDTH),
            .AXI_BASE(AXIB_AXI_BASE)
        ) axib_inst (
            .clk(clk),
            .rst(rst),
            .s_axis_cq_tdata(cq_tdata),
            .s_axis_cq_tkeep(cq_tkeep),
            .s_axis_cq_tvalid(cq_tvalid[1]),
            .s_axis_cq_tready(cq_tready[1]),
            .s_axis_cq_tlast(cq_tlast),
            .s_axis_cq_tuser(cq_tuser),
            .m_axis_cc_tdata(cc_tdata),
            .m_axis_cc_tkeep(cc_tkeep),
            .m_axis_cc_tvalid(cc_tvalid),
            .m_axis_cc_tready(cc_tready),
            .m_axis_cc_tlast(cc_tlast),
            .m_axis_cc_tuser(cc_tuser),
`include "pevb_axib_map.vh"
            .cfg_max_payload(cfg_max_payload)
        );

        pevb_cc_mux #(
            .AXIS_PCIE_DATA_WIDTH(DW),
            .AXIS_PCIE_KEEP_WIDTH(KEEP),
            .AXIS_PCIE_CC_USER_WIDTH(AXIS_PCIE_CC_USER_WIDTH)
        ) mux_inst (
            .clk(clk),
            .rst(rst),
            .s_axis_cc_tdata({cc_tdata, rg_cc_tdata}),
            .s_axis_cc_tkeep({cc_tkeep, rg_cc_tkeep}),
            .s_axis_cc_tvalid({cc_tvalid, rg_cc_tvalid}),
            .s_axis_cc_tready({cc_tready, rg_cc_tready}),
            .s_axis_cc_tlast({cc_tlast, rg_cc_tlast}),
            .s_axis_cc_tuser({cc_tuser, rg_cc_tuser}),
            .m_axis_cc_tdata(m_axis_cc_tdata),
            .m_axis_cc_tkeep(m_axis_cc_tkeep),
            .m_axis_cc_tvalid(m_axis_cc_tvalid),
            .m_axis_cc_tready(m_axis_cc_tready),
            .m_axis_cc_tlast(m_axis_cc_tlast),
            .m_axis_cc_tuser(m_axis_cc_tuser)
        );
    end else begin : no_axib
        assign rg_cq_tdata = s_axis_cq_tdata;
        assign rg_cq_tkeep = s_axis_cq_tkeep;
        assign rg_cq_tvalid = s_axis_cq_tvalid;
        assign rg_cq_tlast = s_axis_cq_tlast;
        assign rg_cq_tuser = s_axis_cq_tuser;
        assign s_axis_cq_tready = rg_cq_tready;
        assign m_axis_cc_tdata = rg_cc_tdata;
        assign m_axis_cc_tkeep = rg_cc_tkeep;
        assign m_axis_cc_tvalid = rg_cc_tvalid;
        assign rg_cc_tready = m_axis_cc_tready;
        assign m_axis_cc_tlast = rg_cc_tlast;
        assign m_axis_cc_tuser = rg_cc_tuser;

        assign m_axib_awid = {AXI_ID_WIDTH{1'b0}};
        assign m_axib_awaddr = {AXI_ADDR_WIDTH{1'b0}};
        assign m_axib_awlen = 8'd0;
        assign m_axib_awsize = 3'd0;
        assign m_axib_awburst = 2'd0;
        assign m_axib_awlock = 1'b0;
        assign m_axib_awcache = 4'd0;
        assign m_axib_awprot = 3'd0;
        assign m_axib_awvalid = 1'b0;
        assign m_axib_wdata = {DW{1'b0}};
        assign m_axib_wstrb = {DW/8{1'b0}};
        assign m_axib_wlast = 1'b0;
        assign m_axib_wvalid = 1'b0;
        assign m_axib_bready = 1'b0;
        assign m_axib_arid = {AXI_ID_WIDTH{1'b0}};
        assign m_axib_araddr = {AXI_ADDR_WIDTH{1'b0}};
        assign m_axib_arlen = 8'd0;
        assign m_axib_arsize = 3'd0;
        assign m_axib_arburst = 2'd0;
        assign m_axib_arlock = 1'b0;
        assign m_axib_arcache = 4'd0;
        assign m_axib_arprot = 3'd0;
        assign m_axib_arvalid = 1'b0;
        assign m_axib_rready = 1'b0;
        wire unused_axib = ^{m_axib_awready, m_axib_wready, m_axib_bid, m_axib_bresp,
                             m_axib_bvalid, m_axib_arready, m_axib_rid, m_axib_rdata,
                             m_axib_rresp, m_axib_rlast, m_axib_rvalid, cfg_max_payload};
    end
endgenerate

pevb_cq_cc #(
    .AXIS_PCIE_DATA_WIDTH(DW),
    .AXIS_PCIE_KEEP_WIDTH(KEEP),
    .AXIS_PCIE_CQ_USER_WIDTH(AXIS_PCIE_CQ_USER_WIDTH),
    .AXIS_PCIE_CC_USER_WIDTH(AXIS_PCIE_CC_USER_WIDTH),
    .BAR_USER(BAR_USER),
    .BAR_DMA(BAR_DMA)
) cq_cc_inst (
    .clk(clk),
    .rst(rst),
    .s_axis_cq_tdata(rg_cq_tdata),
    .s_axis_cq_tkeep(rg_cq_tkeep),
    .s_axis_cq_tvalid(rg_cq_tvalid),
    .s_axis_cq_tready(rg_cq_tready),
    .s_axis_cq_tlast(rg_cq_tlast),
    .s_axis_cq_tuser(rg_cq_tuser),
    .m_axis_cc_tdata(rg_cc_tdata),
    .m_axis_cc_tkeep(rg_cc_tkeep),
    .m_axis_cc_tvalid(rg_cc_tvalid),
    .m_axis_cc_tready(rg_cc_tready),
    .m_axis_cc_tlast(rg_cc_tlast),
    .m_axis_cc_tuser(rg_cc_tuser),
    .reg_req_valid(reg_req_valid),
    .reg_req_we(reg_req_we),
    .reg_req_bar(reg_req_bar),
    .reg_req_addr(reg_req_addr),
    .reg_req_wdata(reg_req_wdata),
    .reg_req_be(reg_req_be),
    .reg_ack(reg_ack),
    .reg_rd_data(reg_rd_data)
);

pevb_axil_master #(
    .BAR_ADDR_WIDTH(`PEVB_BAR_USER_ADDR_WIDTH)
) axil_inst (
    .clk(clk),
    .rst(rst),
    .req_valid(reg_req_valid && !dma_bar),
    .req_we(reg_req_we),
    .req_addr(reg_req_addr[`PEVB_BAR_USER_ADDR_WIDTH-1:0]),
    .req_wdata(reg_req_wdata),
    .req_be(reg_req_be),
    .ack(user_ack),
`include "pevb_axil_master_map.vh"
    .rd_data(user_rd_data)
);

endmodule

`resetall
