// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * The XDMA engine (pevb_xdma) with the user-side ports of Xilinx's DMA/Bridge
 * Subsystem for PCI Express (PG195) in DMA mode: axi_aclk/axi_aresetn,
 * usr_irq_req/usr_irq_ack, msi_enable/msi_vector_width, the AXI4 master
 * (m_axi_*), the AXI4-Lite master of the user BAR (m_axil_*), the stream
 * channels m_axis_h2c_*_n/s_axis_c2h_*_n and the status ports h2c_sts_n/
 * c2h_sts_n for n = 0-3 (absent and memory-mapped channels idle), and the
 * descriptor bypass ports as vectors, channel n in slice n.  The PCIe
 * side is the UltraScale+ hard IP's user interface (RQ/RC/CQ/CC, configuration
 * status and MSI) rather than serial lanes: the hard IP is outside.  Synthesizable;
 * the simulation drop-in for the Vivado IP (hdl/dropin) wraps it.
 */
module pevb_xdma_ip #
(
`include "pevb_xdma_params.vh"
)
(
    /* The hard IP's user interface: clock and reset */
    input  wire                               user_clk,
    input  wire                               user_reset,

`include "pevb_xdma_hip_ports.vh"

`include "pevb_hip_cfg_ports.vh"

    /* Clock and reset of the user side (the hard IP's user clock) */
    output wire                               axi_aclk,
    output wire                               axi_aresetn,
    // low: reset the engine and its user side, the link kept up (SOFT_RESET_EN)
    input  wire                               dma_bridge_resetn,

    /* User interrupts: hold a request high until its ack pulses */
    input  wire [USER_IRQS-1:0]               usr_irq_req,
    output wire [USER_IRQS-1:0]               usr_irq_ack,
    // MSI enabled by the host, and the vectors it granted (log2)
    output wire                               msi_enable,
    output wire [2:0]                         msi_vector_width,
    // MSI-X enabled by the host
    output wire                               msix_enable,

`include "pevb_xdma_axi_ports.vh"

`include "pevb_xdma_stream_ports.vh"

    /* Descriptor bypass, channel n in slice n (PG195's h2c_dsc_byp_*_n and
       c2h_dsc_byp_*_n; ready low unless the channel is bypassed) */
    input  wire [3:0]                         h2c_dsc_byp_load,
    output wire [3:0]                         h2c_dsc_byp_ready,
    input  wire [4*64-1:0]                    h2c_dsc_byp_src_addr,
    input  wire [4*64-1:0]                    h2c_dsc_byp_dst_addr,
    input  wire [4*28-1:0]                    h2c_dsc_byp_len,
    input  wire [4*16-1:0]                    h2c_dsc_byp_ctl,
    input  wire [3:0]                         c2h_dsc_byp_load,
    output wire [3:0]                         c2h_dsc_byp_ready,
    input  wire [4*64-1:0]                    c2h_dsc_byp_src_addr,
    input  wire [4*64-1:0]                    c2h_dsc_byp_dst_addr,
    input  wire [4*28-1:0]                    c2h_dsc_byp_len,
    input  wire [4*16-1:0]                    c2h_dsc_byp_ctl,

`include "pevb_xdma_user_ports.vh"

    // the last channel status port (pevb_xdma_stream_ports.vh declares the others)
    output wire [7:0]                         c2h_sts_3
);

localparam DW = AXIS_PCIE_DATA_WIDTH;

assign axi_aclk = user_clk;
// the user side resets with the function: at user_reset and during an FLR
wire func_reset;
assign axi_aresetn = !func_reset;
assign msi_enable = cfg_interrupt_msi_enable[0];
assign msi_vector_width = cfg_interrupt_msi_mmenable[2:0];
assign msix_enable = MSIX != 0 && cfg_interrupt_msix_enable[0];

