// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Requester request (RQ) generator.  Accepts read commands (header-only
 * memory read TLPs with the caller's tag) and write commands (memory write
 * TLPs whose payload waits in pevb_axi_rd's buffer already laid out as the
 * TLP's beats, or one or two immediate DWORDs for status write-back), arbitrates
 * between them round-robin and streams DWORD-aligned TLPs onto the
 * UltraScale+ RQ interface.  Callers split requests so that none crosses
 * 4 KiB and payloads respect MPS/MRRS.  Payload beats are read one beat ahead
 * (the buffer reads like a RAM), so back-to-back TLPs need no idle cycles.
 */
module pevb_rq_tx #
(
    // PCIe AXI stream data width (64, 128, 256 or 512)
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    // PCIe AXI stream tkeep width (DWORD lanes)
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    // RQ tuser width
    parameter AXIS_PCIE_RQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 62 : 137,
    // width of the write command id echoed on completion of the TLP
    parameter WR_ID_WIDTH = 4
)
(
    input  wire                                 clk,
    input  wire                                 rst,

    /* Read request commands */
    input  wire                                 s_rd_valid,
    output wire                                 s_rd_ready,
    input  wire [63:0]                          s_rd_addr,
    input  wire [12:0]                          s_rd_len,
    input  wire [7:0]                           s_rd_tag,

    /* Write request commands */
    input  wire                                 s_wr_valid,
    output wire                                 s_wr_ready,
    input  wire [63:0]                          s_wr_addr,
    input  wire [12:0]                          s_wr_len,
    // immediate data (status write-back): s_wr_len 4 or 8 bytes, DWORD aligned
    input  wire                                 s_wr_imm,
    input  wire [63:0]                          s_wr_imm_data,
    input  wire [WR_ID_WIDTH-1:0]               s_wr_id,

    /* Write TLP sent (last beat accepted) */
    output wire                                 m_wr_done_valid,
    output wire [WR_ID_WIDTH-1:0]               m_wr_done_id,

    /* Payload buffer read port: the TLP's beats from beat PAYLOAD_BEAT on
       (pay_rd_id: the id of the write whose payload is read) */
    output wire                                 pay_rd_en,
    output wire [WR_ID_WIDTH-1:0]               pay_rd_id,
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]      pay_rd_data,

    /* Requester request (RQ) */
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]      m_axis_rq_tdata,
    output wire [AXIS_PCIE_KEEP_WIDTH-1:0]      m_axis_rq_tkeep,
    output wire                                 m_axis_rq_tvalid,
    input  wire                                 m_axis_rq_tready,
    output wire                                 m_axis_rq_tlast,
    output wire [AXIS_PCIE_RQ_USER_WIDTH-1:0]   m_axis_rq_tuser
);

localparam DW = AXIS_PCIE_DATA_WIDTH;
localparam KEEP = AXIS_PCIE_KEEP_WIDTH;
localparam BYTES = DW/8;
localparam LOG_BYTES = $clog2(BYTES);
localparam LOG_KEEP = $clog2(KEEP);
// first beat holding payload (the 4 DWORD descriptor fills the beats before it)
localparam PAYLOAD_BEAT = 16 >> LOG_BYTES;

// RQ request types (PG213 req_type)
localparam [3:0] REQ_MEM_READ = 4'b0000;
localparam [3:0] REQ_MEM_WRITE = 4'b0001;

initial begin
    if (DW != 64 && DW != 128 && DW != 256 && DW != 512) begin
        $error("Error: AXIS_PCIE_DATA_WIDTH must be 64, 128, 256 or 512 (instance %m)");
        $finish;
    end
    if (KEEP*32 != DW) begin
        $error("Error: AXIS_PCIE_KEEP_WIDTH must be AXIS_PCIE_DATA_WIDTH/32 (instance %m)");
        $finish;
    end
end

/* Stage 1: current TLP */
reg cur_valid_reg;
reg cur_wr_reg;
reg cur_imm_reg;
reg [63:0] cur_imm_data_reg;
reg [WR_ID_WIDTH-1:0] cur_id_reg;
reg [127:0] cur_hdr_reg;
reg [3:0] cur_first_be_reg;
reg [3:0] cur_last_be_reg;
reg [10:0] cur_dw_total_reg;     // header + payload DWORDs (at most 4 + 1025)
reg [10:0] cur_beat_reg;
reg [10:0] cur_last_beat_reg;

