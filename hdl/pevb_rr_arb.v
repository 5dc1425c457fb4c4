// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Round-robin arbiter for N requesters.  The grant goes to the first
 * requester after the one granted last; a grant that is not taken (fire low)
 * holds while its request stays up, so a granted valid/ready handshake keeps
 * its payload until it completes (AXI's rule for a valid that is up).
 */
module pevb_rr_arb #
(
    // number of requesters (1 to 32)
    parameter N = 4,
    // grant index width
    parameter IDX_WIDTH = N > 1 ? $clog2(N) : 1
)
(
    input  wire                 clk,
    input  wire                 rst,

    input  wire [N-1:0]         req,
    // the granted request is taken this cycle
    input  wire                 fire,

    output wire                 grant_valid,
    output wire [IDX_WIDTH-1:0] grant_idx,
    output wire [N-1:0]         grant
);

initial begin
    if (N < 1 || N > 32 || N > (1 << IDX_WIDTH)) begin
        $error("Error: N must be 1 to 32 and fit IDX_WIDTH (instance %m)");
        $finish;
    end
end

// requests padded to a power of two: index arithmetic wraps by itself, and the
// padding never requests
localparam P = 1 << IDX_WIDTH;

wire [P-1:0] reqp;
genvar k;
generate
    for (k = 0; k < P; k = k + 1) begin : pad
        if (k < N) begin : used
            assign reqp[k] = req[k];
        end else begin : unused
            assign reqp[k] = 1'b0;
        end
    end
endgenerate

reg [IDX_WIDTH-1:0] last_reg;
reg hold_reg;
reg [IDX_WIDTH-1:0] hold_idx_reg;

// the first request after last_reg, wrapping around: the requests turned so that bit j
// is requester last_reg + 1 + j, the lowest of those bits, and its index (continuous
// logic: no procedural loop for an event-driven simulator to run on each request change)
function [P-1:0] index_bit_mask;  // the indices 0 to P-1 that have bit b set
    input integer b;
    integer n;
    begin
        for (n = 0; n < P; n = n + 1) begin
            index_bit_mask[n] = ((n >> b) & 1) == 1;
        end
    end
endfunction

wire [2*P-1:0] req_twice = {reqp, reqp};
wire [IDX_WIDTH:0] turn = {1'b0, last_reg} + 1'b1;
wire [P-1:0] turned = req_twice[turn +: P];
wire [P-1:0] turned_first = turned & (~turned + 1'b1);
wire [IDX_WIDTH-1:0] first_idx;
genvar b;
generate
    for (b = 0; b < IDX_WIDTH; b = b + 1) begin : enc
        localparam [P-1:0] MASK = index_bit_mask(b);
        assign first_idx[b] = |(turned_first & MASK);
    end
endgenerate
wire pick_found = reqp != {P{1'b0}};
wire [IDX_WIDTH-1:0] pick = pick_found ? last_reg + 1'b1 + first_idx : {IDX_WIDTH{1'b0}};

wire held = hold_reg && reqp[hold_idx_reg];
assign grant_idx = held ? hold_idx_reg : pick;
assign grant_valid = held || pick_found;
wire [P-1:0] grant_p = {{(P-1){1'b0}}, grant_valid} << grant_idx;
assign grant = grant_p[N-1:0];
generate
    if (P > N) begin : pad_grant
        wire unused_grant = ^grant_p[P-1:N];
    end
endgenerate

// The block below changes nothing while no request is granted and the hold state already
// matches (a clock enable): event-driven simulators then skip it on idle cycles.
// The next values as continuous logic, reset included: the block itself then reads three
// signals a cycle while requests are up.
wire [IDX_WIDTH-1:0] last_next = rst ? {IDX_WIDTH{1'b1}} : grant_valid && fire ? grant_idx : last_reg;
wire hold_next = !rst && grant_valid && !fire;
wire [IDX_WIDTH-1:0] hold_idx_next = rst ? {IDX_WIDTH{1'b0}} : grant_idx;
wire wake = rst || grant_valid || hold_reg || hold_idx_reg != grant_idx;

always @(posedge clk) begin
    if (wake) begin
        last_reg <= last_next;
        hold_reg <= hold_next;
        hold_idx_reg <= hold_idx_next;
    end
end

endmodule

`resetall
