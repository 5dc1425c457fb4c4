// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Splits the UltraScale+ completer request stream (CQ, dword-aligned mode, no
 * straddle) by TLP: requests that hit BAR (other than messages) to port 1,
 * everything else to port 0.  The BAR id is in descriptor DWORD 3: at 128 bits
 * and wider it is in the first beat and the TLP passes with no delay; at 64
 * bits the first beat is held until the second shows the BAR id, then the TLP
 * passes on.  A beat shown to a port stays until that port takes it.
 */
module pevb_cq_demux #
(
    // PCIe AXI stream data width (64, 128, 256 or 512)
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    // PCIe AXI stream tkeep width (DWORD lanes)
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    // CQ tuser width
    parameter AXIS_PCIE_CQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 88 : 183,
    // the BAR id routed to port 1
    parameter [2:0] BAR = 3'd2
)
(
    input  wire                               clk,
    input  wire                               rst,

    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_cq_tdata,
    input  wire [AXIS_PCIE_KEEP_WIDTH-1:0]    s_axis_cq_tkeep,
    input  wire                               s_axis_cq_tvalid,
    output wire                               s_axis_cq_tready,
    input  wire                               s_axis_cq_tlast,
    input  wire [AXIS_PCIE_CQ_USER_WIDTH-1:0] s_axis_cq_tuser,

    // both ports share data, keep, last and user; each has its valid and ready
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_cq_tdata,
    output wire [AXIS_PCIE_KEEP_WIDTH-1:0]    m_axis_cq_tkeep,
    output wire                               m_axis_cq_tlast,
    output wire [AXIS_PCIE_CQ_USER_WIDTH-1:0] m_axis_cq_tuser,
    output wire [1:0]                         m_axis_cq_tvalid,
    input  wire [1:0]                         m_axis_cq_tready
);

localparam KEEP = AXIS_PCIE_KEEP_WIDTH;

initial begin
    if (AXIS_PCIE_DATA_WIDTH != 64 && AXIS_PCIE_DATA_WIDTH != 128 &&
            AXIS_PCIE_DATA_WIDTH != 256 && AXIS_PCIE_DATA_WIDTH != 512) begin
        $error("Error: AXIS_PCIE_DATA_WIDTH must be 64, 128, 256 or 512 (instance %m)");
        $finish;
    end
end

// descriptor DWORDs 2 (request type) and 3 (BAR id) of the beat showing them
wire [AXIS_PCIE_DATA_WIDTH+127:0] pad = {128'd0, s_axis_cq_tdata};
wire [31:0] dw2 = KEEP == 2 ? pad[31:0] : pad[95:64];
wire [31:0] dw3 = KEEP == 2 ? pad[63:32] : pad[127:96];
// messages (request type 11xx) carry no BAR
wire hit = dw3[18:16] == BAR && dw2[14:13] != 2'b11;
wire unused_pad = ^{pad[AXIS_PCIE_DATA_WIDTH+127:128], dw2[31:15], dw2[12:0], dw3[31:19],
                    dw3[15:0]};

// a TLP in progress (its first beat taken), and its port
reg in_pkt_reg;
reg sel_reg;
// 64 bits: the first beat held until the second shows the BAR id
reg held_reg;
reg [AXIS_PCIE_DATA_WIDTH-1:0] hold_data_reg;
reg [KEEP-1:0] hold_keep_reg;
reg [AXIS_PCIE_CQ_USER_WIDTH-1:0] hold_user_reg;

wire sel = in_pkt_reg ? sel_reg : hit;
wire held = KEEP == 2 && held_reg;
// at 64 bits a new TLP's first beat goes into the hold register
wire to_hold = KEEP == 2 && !in_pkt_reg && !held_reg;
wire out_valid = held ? s_axis_cq_tvalid : s_axis_cq_tvalid && !to_hold;
wire out_ready = sel ? m_axis_cq_tready[1] : m_axis_cq_tready[0];

assign m_axis_cq_tdata = held ? hold_data_reg : s_axis_cq_tdata;
assign m_axis_cq_tkeep = held ? hold_keep_reg : s_axis_cq_tkeep;
assign m_axis_cq_tlast = held ? 1'b0 : s_axis_cq_tlast;
assign m_axis_cq_tuser = held ? hold_user_reg : s_axis_cq_tuser;
assign m_axis_cq_tvalid = {out_valid && sel, out_valid && !sel};
assign s_axis_cq_tready = to_hold || (!held && out_ready);

always @(posedge clk) begin
    if (to_hold && s_axis_cq_tvalid) begin
        held_reg <= 1'b1;
        hold_data_reg <= s_axis_cq_tdata;
        hold_keep_reg <= s_axis_cq_tkeep;
        hold_user_reg <= s_axis_cq_tuser;
    end
    if (out_valid && out_ready) begin
        if (held) begin
            // the held first beat went out: the TLP goes on to the same port
            held_reg <= 1'b0;
            in_pkt_reg <= 1'b1;
            sel_reg <= sel;
        end else if (s_axis_cq_tlast) begin
            in_pkt_reg <= 1'b0;
        end else begin
            in_pkt_reg <= 1'b1;
            sel_reg <= sel;
        end
    end
    if (rst) begin
        in_pkt_reg <= 1'b0;
        sel_reg <= 1'b0;
        held_reg <= 1'b0;
    end
end

endmodule

`resetall
