// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * The engine's H2C write side: one AXI4 write path for every H2C channel. Write
 * jobs (the card address of a completion's first byte, its length, its lane in
 * the first beat, tagged {channel, descriptor slot}) become AXI4 bursts on the
 * memory-mapped master (m_axi_aw*, w*, b*); with any channel built as a stream, a
 * stream channel's bursts go to its ring buffer instead (ring_wr_*), and each
 * job's completion comes back with its tag and the AXI error, if any.
 */
module pevb_h2c_axi #
(
    // data width (the PCIe datapath's), AXI4 address and ID widths
    parameter DATA_WIDTH = 64,
    parameter ADDR_WIDTH = 64,
    parameter ID_WIDTH = 4,
    // H2C channels (1 to 4), and which stream (bit n: channel n)
    parameter CHANNELS = 1,
    parameter [3:0] STREAM = 4'd0
)
(
    input  wire                          clk,
    input  wire                          rst,

    /* Write jobs and their data beats, tagged {channel, descriptor slot} */
    input  wire                          s_job_valid,
    input  wire [ADDR_WIDTH-1:0]         s_job_addr,
    input  wire [12:0]                   s_job_len,
    input  wire [$clog2(DATA_WIDTH/8)-1:0] s_job_ofs,
    input  wire [3:0]                    s_job_slot,
    input  wire                          s_dat_valid,
    input  wire [DATA_WIDTH-1:0]         s_dat_data,
    output wire                          space_ok,

    /* A job done: its tag and the AXI error (0: none) */
    output wire                          m_done_valid,
    output wire [3:0]                    m_done_slot,
    output wire [4:0]                    m_done_err,

    /* AXI4 memory-mapped master, write channels */
    output wire [ID_WIDTH-1:0]           m_axi_awid,
    output wire [ADDR_WIDTH-1:0]         m_axi_awaddr,
    output wire [7:0]                    m_axi_awlen,
    output wire [2:0]                    m_axi_awsize,
    output wire [1:0]                    m_axi_awburst,
    output wire                          m_axi_awlock,
    output wire [3:0]                    m_axi_awcache,
    output wire [2:0]                    m_axi_awprot,
    output wire                          m_axi_awvalid,
    input  wire                          m_axi_awready,
    output wire [DATA_WIDTH-1:0]         m_axi_wdata,
    output wire [DATA_WIDTH/8-1:0]       m_axi_wstrb,
    output wire                          m_axi_wlast,
    output wire                          m_axi_wvalid,
    input  wire                          m_axi_wready,
    input  wire [ID_WIDTH-1:0]           m_axi_bid,
    input  wire [1:0]                    m_axi_bresp,
    input  wire                          m_axi_bvalid,
    output wire                          m_axi_bready,

    /* Stream channels' ring buffers: a word of channel n's ring written */
    output wire [CHANNELS-1:0]           ring_wr_en,
    output wire [31:0]                   ring_wr_word,
    output wire [DATA_WIDTH-1:0]         ring_wr_data,
    output wire [DATA_WIDTH/8-1:0]       ring_wr_strb
);

// the stream channels among those built
localparam [3:0] STREAM_MASK = STREAM & ((4'd1 << CHANNELS) - 4'd1);
localparam ANY_STREAM = STREAM_MASK != 4'd0;

wire [ID_WIDTH-1:0] w_awid;
wire [ADDR_WIDTH-1:0] w_awaddr;
wire [7:0] w_awlen;
wire [2:0] w_awsize;
wire [1:0] w_awburst;
wire w_awlock;
wire [3:0] w_awcache;
wire [2:0] w_awprot;
wire w_awvalid, w_awready;
wire [3:0] w_awslot;
wire [DATA_WIDTH-1:0] w_wdata;
wire [DATA_WIDTH/8-1:0] w_wstrb;
wire w_wlast, w_wvalid, w_wready;
wire [ID_WIDTH-1:0] w_bid;
wire [1:0] w_bresp;
wire w_bvalid, w_bready;

pevb_axi_wr #(
    .DATA_WIDTH(DATA_WIDTH),
    .ADDR_WIDTH(ADDR_WIDTH),
    .ID_WIDTH(ID_WIDTH),
    .SLOT_WIDTH(4)
) axi_wr_inst (
    .clk(clk),
    .rst(rst),
    .s_job_valid(s_job_valid),
    .s_job_addr(s_job_addr),
    .s_job_len(s_job_len),
    .s_job_ofs(s_job_ofs),
    .s_job_slot(s_job_slot),
    .s_dat_valid(s_dat_valid),
    .s_dat_data(s_dat_data),
    .space_ok(space_ok),
    .m_done_valid(m_done_valid),
    .m_done_slot(m_done_slot),
    .m_done_err(m_done_err),
    .m_axi_awid(w_awid),
    .m_axi_awaddr(w_awaddr),
    .m_axi_awlen(w_awlen),
    .m_axi_awsize(w_awsize),
    .m_axi_awburst(w_awburst),
    .m_axi_awlock(w_awlock),
    .m_axi_awcache(w_awcache),
    .m_axi_awprot(w_awprot),
    .m_axi_awvalid(w_awvalid),
    .m_axi_awready(w_awready),
    .m_aw_slot(w_awslot),
    .m_axi_wdata(w_wdata),
    .m_axi_wstrb(w_wstrb),
    .m_axi_wlast(w_wlast),
    .m_axi_wvalid(w_wvalid),
    .m_axi_wready(w_wready),
    .m_axi_bid(w_bid),
    .m_axi_bresp(w_bresp),
    .m_axi_bvalid(w_bvalid),
    .m_axi_bready(w_bready)
);

