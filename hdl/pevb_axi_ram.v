// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * AXI4 block RAM (the card memory behind the engine's AXI4 master, as the AXI
 * BRAM controller on the picoevb board): SIZE bytes at AXI address 0, INCR
 * bursts with write strobes, one beat per cycle on each of the read and the
 * write path, the next burst's address taken while the current one finishes.
 * Beats are full width (AxSIZE is not looked at: a narrow burst would move whole
 * words; the engine issues none).
 * Beats outside the RAM are not stored and answer DECERR (the address decoder
 * of the interconnect in front of it).  Contents start as zero.
 */
module pevb_axi_ram #
(
    // data width in bits
    parameter DATA_WIDTH = 64,
    // address width
    parameter ADDR_WIDTH = 64,
    // ID width
    parameter ID_WIDTH = 4,
    // RAM size in bytes (power of two)
    parameter SIZE = 65536
)
(
    input  wire                     clk,
    input  wire                     rst,

    input  wire [ID_WIDTH-1:0]      s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]    s_axi_awaddr,
    input  wire [7:0]               s_axi_awlen,
    input  wire [2:0]               s_axi_awsize,
    input  wire [1:0]               s_axi_awburst,
    input  wire                     s_axi_awlock,
    input  wire [3:0]               s_axi_awcache,
    input  wire [2:0]               s_axi_awprot,
    input  wire                     s_axi_awvalid,
    output wire                     s_axi_awready,
    input  wire [DATA_WIDTH-1:0]    s_axi_wdata,
    input  wire [DATA_WIDTH/8-1:0]  s_axi_wstrb,
    input  wire                     s_axi_wlast,
    input  wire                     s_axi_wvalid,
    output wire                     s_axi_wready,
    output wire [ID_WIDTH-1:0]      s_axi_bid,
    output wire [1:0]               s_axi_bresp,
    output wire                     s_axi_bvalid,
    input  wire                     s_axi_bready,
    input  wire [ID_WIDTH-1:0]      s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]    s_axi_araddr,
    input  wire [7:0]               s_axi_arlen,
    input  wire [2:0]               s_axi_arsize,
    input  wire [1:0]               s_axi_arburst,
    input  wire                     s_axi_arlock,
    input  wire [3:0]               s_axi_arcache,
    input  wire [2:0]               s_axi_arprot,
    input  wire                     s_axi_arvalid,
    output wire                     s_axi_arready,
    output wire [ID_WIDTH-1:0]      s_axi_rid,
    output wire [DATA_WIDTH-1:0]    s_axi_rdata,
    output wire [1:0]               s_axi_rresp,
    output wire                     s_axi_rlast,
    output wire                     s_axi_rvalid,
    input  wire                     s_axi_rready
);

localparam BYTES = DATA_WIDTH/8;
localparam LOG_BYTES = $clog2(BYTES);
localparam WORDS = SIZE/BYTES;
localparam LOG_WORDS = $clog2(WORDS);
localparam WORD_WIDTH = ADDR_WIDTH - LOG_BYTES;

localparam [1:0] RESP_OKAY = 2'b00;
localparam [1:0] RESP_DECERR = 2'b11;

initial begin
    if (WORDS*BYTES != SIZE || (1 << LOG_WORDS) != WORDS) begin
        $error("Error: SIZE must be a power of two of at least one word (instance %m)");
        $finish;
    end
end

reg [DATA_WIDTH-1:0] mem [0:WORDS-1];

