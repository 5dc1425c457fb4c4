// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * One H2C channel: its descriptor engine (pevb_desc_eng: the chain's fetch,
 * prefetch buffer, completion count and write-back) feeding its data mover
 * (pevb_h2c_rd: read requests to the host, in-order completion per
 * descriptor), and for a stream channel the ring buffer and AXI4-Stream
 * master (pevb_h2c_stream).  The engine top (pevb_xdma) arbitrates the
 * channels' descriptor fetches, data reads and write-backs and routes the
 * completions back; every port here is the channel's own slice, already
 * selected by channel.
 */
module pevb_h2c_chan #
(
    // PCIe datapath width in bits (the AXI and stream data width)
    parameter DATA_WIDTH = 64,
    // DWORD lanes of the datapath (descriptor buffer write lanes)
    parameter KEEP = DATA_WIDTH/32,
    // card (AXI) address width
    parameter ADDR_WIDTH = 64,
    // descriptor prefetch buffer entries (power of two) and fetches in flight
    parameter DESC_DEPTH = 8,
    parameter DESC_FETCHES = 2,
    // read tags the mover may hold for data at once (1 to 32)
    parameter MAX_TAGS = 32,
    // AXI4-Stream channel (1) or memory-mapped (0)
    parameter STREAM = 0,
    // stream: chunk and ring sizes in bytes (powers of two)
    parameter CHUNK_BYTES = 4096,
    parameter RING_BYTES = 16384,
    // descriptors from the bypass port instead of fetches (0 or 1)
    parameter BYPASS = 0,
    // descriptor buffer index width
    parameter IDX_WIDTH = $clog2(DESC_DEPTH*8)
)
(
    input  wire                      clk,
    input  wire                      rst,

`include "pevb_desc_ports.vh"

    /* poll-mode write-back */
    output wire                      m_wb_valid,
    input  wire                      m_wb_ready,
    output wire [63:0]               m_wb_addr,
    output wire [31:0]               m_wb_data,

    /* status */
    output wire [`PEVB_STAT_EVENT_WIDTH-1:0] event_out,
    output wire                      busy,
    output wire [31:0]               count,
    output wire                      desc_done,
    output wire                      desc_done_eop,

    /* data read requests; their tags retiring; the write jobs made of them */
    output wire                      m_rd_valid,
    input  wire                      m_rd_ready,
    output wire [63:0]               m_rd_addr,
    output wire [12:0]               m_rd_len,
    output wire [ADDR_WIDTH-1:0]     m_rd_info,
    output wire [1:0]                m_rd_slot,
    input  wire                      retire_valid,
    input  wire [1:0]                retire_slot,
    input  wire [4:0]                retire_err,
    input  wire                      job_valid,
    input  wire [1:0]                job_slot,
    input  wire                      job_done_valid,
    input  wire [1:0]                job_done_slot,
    input  wire [4:0]                job_done_err,
    output wire [3:0]                discard,

    /* stream channels: the ring's writes (from the AXI write route) and the
       AXI4-Stream master; unused when memory-mapped */
    input  wire                      ring_wr_en,
    input  wire [31:0]               ring_wr_word,
    input  wire [DATA_WIDTH-1:0]     ring_wr_data,
    input  wire [DATA_WIDTH/8-1:0]   ring_wr_strb,
    output wire [DATA_WIDTH-1:0]     m_axis_tdata,
    output wire [DATA_WIDTH/8-1:0]   m_axis_tkeep,
    output wire                      m_axis_tlast,
    output wire                      m_axis_tvalid,
    input  wire                      m_axis_tready
);

wire desc_valid, desc_ready;
wire [63:0] desc_src, desc_dst;
wire [27:0] desc_len;
wire [2:0] desc_flags;
wire restart;
wire done_valid;
wire [2:0] done_flags;
wire [4:0] done_rd_err, done_wr_err;
wire done_abort;

