// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * Read tag table and requester completion (RC) handler.  Allocates one of
 * TAG_COUNT tags per read request and keeps its context; accepts completions
 * split at any DWORD boundary and in any order across tags; hands each
 * completion of H2C data to pevb_axi_wr as a write job (card address, length,
 * first byte's lane) followed by its payload beats, and writes descriptor
 * DWORDs into the owning channel's descriptor buffer; retires a tag
 * on its last completion, on an error completion, or on completion timeout,
 * reporting the owner and the error bits in XDMA read_error encoding.
 * Context kinds: 0 = H2C descriptor fetch, 1 = C2H descriptor fetch,
 * 2 = H2C data read.
 */
module pevb_rc_rx #
(
    // PCIe AXI stream data width (64, 128, 256 or 512)
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    // PCIe AXI stream tkeep width (DWORD lanes)
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    // RC tuser width
    parameter AXIS_PCIE_RC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 75 : 161,
    // card (AXI) address width
    parameter ADDR_WIDTH = 64,
    // descriptor buffer DWORD index width
    parameter DESC_IDX_WIDTH = 6,
    // owner of a tag beside its kind: {channel, descriptor slot} of H2C data,
    // {channel, 0} of a descriptor fetch
    parameter SLOT_WIDTH = 2,
    // number of tags (32 without extended tags)
    parameter TAG_COUNT = 32,
    // completion timeout in clock cycles
    parameter CPL_TIMEOUT_CYCLES = 131072
)
(
    input  wire                                 clk,
    input  wire                                 rst,
    // the reset is a soft one (dma_bridge_resetn): the hard IP still tracks the requests
    // in flight, so their tags are not used again until each has ended there
    input  wire                                 rst_keeps_tags,

    /* Tag allocation */
    output wire                                 tag_avail,
    output wire [7:0]                           tag_free,
    input  wire                                 alloc_valid,
    input  wire [1:0]                           alloc_kind,
    input  wire [SLOT_WIDTH-1:0]                alloc_slot,
    input  wire [11:0]                          alloc_addr_lo,
    input  wire [ADDR_WIDTH-1:0]                alloc_info,
    input  wire [12:0]                          alloc_len,

    /* Requester completion (RC) */
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]      s_axis_rc_tdata,
    input  wire [AXIS_PCIE_KEEP_WIDTH-1:0]      s_axis_rc_tkeep,
    input  wire                                 s_axis_rc_tvalid,
    output wire                                 s_axis_rc_tready,
    input  wire                                 s_axis_rc_tlast,
    input  wire [AXIS_PCIE_RC_USER_WIDTH-1:0]   s_axis_rc_tuser,

    /* H2C data discard per in-flight descriptor slot (failed or aborted) */
    input  wire [(1<<SLOT_WIDTH)-1:0]           h2c_discard,

    /* H2C write jobs and their payload beats (pevb_axi_wr) */
    input  wire                                 wr_space_ok,
    output wire                                 m_job_valid,
    output wire [ADDR_WIDTH-1:0]                m_job_addr,
    output wire [12:0]                          m_job_len,
    output wire [$clog2(AXIS_PCIE_DATA_WIDTH/8)-1:0] m_job_ofs,
    output wire [SLOT_WIDTH-1:0]                m_job_slot,
    output wire                                 m_dat_valid,
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]      m_dat_data,
    // owner of the beat (the job's slot), for the channel's performance monitor
    output wire [SLOT_WIDTH-1:0]                m_dat_slot,

    /* Descriptor buffer writes (index of lane 0, lanes consecutive) */
    output wire [AXIS_PCIE_KEEP_WIDTH-1:0]      desc_wr_en_h2c,
    output wire [AXIS_PCIE_KEEP_WIDTH-1:0]      desc_wr_en_c2h,
    output wire [SLOT_WIDTH-1:0]                desc_wr_slot,
    output wire [DESC_IDX_WIDTH-1:0]            desc_wr_idx,
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]      desc_wr_data,

    /* Tag retirement */
    output wire                                 retire_valid,
    output wire [1:0]                           retire_kind,
    output wire [SLOT_WIDTH-1:0]                retire_slot,
    output wire [4:0]                           retire_err,

    /* Status */
    output wire [7:0]                           tags_in_flight,
    output wire                                 unexpected_cpl
);

