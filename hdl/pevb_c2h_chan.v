// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * One C2H channel: its descriptor engine (pevb_desc_eng) feeding its data
 * mover (pevb_c2h_wr: write TLPs to the host, split at MPS), with the data
 * read from the AXI4 memory-mapped side (pevb_axi_rd, AXI ID = AXI_ID) or
 * taken from the channel's AXI4-Stream slave (pevb_axis_rd).  A stream
 * channel's per-descriptor result (length, EOP) goes out as a 64-bit status
 * write-back, ahead of the descriptor engine's poll-mode write-back on the
 * same request.  The engine top (pevb_xdma) arbitrates the channels and
 * routes completions back; every port here is the channel's own slice.
 */
module pevb_c2h_chan #
(
    // PCIe datapath width in bits (the AXI and stream data width)
    parameter DATA_WIDTH = 64,
    // DWORD lanes of the datapath (descriptor buffer write lanes)
    parameter KEEP = DATA_WIDTH/32,
    // card (AXI) address width and AXI ID width
    parameter ADDR_WIDTH = 64,
    parameter AXI_ID_WIDTH = 4,
    // this channel's AXI read ID
    parameter AXI_ID = 0,
    // descriptor prefetch buffer entries (power of two) and fetches in flight
    parameter DESC_DEPTH = 8,
    parameter DESC_FETCHES = 2,
    // AXI4-Stream channel (1) or memory-mapped (0)
    parameter STREAM = 0,
    // descriptors from the bypass port instead of fetches (0 or 1)
    parameter BYPASS = 0,
    // descriptor buffer index width
    parameter IDX_WIDTH = $clog2(DESC_DEPTH*8)
)
(
    input  wire                      clk,
    input  wire                      rst,

`include "pevb_desc_ports.vh"

    /* the data mover's register */
    input  wire [2:0]                mps_enc,

    /* write-backs: a stream result (64 bits, m_wb_long) or the poll-mode
       completed count (32 bits) */
    output wire                      m_wb_valid,
    input  wire                      m_wb_ready,
    output wire [63:0]               m_wb_addr,
    output wire [63:0]               m_wb_data,
    output wire                      m_wb_long,

    /* status; beat: a beat of the channel's data taken (performance monitor) */
    output wire [`PEVB_STAT_EVENT_WIDTH-1:0] event_out,
    output wire                      busy,
    output wire [31:0]               count,
    output wire                      desc_done,
    output wire                      desc_done_eop,
    output wire                      beat,

    /* write TLP requests, their payload reads, and the TLPs sent */
    output wire                      m_tlp_valid,
    input  wire                      m_tlp_ready,
    output wire [63:0]               m_tlp_addr,
    output wire [12:0]               m_tlp_len,
    output wire [1:0]                m_tlp_slot,
    input  wire                      pay_rd_en,
    output wire [DATA_WIDTH-1:0]     pay_rd_data,
    input  wire                      sent_valid,
    input  wire [1:0]                sent_slot,

    /* AXI4 read master (memory-mapped channels; idle for streams) */
    output wire [AXI_ID_WIDTH-1:0]   m_axi_arid,
    output wire [ADDR_WIDTH-1:0]     m_axi_araddr,
    output wire [7:0]                m_axi_arlen,
    output wire [2:0]                m_axi_arsize,
    output wire [1:0]                m_axi_arburst,
    output wire                      m_axi_arlock,
    output wire [3:0]                m_axi_arcache,
    output wire [2:0]                m_axi_arprot,
    output wire                      m_axi_arvalid,
    input  wire                      m_axi_arready,
    input  wire [AXI_ID_WIDTH-1:0]   m_axi_rid,
    input  wire [DATA_WIDTH-1:0]     m_axi_rdata,
    input  wire [1:0]                m_axi_rresp,
    input  wire                      m_axi_rlast,
    input  wire                      m_axi_rvalid,
    output wire                      m_axi_rready,

    /* AXI4-Stream slave (stream channels; never ready when memory-mapped) */
    input  wire [DATA_WIDTH-1:0]     s_axis_tdata,
    input  wire [DATA_WIDTH/8-1:0]   s_axis_tkeep,
    input  wire                      s_axis_tlast,
    input  wire                      s_axis_tvalid,
    output wire                      s_axis_tready
);

