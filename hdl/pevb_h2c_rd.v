// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * H2C data mover: turns descriptors (PCIe source, card destination, length)
 * into memory read requests split at MRRS boundaries (hence never across
 * 4 KiB), with up to SLOTS descriptors in flight.  pevb_rc_rx turns each
 * completion into an AXI write job for pevb_axi_wr; this block counts
 * outstanding tags and unacknowledged write jobs per descriptor and reports
 * descriptors done strictly in order.  A completion error fails the descriptor
 * with the read_error bits, an AXI write error (SLVERR/DECERR) with the
 * write_error bits; either aborts the descriptors behind it (reported with
 * m_done_abort) and discards their data.
 *
 * Stream channels (STREAM = 1): the destination is ignored; the data goes to
 * the channel's ring buffer (pevb_h2c_stream) at consecutive stream positions,
 * so bytes of consecutive descriptors pack together and a packet (ended by a
 * descriptor with EOP) is followed by a gap to the next beat.  A descriptor
 * is cut into chunks of at most CHUNK_BYTES, each taking a slot and ring room
 * before its reads go out; every chunk written, in order, moves the stream's
 * complete position (m_seg_*).  A restart after an error starts the next
 * packet on the beat after the last complete byte (m_truncate).
 */
module pevb_h2c_rd #
(
    // card (AXI) address width
    parameter ADDR_WIDTH = 64,
    // read tags this mover may hold at once (1 to 32): no read is requested
    // while that many are outstanding
    parameter MAX_TAGS = 32,
    // stream channel: data to the ring buffer instead of the card address
    parameter STREAM = 0,
    // stream: chunk size, ring size (bytes, powers of two) and stream beat size
    parameter CHUNK_BYTES = 4096,
    parameter RING_BYTES = 16384,
    parameter BEAT_BYTES = 8
)
(
    input  wire                      clk,
    input  wire                      rst,

    input  wire                      restart,
    input  wire [2:0]                mrrs_enc,

`include "pevb_mover_ports.vh"

    /* Read requests */
    output wire                      m_rd_valid,
    input  wire                      m_rd_ready,
    output wire [63:0]               m_rd_addr,
    output wire [12:0]               m_rd_len,
    output wire [ADDR_WIDTH-1:0]     m_rd_info,
    output wire [1:0]                m_rd_slot,

    /* Tag retirement for H2C data */
    input  wire                      retire_valid,
    input  wire [1:0]                retire_slot,
    input  wire [4:0]                retire_err,

    /* AXI write jobs: one per completion, done when its writes are acknowledged */
    input  wire                      job_valid,
    input  wire [1:0]                job_slot,
    input  wire                      job_done_valid,
    input  wire [1:0]                job_done_slot,
    input  wire [4:0]                job_done_err,

    // per-slot discard of completion data (failed or aborted descriptors)
    output wire [3:0]                discard,

    /* Stream ring (STREAM = 1): the drain's read position and complete position */
    input  wire [31:0]               ring_rd_pos,
    input  wire [31:0]               ring_done_pos,
    // room for more packet ends
    input  wire                      ring_marks_ok,
    // a chunk written: the stream is complete up to seg_end, a packet ends there
    output wire                      m_seg_valid,
    output wire [31:0]               m_seg_end,
    output wire                      m_seg_eop,
    // restart after an error: the packet in progress ends at the complete position
    output wire                      m_truncate
);

localparam SLOTS = 4;

localparam [4:0] WERR_DECODE = `PEVB_AXI_ERR_DECODE;
localparam [31:0] CHUNK_W = CHUNK_BYTES;
localparam [31:0] RING_W = RING_BYTES;
localparam [31:0] BEAT_M1 = BEAT_BYTES - 1;
localparam DESC_EOP = 2;

initial begin
    if (MAX_TAGS < 1 || MAX_TAGS > 32) begin
        $error("Error: MAX_TAGS must be 1 to 32 (instance %m)");
        $finish;
    end
    if (STREAM != 0 && (CHUNK_BYTES < 128 || (CHUNK_BYTES & (CHUNK_BYTES - 1)) != 0 ||
                        RING_BYTES < 4*CHUNK_BYTES || (RING_BYTES & (RING_BYTES - 1)) != 0)) begin
        $error("Error: CHUNK_BYTES and RING_BYTES must be powers of two, RING_BYTES >= 4*CHUNK_BYTES (instance %m)");
        $finish;
    end
end

reg [2:0] head_reg;
reg [2:0] tail_reg;
reg [5:0] slot_cnt_reg [0:SLOTS-1];
reg [9:0] slot_jobs_reg [0:SLOTS-1];
reg [SLOTS-1:0] slot_issued_reg;
reg [SLOTS-1:0] slot_abort_reg;
reg [4:0] slot_rd_err_reg [0:SLOTS-1];
reg [4:0] slot_wr_err_reg [0:SLOTS-1];
reg [2:0] slot_flags_reg [0:SLOTS-1];
// stream: the descriptor's last chunk (reports done), the chunk's end position
reg [SLOTS-1:0] slot_last_reg;
reg [31:0] slot_end_reg [0:SLOTS-1];

// the descriptor being issued; its current chunk holds slot cur_slot_reg while
// cur_chunk_reg is set (always, for memory-mapped channels)
reg cur_active_reg;
reg cur_chunk_reg;
reg [1:0] cur_slot_reg;
reg [63:0] cur_addr_reg;
reg [ADDR_WIDTH-1:0] cur_card_reg;
reg [27:0] cur_rem_reg;
reg [27:0] cur_chunk_rem_reg;
reg [2:0] cur_flags_reg;

// stream: next ring position to hand out
reg [31:0] pos_reg;

reg abort_reg;

wire [2:0] used_slots = tail_reg - head_reg;
wire full = used_slots == 3'd4;
wire empty = head_reg == tail_reg;
wire [1:0] head = head_reg[1:0];
wire [1:0] tail = tail_reg[1:0];

wire [2:0] mrrs_e = mrrs_enc > 3'd5 ? 3'd5 : mrrs_enc;
wire [12:0] mrrs = 13'd128 << mrrs_e;
wire [12:0] to_boundary = mrrs - ({1'b0, cur_addr_reg[11:0]} & (mrrs - 13'd1));
wire [12:0] rd_len = cur_chunk_rem_reg < {15'd0, to_boundary} ? cur_chunk_rem_reg[12:0] : to_boundary;
wire rd_last = cur_chunk_rem_reg == {15'd0, rd_len};

// a destination beyond the AXI address space fails (decode) before anything moves
// (a stream channel has no destination)
wire [64:0] dst_last = {1'b0, s_desc_dst} + {37'd0, s_desc_len} - 65'd1;
wire dst_ok = STREAM != 0 || (dst_last >> ADDR_WIDTH) == 65'd0;

/* stream chunks: the next chunk of len bytes needs a free slot and ring room
   for it plus the gap a packet end may leave */
wire [27:0] next_len = cur_active_reg ? cur_rem_reg : s_desc_len;
wire [31:0] chunk_len = {4'd0, next_len} < CHUNK_W ? {4'd0, next_len} : CHUNK_W;
wire ring_room = STREAM == 0 ||
                 (ring_marks_ok && (pos_reg - ring_rd_pos) + chunk_len + BEAT_M1 + 32'd1 <= RING_W);
wire next_last = {4'd0, next_len} == chunk_len;

function [31:0] round_up;
    input [31:0] p;
    begin
        round_up = (p + BEAT_M1) & ~BEAT_M1;
    end
endfunction

assign s_desc_ready = !cur_active_reg && !full && ring_room;
wire accept = s_desc_valid && s_desc_ready;
// the next chunk of the current descriptor (stream)
wire cont = cur_active_reg && !cur_chunk_reg && !full && ring_room && !abort_reg;

// read tags outstanding: the sum of the descriptor slots' counts
wire [7:0] tags_held = {2'd0, slot_cnt_reg[0]} + {2'd0, slot_cnt_reg[1]} +
                       {2'd0, slot_cnt_reg[2]} + {2'd0, slot_cnt_reg[3]};
localparam [7:0] MAX_TAGS_W = MAX_TAGS[7:0];

assign m_rd_valid = cur_active_reg && cur_chunk_reg && !abort_reg && tags_held < MAX_TAGS_W;
assign m_rd_addr = cur_addr_reg;
assign m_rd_len = rd_len;
assign m_rd_info = cur_card_reg;
assign m_rd_slot = cur_slot_reg;
wire issue = m_rd_valid && m_rd_ready;

wire head_done = !empty && slot_issued_reg[head] && slot_cnt_reg[head] == 6'd0 &&
                 slot_jobs_reg[head] == 10'd0;
assign m_done_valid = head_done && slot_last_reg[head];
assign m_done_flags = slot_flags_reg[head];
assign m_done_rd_err = slot_rd_err_reg[head];
assign m_done_wr_err = slot_wr_err_reg[head];
assign m_done_abort = slot_abort_reg[head];

wire [SLOTS-1:0] slot_failed;
genvar gf;
generate
    for (gf = 0; gf < SLOTS; gf = gf + 1) begin : failed
        assign slot_failed[gf] = slot_rd_err_reg[gf] != 5'd0 || slot_wr_err_reg[gf] != 5'd0;
    end
endgenerate
assign discard = slot_abort_reg | slot_failed;

assign m_seg_valid = STREAM != 0 && head_done && !slot_failed[head] && !slot_abort_reg[head];
assign m_seg_end = slot_end_reg[head];
assign m_seg_eop = slot_last_reg[head] && slot_flags_reg[head][DESC_EOP];
assign m_truncate = STREAM != 0 && restart && abort_reg;

// ring distance from the head: occupied slots behind a failing one are aborted
wire rd_fail = retire_valid && retire_err != 5'd0;
wire wr_fail = job_done_valid && job_done_err != 5'd0;
wire [1:0] rd_fail_dist = retire_slot - head;
wire [1:0] wr_fail_dist = job_done_slot - head;
wire [SLOTS-1:0] behind_fail;
genvar gd;
generate
    for (gd = 0; gd < SLOTS; gd = gd + 1) begin : ring
        localparam [1:0] D = gd;
        wire [1:0] ring_dist = D - head;
        assign behind_fail[gd] = {1'b0, ring_dist} < used_slots &&
                                 ((rd_fail && ring_dist > rd_fail_dist) || (wr_fail && ring_dist > wr_fail_dist));
    end
endgenerate

// a new chunk (first of an accepted descriptor, or the next one) takes the tail slot
wire new_chunk = (accept && dst_ok && !abort_reg) || cont;
wire [2:0] new_flags = accept ? s_desc_flags : cur_flags_reg;
wire [31:0] new_end = pos_reg + chunk_len;
wire [63:0] pos_ext = {32'd0, pos_reg};
wire unused_pos_ext = ^pos_ext[63:32];

integer s;
// Every register update below is under one of these conditions: the block runs only
// when one holds (a clock enable), and event-driven simulators skip it on idle cycles.
wire wake = rst || issue || retire_valid || job_valid || job_done_valid || rd_fail ||
            wr_fail || head_done || accept || new_chunk ||
            (cur_active_reg && abort_reg && (cur_chunk_reg || !full)) || restart;

always @(posedge clk) begin
    if (wake) begin
        // (the test outside the loop is the same logic; event-driven simulators then skip the
        // per-slot loop on cycles where no count moves)
        if (issue || retire_valid || job_valid || job_done_valid) begin
            for (s = 0; s < SLOTS; s = s + 1) begin
                slot_cnt_reg[s] <= slot_cnt_reg[s]
                    + ((issue && cur_slot_reg == s[1:0]) ? 6'd1 : 6'd0)
                    - ((retire_valid && retire_slot == s[1:0]) ? 6'd1 : 6'd0);
                slot_jobs_reg[s] <= slot_jobs_reg[s]
                    + ((job_valid && job_slot == s[1:0]) ? 10'd1 : 10'd0)
                    - ((job_done_valid && job_done_slot == s[1:0]) ? 10'd1 : 10'd0);
            end
        end

        if (rd_fail) begin
            slot_rd_err_reg[retire_slot] <= slot_rd_err_reg[retire_slot] | retire_err;
        end
        if (wr_fail) begin
            slot_wr_err_reg[job_done_slot] <= slot_wr_err_reg[job_done_slot] | job_done_err;
        end
        if (rd_fail || wr_fail) begin
            abort_reg <= 1'b1;
            slot_abort_reg <= slot_abort_reg | behind_fail;
        end

        if (head_done) begin
            head_reg <= head_reg + 3'd1;
        end

        if (accept) begin
            if (!dst_ok || abort_reg) begin
                // nothing moves: one slot reports the descriptor
                tail_reg <= tail_reg + 3'd1;
                slot_flags_reg[tail] <= s_desc_flags;
                slot_rd_err_reg[tail] <= 5'd0;
                slot_wr_err_reg[tail] <= dst_ok ? 5'd0 : WERR_DECODE;
                slot_abort_reg[tail] <= abort_reg;
                slot_issued_reg[tail] <= 1'b1;
                slot_last_reg[tail] <= 1'b1;
                slot_end_reg[tail] <= pos_reg;
                if (!dst_ok) begin
                    abort_reg <= 1'b1;
                end
            end else begin
                cur_active_reg <= 1'b1;
                cur_addr_reg <= s_desc_src;
                cur_card_reg <= STREAM != 0 ? pos_ext[ADDR_WIDTH-1:0] : s_desc_dst[ADDR_WIDTH-1:0];
                cur_rem_reg <= s_desc_len;
                cur_flags_reg <= s_desc_flags;
            end
        end

        if (new_chunk) begin
            tail_reg <= tail_reg + 3'd1;
            slot_flags_reg[tail] <= new_flags;
            slot_rd_err_reg[tail] <= 5'd0;
            slot_wr_err_reg[tail] <= 5'd0;
            slot_abort_reg[tail] <= 1'b0;
            slot_issued_reg[tail] <= 1'b0;
            cur_chunk_reg <= 1'b1;
            cur_slot_reg <= tail;
            if (STREAM != 0) begin
                slot_last_reg[tail] <= next_last;
                slot_end_reg[tail] <= new_end;
                cur_chunk_rem_reg <= chunk_len[27:0];
                pos_reg <= (next_last && new_flags[DESC_EOP]) ? round_up(new_end) : new_end;
            end else begin
                slot_last_reg[tail] <= 1'b1;
                cur_chunk_rem_reg <= s_desc_len;
            end
        end

        if (issue) begin
            cur_addr_reg <= cur_addr_reg + {51'd0, rd_len};
            cur_card_reg <= cur_card_reg + {{(ADDR_WIDTH-13){1'b0}}, rd_len};
            cur_rem_reg <= cur_rem_reg - {15'd0, rd_len};
            cur_chunk_rem_reg <= cur_chunk_rem_reg - {15'd0, rd_len};
            if (rd_last) begin
                cur_chunk_reg <= 1'b0;
                slot_issued_reg[cur_slot_reg] <= 1'b1;
                if (cur_rem_reg == {15'd0, rd_len}) begin
                    cur_active_reg <= 1'b0;
                end
            end
        end else if (cur_active_reg && abort_reg && (cur_chunk_reg || !full)) begin
            // stop issuing the rest of an aborted descriptor; its last chunk reports it
            cur_active_reg <= 1'b0;
            cur_chunk_reg <= 1'b0;
            if (cur_chunk_reg) begin
                slot_issued_reg[cur_slot_reg] <= 1'b1;
                slot_last_reg[cur_slot_reg] <= 1'b1;
                if (!slot_failed[cur_slot_reg]) begin
                    slot_abort_reg[cur_slot_reg] <= 1'b1;
                end
            end else begin
                // between chunks: one more slot reports the descriptor aborted
                tail_reg <= tail_reg + 3'd1;
                slot_flags_reg[tail] <= cur_flags_reg;
                slot_rd_err_reg[tail] <= 5'd0;
                slot_wr_err_reg[tail] <= 5'd0;
                slot_abort_reg[tail] <= 1'b1;
                slot_issued_reg[tail] <= 1'b1;
                slot_last_reg[tail] <= 1'b1;
            end
        end

        if (restart) begin
            abort_reg <= 1'b0;
            if (STREAM != 0 && abort_reg) begin
                pos_reg <= round_up(ring_done_pos);
            end
        end

        if (rst) begin
            head_reg <= 3'd0;
            tail_reg <= 3'd0;
            slot_issued_reg <= {SLOTS{1'b0}};
            slot_abort_reg <= {SLOTS{1'b0}};
            slot_last_reg <= {SLOTS{1'b0}};
            cur_active_reg <= 1'b0;
            cur_chunk_reg <= 1'b0;
            abort_reg <= 1'b0;
            pos_reg <= 32'd0;
            for (s = 0; s < SLOTS; s = s + 1) begin
                slot_cnt_reg[s] <= 6'd0;
                slot_jobs_reg[s] <= 10'd0;
            end
        end
    end
end

endmodule

`resetall
