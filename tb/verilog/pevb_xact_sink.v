// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * SIMULATION ONLY.  The RTL-to-model half of the hard-IP transactor (RQ, CC): the
 * RTL's beats are collected in a buffer, and the testbench's hard-IP model is told
 * once per complete TLP.
 *
 * On each rising edge with tvalid and tready the beat is stored (one word: {tlast,
 * tkeep, tuser, tdata}) at wr_ptr; a beat with tlast counts into frames, the value the
 * model awaits a change of.  The model reads the words from its own read index up to
 * wr_ptr and moves rd_ptr past them.  tready follows on each edge what cocotbext-pcie's
 * sink drives there: low while the model's queue is full (hold) or the stream is
 * paused (pevb_xact_pause), and while the buffer has no room; low in reset.
 */
module pevb_xact_sink #
(
    parameter DATA_WIDTH = 64,
    parameter KEEP_WIDTH = DATA_WIDTH/32,
    parameter USER_WIDTH = 62,
    parameter ADDR_WIDTH = 11,
    parameter PAT_ADDR_WIDTH = 9
)
(
    input  wire                   clk,
    input  wire                   rst,

    input  wire [DATA_WIDTH-1:0]  tdata,
    input  wire [KEEP_WIDTH-1:0]  tkeep,
    input  wire                   tlast,
    input  wire [USER_WIDTH-1:0]  tuser,
    input  wire                   tvalid,
    output reg                    tready
);

localparam WORD_WIDTH = 1 + KEEP_WIDTH + USER_WIDTH + DATA_WIDTH;

/* verilator lint_off UNDRIVEN */
// written by the model through VPI
reg [ADDR_WIDTH:0]     rd_ptr;
reg                    hold;
/* verilator lint_on UNDRIVEN */

/* verilator lint_off UNUSEDSIGNAL */
// read by the model
reg [WORD_WIDTH-1:0]   mem [0:(1 << ADDR_WIDTH)-1];
reg [ADDR_WIDTH:0]     wr_ptr;
reg [31:0]             frames;
/* verilator lint_on UNUSEDSIGNAL */

wire paused;
wire take = tvalid && tready;
// room for this beat and the next: tready for the next edge is decided on this one
wire [ADDR_WIDTH:0] used = wr_ptr - rd_ptr + {{ADDR_WIDTH{1'b0}}, take};
wire room = used < (1 << ADDR_WIDTH);

pevb_xact_pause #(
    .PAT_ADDR_WIDTH(PAT_ADDR_WIDTH)
)
pause_inst (
    .clk(clk),
    .paused(paused)
);

initial begin
    rd_ptr = 0;
    wr_ptr = 0;
    frames = 0;
    hold = 1'b0;
    tready = 1'b0;
end

// the block below changes nothing with no beat taken and tready already as it would
// be set: the simulator then skips it on idle edges
wire ready_next = !hold && !paused && room;
wire active = rst || take || tready != ready_next;

always @(posedge clk) begin
    if (active) begin
        if (rst) begin
            tready <= 1'b0;
        end else begin
            if (take) begin
                mem[wr_ptr[ADDR_WIDTH-1:0]] <= {tlast, tkeep, tuser, tdata};
                wr_ptr <= wr_ptr + 1'b1;
                if (tlast) begin
                    frames <= frames + 1'b1;
                end
            end
            tready <= ready_next;
        end
    end
end

endmodule

`resetall
