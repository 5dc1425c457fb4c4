// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Card memory: BYTE_LANES independent byte-wide banks, one write port and one
 * read port, each lane with its own word address.  Lane m holds the card bytes
 * whose address is congruent to m modulo BYTE_LANES, so a beat that straddles
 * two bus words (any byte alignment between a PCIe address and a card address)
 * is written or read in one cycle without a carry beat.  Read data is
 * registered and held while rd_en is low.  Contents start as zero.
 */
module pevb_card_ram #
(
    // Number of byte lanes (bus width in bytes)
    parameter BYTE_LANES = 8,
    // Word address width per lane (depth = 2**ADDR_WIDTH words)
    parameter ADDR_WIDTH = 13
)
(
    input  wire                             clk,

    /* Write port */
    input  wire [BYTE_LANES-1:0]            wr_en,
    input  wire [BYTE_LANES*ADDR_WIDTH-1:0] wr_addr,
    input  wire [BYTE_LANES*8-1:0]          wr_data,

    /* Read port */
    input  wire                             rd_en,
    input  wire [BYTE_LANES*ADDR_WIDTH-1:0] rd_addr,
    output wire [BYTE_LANES*8-1:0]          rd_data
);

genvar n;

generate
    for (n = 0; n < BYTE_LANES; n = n + 1) begin : lane
        reg [7:0] mem [0:(2**ADDR_WIDTH)-1];
        reg [7:0] rd_data_reg;
        integer w;

        // contents start as zero (block RAM initialisation)
        initial begin
            for (w = 0; w < 2**ADDR_WIDTH; w = w + 1) begin
                mem[w] = 8'd0;
            end
        end

        always @(posedge clk) begin
            if (wr_en[n]) begin
                mem[wr_addr[n*ADDR_WIDTH +: ADDR_WIDTH]] <= wr_data[n*8 +: 8];
            end
            if (rd_en) begin
                rd_data_reg <= mem[rd_addr[n*ADDR_WIDTH +: ADDR_WIDTH]];
            end
        end

        assign rd_data[n*8 +: 8] = rd_data_reg;
    end
endgenerate

endmodule

`resetall