generate
    if (ANY_STREAM) begin : h2c_route
        pevb_axi_wr_route #(
            .DATA_WIDTH(DATA_WIDTH),
            .ADDR_WIDTH(ADDR_WIDTH),
            .ID_WIDTH(ID_WIDTH),
            .PORTS(CHANNELS)
        ) route_inst (
            .clk(clk),
            .rst(rst),
            .s_axi_awid(w_awid),
            .s_axi_awaddr(w_awaddr),
            .s_axi_awlen(w_awlen),
            .s_axi_awsize(w_awsize),
            .s_axi_awburst(w_awburst),
            .s_axi_awlock(w_awlock),
            .s_axi_awcache(w_awcache),
            .s_axi_awprot(w_awprot),
            .s_axi_awvalid(w_awvalid),
            .s_axi_awready(w_awready),
            .s_aw_int(STREAM_MASK[w_awslot[3:2]]),
            .s_aw_port(w_awslot[3:2]),
            .s_axi_wdata(w_wdata),
            .s_axi_wstrb(w_wstrb),
            .s_axi_wlast(w_wlast),
            .s_axi_wvalid(w_wvalid),
            .s_axi_wready(w_wready),
            .s_axi_bid(w_bid),
            .s_axi_bresp(w_bresp),
            .s_axi_bvalid(w_bvalid),
            .s_axi_bready(w_bready),
            .m_axi_awid(m_axi_awid),
            .m_axi_awaddr(m_axi_awaddr),
            .m_axi_awlen(m_axi_awlen),
            .m_axi_awsize(m_axi_awsize),
            .m_axi_awburst(m_axi_awburst),
            .m_axi_awlock(m_axi_awlock),
            .m_axi_awcache(m_axi_awcache),
            .m_axi_awprot(m_axi_awprot),
            .m_axi_awvalid(m_axi_awvalid),
            .m_axi_awready(m_axi_awready),
            .m_axi_wdata(m_axi_wdata),
            .m_axi_wstrb(m_axi_wstrb),
            .m_axi_wlast(m_axi_wlast),
            .m_axi_wvalid(m_axi_wvalid),
            .m_axi_wready(m_axi_wready),
            .m_axi_bid(m_axi_bid),
            .m_axi_bresp(m_axi_bresp),
            .m_axi_bvalid(m_axi_bvalid),
            .m_axi_bready(m_axi_bready),
            .ring_wr_en(ring_wr_en),
            .ring_wr_word(ring_wr_word),
            .ring_wr_data(ring_wr_data),
            .ring_wr_strb(ring_wr_strb)
        );
        // (the route needs the burst's channel, not its descriptor slot)
        wire unused_awslot = ^w_awslot[1:0];
    end else begin : h2c_mm
        assign m_axi_awid = w_awid;
        assign m_axi_awaddr = w_awaddr;
        assign m_axi_awlen = w_awlen;
        assign m_axi_awsize = w_awsize;
        assign m_axi_awburst = w_awburst;
        assign m_axi_awlock = w_awlock;
        assign m_axi_awcache = w_awcache;
        assign m_axi_awprot = w_awprot;
        assign m_axi_awvalid = w_awvalid;
        assign w_awready = m_axi_awready;
        assign m_axi_wdata = w_wdata;
        assign m_axi_wstrb = w_wstrb;
        assign m_axi_wlast = w_wlast;
        assign m_axi_wvalid = w_wvalid;
        assign w_wready = m_axi_wready;
        assign w_bid = m_axi_bid;
        assign w_bresp = m_axi_bresp;
        assign w_bvalid = m_axi_bvalid;
        assign m_axi_bready = w_bready;
        assign ring_wr_en = {CHANNELS{1'b0}};
        assign ring_wr_word = 32'd0;
        assign ring_wr_data = {DATA_WIDTH{1'b0}};
        assign ring_wr_strb = {DATA_WIDTH/8{1'b0}};
        // (all channels memory-mapped: a burst's owner does not matter)
        wire unused_awslot = ^{w_awslot, ring_wr_word, ring_wr_data, ring_wr_strb};
    end
endgenerate

endmodule

`resetall
