// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * Open XDMA-compatible DMA engine for the Xilinx UltraScale+ PCIe hard IP
 * user interface (CQ/CC completer, RQ/RC requester, MSI).  The user BAR (BAR0
 * by default) is passed to the AXI4-Lite master (XDMA's PCIe to AXI Lite Master);
 * the DMA BAR (BAR1 by default; BAR_* place them as the IP's PCIe BARs options do)
 * is the 64 KiB DMA register space (PG195 programming model) for 1-4 H2C and
 * 1-4 C2H channels running concurrently over descriptor chains in host or
 * peer memory, moving data to and from the AXI4 memory-mapped master (data
 * width = the PCIe datapath width) or, for the channels built as streams, an
 * AXI4-Stream port of the same width.  The channels share the PCIe requester
 * round-robin; on AXI, H2C writes use ID 0 and C2H channel n reads with ID n.
 */
module pevb_xdma #
(
`include "pevb_xdma_params.vh"
)
(
    input  wire                               user_clk,
    input  wire                               user_reset,

`include "pevb_xdma_hip_ports.vh"

`include "pevb_hip_cfg_ports.vh"

    /* Function-level reset: the engine and its user side reset (func_reset high) at
       the hard-IP streams' next packet boundaries, then cfg_flr_done pulses */
    output wire                               func_reset,

    /* XDMA's dma_bridge_resetn (SOFT_RESET_EN): low resets the engine and its user
       side as an FLR does, the streams held at packet boundaries, the link kept up */
    input  wire                               dma_bridge_resetn,

    /* User interrupts: hold a request high until its ack pulses */
    input  wire [USER_IRQS-1:0]               usr_irq_req,
    output wire [USER_IRQS-1:0]               usr_irq_ack,

`include "pevb_xdma_axi_ports.vh"

    /* AXI4-Stream channels, channel n in slice n (unused for memory-mapped channels) */
    output wire [H2C_CHANNELS*AXIS_PCIE_DATA_WIDTH-1:0]   m_axis_h2c_tdata,
    output wire [H2C_CHANNELS*AXIS_PCIE_DATA_WIDTH/8-1:0] m_axis_h2c_tkeep,
    output wire [H2C_CHANNELS-1:0]            m_axis_h2c_tlast,
    output wire [H2C_CHANNELS-1:0]            m_axis_h2c_tvalid,
    input  wire [H2C_CHANNELS-1:0]            m_axis_h2c_tready,
    input  wire [C2H_CHANNELS*AXIS_PCIE_DATA_WIDTH-1:0]   s_axis_c2h_tdata,
    input  wire [C2H_CHANNELS*AXIS_PCIE_DATA_WIDTH/8-1:0] s_axis_c2h_tkeep,
    input  wire [C2H_CHANNELS-1:0]            s_axis_c2h_tlast,
    input  wire [C2H_CHANNELS-1:0]            s_axis_c2h_tvalid,
    output wire [C2H_CHANNELS-1:0]            s_axis_c2h_tready,

    /* Descriptor bypass, channel n in slice n (bypass channels; ready low otherwise):
       load a descriptor while ready is high, or in the one cycle after it falls;
       ctl: 0 Stop, 1 Completed, 4 EOP */
    input  wire [H2C_CHANNELS-1:0]            h2c_dsc_byp_load,
    output wire [H2C_CHANNELS-1:0]            h2c_dsc_byp_ready,
    input  wire [H2C_CHANNELS*64-1:0]         h2c_dsc_byp_src_addr,
    input  wire [H2C_CHANNELS*64-1:0]         h2c_dsc_byp_dst_addr,
    input  wire [H2C_CHANNELS*28-1:0]         h2c_dsc_byp_len,
    input  wire [H2C_CHANNELS*16-1:0]         h2c_dsc_byp_ctl,
    input  wire [C2H_CHANNELS-1:0]            c2h_dsc_byp_load,
    output wire [C2H_CHANNELS-1:0]            c2h_dsc_byp_ready,
    input  wire [C2H_CHANNELS*64-1:0]         c2h_dsc_byp_src_addr,
    input  wire [C2H_CHANNELS*64-1:0]         c2h_dsc_byp_dst_addr,
    input  wire [C2H_CHANNELS*28-1:0]         c2h_dsc_byp_len,
    input  wire [C2H_CHANNELS*16-1:0]         c2h_dsc_byp_ctl,

`include "pevb_xdma_user_ports.vh"

    /* Channel status, 8 bits per channel (XDMA's h2c_sts_n/c2h_sts_n): 6 Run,
       5 interrupt pending, 4 packet done (stream channels; one-cycle pulse),
       3 descriptor done (pulse), 2 descriptor_stopped, 1 descriptor_completed,
       0 busy */
    output wire [H2C_CHANNELS*8-1:0]          h2c_sts,
    output wire [C2H_CHANNELS*8-1:0]          c2h_sts
);

localparam DW = AXIS_PCIE_DATA_WIDTH;
localparam KEEP = AXIS_PCIE_KEEP_WIDTH;
localparam AW = AXI_ADDR_WIDTH;
localparam DESC_IDX_WIDTH = $clog2(DESC_DEPTH*8);
localparam NH = H2C_CHANNELS;
localparam NC = C2H_CHANNELS;
// requesters of descriptor fetches and write-backs: H2C channels, then C2H
localparam NF = NH + NC;
localparam EVW = `PEVB_STAT_EVENT_WIDTH;
localparam [2:0] NH_W = NH[2:0];
localparam [3:0] H2C_ST = H2C_STREAM[3:0];
localparam [3:0] C2H_ST = C2H_STREAM[3:0];
localparam [3:0] H2C_BY = H2C_BYPASS[3:0];
localparam [3:0] C2H_BY = C2H_BYPASS[3:0];

// tag context kinds (see pevb_rc_rx)
localparam [1:0] KIND_H2C_DESC = 2'd0;
localparam [1:0] KIND_C2H_DESC = 2'd1;
localparam [1:0] KIND_H2C_DATA = 2'd2;

initial begin
    if (AXI_ADDR_WIDTH < 32 || AXI_ADDR_WIDTH > 64) begin
        $error("Error: AXI_ADDR_WIDTH must be 32 to 64 (instance %m)");
        $finish;
    end
    if (H2C_CHANNELS < 1 || H2C_CHANNELS > 4 || C2H_CHANNELS < 1 || C2H_CHANNELS > 4) begin
        $error("Error: H2C_CHANNELS and C2H_CHANNELS must be 1 to 4 (instance %m)");
        $finish;
    end
    if (H2C_READ_TAGS < 1 || H2C_READ_TAGS > 32) begin
        $error("Error: H2C_READ_TAGS must be 1 to 32 (instance %m)");
        $finish;
    end
    if (AXI_ID_WIDTH < 2) begin
        $error("Error: AXI_ID_WIDTH must be at least 2 (the C2H channel is the read ID) (instance %m)");
        $finish;
    end
end

wire clk = user_clk;
wire rst = func_reset;
// (a soft reset: the hard IP keeps tracking the requests in flight)
wire soft_func_reset;

/* function-level reset: the streams held at packet boundaries, then the reset */
wire rq_hold, cc_hold, rc_hold, cq_hold;
wire rq_tvalid_int, rq_tready_int, cc_tvalid_int, cc_tready_int;
wire rc_tready_int, cq_tready_int;

assign m_axis_rq_tvalid = rq_tvalid_int && !rq_hold;
assign rq_tready_int = m_axis_rq_tready && !rq_hold;
assign m_axis_cc_tvalid = cc_tvalid_int && !cc_hold;
assign cc_tready_int = m_axis_cc_tready && !cc_hold;
assign s_axis_rc_tready = rc_tready_int && !rc_hold;
assign s_axis_cq_tready = cq_tready_int && !cq_hold;

pevb_flr flr_inst (
    .clk(clk),
    .user_reset(user_reset),
    .cfg_flr_in_process(cfg_flr_in_process),
    .cfg_flr_done(cfg_flr_done),
    .soft_reset(SOFT_RESET_EN != 0 && !dma_bridge_resetn),
    .rq_tvalid(m_axis_rq_tvalid),
    .rq_tready(m_axis_rq_tready),
    .rq_tlast(m_axis_rq_tlast),
    .cc_tvalid(m_axis_cc_tvalid),
    .cc_tready(m_axis_cc_tready),
    .cc_tlast(m_axis_cc_tlast),
    .rc_tvalid(s_axis_rc_tvalid),
    .rc_tready(s_axis_rc_tready),
    .rc_tlast(s_axis_rc_tlast),
    .cq_tvalid(s_axis_cq_tvalid),
    .cq_tready(s_axis_cq_tready),
    .cq_tlast(s_axis_cq_tlast),
    .rq_hold(rq_hold),
    .cc_hold(cc_hold),
    .rc_hold(rc_hold),
    .cq_hold(cq_hold),
    .func_reset(func_reset),
    .soft_func_reset(soft_func_reset)
);

assign pcie_cq_np_req = 2'b01;
assign cfg_config_space_enable = 1'b1;
assign cfg_interrupt_msi_function_number = 8'd0;

/* completer: the register BARs (the DMA registers, the user BAR's AXI4-Lite master),
   with AXIB the bypass BAR's master, and the AXI4-Lite slave's access to the registers */
wire regs_valid;
wire regs_we;
wire [2:0] regs_bar;
wire [`PEVB_BAR_DMA_ADDR_WIDTH-1:0] regs_addr;
wire [31:0] regs_wdata;
wire [3:0] regs_be;
wire [31:0] dma_rd_data;

pevb_completer #(
    .AXIS_PCIE_DATA_WIDTH(DW),
    .AXIS_PCIE_KEEP_WIDTH(KEEP),
    .AXIS_PCIE_CQ_USER_WIDTH(AXIS_PCIE_CQ_USER_WIDTH),
    .AXIS_PCIE_CC_USER_WIDTH(AXIS_PCIE_CC_USER_WIDTH),
    .AXI_ADDR_WIDTH(AXI_ADDR_WIDTH),
    .AXI_ID_WIDTH(AXI_ID_WIDTH),
    .AXIL_SLAVE(AXIL_SLAVE),
    .AXIB(AXIB),
    .AXIB_BAR_ADDR_WIDTH(AXIB_BAR_ADDR_WIDTH),
    .AXIB_AXI_BASE(AXIB_AXI_BASE),
    .BAR_USER(BAR_USER),
    .BAR_DMA(BAR_DMA),
    .BAR_AXIB(BAR_AXIB)
) completer_inst (
    .clk(clk),
    .rst(rst),
    .s_axis_cq_tdata(s_axis_cq_tdata),
    .s_axis_cq_tkeep(s_axis_cq_tkeep),
    .s_axis_cq_tlast(s_axis_cq_tlast),
    .s_axis_cq_tready(cq_tready_int),
    .s_axis_cq_tuser(s_axis_cq_tuser),
    .s_axis_cq_tvalid(s_axis_cq_tvalid && !cq_hold),
    .m_axis_cc_tdata(m_axis_cc_tdata),
    .m_axis_cc_tkeep(m_axis_cc_tkeep),
    .m_axis_cc_tlast(m_axis_cc_tlast),
    .m_axis_cc_tready(cc_tready_int),
    .m_axis_cc_tuser(m_axis_cc_tuser),
    .m_axis_cc_tvalid(cc_tvalid_int),
    .cfg_max_payload(cfg_max_payload),
    .regs_valid(regs_valid),
    .regs_we(regs_we),
    .regs_bar(regs_bar),
    .regs_addr(regs_addr),
    .regs_wdata(regs_wdata),
    .regs_be(regs_be),
    .dma_rd_data(dma_rd_data),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awprot(s_axil_awprot),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wready(s_axil_wready),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bready(s_axil_bready),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
`include "pevb_axib_map.vh"
`include "pevb_axil_master_map.vh"
    .s_axil_rready(s_axil_rready)
);

/* channel control and status: index {direction, number}, 0-3 H2C0-3, 4-7 C2H0-3 */
wire [8*32-1:0] ch_control;
wire [8*64-1:0] ch_desc_addr;
wire [8*6-1:0] ch_desc_adj;
wire [8*64-1:0] ch_wb_addr;
wire [7:0] ch_halt;
wire [8*EVW-1:0] ch_event;
wire [7:0] ch_busy;
wire [8*32-1:0] ch_count;
wire [7:0] ch_beat;
wire [8*4-1:0] ch_sts;
// per channel index: a descriptor completed, and one with EOP (the packet's end on a
// stream channel): the status ports' pulses, one cycle after the completion
localparam [7:0] STREAM_MASK = {C2H_ST, H2C_ST};
wire [7:0] ch_desc_done;
wire [7:0] ch_desc_eop;
reg [7:0] desc_done_reg;
reg [7:0] pkt_done_reg;

// (a clock enable: the block runs only when a register would change, so event-driven
// simulators skip it on idle cycles)
wire done_wake = rst || desc_done_reg != ch_desc_done || pkt_done_reg != (ch_desc_eop & STREAM_MASK);

always @(posedge clk) begin
    if (done_wake) begin
        desc_done_reg <= ch_desc_done;
        pkt_done_reg <= ch_desc_eop & STREAM_MASK;
        if (rst) begin
            desc_done_reg <= 8'd0;
            pkt_done_reg <= 8'd0;
        end
    end
end

// channel index c's status port
`define PEVB_STS_PORT(c) {1'b0, ch_sts[(c)*4+3], ch_sts[(c)*4+2], pkt_done_reg[c], desc_done_reg[c], \
                          ch_sts[(c)*4+1], ch_sts[(c)*4], ch_busy[c]}

// posted writes taken by the requester and handed whole to the hard IP (the interrupt
// sender keeps a channel's message behind them)
wire rq_wr_enter;
wire rq_wr_leave;

pevb_regs #(
    .AXIS_PCIE_DATA_WIDTH(DW),
    .H2C_CHANNELS(NH),
    .C2H_CHANNELS(NC),
    .H2C_STREAM(H2C_ST),
    .C2H_STREAM(C2H_ST),
    .USER_IRQS(USER_IRQS),
    .MSIX(MSIX),
    .BAR_DMA(BAR_DMA)
) regs_inst (
    .clk(clk),
    .rst(rst),
    .reg_req_valid(regs_valid),
    .reg_req_we(regs_we),
    .reg_req_bar(regs_bar),
    .reg_req_addr(regs_addr),
    .reg_req_wdata(regs_wdata),
    .reg_req_be(regs_be),
    .reg_rd_data(dma_rd_data),
    .ch_control(ch_control),
    .ch_desc_addr(ch_desc_addr),
    .ch_desc_adj(ch_desc_adj),
    .ch_wb_addr(ch_wb_addr),
    .ch_halt(ch_halt),
    .ch_sts(ch_sts),
    .ch_event(ch_event),
    .ch_busy(ch_busy),
    .rq_wr_enter(rq_wr_enter),
    .rq_wr_leave(rq_wr_leave),
    .ch_count(ch_count),
    .ch_beat(ch_beat),
    .cfg_max_payload(cfg_max_payload),
    .cfg_max_read_req(cfg_max_read_req),
    .cfg_bus_number(cfg_bus_number),
`include "pevb_hip_irq_map.vh"
    .usr_irq_req(usr_irq_req),
    .usr_irq_ack(usr_irq_ack)
);

/*
 * Requester arbitration.  Reads: descriptor fetches of every channel
 * (index: H2C channels, then C2H) round-robin, before H2C data reads
 * round-robin over the H2C channels.  Writes: status write-backs (same
 * index) round-robin, before C2H data TLPs round-robin over the C2H
 * channels.  Descriptor traffic is small and on every channel's critical
 * path; data is shared fairly one request (<= MRRS) or TLP (<= MPS) at a time.
 */
wire [NF-1:0] f_req;
wire [NF*64-1:0] f_addr;
wire [NF*13-1:0] f_len;
wire [NF*DESC_IDX_WIDTH-1:0] f_info;
wire [NH-1:0] d_req;
wire [NH*64-1:0] d_addr;
wire [NH*13-1:0] d_len;
wire [NH*AW-1:0] d_info;
wire [NH*2-1:0] d_slot;

wire f_valid, d_valid;
wire [2:0] f_idx;
wire [1:0] d_idx;
wire [NF-1:0] f_grant;
wire [NH-1:0] d_grant;

wire tag_avail;
wire [7:0] tag_free;
wire rq_rd_ready;
wire rd_any = f_valid || d_valid;
wire rd_fire = rd_any && tag_avail && rq_rd_ready;
wire f_fire = rd_fire && f_valid;
wire d_fire = rd_fire && !f_valid;

pevb_rr_arb #(.N(NF), .IDX_WIDTH(3)) fetch_arb_inst (
    .clk(clk), .rst(rst), .req(f_req), .fire(f_fire),
    .grant_valid(f_valid), .grant_idx(f_idx), .grant(f_grant)
);
pevb_rr_arb #(.N(NH), .IDX_WIDTH(2)) data_rd_arb_inst (
    .clk(clk), .rst(rst), .req(d_req), .fire(d_fire),
    .grant_valid(d_valid), .grant_idx(d_idx), .grant(d_grant)
);

// a fetch's owner: {channel, 0}; a data read's: {channel, descriptor slot}
wire f_c2h = f_idx >= NH_W;
wire [1:0] f_chan = f_c2h ? f_idx[1:0] - NH_W[1:0] : f_idx[1:0];
wire [63:0] rd_addr = f_valid ? f_addr[f_idx*64 +: 64] : d_addr[d_idx*64 +: 64];
wire [12:0] rd_len = f_valid ? f_len[f_idx*13 +: 13] : d_len[d_idx*13 +: 13];
wire [1:0] rd_kind = !f_valid ? KIND_H2C_DATA : f_c2h ? KIND_C2H_DESC : KIND_H2C_DESC;
wire [3:0] rd_slot = f_valid ? {f_chan, 2'b00} : {d_idx, d_slot[d_idx*2 +: 2]};
wire [AW-1:0] rd_info = f_valid ? {{(AW-DESC_IDX_WIDTH){1'b0}}, f_info[f_idx*DESC_IDX_WIDTH +: DESC_IDX_WIDTH]} :
                        d_info[d_idx*AW +: AW];

wire [NF-1:0] wb_req;
wire [NF*64-1:0] wb_addr;
wire [NF*64-1:0] wb_data;
// a write-back of two DWORDs (C2H stream result) rather than one
wire [NF-1:0] wb_long;
wire [NC-1:0] t_req;
wire [NC*64-1:0] t_addr;
wire [NC*13-1:0] t_len;
wire [NC*2-1:0] t_slot;

wire wb_valid, t_valid;
wire [2:0] wb_idx;
wire [1:0] t_idx;
wire [NF-1:0] wb_grant;
wire [NC-1:0] t_grant;
wire rq_wr_ready;
wire [NF-1:0] wb_long_sel = wb_long & ({{(NF-1){1'b0}}, 1'b1} << wb_idx);
wire wb_fire = rq_wr_ready && wb_valid;
wire t_fire = rq_wr_ready && !wb_valid && t_valid;

pevb_rr_arb #(.N(NF), .IDX_WIDTH(3)) wb_arb_inst (
    .clk(clk), .rst(rst), .req(wb_req), .fire(wb_fire),
    .grant_valid(wb_valid), .grant_idx(wb_idx), .grant(wb_grant)
);
pevb_rr_arb #(.N(NC), .IDX_WIDTH(2)) data_wr_arb_inst (
    .clk(clk), .rst(rst), .req(t_req), .fire(t_fire),
    .grant_valid(t_valid), .grant_idx(t_idx), .grant(t_grant)
);

// write id: {C2H data, channel, descriptor slot}
wire [4:0] wr_done_id;
wire wr_done_valid;
assign rq_wr_enter = wb_fire || t_fire;
assign rq_wr_leave = wr_done_valid;
wire pay_rd_en;
wire [4:0] pay_rd_id;
wire [NC*DW-1:0] pay_rd_data;
// the channel whose payload buffer answered the last read
reg [1:0] pay_sel_reg;

// (a clock enable, as above)
wire pay_wake = rst || pay_rd_en;

always @(posedge clk) begin
    if (pay_wake) begin
        if (pay_rd_en) begin
            pay_sel_reg <= pay_rd_id[3:2];
        end
        if (rst) begin
            pay_sel_reg <= 2'd0;
        end
    end
end

pevb_rq_tx #(
    .AXIS_PCIE_DATA_WIDTH(DW),
    .AXIS_PCIE_KEEP_WIDTH(KEEP),
    .AXIS_PCIE_RQ_USER_WIDTH(AXIS_PCIE_RQ_USER_WIDTH),
    .WR_ID_WIDTH(5)
) rq_tx_inst (
    .clk(clk),
    .rst(rst),
    .s_rd_valid(rd_any && tag_avail),
    .s_rd_ready(rq_rd_ready),
    .s_rd_addr(rd_addr),
    .s_rd_len(rd_len),
    .s_rd_tag(tag_free),
    .s_wr_valid(wb_valid || t_valid),
    .s_wr_ready(rq_wr_ready),
    .s_wr_addr(wb_valid ? wb_addr[wb_idx*64 +: 64] : t_addr[t_idx*64 +: 64]),
    .s_wr_len(wb_valid ? (|wb_long_sel ? 13'd8 : 13'd4) : t_len[t_idx*13 +: 13]),
    .s_wr_imm(wb_valid),
    .s_wr_imm_data(wb_data[wb_idx*64 +: 64]),
    .s_wr_id({!wb_valid, t_idx, t_slot[t_idx*2 +: 2]}),
    .m_wr_done_valid(wr_done_valid),
    .m_wr_done_id(wr_done_id),
    .pay_rd_en(pay_rd_en),
    .pay_rd_id(pay_rd_id),
    .pay_rd_data(pay_rd_data[pay_sel_reg*DW +: DW]),
    .m_axis_rq_tdata(m_axis_rq_tdata),
    .m_axis_rq_tkeep(m_axis_rq_tkeep),
    .m_axis_rq_tvalid(rq_tvalid_int),
    .m_axis_rq_tready(rq_tready_int),
    .m_axis_rq_tlast(m_axis_rq_tlast),
    .m_axis_rq_tuser(m_axis_rq_tuser)
);

wire [KEEP-1:0] desc_wr_en_h2c, desc_wr_en_c2h;
wire [3:0] desc_wr_slot;
wire [DESC_IDX_WIDTH-1:0] desc_wr_idx;
wire [DW-1:0] desc_wr_data;
wire retire_valid;
wire [1:0] retire_kind;
wire [3:0] retire_slot;
wire [4:0] retire_err;
wire [15:0] h2c_discard;
wire [7:0] tags_in_flight;
wire unexpected_cpl;
wire wr_space_ok;
wire job_valid;
wire [AW-1:0] job_addr;
wire [12:0] job_len;
wire [$clog2(DW/8)-1:0] job_ofs;
wire [3:0] job_slot;
wire dat_valid;
wire [DW-1:0] dat_data;
wire [3:0] dat_slot;
wire job_done_valid;
wire [3:0] job_done_slot;
wire [4:0] job_done_err;
// debug only (waveforms): tags outstanding and completions matching no request; a
// fetch's descriptor slot is always 0, a payload read's slot is the TLP's business
wire unused_rc_status = ^{tags_in_flight, unexpected_cpl, desc_wr_slot[1:0],
                          pay_rd_id[4], pay_rd_id[1:0], dat_slot[1:0]};

pevb_rc_rx #(
    .AXIS_PCIE_DATA_WIDTH(DW),
    .AXIS_PCIE_KEEP_WIDTH(KEEP),
    .AXIS_PCIE_RC_USER_WIDTH(AXIS_PCIE_RC_USER_WIDTH),
    .ADDR_WIDTH(AW),
    .DESC_IDX_WIDTH(DESC_IDX_WIDTH),
    .SLOT_WIDTH(4),
    .TAG_COUNT(32),
    .CPL_TIMEOUT_CYCLES(CPL_TIMEOUT_CYCLES)
) rc_rx_inst (
    .clk(clk),
    .rst(rst),
    .rst_keeps_tags(soft_func_reset),
    .tag_avail(tag_avail),
    .tag_free(tag_free),
    .alloc_valid(rd_fire),
    .alloc_kind(rd_kind),
    .alloc_slot(rd_slot),
    .alloc_addr_lo(rd_addr[11:0]),
    .alloc_info(rd_info),
    .alloc_len(rd_len),
    .s_axis_rc_tdata(s_axis_rc_tdata),
    .s_axis_rc_tkeep(s_axis_rc_tkeep),
    .s_axis_rc_tvalid(s_axis_rc_tvalid && !rc_hold),
    .s_axis_rc_tready(rc_tready_int),
    .s_axis_rc_tlast(s_axis_rc_tlast),
    .s_axis_rc_tuser(s_axis_rc_tuser),
    .h2c_discard(h2c_discard),
    .wr_space_ok(wr_space_ok),
    .m_job_valid(job_valid),
    .m_job_addr(job_addr),
    .m_job_len(job_len),
    .m_job_ofs(job_ofs),
    .m_job_slot(job_slot),
    .m_dat_valid(dat_valid),
    .m_dat_data(dat_data),
    .m_dat_slot(dat_slot),
    .desc_wr_en_h2c(desc_wr_en_h2c),
    .desc_wr_en_c2h(desc_wr_en_c2h),
    .desc_wr_slot(desc_wr_slot),
    .desc_wr_idx(desc_wr_idx),
    .desc_wr_data(desc_wr_data),
    .retire_valid(retire_valid),
    .retire_kind(retire_kind),
    .retire_slot(retire_slot),
    .retire_err(retire_err),
    .tags_in_flight(tags_in_flight),
    .unexpected_cpl(unexpected_cpl)
);

/* H2C write side: one AXI write path for every H2C channel (jobs tagged
   {channel, slot}); a stream channel's bursts go to its ring buffer */
// stream channels: ring buffer and descriptor chunk sizes
localparam RING_BYTES = 16384;
localparam CHUNK_BYTES = 4096;

wire [NH-1:0] ring_wr_en;
wire [31:0] ring_wr_word;
wire [DW-1:0] ring_wr_data;
wire [DW/8-1:0] ring_wr_strb;

pevb_h2c_axi #(
    .DATA_WIDTH(DW),
    .ADDR_WIDTH(AW),
    .ID_WIDTH(AXI_ID_WIDTH),
    .CHANNELS(NH),
    .STREAM(H2C_ST)
) h2c_axi_inst (
    .clk(clk),
    .rst(rst),
    .s_job_valid(job_valid),
    .s_job_addr(job_addr),
    .s_job_len(job_len),
    .s_job_ofs(job_ofs),
    .s_job_slot(job_slot),
    .s_dat_valid(dat_valid),
    .s_dat_data(dat_data),
    .space_ok(wr_space_ok),
    .m_done_valid(job_done_valid),
    .m_done_slot(job_done_slot),
    .m_done_err(job_done_err),
    .m_axi_awid(m_axi_awid),
    .m_axi_awaddr(m_axi_awaddr),
    .m_axi_awlen(m_axi_awlen),
    .m_axi_awsize(m_axi_awsize),
    .m_axi_awburst(m_axi_awburst),
    .m_axi_awlock(m_axi_awlock),
    .m_axi_awcache(m_axi_awcache),
    .m_axi_awprot(m_axi_awprot),
    .m_axi_awvalid(m_axi_awvalid),
    .m_axi_awready(m_axi_awready),
    .m_axi_wdata(m_axi_wdata),
    .m_axi_wstrb(m_axi_wstrb),
    .m_axi_wlast(m_axi_wlast),
    .m_axi_wvalid(m_axi_wvalid),
    .m_axi_wready(m_axi_wready),
    .m_axi_bid(m_axi_bid),
    .m_axi_bresp(m_axi_bresp),
    .m_axi_bvalid(m_axi_bvalid),
    .m_axi_bready(m_axi_bready),
    .ring_wr_en(ring_wr_en),
    .ring_wr_word(ring_wr_word),
    .ring_wr_data(ring_wr_data),
    .ring_wr_strb(ring_wr_strb)
);

/* C2H read side: one AXI read master per C2H channel (ID = channel), multiplexed */
wire [NC*AXI_ID_WIDTH-1:0] c_arid;
wire [NC*AW-1:0] c_araddr;
wire [NC*8-1:0] c_arlen;
wire [NC*3-1:0] c_arsize;
wire [NC*2-1:0] c_arburst;
wire [NC-1:0] c_arlock;
wire [NC*4-1:0] c_arcache;
wire [NC*3-1:0] c_arprot;
wire [NC-1:0] c_arvalid;
wire [NC-1:0] c_arready;
wire [NC*AXI_ID_WIDTH-1:0] c_rid;
wire [NC*DW-1:0] c_rdata;
wire [NC*2-1:0] c_rresp;
wire [NC-1:0] c_rlast;
wire [NC-1:0] c_rvalid;
wire [NC-1:0] c_rready;

pevb_axi_rd_mux #(
    .N(NC),
    .DATA_WIDTH(DW),
    .ADDR_WIDTH(AW),
    .ID_WIDTH(AXI_ID_WIDTH)
) axi_rd_mux_inst (
    .clk(clk),
    .rst(rst),
    .s_axi_arid(c_arid),
    .s_axi_araddr(c_araddr),
    .s_axi_arlen(c_arlen),
    .s_axi_arsize(c_arsize),
    .s_axi_arburst(c_arburst),
    .s_axi_arlock(c_arlock),
    .s_axi_arcache(c_arcache),
    .s_axi_arprot(c_arprot),
    .s_axi_arvalid(c_arvalid),
    .s_axi_arready(c_arready),
    .s_axi_rid(c_rid),
    .s_axi_rdata(c_rdata),
    .s_axi_rresp(c_rresp),
    .s_axi_rlast(c_rlast),
    .s_axi_rvalid(c_rvalid),
    .s_axi_rready(c_rready),
    .m_axi_arid(m_axi_arid),
    .m_axi_araddr(m_axi_araddr),
    .m_axi_arlen(m_axi_arlen),
    .m_axi_arsize(m_axi_arsize),
    .m_axi_arburst(m_axi_arburst),
    .m_axi_arlock(m_axi_arlock),
    .m_axi_arcache(m_axi_arcache),
    .m_axi_arprot(m_axi_arprot),
    .m_axi_arvalid(m_axi_arvalid),
    .m_axi_arready(m_axi_arready),
    .m_axi_rid(m_axi_rid),
    .m_axi_rdata(m_axi_rdata),
    .m_axi_rresp(m_axi_rresp),
    .m_axi_rlast(m_axi_rlast),
    .m_axi_rvalid(m_axi_rvalid),
    .m_axi_rready(m_axi_rready)
);

genvar g;
generate
    /* H2C channels */
    for (g = 0; g < NH; g = g + 1) begin : h2c
        wire mine_desc = desc_wr_slot[3:2] == g;
        wire mine_retire = retire_valid && retire_slot[3:2] == g;
        assign wb_data[g*64+32 +: 32] = 32'd0;
        assign wb_long[g] = 1'b0;
        // performance monitor: a beat of the channel's read data (from PCIe)
        assign ch_beat[g] = dat_valid && dat_slot[3:2] == g;
        assign h2c_sts[g*8 +: 8] = `PEVB_STS_PORT(g);

        pevb_h2c_chan #(
            .DATA_WIDTH(DW),
            .KEEP(KEEP),
            .ADDR_WIDTH(AW),
            .DESC_DEPTH(DESC_DEPTH),
            .DESC_FETCHES(DESC_FETCHES),
            .MAX_TAGS(H2C_READ_TAGS),
            .STREAM(H2C_ST[g]),
            .CHUNK_BYTES(CHUNK_BYTES),
            .RING_BYTES(RING_BYTES),
            .BYPASS(H2C_BY[g]),
            .IDX_WIDTH(DESC_IDX_WIDTH)
        ) chan_inst (
            .clk(clk),
            .rst(rst),
            .control(ch_control[g*32 +: 32]),
            .desc_addr(ch_desc_addr[g*64 +: 64]),
            .desc_adj(ch_desc_adj[g*6 +: 6]),
            .wb_addr(ch_wb_addr[g*64 +: 64]),
            .halt(ch_halt[g]),
            .mrrs_enc(cfg_max_read_req),
            .m_fetch_valid(f_req[g]),
            .m_fetch_ready(f_fire && f_grant[g]),
            .m_fetch_addr(f_addr[g*64 +: 64]),
            .m_fetch_len(f_len[g*13 +: 13]),
            .m_fetch_info(f_info[g*DESC_IDX_WIDTH +: DESC_IDX_WIDTH]),
            .buf_wr_en(desc_wr_en_h2c & {KEEP{mine_desc}}),
            .buf_wr_idx(desc_wr_idx),
            .buf_wr_data(desc_wr_data),
            .fetch_retire_valid(mine_retire && retire_kind == KIND_H2C_DESC),
            .fetch_retire_err(retire_err),
            .byp_load(h2c_dsc_byp_load[g]),
            .byp_ready(h2c_dsc_byp_ready[g]),
            .byp_src(h2c_dsc_byp_src_addr[g*64 +: 64]),
            .byp_dst(h2c_dsc_byp_dst_addr[g*64 +: 64]),
            .byp_len(h2c_dsc_byp_len[g*28 +: 28]),
            .byp_ctl(h2c_dsc_byp_ctl[g*16 +: 16]),
            .m_wb_valid(wb_req[g]),
            .m_wb_ready(wb_fire && wb_grant[g]),
            .m_wb_addr(wb_addr[g*64 +: 64]),
            .m_wb_data(wb_data[g*64 +: 32]),
            .event_out(ch_event[g*EVW +: EVW]),
            .busy(ch_busy[g]),
            .count(ch_count[g*32 +: 32]),
            .desc_done(ch_desc_done[g]),
            .desc_done_eop(ch_desc_eop[g]),
            .m_rd_valid(d_req[g]),
            .m_rd_ready(d_fire && d_grant[g]),
            .m_rd_addr(d_addr[g*64 +: 64]),
            .m_rd_len(d_len[g*13 +: 13]),
            .m_rd_info(d_info[g*AW +: AW]),
            .m_rd_slot(d_slot[g*2 +: 2]),
            .retire_valid(mine_retire && retire_kind == KIND_H2C_DATA),
            .retire_slot(retire_slot[1:0]),
            .retire_err(retire_err),
            .job_valid(job_valid && job_slot[3:2] == g),
            .job_slot(job_slot[1:0]),
            .job_done_valid(job_done_valid && job_done_slot[3:2] == g),
            .job_done_slot(job_done_slot[1:0]),
            .job_done_err(job_done_err),
            .discard(h2c_discard[g*4 +: 4]),
            .ring_wr_en(ring_wr_en[g]),
            .ring_wr_word(ring_wr_word),
            .ring_wr_data(ring_wr_data),
            .ring_wr_strb(ring_wr_strb),
            .m_axis_tdata(m_axis_h2c_tdata[g*DW +: DW]),
            .m_axis_tkeep(m_axis_h2c_tkeep[g*DW/8 +: DW/8]),
            .m_axis_tlast(m_axis_h2c_tlast[g]),
            .m_axis_tvalid(m_axis_h2c_tvalid[g]),
            .m_axis_tready(m_axis_h2c_tready[g])
        );
    end
    for (g = NH; g < 4; g = g + 1) begin : h2c_none
        assign h2c_discard[g*4 +: 4] = 4'd0;
    end

    /* C2H channels (channel index 4 + g, fetch and write-back index NH + g) */
    for (g = 0; g < NC; g = g + 1) begin : c2h
        localparam CI = 4 + g;
        localparam FI = NH + g;
        wire mine_desc = desc_wr_slot[3:2] == g;
        assign c2h_sts[g*8 +: 8] = `PEVB_STS_PORT(CI);

        pevb_c2h_chan #(
            .DATA_WIDTH(DW),
            .KEEP(KEEP),
            .ADDR_WIDTH(AW),
            .AXI_ID_WIDTH(AXI_ID_WIDTH),
            .AXI_ID(g),
            .DESC_DEPTH(DESC_DEPTH),
            .DESC_FETCHES(DESC_FETCHES),
            .STREAM(C2H_ST[g]),
            .BYPASS(C2H_BY[g]),
            .IDX_WIDTH(DESC_IDX_WIDTH)
        ) chan_inst (
            .clk(clk),
            .rst(rst),
            .control(ch_control[CI*32 +: 32]),
            .desc_addr(ch_desc_addr[CI*64 +: 64]),
            .desc_adj(ch_desc_adj[CI*6 +: 6]),
            .wb_addr(ch_wb_addr[CI*64 +: 64]),
            .halt(ch_halt[CI]),
            .mrrs_enc(cfg_max_read_req),
            .mps_enc(cfg_max_payload),
            .m_fetch_valid(f_req[FI]),
            .m_fetch_ready(f_fire && f_grant[FI]),
            .m_fetch_addr(f_addr[FI*64 +: 64]),
            .m_fetch_len(f_len[FI*13 +: 13]),
            .m_fetch_info(f_info[FI*DESC_IDX_WIDTH +: DESC_IDX_WIDTH]),
            .buf_wr_en(desc_wr_en_c2h & {KEEP{mine_desc}}),
            .buf_wr_idx(desc_wr_idx),
            .buf_wr_data(desc_wr_data),
            .fetch_retire_valid(retire_valid && retire_kind == KIND_C2H_DESC && retire_slot[3:2] == g),
            .fetch_retire_err(retire_err),
            .byp_load(c2h_dsc_byp_load[g]),
            .byp_ready(c2h_dsc_byp_ready[g]),
            .byp_src(c2h_dsc_byp_src_addr[g*64 +: 64]),
            .byp_dst(c2h_dsc_byp_dst_addr[g*64 +: 64]),
            .byp_len(c2h_dsc_byp_len[g*28 +: 28]),
            .byp_ctl(c2h_dsc_byp_ctl[g*16 +: 16]),
            .m_wb_valid(wb_req[FI]),
            .m_wb_ready(wb_fire && wb_grant[FI]),
            .m_wb_addr(wb_addr[FI*64 +: 64]),
            .m_wb_data(wb_data[FI*64 +: 64]),
            .m_wb_long(wb_long[FI]),
            .event_out(ch_event[CI*EVW +: EVW]),
            .busy(ch_busy[CI]),
            .count(ch_count[CI*32 +: 32]),
            .desc_done(ch_desc_done[CI]),
            .desc_done_eop(ch_desc_eop[CI]),
            .beat(ch_beat[CI]),
            .m_tlp_valid(t_req[g]),
            .m_tlp_ready(t_fire && t_grant[g]),
            .m_tlp_addr(t_addr[g*64 +: 64]),
            .m_tlp_len(t_len[g*13 +: 13]),
            .m_tlp_slot(t_slot[g*2 +: 2]),
            .pay_rd_en(pay_rd_en && pay_rd_id[3:2] == g),
            .pay_rd_data(pay_rd_data[g*DW +: DW]),
            .sent_valid(wr_done_valid && wr_done_id[4] && wr_done_id[3:2] == g),
            .sent_slot(wr_done_id[1:0]),
            .m_axi_arid(c_arid[g*AXI_ID_WIDTH +: AXI_ID_WIDTH]),
            .m_axi_araddr(c_araddr[g*AW +: AW]),
            .m_axi_arlen(c_arlen[g*8 +: 8]),
            .m_axi_arsize(c_arsize[g*3 +: 3]),
            .m_axi_arburst(c_arburst[g*2 +: 2]),
            .m_axi_arlock(c_arlock[g]),
            .m_axi_arcache(c_arcache[g*4 +: 4]),
            .m_axi_arprot(c_arprot[g*3 +: 3]),
            .m_axi_arvalid(c_arvalid[g]),
            .m_axi_arready(c_arready[g]),
            .m_axi_rid(c_rid[g*AXI_ID_WIDTH +: AXI_ID_WIDTH]),
            .m_axi_rdata(c_rdata[g*DW +: DW]),
            .m_axi_rresp(c_rresp[g*2 +: 2]),
            .m_axi_rlast(c_rlast[g]),
            .m_axi_rvalid(c_rvalid[g]),
            .m_axi_rready(c_rready[g]),
            .s_axis_tdata(s_axis_c2h_tdata[g*DW +: DW]),
            .s_axis_tkeep(s_axis_c2h_tkeep[g*DW/8 +: DW/8]),
            .s_axis_tlast(s_axis_c2h_tlast[g]),
            .s_axis_tvalid(s_axis_c2h_tvalid[g]),
            .s_axis_tready(s_axis_c2h_tready[g])
        );
    end
    /* channel indices not built: no status, control unused */
    for (g = 0; g < 8; g = g + 1) begin : none
        if ((g < 4 && g >= NH) || (g >= 4 && g - 4 >= NC)) begin : absent
            assign ch_event[g*EVW +: EVW] = {EVW{1'b0}};
            assign ch_busy[g] = 1'b0;
            assign ch_count[g*32 +: 32] = 32'd0;
            assign ch_beat[g] = 1'b0;
            assign ch_desc_done[g] = 1'b0;
            assign ch_desc_eop[g] = 1'b0;
            wire unused_ctrl = ^{ch_control[g*32 +: 32], ch_desc_addr[g*64 +: 64], ch_sts[g*4 +: 4],
                                 ch_desc_adj[g*6 +: 6], ch_wb_addr[g*64 +: 64], ch_halt[g]};
        end
    end
endgenerate

endmodule

`undef PEVB_STS_PORT

`resetall
