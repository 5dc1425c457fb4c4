// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * SIMULATION ONLY.  The picoevb card as the transactor model simulates it: the card's
 * toplevel (core) with the hard IP's user interface (hip, pevb_hip_port built with
 * PEVB_HIP_XACT) beside it, as the drop-in keeps it inside.  The ports are the card's
 * own, less the hard-IP interface; parameters pass through unchanged.
 */
module pevb_card_xact #
(
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    parameter AXIS_PCIE_RQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 62 : 137,
    parameter AXIS_PCIE_RC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 75 : 161,
    parameter AXIS_PCIE_CQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 88 : 183,
    parameter AXIS_PCIE_CC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 33 : 81,
    parameter RAM_SIZE = 65536,
    parameter H2C_CHANNELS = 1,
    parameter C2H_CHANNELS = 1,
    parameter H2C_STREAM = 0,
    parameter C2H_STREAM = 0,
    parameter USER_IRQS = 16,
    parameter MSIX = 0,
    parameter DESC_DEPTH = 8,
    parameter DESC_FETCHES = 2,
    parameter CPL_TIMEOUT_CYCLES = 131072
)
(
`include "pevb_card_ports.vh"
);

wire                               user_clk;
wire                               user_reset;
wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_rq_tdata;
wire [AXIS_PCIE_KEEP_WIDTH-1:0]    m_axis_rq_tkeep;
wire                               m_axis_rq_tlast;
wire                               m_axis_rq_tready;
wire [AXIS_PCIE_RQ_USER_WIDTH-1:0] m_axis_rq_tuser;
wire                               m_axis_rq_tvalid;
wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_rc_tdata;
wire [AXIS_PCIE_KEEP_WIDTH-1:0]    s_axis_rc_tkeep;
wire                               s_axis_rc_tlast;
wire                               s_axis_rc_tready;
wire [AXIS_PCIE_RC_USER_WIDTH-1:0] s_axis_rc_tuser;
wire                               s_axis_rc_tvalid;
wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_cq_tdata;
wire [AXIS_PCIE_KEEP_WIDTH-1:0]    s_axis_cq_tkeep;
wire                               s_axis_cq_tlast;
wire                               s_axis_cq_tready;
wire [AXIS_PCIE_CQ_USER_WIDTH-1:0] s_axis_cq_tuser;
wire                               s_axis_cq_tvalid;
wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_cc_tdata;
wire [AXIS_PCIE_KEEP_WIDTH-1:0]    m_axis_cc_tkeep;
wire                               m_axis_cc_tlast;
wire                               m_axis_cc_tready;
wire [AXIS_PCIE_CC_USER_WIDTH-1:0] m_axis_cc_tuser;
wire                               m_axis_cc_tvalid;
wire [1:0]                         pcie_cq_np_req;
wire [2:0]                         cfg_max_payload;
wire [2:0]                         cfg_max_read_req;
wire [7:0]                         cfg_bus_number;
wire                               cfg_config_space_enable;
wire [3:0]                         cfg_interrupt_msi_enable;
wire [11:0]                        cfg_interrupt_msi_mmenable;
wire [31:0]                        cfg_interrupt_msi_int;
wire                               cfg_interrupt_msi_sent;
wire                               cfg_interrupt_msi_fail;
wire [7:0]                         cfg_interrupt_msi_function_number;
wire [3:0]                         cfg_flr_in_process;
wire [3:0]                         cfg_flr_done;
wire [3:0]                         cfg_interrupt_msix_enable;
wire [3:0]                         cfg_interrupt_msix_mask;
wire [63:0]                        cfg_interrupt_msix_address;
wire [31:0]                        cfg_interrupt_msix_data;
wire                               cfg_interrupt_msix_int;
wire                               cfg_interrupt_msix_sent;
wire                               cfg_interrupt_msix_fail;
wire [3:0]                         cfg_interrupt_int;
wire [3:0]                         cfg_interrupt_pending;
wire                               cfg_interrupt_sent;

/* verilator lint_off PINCONNECTEMPTY */
pevb_hip_port #(
    .AXIS_PCIE_DATA_WIDTH(AXIS_PCIE_DATA_WIDTH),
    .AXIS_PCIE_KEEP_WIDTH(AXIS_PCIE_KEEP_WIDTH),
    .AXIS_PCIE_RQ_USER_WIDTH(AXIS_PCIE_RQ_USER_WIDTH),
    .AXIS_PCIE_RC_USER_WIDTH(AXIS_PCIE_RC_USER_WIDTH),
    .AXIS_PCIE_CQ_USER_WIDTH(AXIS_PCIE_CQ_USER_WIDTH),
    .AXIS_PCIE_CC_USER_WIDTH(AXIS_PCIE_CC_USER_WIDTH)
)
hip (
    .user_clk(user_clk),
    .user_reset(user_reset),
`include "pevb_xdma_hip_map.vh"
`include "pevb_hip_cfg_map.vh"
    // what the card does not have
    .user_lnk_up(),
    .cfg_function_status(),
    .cfg_mgmt_addr(10'd0),
    .cfg_mgmt_function_number(8'd0),
    .cfg_mgmt_write(1'd0),
    .cfg_mgmt_write_data(32'd0),
    .cfg_mgmt_byte_enable(4'd0),
    .cfg_mgmt_read(1'd0),
    .cfg_mgmt_read_data(),
    .cfg_mgmt_read_write_done(),
    .cfg_mgmt_debug_access(1'd0),
    .cfg_ext_read_received(),
    .cfg_ext_write_received(),
    .cfg_ext_register_number(),
    .cfg_ext_function_number(),
    .cfg_ext_write_data(),
    .cfg_ext_write_byte_enable(),
    .cfg_ext_read_data(32'd0),
    .cfg_ext_read_data_valid(1'd0),
    .cfg_vend_id(16'd0),
    .cfg_subsys_vend_id(16'd0),
    .cfg_dev_id_pf0(16'd0),
    .cfg_rev_id_pf0(8'd0),
    .cfg_subsys_id_pf0(16'd0)
);
/* verilator lint_on PINCONNECTEMPTY */

pevb_dma_top #(
    .AXIS_PCIE_DATA_WIDTH(AXIS_PCIE_DATA_WIDTH),
    .AXIS_PCIE_KEEP_WIDTH(AXIS_PCIE_KEEP_WIDTH),
    .AXIS_PCIE_RQ_USER_WIDTH(AXIS_PCIE_RQ_USER_WIDTH),
    .AXIS_PCIE_RC_USER_WIDTH(AXIS_PCIE_RC_USER_WIDTH),
    .AXIS_PCIE_CQ_USER_WIDTH(AXIS_PCIE_CQ_USER_WIDTH),
    .AXIS_PCIE_CC_USER_WIDTH(AXIS_PCIE_CC_USER_WIDTH),
    .RAM_SIZE(RAM_SIZE),
    .H2C_CHANNELS(H2C_CHANNELS),
    .C2H_CHANNELS(C2H_CHANNELS),
    .H2C_STREAM(H2C_STREAM),
    .C2H_STREAM(C2H_STREAM),
    .USER_IRQS(USER_IRQS),
    .MSIX(MSIX),
    .DESC_DEPTH(DESC_DEPTH),
    .DESC_FETCHES(DESC_FETCHES),
    .CPL_TIMEOUT_CYCLES(CPL_TIMEOUT_CYCLES)
)
core (
    .user_clk(user_clk),
    .user_reset(user_reset),
`include "pevb_xdma_hip_map.vh"
`include "pevb_hip_cfg_map.vh"
`include "pevb_card_map.vh"
);

