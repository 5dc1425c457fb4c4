// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * SIMULATION ONLY.  The UltraScale+ PCIe hard IP's user interface inside the
 * XDMA drop-in: the testbench's hard-IP model (cocotbext-pcie's
 * UltraScalePlusPcieDevice) drives this module's outputs and samples its
 * inputs through the hierarchy (<drop-in instance>.hip.<signal>), as the
 * Vivado IP keeps the hard IP inside.  Signal names are the hard IP's, as on the
 * card's toplevel.
 *
 * Without PEVB_HIP_XACT nothing here drives the outputs: the model does, beat by beat.
 * With it, the four streams go through transactors (pevb_xact_source for CQ and RC,
 * pevb_xact_sink for RQ and CC) that the model fills and empties once per TLP, and
 * the model drives only the rest.
 */

`ifdef PEVB_HIP_XACT
`define PEVB_HIP_STREAM_OUT output wire
`else
`define PEVB_HIP_STREAM_OUT output reg
`endif
module pevb_hip_port #
(
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    parameter AXIS_PCIE_RQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 62 : 137,
    parameter AXIS_PCIE_RC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 75 : 161,
    parameter AXIS_PCIE_CQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 88 : 183,
    parameter AXIS_PCIE_CC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 33 : 81
)
(
    /* verilator lint_off UNDRIVEN */
    /* verilator lint_off UNUSEDSIGNAL */
    output reg                                user_clk,
    output reg                                user_reset,
    output reg                                user_lnk_up,

    /* Requester request (RQ) */
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_rq_tdata,
    input  wire [AXIS_PCIE_KEEP_WIDTH-1:0]    m_axis_rq_tkeep,
    input  wire                               m_axis_rq_tlast,
    `PEVB_HIP_STREAM_OUT                               m_axis_rq_tready,
    input  wire [AXIS_PCIE_RQ_USER_WIDTH-1:0] m_axis_rq_tuser,
    input  wire                               m_axis_rq_tvalid,

    /* Requester completion (RC) */
    `PEVB_HIP_STREAM_OUT [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_rc_tdata,
    `PEVB_HIP_STREAM_OUT [AXIS_PCIE_KEEP_WIDTH-1:0]    s_axis_rc_tkeep,
    `PEVB_HIP_STREAM_OUT                               s_axis_rc_tlast,
    input  wire                               s_axis_rc_tready,
    `PEVB_HIP_STREAM_OUT [AXIS_PCIE_RC_USER_WIDTH-1:0] s_axis_rc_tuser,
    `PEVB_HIP_STREAM_OUT                               s_axis_rc_tvalid,

    /* Completer request (CQ) */
    `PEVB_HIP_STREAM_OUT [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_cq_tdata,
    `PEVB_HIP_STREAM_OUT [AXIS_PCIE_KEEP_WIDTH-1:0]    s_axis_cq_tkeep,
    `PEVB_HIP_STREAM_OUT                               s_axis_cq_tlast,
    input  wire                               s_axis_cq_tready,
    `PEVB_HIP_STREAM_OUT [AXIS_PCIE_CQ_USER_WIDTH-1:0] s_axis_cq_tuser,
    `PEVB_HIP_STREAM_OUT                               s_axis_cq_tvalid,

    /* Completer completion (CC) */
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_cc_tdata,
    input  wire [AXIS_PCIE_KEEP_WIDTH-1:0]    m_axis_cc_tkeep,
    input  wire                               m_axis_cc_tlast,
    `PEVB_HIP_STREAM_OUT                               m_axis_cc_tready,
    input  wire [AXIS_PCIE_CC_USER_WIDTH-1:0] m_axis_cc_tuser,
    input  wire                               m_axis_cc_tvalid,

    /* Completer request flow control */
    input  wire [1:0]                         pcie_cq_np_req,

    /* Configuration status */
    output reg  [2:0]                         cfg_max_payload,
    output reg  [2:0]                         cfg_max_read_req,
    output reg  [7:0]                         cfg_bus_number,
    output reg  [15:0]                        cfg_function_status,
    input  wire                               cfg_config_space_enable,

    /* MSI */
    output reg  [3:0]                         cfg_interrupt_msi_enable,
    output reg  [11:0]                        cfg_interrupt_msi_mmenable,
    input  wire [31:0]                        cfg_interrupt_msi_int,
    output reg                                cfg_interrupt_msi_sent,
    output reg                                cfg_interrupt_msi_fail,
    input  wire [7:0]                         cfg_interrupt_msi_function_number,

    /* MSI-X */
    output reg  [3:0]                         cfg_interrupt_msix_enable,
    output reg  [3:0]                         cfg_interrupt_msix_mask,
    input  wire [63:0]                        cfg_interrupt_msix_address,
    input  wire [31:0]                        cfg_interrupt_msix_data,
    input  wire                               cfg_interrupt_msix_int,
    output reg                                cfg_interrupt_msix_sent,
    output reg                                cfg_interrupt_msix_fail,

    /* Legacy interrupts (INTx) */
    input  wire [3:0]                         cfg_interrupt_int,
    input  wire [3:0]                         cfg_interrupt_pending,
    output reg                                cfg_interrupt_sent,

    /* Function-level reset */
    output reg  [3:0]                         cfg_flr_in_process,
    input  wire [3:0]                         cfg_flr_done,

    /* Configuration management (PG213): a register of a function's configuration
       space, read or written; done pulses when the access has happened */
    input  wire [9:0]                         cfg_mgmt_addr,
    input  wire [7:0]                         cfg_mgmt_function_number,
    input  wire                               cfg_mgmt_write,
    input  wire [31:0]                        cfg_mgmt_write_data,
    input  wire [3:0]                         cfg_mgmt_byte_enable,
    input  wire                               cfg_mgmt_read,
    output reg  [31:0]                        cfg_mgmt_read_data,
    output reg                                cfg_mgmt_read_write_done,
    input  wire                               cfg_mgmt_debug_access,

    /* Configuration extend (PG213): each configuration request from the link is
       shown for a cycle; those to the user's ranges wait for the user's read data */
    output reg                                cfg_ext_read_received,
    output reg                                cfg_ext_write_received,
    output reg  [9:0]                         cfg_ext_register_number,
    output reg  [7:0]                         cfg_ext_function_number,
    output reg  [31:0]                        cfg_ext_write_data,
    output reg  [3:0]                         cfg_ext_write_byte_enable,
    input  wire [31:0]                        cfg_ext_read_data,
    input  wire                               cfg_ext_read_data_valid,

    /* The PCIe ID interface (7 series' pcie_id_if): the IDs the configuration space
       shows, when the core takes them from ports */
    input  wire [15:0]                        cfg_vend_id,
    input  wire [15:0]                        cfg_subsys_vend_id,
    input  wire [15:0]                        cfg_dev_id_pf0,
    input  wire [7:0]                         cfg_rev_id_pf0,
    input  wire [15:0]                        cfg_subsys_id_pf0
    /* verilator lint_on UNUSEDSIGNAL */
    /* verilator lint_on UNDRIVEN */
);

`ifdef PEVB_HIP_XACT
localparam XACT_ADDR_WIDTH = 11;

`ifndef VERILATOR
/*
 * The user clock, made here on Icarus so that no Python runs on any edge (on
 * Verilator cocotb's clock in C writes user_clk).  The model sets the half periods
 * (ps) and clk_run, and moves clk_gen to start the clock, high at once; clk_run low
 * stops it where it is.  Each edge waits (#0) behind the events already queued for
 * its time step, the model's timer callbacks among them: a write a timer makes in the
 * time step of an edge, which the model then applies at once, reaches the RTL before
 * that edge, as it did with cocotb's Python clock, whose edges came in the ReadWrite
 * phase after such writes.  The model's registers have no initial value, so a write
 * at time 0 is never undone.
 */
reg [31:0] clk_high_ps;
reg [31:0] clk_low_ps;
reg        clk_run;
reg [7:0]  clk_gen;
reg [7:0]  clk_gen_seen;

initial clk_gen_seen = 0;

always begin : hdl_clock
    wait (clk_run === 1'b1 && clk_gen !== clk_gen_seen);
    #0 clk_gen_seen = clk_gen;
    user_clk = 1'b1;
    fork : ticking
        forever begin
            #(clk_high_ps / 1000.0) #0 user_clk = 1'b0;
            #(clk_low_ps / 1000.0) #0 user_clk = 1'b1;
        end
        begin
            wait (clk_run !== 1'b1 || clk_gen !== clk_gen_seen);
            disable ticking;
        end
    join
end
`endif

pevb_xact_sink #(
    .DATA_WIDTH(AXIS_PCIE_DATA_WIDTH),
    .KEEP_WIDTH(AXIS_PCIE_KEEP_WIDTH),
    .USER_WIDTH(AXIS_PCIE_RQ_USER_WIDTH),
    .ADDR_WIDTH(XACT_ADDR_WIDTH)
)
rq_xact (
    .clk(user_clk),
    .rst(user_reset),
    .tdata(m_axis_rq_tdata),
    .tkeep(m_axis_rq_tkeep),
    .tlast(m_axis_rq_tlast),
    .tuser(m_axis_rq_tuser),
    .tvalid(m_axis_rq_tvalid),
    .tready(m_axis_rq_tready)
);

