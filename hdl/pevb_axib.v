// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * PCIe-to-DMA bypass master (XDMA's m_axib_*, PG195 "Host-to-Card Bypass
 * Master"): memory requests of the host to the bypass BAR become AXI4 bursts.
 *
 * One request at a time.  A request arrives whole (CQ, dword-aligned mode) in
 * a buffer of bus words, so a malformed one never reaches the bus.
 *  - A memory write is one INCR burst of full-width beats from the DWORD-aligned
 *    address (AXI_BASE + offset in the BAR), the byte enables of the TLP on
 *    wstrb.  Writes are posted: the next request goes on without waiting for
 *    their B responses (up to WRITES_IN_FLIGHT); a B error is dropped (the host
 *    is not told: a posted write has no completion).  A zero-length write
 *    reaches no slave.
 *  - A memory read waits for the B responses of every write before it (a read
 *    never passes a posted write), then reads in chunks that end on boundaries
 *    of the programmed max payload size: one INCR burst and one completion per
 *    chunk, the completion sent once its burst is whole.  A chunk read with
 *    SLVERR ends the request with a Completer Abort completion, DECERR with
 *    Unsupported Request (PG195's bridge: "SLVERR ... Completer Abort",
 *    "DECERR ... Unsupported Request"); completions already sent stand.
 *  - Other non-posted requests get Unsupported Request; other posted requests
 *    are dropped.
 * An AXI burst never crosses a 4 KiB boundary: the TLP does not (PCIe), and
 * AXI_BASE is 4 KiB aligned.
 */