pevb_desc_eng #(
    .KEEP(KEEP),
    .DESC_DEPTH(DESC_DEPTH),
    .DESC_FETCHES(DESC_FETCHES),
    .IDX_WIDTH(IDX_WIDTH),
    .BYPASS(BYPASS)
) desc_inst (
    .clk(clk),
    .rst(rst),
`include "pevb_desc_map.vh"
    .m_desc_valid(desc_valid),
    .m_desc_ready(desc_ready),
    .m_desc_src(desc_src),
    .m_desc_dst(desc_dst),
    .m_desc_len(desc_len),
    .m_desc_flags(desc_flags),
    .mover_restart(restart),
    .done_valid(done_valid),
    .done_flags(done_flags),
    .done_rd_err(done_rd_err),
    .done_wr_err(done_wr_err),
    .done_abort(done_abort),
    .m_wb_valid(m_wb_valid),
    .m_wb_ready(m_wb_ready),
    .m_wb_addr(m_wb_addr),
    .m_wb_data(m_wb_data),
    .event_out(event_out),
    .busy(busy),
    .count(count),
    .desc_done(desc_done),
    .desc_done_eop(desc_done_eop)
);

wire [31:0] ring_rd_pos, ring_done_pos;
wire ring_marks_ok;
wire seg_valid, seg_eop, truncate;
wire [31:0] seg_end;

pevb_h2c_rd #(
    .ADDR_WIDTH(ADDR_WIDTH),
    .MAX_TAGS(MAX_TAGS),
    .STREAM(STREAM),
    .CHUNK_BYTES(CHUNK_BYTES),
    .RING_BYTES(RING_BYTES),
    .BEAT_BYTES(DATA_WIDTH/8)
) rd_inst (
    .clk(clk),
    .rst(rst),
    .restart(restart),
    .mrrs_enc(mrrs_enc),
    .s_desc_valid(desc_valid),
    .s_desc_ready(desc_ready),
    .s_desc_src(desc_src),
    .s_desc_dst(desc_dst),
    .s_desc_len(desc_len),
    .s_desc_flags(desc_flags),
    .m_done_valid(done_valid),
    .m_done_flags(done_flags),
    .m_done_rd_err(done_rd_err),
    .m_done_wr_err(done_wr_err),
    .m_done_abort(done_abort),
    .m_rd_valid(m_rd_valid),
    .m_rd_ready(m_rd_ready),
    .m_rd_addr(m_rd_addr),
    .m_rd_len(m_rd_len),
    .m_rd_info(m_rd_info),
    .m_rd_slot(m_rd_slot),
    .retire_valid(retire_valid),
    .retire_slot(retire_slot),
    .retire_err(retire_err),
    .job_valid(job_valid),
    .job_slot(job_slot),
    .job_done_valid(job_done_valid),
    .job_done_slot(job_done_slot),
    .job_done_err(job_done_err),
    .discard(discard),
    .ring_rd_pos(ring_rd_pos),
    .ring_done_pos(ring_done_pos),
    .ring_marks_ok(ring_marks_ok),
    .m_seg_valid(seg_valid),
    .m_seg_end(seg_end),
    .m_seg_eop(seg_eop),
    .m_truncate(truncate)
);

generate
    if (STREAM) begin : st
        pevb_h2c_stream #(
            .DATA_WIDTH(DATA_WIDTH),
            .RING_BYTES(RING_BYTES)
        ) stream_inst (
            .clk(clk),
            .rst(rst),
            .wr_en(ring_wr_en),
            .wr_word(ring_wr_word),
            .wr_data(ring_wr_data),
            .wr_strb(ring_wr_strb),
            .seg_valid(seg_valid),
            .seg_end(seg_end),
            .seg_eop(seg_eop),
            .truncate(truncate),
            .rd_pos(ring_rd_pos),
            .done_pos(ring_done_pos),
            .marks_ok(ring_marks_ok),
            .m_axis_tdata(m_axis_tdata),
            .m_axis_tkeep(m_axis_tkeep),
            .m_axis_tlast(m_axis_tlast),
            .m_axis_tvalid(m_axis_tvalid),
            .m_axis_tready(m_axis_tready)
        );
    end else begin : mm
        assign ring_rd_pos = 32'd0;
        assign ring_done_pos = 32'd0;
        assign ring_marks_ok = 1'b1;
        assign m_axis_tdata = {DATA_WIDTH{1'b0}};
        assign m_axis_tkeep = {DATA_WIDTH/8{1'b0}};
        assign m_axis_tlast = 1'b0;
        assign m_axis_tvalid = 1'b0;
        wire unused_stream = ^{ring_wr_en, ring_wr_word, ring_wr_data, ring_wr_strb, m_axis_tready,
                               seg_valid, seg_end, seg_eop, truncate};
    end
endgenerate

endmodule

`resetall
