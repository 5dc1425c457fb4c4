// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * Completer for the UltraScale+ CQ/CC interfaces: turns single-DWORD memory
 * reads and writes to the user BAR and the DMA BAR into register accesses and returns the
 * read completions.  Reads longer than one DWORD complete with Completer
 * Abort, other non-posted requests (I/O, atomics, locked reads) with
 * Unsupported Request; writes longer than one DWORD and other posted requests
 * are dropped.  One request is handled at a time (CQ back-pressured while busy,
 * until the register block or the AXI-Lite master acknowledges the access).
 */
module pevb_cq_cc #
(
    // PCIe AXI stream data width (64, 128, 256 or 512)
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    // PCIe AXI stream tkeep width (DWORD lanes)
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    // CQ tuser width
    parameter AXIS_PCIE_CQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 88 : 183,
    // CC tuser width
    parameter AXIS_PCIE_CC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 33 : 81,
    // BAR ids (the CQ descriptor's) of the user BAR and the DMA BAR; 7: none
    parameter [2:0] BAR_USER = `PEVB_BAR_USER,
    parameter [2:0] BAR_DMA = `PEVB_BAR_DMA
)
(
    input  wire                               clk,
    input  wire                               rst,

    /* Completer request (CQ) */
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

    /* Register access */
    output wire                               reg_req_valid,
    output wire                               reg_req_we,
    output wire [2:0]                         reg_req_bar,
    output wire [`PEVB_BAR_DMA_ADDR_WIDTH-1:0] reg_req_addr,
    output wire [31:0]                        reg_req_wdata,
    output wire [3:0]                         reg_req_be,
    // the access is done (one cycle or more after the reg_req_valid pulse); read
    // data is valid with it
    input  wire                               reg_ack,
    input  wire [31:0]                        reg_rd_data
);

localparam KEEP = AXIS_PCIE_KEEP_WIDTH;
localparam [0:0] CC_LAST_BEAT = KEEP == 2 ? 1'b1 : 1'b0;

// CQ request types (PG213 req_type)
localparam [3:0] REQ_MEM_READ  = 4'b0000;
localparam [3:0] REQ_MEM_WRITE = 4'b0001;
localparam [3:0] REQ_MSG       = 4'b1100;

// completion status
localparam [2:0] CPL_SC = 3'b000;
localparam [2:0] CPL_UR = 3'b001;
localparam [2:0] CPL_CA = 3'b100;

localparam [1:0]
    STATE_RX = 2'd0,
    STATE_EXEC = 2'd1,
    STATE_WAIT = 2'd2,
    STATE_CC = 2'd3;

initial begin
    if (AXIS_PCIE_DATA_WIDTH != 64 && AXIS_PCIE_DATA_WIDTH != 128 &&
            AXIS_PCIE_DATA_WIDTH != 256 && AXIS_PCIE_DATA_WIDTH != 512) begin
        $error("Error: AXIS_PCIE_DATA_WIDTH must be 64, 128, 256 or 512 (instance %m)");
        $finish;
    end
end

reg [1:0] state_reg;

// captured stream DWORDs 0-4 (4 DWORD descriptor + first payload DWORD)
reg [31:0] cap_reg [0:4];
reg [3:0] beat_reg;
reg [3:0] first_be_reg;

reg reg_req_valid_reg;
reg [2:0] cc_status_reg;
reg cc_has_data_reg;
reg [31:0] cc_data_reg;
reg cc_beat_reg;

wire [63:0] req_addr = {cap_reg[1], cap_reg[0][31:2], 2'b00};
wire [10:0] req_dw_count = cap_reg[2][10:0];
wire [3:0] req_type = cap_reg[2][14:11];
wire [15:0] req_requester_id = cap_reg[2][31:16];
wire [7:0] req_tag = cap_reg[3][7:0];
wire [7:0] req_function = cap_reg[3][15:8];
wire [2:0] req_bar = cap_reg[3][18:16];
wire [2:0] req_tc = cap_reg[3][27:25];
wire [2:0] req_attr = cap_reg[3][30:28];

wire req_is_read = req_type == REQ_MEM_READ;
wire req_is_write = req_type == REQ_MEM_WRITE;
// posted requests: memory writes and messages; everything else needs a completion
wire req_posted = req_is_write || req_type[3:2] == REQ_MSG[3:2];
wire req_bar_ok = req_bar == BAR_USER || req_bar == BAR_DMA;
wire req_ok = req_bar_ok && req_dw_count == 11'd1;

// byte count and lower address of a single-DWORD read completion (PCIe 2.3.1.1)
reg [1:0] be_first_idx;
reg [2:0] be_byte_count;
always @* begin
    casez (first_be_reg)
        4'b???1: be_first_idx = 2'd0;
        4'b??10: be_first_idx = 2'd1;
        4'b?100: be_first_idx = 2'd2;
        4'b1000: be_first_idx = 2'd3;
        default: be_first_idx = 2'd0;
    endcase
    casez (first_be_reg)
        4'b1??1: be_byte_count = 3'd4;
        4'b01?1: be_byte_count = 3'd3;
        4'b1?10: be_byte_count = 3'd3;
        4'b0011: be_byte_count = 3'd2;
        4'b0110: be_byte_count = 3'd2;
        4'b1100: be_byte_count = 3'd2;
        default: be_byte_count = 3'd1;
    endcase
end

wire [6:0] cpl_lower_addr = {req_addr[6:2], be_first_idx};
wire [12:0] cpl_byte_count = req_dw_count == 11'd1 ? {10'd0, be_byte_count} : {req_dw_count, 2'b00};

// completion DWORDs
wire [31:0] cc_dw0 = {3'b000, cpl_byte_count, 6'd0, 2'b00, 1'b0, cpl_lower_addr};
wire [31:0] cc_dw1 = {req_requester_id, 1'b0, 1'b0, cc_status_reg, cc_has_data_reg ? 11'd1 : 11'd0};
wire [31:0] cc_dw2 = {1'b0, req_attr, req_tc, 1'b0, 8'd0, req_function, req_tag};
wire [127:0] cc_dws = {cc_data_reg, cc_dw2, cc_dw1, cc_dw0};
wire [2:0] cc_dw_total = cc_has_data_reg ? 3'd4 : 3'd3;

reg [AXIS_PCIE_DATA_WIDTH-1:0] cc_tdata;
reg [KEEP-1:0] cc_tkeep;
integer j;
always @* begin
    cc_tdata = {AXIS_PCIE_DATA_WIDTH{1'b0}};
    cc_tkeep = {KEEP{1'b0}};
    for (j = 0; j < KEEP; j = j + 1) begin
        if (j + cc_beat_reg*KEEP < cc_dw_total) begin
            cc_tdata[j*32 +: 32] = cc_dws[(j + cc_beat_reg*KEEP)*32 +: 32];
            cc_tkeep[j] = 1'b1;
        end
    end
end

assign m_axis_cc_tdata = cc_tdata;
assign m_axis_cc_tkeep = cc_tkeep;
assign m_axis_cc_tvalid = state_reg == STATE_CC;
assign m_axis_cc_tlast = cc_beat_reg == CC_LAST_BEAT;
assign m_axis_cc_tuser = {AXIS_PCIE_CC_USER_WIDTH{1'b0}};

assign s_axis_cq_tready = state_reg == STATE_RX;

assign reg_req_valid = reg_req_valid_reg;
assign reg_req_we = req_is_write;
assign reg_req_bar = req_bar;
assign reg_req_addr = req_addr[`PEVB_BAR_DMA_ADDR_WIDTH-1:0];

// only the 64 KiB of the largest BAR is decoded; CQ tuser beyond the first byte enables
// (last BE, byte enables per lane, SOP, discontinue) carries nothing a 1-DW completer needs
wire unused_cq = ^{req_addr[63:`PEVB_BAR_DMA_ADDR_WIDTH], s_axis_cq_tuser[AXIS_PCIE_CQ_USER_WIDTH-1:4]};
assign reg_req_wdata = cap_reg[4];
assign reg_req_be = first_be_reg;

integer k;
// The block below changes nothing while waiting for a request with none arriving (a
// clock enable): event-driven simulators then skip it on idle cycles.
wire wake = rst || state_reg != STATE_RX || s_axis_cq_tvalid || reg_req_valid_reg;

always @(posedge clk) begin
    if (wake) begin
        reg_req_valid_reg <= 1'b0;

        case (state_reg)
            STATE_RX: begin
                if (s_axis_cq_tvalid) begin
                    for (k = 0; k < KEEP; k = k + 1) begin
                        if (beat_reg*KEEP + k < 5 && s_axis_cq_tkeep[k]) begin
                            cap_reg[beat_reg*KEEP + k] <= s_axis_cq_tdata[k*32 +: 32];
                        end
                    end
                    if (beat_reg == 4'd0) begin
                        first_be_reg <= s_axis_cq_tuser[3:0];
                    end
                    if (beat_reg != 4'hf) begin
                        beat_reg <= beat_reg + 4'd1;
                    end
                    if (s_axis_cq_tlast) begin
                        beat_reg <= 4'd0;
                        state_reg <= STATE_EXEC;
                    end
                end
            end
            STATE_EXEC: begin
                cc_beat_reg <= 1'b0;
                if (req_posted) begin
                    // memory writes go to the registers (and wait for their acknowledge, so
                    // that accesses stay in order); messages are ignored
                    reg_req_valid_reg <= req_is_write && req_ok;
                    state_reg <= req_is_write && req_ok ? STATE_WAIT : STATE_RX;
                end else if (req_is_read && req_ok) begin
                    reg_req_valid_reg <= 1'b1;
                    cc_status_reg <= CPL_SC;
                    cc_has_data_reg <= 1'b1;
                    state_reg <= STATE_WAIT;
                end else begin
                    // reads longer than one DWORD: completer abort; anything else: UR
                    cc_status_reg <= (req_is_read && req_bar_ok) ? CPL_CA : CPL_UR;
                    cc_has_data_reg <= 1'b0;
                    state_reg <= STATE_CC;
                end
            end
            STATE_WAIT: begin
                // the register read data is valid with the acknowledge
                if (reg_ack) begin
                    state_reg <= req_is_read ? STATE_CC : STATE_RX;
                end
            end
            STATE_CC: begin
                if (m_axis_cc_tready) begin
                    if (cc_beat_reg == CC_LAST_BEAT) begin
                        state_reg <= STATE_RX;
                    end else begin
                        cc_beat_reg <= 1'b1;
                    end
                end
            end
            default: state_reg <= STATE_RX;
        endcase

        if (state_reg == STATE_WAIT && reg_ack) begin
            cc_data_reg <= reg_rd_data;
        end

        if (rst) begin
            state_reg <= STATE_RX;
            beat_reg <= 4'd0;
            reg_req_valid_reg <= 1'b0;
            cc_beat_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
