// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * XDMA's AXI4-Lite slave (PG195, s_axil_*): user logic reads and writes the
 * DMA registers, the same register space the host reaches through the DMA
 * BAR.  Each 32-bit access becomes one register request (req_*, held until
 * req_ack; the register file answers in the cycle it takes it, read data
 * with the ack).  Writes go before reads when both wait.  An address outside
 * the register space (any bit above ADDR_WIDTH) reaches no register and is
 * answered DECERR (reads return 0).
 */
module pevb_axil_slave #
(
    // register space address width (bytes)
    parameter ADDR_WIDTH = 16
)
(
    input  wire                  clk,
    input  wire                  rst,

    /* AXI4-Lite slave */
    input  wire [31:0]           s_axil_awaddr,
    input  wire [2:0]            s_axil_awprot,
    input  wire                  s_axil_awvalid,
    output wire                  s_axil_awready,
    input  wire [31:0]           s_axil_wdata,
    input  wire [3:0]            s_axil_wstrb,
    input  wire                  s_axil_wvalid,
    output wire                  s_axil_wready,
    output wire                  s_axil_bvalid,
    output wire [1:0]            s_axil_bresp,
    input  wire                  s_axil_bready,
    input  wire [31:0]           s_axil_araddr,
    input  wire [2:0]            s_axil_arprot,
    input  wire                  s_axil_arvalid,
    output wire                  s_axil_arready,
    output wire [31:0]           s_axil_rdata,
    output wire [1:0]            s_axil_rresp,
    output wire                  s_axil_rvalid,
    input  wire                  s_axil_rready,

    /* Register request */
    output wire                  req_valid,
    output wire                  req_we,
    output wire [ADDR_WIDTH-1:0] req_addr,
    output wire [31:0]           req_wdata,
    output wire [3:0]            req_be,
    input  wire                  req_ack,
    input  wire [31:0]           rd_data
);

localparam [1:0] RESP_OKAY = 2'b00, RESP_DECERR = 2'b11;

reg aw_full_reg, w_full_reg, ar_full_reg;
reg [31:0] aw_addr_reg, ar_addr_reg;
reg [31:0] w_data_reg;
reg [3:0] w_strb_reg;
reg b_valid_reg, r_valid_reg;
reg [1:0] b_resp_reg, r_resp_reg;
reg [31:0] r_data_reg;

assign s_axil_awready = !aw_full_reg;
assign s_axil_wready = !w_full_reg;
assign s_axil_arready = !ar_full_reg;
assign s_axil_bvalid = b_valid_reg;
assign s_axil_bresp = b_resp_reg;
assign s_axil_rvalid = r_valid_reg;
assign s_axil_rdata = r_data_reg;
assign s_axil_rresp = r_resp_reg;

// an access waiting for the register file, and whether it decodes to a register
wire wr_wait = aw_full_reg && w_full_reg && !b_valid_reg;
wire rd_wait = ar_full_reg && !r_valid_reg && !wr_wait;
wire wr_hit = aw_addr_reg[31:ADDR_WIDTH] == {(32-ADDR_WIDTH){1'b0}};
wire rd_hit = ar_addr_reg[31:ADDR_WIDTH] == {(32-ADDR_WIDTH){1'b0}};
assign req_valid = (wr_wait && wr_hit) || (rd_wait && rd_hit);
assign req_we = wr_wait;
assign req_addr = wr_wait ? aw_addr_reg[ADDR_WIDTH-1:0] : ar_addr_reg[ADDR_WIDTH-1:0];
assign req_wdata = w_data_reg;
assign req_be = w_strb_reg;
// the register file takes the access, or nothing decodes it: the response goes out
wire wr_done = wr_wait && (!wr_hit || req_ack);
wire rd_done = rd_wait && (!rd_hit || req_ack);

// protection types are not used (PG195)
wire unused_prot = ^{s_axil_awprot, s_axil_arprot};

// Every register update below needs one of these (a clock enable): event-driven simulators
// skip the block on idle cycles.
wire wake = rst || (s_axil_awvalid && s_axil_awready) || (s_axil_wvalid && s_axil_wready) ||
            (s_axil_arvalid && s_axil_arready) || wr_done || rd_done ||
            (s_axil_bvalid && s_axil_bready) || (s_axil_rvalid && s_axil_rready);

always @(posedge clk) begin
    if (wake) begin
        if (s_axil_awvalid && s_axil_awready) begin
            aw_full_reg <= 1'b1;
            aw_addr_reg <= s_axil_awaddr;
        end
        if (s_axil_wvalid && s_axil_wready) begin
            w_full_reg <= 1'b1;
            w_data_reg <= s_axil_wdata;
            w_strb_reg <= s_axil_wstrb;
        end
        if (s_axil_arvalid && s_axil_arready) begin
            ar_full_reg <= 1'b1;
            ar_addr_reg <= s_axil_araddr;
        end
        if (wr_done) begin
            aw_full_reg <= 1'b0;
            w_full_reg <= 1'b0;
            b_valid_reg <= 1'b1;
            b_resp_reg <= wr_hit ? RESP_OKAY : RESP_DECERR;
        end
        if (rd_done) begin
            ar_full_reg <= 1'b0;
            r_valid_reg <= 1'b1;
            r_data_reg <= rd_hit ? rd_data : 32'd0;
            r_resp_reg <= rd_hit ? RESP_OKAY : RESP_DECERR;
        end
        if (s_axil_bvalid && s_axil_bready) begin
            b_valid_reg <= 1'b0;
        end
        if (s_axil_rvalid && s_axil_rready) begin
            r_valid_reg <= 1'b0;
        end
        if (rst) begin
            aw_full_reg <= 1'b0;
            w_full_reg <= 1'b0;
            ar_full_reg <= 1'b0;
            b_valid_reg <= 1'b0;
            r_valid_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
