// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Two AXI4 masters onto one slave, a burst at a time on each of the write and
 * the read path (what an AXI interconnect in front of one block RAM does, at
 * its simplest): the write path grants a master by its AW, passes its W beats
 * up to WLAST and its B, then grants again; the read path grants a master by
 * its AR and passes its R beats up to RLAST.  Both masters' requests wait
 * while the other's burst is under way; when both ask, they take turns.  IDs
 * pass through unchanged (one burst in flight per path).
 */
module mm_axi_arb #
(
    parameter DATA_WIDTH = 64,
    parameter ADDR_WIDTH = 64,
    parameter ID_WIDTH = 4
)
(
    input  wire                       clk,
    input  wire                       rst,

    /* masters 0 and 1: field n of each bus is master n's */
    input  wire [2*ID_WIDTH-1:0]      s_axi_awid,
    input  wire [2*ADDR_WIDTH-1:0]    s_axi_awaddr,
    input  wire [15:0]                s_axi_awlen,
    input  wire [5:0]                 s_axi_awsize,
    input  wire [3:0]                 s_axi_awburst,
    input  wire [1:0]                 s_axi_awvalid,
    output wire [1:0]                 s_axi_awready,
    input  wire [2*DATA_WIDTH-1:0]    s_axi_wdata,
    input  wire [2*DATA_WIDTH/8-1:0]  s_axi_wstrb,
    input  wire [1:0]                 s_axi_wlast,
    input  wire [1:0]                 s_axi_wvalid,
    output wire [1:0]                 s_axi_wready,
    output wire [ID_WIDTH-1:0]        s_axi_bid,
    output wire [1:0]                 s_axi_bresp,
    output wire [1:0]                 s_axi_bvalid,
    input  wire [1:0]                 s_axi_bready,
    input  wire [2*ID_WIDTH-1:0]      s_axi_arid,
    input  wire [2*ADDR_WIDTH-1:0]    s_axi_araddr,
    input  wire [15:0]                s_axi_arlen,
    input  wire [5:0]                 s_axi_arsize,
    input  wire [3:0]                 s_axi_arburst,
    input  wire [1:0]                 s_axi_arvalid,
    output wire [1:0]                 s_axi_arready,
    output wire [ID_WIDTH-1:0]        s_axi_rid,
    output wire [DATA_WIDTH-1:0]      s_axi_rdata,
    output wire [1:0]                 s_axi_rresp,
    output wire                       s_axi_rlast,
    output wire [1:0]                 s_axi_rvalid,
    input  wire [1:0]                 s_axi_rready,

    /* the slave */
    output wire [ID_WIDTH-1:0]        m_axi_awid,
    output wire [ADDR_WIDTH-1:0]      m_axi_awaddr,
    output wire [7:0]                 m_axi_awlen,
    output wire [2:0]                 m_axi_awsize,
    output wire [1:0]                 m_axi_awburst,
    output wire                       m_axi_awvalid,
    input  wire                       m_axi_awready,
    output wire [DATA_WIDTH-1:0]      m_axi_wdata,
    output wire [DATA_WIDTH/8-1:0]    m_axi_wstrb,
    output wire                       m_axi_wlast,
    output wire                       m_axi_wvalid,
    input  wire                       m_axi_wready,
    input  wire [ID_WIDTH-1:0]        m_axi_bid,
    input  wire [1:0]                 m_axi_bresp,
    input  wire                       m_axi_bvalid,
    output wire                       m_axi_bready,
    output wire [ID_WIDTH-1:0]        m_axi_arid,
    output wire [ADDR_WIDTH-1:0]      m_axi_araddr,
    output wire [7:0]                 m_axi_arlen,
    output wire [2:0]                 m_axi_arsize,
    output wire [1:0]                 m_axi_arburst,
    output wire                       m_axi_arvalid,
    input  wire                       m_axi_arready,
    input  wire [ID_WIDTH-1:0]        m_axi_rid,
    input  wire [DATA_WIDTH-1:0]      m_axi_rdata,
    input  wire [1:0]                 m_axi_rresp,
    input  wire                       m_axi_rlast,
    input  wire                       m_axi_rvalid,
    output wire                       m_axi_rready
);

localparam SW = DATA_WIDTH/8;

/* write path: idle, address, data, response */
localparam [1:0] W_IDLE = 2'd0, W_ADDR = 2'd1, W_DATA = 2'd2, W_RESP = 2'd3;
reg [1:0] w_state_reg;
reg w_sel_reg, w_turn_reg;
wire w_pick = s_axi_awvalid[1] && (!s_axi_awvalid[0] || w_turn_reg);
wire ws = w_sel_reg;

