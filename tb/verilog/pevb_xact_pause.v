// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * SIMULATION ONLY.  The stall maker of a hard-IP transactor stream: the testbench's
 * stream stalls (cocotbext-pcie's pause and pause generators) played per clock in
 * the simulator, so Python is not woken every cycle to say "pause" or "go".
 *
 * paused is high while the model's pause is set, and in the cycles the pause pattern
 * marks: bit n of pat (mod its length) marks the n-th rising edge after the pattern
 * started (the edge a pause generator's n-th value is in force on).  A pattern starts
 * when pat_on is high and pat_gen differs from the last one seen: the model moves
 * pat_gen for each new pattern.  The model rewrites the half of pat that has played
 * while the other half plays; pat_half is the half playing after this edge.
 */
module pevb_xact_pause #
(
    parameter PAT_ADDR_WIDTH = 9
)
(
    input  wire clk,
    output wire paused
);

/* verilator lint_off UNDRIVEN */
// written by the model through VPI
reg                          pause;
reg                          pat_on;
reg [7:0]                    pat_gen;
reg [(1 << PAT_ADDR_WIDTH)-1:0] pat;
/* verilator lint_on UNDRIVEN */

/* verilator lint_off UNUSEDSIGNAL */
// read by the model
reg [PAT_ADDR_WIDTH-1:0]     pat_idx;
reg                          pat_half;
reg [7:0]                    pat_gen_seen;
/* verilator lint_on UNUSEDSIGNAL */

// the bit for this edge: the first of a new pattern, or the next of this one
wire [PAT_ADDR_WIDTH-1:0] pat_cur = pat_gen != pat_gen_seen ? {PAT_ADDR_WIDTH{1'b0}} : pat_idx;
wire [PAT_ADDR_WIDTH-1:0] pat_next = pat_cur + 1'b1;

assign paused = pause || (pat_on && pat[pat_cur]);

initial begin
    pause = 1'b0;
    pat_on = 1'b0;
    pat_gen = 0;
    pat_gen_seen = 0;
    pat = 0;
    pat_idx = 0;
    pat_half = 1'b0;
end

always @(posedge clk) begin
    if (pat_on) begin
        pat_gen_seen <= pat_gen;
        pat_idx <= pat_next;
        pat_half <= pat_next[PAT_ADDR_WIDTH-1];
    end
end

endmodule

`resetall
