// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * Open XDMA-compatible DMA engine for the Xilinx UltraScale+ PCIe hard IP
 * user interface (CQ/CC completer, RQ/RC requester, MSI).  BAR0: the user
 * BAR, passed to the AXI4-Lite master (XDMA's PCIe to AXI Lite Master).
 * BAR1: 64 KiB DMA register space (PG195 programming model) for one H2C and
 * one C2H memory-mapped channel running concurrently over descriptor chains
 * in host or peer memory, moving data to and from the AXI4 memory-mapped
 * master (data width = the PCIe datapath width).
 */
module pevb_xdma #
(
    // PCIe AXI stream data width (64, 128, 256 or 512)
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    // PCIe AXI stream tkeep width (DWORD lanes)
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    // RQ tuser width
    parameter AXIS_PCIE_RQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 62 : 137,
    // RC tuser width
    parameter AXIS_PCIE_RC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 75 : 161,
    // CQ tuser width
    parameter AXIS_PCIE_CQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 88 : 183,
    // CC tuser width
    parameter AXIS_PCIE_CC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 33 : 81,
    // AXI4 master address and ID widths
    parameter AXI_ADDR_WIDTH = 64,
    parameter AXI_ID_WIDTH = 4,
    // descriptor prefetch buffer entries per channel (power of two)
    parameter DESC_DEPTH = 8,
    // completion timeout in user clock cycles
    parameter CPL_TIMEOUT_CYCLES = 131072
)
(
    input  wire                               user_clk,
    input  wire                               user_reset,

    /* Requester request (RQ) */
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_rq_tdata,
    output wire [AXIS_PCIE_KEEP_WIDTH-1:0]    m_axis_rq_tkeep,
    output wire                               m_axis_rq_tlast,
    input  wire                               m_axis_rq_tready,
    output wire [AXIS_PCIE_RQ_USER_WIDTH-1:0] m_axis_rq_tuser,
    output wire                               m_axis_rq_tvalid,

    /* Requester completion (RC) */
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_rc_tdata,
    input  wire [AXIS_PCIE_KEEP_WIDTH-1:0]    s_axis_rc_tkeep,
    input  wire                               s_axis_rc_tlast,
    output wire                               s_axis_rc_tready,
    input  wire [AXIS_PCIE_RC_USER_WIDTH-1:0] s_axis_rc_tuser,
    input  wire                               s_axis_rc_tvalid,

    /* Completer request (CQ) */
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_cq_tdata,
    input  wire [AXIS_PCIE_KEEP_WIDTH-1:0]    s_axis_cq_tkeep,
    input  wire                               s_axis_cq_tlast,
    output wire                               s_axis_cq_tready,
    input  wire [AXIS_PCIE_CQ_USER_WIDTH-1:0] s_axis_cq_tuser,
    input  wire                               s_axis_cq_tvalid,

    /* Completer completion (CC) */
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_cc_tdata,
    output wire [AXIS_PCIE_KEEP_WIDTH-1:0]    m_axis_cc_tkeep,
    output wire                               m_axis_cc_tlast,
    input  wire                               m_axis_cc_tready,
    output wire [AXIS_PCIE_CC_USER_WIDTH-1:0] m_axis_cc_tuser,
    output wire                               m_axis_cc_tvalid,

    /* Completer request flow control */
    output wire [1:0]                         pcie_cq_np_req,

    /* Configuration status */
    input  wire [2:0]                         cfg_max_payload,
    input  wire [2:0]                         cfg_max_read_req,
    input  wire [7:0]                         cfg_bus_number,
    output wire                               cfg_config_space_enable,

    /* MSI */
    input  wire [3:0]                         cfg_interrupt_msi_enable,
    input  wire [11:0]                        cfg_interrupt_msi_mmenable,
    output wire [31:0]                        cfg_interrupt_msi_int,
    input  wire                               cfg_interrupt_msi_sent,
    input  wire                               cfg_interrupt_msi_fail,
    output wire [7:0]                         cfg_interrupt_msi_function_number,

    /* AXI4 memory-mapped master (DMA data) */
    output wire [AXI_ID_WIDTH-1:0]            m_axi_awid,
    output wire [AXI_ADDR_WIDTH-1:0]          m_axi_awaddr,
    output wire [7:0]                         m_axi_awlen,
    output wire [2:0]                         m_axi_awsize,
    output wire [1:0]                         m_axi_awburst,
    output wire                               m_axi_awlock,
    output wire [3:0]                         m_axi_awcache,
    output wire [2:0]                         m_axi_awprot,
    output wire                               m_axi_awvalid,
    input  wire                               m_axi_awready,
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axi_wdata,
    output wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axi_wstrb,
    output wire                               m_axi_wlast,
    output wire                               m_axi_wvalid,
    input  wire                               m_axi_wready,
    input  wire [AXI_ID_WIDTH-1:0]            m_axi_bid,
    input  wire [1:0]                         m_axi_bresp,
    input  wire                               m_axi_bvalid,
    output wire                               m_axi_bready,
    output wire [AXI_ID_WIDTH-1:0]            m_axi_arid,
    output wire [AXI_ADDR_WIDTH-1:0]          m_axi_araddr,
    output wire [7:0]                         m_axi_arlen,
    output wire [2:0]                         m_axi_arsize,
    output wire [1:0]                         m_axi_arburst,
    output wire                               m_axi_arlock,
    output wire [3:0]                         m_axi_arcache,
    output wire [2:0]                         m_axi_arprot,
    output wire                               m_axi_arvalid,
    input  wire                               m_axi_arready,
    input  wire [AXI_ID_WIDTH-1:0]            m_axi_rid,
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axi_rdata,
    input  wire [1:0]                         m_axi_rresp,
    input  wire                               m_axi_rlast,
    input  wire                               m_axi_rvalid,
    output wire                               m_axi_rready,

    /* AXI4-Lite master (user BAR) */
    output wire [31:0]                        m_axil_awaddr,
    output wire [2:0]                         m_axil_awprot,
    output wire                               m_axil_awvalid,
    input  wire                               m_axil_awready,
    output wire [31:0]                        m_axil_wdata,
    output wire [3:0]                         m_axil_wstrb,
    output wire                               m_axil_wvalid,
    input  wire                               m_axil_wready,
    input  wire [1:0]                         m_axil_bresp,
    input  wire                               m_axil_bvalid,
    output wire                               m_axil_bready,
    output wire [31:0]                        m_axil_araddr,
    output wire [2:0]                         m_axil_arprot,
    output wire                               m_axil_arvalid,
    input  wire                               m_axil_arready,
    input  wire [31:0]                        m_axil_rdata,
    input  wire [1:0]                         m_axil_rresp,
    input  wire                               m_axil_rvalid,
    output wire                               m_axil_rready
);

localparam DW = AXIS_PCIE_DATA_WIDTH;
localparam KEEP = AXIS_PCIE_KEEP_WIDTH;
localparam AW = AXI_ADDR_WIDTH;
localparam DESC_IDX_WIDTH = $clog2(DESC_DEPTH*8);

// tag context kinds (see pevb_rc_rx)
localparam [1:0] KIND_H2C_DESC = 2'd0;
localparam [1:0] KIND_C2H_DESC = 2'd1;
localparam [1:0] KIND_H2C_DATA = 2'd2;

initial begin
    if (AXI_ADDR_WIDTH < 32 || AXI_ADDR_WIDTH > 64) begin
        $error("Error: AXI_ADDR_WIDTH must be 32 to 64 (instance %m)");
        $finish;
    end
end

wire clk = user_clk;
wire rst = user_reset;

assign pcie_cq_np_req = 2'b01;
assign cfg_config_space_enable = 1'b1;
assign cfg_interrupt_msi_function_number = 8'd0;

/* register access */
wire reg_req_valid;
wire reg_req_we;
wire [2:0] reg_req_bar;
wire [`PEVB_BAR_DMA_ADDR_WIDTH-1:0] reg_req_addr;
wire [31:0] reg_req_wdata;
wire [3:0] reg_req_be;
wire [31:0] reg_rd_data;
wire reg_ack;
wire [31:0] dma_rd_data;
wire [31:0] user_rd_data;
wire user_ack;
wire dma_bar = reg_req_bar == `PEVB_BAR_DMA;
// DMA registers answer at once (combinational read data); the user BAR when the
// AXI-Lite slave does
assign reg_ack = dma_bar ? reg_req_valid : user_ack;
assign reg_rd_data = dma_bar ? dma_rd_data : user_rd_data;

pevb_cq_cc #(
    .AXIS_PCIE_DATA_WIDTH(DW),
    .AXIS_PCIE_KEEP_WIDTH(KEEP),
    .AXIS_PCIE_CQ_USER_WIDTH(AXIS_PCIE_CQ_USER_WIDTH),
    .AXIS_PCIE_CC_USER_WIDTH(AXIS_PCIE_CC_USER_WIDTH)
) cq_cc_inst (
    .clk(clk),
    .rst(rst),
    .s_axis_cq_tdata(s_axis_cq_tdata),
    .s_axis_cq_tkeep(s_axis_cq_tkeep),
    .s_axis_cq_tvalid(s_axis_cq_tvalid),
    .s_axis_cq_tready(s_axis_cq_tready),
    .s_axis_cq_tlast(s_axis_cq_tlast),
    .s_axis_cq_tuser(s_axis_cq_tuser),
    .m_axis_cc_tdata(m_axis_cc_tdata),
    .m_axis_cc_tkeep(m_axis_cc_tkeep),
    .m_axis_cc_tvalid(m_axis_cc_tvalid),
    .m_axis_cc_tready(m_axis_cc_tready),
    .m_axis_cc_tlast(m_axis_cc_tlast),
    .m_axis_cc_tuser(m_axis_cc_tuser),
    .reg_req_valid(reg_req_valid),
    .reg_req_we(reg_req_we),
    .reg_req_bar(reg_req_bar),
    .reg_req_addr(reg_req_addr),
    .reg_req_wdata(reg_req_wdata),
    .reg_req_be(reg_req_be),
    .reg_ack(reg_ack),
    .reg_rd_data(reg_rd_data)
);

pevb_axil_master #(
    .BAR_ADDR_WIDTH(`PEVB_BAR_USER_ADDR_WIDTH)
) axil_inst (
    .clk(clk),
    .rst(rst),
    .req_valid(reg_req_valid && !dma_bar),
    .req_we(reg_req_we),
    .req_addr(reg_req_addr[`PEVB_BAR_USER_ADDR_WIDTH-1:0]),
    .req_wdata(reg_req_wdata),
    .req_be(reg_req_be),
    .ack(user_ack),
    .rd_data(user_rd_data),
    .m_axil_awaddr(m_axil_awaddr),
    .m_axil_awprot(m_axil_awprot),
    .m_axil_awvalid(m_axil_awvalid),
    .m_axil_awready(m_axil_awready),
    .m_axil_wdata(m_axil_wdata),
    .m_axil_wstrb(m_axil_wstrb),
    .m_axil_wvalid(m_axil_wvalid),
    .m_axil_wready(m_axil_wready),
    .m_axil_bresp(m_axil_bresp),
    .m_axil_bvalid(m_axil_bvalid),
    .m_axil_bready(m_axil_bready),
    .m_axil_araddr(m_axil_araddr),
    .m_axil_arprot(m_axil_arprot),
    .m_axil_arvalid(m_axil_arvalid),
    .m_axil_arready(m_axil_arready),
    .m_axil_rdata(m_axil_rdata),
    .m_axil_rresp(m_axil_rresp),
    .m_axil_rvalid(m_axil_rvalid),
    .m_axil_rready(m_axil_rready)
);