/* Stage 2: output beat (payload data for it arrives with the stage) */
reg s2_valid_reg;
reg s2_wr_reg;
reg s2_last_reg;
reg [WR_ID_WIDTH-1:0] s2_id_reg;
reg [KEEP-1:0] s2_keep_reg;
reg [KEEP-1:0] s2_fixed_lanes_reg;    // lanes carrying header or immediate data
reg [DW-1:0] s2_fixed_data_reg;
reg [3:0] s2_first_be_reg;
reg [3:0] s2_last_be_reg;

reg rr_prefer_wr_reg;

wire advance = !s2_valid_reg || m_axis_rq_tready;
wire cur_done = cur_valid_reg && cur_beat_reg == cur_last_beat_reg;
wire load = advance && (!cur_valid_reg || cur_done);
wire pick_wr = s_wr_valid && (!s_rd_valid || rr_prefer_wr_reg);
wire pick_rd = s_rd_valid && !pick_wr;

assign s_rd_ready = load && pick_rd;
assign s_wr_ready = load && pick_wr;

// header of the selected command
wire [63:0] sel_addr = pick_wr ? (s_wr_imm ? {s_wr_addr[63:2], 2'b00} : s_wr_addr) : s_rd_addr;
wire [12:0] sel_len = pick_wr ? s_wr_len : s_rd_len;
wire [12:0] sel_end = {11'd0, sel_addr[1:0]} + sel_len;   // length <= 4096: no carry out
wire [10:0] sel_dw_count = sel_end[12:2] + {10'd0, sel_end[1:0] != 2'b00};
wire [1:0] sel_end_lo = sel_end[1:0];
wire [3:0] sel_first_mask = 4'b1111 << sel_addr[1:0];
wire [3:0] sel_last_mask = sel_end_lo == 2'd0 ? 4'b1111 : ~(4'b1111 << sel_end_lo);
wire [3:0] sel_first_be = sel_dw_count == 11'd1 ? (sel_first_mask & sel_last_mask) : sel_first_mask;
wire [3:0] sel_last_be = sel_dw_count == 11'd1 ? 4'b0000 : sel_last_mask;
wire [10:0] sel_dw_total = 11'd4 + (pick_wr ? sel_dw_count : 11'd0);
wire [10:0] sel_dw_last = sel_dw_total - 11'd1;
wire [31:0] sel_dw0 = {sel_addr[31:2], 2'b00};
wire [31:0] sel_dw1 = sel_addr[63:32];
wire [31:0] sel_dw2 = {16'd0, 1'b0, pick_wr ? REQ_MEM_WRITE : REQ_MEM_READ, sel_dw_count};
wire [31:0] sel_dw3 = {1'b0, 3'b000, 3'b000, 1'b0, 16'd0, pick_wr ? 8'd0 : s_rd_tag};

// beat from stage 1: fixed lanes

wire [31:0] cur_dw_base = {21'd0, cur_beat_reg} << LOG_KEEP;  // first stream DWORD of the beat

// per lane: stream DWORDs kept, and the lanes carrying header or immediate data
// (continuous assignments, one set per lane). Each set sees the beat's first DWORD only
// where its answer can depend on it: a full beat keeps every lane, and from DWORD 6 on no
// lane carries header or immediate data; there they see a constant instead (the same
// answers), so an event-driven simulator does not re-evaluate every lane on every beat.
wire [31:0] dw_total = {21'd0, cur_dw_total_reg};
wire beat_full = cur_dw_base + KEEP <= dw_total;
wire [31:0] keep_base = beat_full ? 32'd0 : cur_dw_base;   // lane < total when full
wire [31:0] fixed_base = cur_dw_base < 6 ? cur_dw_base : 32'd6;
wire [KEEP-1:0] beat_keep;
wire [KEEP-1:0] beat_fixed_lanes;
wire [DW-1:0] beat_fixed_data;
genvar gj;
generate
    for (gj = 0; gj < KEEP; gj = gj + 1) begin : beat_lane
        wire [31:0] dw_idx = fixed_base + gj;
        wire is_hdr = dw_idx < 4;
        wire is_imm = cur_imm_reg && (dw_idx == 4 || dw_idx == 5);
        assign beat_keep[gj] = keep_base + gj < dw_total;
        assign beat_fixed_lanes[gj] = is_hdr || is_imm;
        assign beat_fixed_data[gj*32 +: 32] = is_hdr ? cur_hdr_reg[dw_idx[1:0]*32 +: 32] :
                                              is_imm ? cur_imm_data_reg[dw_idx[0]*32 +: 32] : 32'd0;
    end
endgenerate

localparam [10:0] PAYLOAD_BEAT_W = PAYLOAD_BEAT;
// (written as beat + 1 > first so that it is no constant comparison where the first is 0)
assign pay_rd_id = cur_id_reg;
assign pay_rd_en = advance && cur_valid_reg && cur_wr_reg && !cur_imm_reg &&
                   cur_beat_reg + 11'd1 > PAYLOAD_BEAT_W;

// stage 2 output: payload with the header/immediate lanes overlaid
wire [DW-1:0] out_data;
genvar gl;
generate
    for (gl = 0; gl < KEEP; gl = gl + 1) begin : out_lane
        assign out_data[gl*32 +: 32] = s2_fixed_lanes_reg[gl] ? s2_fixed_data_reg[gl*32 +: 32]
                                                              : pay_rd_data[gl*32 +: 32];
    end
endgenerate

reg [AXIS_PCIE_RQ_USER_WIDTH-1:0] out_user;
always @* begin
    out_user = {AXIS_PCIE_RQ_USER_WIDTH{1'b0}};
    out_user[3:0] = s2_first_be_reg;
    if (DW == 512) begin
        out_user[11:8] = s2_last_be_reg;
    end else begin
        out_user[7:4] = s2_last_be_reg;
    end
end

assign m_axis_rq_tdata = out_data;
assign m_axis_rq_tkeep = s2_keep_reg;
assign m_axis_rq_tvalid = s2_valid_reg;
assign m_axis_rq_tlast = s2_last_reg;
assign m_axis_rq_tuser = out_user;

assign m_wr_done_valid = s2_valid_reg && m_axis_rq_tready && s2_last_reg && s2_wr_reg;
assign m_wr_done_id = s2_id_reg;

// The clocked block below runs only while a request waits or a TLP is in either stage
// (a clock enable): idle, it would only reload stage 1 from request inputs that are not
// valid. Event-driven simulators then skip it on idle cycles. (The don't-care fields
// then hold their last values instead of following those inputs; nothing valid changes.)
wire wake = rst || s_rd_valid || s_wr_valid || cur_valid_reg || s2_valid_reg;

always @(posedge clk) begin
    if (wake) begin
        if (advance) begin
            s2_valid_reg <= cur_valid_reg;
            s2_wr_reg <= cur_wr_reg;
            s2_last_reg <= cur_done;
            s2_id_reg <= cur_id_reg;
            s2_keep_reg <= beat_keep;
            s2_fixed_lanes_reg <= beat_fixed_lanes;
            s2_fixed_data_reg <= beat_fixed_data;
            s2_first_be_reg <= cur_first_be_reg;
            s2_last_be_reg <= cur_last_be_reg;

            if (cur_valid_reg && !cur_done) begin
                cur_beat_reg <= cur_beat_reg + 11'd1;
            end
        end

        if (load) begin
            cur_valid_reg <= s_rd_valid || s_wr_valid;
            cur_wr_reg <= pick_wr;
            cur_imm_reg <= pick_wr && s_wr_imm;
            cur_imm_data_reg <= s_wr_imm_data;
            cur_id_reg <= s_wr_id;
            cur_hdr_reg <= {sel_dw3, sel_dw2, sel_dw1, sel_dw0};
            cur_first_be_reg <= sel_first_be;
            cur_last_be_reg <= sel_last_be;
            cur_dw_total_reg <= sel_dw_total;
            cur_beat_reg <= 11'd0;
            cur_last_beat_reg <= sel_dw_last >> LOG_KEEP;
            if (s_rd_valid && s_wr_valid) begin
                rr_prefer_wr_reg <= !pick_wr;
            end
        end

        if (rst) begin
            cur_valid_reg <= 1'b0;
            s2_valid_reg <= 1'b0;
            rr_prefer_wr_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
