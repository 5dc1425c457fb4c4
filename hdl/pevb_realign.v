// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Byte realignment of one job at a time between two beat streams of the same
 * width.  A job moves a run of bytes that starts at lane IN_OFS of its first
 * input beat to lane OUT_OFS of its first output beat; it takes ceil((IN_OFS +
 * n) / BYTES) input beats and gives ceil((OUT_OFS + n) / BYTES) output beats.
 * The caller passes the lane difference OUT_OFS - IN_OFS (mod BYTES, with the
 * sign separately) and both beat counts.  One input beat is consumed and one
 * output beat given per cycle where the job needs them, so back-to-back jobs
 * run without idle cycles.  Lanes of an output beat outside the job's bytes
 * carry don't-care data (the consumer masks them with strobes or byte
 * enables).
 */
module pevb_realign #
(
    // beat width in bits
    parameter DATA_WIDTH = 64,
    // beat count width
    parameter COUNT_WIDTH = 11
)
(
    input  wire                            clk,
    input  wire                            rst,

    /* Job: shift = OUT_OFS - IN_OFS (mod lanes), shift_neg = OUT_OFS < IN_OFS */
    input  wire                            job_valid,
    output wire                            job_done,
    input  wire [$clog2(DATA_WIDTH/8)-1:0] job_shift,
    input  wire                            job_shift_neg,
    input  wire [COUNT_WIDTH-1:0]          job_in_beats,
    input  wire [COUNT_WIDTH-1:0]          job_out_beats,

    /* Input beats */
    input  wire [DATA_WIDTH-1:0]           s_data,
    input  wire                            s_valid,
    output wire                            s_ready,

    /* Output beats (first/last: of the job) */
    output wire [DATA_WIDTH-1:0]           m_data,
    output wire                            m_first,
    output wire                            m_last,
    output wire                            m_valid,
    input  wire                            m_ready
);

localparam BYTES = DATA_WIDTH/8;
localparam LOG_BYTES = $clog2(BYTES);

reg [COUNT_WIDTH-1:0] in_cnt_reg;
reg [COUNT_WIDTH-1:0] out_cnt_reg;
reg [DATA_WIDTH-1:0] prev_reg;

// a negative shift first loads input beat 0 (its high lanes feed output beat 0)
wire prime = job_shift_neg && in_cnt_reg == {COUNT_WIDTH{1'b0}};
wire take_in = in_cnt_reg != job_in_beats;
wire emit = !prime;

wire fire = job_valid && (!take_in || s_valid) && (!emit || m_ready);

// output beat = bytes [BYTES - shift, 2*BYTES - shift) of {current input, previous input}
wire [DATA_WIDTH-1:0] cur = take_in ? s_data : {DATA_WIDTH{1'b0}};
wire [2*DATA_WIDTH-1:0] pair = {cur, prev_reg};
wire [LOG_BYTES:0] pick = {1'b1, {LOG_BYTES{1'b0}}} - {1'b0, job_shift};
assign m_data = pair[{pick, 3'b000} +: DATA_WIDTH];
assign m_first = out_cnt_reg == {COUNT_WIDTH{1'b0}};
assign m_last = out_cnt_reg == job_out_beats - 1'b1;
assign m_valid = job_valid && emit && (!take_in || s_valid);
assign s_ready = job_valid && take_in && (!emit || m_ready);
assign job_done = fire && emit && m_last;

always @(posedge clk) begin
    if (fire) begin
        if (take_in) begin
            prev_reg <= s_data;
            in_cnt_reg <= in_cnt_reg + 1'b1;
        end
        if (emit) begin
            out_cnt_reg <= out_cnt_reg + 1'b1;
        end
        if (job_done) begin
            in_cnt_reg <= {COUNT_WIDTH{1'b0}};
            out_cnt_reg <= {COUNT_WIDTH{1'b0}};
        end
    end

    if (rst) begin
        in_cnt_reg <= {COUNT_WIDTH{1'b0}};
        out_cnt_reg <= {COUNT_WIDTH{1'b0}};
        prev_reg <= {DATA_WIDTH{1'b0}};
    end
end

endmodule

`resetall