/* channel control and status (index 0: H2C0, 1: C2H0) */
wire [63:0] ch_control;
wire [127:0] ch_desc_addr;
wire [11:0] ch_desc_adj;
wire [127:0] ch_wb_addr;
wire [1:0] ch_halt;
wire [2*`PEVB_STAT_EVENT_WIDTH-1:0] ch_event;
wire [1:0] ch_busy;
wire [63:0] ch_count;
wire [1:0] ch_bytes_valid;
wire [55:0] ch_bytes;

pevb_regs #(
    .AXIS_PCIE_DATA_WIDTH(DW)
) regs_inst (
    .clk(clk),
    .rst(rst),
    .reg_req_valid(reg_req_valid),
    .reg_req_we(reg_req_we),
    .reg_req_bar(reg_req_bar),
    .reg_req_addr(reg_req_addr),
    .reg_req_wdata(reg_req_wdata),
    .reg_req_be(reg_req_be),
    .reg_rd_data(dma_rd_data),
    .ch_control(ch_control),
    .ch_desc_addr(ch_desc_addr),
    .ch_desc_adj(ch_desc_adj),
    .ch_wb_addr(ch_wb_addr),
    .ch_halt(ch_halt),
    .ch_event(ch_event),
    .ch_busy(ch_busy),
    .ch_count(ch_count),
    .ch_bytes_valid(ch_bytes_valid),
    .ch_bytes(ch_bytes),
    .cfg_max_payload(cfg_max_payload),
    .cfg_max_read_req(cfg_max_read_req),
    .cfg_bus_number(cfg_bus_number),
    .cfg_interrupt_msi_enable(cfg_interrupt_msi_enable),
    .cfg_interrupt_msi_mmenable(cfg_interrupt_msi_mmenable),
    .cfg_interrupt_msi_int(cfg_interrupt_msi_int),
    .cfg_interrupt_msi_sent(cfg_interrupt_msi_sent),
    .cfg_interrupt_msi_fail(cfg_interrupt_msi_fail)
);

/* read request sources */
wire fh_rd_valid, fc_rd_valid, dh_rd_valid;
wire [63:0] fh_rd_addr, fc_rd_addr, dh_rd_addr;
wire [12:0] fh_rd_len, fc_rd_len, dh_rd_len;
wire [DESC_IDX_WIDTH-1:0] fh_rd_info, fc_rd_info;
wire [AW-1:0] dh_rd_info;
wire [1:0] dh_rd_slot;

wire tag_avail;
wire [7:0] tag_free;
wire rq_rd_ready;

// fixed priority: descriptor fetches (small, on the critical path) before data
wire sel_fh = fh_rd_valid;
wire sel_fc = !fh_rd_valid && fc_rd_valid;
wire sel_dh = !fh_rd_valid && !fc_rd_valid && dh_rd_valid;
wire rd_any = fh_rd_valid || fc_rd_valid || dh_rd_valid;
wire rd_fire = rd_any && tag_avail && rq_rd_ready;

wire [63:0] rd_addr = sel_fh ? fh_rd_addr : sel_fc ? fc_rd_addr : dh_rd_addr;
wire [12:0] rd_len = sel_fh ? fh_rd_len : sel_fc ? fc_rd_len : dh_rd_len;
wire [1:0] rd_kind = sel_fh ? KIND_H2C_DESC : sel_fc ? KIND_C2H_DESC : KIND_H2C_DATA;
wire [AW-1:0] rd_info = sel_fh ? {{(AW-DESC_IDX_WIDTH){1'b0}}, fh_rd_info} :
                        sel_fc ? {{(AW-DESC_IDX_WIDTH){1'b0}}, fc_rd_info} :
                        dh_rd_info;

/* write request sources */
wire wbh_valid, wbc_valid, dc_wr_valid;
wire [63:0] wbh_addr, wbc_addr, dc_wr_addr;
wire [31:0] wbh_data, wbc_data;
wire [12:0] dc_wr_len;
wire [1:0] dc_wr_slot;
wire rq_wr_ready;

// write-backs before data (a write-back is only requested after its data left)
wire wsel_h = wbh_valid;
wire wsel_c = !wbh_valid && wbc_valid;
wire wsel_d = !wbh_valid && !wbc_valid && dc_wr_valid;
wire wr_any = wbh_valid || wbc_valid || dc_wr_valid;

wire [2:0] wr_done_id;
wire wr_done_valid;

wire pay_rd_en;
wire [DW-1:0] pay_rd_data;

pevb_rq_tx #(
    .AXIS_PCIE_DATA_WIDTH(DW),
    .AXIS_PCIE_KEEP_WIDTH(KEEP),
    .AXIS_PCIE_RQ_USER_WIDTH(AXIS_PCIE_RQ_USER_WIDTH),
    .WR_ID_WIDTH(3)
) rq_tx_inst (
    .clk(clk),
    .rst(rst),
    .s_rd_valid(rd_any && tag_avail),
    .s_rd_ready(rq_rd_ready),
    .s_rd_addr(rd_addr),
    .s_rd_len(rd_len),
    .s_rd_tag(tag_free),
    .s_wr_valid(wr_any),
    .s_wr_ready(rq_wr_ready),
    .s_wr_addr(wsel_h ? wbh_addr : wsel_c ? wbc_addr : dc_wr_addr),
    .s_wr_len(dc_wr_len),
    .s_wr_imm(!wsel_d),
    .s_wr_imm_data(wsel_h ? wbh_data : wbc_data),
    .s_wr_id({wsel_d, dc_wr_slot}),
    .m_wr_done_valid(wr_done_valid),
    .m_wr_done_id(wr_done_id),
    .pay_rd_en(pay_rd_en),
    .pay_rd_data(pay_rd_data),
    .m_axis_rq_tdata(m_axis_rq_tdata),
    .m_axis_rq_tkeep(m_axis_rq_tkeep),
    .m_axis_rq_tvalid(m_axis_rq_tvalid),
    .m_axis_rq_tready(m_axis_rq_tready),
    .m_axis_rq_tlast(m_axis_rq_tlast),
    .m_axis_rq_tuser(m_axis_rq_tuser)
);

wire [KEEP-1:0] desc_wr_en_h2c, desc_wr_en_c2h;
wire [DESC_IDX_WIDTH-1:0] desc_wr_idx;
wire [DW-1:0] desc_wr_data;
wire retire_valid;
wire [1:0] retire_kind;
wire [1:0] retire_slot;
wire [4:0] retire_err;
wire [3:0] h2c_discard;
wire [7:0] tags_in_flight;
wire unexpected_cpl;
wire wr_space_ok;
wire job_valid;
wire [AW-1:0] job_addr;
wire [12:0] job_len;
wire [$clog2(DW/8)-1:0] job_ofs;
wire [1:0] job_slot;
wire dat_valid;
wire [DW-1:0] dat_data;
wire job_done_valid;
wire [1:0] job_done_slot;
wire [4:0] job_done_err;
// debug only (waveforms): tags outstanding and completions matching no request
wire unused_rc_status = ^{tags_in_flight, unexpected_cpl};

pevb_rc_rx #(
    .AXIS_PCIE_DATA_WIDTH(DW),
    .AXIS_PCIE_KEEP_WIDTH(KEEP),
    .AXIS_PCIE_RC_USER_WIDTH(AXIS_PCIE_RC_USER_WIDTH),
    .ADDR_WIDTH(AW),
    .DESC_IDX_WIDTH(DESC_IDX_WIDTH),
    .TAG_COUNT(32),
    .CPL_TIMEOUT_CYCLES(CPL_TIMEOUT_CYCLES)
) rc_rx_inst (
    .clk(clk),
    .rst(rst),
    .tag_avail(tag_avail),
    .tag_free(tag_free),
    .alloc_valid(rd_fire),
    .alloc_kind(rd_kind),
    .alloc_slot(dh_rd_slot),
    .alloc_addr_lo(rd_addr[11:0]),
    .alloc_info(rd_info),
    .s_axis_rc_tdata(s_axis_rc_tdata),
    .s_axis_rc_tkeep(s_axis_rc_tkeep),
    .s_axis_rc_tvalid(s_axis_rc_tvalid),
    .s_axis_rc_tready(s_axis_rc_tready),
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
    .desc_wr_en_h2c(desc_wr_en_h2c),
    .desc_wr_en_c2h(desc_wr_en_c2h),
    .desc_wr_idx(desc_wr_idx),
    .desc_wr_data(desc_wr_data),
    .retire_valid(retire_valid),
    .retire_kind(retire_kind),
    .retire_slot(retire_slot),
    .retire_err(retire_err),
    .tags_in_flight(tags_in_flight),
    .unexpected_cpl(unexpected_cpl)
);

/* H2C channel 0 */
wire h2c_desc_valid, h2c_desc_ready;
wire [63:0] h2c_desc_src, h2c_desc_dst;
wire [27:0] h2c_desc_len;
wire [2:0] h2c_desc_flags;
wire h2c_restart;
wire h2c_done_valid;
wire [2:0] h2c_done_flags;
wire [4:0] h2c_done_rd_err, h2c_done_wr_err;
wire h2c_done_abort;
wire [27:0] h2c_done_bytes;

pevb_desc_eng #(
    .KEEP(KEEP),
    .DESC_DEPTH(DESC_DEPTH)
) h2c_desc_inst (
    .clk(clk),
    .rst(rst),
    .control(ch_control[31:0]),
    .desc_addr(ch_desc_addr[63:0]),
    .desc_adj(ch_desc_adj[5:0]),
    .wb_addr(ch_wb_addr[63:0]),
    .halt(ch_halt[0]),
    .mrrs_enc(cfg_max_read_req),
    .m_rd_valid(fh_rd_valid),
    .m_rd_ready(rd_fire && sel_fh),
    .m_rd_addr(fh_rd_addr),
    .m_rd_len(fh_rd_len),
    .m_rd_info(fh_rd_info),
    .buf_wr_en(desc_wr_en_h2c),
    .buf_wr_idx(desc_wr_idx),
    .buf_wr_data(desc_wr_data),
    .fetch_retire_valid(retire_valid && retire_kind == KIND_H2C_DESC),
    .fetch_retire_err(retire_err),
    .m_desc_valid(h2c_desc_valid),
    .m_desc_ready(h2c_desc_ready),
    .m_desc_src(h2c_desc_src),
    .m_desc_dst(h2c_desc_dst),
    .m_desc_len(h2c_desc_len),
    .m_desc_flags(h2c_desc_flags),
    .mover_restart(h2c_restart),
    .done_valid(h2c_done_valid),
    .done_flags(h2c_done_flags),
    .done_rd_err(h2c_done_rd_err),
    .done_wr_err(h2c_done_wr_err),
    .done_abort(h2c_done_abort),
    .done_bytes(h2c_done_bytes),
    .m_wb_valid(wbh_valid),
    .m_wb_ready(rq_wr_ready && wsel_h),
    .m_wb_addr(wbh_addr),
    .m_wb_data(wbh_data),
    .event_out(ch_event[0 +: `PEVB_STAT_EVENT_WIDTH]),
    .busy(ch_busy[0]),
    .count(ch_count[31:0]),
    .bytes_valid(ch_bytes_valid[0]),
    .bytes(ch_bytes[27:0])
);

