// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * C2H data mover: turns descriptors (card source, PCIe destination, length)
 * into memory write TLP commands split at MPS boundaries (hence never across
 * 4 KiB), with up to SLOTS descriptors in flight; pevb_axi_rd reads each TLP's
 * payload from the AXI4 master.  A descriptor is done when every TLP of it has
 * left on RQ or was dropped; done is reported strictly in order.  A dropped TLP
 * with a read error (AXI SLVERR/DECERR) fails its descriptor with the
 * read_error bits and aborts the descriptors behind it (reported with
 * m_done_abort).
 *
 * Stream channels (STREAM = 1): the payload comes from pevb_axis_rd, and the
 * descriptor's source address is where its result goes.  A descriptor ends
 * early at the end of its packet (the TLP commands not yet issued are not; the
 * reader drops those it holds).  Unless stream write-back is disabled (control
 * bit 27), a descriptor done without error first writes its result, {length,
 * 0x52B4 << 16 | EOP} (8 bytes), to the source address.
 */
module pevb_c2h_wr #
(
    // card (AXI) address width
    parameter ADDR_WIDTH = 64,
    // stream channel: payload from the stream, results written back
    parameter STREAM = 0
)
(
    input  wire                      clk,
    input  wire                      rst,

    input  wire                      restart,
    input  wire [2:0]                mps_enc,

`include "pevb_mover_ports.vh"

    /* Write TLP commands */
    output wire                      m_wr_valid,
    input  wire                      m_wr_ready,
    output wire [63:0]               m_wr_addr,
    output wire [12:0]               m_wr_len,
    output wire [ADDR_WIDTH-1:0]     m_wr_card_addr,
    output wire [1:0]                m_wr_slot,
    output wire                      m_wr_first,

    /* Write TLP sent on RQ */
    input  wire                      sent_valid,
    input  wire [1:0]                sent_slot,

    /* Write TLP dropped (err: read_error code, 0 when dropped behind an error) */
    input  wire                      drop_valid,
    input  wire [1:0]                drop_slot,
    input  wire [4:0]                drop_err,

    /* Stream: bytes taken for a TLP and packet end, result write-back */
    input  wire                      wb_disable,
    input  wire                      end_valid,
    input  wire [1:0]                end_slot,
    input  wire [12:0]               end_len,
    input  wire                      end_eop,
    output wire                      m_res_valid,
    input  wire                      m_res_ready,
    output wire [63:0]               m_res_addr,
    output wire [63:0]               m_res_data
);

localparam SLOTS = 4;
localparam [4:0] RERR_DECODE = `PEVB_AXI_ERR_DECODE;

reg [2:0] head_reg;
reg [2:0] tail_reg;
reg [7:0] slot_cnt_reg [0:SLOTS-1];
reg [SLOTS-1:0] slot_issued_reg;
reg [SLOTS-1:0] slot_abort_reg;
reg [4:0] slot_rd_err_reg [0:SLOTS-1];
reg [2:0] slot_flags_reg [0:SLOTS-1];
// stream: bytes received, packet end, result address; the head's result sent
reg [27:0] slot_len_reg [0:SLOTS-1];
reg [SLOTS-1:0] slot_eop_reg;
reg [63:0] slot_res_reg [0:SLOTS-1];
reg res_sent_reg;
reg cur_first_reg;

reg cur_active_reg;
reg [1:0] cur_slot_reg;
reg [63:0] cur_addr_reg;
reg [ADDR_WIDTH-1:0] cur_card_reg;
reg [27:0] cur_rem_reg;

reg abort_reg;

wire [2:0] used_slots = tail_reg - head_reg;
wire full = used_slots == 3'd4;
wire empty = head_reg == tail_reg;
wire [1:0] head = head_reg[1:0];
wire [1:0] tail = tail_reg[1:0];

wire [2:0] mps_e = mps_enc > 3'd5 ? 3'd5 : mps_enc;
wire [12:0] mps = 13'd128 << mps_e;
wire [12:0] to_boundary = mps - ({1'b0, cur_addr_reg[11:0]} & (mps - 13'd1));
wire [12:0] wr_len = cur_rem_reg < {15'd0, to_boundary} ? cur_rem_reg[12:0] : to_boundary;
wire wr_last = cur_rem_reg == {15'd0, wr_len};

// a source beyond the AXI address space fails (decode) before anything moves
wire [64:0] src_last = {1'b0, s_desc_src} + {37'd0, s_desc_len} - 65'd1;
wire src_ok = STREAM != 0 || (src_last >> ADDR_WIDTH) == 65'd0;

assign s_desc_ready = !cur_active_reg && !full;
wire accept = s_desc_valid && s_desc_ready;

assign m_wr_valid = cur_active_reg && !abort_reg;
assign m_wr_addr = cur_addr_reg;
assign m_wr_len = wr_len;
assign m_wr_card_addr = cur_card_reg;
assign m_wr_slot = cur_slot_reg;
assign m_wr_first = cur_first_reg;
wire issue = m_wr_valid && m_wr_ready;

wire head_done = !empty && slot_issued_reg[head] && slot_cnt_reg[head] == 8'd0;
// a stream descriptor done without error writes its result first
wire res_due = STREAM != 0 && !wb_disable && !slot_abort_reg[head] && slot_rd_err_reg[head] == 5'd0;
localparam [15:0] RESULT_MAGIC = 16'h52B4;
assign m_res_valid = head_done && res_due && !res_sent_reg;
assign m_res_addr = slot_res_reg[head];
assign m_res_data = {4'd0, slot_len_reg[head], RESULT_MAGIC, 15'd0, slot_eop_reg[head]};
wire res_fire = m_res_valid && m_res_ready;
// (the stream end of a descriptor closes it: its remaining TLPs are not issued)
wire close = STREAM != 0 && end_valid && end_eop && cur_active_reg && end_slot == cur_slot_reg;

assign m_done_valid = head_done && (!res_due || res_sent_reg);
assign m_done_flags = STREAM != 0 ? {slot_eop_reg[head], slot_flags_reg[head][1:0]} : slot_flags_reg[head];
assign m_done_rd_err = slot_rd_err_reg[head];
assign m_done_wr_err = 5'd0;
assign m_done_abort = slot_abort_reg[head];

// ring distance from the head: occupied slots behind the failing one are aborted
wire fail = drop_valid && drop_err != 5'd0;
wire [1:0] fail_dist = drop_slot - head;
wire [SLOTS-1:0] behind_fail;
genvar gd;
generate
    for (gd = 0; gd < SLOTS; gd = gd + 1) begin : ring
        localparam [1:0] D = gd;
        wire [1:0] ring_dist = D - head;
        assign behind_fail[gd] = {1'b0, ring_dist} < used_slots && ring_dist > fail_dist;
    end
endgenerate

integer s;
// Every register update below is under one of these conditions: the block runs only
// when one holds (a clock enable), and event-driven simulators skip it on idle cycles.
wire wake = rst || issue || sent_valid || drop_valid || fail || m_done_valid || res_fire ||
            end_valid || accept || (cur_active_reg && abort_reg) || close || restart;

always @(posedge clk) begin
    if (wake) begin
        // (the test outside the loop is the same logic, for event-driven simulators)
        if (issue || sent_valid || drop_valid) begin
            for (s = 0; s < SLOTS; s = s + 1) begin
                slot_cnt_reg[s] <= slot_cnt_reg[s]
                    + ((issue && cur_slot_reg == s[1:0]) ? 8'd1 : 8'd0)
                    - ((sent_valid && sent_slot == s[1:0]) ? 8'd1 : 8'd0)
                    - ((drop_valid && drop_slot == s[1:0]) ? 8'd1 : 8'd0);
            end
        end

        if (fail) begin
            slot_rd_err_reg[drop_slot] <= slot_rd_err_reg[drop_slot] | drop_err;
            abort_reg <= 1'b1;
            slot_abort_reg <= slot_abort_reg | behind_fail;
        end

        if (m_done_valid) begin
            head_reg <= head_reg + 3'd1;
            res_sent_reg <= 1'b0;
        end
        if (res_fire) begin
            res_sent_reg <= 1'b1;
        end
        if (end_valid) begin
            slot_len_reg[end_slot] <= slot_len_reg[end_slot] + {15'd0, end_len};
            if (end_eop) begin
                slot_eop_reg[end_slot] <= 1'b1;
            end
        end

        if (accept) begin
            tail_reg <= tail_reg + 3'd1;
            slot_flags_reg[tail] <= s_desc_flags;
            slot_rd_err_reg[tail] <= src_ok ? 5'd0 : RERR_DECODE;
            slot_abort_reg[tail] <= abort_reg;
            slot_len_reg[tail] <= 28'd0;
            slot_eop_reg[tail] <= 1'b0;
            slot_res_reg[tail] <= s_desc_src;
            cur_first_reg <= 1'b1;
            if (!src_ok || abort_reg) begin
                slot_issued_reg[tail] <= 1'b1;
                if (!src_ok) begin
                    abort_reg <= 1'b1;
                end
            end else begin
                slot_issued_reg[tail] <= 1'b0;
                cur_active_reg <= 1'b1;
                cur_slot_reg <= tail;
                cur_addr_reg <= s_desc_dst;
                cur_card_reg <= s_desc_src[ADDR_WIDTH-1:0];
                cur_rem_reg <= s_desc_len;
            end
        end

        if (issue) begin
            cur_first_reg <= 1'b0;
            cur_addr_reg <= cur_addr_reg + {51'd0, wr_len};
            cur_card_reg <= cur_card_reg + {{(ADDR_WIDTH-13){1'b0}}, wr_len};
            cur_rem_reg <= cur_rem_reg - {15'd0, wr_len};
            if (wr_last) begin
                cur_active_reg <= 1'b0;
                slot_issued_reg[cur_slot_reg] <= 1'b1;
            end
        end else if (cur_active_reg && abort_reg) begin
            // stop issuing the rest of an aborted descriptor
            cur_active_reg <= 1'b0;
            slot_issued_reg[cur_slot_reg] <= 1'b1;
            if (slot_rd_err_reg[cur_slot_reg] == 5'd0 && !(fail && drop_slot == cur_slot_reg)) begin
                slot_abort_reg[cur_slot_reg] <= 1'b1;
            end
        end

        if (close) begin
            cur_active_reg <= 1'b0;
            slot_issued_reg[cur_slot_reg] <= 1'b1;
        end

        if (restart) begin
            abort_reg <= 1'b0;
        end

        if (rst) begin
            res_sent_reg <= 1'b0;
            cur_first_reg <= 1'b0;
            head_reg <= 3'd0;
            tail_reg <= 3'd0;
            slot_issued_reg <= {SLOTS{1'b0}};
            slot_abort_reg <= {SLOTS{1'b0}};
            cur_active_reg <= 1'b0;
            abort_reg <= 1'b0;
            for (s = 0; s < SLOTS; s = s + 1) begin
                slot_cnt_reg[s] <= 8'd0;
            end
        end
    end
end

endmodule

`resetall
