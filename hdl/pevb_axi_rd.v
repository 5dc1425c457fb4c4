// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * C2H read side of the AXI4 memory-mapped master.  Each C2H memory write TLP
 * (PCIe address, length, card address, descriptor slot) is read from AXI as
 * INCR bursts of at most 256 beats that never cross 4 KiB, with several
 * bursts outstanding; the data is realigned to the TLP's DWORD layout (the
 * payload after the 4 DWORD requester descriptor) into a payload buffer.  A TLP
 * is handed to the requester only once its whole payload is buffered, so TLPs
 * leave without gaps.  A read answered with SLVERR/DECERR drops its TLP
 * (nothing of it is written) and every TLP after it until restart; drops are
 * reported with the XDMA read_error code.
 */
module pevb_axi_rd #
(
    // AXI data width (the PCIe datapath width)
    parameter DATA_WIDTH = 64,
    // AXI address width
    parameter ADDR_WIDTH = 64,
    // AXI ID width and the ID this channel uses
    parameter ID_WIDTH = 4,
    parameter [ID_WIDTH-1:0] AXI_ID = {ID_WIDTH{1'b0}},
    // TLP commands buffered (power of two)
    parameter CMD_DEPTH = 16,
    // payload beats buffered (power of two, more than two 4 KiB TLPs)
    parameter PAY_DEPTH = 16384/(DATA_WIDTH/8),
    // read bursts outstanding
    parameter BURSTS = 16
)
(
    input  wire                      clk,
    input  wire                      rst,

    // a channel restart clears the drop state left by an error
    input  wire                      restart,

    /* TLP commands */
    input  wire                      s_cmd_valid,
    output wire                      s_cmd_ready,
    input  wire [63:0]               s_cmd_pcie_addr,
    input  wire [12:0]               s_cmd_len,
    input  wire [ADDR_WIDTH-1:0]     s_cmd_card_addr,
    input  wire [1:0]                s_cmd_slot,

`include "pevb_tlp_out_ports.vh"

    /* Payload beats in TLP layout, read like a RAM (data the cycle after rd_en) */
    input  wire                      pay_rd_en,
    output wire [DATA_WIDTH-1:0]     pay_rd_data,

    /* AXI4 read channels */
    output wire [ID_WIDTH-1:0]       m_axi_arid,
    output wire [ADDR_WIDTH-1:0]     m_axi_araddr,
    output wire [7:0]                m_axi_arlen,
    output wire [2:0]                m_axi_arsize,
    output wire [1:0]                m_axi_arburst,
    output wire                      m_axi_arlock,
    output wire [3:0]                m_axi_arcache,
    output wire [2:0]                m_axi_arprot,
    output wire                      m_axi_arvalid,
    input  wire                      m_axi_arready,
    input  wire [ID_WIDTH-1:0]       m_axi_rid,
    input  wire [DATA_WIDTH-1:0]     m_axi_rdata,
    input  wire [1:0]                m_axi_rresp,
    input  wire                      m_axi_rlast,
    input  wire                      m_axi_rvalid,
    output wire                      m_axi_rready
);

localparam BYTES = DATA_WIDTH/8;
localparam LOG_BYTES = $clog2(BYTES);
localparam WORD_WIDTH = ADDR_WIDTH - LOG_BYTES;
localparam BURST_BYTES = BYTES*256 < 4096 ? BYTES*256 : 4096;
localparam LOG_BW = $clog2(BURST_BYTES/BYTES);
localparam CW = 14;
localparam [31:0] BYTES_M1 = BYTES - 1;
localparam [31:0] HDR_LANE = 16 % BYTES;
localparam LOG_CD = $clog2(CMD_DEPTH);
localparam LOG_PD = $clog2(PAY_DEPTH);
localparam TQ_DEPTH = 16;

localparam [1:0] RESP_SLVERR = 2'b10;
localparam [1:0] RESP_DECERR = 2'b11;

initial begin
    if ((1 << LOG_CD) != CMD_DEPTH || (1 << LOG_PD) != PAY_DEPTH) begin
        $error("Error: CMD_DEPTH and PAY_DEPTH must be powers of two (instance %m)");
        $finish;
    end
    if (PAY_DEPTH*BYTES < 8192 + 2*BYTES) begin
        $error("Error: PAY_DEPTH must hold two 4 KiB TLPs (instance %m)");
        $finish;
    end
end

`include "pevb_span.vh"

/* command queue: read by the address side and by the realigner */
reg [63:0] cmd_pcie_mem [0:CMD_DEPTH-1];
reg [12:0] cmd_len_mem [0:CMD_DEPTH-1];
reg [ADDR_WIDTH-1:0] cmd_card_mem [0:CMD_DEPTH-1];
reg [1:0] cmd_slot_mem [0:CMD_DEPTH-1];
reg [LOG_CD:0] cmd_wr_ptr_reg;
reg [LOG_CD:0] cmd_ar_ptr_reg;
reg [LOG_CD:0] cmd_al_ptr_reg;

// (differences in the pointers' own width: wrapped pointers must not widen)
wire [LOG_CD:0] cmd_used = cmd_wr_ptr_reg - cmd_al_ptr_reg;
assign s_cmd_ready = !cmd_used[LOG_CD];
wire cmd_push = s_cmd_valid && s_cmd_ready;

/* address side */
reg ar_active_reg;
reg [WORD_WIDTH-1:0] ar_word_reg;
reg [CW-1:0] ar_rem_reg;
reg [4:0] ar_out_reg;  // bursts whose last beat has not arrived

wire [LOG_CD-1:0] ar_idx = cmd_ar_ptr_reg[LOG_CD-1:0];
wire ar_cmd_avail = cmd_ar_ptr_reg != cmd_wr_ptr_reg;
wire [ADDR_WIDTH-1:0] ar_cmd_card = cmd_card_mem[ar_idx];
wire [WORD_WIDTH-1:0] a_word = ar_active_reg ? ar_word_reg : ar_cmd_card[ADDR_WIDTH-1:LOG_BYTES];
wire [CW-1:0] a_rem = ar_active_reg ? ar_rem_reg : span(ar_cmd_card[LOG_BYTES-1:0], cmd_len_mem[ar_idx]);
wire [CW-1:0] a_room = (1 << LOG_BW) - {{(CW-LOG_BW){1'b0}}, a_word[LOG_BW-1:0]};
wire [CW-1:0] a_len = a_rem < a_room ? a_rem : a_room;
wire a_last = a_rem == a_len;

assign m_axi_arid = AXI_ID;
assign m_axi_araddr = {a_word, {LOG_BYTES{1'b0}}};
assign m_axi_arlen = a_len[7:0] - 8'd1;
assign m_axi_arsize = LOG_BYTES[2:0];
assign m_axi_arburst = 2'b01;
assign m_axi_arlock = 1'b0;
assign m_axi_arcache = 4'b0011;
assign m_axi_arprot = 3'b000;
assign m_axi_arvalid = (ar_active_reg || ar_cmd_avail) && ar_out_reg < BURSTS;
wire ar_fire = m_axi_arvalid && m_axi_arready;

/* TLP queue (pevb_tlp_queue, below): commands whose payload is complete (or dropped) */
wire tq_full;

/* payload buffer: written up to wr_tmp, visible up to wr (committed TLPs) */
reg [DATA_WIDTH-1:0] pay_mem [0:PAY_DEPTH-1];
reg [LOG_PD:0] pay_wr_ptr_reg;
reg [LOG_PD:0] pay_tmp_ptr_reg;
reg [LOG_PD:0] pay_rd_ptr_reg;
reg [DATA_WIDTH-1:0] pay_rd_data_reg;
wire [LOG_PD:0] pay_used = pay_tmp_ptr_reg - pay_rd_ptr_reg;
wire pay_room = !pay_used[LOG_PD];

/* realigner: card words in, TLP beats out (payload from TLP beat 16 / BYTES on) */
wire [LOG_CD-1:0] al_idx = cmd_al_ptr_reg[LOG_CD-1:0];
wire al_cmd_avail = cmd_al_ptr_reg != cmd_wr_ptr_reg;
wire [63:0] al_pcie = cmd_pcie_mem[al_idx];
wire [12:0] al_len = cmd_len_mem[al_idx];
wire [ADDR_WIDTH-1:0] al_card = cmd_card_mem[al_idx];
wire [LOG_BYTES-1:0] in_lane = al_card[LOG_BYTES-1:0];
// lane of the first payload byte: 16 + address[1:0], modulo the lanes
wire [LOG_BYTES-1:0] out_lane = HDR_LANE[LOG_BYTES-1:0] + {{(LOG_BYTES-2){1'b0}}, al_pcie[1:0]};
// only the lanes matter to the realigner (the address side reads the words)
wire unused_al_card = ^al_card[ADDR_WIDTH-1:LOG_BYTES];

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
    .job_valid(al_cmd_avail),
    .job_done(job_done),
    .job_shift(out_lane - in_lane),
    .job_shift_neg(out_lane < in_lane),
    .job_in_beats(span(in_lane, al_len)),
    .job_out_beats(span(out_lane, al_len)),
    .s_data(m_axi_rdata),
    .s_valid(m_axi_rvalid),
    .s_ready(al_in_ready),
    .m_data(al_data),
    .m_first(al_first),
    .m_last(al_last),
    .m_valid(al_valid),
    .m_ready(pay_room && !tq_full)
);

assign m_axi_rready = al_in_ready;
wire r_fire = m_axi_rvalid && al_in_ready;
wire [4:0] r_err = m_axi_rresp == RESP_DECERR ? `PEVB_AXI_ERR_DECODE :
                   m_axi_rresp == RESP_SLVERR ? `PEVB_AXI_ERR_SLAVE : 5'd0;
// single ID, bursts in order; rlast only closes the outstanding count
wire unused_rid = ^m_axi_rid;
wire pay_fire = al_valid && pay_room && !tq_full;

reg [4:0] job_err_reg;
reg drop_reg;
wire [4:0] job_err = job_err_reg | (r_fire ? r_err : 5'd0);
wire job_bad = drop_reg || job_err != 5'd0;

assign pay_rd_data = pay_rd_data_reg;

/* the TLP queue: a TLP in as its last beat is realigned */
pevb_tlp_queue #(
    .DEPTH(TQ_DEPTH)
) tlp_queue_inst (
    .clk(clk),
    .rst(rst),
    .s_push(job_done),
    .s_addr(al_pcie),
    .s_len(al_len),
    .s_slot(cmd_slot_mem[al_idx]),
    .s_drop(job_bad),
    .s_err(job_err),
`include "pevb_tlp_out_map.vh"
    .full(tq_full)
);

// Every register update below is under one of these conditions (the outstanding read
// count moves only on ar_fire or r_fire): the block runs only when one holds (a clock
// enable), and event-driven simulators skip it on idle cycles.
wire wake = rst || cmd_push || ar_fire || r_fire || pay_fire || job_done || pay_rd_en ||
            restart;
// a finer enable inside it: the command side moves once per burst, the data side on every
// beat (a streaming block is awake, and reads each condition)
wire r_burst_end = r_fire && m_axi_rlast;
wire ar_out_move = ar_fire || r_burst_end;
wire [4:0] ar_out_next = ar_out_reg + (ar_fire ? 5'd1 : 5'd0) - (r_burst_end ? 5'd1 : 5'd0);
wire cmd_wake = cmd_push || ar_out_move;

always @(posedge clk) begin
    if (wake) begin
        if (cmd_wake) begin
            if (cmd_push) begin
                cmd_pcie_mem[cmd_wr_ptr_reg[LOG_CD-1:0]] <= s_cmd_pcie_addr;
                cmd_len_mem[cmd_wr_ptr_reg[LOG_CD-1:0]] <= s_cmd_len;
                cmd_card_mem[cmd_wr_ptr_reg[LOG_CD-1:0]] <= s_cmd_card_addr;
                cmd_slot_mem[cmd_wr_ptr_reg[LOG_CD-1:0]] <= s_cmd_slot;
                cmd_wr_ptr_reg <= cmd_wr_ptr_reg + 1'b1;
            end

            if (ar_fire) begin
                if (a_last) begin
                    ar_active_reg <= 1'b0;
                    cmd_ar_ptr_reg <= cmd_ar_ptr_reg + 1'b1;
                end else begin
                    ar_active_reg <= 1'b1;
                    ar_word_reg <= a_word + {{(WORD_WIDTH-CW){1'b0}}, a_len};
                    ar_rem_reg <= a_rem - a_len;
                end
            end
            if (ar_out_move) begin
                ar_out_reg <= ar_out_next;
            end
        end

        if (r_fire) begin
            job_err_reg <= job_err;
        end
        if (pay_fire) begin
            pay_mem[pay_tmp_ptr_reg[LOG_PD-1:0]] <= al_data;
            pay_tmp_ptr_reg <= pay_tmp_ptr_reg + 1'b1;
        end
        if (job_done) begin
            cmd_al_ptr_reg <= cmd_al_ptr_reg + 1'b1;
            job_err_reg <= 5'd0;
            if (job_bad) begin
                // forget the TLP's payload; drop everything after it until restart
                pay_tmp_ptr_reg <= pay_wr_ptr_reg;
                drop_reg <= 1'b1;
            end else begin
                pay_wr_ptr_reg <= pay_tmp_ptr_reg + 1'b1;
            end
        end

        if (pay_rd_en) begin
            pay_rd_data_reg <= pay_mem[pay_rd_ptr_reg[LOG_PD-1:0]];
            pay_rd_ptr_reg <= pay_rd_ptr_reg + 1'b1;
        end

        if (restart) begin
            drop_reg <= 1'b0;
        end

        if (rst) begin
            cmd_wr_ptr_reg <= {(LOG_CD+1){1'b0}};
            cmd_ar_ptr_reg <= {(LOG_CD+1){1'b0}};
            cmd_al_ptr_reg <= {(LOG_CD+1){1'b0}};
            ar_active_reg <= 1'b0;
            ar_out_reg <= 5'd0;
            pay_wr_ptr_reg <= {(LOG_PD+1){1'b0}};
            pay_tmp_ptr_reg <= {(LOG_PD+1){1'b0}};
            pay_rd_ptr_reg <= {(LOG_PD+1){1'b0}};
            // (the requester puts these lanes on the bus in beats that carry no payload)
            pay_rd_data_reg <= {DATA_WIDTH{1'b0}};
            job_err_reg <= 5'd0;
            drop_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
