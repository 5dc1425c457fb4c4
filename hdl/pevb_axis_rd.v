// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * C2H read side of a stream channel: fills the payload of each C2H memory
 * write TLP (PCIe address, length, descriptor slot, first TLP of its
 * descriptor) from the channel's AXI4-Stream input, bytes in order, realigned
 * to the TLP's DWORD layout as pevb_axi_rd does for the memory-mapped master.
 * Packets follow XDMA's C2H stream rules: tkeep is all ones except on the
 * packet's last beat (tlast), whose bytes are packed to the low lanes; a
 * packet fills descriptors in order and a descriptor ends early at the end of
 * its packet.  A TLP starts once its bytes, or the end of its packet, are
 * buffered; it is cut short at the packet end, and the remaining TLPs of that
 * descriptor are dropped (nothing written).  Each TLP reports its byte count
 * and whether it ended the packet (m_end_*), for the descriptor's length
 * write-back.
 */
module pevb_axis_rd #
(
    // stream and payload width (the PCIe datapath width)
    parameter DATA_WIDTH = 64,
    // TLP commands buffered (power of two)
    parameter CMD_DEPTH = 16,
    // stream beats buffered (power of two, more than a 4 KiB TLP)
    parameter IN_DEPTH = 8192/(DATA_WIDTH/8),
    // packet ends buffered (power of two)
    parameter MARK_DEPTH = 16,
    // payload beats buffered (power of two, more than two 4 KiB TLPs)
    parameter PAY_DEPTH = 16384/(DATA_WIDTH/8)
)
(
    input  wire                      clk,
    input  wire                      rst,

    /* TLP commands */
    input  wire                      s_cmd_valid,
    output wire                      s_cmd_ready,
    input  wire [63:0]               s_cmd_pcie_addr,
    input  wire [12:0]               s_cmd_len,
    input  wire [1:0]                s_cmd_slot,
    input  wire                      s_cmd_first,

`include "pevb_tlp_out_ports.vh"

    /* Bytes taken for a TLP, and whether they end the packet */
    output wire                      m_end_valid,
    output wire [1:0]                m_end_slot,
    output wire [12:0]               m_end_len,
    output wire                      m_end_eop,

    /* Payload beats in TLP layout, read like a RAM (data the cycle after rd_en) */
    input  wire                      pay_rd_en,
    output wire [DATA_WIDTH-1:0]     pay_rd_data,

    /* AXI4-Stream slave */
    input  wire [DATA_WIDTH-1:0]     s_axis_tdata,
    input  wire [DATA_WIDTH/8-1:0]   s_axis_tkeep,
    input  wire                      s_axis_tlast,
    input  wire                      s_axis_tvalid,
    output wire                      s_axis_tready
);

localparam BYTES = DATA_WIDTH/8;
localparam LOG_BYTES = $clog2(BYTES);
localparam CW = 14;
localparam [31:0] BYTES_M1 = BYTES - 1;
localparam [31:0] HDR_LANE = 16 % BYTES;
localparam LOG_CD = $clog2(CMD_DEPTH);
localparam LOG_ID = $clog2(IN_DEPTH);
localparam LOG_MD = $clog2(MARK_DEPTH);
localparam LOG_PD = $clog2(PAY_DEPTH);
localparam TQ_DEPTH = 16;

initial begin
    if ((1 << LOG_CD) != CMD_DEPTH || (1 << LOG_ID) != IN_DEPTH ||
        (1 << LOG_MD) != MARK_DEPTH || (1 << LOG_PD) != PAY_DEPTH) begin
        $error("Error: CMD_DEPTH, IN_DEPTH, MARK_DEPTH and PAY_DEPTH must be powers of two (instance %m)");
        $finish;
    end
    if (IN_DEPTH*BYTES < 4096 + 2*BYTES || PAY_DEPTH*BYTES < 8192 + 2*BYTES) begin
        $error("Error: IN_DEPTH must hold a 4 KiB TLP, PAY_DEPTH two (instance %m)");
        $finish;
    end
end

`include "pevb_span.vh"

/* command queue */
reg [63:0] cmd_pcie_mem [0:CMD_DEPTH-1];
reg [12:0] cmd_len_mem [0:CMD_DEPTH-1];
reg [1:0] cmd_slot_mem [0:CMD_DEPTH-1];
reg cmd_first_mem [0:CMD_DEPTH-1];
reg [LOG_CD:0] cmd_wr_ptr_reg;
reg [LOG_CD:0] cmd_rd_ptr_reg;
wire [LOG_CD:0] cmd_used = cmd_wr_ptr_reg - cmd_rd_ptr_reg;
assign s_cmd_ready = !cmd_used[LOG_CD];
wire cmd_push = s_cmd_valid && s_cmd_ready;
wire cmd_avail = cmd_rd_ptr_reg != cmd_wr_ptr_reg;
wire [LOG_CD-1:0] cmd_idx = cmd_rd_ptr_reg[LOG_CD-1:0];
wire [12:0] cmd_len = cmd_len_mem[cmd_idx];

/* stream input: beats, and the packet ends among them (beat and its bytes) */
reg [DATA_WIDTH-1:0] in_mem [0:IN_DEPTH-1];
reg [LOG_ID:0] in_wr_ptr_reg;
reg [LOG_ID:0] in_rd_ptr_reg;
wire [LOG_ID:0] in_used = in_wr_ptr_reg - in_rd_ptr_reg;

reg [LOG_ID:0] mark_ptr_mem [0:MARK_DEPTH-1];
reg [LOG_BYTES:0] mark_nb_mem [0:MARK_DEPTH-1];
reg [LOG_MD:0] mark_wr_ptr_reg;
reg [LOG_MD:0] mark_rd_ptr_reg;
wire [LOG_MD:0] mark_used = mark_wr_ptr_reg - mark_rd_ptr_reg;
wire have_mark = mark_wr_ptr_reg != mark_rd_ptr_reg;
wire [LOG_ID:0] mark_ptr = mark_ptr_mem[mark_rd_ptr_reg[LOG_MD-1:0]];
wire [LOG_BYTES:0] mark_nb = mark_nb_mem[mark_rd_ptr_reg[LOG_MD-1:0]];

assign s_axis_tready = !in_used[LOG_ID] && !mark_used[LOG_MD];
wire in_push = s_axis_tvalid && s_axis_tready;

// bytes of the last beat: the highest kept lane (tkeep packed to the low lanes)
reg [LOG_BYTES:0] tkeep_bytes;
integer k;
always @* begin
    tkeep_bytes = {(LOG_BYTES+1){1'b0}};
    for (k = 0; k < BYTES; k = k + 1) begin
        if (s_axis_tkeep[k]) begin
            tkeep_bytes = k[LOG_BYTES:0] + 1'b1;
        end
    end
end

/* TLP queue (pevb_tlp_queue, below) */
wire tq_full;

/* payload buffer */
reg [DATA_WIDTH-1:0] pay_mem [0:PAY_DEPTH-1];
reg [LOG_PD:0] pay_wr_ptr_reg;
reg [LOG_PD:0] pay_rd_ptr_reg;
reg [DATA_WIDTH-1:0] pay_rd_data_reg;
wire [LOG_PD:0] pay_used = pay_wr_ptr_reg - pay_rd_ptr_reg;
wire pay_room = !pay_used[LOG_PD];
assign pay_rd_data = pay_rd_data_reg;

/* the next TLP: its bytes are the command's length or up to the packet end */
reg [LOG_BYTES-1:0] in_lane_reg;
// the packet whose end was reached still owns the descriptor's remaining TLPs
reg closed_reg;

wire [LOG_ID:0] to_mark_beats = mark_ptr - in_rd_ptr_reg;
wire [CW+LOG_ID:0] to_end = ({{CW{1'b0}}, to_mark_beats} << LOG_BYTES) +
                            {{(CW+LOG_ID-LOG_BYTES){1'b0}}, mark_nb} -
                            {{(CW+LOG_ID-LOG_BYTES+1){1'b0}}, in_lane_reg};
wire [CW+LOG_ID:0] buffered = ({{CW{1'b0}}, in_used} << LOG_BYTES) -
                              {{(CW+LOG_ID-LOG_BYTES+1){1'b0}}, in_lane_reg};
wire [CW+LOG_ID:0] cmd_len_w = {{(CW+LOG_ID-12){1'b0}}, cmd_len};
wire ends_packet = have_mark && to_end <= cmd_len_w;
wire [12:0] take_len = ends_packet ? to_end[12:0] : cmd_len;
wire cmd_closed = closed_reg && !cmd_first_mem[cmd_idx];
wire ready_to_take = ends_packet || buffered >= cmd_len_w;

reg job_active_reg;
reg [63:0] j_pcie_reg;
reg [12:0] j_len_reg;
reg [1:0] j_slot_reg;
reg j_eop_reg;
reg j_pop_last_reg;
reg [LOG_BYTES-1:0] j_in_lane_reg;
reg [CW-1:0] j_in_beats_reg;
reg [CW-1:0] j_fed_reg;

wire decide = !job_active_reg && cmd_avail && !tq_full;
// a command of a closed descriptor, or of no bytes: dropped at once
wire drop_now = decide && (cmd_closed || (ready_to_take && take_len == 13'd0));
wire start = decide && !cmd_closed && ready_to_take && take_len != 13'd0;

wire [LOG_BYTES-1:0] j_out_lane = HDR_LANE[LOG_BYTES-1:0] + {{(LOG_BYTES-2){1'b0}}, j_pcie_reg[1:0]};
wire [LOG_BYTES-1:0] j_end_lane = j_in_lane_reg + j_len_reg[LOG_BYTES-1:0];

wire job_done;
wire [DATA_WIDTH-1:0] al_data;
wire al_first, al_last, al_valid;
wire al_in_ready;
wire unused_al = ^{al_first, al_last};

pevb_realign #(
    .DATA_WIDTH(DATA_WIDTH),
    .COUNT_WIDTH(CW)
) realign_inst (
    .clk(clk),
    .rst(rst),
    .job_valid(job_active_reg),
    .job_done(job_done),
    .job_shift(j_out_lane - j_in_lane_reg),
    .job_shift_neg(j_out_lane < j_in_lane_reg),
    .job_in_beats(j_in_beats_reg),
    .job_out_beats(span(j_out_lane, j_len_reg)),
    .s_data(in_mem[in_rd_ptr_reg[LOG_ID-1:0]]),
    .s_valid(in_used != {(LOG_ID+1){1'b0}}),
    .s_ready(al_in_ready),
    .m_data(al_data),
    .m_first(al_first),
    .m_last(al_last),
    .m_valid(al_valid),
    .m_ready(pay_room)
);

// the TLP's last input beat stays when the next TLP continues in it
wire feed = al_in_ready && in_used != {(LOG_ID+1){1'b0}};
wire feed_last = j_fed_reg == j_in_beats_reg - 1'b1;
wire in_pop_job = feed && (!feed_last || j_pop_last_reg);
// a dropped command at the end of its packet (no bytes left) takes the end beat
wire in_pop_drop = drop_now && !cmd_closed && ends_packet;
wire in_pop = in_pop_job || in_pop_drop;
wire mark_pop = (in_pop_job && in_rd_ptr_reg == mark_ptr && have_mark) || in_pop_drop;

assign m_end_valid = job_done || (drop_now && !cmd_closed);
assign m_end_slot = job_done ? j_slot_reg : cmd_slot_mem[cmd_idx];
assign m_end_len = job_done ? j_len_reg : 13'd0;
assign m_end_eop = job_done ? j_eop_reg : ends_packet;

/* the TLP queue: a TLP in when its payload is complete, or a command dropped */
pevb_tlp_queue #(
    .DEPTH(TQ_DEPTH)
) tlp_queue_inst (
    .clk(clk),
    .rst(rst),
    .s_push(job_done || drop_now),
    .s_addr(job_done ? j_pcie_reg : cmd_pcie_mem[cmd_idx]),
    .s_len(m_end_len),
    .s_slot(m_end_slot),
    .s_drop(!job_done),
    .s_err(5'd0),
`include "pevb_tlp_out_map.vh"
    .full(tq_full)
);

// Every register update below needs one of these (a clock enable): event-driven simulators
// skip the block on idle cycles.
wire wake = rst || cmd_push || in_push || in_pop || mark_pop || decide || drop_now || start || feed ||
            (al_valid && pay_room) || job_done || pay_rd_en;

always @(posedge clk) begin
    if (wake) begin
        if (cmd_push) begin
            cmd_pcie_mem[cmd_wr_ptr_reg[LOG_CD-1:0]] <= s_cmd_pcie_addr;
            cmd_len_mem[cmd_wr_ptr_reg[LOG_CD-1:0]] <= s_cmd_len;
            cmd_slot_mem[cmd_wr_ptr_reg[LOG_CD-1:0]] <= s_cmd_slot;
            cmd_first_mem[cmd_wr_ptr_reg[LOG_CD-1:0]] <= s_cmd_first;
            cmd_wr_ptr_reg <= cmd_wr_ptr_reg + 1'b1;
        end

        if (in_push) begin
            in_mem[in_wr_ptr_reg[LOG_ID-1:0]] <= s_axis_tdata;
            in_wr_ptr_reg <= in_wr_ptr_reg + 1'b1;
            if (s_axis_tlast) begin
                mark_ptr_mem[mark_wr_ptr_reg[LOG_MD-1:0]] <= in_wr_ptr_reg;
                mark_nb_mem[mark_wr_ptr_reg[LOG_MD-1:0]] <= tkeep_bytes;
                mark_wr_ptr_reg <= mark_wr_ptr_reg + 1'b1;
            end
        end
        if (in_pop) begin
            in_rd_ptr_reg <= in_rd_ptr_reg + 1'b1;
        end
        if (mark_pop) begin
            mark_rd_ptr_reg <= mark_rd_ptr_reg + 1'b1;
        end

        if (decide) begin
            // a descriptor's first TLP opens it to the next packet
            if (cmd_first_mem[cmd_idx]) begin
                closed_reg <= 1'b0;
            end
        end
        if (drop_now || start) begin
            cmd_rd_ptr_reg <= cmd_rd_ptr_reg + 1'b1;
        end
        if (drop_now) begin
            if (in_pop_drop) begin
                in_lane_reg <= {LOG_BYTES{1'b0}};
                closed_reg <= 1'b1;
            end
        end
        if (start) begin
            job_active_reg <= 1'b1;
            j_pcie_reg <= cmd_pcie_mem[cmd_idx];
            j_len_reg <= take_len;
            j_slot_reg <= cmd_slot_mem[cmd_idx];
            j_eop_reg <= ends_packet;
            j_pop_last_reg <= ends_packet || (in_lane_reg + take_len[LOG_BYTES-1:0]) == {LOG_BYTES{1'b0}};
            j_in_lane_reg <= in_lane_reg;
            j_in_beats_reg <= span(in_lane_reg, take_len);
            j_fed_reg <= {CW{1'b0}};
        end
        if (feed) begin
            j_fed_reg <= j_fed_reg + 1'b1;
        end

        if (al_valid && pay_room) begin
            pay_mem[pay_wr_ptr_reg[LOG_PD-1:0]] <= al_data;
            pay_wr_ptr_reg <= pay_wr_ptr_reg + 1'b1;
        end
        if (job_done) begin
            job_active_reg <= 1'b0;
            in_lane_reg <= j_eop_reg ? {LOG_BYTES{1'b0}} : j_end_lane;
            if (j_eop_reg) begin
                closed_reg <= 1'b1;
            end
        end

        if (pay_rd_en) begin
            pay_rd_data_reg <= pay_mem[pay_rd_ptr_reg[LOG_PD-1:0]];
            pay_rd_ptr_reg <= pay_rd_ptr_reg + 1'b1;
        end

        if (rst) begin
            cmd_wr_ptr_reg <= {(LOG_CD+1){1'b0}};
            cmd_rd_ptr_reg <= {(LOG_CD+1){1'b0}};
            in_wr_ptr_reg <= {(LOG_ID+1){1'b0}};
            in_rd_ptr_reg <= {(LOG_ID+1){1'b0}};
            mark_wr_ptr_reg <= {(LOG_MD+1){1'b0}};
            mark_rd_ptr_reg <= {(LOG_MD+1){1'b0}};
            pay_wr_ptr_reg <= {(LOG_PD+1){1'b0}};
            pay_rd_ptr_reg <= {(LOG_PD+1){1'b0}};
            pay_rd_data_reg <= {DATA_WIDTH{1'b0}};
            in_lane_reg <= {LOG_BYTES{1'b0}};
            closed_reg <= 1'b0;
            job_active_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
