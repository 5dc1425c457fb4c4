// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * AXI4 read-channel multiplexer: N read masters (the C2H channels) share one
 * AXI4 master.  Read requests are granted round-robin (a request waiting for
 * arready keeps its grant); each master issues with its own ID, ID n for
 * master n, and read data is routed back by rid, so a slave may return the
 * masters' bursts in any order and interleaved.
 */
module pevb_axi_rd_mux #
(
    // number of read masters (1 to 4)
    parameter N = 1,
    parameter DATA_WIDTH = 64,
    parameter ADDR_WIDTH = 64,
    parameter ID_WIDTH = 4
)
(
    input  wire                         clk,
    input  wire                         rst,

    /* The masters (port n in bits [n*W +: W]); their arid must be n */
    input  wire [N*ID_WIDTH-1:0]        s_axi_arid,
    input  wire [N*ADDR_WIDTH-1:0]      s_axi_araddr,
    input  wire [N*8-1:0]               s_axi_arlen,
    input  wire [N*3-1:0]               s_axi_arsize,
    input  wire [N*2-1:0]               s_axi_arburst,
    input  wire [N-1:0]                 s_axi_arlock,
    input  wire [N*4-1:0]               s_axi_arcache,
    input  wire [N*3-1:0]               s_axi_arprot,
    input  wire [N-1:0]                 s_axi_arvalid,
    output wire [N-1:0]                 s_axi_arready,
    output wire [N*ID_WIDTH-1:0]        s_axi_rid,
    output wire [N*DATA_WIDTH-1:0]      s_axi_rdata,
    output wire [N*2-1:0]               s_axi_rresp,
    output wire [N-1:0]                 s_axi_rlast,
    output wire [N-1:0]                 s_axi_rvalid,
    input  wire [N-1:0]                 s_axi_rready,

    /* The shared master */
    output wire [ID_WIDTH-1:0]          m_axi_arid,
    output wire [ADDR_WIDTH-1:0]        m_axi_araddr,
    output wire [7:0]                   m_axi_arlen,
    output wire [2:0]                   m_axi_arsize,
    output wire [1:0]                   m_axi_arburst,
    output wire                         m_axi_arlock,
    output wire [3:0]                   m_axi_arcache,
    output wire [2:0]                   m_axi_arprot,
    output wire                         m_axi_arvalid,
    input  wire                         m_axi_arready,
    input  wire [ID_WIDTH-1:0]          m_axi_rid,
    input  wire [DATA_WIDTH-1:0]        m_axi_rdata,
    input  wire [1:0]                   m_axi_rresp,
    input  wire                         m_axi_rlast,
    input  wire                         m_axi_rvalid,
    output wire                         m_axi_rready
);

localparam IDX_W = 2;

wire [IDX_W-1:0] ri;

initial begin
    if (N < 1 || N > 4 || ID_WIDTH < IDX_W) begin
        $error("Error: N must be 1 to 4 and ID_WIDTH at least 2 (instance %m)");
        $finish;
    end
end

// the ports padded to four (the grant index selects among four)
localparam P = 4;
wire [P*ID_WIDTH-1:0] arid_p;
wire [P*ADDR_WIDTH-1:0] araddr_p;
wire [P*8-1:0] arlen_p;
wire [P*3-1:0] arsize_p;
wire [P*2-1:0] arburst_p;
wire [P-1:0] arlock_p;
wire [P*4-1:0] arcache_p;
wire [P*3-1:0] arprot_p;
wire [P-1:0] arvalid_p;
wire [P-1:0] rready_p;
wire [P-1:0] grant;

genvar n;
generate
    for (n = 0; n < P; n = n + 1) begin : pad
        if (n < N) begin : used
            assign arid_p[n*ID_WIDTH +: ID_WIDTH] = s_axi_arid[n*ID_WIDTH +: ID_WIDTH];
            assign araddr_p[n*ADDR_WIDTH +: ADDR_WIDTH] = s_axi_araddr[n*ADDR_WIDTH +: ADDR_WIDTH];
            assign arlen_p[n*8 +: 8] = s_axi_arlen[n*8 +: 8];
            assign arsize_p[n*3 +: 3] = s_axi_arsize[n*3 +: 3];
            assign arburst_p[n*2 +: 2] = s_axi_arburst[n*2 +: 2];
            assign arlock_p[n] = s_axi_arlock[n];
            assign arcache_p[n*4 +: 4] = s_axi_arcache[n*4 +: 4];
            assign arprot_p[n*3 +: 3] = s_axi_arprot[n*3 +: 3];
            assign arvalid_p[n] = s_axi_arvalid[n];
            assign rready_p[n] = s_axi_rready[n];
            assign s_axi_arready[n] = grant[n] && m_axi_arready;
            assign s_axi_rid[n*ID_WIDTH +: ID_WIDTH] = m_axi_rid;
            assign s_axi_rdata[n*DATA_WIDTH +: DATA_WIDTH] = m_axi_rdata;
            assign s_axi_rresp[n*2 +: 2] = m_axi_rresp;
            assign s_axi_rlast[n] = m_axi_rlast;
            assign s_axi_rvalid[n] = m_axi_rvalid && ri == n;
        end else begin : none
            // an ID no master issued (a slave bug) is accepted and dropped, never blocks
            assign arid_p[n*ID_WIDTH +: ID_WIDTH] = {ID_WIDTH{1'b0}};
            assign araddr_p[n*ADDR_WIDTH +: ADDR_WIDTH] = {ADDR_WIDTH{1'b0}};
            assign arlen_p[n*8 +: 8] = 8'd0;
            assign arsize_p[n*3 +: 3] = 3'd0;
            assign arburst_p[n*2 +: 2] = 2'd0;
            assign arlock_p[n] = 1'b0;
            assign arcache_p[n*4 +: 4] = 4'd0;
            assign arprot_p[n*3 +: 3] = 3'd0;
            assign arvalid_p[n] = 1'b0;
            assign rready_p[n] = 1'b1;
            wire unused_grant = grant[n];
        end
    end
endgenerate

wire grant_valid;
wire [IDX_W-1:0] gi;

pevb_rr_arb #(
    .N(P),
    .IDX_WIDTH(IDX_W)
) ar_arb_inst (
    .clk(clk),
    .rst(rst),
    .req(arvalid_p),
    .fire(m_axi_arvalid && m_axi_arready),
    .grant_valid(grant_valid),
    .grant_idx(gi),
    .grant(grant)
);

assign m_axi_arid = arid_p[gi*ID_WIDTH +: ID_WIDTH];
assign m_axi_araddr = araddr_p[gi*ADDR_WIDTH +: ADDR_WIDTH];
assign m_axi_arlen = arlen_p[gi*8 +: 8];
assign m_axi_arsize = arsize_p[gi*3 +: 3];
assign m_axi_arburst = arburst_p[gi*2 +: 2];
assign m_axi_arlock = arlock_p[gi];
assign m_axi_arcache = arcache_p[gi*4 +: 4];
assign m_axi_arprot = arprot_p[gi*3 +: 3];
assign m_axi_arvalid = grant_valid;

// read data goes back to the master its ID names (ready only with valid, so that
// it never follows an ID the slave has not driven yet)
assign ri = m_axi_rid[IDX_W-1:0];
assign m_axi_rready = m_axi_rvalid && rready_p[ri];

endmodule

`resetall