pevb_axi_wr #(
    .DATA_WIDTH(DW),
    .ADDR_WIDTH(AW),
    .ID_WIDTH(AXI_ID_WIDTH)
) axi_wr_inst (
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
    .m_axi_bready(m_axi_bready)
);

pevb_h2c_rd #(
    .ADDR_WIDTH(AW)
) h2c_rd_inst (
    .clk(clk),
    .rst(rst),
    .restart(h2c_restart),
    .mrrs_enc(cfg_max_read_req),
    .s_desc_valid(h2c_desc_valid),
    .s_desc_ready(h2c_desc_ready),
    .s_desc_src(h2c_desc_src),
    .s_desc_dst(h2c_desc_dst),
    .s_desc_len(h2c_desc_len),
    .s_desc_flags(h2c_desc_flags),
    .m_done_valid(h2c_done_valid),
    .m_done_flags(h2c_done_flags),
    .m_done_rd_err(h2c_done_rd_err),
    .m_done_wr_err(h2c_done_wr_err),
    .m_done_abort(h2c_done_abort),
    .m_done_bytes(h2c_done_bytes),
    .m_rd_valid(dh_rd_valid),
    .m_rd_ready(rd_fire && sel_dh),
    .m_rd_addr(dh_rd_addr),
    .m_rd_len(dh_rd_len),
    .m_rd_info(dh_rd_info),
    .m_rd_slot(dh_rd_slot),
    .retire_valid(retire_valid && retire_kind == KIND_H2C_DATA),
    .retire_slot(retire_slot),
    .retire_err(retire_err),
    .job_valid(job_valid),
    .job_slot(job_slot),
    .job_done_valid(job_done_valid),
    .job_done_slot(job_done_slot),
    .job_done_err(job_done_err),
    .discard(h2c_discard)
);

