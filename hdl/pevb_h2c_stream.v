// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * H2C AXI4-Stream output of one stream channel.  Completion data lands, out of
 * order, in a ring buffer at its stream position (pevb_h2c_rd hands out the
 * positions; pevb_axi_wr writes the bytes through pevb_axi_wr_route); each
 * chunk written in order moves the complete position (seg), and a chunk ending
 * a packet (descriptor with EOP) marks the packet end.  The drain sends
 * complete beats in order: full beats (tkeep all ones) while more complete
 * data follows, and the packet's last beat with tlast and tkeep covering its
 * bytes, packed to the low lanes (the lanes after them zero).  The beat holding the last complete byte of
 * an open packet waits for more data (the next descriptor continues the
 * packet, even across runs) or for truncate (a restart after an error), which
 * ends the packet there.
 */
module pevb_h2c_stream #
(
    // stream width (the PCIe datapath width)
    parameter DATA_WIDTH = 64,
    // ring buffer size in bytes (power of two)
    parameter RING_BYTES = 16384,
    // packet ends remembered (power of two)
    parameter MARK_DEPTH = 16
)
(
    input  wire                      clk,
    input  wire                      rst,

    /* Ring writes (word index in the ring, byte strobes) */
    input  wire                      wr_en,
    input  wire [31:0]               wr_word,
    input  wire [DATA_WIDTH-1:0]     wr_data,
    input  wire [DATA_WIDTH/8-1:0]   wr_strb,

    /* Complete position: a chunk written up to seg_end, a packet ends there */
    input  wire                      seg_valid,
    input  wire [31:0]               seg_end,
    input  wire                      seg_eop,
    input  wire                      truncate,

    // the drain's position (ring room) and the complete position
    output wire [31:0]               rd_pos,
    output wire [31:0]               done_pos,
    // room for the packet ends of the chunks the mover may start
    output wire                      marks_ok,

    /* AXI4-Stream master */
    output wire [DATA_WIDTH-1:0]     m_axis_tdata,
    output wire [DATA_WIDTH/8-1:0]   m_axis_tkeep,
    output wire                      m_axis_tlast,
    output wire                      m_axis_tvalid,
    input  wire                      m_axis_tready
);

localparam BYTES = DATA_WIDTH/8;
localparam LOG_BYTES = $clog2(BYTES);
localparam WORDS = RING_BYTES/BYTES;
localparam LOG_WORDS = $clog2(WORDS);
localparam LOG_MD = $clog2(MARK_DEPTH);
localparam [31:0] BYTES_W = BYTES;
// marks the mover may still add: 4 chunks in flight and a truncation
localparam [LOG_MD:0] MARK_LIMIT = MARK_DEPTH - 5;

initial begin
    if ((1 << LOG_WORDS) != WORDS || WORDS < 2) begin
        $error("Error: RING_BYTES must be a power of two of at least two beats (instance %m)");
        $finish;
    end
    if ((1 << LOG_MD) != MARK_DEPTH || MARK_DEPTH < 8) begin
        $error("Error: MARK_DEPTH must be a power of two, at least 8 (instance %m)");
        $finish;
    end
end

reg [DATA_WIDTH-1:0] ring_mem [0:WORDS-1];

reg [31:0] done_pos_reg;
reg [31:0] rd_pos_reg;
// bytes complete since the last packet end
reg open_reg;

reg [31:0] mark_mem [0:MARK_DEPTH-1];
reg [LOG_MD:0] mark_wr_ptr_reg;
reg [LOG_MD:0] mark_rd_ptr_reg;
wire [LOG_MD:0] mark_used = mark_wr_ptr_reg - mark_rd_ptr_reg;
wire have_mark = mark_wr_ptr_reg != mark_rd_ptr_reg;

assign rd_pos = rd_pos_reg;
assign done_pos = done_pos_reg;
assign marks_ok = mark_used <= MARK_LIMIT;

// complete bytes not yet sent (the position after a packet's last beat may pass
// the complete position: nothing then)
wire [31:0] avail_raw = done_pos_reg - rd_pos_reg;
wire [31:0] avail = avail_raw[31] ? 32'd0 : avail_raw;
wire [31:0] to_mark = mark_mem[mark_rd_ptr_reg[LOG_MD-1:0]] - rd_pos_reg;
wire end_beat = have_mark && to_mark <= BYTES_W;

wire [BYTES-1:0] end_keep = to_mark == BYTES_W ? {BYTES{1'b1}} :
                            ~({BYTES{1'b1}} << to_mark[LOG_BYTES:0]);

wire [BYTES-1:0] keep = end_beat ? end_keep : {BYTES{1'b1}};
wire [DATA_WIDTH-1:0] word = ring_mem[rd_pos_reg[LOG_WORDS+LOG_BYTES-1:LOG_BYTES]];
// lanes past the packet's end read as zero
genvar gk;
generate
    for (gk = 0; gk < BYTES; gk = gk + 1) begin : lane
        assign m_axis_tdata[gk*8 +: 8] = keep[gk] ? word[gk*8 +: 8] : 8'd0;
    end
endgenerate
assign m_axis_tkeep = keep;
assign m_axis_tlast = end_beat;
assign m_axis_tvalid = end_beat || avail > BYTES_W;
wire send = m_axis_tvalid && m_axis_tready;

// (the ring index is the low bits of the word position)
wire unused_wr_word = ^wr_word[31:LOG_WORDS];

wire push_seg = seg_valid && seg_eop && (open_reg || seg_end != done_pos_reg);
wire push_trunc = truncate && open_reg;

integer i;
// Every register update below needs one of these (a clock enable): event-driven simulators
// skip the block on idle cycles.
wire wake = rst || wr_en || seg_valid || push_seg || push_trunc || send;

always @(posedge clk) begin
    if (wake) begin
        if (wr_en) begin
            for (i = 0; i < BYTES; i = i + 1) begin
                if (wr_strb[i]) begin
                    ring_mem[wr_word[LOG_WORDS-1:0]][i*8 +: 8] <= wr_data[i*8 +: 8];
                end
            end
        end

        if (seg_valid) begin
            done_pos_reg <= seg_end;
            open_reg <= !seg_eop && (open_reg || seg_end != done_pos_reg);
        end
        if (push_seg || push_trunc) begin
            mark_mem[mark_wr_ptr_reg[LOG_MD-1:0]] <= push_seg ? seg_end : done_pos_reg;
            mark_wr_ptr_reg <= mark_wr_ptr_reg + 1'b1;
        end
        if (push_trunc) begin
            open_reg <= 1'b0;
        end

        if (send) begin
            rd_pos_reg <= rd_pos_reg + BYTES_W;
            if (end_beat) begin
                mark_rd_ptr_reg <= mark_rd_ptr_reg + 1'b1;
            end
        end

        if (rst) begin
            done_pos_reg <= 32'd0;
            rd_pos_reg <= 32'd0;
            open_reg <= 1'b0;
            mark_wr_ptr_reg <= {(LOG_MD+1){1'b0}};
            mark_rd_ptr_reg <= {(LOG_MD+1){1'b0}};
        end
    end
end

endmodule

`resetall
