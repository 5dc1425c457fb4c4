// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * PCIe to AXI4-Lite master (XDMA's "PCIe to AXI Lite Master" BAR): each
 * single-DWORD register access the completer decodes on the user BAR becomes
 * one AXI4-Lite read or write at the BAR offset plus BASE_ADDR, with the
 * PCIe byte enables as write strobes.  One access at a time; the acknowledge
 * follows the write response or the read data.  The response code is not
 * reported back to PCIe (the read data is returned as the slave gave it).
 */
module pevb_axil_master #
(
    // BAR offset width
    parameter BAR_ADDR_WIDTH = 12,
    // AXI-Lite address of BAR offset 0
    parameter [31:0] BASE_ADDR = 32'h0000_0000
)
(
    input  wire                      clk,
    input  wire                      rst,

`include "pevb_axil_master_ports.vh"

    /* Register access (valid is a one-cycle pulse; hold address and data until ack) */
    input  wire                      req_valid,
    input  wire                      req_we,
    input  wire [BAR_ADDR_WIDTH-1:0] req_addr,
    input  wire [31:0]               req_wdata,
    input  wire [3:0]                req_be,
    output wire                      ack,
    output wire [31:0]               rd_data
);

reg aw_pending_reg;
reg w_pending_reg;
reg b_pending_reg;
reg ar_pending_reg;
reg r_pending_reg;

wire [31:0] addr = BASE_ADDR + {{(32-BAR_ADDR_WIDTH){1'b0}}, req_addr[BAR_ADDR_WIDTH-1:2], 2'b00};
// the response codes are not carried back to PCIe
wire unused_resp = ^{m_axil_bresp, m_axil_rresp, req_addr[1:0]};

assign m_axil_awaddr = addr;
assign m_axil_awprot = 3'b000;
assign m_axil_awvalid = aw_pending_reg;
assign m_axil_wdata = req_wdata;
assign m_axil_wstrb = req_be;
assign m_axil_wvalid = w_pending_reg;
assign m_axil_bready = b_pending_reg;
assign m_axil_araddr = addr;
assign m_axil_arprot = 3'b000;
assign m_axil_arvalid = ar_pending_reg;
assign m_axil_rready = r_pending_reg;

assign ack = (m_axil_bvalid && b_pending_reg) || (m_axil_rvalid && r_pending_reg);
assign rd_data = m_axil_rdata;

// The block below only clears pending flags or takes a request: it runs when one is
// pending or a request comes (a clock enable), and event-driven simulators skip it on
// idle cycles.
wire wake = rst || req_valid || aw_pending_reg || w_pending_reg || b_pending_reg ||
            ar_pending_reg || r_pending_reg;

always @(posedge clk) begin
    if (wake) begin
        if (m_axil_awready) begin
            aw_pending_reg <= 1'b0;
        end
        if (m_axil_wready) begin
            w_pending_reg <= 1'b0;
        end
        if (m_axil_bvalid) begin
            b_pending_reg <= 1'b0;
        end
        if (m_axil_arready) begin
            ar_pending_reg <= 1'b0;
        end
        if (m_axil_rvalid) begin
            r_pending_reg <= 1'b0;
        end

        if (req_valid) begin
            aw_pending_reg <= req_we;
            w_pending_reg <= req_we;
            b_pending_reg <= req_we;
            ar_pending_reg <= !req_we;
            r_pending_reg <= !req_we;
        end

        if (rst) begin
            aw_pending_reg <= 1'b0;
            w_pending_reg <= 1'b0;
            b_pending_reg <= 1'b0;
            ar_pending_reg <= 1'b0;
            r_pending_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
