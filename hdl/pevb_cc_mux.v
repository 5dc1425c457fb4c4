// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Merges two completer completion (CC) streams into one, a TLP at a time,
 * taking turns when both wait.  The choice is kept from the beat it is first
 * shown until the TLP's last beat is taken, so a shown beat never changes.
 */
module pevb_cc_mux #
(
    // PCIe AXI stream data width (64, 128, 256 or 512)
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    // PCIe AXI stream tkeep width (DWORD lanes)
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    // CC tuser width
    parameter AXIS_PCIE_CC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 33 : 81
)
(
    input  wire                                 clk,
    input  wire                                 rst,

    // two sources, source n in bits n of each field
    input  wire [2*AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_cc_tdata,
    input  wire [2*AXIS_PCIE_KEEP_WIDTH-1:0]    s_axis_cc_tkeep,
    input  wire [1:0]                           s_axis_cc_tvalid,
    output wire [1:0]                           s_axis_cc_tready,
    input  wire [1:0]                           s_axis_cc_tlast,
    input  wire [2*AXIS_PCIE_CC_USER_WIDTH-1:0] s_axis_cc_tuser,

    output wire [AXIS_PCIE_DATA_WIDTH-1:0]      m_axis_cc_tdata,
    output wire [AXIS_PCIE_KEEP_WIDTH-1:0]      m_axis_cc_tkeep,
    output wire                                 m_axis_cc_tvalid,
    input  wire                                 m_axis_cc_tready,
    output wire                                 m_axis_cc_tlast,
    output wire [AXIS_PCIE_CC_USER_WIDTH-1:0]   m_axis_cc_tuser
);

localparam DW = AXIS_PCIE_DATA_WIDTH;
localparam KEEP = AXIS_PCIE_KEEP_WIDTH;
localparam UW = AXIS_PCIE_CC_USER_WIDTH;

// a TLP shown and not finished, and its source; the source that goes first next
reg lock_reg;
reg sel_reg;
reg prio_reg;

wire sel = lock_reg ? sel_reg : (s_axis_cc_tvalid[1] && (!s_axis_cc_tvalid[0] || prio_reg));

assign m_axis_cc_tdata = s_axis_cc_tdata[sel*DW +: DW];
assign m_axis_cc_tkeep = s_axis_cc_tkeep[sel*KEEP +: KEEP];
assign m_axis_cc_tvalid = s_axis_cc_tvalid[sel];
assign m_axis_cc_tlast = s_axis_cc_tlast[sel];
assign m_axis_cc_tuser = s_axis_cc_tuser[sel*UW +: UW];
assign s_axis_cc_tready = {sel && m_axis_cc_tready, !sel && m_axis_cc_tready};

always @(posedge clk) begin
    if (m_axis_cc_tvalid) begin
        if (m_axis_cc_tready && m_axis_cc_tlast) begin
            lock_reg <= 1'b0;
            prio_reg <= !sel;
        end else begin
            lock_reg <= 1'b1;
            sel_reg <= sel;
        end
    end
    if (rst) begin
        lock_reg <= 1'b0;
        sel_reg <= 1'b0;
        prio_reg <= 1'b0;
    end
end

endmodule

`resetall
