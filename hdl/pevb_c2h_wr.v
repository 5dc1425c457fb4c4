// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * C2H data mover: turns descriptors (card source, PCIe destination, length)
 * into memory write TLP commands split at MPS boundaries (hence never across
 * 4 KiB); pevb_rq_tx reads the payload from card RAM.  A descriptor is done
 * when its last TLP has left on RQ; done is reported strictly in order.  A
 * source outside card RAM fails the descriptor with read_error[0] (decode)
 * before anything is written and aborts the descriptors behind it.
 */
module pevb_c2h_wr #
(
    // card RAM byte address width (size = 2**RAM_ADDR_WIDTH)
    parameter RAM_ADDR_WIDTH = 16
)
(
    input  wire                      clk,
    input  wire                      rst,

    input  wire                      restart,
    input  wire [2:0]                mps_enc,

    /* Descriptors */
    input  wire                      s_desc_valid,
    output wire                      s_desc_ready,
    input  wire [63:0]               s_desc_src,
    input  wire [63:0]               s_desc_dst,
    input  wire [27:0]               s_desc_len,
    input  wire [2:0]                s_desc_flags,

    /* Done, in order */
    output wire                      m_done_valid,
    output wire [2:0]                m_done_flags,
    output wire [4:0]                m_done_rd_err,
    output wire [4:0]                m_done_wr_err,
    output wire                      m_done_abort,
    output wire [27:0]               m_done_bytes,

    /* Write TLP commands */
    output wire                      m_wr_valid,
    input  wire                      m_wr_ready,
    output wire [63:0]               m_wr_addr,
    output wire [12:0]               m_wr_len,
    output wire [RAM_ADDR_WIDTH-1:0] m_wr_ram_addr,
    output wire                      m_wr_last,

    /* Write TLP sent */
    input  wire                      wr_done_valid,
    input  wire                      wr_done_last
);

localparam SLOTS = 4;
localparam [4:0] RERR_DECODE = `PEVB_AXI_ERR_DECODE;

reg [2:0] head_reg;
reg [2:0] tail_reg;
reg [SLOTS-1:0] slot_notlp_reg;
reg [SLOTS-1:0] slot_abort_reg;
reg [4:0] slot_rd_err_reg [0:SLOTS-1];
reg [2:0] slot_flags_reg [0:SLOTS-1];
reg [27:0] slot_len_reg [0:SLOTS-1];
reg [2:0] last_sent_reg;

reg cur_active_reg;
reg [63:0] cur_addr_reg;
reg [RAM_ADDR_WIDTH-1:0] cur_card_reg;
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

wire [28:0] src_end = {1'b0, s_desc_src[27:0]} + {1'b0, s_desc_len};
wire src_ok = (s_desc_src[63:RAM_ADDR_WIDTH] == {(64-RAM_ADDR_WIDTH){1'b0}}) &&
              src_end <= (29'd1 << RAM_ADDR_WIDTH);

assign s_desc_ready = !cur_active_reg && !full;
wire accept = s_desc_valid && s_desc_ready;

assign m_wr_valid = cur_active_reg;
assign m_wr_addr = cur_addr_reg;
assign m_wr_len = wr_len;
assign m_wr_ram_addr = cur_card_reg;
assign m_wr_last = wr_last;
wire issue = m_wr_valid && m_wr_ready;

wire sent = wr_done_valid && wr_done_last;
wire head_done = !empty && (slot_notlp_reg[head] || last_sent_reg != 3'd0);
assign m_done_valid = head_done;
assign m_done_flags = slot_flags_reg[head];
assign m_done_rd_err = slot_rd_err_reg[head];
assign m_done_wr_err = 5'd0;
assign m_done_abort = slot_abort_reg[head];
assign m_done_bytes = slot_len_reg[head];

always @(posedge clk) begin
    last_sent_reg <= last_sent_reg + (sent ? 3'd1 : 3'd0)
                     - ((head_done && !slot_notlp_reg[head]) ? 3'd1 : 3'd0);

    if (head_done) begin
        head_reg <= head_reg + 3'd1;
    end

    if (accept) begin
        tail_reg <= tail_reg + 3'd1;
        slot_flags_reg[tail] <= s_desc_flags;
        slot_len_reg[tail] <= s_desc_len;
        slot_rd_err_reg[tail] <= src_ok ? 5'd0 : RERR_DECODE;
        slot_abort_reg[tail] <= abort_reg;
        if (!src_ok || abort_reg) begin
            slot_notlp_reg[tail] <= 1'b1;
            if (!src_ok) begin
                abort_reg <= 1'b1;
            end
        end else begin
            slot_notlp_reg[tail] <= 1'b0;
            cur_active_reg <= 1'b1;
            cur_addr_reg <= s_desc_dst;
            cur_card_reg <= s_desc_src[RAM_ADDR_WIDTH-1:0];
            cur_rem_reg <= s_desc_len;
        end
    end

    if (issue) begin
        cur_addr_reg <= cur_addr_reg + {51'd0, wr_len};
        cur_card_reg <= cur_card_reg + {{(RAM_ADDR_WIDTH-13){1'b0}}, wr_len};
        cur_rem_reg <= cur_rem_reg - {15'd0, wr_len};
        if (wr_last) begin
            cur_active_reg <= 1'b0;
        end
    end

    if (restart) begin
        abort_reg <= 1'b0;
    end

    if (rst) begin
        head_reg <= 3'd0;
        tail_reg <= 3'd0;
        last_sent_reg <= 3'd0;
        slot_notlp_reg <= {SLOTS{1'b0}};
        slot_abort_reg <= {SLOTS{1'b0}};
        cur_active_reg <= 1'b0;
        abort_reg <= 1'b0;
        // the RAM read address also serves write-back TLPs, which carry no payload
        cur_card_reg <= {RAM_ADDR_WIDTH{1'b0}};
    end
end

endmodule

`resetall
