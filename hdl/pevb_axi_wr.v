// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * H2C write side of the AXI4 memory-mapped master.  Each completion carrying
 * H2C data becomes a job (card address, byte count, lane of its first byte in
 * the first pushed beat, descriptor slot); its beats follow on the data port.
 * Jobs are written to AXI as INCR bursts of at most 256 beats that never cross
 * 4 KiB, with strobes for the first and last beats; data is realigned from the
 * PCIe DWORD alignment to the card address.  Write responses are counted per
 * job; a job is done when its last burst is acknowledged, with SLVERR/DECERR
 * reported as the XDMA write_error code.  The pusher keeps space_ok in view (it
 * gates the completion stream's tready), so the ports have no ready.
 */
module pevb_axi_wr #
(
    // AXI data width (the PCIe datapath width)
    parameter DATA_WIDTH = 64,
    // AXI address width
    parameter ADDR_WIDTH = 64,
    // AXI ID width and the ID this channel uses
    parameter ID_WIDTH = 4,
    parameter [ID_WIDTH-1:0] AXI_ID = {ID_WIDTH{1'b0}},
    // jobs buffered (power of two)
    parameter JOB_DEPTH = 32,
    // data beats buffered (power of two)
    parameter DATA_DEPTH = 8192/(DATA_WIDTH/8),
    // write bursts outstanding (power of two)
    parameter BURSTS = 16,
    // job owner tag width (echoed with the job's completion)
    parameter SLOT_WIDTH = 2
)
(
    input  wire                            clk,
    input  wire                            rst,

    /* Jobs */
    input  wire                            s_job_valid,
    input  wire [ADDR_WIDTH-1:0]           s_job_addr,
    input  wire [12:0]                     s_job_len,
    input  wire [$clog2(DATA_WIDTH/8)-1:0] s_job_ofs,
    input  wire [SLOT_WIDTH-1:0]           s_job_slot,

    /* Data beats of the jobs, in order */
    input  wire                            s_dat_valid,
    input  wire [DATA_WIDTH-1:0]           s_dat_data,

    // room for at least four more jobs and beats
    output wire                            space_ok,

    /* Job written (all its bursts acknowledged), in order */
    output wire                            m_done_valid,
    output wire [SLOT_WIDTH-1:0]           m_done_slot,
    output wire [4:0]                      m_done_err,

    /* AXI4 write channels */
    output wire [ID_WIDTH-1:0]             m_axi_awid,
    output wire [ADDR_WIDTH-1:0]           m_axi_awaddr,
    output wire [7:0]                      m_axi_awlen,
    output wire [2:0]                      m_axi_awsize,
    output wire [1:0]                      m_axi_awburst,
    output wire                            m_axi_awlock,
    output wire [3:0]                      m_axi_awcache,
    output wire [2:0]                      m_axi_awprot,
    output wire                            m_axi_awvalid,
    input  wire                            m_axi_awready,
    // the owner (job slot) of the burst on AW, for routing
    output wire [SLOT_WIDTH-1:0]           m_aw_slot,
    output wire [DATA_WIDTH-1:0]           m_axi_wdata,
    output wire [DATA_WIDTH/8-1:0]         m_axi_wstrb,
    output wire                            m_axi_wlast,
    output wire                            m_axi_wvalid,
    input  wire                            m_axi_wready,
    input  wire [ID_WIDTH-1:0]             m_axi_bid,
    input  wire [1:0]                      m_axi_bresp,
    input  wire                            m_axi_bvalid,
    output wire                            m_axi_bready
);

localparam BYTES = DATA_WIDTH/8;
localparam LOG_BYTES = $clog2(BYTES);
localparam WORD_WIDTH = ADDR_WIDTH - LOG_BYTES;
// bursts end at 4 KiB and at 256 beats: every BURST_WORDS words
localparam BURST_BYTES = BYTES*256 < 4096 ? BYTES*256 : 4096;
localparam LOG_BW = $clog2(BURST_BYTES/BYTES);
localparam CW = 14;
localparam [31:0] BYTES_M1 = BYTES - 1;
localparam [31:0] DATA_LIMIT = DATA_DEPTH - 4;
localparam [31:0] JOB_LIMIT = JOB_DEPTH - 4;
localparam LOG_JD = $clog2(JOB_DEPTH);
localparam LOG_DD = $clog2(DATA_DEPTH);
localparam LOG_BQ = $clog2(BURSTS);

localparam [1:0] RESP_SLVERR = 2'b10;
localparam [1:0] RESP_DECERR = 2'b11;

initial begin
    if ((1 << LOG_JD) != JOB_DEPTH || (1 << LOG_DD) != DATA_DEPTH || (1 << LOG_BQ) != BURSTS) begin
        $error("Error: JOB_DEPTH, DATA_DEPTH and BURSTS must be powers of two (instance %m)");
        $finish;
    end
    if (DATA_DEPTH*BYTES < 8192) begin
        $error("Error: DATA_DEPTH must hold 8 KiB (instance %m)");
        $finish;
    end
end

/* job queue: written by the pusher, read by the address and the data side */
reg [ADDR_WIDTH-1:0] job_addr_mem [0:JOB_DEPTH-1];
reg [12:0] job_len_mem [0:JOB_DEPTH-1];
reg [LOG_BYTES-1:0] job_ofs_mem [0:JOB_DEPTH-1];
reg [SLOT_WIDTH-1:0] job_slot_mem [0:JOB_DEPTH-1];
reg [LOG_JD:0] job_wr_ptr_reg;
reg [LOG_JD:0] job_aw_ptr_reg;
reg [LOG_JD:0] job_w_ptr_reg;

/* data queue */
reg [DATA_WIDTH-1:0] dat_mem [0:DATA_DEPTH-1];
reg [LOG_DD:0] dat_wr_ptr_reg;
reg [LOG_DD:0] dat_rd_ptr_reg;

wire [LOG_JD:0] job_used = job_wr_ptr_reg - job_w_ptr_reg;
wire [LOG_DD:0] dat_used = dat_wr_ptr_reg - dat_rd_ptr_reg;
assign space_ok = job_used < JOB_LIMIT[LOG_JD:0] && dat_used < DATA_LIMIT[LOG_DD:0];

`include "pevb_span.vh"

/* address side: bursts of the job at the AW pointer */
reg aw_active_reg;
reg [WORD_WIDTH-1:0] aw_word_reg;
reg [CW-1:0] aw_rem_reg;

wire [LOG_JD-1:0] aw_idx = job_aw_ptr_reg[LOG_JD-1:0];
wire aw_job_avail = job_aw_ptr_reg != job_wr_ptr_reg;
wire [ADDR_WIDTH-1:0] aw_job_addr = job_addr_mem[aw_idx];
wire [WORD_WIDTH-1:0] a_word = aw_active_reg ? aw_word_reg : aw_job_addr[ADDR_WIDTH-1:LOG_BYTES];
wire [CW-1:0] a_rem = aw_active_reg ? aw_rem_reg : span(aw_job_addr[LOG_BYTES-1:0], job_len_mem[aw_idx]);
wire [CW-1:0] a_room = (1 << LOG_BW) - {{(CW-LOG_BW){1'b0}}, a_word[LOG_BW-1:0]};
wire [CW-1:0] a_len = a_rem < a_room ? a_rem : a_room;
wire a_last = a_rem == a_len;

/* burst queue: job slot and last burst of the job, in AW order */
reg [SLOT_WIDTH-1:0] bq_slot_mem [0:BURSTS-1];
reg bq_last_mem [0:BURSTS-1];
reg [LOG_BQ:0] bq_wr_ptr_reg;
reg [LOG_BQ:0] bq_rd_ptr_reg;
// (differences in the pointers' own width: wrapped pointers must not widen)
wire [LOG_BQ:0] bq_used = bq_wr_ptr_reg - bq_rd_ptr_reg;
wire bq_full = bq_used[LOG_BQ];

assign m_axi_awid = AXI_ID;
assign m_axi_awaddr = {a_word, {LOG_BYTES{1'b0}}};
assign m_axi_awlen = a_len[7:0] - 8'd1;
assign m_axi_awsize = LOG_BYTES[2:0];
assign m_axi_awburst = 2'b01;
assign m_axi_awlock = 1'b0;
assign m_axi_awcache = 4'b0011;
assign m_axi_awprot = 3'b000;
assign m_axi_awvalid = (aw_active_reg || aw_job_avail) && !bq_full;
assign m_aw_slot = job_slot_mem[aw_idx];
wire aw_fire = m_axi_awvalid && m_axi_awready;

/* data side: the job at the W pointer, once its address side has started */
wire [LOG_JD-1:0] w_idx = job_w_ptr_reg[LOG_JD-1:0];
wire w_job_avail = job_w_ptr_reg != job_aw_ptr_reg || (aw_active_reg && job_w_ptr_reg != job_wr_ptr_reg);
wire [ADDR_WIDTH-1:0] w_job_addr = job_addr_mem[w_idx];
wire [12:0] w_job_len = job_len_mem[w_idx];
wire [LOG_BYTES-1:0] w_job_ofs = job_ofs_mem[w_idx];
wire [LOG_BYTES-1:0] w_lane = w_job_addr[LOG_BYTES-1:0];
wire [LOG_BYTES-1:0] w_end = w_lane + w_job_len[LOG_BYTES-1:0];  // lane after the last byte

wire job_done;
wire [DATA_WIDTH-1:0] al_data;
wire al_first, al_last, al_valid;
wire dat_ready;

pevb_realign #(
    .DATA_WIDTH(DATA_WIDTH),
    .COUNT_WIDTH(CW)
) realign_inst (
    .clk(clk),
    .rst(rst),
    .job_valid(w_job_avail),
    .job_done(job_done),
    .job_shift(w_lane - w_job_ofs),
    .job_shift_neg(w_lane < w_job_ofs),
    .job_in_beats(span(w_job_ofs, w_job_len)),
    .job_out_beats(span(w_lane, w_job_len)),
    .s_data(dat_mem[dat_rd_ptr_reg[LOG_DD-1:0]]),
    .s_valid(dat_wr_ptr_reg != dat_rd_ptr_reg),
    .s_ready(dat_ready),
    .m_data(al_data),
    .m_first(al_first),
    .m_last(al_last),
    .m_valid(al_valid),
    .m_ready(m_axi_wready)
);

reg [WORD_WIDTH-1:0] w_word_reg;
wire [WORD_WIDTH-1:0] w_word = al_first ? w_job_addr[ADDR_WIDTH-1:LOG_BYTES] : w_word_reg;
wire [BYTES-1:0] strb_first = {BYTES{1'b1}} << w_lane;
wire [BYTES-1:0] strb_last = w_end == {LOG_BYTES{1'b0}} ? {BYTES{1'b1}} : ~({BYTES{1'b1}} << w_end);

assign m_axi_wdata = al_data;
assign m_axi_wstrb = (al_first ? strb_first : {BYTES{1'b1}}) & (al_last ? strb_last : {BYTES{1'b1}});
assign m_axi_wlast = al_last || &w_word[LOG_BW-1:0];
assign m_axi_wvalid = al_valid;
wire w_fire = al_valid && m_axi_wready;

/* responses */
reg [4:0] err_acc_reg;
wire [LOG_BQ-1:0] bq_idx = bq_rd_ptr_reg[LOG_BQ-1:0];
wire b_fire = m_axi_bvalid && bq_rd_ptr_reg != bq_wr_ptr_reg;
wire [4:0] b_err = m_axi_bresp == RESP_DECERR ? `PEVB_AXI_ERR_DECODE :
                   m_axi_bresp == RESP_SLVERR ? `PEVB_AXI_ERR_SLAVE : 5'd0;
// single ID: responses come back in burst order
wire unused_bid = ^m_axi_bid;

assign m_axi_bready = bq_rd_ptr_reg != bq_wr_ptr_reg;
assign m_done_valid = b_fire && bq_last_mem[bq_idx];
assign m_done_slot = bq_slot_mem[bq_idx];
assign m_done_err = err_acc_reg | b_err;

// Every register update below is under one of these conditions: the block runs only
// when one holds (a clock enable), and event-driven simulators skip it on idle cycles.
wire wake = rst || s_job_valid || s_dat_valid ||
            (dat_ready && dat_wr_ptr_reg != dat_rd_ptr_reg) || aw_fire || w_fire || job_done ||
            b_fire;

always @(posedge clk) begin
    if (wake) begin
        if (s_job_valid) begin
            job_addr_mem[job_wr_ptr_reg[LOG_JD-1:0]] <= s_job_addr;
            job_len_mem[job_wr_ptr_reg[LOG_JD-1:0]] <= s_job_len;
            job_ofs_mem[job_wr_ptr_reg[LOG_JD-1:0]] <= s_job_ofs;
            job_slot_mem[job_wr_ptr_reg[LOG_JD-1:0]] <= s_job_slot;
            job_wr_ptr_reg <= job_wr_ptr_reg + 1'b1;
        end
        if (s_dat_valid) begin
            dat_mem[dat_wr_ptr_reg[LOG_DD-1:0]] <= s_dat_data;
            dat_wr_ptr_reg <= dat_wr_ptr_reg + 1'b1;
        end
        if (dat_ready && dat_wr_ptr_reg != dat_rd_ptr_reg) begin
            dat_rd_ptr_reg <= dat_rd_ptr_reg + 1'b1;
        end

        if (aw_fire) begin
            bq_slot_mem[bq_wr_ptr_reg[LOG_BQ-1:0]] <= job_slot_mem[aw_idx];
            bq_last_mem[bq_wr_ptr_reg[LOG_BQ-1:0]] <= a_last;
            bq_wr_ptr_reg <= bq_wr_ptr_reg + 1'b1;
            if (a_last) begin
                aw_active_reg <= 1'b0;
                job_aw_ptr_reg <= job_aw_ptr_reg + 1'b1;
            end else begin
                aw_active_reg <= 1'b1;
                aw_word_reg <= a_word + {{(WORD_WIDTH-CW){1'b0}}, a_len};
                aw_rem_reg <= a_rem - a_len;
            end
        end

        if (w_fire) begin
            w_word_reg <= w_word + 1'b1;
        end
        if (job_done) begin
            job_w_ptr_reg <= job_w_ptr_reg + 1'b1;
        end

        if (b_fire) begin
            bq_rd_ptr_reg <= bq_rd_ptr_reg + 1'b1;
            err_acc_reg <= bq_last_mem[bq_idx] ? 5'd0 : (err_acc_reg | b_err);
        end

        if (rst) begin
            job_wr_ptr_reg <= {(LOG_JD+1){1'b0}};
            job_aw_ptr_reg <= {(LOG_JD+1){1'b0}};
            job_w_ptr_reg <= {(LOG_JD+1){1'b0}};
            dat_wr_ptr_reg <= {(LOG_DD+1){1'b0}};
            dat_rd_ptr_reg <= {(LOG_DD+1){1'b0}};
            bq_wr_ptr_reg <= {(LOG_BQ+1){1'b0}};
            bq_rd_ptr_reg <= {(LOG_BQ+1){1'b0}};
            aw_active_reg <= 1'b0;
            err_acc_reg <= 5'd0;
        end
    end
end

endmodule

`resetall
