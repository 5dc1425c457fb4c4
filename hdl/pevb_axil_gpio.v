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
 *
 * The mailbox (this design's addition, not on the original card): a write of
 * USER_MAILBOX queues its 32 bits (MAILBOX_DEPTH deep; a write that finds it
 * full is dropped and sets the sticky overflow bit) and asks for one user
 * interrupt per value queued on irq_req, XDMA's usr_irq_req protocol for MSI
 * and MSI-X: held until irq_ack, then low for at least a cycle.  With legacy
 * interrupts (legacy high: MSI and MSI-X off) the request is a level, XDMA's
 * legacy protocol: raised while values are queued, held until both its first
 * irq_ack and the mailbox's emptying, and raised again only after its second
 * irq_ack (the Deassert sent).  A read of USER_MAILBOX takes
 * the oldest value (0 when empty); USER_MAILBOX_STATUS reads the count queued
 * and the overflow bit, which a write of 1 clears.
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

    output wire [2:0]   led,

    output wire         irq_req,
    input  wire         irq_ack,
    // legacy interrupts: MSI and MSI-X both off (XDMA's msi_enable, msix_enable low)
    input  wire         legacy
);

localparam [31:0] RAM_SIZE_WORD = RAM_SIZE;

localparam DEPTH = `PEVB_MAILBOX_DEPTH;
localparam PTR_WIDTH = $clog2(DEPTH);

reg [`PEVB_LED_FIELD] led_reg;
reg [31:0] mbox_mem [0:DEPTH-1];
reg [PTR_WIDTH-1:0] mbox_wr_ptr;
reg [PTR_WIDTH-1:0] mbox_rd_ptr;
reg [PTR_WIDTH:0] mbox_count;
reg mbox_overflow;
// values queued and not yet interrupted for, and the request itself
reg [PTR_WIDTH:0] irq_owed;
reg irq_req_reg;
// legacy: the first ack of the request came; the request fell, its second ack owed
reg irq_acked_reg;
reg irq_second_reg;
reg b_valid_reg;
reg r_valid_reg;
reg [31:0] r_data_reg;

// offsets above the decoded width alias; protection does not matter here
wire unused_axil = ^{s_axil_awaddr[31:ADDR_WIDTH], s_axil_araddr[31:ADDR_WIDTH], s_axil_awaddr[1:0],
                     s_axil_araddr[1:0], s_axil_awprot, s_axil_arprot, s_axil_wstrb[3:1]};

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
assign irq_req = irq_req_reg;

wire mbox_wr = wr_take && wr_ofs == {{(ADDR_WIDTH-8){1'b0}}, `PEVB_USER_MAILBOX};
wire mbox_full = mbox_count == DEPTH[PTR_WIDTH:0];
wire mbox_push = mbox_wr && !mbox_full;
wire mbox_pop = rd_take && rd_ofs == {{(ADDR_WIDTH-8){1'b0}}, `PEVB_USER_MAILBOX} &&
                mbox_count != 0;
wire irq_done = irq_req_reg && irq_ack;

// The block below only acts on an access, clears a response already given, or runs the
// interrupt handshake: it runs when one of these holds (a clock enable), and
// event-driven simulators skip it on idle cycles.
wire wake = rst || wr_take || rd_take || b_valid_reg || r_valid_reg || irq_req_reg ||
            irq_owed != 0 || irq_second_reg;
wire [PTR_WIDTH:0] mbox_count_next = mbox_push == mbox_pop ? mbox_count :
                                     mbox_push ? mbox_count + 1'b1 : mbox_count - 1'b1;

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
            if (wr_ofs == {{(ADDR_WIDTH-8){1'b0}}, `PEVB_USER_MAILBOX_STATUS} &&
                    s_axil_wdata[`PEVB_MAILBOX_OVERFLOW_BIT]) begin
                mbox_overflow <= 1'b0;
            end
        end
        if (mbox_push) begin
            mbox_mem[mbox_wr_ptr] <= s_axil_wdata;
            mbox_wr_ptr <= mbox_wr_ptr + 1'b1;
        end
        if (mbox_wr && mbox_full) begin
            mbox_overflow <= 1'b1;
        end
        if (mbox_pop) begin
            mbox_rd_ptr <= mbox_rd_ptr + 1'b1;
        end
        if (mbox_push != mbox_pop) begin
            mbox_count <= mbox_push ? mbox_count + 1'b1 : mbox_count - 1'b1;
        end

        if (!legacy) begin
            // one request per value: raised while one is owed, dropped on its ack
            irq_acked_reg <= 1'b0;
            irq_second_reg <= 1'b0;
            if (mbox_push != irq_done) begin
                irq_owed <= mbox_push ? irq_owed + 1'b1 : irq_owed - 1'b1;
            end
            if (irq_done) begin
                irq_req_reg <= 1'b0;
            end else if (!irq_req_reg && irq_owed != 0) begin
                irq_req_reg <= 1'b1;
            end
        end else begin
            // a level while values are queued, with XDMA's two acks
            irq_owed <= {(PTR_WIDTH+1){1'b0}};
            if (irq_req_reg) begin
                if (irq_ack) begin
                    irq_acked_reg <= 1'b1;
                end
                if ((irq_acked_reg || irq_ack) && mbox_count_next == 0) begin
                    irq_req_reg <= 1'b0;
                    irq_acked_reg <= 1'b0;
                    irq_second_reg <= 1'b1;
                end
            end else if (irq_second_reg) begin
                if (irq_ack) begin
                    irq_second_reg <= 1'b0;
                end
            end else if (mbox_count != 0) begin
                irq_req_reg <= 1'b1;
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
            end else if (mbox_pop) begin
                r_data_reg <= mbox_mem[mbox_rd_ptr];
            end else if (rd_ofs == {{(ADDR_WIDTH-8){1'b0}}, `PEVB_USER_MAILBOX_STATUS}) begin
                r_data_reg <= {mbox_overflow, {(31-PTR_WIDTH-1){1'b0}}, mbox_count};
            end else begin
                r_data_reg <= 32'd0;
            end
        end

        if (rst) begin
            led_reg <= `PEVB_LED_RESET_VALUE;
            b_valid_reg <= 1'b0;
            r_valid_reg <= 1'b0;
            mbox_wr_ptr <= {PTR_WIDTH{1'b0}};
            mbox_rd_ptr <= {PTR_WIDTH{1'b0}};
            mbox_count <= {(PTR_WIDTH+1){1'b0}};
            mbox_overflow <= 1'b0;
            irq_owed <= {(PTR_WIDTH+1){1'b0}};
            irq_req_reg <= 1'b0;
            irq_acked_reg <= 1'b0;
            irq_second_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