module pevb_axib #
(
    // PCIe AXI stream data width (64, 128, 256 or 512): also the AXI4 data width
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    // PCIe AXI stream tkeep width (DWORD lanes)
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    // CQ tuser width
    parameter AXIS_PCIE_CQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 88 : 183,
    // CC tuser width
    parameter AXIS_PCIE_CC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 33 : 81,
    // AXI address and ID widths
    parameter AXI_ADDR_WIDTH = 64,
    parameter AXI_ID_WIDTH = 4,
    // log2 of the BAR's size in bytes (12 to 31)
    parameter BAR_ADDR_WIDTH = 20,
    // AXI address of the BAR's first byte (Vivado's pciebar2axibar_axist_bypass)
    parameter [63:0] AXI_BASE = 64'd0,
    // largest max payload size the host may program (bytes, 128 to 1024)
    parameter MAX_PAYLOAD = 1024,
    // posted writes whose B response is outstanding before the next request waits
    parameter WRITES_IN_FLIGHT = 8
)
(
    input  wire                               clk,
    input  wire                               rst,

`include "pevb_axib_ports.vh"

    /* Completer request (CQ): requests to the bypass BAR only */
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_cq_tdata,
    input  wire [AXIS_PCIE_KEEP_WIDTH-1:0]    s_axis_cq_tkeep,
    input  wire                               s_axis_cq_tvalid,
    output wire                               s_axis_cq_tready,
    input  wire                               s_axis_cq_tlast,
    input  wire [AXIS_PCIE_CQ_USER_WIDTH-1:0] s_axis_cq_tuser,

    /* Completer completion (CC) */
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_cc_tdata,
    output wire [AXIS_PCIE_KEEP_WIDTH-1:0]    m_axis_cc_tkeep,
    output wire                               m_axis_cc_tvalid,
    input  wire                               m_axis_cc_tready,
    output wire                               m_axis_cc_tlast,
    output wire [AXIS_PCIE_CC_USER_WIDTH-1:0] m_axis_cc_tuser,

    /* the max payload size the host programmed (PG213 encoding: 128 << n bytes) */
    input  wire [2:0]                         cfg_max_payload
);

localparam DW = AXIS_PCIE_DATA_WIDTH;
localparam KEEP = AXIS_PCIE_KEEP_WIDTH;
localparam LOG_KEEP = KEEP == 2 ? 1 : KEEP == 4 ? 2 : KEEP == 8 ? 3 : 4;
localparam [2:0] AXSIZE = LOG_KEEP + 2;
// the buffer holds a write TLP whole (4 descriptor DWORDs and the payload) or one
// chunk of read data (a max payload size from any DWORD of a bus word)
localparam BUF_WORDS = (16 + MAX_PAYLOAD + DW/8 - 1) / (DW/8) + 1;
localparam BUF_AW = clog2(BUF_WORDS);
localparam POS_W = BUF_AW + LOG_KEEP;
localparam LAST_BE_LSB = DW == 512 ? 8 : 4;
localparam [2:0] MPS_MAX_ENC = MAX_PAYLOAD >= 1024 ? 3'd3 : MAX_PAYLOAD >= 512 ? 3'd2 :
                               MAX_PAYLOAD >= 256 ? 3'd1 : 3'd0;
localparam CNT_W = clog2(WRITES_IN_FLIGHT + 1);

function integer clog2(input integer value);
    integer v;
    begin
        v = value - 1;
        clog2 = 0;
        while (v > 0) begin
            clog2 = clog2 + 1;
            v = v >> 1;
        end
    end
endfunction

initial begin
    if (DW != 64 && DW != 128 && DW != 256 && DW != 512) begin
        $error("Error: AXIS_PCIE_DATA_WIDTH must be 64, 128, 256 or 512 (instance %m)");
        $finish;
    end
    if (BAR_ADDR_WIDTH < 12 || BAR_ADDR_WIDTH > 31 || BAR_ADDR_WIDTH > AXI_ADDR_WIDTH) begin
        $error("Error: BAR_ADDR_WIDTH must be 12 to 31, at most AXI_ADDR_WIDTH (instance %m)");
        $finish;
    end
    if (AXI_BASE[11:0] != 12'd0) begin
        $error("Error: AXI_BASE must be 4 KiB aligned (instance %m)");
        $finish;
    end
    if (MAX_PAYLOAD != 128 && MAX_PAYLOAD != 256 && MAX_PAYLOAD != 512 && MAX_PAYLOAD != 1024) begin
        $error("Error: MAX_PAYLOAD must be 128, 256, 512 or 1024 (instance %m)");
        $finish;
    end
    if (WRITES_IN_FLIGHT < 1 || WRITES_IN_FLIGHT > 255) begin
        $error("Error: WRITES_IN_FLIGHT must be 1 to 255 (instance %m)");
        $finish;
    end
end

// CQ request types (PG213 req_type)
localparam [3:0] REQ_MEM_READ  = 4'b0000;
localparam [3:0] REQ_MEM_WRITE = 4'b0001;
localparam [1:0] REQ_MSG_HI    = 2'b11;

// completion status
localparam [2:0] CPL_SC = 3'b000;
localparam [2:0] CPL_UR = 3'b001;
localparam [2:0] CPL_CA = 3'b100;

localparam [1:0] RESP_SLVERR = 2'b10;
localparam [1:0] RESP_DECERR = 2'b11;

localparam [2:0]
    ST_RX = 3'd0,
    ST_DEC = 3'd1,
    ST_WR = 3'd2,
    ST_CHUNK = 3'd3,
    ST_AR = 3'd4,
    ST_R = 3'd5,
    ST_CC = 3'd6;

reg [2:0] state_reg;

// the request buffer (bus words) and the request's descriptor
reg [DW-1:0] buf_mem [0:(1 << BUF_AW)-1];
reg [BUF_AW:0] rx_beat_reg;
reg ovf_reg;
reg [31:0] cap_reg [0:3];
reg [3:0] first_be_reg;
reg [3:0] last_be_reg;

wire [63:0] req_addr = {cap_reg[1], cap_reg[0][31:2], 2'b00};
wire [10:0] req_dw_count = cap_reg[2][10:0];
wire [3:0] req_type = cap_reg[2][14:11];
wire [15:0] req_requester_id = cap_reg[2][31:16];
wire [7:0] req_tag = cap_reg[3][7:0];
wire [7:0] req_function = cap_reg[3][15:8];
wire [2:0] req_tc = cap_reg[3][27:25];
wire [2:0] req_attr = cap_reg[3][30:28];
// the BAR id (routed here by it), the target function and the rest of the sideband
wire unused_cq = ^{cap_reg[3][24:16], cap_reg[3][31], cap_reg[2][15], req_addr[63:BAR_ADDR_WIDTH],
                   s_axis_cq_tkeep, s_axis_cq_tuser};

wire req_is_read = req_type == REQ_MEM_READ;
wire req_is_write = req_type == REQ_MEM_WRITE;
wire req_is_msg = req_type[3:2] == REQ_MSG_HI;
// a request that did not fit the buffer is malformed (longer than any max payload size);
// a write must carry its payload whole
wire [15:0] rx_dws = {{(15-BUF_AW-LOG_KEEP){1'b0}}, rx_beat_reg, {LOG_KEEP{1'b0}}};
wire wr_whole = !ovf_reg && rx_dws >= {5'd0, req_dw_count} + 16'd4;

// byte enables: the first and the last enabled byte of the request
reg [1:0] lead_idx;   // first enabled byte in the first DWORD
reg [1:0] hi_idx;     // last enabled byte in the last DWORD
wire [3:0] hi_be = req_dw_count == 11'd1 ? first_be_reg : last_be_reg;
always @* begin
    casez (first_be_reg)
        4'b???1: lead_idx = 2'd0;
        4'b??10: lead_idx = 2'd1;
        4'b?100: lead_idx = 2'd2;
        4'b1000: lead_idx = 2'd3;
        default: lead_idx = 2'd0;
    endcase
    casez (hi_be)
        4'b1???: hi_idx = 2'd3;
        4'b01??: hi_idx = 2'd2;
        4'b001?: hi_idx = 2'd1;
        default: hi_idx = 2'd0;
    endcase
end
// PCIe byte count of a read: from the first enabled byte to the last (1 for zero length)
wire [12:0] req_byte_count = {req_dw_count - 11'd1, 2'b00} + {11'd0, hi_idx} + 13'd1 -
                             {11'd0, lead_idx};

// the BAR offset of an address, and its AXI address
function [AXI_ADDR_WIDTH-1:0] axi_addr(input [BAR_ADDR_WIDTH-1:0] offset);
    reg [63:0] a;
    begin
        a = AXI_BASE + {{(64-BAR_ADDR_WIDTH){1'b0}}, offset};
        axi_addr = a[AXI_ADDR_WIDTH-1:0];
    end
endfunction

/* writes: the W beats from the buffer */
wire [LOG_KEEP-1:0] wr_lane = req_addr[LOG_KEEP+1:2];
wire [12:0] wr_lane13 = {{(13-LOG_KEEP){1'b0}}, wr_lane};
wire [12:0] wr_end13 = {2'b00, req_dw_count} + wr_lane13;
wire [11:0] wr_beats = ({1'b0, req_dw_count} + {{(12-LOG_KEEP){1'b0}}, wr_lane} +
                        KEEP[11:0] - 12'd1) >> LOG_KEEP;
reg [8:0] w_cnt_reg;
reg aw_done_reg;
reg [CNT_W-1:0] b_out_reg;

reg [DW-1:0] w_data;
reg [DW/8-1:0] w_strb;
reg [POS_W-1:0] w_pos;
reg [12:0] w_ia;   // payload DWORD index plus the address's lane
reg [DW-1:0] w_word;
integer l;
always @* begin
    w_data = {DW{1'b0}};
    w_strb = {DW/8{1'b0}};
    for (l = 0; l < KEEP; l = l + 1) begin
        w_ia = {{(4-LOG_KEEP){1'b0}}, w_cnt_reg, {LOG_KEEP{1'b0}}} + l[12:0];
        // payload DWORD i sits at DWORD 4 + i of the buffered TLP
        w_pos = w_ia[POS_W-1:0] - {{(POS_W-LOG_KEEP){1'b0}}, wr_lane} + 4;
        w_word = buf_mem[w_pos[POS_W-1:LOG_KEEP]];
        if (w_ia >= wr_lane13 && w_ia < wr_end13) begin
            w_data[l*32 +: 32] = w_word[w_pos[LOG_KEEP-1:0]*32 +: 32];
            if (w_ia == wr_lane13) begin
                w_strb[l*4 +: 4] = first_be_reg;
            end else if (w_ia == wr_end13 - 13'd1) begin
                w_strb[l*4 +: 4] = last_be_reg;
            end else begin
                w_strb[l*4 +: 4] = 4'hf;
            end
        end
    end
end

assign m_axib_awid = {AXI_ID_WIDTH{1'b0}};
assign m_axib_awaddr = axi_addr(req_addr[BAR_ADDR_WIDTH-1:0]);
assign m_axib_awlen = wr_beats[7:0] - 8'd1;
assign m_axib_awsize = AXSIZE;
assign m_axib_awburst = 2'b01;
assign m_axib_awlock = 1'b0;
assign m_axib_awcache = 4'b0000;
assign m_axib_awprot = 3'b000;
assign m_axib_awvalid = state_reg == ST_WR && !aw_done_reg;
assign m_axib_wdata = w_data;
assign m_axib_wstrb = w_strb;
assign m_axib_wlast = {3'b000, w_cnt_reg} == wr_beats - 12'd1;
assign m_axib_wvalid = state_reg == ST_WR && {3'b000, w_cnt_reg} != wr_beats;
assign m_axib_bready = 1'b1;
// B responses carry nothing for the host (posted writes)
wire unused_b = ^{m_axib_bid, m_axib_bresp};

wire aw_fire = m_axib_awvalid && m_axib_awready;
wire w_fire = m_axib_wvalid && m_axib_wready;
wire b_fire = m_axib_bvalid && b_out_reg != {CNT_W{1'b0}};
wire wr_done = (aw_done_reg || aw_fire) && ({3'b000, w_cnt_reg} == wr_beats ||
                                            (w_fire && m_axib_wlast));

/* reads: chunks ending on max payload size boundaries */
reg [63:0] rd_addr_reg;         // the chunk's first DWORD
reg [10:0] rd_rem_reg;          // DWORDs left, this chunk's included
reg [12:0] rd_bc_reg;           // byte count left, this chunk's included
reg rd_first_reg;
reg [9:0] c_dws_reg;            // DWORDs of this chunk (up to 256)
reg [2:0] cpl_status_reg;
reg [8:0] r_cnt_reg;

wire [2:0] mps_enc = cfg_max_payload > MPS_MAX_ENC ? MPS_MAX_ENC : cfg_max_payload;
wire [10:0] mps_bytes = 11'd128 << mps_enc;
// DWORDs from the chunk's address to the next max payload size boundary
wire [10:0] rd_room = (mps_bytes - ({1'b0, rd_addr_reg[9:0]} & (mps_bytes - 11'd1))) >> 2;
wire [10:0] c_dws_next = rd_rem_reg < rd_room ? rd_rem_reg : rd_room;
wire [LOG_KEEP-1:0] rd_lane = rd_addr_reg[LOG_KEEP+1:2];
wire [10:0] rd_beats = ({1'b0, c_dws_reg} + {{(11-LOG_KEEP){1'b0}}, rd_lane} +
                        KEEP[10:0] - 11'd1) >> LOG_KEEP;

assign m_axib_arid = {AXI_ID_WIDTH{1'b0}};
assign m_axib_araddr = axi_addr(rd_addr_reg[BAR_ADDR_WIDTH-1:0]);
assign m_axib_arlen = rd_beats[7:0] - 8'd1;
assign m_axib_arsize = AXSIZE;
assign m_axib_arburst = 2'b01;
assign m_axib_arlock = 1'b0;
assign m_axib_arcache = 4'b0000;
assign m_axib_arprot = 3'b000;
assign m_axib_arvalid = state_reg == ST_AR;
assign m_axib_rready = state_reg == ST_R;
// one burst outstanding: the ID is always 0; a chunk is at most 256 DWORDs, its burst
// at most 256 beats
wire unused_r = ^{m_axib_rid, c_dws_next[10], rd_beats[10:8], rd_addr_reg[63:BAR_ADDR_WIDTH]};

/* completions: 3 descriptor DWORDs, then the chunk's data from the buffer */
wire cpl_err = cpl_status_reg != CPL_SC;
wire [10:0] cc_dws = 11'd3 + (cpl_err ? 11'd0 : {1'b0, c_dws_reg});
wire [10:0] cc_beats = (cc_dws + KEEP[10:0] - 11'd1) >> LOG_KEEP;
reg [8:0] cc_cnt_reg;
// lower address: the first enabled byte in the first completion, else the chunk start;
// 0 for completions of requests other than memory reads
wire [6:0] cc_lower_addr = !req_is_read ? 7'd0 :
                           {rd_addr_reg[6:2], rd_first_reg ? lead_idx : 2'b00};
wire [12:0] cc_byte_count = req_is_read ? rd_bc_reg : 13'd4;
wire [31:0] cc_dw0 = {3'b000, cc_byte_count, 6'd0, 2'b00, 1'b0, cc_lower_addr};
wire [31:0] cc_dw1 = {req_requester_id, 1'b0, 1'b0, cpl_status_reg,
                      cpl_err ? 11'd0 : {1'b0, c_dws_reg}};
wire [31:0] cc_dw2 = {1'b0, req_attr, req_tc, 1'b0, 8'd0, req_function, req_tag};

reg [DW-1:0] cc_data;
reg [KEEP-1:0] cc_keep;
reg [12:0] cc_q;   // DWORD of the completion
reg [POS_W-1:0] cc_pos;
reg [DW-1:0] cc_word;
always @* begin
    cc_data = {DW{1'b0}};
    cc_keep = {KEEP{1'b0}};
    for (l = 0; l < KEEP; l = l + 1) begin
        cc_q = {{(4-LOG_KEEP){1'b0}}, cc_cnt_reg, {LOG_KEEP{1'b0}}} + l[12:0];
        // data DWORD i (completion DWORD 3 + i) sits at DWORD lane + i of the buffer
        cc_pos = cc_q[POS_W-1:0] + {{(POS_W-LOG_KEEP){1'b0}}, rd_lane} - 3;
        cc_word = buf_mem[cc_pos[POS_W-1:LOG_KEEP]];
        if (cc_q < {2'b00, cc_dws}) begin
            cc_keep[l] = 1'b1;
            case (cc_q)
                13'd0: cc_data[l*32 +: 32] = cc_dw0;
                13'd1: cc_data[l*32 +: 32] = cc_dw1;
                13'd2: cc_data[l*32 +: 32] = cc_dw2;
                default: cc_data[l*32 +: 32] = cc_word[cc_pos[LOG_KEEP-1:0]*32 +: 32];
            endcase
        end
    end
end

assign m_axis_cc_tdata = cc_data;
assign m_axis_cc_tkeep = cc_keep;
assign m_axis_cc_tvalid = state_reg == ST_CC;
assign m_axis_cc_tlast = {2'b00, cc_cnt_reg} == cc_beats - 11'd1;
assign m_axis_cc_tuser = {AXIS_PCIE_CC_USER_WIDTH{1'b0}};

assign s_axis_cq_tready = state_reg == ST_RX;

integer k;
wire [DW+127:0] cq_pad = {128'd0, s_axis_cq_tdata};
wire wr_zero_len = req_dw_count == 11'd1 && first_be_reg == 4'd0;
// a whole write waits in the decode state for a free B slot
wire dec_wait = req_is_write && wr_whole && !wr_zero_len &&
                b_out_reg == WRITES_IN_FLIGHT[CNT_W-1:0] && !b_fire;
always @(posedge clk) begin
    case (state_reg)
        ST_RX: begin
            if (s_axis_cq_tvalid) begin
                if (rx_beat_reg[BUF_AW]) begin
                    ovf_reg <= 1'b1;
                end else begin
                    buf_mem[rx_beat_reg[BUF_AW-1:0]] <= s_axis_cq_tdata;
                    rx_beat_reg <= rx_beat_reg + 1'b1;
                end
                // the descriptor: DWORDs 0-3 (beat 0, or beats 0 and 1 at 64 bits)
                for (k = 0; k < 4; k = k + 1) begin
                    if (rx_beat_reg == {(BUF_AW+1){1'b0}} && k < KEEP) begin
                        cap_reg[k] <= cq_pad[k*32 +: 32];
                    end
                end
                if (KEEP == 2 && rx_beat_reg == {{BUF_AW{1'b0}}, 1'b1}) begin
                    cap_reg[2] <= cq_pad[31:0];
                    cap_reg[3] <= cq_pad[63:32];
                end
                if (rx_beat_reg == {(BUF_AW+1){1'b0}}) begin
                    first_be_reg <= s_axis_cq_tuser[3:0];
                    last_be_reg <= s_axis_cq_tuser[LAST_BE_LSB +: 4];
                end
                if (s_axis_cq_tlast) begin
                    state_reg <= ST_DEC;
                end
            end
        end
        ST_DEC: begin
            aw_done_reg <= 1'b0;
            w_cnt_reg <= 9'd0;
            rd_addr_reg <= req_addr;
            rd_rem_reg <= req_dw_count;
            rd_bc_reg <= req_byte_count;
            rd_first_reg <= 1'b1;
            cpl_status_reg <= CPL_SC;
            c_dws_reg <= 10'd0;
            cc_cnt_reg <= 9'd0;
            if (req_is_write) begin
                // a whole, non-zero-length write goes out once a B slot is free
                if (!wr_whole || wr_zero_len) begin
                    state_reg <= ST_RX;
                end else if (!dec_wait) begin
                    state_reg <= ST_WR;
                end
            end else if (req_is_read && !ovf_reg) begin
                state_reg <= ST_CHUNK;
            end else if (!req_is_write && !req_is_msg) begin
                cpl_status_reg <= CPL_UR;
                state_reg <= ST_CC;
            end else begin
                state_reg <= ST_RX;
            end
            if (!dec_wait) begin
                rx_beat_reg <= {(BUF_AW+1){1'b0}};
                ovf_reg <= 1'b0;
            end
        end
        ST_WR: begin
            if (aw_fire) begin
                aw_done_reg <= 1'b1;
            end
            if (w_fire) begin
                w_cnt_reg <= w_cnt_reg + 9'd1;
            end
            if (wr_done) begin
                state_reg <= ST_RX;
            end
        end
        ST_CHUNK: begin
            // every earlier write answered before the read goes out
            c_dws_reg <= c_dws_next[9:0];
            if (b_out_reg == {CNT_W{1'b0}}) begin
                state_reg <= ST_AR;
            end
        end
        ST_AR: begin
            r_cnt_reg <= 9'd0;
            if (m_axib_arready) begin
                state_reg <= ST_R;
            end
        end
        ST_R: begin
            if (m_axib_rvalid) begin
                buf_mem[r_cnt_reg[BUF_AW-1:0]] <= m_axib_rdata;
                r_cnt_reg <= r_cnt_reg + 9'd1;
                if (cpl_status_reg == CPL_SC) begin
                    if (m_axib_rresp == RESP_SLVERR) begin
                        cpl_status_reg <= CPL_CA;
                    end else if (m_axib_rresp == RESP_DECERR) begin
                        cpl_status_reg <= CPL_UR;
                    end
                end
                if (m_axib_rlast) begin
                    cc_cnt_reg <= 9'd0;
                    state_reg <= ST_CC;
                end
            end
        end
        ST_CC: begin
            if (m_axis_cc_tready) begin
                cc_cnt_reg <= cc_cnt_reg + 9'd1;
                if (m_axis_cc_tlast) begin
                    rd_first_reg <= 1'b0;
                    rd_rem_reg <= rd_rem_reg - {1'b0, c_dws_reg};
                    rd_bc_reg <= rd_bc_reg - {1'b0, c_dws_reg, 2'b00} +
                                 (rd_first_reg ? {11'd0, lead_idx} : 13'd0);
                    rd_addr_reg <= rd_addr_reg + {52'd0, c_dws_reg, 2'b00};
                    if (cpl_err || !req_is_read || rd_rem_reg == {1'b0, c_dws_reg}) begin
                        state_reg <= ST_RX;
                    end else begin
                        state_reg <= ST_CHUNK;
                    end
                end
            end
        end
        default: state_reg <= ST_RX;
    endcase

    // B responses of posted writes: one more in flight per AW, one fewer per B
    if (aw_fire && !b_fire) begin
        b_out_reg <= b_out_reg + 1'b1;
    end else if (b_fire && !aw_fire) begin
        b_out_reg <= b_out_reg - 1'b1;
    end

    if (rst) begin
        state_reg <= ST_RX;
        rx_beat_reg <= {(BUF_AW+1){1'b0}};
        ovf_reg <= 1'b0;
        aw_done_reg <= 1'b0;
        w_cnt_reg <= 9'd0;
        b_out_reg <= {CNT_W{1'b0}};
        cc_cnt_reg <= 9'd0;
        r_cnt_reg <= 9'd0;
        cpl_status_reg <= CPL_SC;
    end
end

endmodule

`resetall