localparam DW = AXIS_PCIE_DATA_WIDTH;
localparam KEEP = AXIS_PCIE_KEEP_WIDTH;
localparam BYTES = DW/8;
localparam LOG_BYTES = $clog2(BYTES);
localparam LOG_KEEP = $clog2(KEEP);
localparam TAG_W = $clog2(TAG_COUNT);
localparam TICK_W = 8;
localparam TIMEOUT_TICKS = (CPL_TIMEOUT_CYCLES + (1 << TICK_W) - 1) >> TICK_W;
localparam TO_W = 16;

// kinds of tag context
localparam [1:0] KIND_H2C_DESC = 2'd0;
localparam [1:0] KIND_C2H_DESC = 2'd1;
localparam [1:0] KIND_H2C_DATA = 2'd2;

// RC error codes (PG213)
localparam [3:0] RC_ERR_NONE = 4'b0000;
localparam [3:0] RC_ERR_POISONED = 4'b0001;
localparam [3:0] RC_ERR_BAD_STATUS = 4'b0010;
localparam [3:0] RC_ERR_INVALID_TAG = 4'b0110;
localparam [3:0] RC_ERR_TIMEOUT = 4'b1001;

// completion status
localparam [2:0] CPL_SC = 3'b000;
localparam [2:0] CPL_UR = 3'b001;
localparam [2:0] CPL_CA = 3'b100;

// XDMA read_error/descr_error codes (pevb_regs.vh); a completion timeout is reported as
// an unexpected completion (PG195 has no code for it)
localparam [4:0] XERR_UR = `PEVB_PCIE_ERR_UNSUPPORTED_REQUEST;
localparam [4:0] XERR_CA = `PEVB_PCIE_ERR_COMPLETER_ABORT;
localparam [4:0] XERR_EP = `PEVB_PCIE_ERR_POISONED;
localparam [4:0] XERR_UNEXP = `PEVB_PCIE_ERR_UNEXPECTED_COMPLETION;

initial begin
    if (TAG_COUNT > 256 || (1 << TAG_W) != TAG_COUNT) begin
        $error("Error: TAG_COUNT must be a power of two up to 256 (instance %m)");
        $finish;
    end
    if (TIMEOUT_TICKS >= (1 << TO_W)) begin
        $error("Error: CPL_TIMEOUT_CYCLES too large (instance %m)");
        $finish;
    end
end

/* tag table */
reg [TAG_COUNT-1:0] active_reg;
// tags the engine gave up (by its own timeout, or by a soft reset) while the core may
// still deliver their completions: not reused until a final completion (or the core's
// timeout report) for them arrives, or the core forgets them (its reset, an FLR)
reg [TAG_COUNT-1:0] dead_reg;
reg [1:0] ctx_kind_reg [0:TAG_COUNT-1];
reg [SLOT_WIDTH-1:0] ctx_slot_reg [0:TAG_COUNT-1];
reg [11:0] ctx_lo_reg [0:TAG_COUNT-1];
reg [ADDR_WIDTH-1:0] ctx_info_reg [0:TAG_COUNT-1];
reg [4:0] ctx_err_reg [0:TAG_COUNT-1];
// the request's length and the bytes its completions delivered so far: completions of
// one request come in address order, each carrying the bytes that remain
reg [12:0] ctx_len_reg [0:TAG_COUNT-1];
reg [12:0] ctx_next_reg [0:TAG_COUNT-1];
reg [TO_W-1:0] ctx_timer_reg [0:TAG_COUNT-1];
reg [TICK_W-1:0] tick_reg;