/* the engine's channel vectors, four channels each way (absent ones idle) */
wire [4*DW-1:0] h2c_tdata;
wire [4*DW/8-1:0] h2c_tkeep;
wire [3:0] h2c_tlast, h2c_tvalid, h2c_tready;
wire [4*DW-1:0] c2h_tdata;
wire [4*DW/8-1:0] c2h_tkeep;
wire [3:0] c2h_tlast, c2h_tvalid, c2h_tready;
wire [4*8-1:0] h2c_sts, c2h_sts;
assign h2c_tready = {m_axis_h2c_tready_3, m_axis_h2c_tready_2, m_axis_h2c_tready_1, m_axis_h2c_tready_0};
assign c2h_tdata = {s_axis_c2h_tdata_3, s_axis_c2h_tdata_2, s_axis_c2h_tdata_1, s_axis_c2h_tdata_0};
assign c2h_tkeep = {s_axis_c2h_tkeep_3, s_axis_c2h_tkeep_2, s_axis_c2h_tkeep_1, s_axis_c2h_tkeep_0};
assign c2h_tlast = {s_axis_c2h_tlast_3, s_axis_c2h_tlast_2, s_axis_c2h_tlast_1, s_axis_c2h_tlast_0};
assign c2h_tvalid = {s_axis_c2h_tvalid_3, s_axis_c2h_tvalid_2, s_axis_c2h_tvalid_1, s_axis_c2h_tvalid_0};
assign m_axis_h2c_tdata_0 = h2c_tdata[0*DW +: DW];
assign m_axis_h2c_tkeep_0 = h2c_tkeep[0*DW/8 +: DW/8];
assign m_axis_h2c_tlast_0 = h2c_tlast[0];
assign m_axis_h2c_tvalid_0 = h2c_tvalid[0];
assign s_axis_c2h_tready_0 = c2h_tready[0];
assign h2c_sts_0 = h2c_sts[0*8 +: 8];
assign c2h_sts_0 = c2h_sts[0*8 +: 8];
assign m_axis_h2c_tdata_1 = h2c_tdata[1*DW +: DW];
assign m_axis_h2c_tkeep_1 = h2c_tkeep[1*DW/8 +: DW/8];
assign m_axis_h2c_tlast_1 = h2c_tlast[1];
assign m_axis_h2c_tvalid_1 = h2c_tvalid[1];
assign s_axis_c2h_tready_1 = c2h_tready[1];
assign h2c_sts_1 = h2c_sts[1*8 +: 8];
assign c2h_sts_1 = c2h_sts[1*8 +: 8];
assign m_axis_h2c_tdata_2 = h2c_tdata[2*DW +: DW];
assign m_axis_h2c_tkeep_2 = h2c_tkeep[2*DW/8 +: DW/8];
assign m_axis_h2c_tlast_2 = h2c_tlast[2];
assign m_axis_h2c_tvalid_2 = h2c_tvalid[2];
assign s_axis_c2h_tready_2 = c2h_tready[2];
assign h2c_sts_2 = h2c_sts[2*8 +: 8];
assign c2h_sts_2 = c2h_sts[2*8 +: 8];
assign m_axis_h2c_tdata_3 = h2c_tdata[3*DW +: DW];
assign m_axis_h2c_tkeep_3 = h2c_tkeep[3*DW/8 +: DW/8];
assign m_axis_h2c_tlast_3 = h2c_tlast[3];
assign m_axis_h2c_tvalid_3 = h2c_tvalid[3];
assign s_axis_c2h_tready_3 = c2h_tready[3];
assign h2c_sts_3 = h2c_sts[3*8 +: 8];
assign c2h_sts_3 = c2h_sts[3*8 +: 8];