integer w;
initial begin
    for (w = 0; w < WORDS; w = w + 1) begin
        mem[w] = {DATA_WIDTH{1'b0}};
    end
end

// full-width INCR bursts only (what the engine issues); locking, cache and protection
// attributes do not matter to a RAM
// (the write path follows wlast; addresses are taken at word granularity)
wire unused_attr = ^{s_axi_awlen, s_axi_awaddr[LOG_BYTES-1:0], s_axi_araddr[LOG_BYTES-1:0],
                     s_axi_awsize, s_axi_awburst, s_axi_awlock, s_axi_awcache, s_axi_awprot,
                     s_axi_arsize, s_axi_arburst, s_axi_arlock, s_axi_arcache, s_axi_arprot};

/* write path */
reg w_active_reg;
reg [WORD_WIDTH-1:0] w_word_reg;
reg [ID_WIDTH-1:0] w_id_reg;
reg w_err_reg;
reg b_valid_reg;
reg [ID_WIDTH-1:0] b_id_reg;
reg [1:0] b_resp_reg;

wire w_in_ram = w_word_reg[WORD_WIDTH-1:LOG_WORDS] == {(WORD_WIDTH-LOG_WORDS){1'b0}};
assign s_axi_wready = w_active_reg && (!b_valid_reg || s_axi_bready);
wire w_fire = s_axi_wvalid && s_axi_wready;
wire w_end = w_fire && s_axi_wlast;
// the next burst's address is taken as the current one ends
assign s_axi_awready = !w_active_reg || w_end;
wire aw_fire = s_axi_awvalid && s_axi_awready;

assign s_axi_bid = b_id_reg;
assign s_axi_bresp = b_resp_reg;
assign s_axi_bvalid = b_valid_reg;

integer n;
// The write side likewise: only a beat, a burst start or a response waiting to be
// taken can change a register.
wire w_wake = rst || w_fire || aw_fire || b_valid_reg;

always @(posedge clk) begin
    if (w_wake) begin
        if (s_axi_bready) begin
            b_valid_reg <= 1'b0;
        end
        if (w_fire) begin
            if (w_in_ram && &s_axi_wstrb) begin
                // a whole word: the byte loop below with every strobe set, in one write (an
                // event-driven simulator otherwise runs the loop for every beat)
                mem[w_word_reg[LOG_WORDS-1:0]] <= s_axi_wdata;
            end else if (w_in_ram) begin
                for (n = 0; n < BYTES; n = n + 1) begin
                    if (s_axi_wstrb[n]) begin
                        mem[w_word_reg[LOG_WORDS-1:0]][n*8 +: 8] <= s_axi_wdata[n*8 +: 8];
                    end
                end
            end
            w_word_reg <= w_word_reg + 1'b1;
            w_err_reg <= w_err_reg || !w_in_ram;
            if (s_axi_wlast) begin
                w_active_reg <= 1'b0;
                b_valid_reg <= 1'b1;
                b_id_reg <= w_id_reg;
                b_resp_reg <= (w_err_reg || !w_in_ram) ? RESP_DECERR : RESP_OKAY;
            end
        end
        if (aw_fire) begin
            w_active_reg <= 1'b1;
            w_word_reg <= s_axi_awaddr[ADDR_WIDTH-1:LOG_BYTES];
            w_id_reg <= s_axi_awid;
            w_err_reg <= 1'b0;
        end

        if (rst) begin
            w_active_reg <= 1'b0;
            b_valid_reg <= 1'b0;
        end
    end
end

/* read path: a block RAM read with the output register as the R stage */
reg r_active_reg;
reg [WORD_WIDTH-1:0] r_word_reg;
reg [7:0] r_rem_reg;
reg [ID_WIDTH-1:0] r_id_reg;
reg r_valid_reg;
reg [DATA_WIDTH-1:0] r_data_reg;
reg [1:0] r_resp_reg;
reg r_last_reg;
reg [ID_WIDTH-1:0] r_out_id_reg;

wire r_in_ram = r_word_reg[WORD_WIDTH-1:LOG_WORDS] == {(WORD_WIDTH-LOG_WORDS){1'b0}};
wire r_step = r_active_reg && (!r_valid_reg || s_axi_rready);
wire r_step_last = r_step && r_rem_reg == 8'd0;
assign s_axi_arready = !r_active_reg || r_step_last;
wire ar_fire = s_axi_arvalid && s_axi_arready;

assign s_axi_rid = r_out_id_reg;
assign s_axi_rdata = r_data_reg;
assign s_axi_rresp = r_resp_reg;
assign s_axi_rlast = r_last_reg;
assign s_axi_rvalid = r_valid_reg;

// The read side changes nothing while no burst steps or starts and no beat waits to be
// taken (a clock enable): event-driven simulators then skip it on idle cycles.
wire r_wake = rst || r_step || ar_fire || r_valid_reg;

always @(posedge clk) begin
    if (r_wake) begin
        if (s_axi_rready) begin
            r_valid_reg <= 1'b0;
        end
        if (r_step) begin
            r_valid_reg <= 1'b1;
            r_data_reg <= mem[r_word_reg[LOG_WORDS-1:0]];
            r_resp_reg <= r_in_ram ? RESP_OKAY : RESP_DECERR;
            r_last_reg <= r_rem_reg == 8'd0;
            r_out_id_reg <= r_id_reg;
            r_word_reg <= r_word_reg + 1'b1;
            r_rem_reg <= r_rem_reg - 8'd1;
            if (r_rem_reg == 8'd0) begin
                r_active_reg <= 1'b0;
            end
        end
        if (ar_fire) begin
            r_active_reg <= 1'b1;
            r_word_reg <= s_axi_araddr[ADDR_WIDTH-1:LOG_BYTES];
            r_rem_reg <= s_axi_arlen;
            r_id_reg <= s_axi_arid;
        end

        if (rst) begin
            r_active_reg <= 1'b0;
            r_valid_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