/* C2H channel 0 */
wire c2h_desc_valid, c2h_desc_ready;
wire [63:0] c2h_desc_src, c2h_desc_dst;
wire [27:0] c2h_desc_len;
wire [2:0] c2h_desc_flags;
wire c2h_restart;
wire c2h_done_valid;
wire [2:0] c2h_done_flags;
wire [4:0] c2h_done_rd_err, c2h_done_wr_err;
wire c2h_done_abort;
wire [27:0] c2h_done_bytes;

pevb_desc_eng #(
    .KEEP(KEEP),
    .DESC_DEPTH(DESC_DEPTH)
) c2h_desc_inst (
    .clk(clk),
    .rst(rst),
    .control(ch_control[63:32]),
    .desc_addr(ch_desc_addr[127:64]),
    .desc_adj(ch_desc_adj[11:6]),
    .wb_addr(ch_wb_addr[127:64]),
    .halt(ch_halt[1]),
    .mrrs_enc(cfg_max_read_req),
    .m_rd_valid(fc_rd_valid),
    .m_rd_ready(rd_fire && sel_fc),
    .m_rd_addr(fc_rd_addr),
    .m_rd_len(fc_rd_len),
    .m_rd_info(fc_rd_info),
    .buf_wr_en(desc_wr_en_c2h),
    .buf_wr_idx(desc_wr_idx),
    .buf_wr_data(desc_wr_data),
    .fetch_retire_valid(retire_valid && retire_kind == KIND_C2H_DESC),
    .fetch_retire_err(retire_err),
    .m_desc_valid(c2h_desc_valid),
    .m_desc_ready(c2h_desc_ready),
    .m_desc_src(c2h_desc_src),
    .m_desc_dst(c2h_desc_dst),
    .m_desc_len(c2h_desc_len),
    .m_desc_flags(c2h_desc_flags),
    .mover_restart(c2h_restart),
    .done_valid(c2h_done_valid),
    .done_flags(c2h_done_flags),
    .done_rd_err(c2h_done_rd_err),
    .done_wr_err(c2h_done_wr_err),
    .done_abort(c2h_done_abort),
    .done_bytes(c2h_done_bytes),
    .m_wb_valid(wbc_valid),
    .m_wb_ready(rq_wr_ready && wsel_c),
    .m_wb_addr(wbc_addr),
    .m_wb_data(wbc_data),
    .event_out(ch_event[`PEVB_STAT_EVENT_WIDTH +: `PEVB_STAT_EVENT_WIDTH]),
    .busy(ch_busy[1]),
    .count(ch_count[63:32]),
    .bytes_valid(ch_bytes_valid[1]),
    .bytes(ch_bytes[55:28])
);