generate
    if (H2C_CHANNELS < 4) begin : h2c_absent
        assign h2c_tdata[4*DW-1:H2C_CHANNELS*DW] = {(4-H2C_CHANNELS)*DW{1'b0}};
        assign h2c_tkeep[4*DW/8-1:H2C_CHANNELS*DW/8] = {(4-H2C_CHANNELS)*DW/8{1'b0}};
        assign h2c_tlast[3:H2C_CHANNELS] = {(4-H2C_CHANNELS){1'b0}};
        assign h2c_tvalid[3:H2C_CHANNELS] = {(4-H2C_CHANNELS){1'b0}};
        assign h2c_sts[4*8-1:H2C_CHANNELS*8] = {(4-H2C_CHANNELS)*8{1'b0}};
        assign h2c_dsc_byp_ready[3:H2C_CHANNELS] = {(4-H2C_CHANNELS){1'b0}};
        wire unused_h2c = ^{h2c_tready[3:H2C_CHANNELS], h2c_dsc_byp_load[3:H2C_CHANNELS],
                            h2c_dsc_byp_src_addr[4*64-1:H2C_CHANNELS*64], h2c_dsc_byp_dst_addr[4*64-1:H2C_CHANNELS*64],
                            h2c_dsc_byp_len[4*28-1:H2C_CHANNELS*28], h2c_dsc_byp_ctl[4*16-1:H2C_CHANNELS*16]};
    end
    if (C2H_CHANNELS < 4) begin : c2h_absent
        assign c2h_tready[3:C2H_CHANNELS] = {(4-C2H_CHANNELS){1'b0}};
        assign c2h_sts[4*8-1:C2H_CHANNELS*8] = {(4-C2H_CHANNELS)*8{1'b0}};
        assign c2h_dsc_byp_ready[3:C2H_CHANNELS] = {(4-C2H_CHANNELS){1'b0}};
        wire unused_c2h_byp = ^{c2h_dsc_byp_load[3:C2H_CHANNELS],
                                c2h_dsc_byp_src_addr[4*64-1:C2H_CHANNELS*64], c2h_dsc_byp_dst_addr[4*64-1:C2H_CHANNELS*64],
                                c2h_dsc_byp_len[4*28-1:C2H_CHANNELS*28], c2h_dsc_byp_ctl[4*16-1:C2H_CHANNELS*16]};
        wire unused_c2h = ^{c2h_tdata[4*DW-1:C2H_CHANNELS*DW], c2h_tkeep[4*DW/8-1:C2H_CHANNELS*DW/8],
                            c2h_tlast[3:C2H_CHANNELS], c2h_tvalid[3:C2H_CHANNELS]};
    end
endgenerate
wire unused_msi = ^{cfg_interrupt_msi_enable[3:1], cfg_interrupt_msi_mmenable[11:3],
                    cfg_interrupt_msix_enable[3:1]};

pevb_xdma #(
`include "pevb_xdma_params_map.vh"
) xdma_inst (
    .user_clk(user_clk),
    .user_reset(user_reset),
`include "pevb_xdma_hip_map.vh"
`include "pevb_hip_cfg_map.vh"
    .func_reset(func_reset),
    .dma_bridge_resetn(dma_bridge_resetn),
    .usr_irq_req(usr_irq_req),
    .usr_irq_ack(usr_irq_ack),
    .m_axis_h2c_tdata(h2c_tdata[H2C_CHANNELS*DW-1:0]),
    .m_axis_h2c_tkeep(h2c_tkeep[H2C_CHANNELS*DW/8-1:0]),
    .m_axis_h2c_tlast(h2c_tlast[H2C_CHANNELS-1:0]),
    .m_axis_h2c_tvalid(h2c_tvalid[H2C_CHANNELS-1:0]),
    .m_axis_h2c_tready(h2c_tready[H2C_CHANNELS-1:0]),
    .s_axis_c2h_tdata(c2h_tdata[C2H_CHANNELS*DW-1:0]),
    .s_axis_c2h_tkeep(c2h_tkeep[C2H_CHANNELS*DW/8-1:0]),
    .s_axis_c2h_tlast(c2h_tlast[C2H_CHANNELS-1:0]),
    .s_axis_c2h_tvalid(c2h_tvalid[C2H_CHANNELS-1:0]),
    .s_axis_c2h_tready(c2h_tready[C2H_CHANNELS-1:0]),
    .h2c_dsc_byp_load(h2c_dsc_byp_load[H2C_CHANNELS-1:0]),
    .h2c_dsc_byp_ready(h2c_dsc_byp_ready[H2C_CHANNELS-1:0]),
    .h2c_dsc_byp_src_addr(h2c_dsc_byp_src_addr[H2C_CHANNELS*64-1:0]),
    .h2c_dsc_byp_dst_addr(h2c_dsc_byp_dst_addr[H2C_CHANNELS*64-1:0]),
    .h2c_dsc_byp_len(h2c_dsc_byp_len[H2C_CHANNELS*28-1:0]),
    .h2c_dsc_byp_ctl(h2c_dsc_byp_ctl[H2C_CHANNELS*16-1:0]),
    .c2h_dsc_byp_load(c2h_dsc_byp_load[C2H_CHANNELS-1:0]),
    .c2h_dsc_byp_ready(c2h_dsc_byp_ready[C2H_CHANNELS-1:0]),
    .c2h_dsc_byp_src_addr(c2h_dsc_byp_src_addr[C2H_CHANNELS*64-1:0]),
    .c2h_dsc_byp_dst_addr(c2h_dsc_byp_dst_addr[C2H_CHANNELS*64-1:0]),
    .c2h_dsc_byp_len(c2h_dsc_byp_len[C2H_CHANNELS*28-1:0]),
    .c2h_dsc_byp_ctl(c2h_dsc_byp_ctl[C2H_CHANNELS*16-1:0]),
    .h2c_sts(h2c_sts[H2C_CHANNELS*8-1:0]),
`include "pevb_xdma_axi_map.vh"
`include "pevb_xdma_user_map.vh"
    .c2h_sts(c2h_sts[C2H_CHANNELS*8-1:0])
);

endmodule

`resetall