pevb_xact_sink #(
    .DATA_WIDTH(AXIS_PCIE_DATA_WIDTH),
    .KEEP_WIDTH(AXIS_PCIE_KEEP_WIDTH),
    .USER_WIDTH(AXIS_PCIE_CC_USER_WIDTH),
    .ADDR_WIDTH(XACT_ADDR_WIDTH)
)
cc_xact (
    .clk(user_clk),
    .rst(user_reset),
    .tdata(m_axis_cc_tdata),
    .tkeep(m_axis_cc_tkeep),
    .tlast(m_axis_cc_tlast),
    .tuser(m_axis_cc_tuser),
    .tvalid(m_axis_cc_tvalid),
    .tready(m_axis_cc_tready)
);

pevb_xact_source #(
    .DATA_WIDTH(AXIS_PCIE_DATA_WIDTH),
    .KEEP_WIDTH(AXIS_PCIE_KEEP_WIDTH),
    .USER_WIDTH(AXIS_PCIE_RC_USER_WIDTH),
    .ADDR_WIDTH(XACT_ADDR_WIDTH)
)
rc_xact (
    .clk(user_clk),
    .rst(user_reset),
    .tdata(s_axis_rc_tdata),
    .tkeep(s_axis_rc_tkeep),
    .tlast(s_axis_rc_tlast),
    .tuser(s_axis_rc_tuser),
    .tvalid(s_axis_rc_tvalid),
    .tready(s_axis_rc_tready)
);

pevb_xact_source #(
    .DATA_WIDTH(AXIS_PCIE_DATA_WIDTH),
    .KEEP_WIDTH(AXIS_PCIE_KEEP_WIDTH),
    .USER_WIDTH(AXIS_PCIE_CQ_USER_WIDTH),
    .ADDR_WIDTH(XACT_ADDR_WIDTH)
)
cq_xact (
    .clk(user_clk),
    .rst(user_reset),
    .tdata(s_axis_cq_tdata),
    .tkeep(s_axis_cq_tkeep),
    .tlast(s_axis_cq_tlast),
    .tuser(s_axis_cq_tuser),
    .tvalid(s_axis_cq_tvalid),
    .tready(s_axis_cq_tready)
);
`endif

endmodule

`undef PEVB_HIP_STREAM_OUT

`resetall