// the stream result of a descriptor goes before the engine's write-back
wire eng_wb_valid, eng_wb_ready;
wire [63:0] eng_wb_addr;
wire [31:0] eng_wb_data;
wire res_valid, res_ready;
wire [63:0] res_addr, res_data;
assign m_wb_valid = res_valid || eng_wb_valid;
assign m_wb_addr = res_valid ? res_addr : eng_wb_addr;
assign m_wb_data = res_valid ? res_data : {32'd0, eng_wb_data};
assign m_wb_long = res_valid;
assign res_ready = m_wb_ready && res_valid;
assign eng_wb_ready = m_wb_ready && !res_valid;

wire desc_valid, desc_ready;
wire [63:0] desc_src, desc_dst;
wire [27:0] desc_len;
wire [2:0] desc_flags;
wire restart;
wire done_valid;
wire [2:0] done_flags;
wire [4:0] done_rd_err, done_wr_err;
wire done_abort;
wire cmd_valid, cmd_ready;
wire [63:0] cmd_addr;
wire [12:0] cmd_len;
wire [ADDR_WIDTH-1:0] cmd_card;
wire [1:0] cmd_slot;
wire cmd_first;
wire drop_valid;
wire [1:0] drop_slot;
wire [4:0] drop_err;
wire end_valid, end_eop;
wire [1:0] end_slot;
wire [12:0] end_len;

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
    .m_wb_valid(eng_wb_valid),
    .m_wb_ready(eng_wb_ready),
    .m_wb_addr(eng_wb_addr),
    .m_wb_data(eng_wb_data),
    .event_out(event_out),
    .busy(busy),
    .count(count),
    .desc_done(desc_done),
    .desc_done_eop(desc_done_eop)
);

