// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * The picoevb card's AXI4-Lite GPIO behind the engine's user BAR: the LED
 * register (3 bits, active low, at USER_LED) and the card RAM size
 * (read-only, at USER_RAM_SIZE).  Other offsets read zero and ignore writes.
 * One access at a time, answered the cycle after both its address and data
 * (for writes) are present.
 */
module pevb_axil_gpio #
(
    // card RAM size reported at USER_RAM_SIZE
    parameter RAM_SIZE = 65536,
    // decoded address width (the user BAR's)
    parameter ADDR_WIDTH = `PEVB_BAR_USER_ADDR_WIDTH
)
(
    input  wire         clk,
    input  wire         rst,

    input  wire [31:0]  s_axil_awaddr,
    input  wire [2:0]   s_axil_awprot,
    input  wire         s_axil_awvalid,
    output wire         s_axil_awready,
    input  wire [31:0]  s_axil_wdata,
    input  wire [3:0]   s_axil_wstrb,
    input  wire         s_axil_wvalid,
    output wire         s_axil_wready,
    output wire [1:0]   s_axil_bresp,
    output wire         s_axil_bvalid,
    input  wire         s_axil_bready,
    input  wire [31:0]  s_axil_araddr,
    input  wire [2:0]   s_axil_arprot,
    input  wire         s_axil_arvalid,
    output wire         s_axil_arready,
    output wire [31:0]  s_axil_rdata,
    output wire [1:0]   s_axil_rresp,
    output wire         s_axil_rvalid,
    input  wire         s_axil_rready,

    output wire [2:0]   led
);

localparam [31:0] RAM_SIZE_WORD = RAM_SIZE;

reg [`PEVB_LED_FIELD] led_reg;
reg b_valid_reg;
reg r_valid_reg;
reg [31:0] r_data_reg;

// offsets above the decoded width alias; protection does not matter here
wire unused_axil = ^{s_axil_awaddr[31:ADDR_WIDTH], s_axil_araddr[31:ADDR_WIDTH], s_axil_awaddr[1:0],
                     s_axil_araddr[1:0], s_axil_awprot, s_axil_arprot, s_axil_wstrb[3:1],
                     s_axil_wdata[31:3]};

wire [ADDR_WIDTH-1:0] wr_ofs = {s_axil_awaddr[ADDR_WIDTH-1:2], 2'b00};
wire [ADDR_WIDTH-1:0] rd_ofs = {s_axil_araddr[ADDR_WIDTH-1:2], 2'b00};

wire wr_take = s_axil_awvalid && s_axil_wvalid && !b_valid_reg;
assign s_axil_awready = wr_take;
assign s_axil_wready = wr_take;
assign s_axil_bresp = 2'b00;
assign s_axil_bvalid = b_valid_reg;

wire rd_take = s_axil_arvalid && !r_valid_reg;
assign s_axil_arready = rd_take;
assign s_axil_rdata = r_data_reg;
assign s_axil_rresp = 2'b00;
assign s_axil_rvalid = r_valid_reg;

assign led = led_reg;

// The block below only acts on an access or clears a response already given: it runs
// when one of these holds (a clock enable), and event-driven simulators skip it on idle
// cycles.
wire wake = rst || wr_take || rd_take || b_valid_reg || r_valid_reg;

always @(posedge clk) begin
    if (wake) begin
        if (s_axil_bready) begin
            b_valid_reg <= 1'b0;
        end
        if (wr_take) begin
            b_valid_reg <= 1'b1;
            if (wr_ofs == {{(ADDR_WIDTH-8){1'b0}}, `PEVB_USER_LED} && s_axil_wstrb[0]) begin
                led_reg <= s_axil_wdata[`PEVB_LED_FIELD];
            end
        end

        if (s_axil_rready) begin
            r_valid_reg <= 1'b0;
        end
        if (rd_take) begin
            r_valid_reg <= 1'b1;
            if (rd_ofs == {{(ADDR_WIDTH-8){1'b0}}, `PEVB_USER_LED}) begin
                r_data_reg <= {{(32-3){1'b0}}, led_reg};
            end else if (rd_ofs == {{(ADDR_WIDTH-8){1'b0}}, `PEVB_USER_RAM_SIZE}) begin
                r_data_reg <= RAM_SIZE_WORD;
            end else begin
                r_data_reg <= 32'd0;
            end
        end

        if (rst) begin
            led_reg <= `PEVB_LED_RESET_VALUE;
            b_valid_reg <= 1'b0;
            r_valid_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