wire c2h_cmd_valid, c2h_cmd_ready;
wire [63:0] c2h_cmd_addr;
wire [12:0] c2h_cmd_len;
wire [AW-1:0] c2h_cmd_card;
wire [1:0] c2h_cmd_slot;
wire c2h_drop_valid;
wire [1:0] c2h_drop_slot;
wire [4:0] c2h_drop_err;

pevb_c2h_wr #(
    .ADDR_WIDTH(AW)
) c2h_wr_inst (
    .clk(clk),
    .rst(rst),
    .restart(c2h_restart),
    .mps_enc(cfg_max_payload),
    .s_desc_valid(c2h_desc_valid),
    .s_desc_ready(c2h_desc_ready),
    .s_desc_src(c2h_desc_src),
    .s_desc_dst(c2h_desc_dst),
    .s_desc_len(c2h_desc_len),
    .s_desc_flags(c2h_desc_flags),
    .m_done_valid(c2h_done_valid),
    .m_done_flags(c2h_done_flags),
    .m_done_rd_err(c2h_done_rd_err),
    .m_done_wr_err(c2h_done_wr_err),
    .m_done_abort(c2h_done_abort),
    .m_done_bytes(c2h_done_bytes),
    .m_wr_valid(c2h_cmd_valid),
    .m_wr_ready(c2h_cmd_ready),
    .m_wr_addr(c2h_cmd_addr),
    .m_wr_len(c2h_cmd_len),
    .m_wr_card_addr(c2h_cmd_card),
    .m_wr_slot(c2h_cmd_slot),
    .sent_valid(wr_done_valid && wr_done_id[2]),
    .sent_slot(wr_done_id[1:0]),
    .drop_valid(c2h_drop_valid),
    .drop_slot(c2h_drop_slot),
    .drop_err(c2h_drop_err)
);

pevb_axi_rd #(
    .DATA_WIDTH(DW),
    .ADDR_WIDTH(AW),
    .ID_WIDTH(AXI_ID_WIDTH)
) axi_rd_inst (
    .clk(clk),
    .rst(rst),
    .restart(c2h_restart),
    .s_cmd_valid(c2h_cmd_valid),
    .s_cmd_ready(c2h_cmd_ready),
    .s_cmd_pcie_addr(c2h_cmd_addr),
    .s_cmd_len(c2h_cmd_len),
    .s_cmd_card_addr(c2h_cmd_card),
    .s_cmd_slot(c2h_cmd_slot),
    .m_tlp_valid(dc_wr_valid),
    .m_tlp_ready(rq_wr_ready && wsel_d),
    .m_tlp_addr(dc_wr_addr),
    .m_tlp_len(dc_wr_len),
    .m_tlp_slot(dc_wr_slot),
    .m_drop_valid(c2h_drop_valid),
    .m_drop_slot(c2h_drop_slot),
    .m_drop_err(c2h_drop_err),
    .pay_rd_en(pay_rd_en),
    .pay_rd_data(pay_rd_data),
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

endmodule

`resetall