pevb_c2h_wr #(
    .ADDR_WIDTH(ADDR_WIDTH),
    .STREAM(STREAM)
) wr_inst (
    .clk(clk),
    .rst(rst),
    .restart(restart),
    .mps_enc(mps_enc),
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
    .m_wr_valid(cmd_valid),
    .m_wr_ready(cmd_ready),
    .m_wr_addr(cmd_addr),
    .m_wr_len(cmd_len),
    .m_wr_card_addr(cmd_card),
    .m_wr_slot(cmd_slot),
    .m_wr_first(cmd_first),
    .sent_valid(sent_valid),
    .sent_slot(sent_slot),
    .drop_valid(drop_valid),
    .drop_slot(drop_slot),
    .drop_err(drop_err),
    .wb_disable(control[`PEVB_CTRL_STREAM_WB_DISABLE]),
    .end_valid(end_valid),
    .end_slot(end_slot),
    .end_len(end_len),
    .end_eop(end_eop),
    .m_res_valid(res_valid),
    .m_res_ready(res_ready),
    .m_res_addr(res_addr),
    .m_res_data(res_data)
);

generate
    if (STREAM) begin : st
        pevb_axis_rd #(
            .DATA_WIDTH(DATA_WIDTH)
        ) rd_inst (
            .clk(clk),
            .rst(rst),
            .s_cmd_valid(cmd_valid),
            .s_cmd_ready(cmd_ready),
            .s_cmd_pcie_addr(cmd_addr),
            .s_cmd_len(cmd_len),
            .s_cmd_slot(cmd_slot),
            .s_cmd_first(cmd_first),
            .m_tlp_valid(m_tlp_valid),
            .m_tlp_ready(m_tlp_ready),
            .m_tlp_addr(m_tlp_addr),
            .m_tlp_len(m_tlp_len),
            .m_tlp_slot(m_tlp_slot),
            .m_drop_valid(drop_valid),
            .m_drop_slot(drop_slot),
            .m_drop_err(drop_err),
            .m_end_valid(end_valid),
            .m_end_slot(end_slot),
            .m_end_len(end_len),
            .m_end_eop(end_eop),
            .pay_rd_en(pay_rd_en),
            .pay_rd_data(pay_rd_data),
            .s_axis_tdata(s_axis_tdata),
            .s_axis_tkeep(s_axis_tkeep),
            .s_axis_tlast(s_axis_tlast),
            .s_axis_tvalid(s_axis_tvalid),
            .s_axis_tready(s_axis_tready)
        );
        // performance monitor: a beat taken from the stream
        assign beat = s_axis_tvalid && s_axis_tready;
        // no AXI reads
        assign m_axi_arid = {AXI_ID_WIDTH{1'b0}};
        assign m_axi_araddr = {ADDR_WIDTH{1'b0}};
        assign m_axi_arlen = 8'd0;
        assign m_axi_arsize = 3'd0;
        assign m_axi_arburst = 2'd0;
        assign m_axi_arlock = 1'b0;
        assign m_axi_arcache = 4'd0;
        assign m_axi_arprot = 3'd0;
        assign m_axi_arvalid = 1'b0;
        assign m_axi_rready = 1'b0;
        wire unused_card = ^{cmd_card, m_axi_arready, m_axi_rid, m_axi_rdata, m_axi_rresp, m_axi_rlast,
                             m_axi_rvalid};
    end else begin : mm
        pevb_axi_rd #(
            .DATA_WIDTH(DATA_WIDTH),
            .ADDR_WIDTH(ADDR_WIDTH),
            .ID_WIDTH(AXI_ID_WIDTH),
            .AXI_ID(AXI_ID)
        ) rd_inst (
            .clk(clk),
            .rst(rst),
            .restart(restart),
            .s_cmd_valid(cmd_valid),
            .s_cmd_ready(cmd_ready),
            .s_cmd_pcie_addr(cmd_addr),
            .s_cmd_len(cmd_len),
            .s_cmd_card_addr(cmd_card),
            .s_cmd_slot(cmd_slot),
            .m_tlp_valid(m_tlp_valid),
            .m_tlp_ready(m_tlp_ready),
            .m_tlp_addr(m_tlp_addr),
            .m_tlp_len(m_tlp_len),
            .m_tlp_slot(m_tlp_slot),
            .m_drop_valid(drop_valid),
            .m_drop_slot(drop_slot),
            .m_drop_err(drop_err),
            .pay_rd_en(pay_rd_en),
            .pay_rd_data(pay_rd_data),
            .m_axi_arid(m_axi_arid),
            .m_axi_araddr(m_axi_araddr),
            .m_axi_arlen(m_axi_arlen),
            .m_axi_arsize(m_axi_arsize),
            .m_axi_arburst(m_axi_arburst),
            .m_axi_arlock(m_axi_arlock),
            .m_axi_arcache(m_axi_arcache),
            .m_axi_arprot(m_axi_arprot),
            .m_axi_arvalid(m_axi_arvalid),
            .m_axi_arready(m_axi_arready),
            .m_axi_rid(m_axi_rid),
            .m_axi_rdata(m_axi_rdata),
            .m_axi_rresp(m_axi_rresp),
            .m_axi_rlast(m_axi_rlast),
            .m_axi_rvalid(m_axi_rvalid),
            .m_axi_rready(m_axi_rready)
        );
        // performance monitor: a beat of the channel's read data (from AXI)
        assign beat = m_axi_rvalid && m_axi_rready;
        assign end_valid = 1'b0;
        assign end_slot = 2'd0;
        assign end_len = 13'd0;
        assign end_eop = 1'b0;
        assign s_axis_tready = 1'b0;
        wire unused_stream = ^{cmd_first, s_axis_tdata, s_axis_tkeep, s_axis_tlast, s_axis_tvalid};
    end
endgenerate

endmodule

`resetall