/*
 * The card RAM's written pages, for the testbench's backdoor read of the whole RAM
 * (tb/env/backdoor.py): every write the RAM takes sets the bit of its page (4 KiB, or
 * the whole RAM when smaller); all are set at the start. Python reads the bits, reads
 * the words of those pages, and clears the bits by changing ram_dirty_clear: the next
 * edge clears them, keeping the bits of the writes it and the edge before it take (a
 * simulator may apply the change after an edge of the time step Python read in).
 */
localparam RAM_WORD_BYTES = AXIS_PCIE_DATA_WIDTH/8;
localparam RAM_LOG_WORDS = $clog2(RAM_SIZE/RAM_WORD_BYTES);
localparam RAM_PAGE_BYTES = RAM_SIZE < 4096 ? RAM_SIZE : 4096;
localparam RAM_LOG_PAGE_WORDS = $clog2(RAM_PAGE_BYTES/RAM_WORD_BYTES);
localparam RAM_PAGES = RAM_SIZE/RAM_PAGE_BYTES;

wire ram_clk = core.card_ram_inst.clk;
wire ram_we = core.card_ram_inst.w_fire && core.card_ram_inst.w_in_ram;
localparam RAM_PAGE_BITS = RAM_PAGES > 1 ? $clog2(RAM_PAGES) : 1;
wire [RAM_PAGE_BITS-1:0] ram_page;  // the page of the word written now

generate
if (RAM_PAGES > 1) begin : g_pages
    assign ram_page = core.card_ram_inst.w_word_reg[RAM_LOG_WORDS-1:RAM_LOG_PAGE_WORDS];
end else begin : g_page
    assign ram_page = 1'b0;
end
endgenerate

/* verilator lint_off UNUSEDSIGNAL */
reg [RAM_PAGES-1:0] ram_dirty;  // read by the testbench
/* verilator lint_on UNUSEDSIGNAL */
reg ram_dirty_clear;  // written by the testbench
reg ram_dirty_cleared;
reg ram_we_reg;
reg [RAM_PAGE_BITS-1:0] ram_page_reg;

initial begin
    ram_dirty = {RAM_PAGES{1'b1}};
    ram_dirty_clear = 1'b0;
    ram_dirty_cleared = 1'b0;
    ram_we_reg = 1'b0;
    ram_page_reg = {RAM_PAGE_BITS{1'b0}};
end

// the block below changes nothing with no RAM write in this or the last cycle and no
// clear requested: the simulator then skips it on idle edges
wire ram_marking = ram_we || ram_we_reg || ram_dirty_clear != ram_dirty_cleared;

always @(posedge ram_clk) begin
    if (ram_marking) begin
        ram_we_reg <= ram_we;
        if (ram_we) begin
            ram_page_reg <= ram_page;
        end
        if (ram_dirty_clear != ram_dirty_cleared) begin
            ram_dirty_cleared <= ram_dirty_clear;
            ram_dirty <= {RAM_PAGES{1'b0}};
            if (ram_we_reg) begin
                ram_dirty[ram_page_reg] <= 1'b1;
            end
            if (ram_we) begin
                ram_dirty[ram_page] <= 1'b1;
            end
        end else if (ram_we) begin
            ram_dirty[ram_page] <= 1'b1;
        end
    end
end

endmodule

`resetall
