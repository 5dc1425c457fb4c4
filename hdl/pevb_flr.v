// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Function-level reset (PG213's cfg_flr_in_process / cfg_flr_done) for the
 * engine.  When the hard IP starts an FLR, each of the four hard-IP streams
 * is held at its next packet boundary (never inside a TLP: an input stream by
 * dropping tready, an output stream by hiding tvalid before a beat is shown to
 * the hard IP; the inputs first, then the outputs); with all four held, func_reset resets the engine and its user
 * side for RESET_CYCLES cycles; then the streams are released and cfg_flr_done
 * pulses for one cycle.  Completions of requests made before the reset reach
 * the engine afterwards and match no tag of its.  The hard IP's user_reset
 * resets everything at once, as before.
 *
 * soft_reset (XDMA's dma_bridge_resetn, inverted) takes the same path without
 * the hard IP: the streams held at packet boundaries, then func_reset for as
 * long as soft_reset stays high (RESET_CYCLES at least), then the streams
 * released; no cfg_flr_done.  The link and the configuration space stay as
 * they are, and so do the hard IP's requests in flight (soft_func_reset tells the
 * engine, which keeps their tags out of use until each has ended).
 */
module pevb_flr #
(
    // cycles func_reset stays high (at least 2)
    parameter RESET_CYCLES = 16
)
(
    input  wire        clk,
    input  wire        user_reset,

    /* the hard IP's FLR interface (function 0; the engine has one function) */
    input  wire [3:0]  cfg_flr_in_process,
    output wire [3:0]  cfg_flr_done,

    /* a reset of the engine alone, the link kept up (high: reset) */
    input  wire        soft_reset,

    /* the four streams at the hard-IP side: valid, ready, last */
    input  wire        rq_tvalid,
    input  wire        rq_tready,
    input  wire        rq_tlast,
    input  wire        cc_tvalid,
    input  wire        cc_tready,
    input  wire        cc_tlast,
    input  wire        rc_tvalid,
    input  wire        rc_tready,
    input  wire        rc_tlast,
    input  wire        cq_tvalid,
    input  wire        cq_tready,
    input  wire        cq_tlast,

    /* hold each stream (gated by the caller), reset the function */
    output wire        rq_hold,
    output wire        cc_hold,
    output wire        rc_hold,
    output wire        cq_hold,
    output wire        func_reset,
    // func_reset is a soft one: the hard IP still tracks the engine's requests in flight
    output wire        soft_func_reset
);

initial begin
    if (RESET_CYCLES < 2 || RESET_CYCLES > 255) begin
        $error("Error: RESET_CYCLES must be 2 to 255 (instance %m)");
        $finish;
    end
end

localparam [1:0] ST_IDLE = 2'd0;
localparam [1:0] ST_HOLD = 2'd1;
localparam [1:0] ST_RESET = 2'd2;
localparam [1:0] ST_DONE = 2'd3;

reg [1:0] state_reg;
reg flr_in_reg;
reg [3:0] pkt_reg;   // inside a TLP: rq, cc, rc, cq
reg [3:0] hold_reg;
reg [7:0] count_reg;
reg rst_reg;
reg done_reg;
// the reset under way is a soft one (no cfg_flr_done; held while soft_reset is)
reg soft_reg;

wire [3:0] valid = {cq_tvalid, rc_tvalid, cc_tvalid, rq_tvalid};
wire [3:0] ready = {cq_tready, rc_tready, cc_tready, rq_tready};
wire [3:0] last = {cq_tlast, rc_tlast, cc_tlast, rq_tlast};
wire [3:0] beat = valid & ready;
// inside a TLP after this cycle's beat
wire [3:0] pkt_next = (pkt_reg & ~(beat & last)) | (beat & ~last);
// output streams: no beat waiting for the hard IP (it saw tvalid; hiding it now would
// withdraw a beat shown to it)
wire [3:0] shown = {2'b00, cc_tvalid & ~cc_tready, rq_tvalid & ~rq_tready};
wire [3:0] boundary = ~pkt_next & ~shown;
// the input streams (CQ, RC) are held first, the outputs (CC, RQ) only once both inputs
// are: the engine may take a request's last beat only after it sent something (a read
// of the bypass BAR answered on CC while the next request arrives), and holding an
// output first would leave that input inside its TLP for good
wire [3:0] may_hold = (hold_reg[3] && hold_reg[2]) ? 4'hf : 4'b1100;

// functions 1-3 do not exist
wire unused_flr = ^cfg_flr_in_process[3:1];

assign rq_hold = hold_reg[0];
assign cc_hold = hold_reg[1];
assign rc_hold = hold_reg[2];
assign cq_hold = hold_reg[3];
assign func_reset = user_reset || rst_reg;
assign soft_func_reset = rst_reg && soft_reg && !user_reset;
assign cfg_flr_done = {3'b000, done_reg};

// The block below changes nothing while idle with no reset requested, the request
// input and the packet boundaries already registered and no done pulse (a clock
// enable): event-driven simulators then skip it on idle cycles.
wire wake = user_reset || state_reg != ST_IDLE || soft_reset || done_reg ||
            cfg_flr_in_process[0] != flr_in_reg || pkt_reg != pkt_next;

always @(posedge clk) begin
    if (wake) begin
        flr_in_reg <= cfg_flr_in_process[0];
        pkt_reg <= pkt_next;
        done_reg <= 1'b0;
        case (state_reg)
            ST_IDLE: begin
                if (cfg_flr_in_process[0] && !flr_in_reg) begin
                    state_reg <= ST_HOLD;
                    soft_reg <= 1'b0;
                end else if (soft_reset) begin
                    state_reg <= ST_HOLD;
                    soft_reg <= 1'b1;
                end
            end
            ST_HOLD: begin
                hold_reg <= hold_reg | (boundary & may_hold);
                if ((hold_reg | (boundary & may_hold)) == 4'hf) begin
                    state_reg <= ST_RESET;
                    rst_reg <= 1'b1;
                    count_reg <= RESET_CYCLES[7:0] - 8'd1;
                end
            end
            ST_RESET: begin
                if (count_reg != 8'd0) begin
                    count_reg <= count_reg - 8'd1;
                end
                if (count_reg == 8'd0 && !(soft_reg && soft_reset)) begin
                    state_reg <= ST_DONE;
                    rst_reg <= 1'b0;
                end
            end
            default: begin
                // one cycle out of reset before the streams open and the core is told
                state_reg <= ST_IDLE;
                hold_reg <= 4'h0;
                done_reg <= !soft_reg;
            end
        endcase
        if (user_reset) begin
            state_reg <= ST_IDLE;
            flr_in_reg <= 1'b0;
            pkt_reg <= 4'h0;
            hold_reg <= 4'h0;
            count_reg <= 8'd0;
            rst_reg <= 1'b0;
            done_reg <= 1'b0;
            soft_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