// the lowest free tag and the lowest tag past the engine's timeout: each set's lowest bit
// (v & -v), encoded by OR-ing it under a constant mask per index bit (no loop over the
// tags: an event-driven simulator evaluates these only when their inputs change)
wire [TAG_COUNT-1:0] free_tags = ~active_reg & ~dead_reg;
wire [TAG_COUNT-1:0] expired;
wire [TAG_COUNT-1:0] free_first = free_tags & (~free_tags + 1'b1);
wire [TAG_COUNT-1:0] exp_first = expired & (~expired + 1'b1);
wire [TAG_W-1:0] free_idx;
wire [TAG_W-1:0] exp_idx;
wire free_found = |free_tags;
wire exp_found = |expired;

// the tags whose index has bit b set
function [TAG_COUNT-1:0] index_bit_mask;
    input integer b;
    integer i;
    begin
        for (i = 0; i < TAG_COUNT; i = i + 1) begin
            index_bit_mask[i] = ((i >> b) & 1) != 0;
        end
    end
endfunction

genvar gt;
generate
    for (gt = 0; gt < TAG_COUNT; gt = gt + 1) begin : tag_timer
        assign expired[gt] = active_reg[gt] && ctx_timer_reg[gt] >= TIMEOUT_TICKS[TO_W-1:0];
    end
    for (gt = 0; gt < TAG_W; gt = gt + 1) begin : tag_index
        localparam [TAG_COUNT-1:0] MASK = index_bit_mask(gt);
        assign free_idx[gt] = |(free_first & MASK);
        assign exp_idx[gt] = |(exp_first & MASK);
    end
endgenerate

// tags in flight (for waves): a population count in TAG_W levels, level l+1 adding the
// neighbouring 2^l-bit fields of level l (which hold their fields' counts) in pairs
function [TAG_COUNT-1:0] low_fields;  // the low 2^l bits of every 2^(l+1)-bit field
    input integer l;
    integer i;
    begin
        for (i = 0; i < TAG_COUNT; i = i + 1) begin
            low_fields[i] = (i % (2 << l)) < (1 << l);
        end
    end
endfunction

wire [TAG_COUNT-1:0] tag_count [0:TAG_W];
assign tag_count[0] = active_reg;
generate
    for (gt = 0; gt < TAG_W; gt = gt + 1) begin : tag_sum
        localparam [TAG_COUNT-1:0] LOW = low_fields(gt);
        assign tag_count[gt+1] = (tag_count[gt] & LOW) + ((tag_count[gt] >> (1 << gt)) & LOW);
    end
endgenerate
wire [TAG_COUNT+7:0] in_flight_ext = {8'd0, tag_count[TAG_W]};
wire [7:0] in_flight = in_flight_ext[7:0];  // as an 8-bit sum, wrapping
wire unused_in_flight_ext = ^in_flight_ext[TAG_COUNT+7:8];

assign tag_avail = free_found;
assign tag_free = {{(8-TAG_W){1'b0}}, free_idx};
assign tags_in_flight = in_flight;

/* input register stage */
reg rc_valid_reg;
reg [DW-1:0] rc_data_reg;
reg [KEEP-1:0] rc_keep_reg;
reg rc_last_reg;
// RC tuser (byte enables, SOF/EOF, discontinue) is not needed: byte positions follow from
// the completion descriptor's lower address and byte count
wire unused_rc_tuser = ^s_axis_rc_tuser;

reg [10:0] rc_beat_reg;     // beat index of rc_*_reg within its TLP
reg [95:0] hdr_reg;

// back-pressure when the AXI write side is short of room (covers the input stage)
assign s_axis_rc_tready = wr_space_ok;

wire [31:0] rc_dw_base = {21'd0, rc_beat_reg} << LOG_KEEP;  // first stream DWORD of the beat

// header DWORDs seen so far, including the current beat: DWORD k arrives in beat k / KEEP,
// lane k % KEEP (continuous logic: no procedural loop for an event-driven simulator to run
// on every beat)
wire [95:0] hdr;
genvar hk;
generate
    for (hk = 0; hk < 3; hk = hk + 1) begin : hdr_dws
        localparam integer BEAT_N = hk / KEEP;
        localparam [10:0] BEAT = BEAT_N[10:0];
        assign hdr[hk*32 +: 32] = rc_beat_reg == BEAT ? rc_data_reg[(hk % KEEP)*32 +: 32]
                                                      : hdr_reg[hk*32 +: 32];
    end
endgenerate

wire [11:0] h_lower_addr = hdr[11:0];
wire [3:0] h_err_code = hdr[15:12];
wire [12:0] h_byte_count = hdr[28:16];
wire [10:0] h_dw_count = hdr[42:32];
wire [2:0] h_status = hdr[45:43];
wire h_poisoned = hdr[46];
wire [7:0] h_tag = hdr[71:64];
wire [TAG_W-1:0] tag = h_tag[TAG_W-1:0];

// the core flags a completion whose tag it no longer tracks (a late completion after its
// completion timeout): it belongs to no request of ours, even if the tag is in use again
wire tag_ok = (h_tag >> TAG_W) == 8'd0 && active_reg[tag] && h_err_code != RC_ERR_INVALID_TAG;
wire [1:0] c_kind = ctx_kind_reg[tag];
wire [ADDR_WIDTH-1:0] c_info = ctx_info_reg[tag];
wire [11:0] c_lo = ctx_lo_reg[tag];

reg [4:0] status_err;
always @* begin
    status_err = 5'd0;
    if (h_err_code == RC_ERR_NONE || h_err_code == RC_ERR_POISONED || h_err_code == RC_ERR_BAD_STATUS) begin
        if (h_status == CPL_UR) begin
            status_err = XERR_UR;
        end else if (h_status == CPL_CA) begin
            status_err = XERR_CA;
        end else if (h_status != CPL_SC) begin
            status_err = XERR_UNEXP;
        end
        if (h_poisoned || h_err_code == RC_ERR_POISONED) begin
            status_err = status_err | XERR_EP;
        end
    end else begin
        // length/address/tag mismatch, timeout reported by the core, FLR
        status_err = XERR_UNEXP;
    end
end

// bytes carried by this completion and whether it is the last one
wire [13:0] cpl_capacity = {1'b0, h_dw_count, 2'b00} - {12'd0, h_lower_addr[1:0]};
wire cpl_final = h_status != CPL_SC || h_err_code == RC_ERR_TIMEOUT || {1'b0, h_byte_count} <= cpl_capacity;
wire [13:0] cpl_bytes = cpl_final && h_status == CPL_SC ? {1'b0, h_byte_count} : cpl_capacity;

// offset of the completion inside its request
wire [11:0] req_offset = h_lower_addr - c_lo;

// a successful completion that does not continue its request where the last one ended,
// whose byte count is not what remains, or whose final data runs past its last byte (a
// broken completer, or one answering another request): flagged, its data dropped
wire [12:0] c_len = ctx_len_reg[tag];
wire [12:0] c_next = ctx_next_reg[tag];
wire seq_bad = h_status == CPL_SC && (h_err_code == RC_ERR_NONE || h_err_code == RC_ERR_POISONED) &&
               ({1'b0, req_offset} != c_next || h_byte_count != c_len - c_next ||
                (cpl_final && cpl_capacity > {1'b0, h_byte_count} + 14'd3));
wire [4:0] cpl_err = status_err | (seq_bad ? XERR_UNEXP : 5'd0);
// after an error no later completion of the tag is trusted
wire cpl_good = tag_ok && cpl_err == 5'd0 && ctx_err_reg[tag] == 5'd0;

// H2C data: payload byte 0 sits at stream byte 12 + lower address[1:0]; the beats from
// the one holding it on go to the write side, announced by a job on that beat (the
// header is complete by then at every width)
wire [6:0] first_byte = 7'd12 + {5'd0, h_lower_addr[1:0]};
wire [6:0] first_beat = first_byte >> LOG_BYTES;
wire [LOG_BYTES-1:0] first_lane = first_byte[LOG_BYTES-1:0];
localparam [31:0] BYTES_M1 = BYTES - 1;
wire [13:0] data_span = {{(14-LOG_BYTES){1'b0}}, first_lane} + cpl_bytes + BYTES_M1[13:0];
wire [13:0] data_beats = data_span >> LOG_BYTES;

wire desc_wr = rc_valid_reg && cpl_good && (c_kind == KIND_H2C_DESC || c_kind == KIND_C2H_DESC);

wire data_cpl = rc_valid_reg && cpl_good && c_kind == KIND_H2C_DATA && cpl_bytes != 14'd0;
wire job_push = data_cpl && !h2c_discard[ctx_slot_reg[tag]] && rc_beat_reg == {4'd0, first_beat};
// the decision taken on the job's beat holds for the rest of the completion
reg dat_on_reg;
wire dat_push = (job_push || dat_on_reg) && {3'd0, rc_beat_reg} < {7'd0, first_beat} + data_beats;

assign m_job_valid = job_push;
assign m_job_addr = c_info + {{(ADDR_WIDTH-12){1'b0}}, req_offset};
assign m_job_len = cpl_bytes[12:0];
assign m_job_ofs = first_lane;
assign m_job_slot = ctx_slot_reg[tag];
assign m_dat_valid = rc_valid_reg && dat_push;
assign m_dat_data = rc_data_reg;
assign m_dat_slot = ctx_slot_reg[tag];

// descriptor DWORDs: stream DWORD q = beat*KEEP + j, payload DWORD q - 3 (the lanes see
// the beat only while it carries descriptors: a data completion's beats leave them be)
wire [31:0] dsc_dw_base = desc_wr ? rc_dw_base : 32'd0;
wire [KEEP-1:0] dsc_en;
genvar gj;
generate
    for (gj = 0; gj < KEEP; gj = gj + 1) begin : dsc_lane
        wire [31:0] q = dsc_dw_base + gj;
        assign dsc_en[gj] = desc_wr && rc_keep_reg[gj] && q >= 3 && q < 3 + {21'd0, h_dw_count};
    end
endgenerate

// buffer index of the beat's first DWORD (c_info holds the request's first index)
wire [DESC_IDX_WIDTH-1:0] desc_idx = c_info[DESC_IDX_WIDTH-1:0] + req_offset[DESC_IDX_WIDTH+1:2]
                                     + rc_dw_base[DESC_IDX_WIDTH-1:0]
                                     - {{(DESC_IDX_WIDTH-2){1'b0}}, 2'd3};

assign desc_wr_en_h2c = c_kind == KIND_H2C_DESC ? dsc_en : {KEEP{1'b0}};
assign desc_wr_en_c2h = c_kind == KIND_C2H_DESC ? dsc_en : {KEEP{1'b0}};
assign desc_wr_slot = ctx_slot_reg[tag];
assign desc_wr_idx = desc_idx;
assign desc_wr_data = rc_data_reg;

// retirement: last completion of a tag, or timeout when no completion retires
wire rc_retire = rc_valid_reg && rc_last_reg && tag_ok && cpl_final;
wire to_retire = !rc_retire && exp_found;

assign retire_valid = rc_retire || to_retire;
assign retire_kind = rc_retire ? c_kind : ctx_kind_reg[exp_idx];
assign retire_slot = rc_retire ? ctx_slot_reg[tag] : ctx_slot_reg[exp_idx];
assign retire_err = rc_retire ? (ctx_err_reg[tag] | cpl_err) : (ctx_err_reg[exp_idx] | XERR_UNEXP);
assign unexpected_cpl = rc_valid_reg && rc_last_reg && !tag_ok;
// the last completion of a request the engine gave up: its tag is free again
wire dead_end = rc_valid_reg && rc_last_reg && (h_tag >> TAG_W) == 8'd0 && dead_reg[tag] &&
                (cpl_final || h_err_code == RC_ERR_INVALID_TAG);

// the completion-timeout tick runs on every cycle, in a block of its own
always @(posedge clk) begin
    tick_reg <= rst ? {TICK_W{1'b0}} : tick_reg + 1'b1;
end

// Every other register update below is under one of these conditions (a beat taken or
// registered, a tick with tags in flight, a tag retired, given up or allocated): the
// block runs only when one holds (a clock enable), and event-driven simulators skip it
// on idle cycles.
wire wake = rst || rc_valid_reg || (s_axis_rc_tvalid && s_axis_rc_tready) ||
            (tick_reg == {TICK_W{1'b1}} && active_reg != {TAG_COUNT{1'b0}}) || rc_retire ||
            to_retire || dead_end || alloc_valid;

integer tt;
always @(posedge clk) begin
    if (wake) begin
        rc_valid_reg <= s_axis_rc_tvalid && s_axis_rc_tready;
        if (s_axis_rc_tvalid && s_axis_rc_tready) begin
            rc_data_reg <= s_axis_rc_tdata;
            rc_keep_reg <= s_axis_rc_tkeep;
            rc_last_reg <= s_axis_rc_tlast;
        end
        if (rc_valid_reg) begin
            hdr_reg <= hdr;
            if (job_push) begin
                dat_on_reg <= 1'b1;
            end
            if (rc_last_reg) begin
                dat_on_reg <= 1'b0;
            end
            if (rc_last_reg) begin
                rc_beat_reg <= 11'd0;
            end else if (rc_beat_reg != 11'h7ff) begin
                rc_beat_reg <= rc_beat_reg + 11'd1;
            end
            // errors on a non-final completion (poisoned data) stick to the tag (decided on
            // the last beat: the header is complete by then at every width)
            if (rc_last_reg && tag_ok && cpl_err != 5'd0 && !rc_retire) begin
                ctx_err_reg[tag] <= ctx_err_reg[tag] | cpl_err;
            end
            if (rc_last_reg && tag_ok && h_status == CPL_SC && !seq_bad) begin
                ctx_next_reg[tag] <= c_next + cpl_bytes[12:0];
            end
        end

        // (the tick test outside the loop is the same logic; event-driven simulators then
        // skip the per-tag loop on the 255 cycles of 256 without a tick)
        if (tick_reg == {TICK_W{1'b1}}) begin
            for (tt = 0; tt < TAG_COUNT; tt = tt + 1) begin
                if (active_reg[tt] && ctx_timer_reg[tt] != {TO_W{1'b1}}) begin
                    ctx_timer_reg[tt] <= ctx_timer_reg[tt] + 1'b1;
                end
            end
        end

        if (rc_retire) begin
            active_reg[tag] <= 1'b0;
        end else if (to_retire) begin
            active_reg[exp_idx] <= 1'b0;
            dead_reg[exp_idx] <= 1'b1;
        end
        if (dead_end) begin
            dead_reg[tag] <= 1'b0;
        end

        if (alloc_valid) begin
            active_reg[free_idx] <= 1'b1;
            ctx_kind_reg[free_idx] <= alloc_kind;
            ctx_slot_reg[free_idx] <= alloc_slot;
            ctx_lo_reg[free_idx] <= alloc_addr_lo;
            ctx_info_reg[free_idx] <= alloc_info;
            ctx_err_reg[free_idx] <= 5'd0;
            ctx_len_reg[free_idx] <= alloc_len;
            ctx_next_reg[free_idx] <= 13'd0;
            ctx_timer_reg[free_idx] <= {TO_W{1'b0}};
        end

        if (rst) begin
            active_reg <= {TAG_COUNT{1'b0}};
            // (a completion of a request made before the reset matches no tag afterwards;
            // PCIe's transaction IDs stay unique: no tag the core tracks is used again)
            dead_reg <= rst_keeps_tags ? dead_reg | active_reg : {TAG_COUNT{1'b0}};
            rc_valid_reg <= 1'b0;
            rc_beat_reg <= 11'd0;
            dat_on_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
