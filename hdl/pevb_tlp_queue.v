// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * The C2H readers' TLP queue (pevb_axi_rd, pevb_axis_rd): the write TLPs whose
 * payload is buffered, and those dropped, in the order they were decided.  The
 * head goes out as a TLP (m_tlp_*, taken with m_tlp_ready) or as a drop (m_drop_*,
 * taken the cycle it shows).  A push writes the tail whatever the fill; the reader
 * pushes only while full is low.
 */
module pevb_tlp_queue #
(
    // entries (power of two)
    parameter DEPTH = 16
)
(
    input  wire                      clk,
    input  wire                      rst,

    /* A TLP decided: its payload buffered (drop low), or dropped with its error */
    input  wire                      s_push,
    input  wire [63:0]               s_addr,
    input  wire [12:0]               s_len,
    input  wire [1:0]                s_slot,
    input  wire                      s_drop,
    input  wire [4:0]                s_err,

`include "pevb_tlp_out_ports.vh"

    /* the queue holds DEPTH entries: no push */
    output wire                      full
);

localparam LOG_TQ = $clog2(DEPTH);

initial begin
    if (DEPTH < 2 || (1 << LOG_TQ) != DEPTH) begin
        $error("Error: DEPTH must be a power of two, 2 or more (instance %m)");
        $finish;
    end
end

reg [63:0] addr_mem [0:DEPTH-1];
reg [12:0] len_mem [0:DEPTH-1];
reg [1:0] slot_mem [0:DEPTH-1];
reg drop_mem [0:DEPTH-1];
reg [4:0] err_mem [0:DEPTH-1];
reg [LOG_TQ:0] wr_ptr_reg;
reg [LOG_TQ:0] rd_ptr_reg;
wire [LOG_TQ:0] used = wr_ptr_reg - rd_ptr_reg;
wire empty = wr_ptr_reg == rd_ptr_reg;
wire [LOG_TQ-1:0] idx = rd_ptr_reg[LOG_TQ-1:0];
assign full = used[LOG_TQ];

assign m_tlp_valid = !empty && !drop_mem[idx];
assign m_tlp_addr = addr_mem[idx];
assign m_tlp_len = len_mem[idx];
assign m_tlp_slot = slot_mem[idx];
assign m_drop_valid = !empty && drop_mem[idx];
assign m_drop_slot = slot_mem[idx];
assign m_drop_err = err_mem[idx];
wire pop = (m_tlp_valid && m_tlp_ready) || m_drop_valid;

// the block's clock enable: event-driven simulators skip it on idle cycles
wire wake = s_push || pop || rst;

always @(posedge clk) begin
    if (wake) begin
        if (s_push) begin
            addr_mem[wr_ptr_reg[LOG_TQ-1:0]] <= s_addr;
            len_mem[wr_ptr_reg[LOG_TQ-1:0]] <= s_len;
            slot_mem[wr_ptr_reg[LOG_TQ-1:0]] <= s_slot;
            drop_mem[wr_ptr_reg[LOG_TQ-1:0]] <= s_drop;
            err_mem[wr_ptr_reg[LOG_TQ-1:0]] <= s_err;
            wr_ptr_reg <= wr_ptr_reg + 1'b1;
        end
        if (pop) begin
            rd_ptr_reg <= rd_ptr_reg + 1'b1;
        end
        if (rst) begin
            wr_ptr_reg <= {(LOG_TQ+1){1'b0}};
            rd_ptr_reg <= {(LOG_TQ+1){1'b0}};
        end
    end
end

endmodule

`resetall