assign m_axi_awid = s_axi_awid[ws*ID_WIDTH +: ID_WIDTH];
assign m_axi_awaddr = s_axi_awaddr[ws*ADDR_WIDTH +: ADDR_WIDTH];
assign m_axi_awlen = s_axi_awlen[ws*8 +: 8];
assign m_axi_awsize = s_axi_awsize[ws*3 +: 3];
assign m_axi_awburst = s_axi_awburst[ws*2 +: 2];
assign m_axi_awvalid = w_state_reg == W_ADDR;
assign s_axi_awready = {2{w_state_reg == W_ADDR && m_axi_awready}} & {ws, !ws};
assign m_axi_wdata = s_axi_wdata[ws*DATA_WIDTH +: DATA_WIDTH];
assign m_axi_wstrb = s_axi_wstrb[ws*SW +: SW];
assign m_axi_wlast = s_axi_wlast[ws];
assign m_axi_wvalid = w_state_reg == W_DATA && s_axi_wvalid[ws];
assign s_axi_wready = {2{w_state_reg == W_DATA && m_axi_wready}} & {ws, !ws};
assign s_axi_bid = m_axi_bid;
assign s_axi_bresp = m_axi_bresp;
assign s_axi_bvalid = {2{w_state_reg == W_RESP && m_axi_bvalid}} & {ws, !ws};
assign m_axi_bready = w_state_reg == W_RESP && s_axi_bready[ws];

always @(posedge clk) begin
    case (w_state_reg)
        W_IDLE: begin
            if (|s_axi_awvalid) begin
                w_sel_reg <= w_pick;
                w_turn_reg <= !w_pick;
                w_state_reg <= W_ADDR;
            end
        end
        W_ADDR: if (m_axi_awready) w_state_reg <= W_DATA;
        W_DATA: if (m_axi_wvalid && m_axi_wready && m_axi_wlast) w_state_reg <= W_RESP;
        default: if (m_axi_bvalid && m_axi_bready) w_state_reg <= W_IDLE;
    endcase
    if (rst) begin
        w_state_reg <= W_IDLE;
        w_sel_reg <= 1'b0;
        w_turn_reg <= 1'b0;
    end
end

/* read path: idle, address, data */
localparam [1:0] R_IDLE = 2'd0, R_ADDR = 2'd1, R_DATA = 2'd2;
reg [1:0] r_state_reg;
reg r_sel_reg, r_turn_reg;
wire r_pick = s_axi_arvalid[1] && (!s_axi_arvalid[0] || r_turn_reg);
wire rs = r_sel_reg;

assign m_axi_arid = s_axi_arid[rs*ID_WIDTH +: ID_WIDTH];
assign m_axi_araddr = s_axi_araddr[rs*ADDR_WIDTH +: ADDR_WIDTH];
assign m_axi_arlen = s_axi_arlen[rs*8 +: 8];
assign m_axi_arsize = s_axi_arsize[rs*3 +: 3];
assign m_axi_arburst = s_axi_arburst[rs*2 +: 2];
assign m_axi_arvalid = r_state_reg == R_ADDR;
assign s_axi_arready = {2{r_state_reg == R_ADDR && m_axi_arready}} & {rs, !rs};
assign s_axi_rid = m_axi_rid;
assign s_axi_rdata = m_axi_rdata;
assign s_axi_rresp = m_axi_rresp;
assign s_axi_rlast = m_axi_rlast;
assign s_axi_rvalid = {2{r_state_reg == R_DATA && m_axi_rvalid}} & {rs, !rs};
assign m_axi_rready = r_state_reg == R_DATA && s_axi_rready[rs];

always @(posedge clk) begin
    case (r_state_reg)
        R_IDLE: begin
            if (|s_axi_arvalid) begin
                r_sel_reg <= r_pick;
                r_turn_reg <= !r_pick;
                r_state_reg <= R_ADDR;
            end
        end
        R_ADDR: if (m_axi_arready) r_state_reg <= R_DATA;
        default: if (m_axi_rvalid && m_axi_rready && m_axi_rlast) r_state_reg <= R_IDLE;
    endcase
    if (rst) begin
        r_state_reg <= R_IDLE;
        r_sel_reg <= 1'b0;
        r_turn_reg <= 1'b0;
    end
end

endmodule

`resetall
