// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * SIMULATION ONLY.  The model-to-RTL half of the hard-IP transactor (CQ, RC): a
 * buffer of beats the testbench's hard-IP model fills once per TLP, played to the
 * RTL at one beat per clock.
 *
 * The model writes whole beats into mem (one word: {tlast, tkeep, tuser, tdata}) at
 * index wr_ptr and on, then moves wr_ptr past them; it never writes a word between
 * rd_ptr and wr_ptr again.  On each rising edge where the bus is free (tvalid low, or
 * the RTL took the beat on it), the next beat is put on the bus, unless the buffer is
 * empty or the model pauses the stream (pevb_xact_pause).  These are the edges cocotbext-pcie's source drives a beat on.  In reset
 * tvalid is low and nothing is taken.
 *
 * flush_ptr: when the model moves it, the buffer drops every
 * beat not yet on the bus (rd_ptr jumps to wr_ptr), as a link going down loses them.
 *
 * The model reads rd_ptr to know which beats have gone.  To wait until rd_ptr reaches
 * a point, it sets wake_ptr there, moves wake_req, and awaits a change of wake_ack:
 * on the first edge where the request is open and rd_ptr (as that edge leaves it) has
 * reached wake_ptr, wake_ack takes wake_req.  A request made in the time step of the
 * very edge that reaches the point is answered on the next edge.
 */
module pevb_xact_source #
(
    parameter DATA_WIDTH = 64,
    parameter KEEP_WIDTH = DATA_WIDTH/32,
    parameter USER_WIDTH = 88,
    parameter ADDR_WIDTH = 11,
    parameter PAT_ADDR_WIDTH = 9
)
(
    input  wire                   clk,
    input  wire                   rst,

    output reg  [DATA_WIDTH-1:0]  tdata,
    output reg  [KEEP_WIDTH-1:0]  tkeep,
    output reg                    tlast,
    output reg  [USER_WIDTH-1:0]  tuser,
    output reg                    tvalid,
    input  wire                   tready
);

localparam WORD_WIDTH = 1 + KEEP_WIDTH + USER_WIDTH + DATA_WIDTH;

/* verilator lint_off UNDRIVEN */
// written by the model through VPI
reg [WORD_WIDTH-1:0]   mem [0:(1 << ADDR_WIDTH)-1];
reg [ADDR_WIDTH:0]     wr_ptr;
reg [ADDR_WIDTH:0]     flush_ptr;
reg [ADDR_WIDTH:0]     wake_ptr;
reg [7:0]              wake_req;
/* verilator lint_on UNDRIVEN */

/* verilator lint_off UNUSEDSIGNAL */
// read by the model
reg [ADDR_WIDTH:0]     rd_ptr;
reg [ADDR_WIDTH:0]     flush_seen;
reg [7:0]              wake_ack;
/* verilator lint_on UNUSEDSIGNAL */

wire paused;
wire empty = rd_ptr == wr_ptr;
wire [WORD_WIDTH-1:0] head = mem[rd_ptr[ADDR_WIDTH-1:0]];
wire flushing = flush_ptr != flush_seen;
wire load = !flushing && !rst && (!tvalid || tready) && !empty && !paused;
wire [ADDR_WIDTH:0] rd_after = flushing ? wr_ptr : load ? rd_ptr + 1'b1 : rd_ptr;
// rd_ptr at or past wake_ptr: the model asks for a point at most a buffer ahead
wire [ADDR_WIDTH:0] wake_ahead = rd_after - wake_ptr;
wire wake_reached = !wake_ahead[ADDR_WIDTH];

pevb_xact_pause #(
    .PAT_ADDR_WIDTH(PAT_ADDR_WIDTH)
)
pause_inst (
    .clk(clk),
    .paused(paused)
);

initial begin
    wr_ptr = 0;
    rd_ptr = 0;
    flush_ptr = 0;
    flush_seen = 0;
    wake_ptr = 0;
    wake_req = 0;
    wake_ack = 0;
    tdata = 0;
    tkeep = 0;
    tlast = 1'b0;
    tuser = 0;
    tvalid = 1'b0;
end

// the block below changes nothing with the bus empty, nothing buffered, no flush and
// no wake request open: the simulator then skips it on idle edges
wire active = flushing || rst || tvalid || !empty || wake_req != wake_ack;

always @(posedge clk) begin
    if (active) begin
        if (flushing) begin
            flush_seen <= flush_ptr;
            tvalid <= 1'b0;
        end else if (rst) begin
            tvalid <= 1'b0;
        end else if (!tvalid || tready) begin
            if (load) begin
                {tlast, tkeep, tuser, tdata} <= head;
                tvalid <= 1'b1;
            end else begin
                tvalid <= 1'b0;
            end
        end
        rd_ptr <= rd_after;
        if (wake_req != wake_ack && wake_reached) begin
            wake_ack <= wake_req;
        end
    end
end

endmodule

`resetall
