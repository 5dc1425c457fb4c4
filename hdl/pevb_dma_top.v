// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * The picoevb card, built as the board's design is: the XDMA engine
 * (pevb_xdma) with an AXI BRAM of RAM_SIZE bytes on its AXI4 memory-mapped
 * master and an AXI GPIO (LEDs, RAM size register, and a mailbox that raises
 * a user interrupt per value written: not on the original card) on its
 * AXI4-Lite master behind the user BAR.  Channels built as streams (H2C_STREAM, C2H_STREAM)
 * bring their AXI4-Stream ports out under XDMA's names, for a testbench or
 * user logic to sink and source.
 */
module pevb_dma_top #
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
    // card RAM size in bytes (power of two, 8 KiB to 256 MiB)
    parameter RAM_SIZE = 65536,
    // DMA channels each way (1 to 4; the picoevb's XDMA has one of each), all
    // on the card RAM
    parameter H2C_CHANNELS = 1,
    parameter C2H_CHANNELS = 1,
    // AXI4-Stream channels (bit n: channel n streams on the card's stream ports
    // instead of moving data to and from the card RAM)
    parameter H2C_STREAM = 0,
    parameter C2H_STREAM = 0,
    // the engine's user interrupt inputs (1 to 16), ports of the card for the
    // testbench to drive as a user design would
    parameter USER_IRQS = 16,
    // MSI-X table and PBA at 0x8000 of the DMA BAR (0 or 1)
    parameter MSIX = 0,
    // descriptor prefetch buffer entries per channel (power of two)
    parameter DESC_DEPTH = 8,
    // descriptor fetches each channel keeps in flight (1 to 7)
    parameter DESC_FETCHES = 2,
    // completion timeout in user clock cycles
    parameter CPL_TIMEOUT_CYCLES = 131072
)
(
    input  wire                               user_clk,
    input  wire                               user_reset,

`include "pevb_xdma_hip_ports.vh"

`include "pevb_hip_cfg_ports.vh"

`include "pevb_card_ports.vh"
);

localparam DW = AXIS_PCIE_DATA_WIDTH;
localparam AXI_ADDR_WIDTH = 64;
localparam AXI_ID_WIDTH = 4;

initial begin
    if (RAM_SIZE < 8192 || RAM_SIZE > (1 << 28) || (RAM_SIZE & (RAM_SIZE - 1)) != 0) begin
        $error("Error: RAM_SIZE must be a power of two from 8 KiB to 256 MiB (instance %m)");
        $finish;
    end
end

wire [AXI_ID_WIDTH-1:0] axi_awid, axi_bid, axi_arid, axi_rid;
wire [AXI_ADDR_WIDTH-1:0] axi_awaddr, axi_araddr;
wire [7:0] axi_awlen, axi_arlen;
wire [2:0] axi_awsize, axi_arsize, axi_awprot, axi_arprot;
wire [1:0] axi_awburst, axi_arburst, axi_bresp, axi_rresp;
wire axi_awlock, axi_arlock;
wire [3:0] axi_awcache, axi_arcache;
wire axi_awvalid, axi_awready, axi_wlast, axi_wvalid, axi_wready, axi_bvalid, axi_bready;
wire axi_arvalid, axi_arready, axi_rlast, axi_rvalid, axi_rready;
wire [DW-1:0] axi_wdata, axi_rdata;
wire [DW/8-1:0] axi_wstrb;

// the card's AXI blocks run on the IP's user clock, as on the board
wire axi_aclk, axi_aresetn;
wire axi_rst = !axi_aresetn;

wire [31:0] axil_awaddr, axil_wdata, axil_araddr, axil_rdata;
wire [2:0] axil_awprot, axil_arprot;
wire [3:0] axil_wstrb;
wire [1:0] axil_bresp, axil_rresp;
wire axil_awvalid, axil_awready, axil_wvalid, axil_wready, axil_bvalid, axil_bready;
wire axil_arvalid, axil_arready, axil_rvalid, axil_rready;

// the AXI4-Lite slave is not built on the card: its outputs idle
wire s_axil_awready;
wire s_axil_wready;
wire s_axil_bvalid;
wire [1:0] s_axil_bresp;
wire s_axil_arready;
wire [31:0] s_axil_rdata;
wire [1:0] s_axil_rresp;
wire s_axil_rvalid;
// the card has no bypass BAR: the bypass master's outputs idle
wire [AXI_ID_WIDTH-1:0] axib_awid;
wire [AXI_ADDR_WIDTH-1:0] axib_awaddr;
wire [7:0] axib_awlen;
wire [2:0] axib_awsize;
wire [1:0] axib_awburst;
wire axib_awlock;
wire [3:0] axib_awcache;
wire [2:0] axib_awprot;
wire axib_awvalid;
wire [AXIS_PCIE_DATA_WIDTH-1:0] axib_wdata;
wire [AXIS_PCIE_DATA_WIDTH/8-1:0] axib_wstrb;
wire axib_wlast;
wire axib_wvalid;
wire axib_bready;
wire [AXI_ID_WIDTH-1:0] axib_arid;
wire [AXI_ADDR_WIDTH-1:0] axib_araddr;
wire [7:0] axib_arlen;
wire [2:0] axib_arsize;
wire [1:0] axib_arburst;
wire axib_arlock;
wire [3:0] axib_arcache;
wire [2:0] axib_arprot;
wire axib_arvalid;
wire axib_rready;
wire unused_axib = ^{axib_awid, axib_awaddr, axib_awlen, axib_awsize, axib_awburst, axib_awlock, axib_awcache, axib_awprot, axib_awvalid, axib_wdata, axib_wstrb, axib_wlast, axib_wvalid, axib_bready, axib_arid, axib_araddr, axib_arlen, axib_arsize, axib_arburst, axib_arlock, axib_arcache, axib_arprot, axib_arvalid, axib_rready};
wire unused_s_axil = ^{s_axil_awready, s_axil_wready, s_axil_bvalid, s_axil_bresp, s_axil_arready, s_axil_rdata, s_axil_rresp, s_axil_rvalid};

// descriptor bypass is not used on the card: the ports idle
wire [7:0] byp_ready;
wire unused_byp_ready = ^byp_ready;

// the mailbox's interrupt, on user interrupt MAILBOX_IRQ beside the testbench's requests
wire mbox_irq;
wire [USER_IRQS-1:0] mbox_irq_req;

genvar mb;
generate
    for (mb = 0; mb < USER_IRQS; mb = mb + 1) begin : mbox_irq_bits
        assign mbox_irq_req[mb] = mbox_irq && mb == `PEVB_MAILBOX_IRQ;
    end
endgenerate

pevb_xdma_ip #(
    .AXIS_PCIE_DATA_WIDTH(AXIS_PCIE_DATA_WIDTH),
    .AXIS_PCIE_KEEP_WIDTH(AXIS_PCIE_KEEP_WIDTH),
    .AXIS_PCIE_RQ_USER_WIDTH(AXIS_PCIE_RQ_USER_WIDTH),
    .AXIS_PCIE_RC_USER_WIDTH(AXIS_PCIE_RC_USER_WIDTH),
    .AXIS_PCIE_CQ_USER_WIDTH(AXIS_PCIE_CQ_USER_WIDTH),
    .AXIS_PCIE_CC_USER_WIDTH(AXIS_PCIE_CC_USER_WIDTH),
    .AXI_ADDR_WIDTH(AXI_ADDR_WIDTH),
    .AXI_ID_WIDTH(AXI_ID_WIDTH),
    .H2C_CHANNELS(H2C_CHANNELS),
    .C2H_CHANNELS(C2H_CHANNELS),
    .USER_IRQS(USER_IRQS),
    .MSIX(MSIX),
    .H2C_STREAM(H2C_STREAM),
    .C2H_STREAM(C2H_STREAM),
    .DESC_DEPTH(DESC_DEPTH),
    .DESC_FETCHES(DESC_FETCHES),
    .CPL_TIMEOUT_CYCLES(CPL_TIMEOUT_CYCLES)
) xdma_0 (
    .user_clk(user_clk),
    .user_reset(user_reset),
`include "pevb_xdma_hip_map.vh"
`include "pevb_hip_cfg_map.vh"
    .usr_irq_req(usr_irq_req | mbox_irq_req),
    .usr_irq_ack(usr_irq_ack),
    .axi_aclk(axi_aclk),
    .axi_aresetn(axi_aresetn),
    .msi_enable(msi_enable),
    .msi_vector_width(msi_vector_width),
    .msix_enable(msix_enable),
`include "pevb_xdma_stream_map.vh"
    // no descriptor bypass on the card
    .h2c_dsc_byp_load(4'd0),
    .h2c_dsc_byp_ready(byp_ready[3:0]),
    .h2c_dsc_byp_src_addr(256'd0),
    .h2c_dsc_byp_dst_addr(256'd0),
    .h2c_dsc_byp_len(112'd0),
    .h2c_dsc_byp_ctl(64'd0),
    .c2h_dsc_byp_load(4'd0),
    .c2h_dsc_byp_ready(byp_ready[7:4]),
    .c2h_dsc_byp_src_addr(256'd0),
    .c2h_dsc_byp_dst_addr(256'd0),
    .c2h_dsc_byp_len(112'd0),
    .c2h_dsc_byp_ctl(64'd0),
    .c2h_sts_3(c2h_sts_3),
    .m_axi_awid(axi_awid),
    .m_axi_awaddr(axi_awaddr),
    .m_axi_awlen(axi_awlen),
    .m_axi_awsize(axi_awsize),
    .m_axi_awburst(axi_awburst),
    .m_axi_awlock(axi_awlock),
    .m_axi_awcache(axi_awcache),
    .m_axi_awprot(axi_awprot),
    .m_axi_awvalid(axi_awvalid),
    .m_axi_awready(axi_awready),
    .m_axi_wdata(axi_wdata),
    .m_axi_wstrb(axi_wstrb),
    .m_axi_wlast(axi_wlast),
    .m_axi_wvalid(axi_wvalid),
    .m_axi_wready(axi_wready),
    .m_axi_bid(axi_bid),
    .m_axi_bresp(axi_bresp),
    .m_axi_bvalid(axi_bvalid),
    .m_axi_bready(axi_bready),
    .m_axi_arid(axi_arid),
    .m_axi_araddr(axi_araddr),
    .m_axi_arlen(axi_arlen),
    .m_axi_arsize(axi_arsize),
    .m_axi_arburst(axi_arburst),
    .m_axi_arlock(axi_arlock),
    .m_axi_arcache(axi_arcache),
    .m_axi_arprot(axi_arprot),
    .m_axi_arvalid(axi_arvalid),
    .m_axi_arready(axi_arready),
    .m_axi_rid(axi_rid),
    .m_axi_rdata(axi_rdata),
    .m_axi_rresp(axi_rresp),
    .m_axi_rlast(axi_rlast),
    .m_axi_rvalid(axi_rvalid),
    .m_axi_rready(axi_rready),
    // no soft reset on the card
    .dma_bridge_resetn(1'b1),
    // no bypass BAR on the card
    .m_axib_awid(axib_awid),
    .m_axib_awaddr(axib_awaddr),
    .m_axib_awlen(axib_awlen),
    .m_axib_awsize(axib_awsize),
    .m_axib_awburst(axib_awburst),
    .m_axib_awlock(axib_awlock),
    .m_axib_awcache(axib_awcache),
    .m_axib_awprot(axib_awprot),
    .m_axib_awvalid(axib_awvalid),
    .m_axib_awready(1'd0),
    .m_axib_wdata(axib_wdata),
    .m_axib_wstrb(axib_wstrb),
    .m_axib_wlast(axib_wlast),
    .m_axib_wvalid(axib_wvalid),
    .m_axib_wready(1'd0),
    .m_axib_bid({AXI_ID_WIDTH{1'b0}}),
    .m_axib_bresp(2'd0),
    .m_axib_bvalid(1'd0),
    .m_axib_bready(axib_bready),
    .m_axib_arid(axib_arid),
    .m_axib_araddr(axib_araddr),
    .m_axib_arlen(axib_arlen),
    .m_axib_arsize(axib_arsize),
    .m_axib_arburst(axib_arburst),
    .m_axib_arlock(axib_arlock),
    .m_axib_arcache(axib_arcache),
    .m_axib_arprot(axib_arprot),
    .m_axib_arvalid(axib_arvalid),
    .m_axib_arready(1'd0),
    .m_axib_rid({AXI_ID_WIDTH{1'b0}}),
    .m_axib_rdata({AXIS_PCIE_DATA_WIDTH{1'b0}}),
    .m_axib_rresp(2'd0),
    .m_axib_rlast(1'd0),
    .m_axib_rvalid(1'd0),
    .m_axib_rready(axib_rready),
    // no AXI4-Lite slave on the card
    .s_axil_awaddr(32'd0),
    .s_axil_awprot(3'd0),
    .s_axil_awvalid(1'd0),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(32'd0),
    .s_axil_wstrb(4'd0),
    .s_axil_wvalid(1'd0),
    .s_axil_wready(s_axil_wready),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bready(1'd0),
    .s_axil_araddr(32'd0),
    .s_axil_arprot(3'd0),
    .s_axil_arvalid(1'd0),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(1'd0),
    .m_axil_awaddr(axil_awaddr),
    .m_axil_awprot(axil_awprot),
    .m_axil_awvalid(axil_awvalid),
    .m_axil_awready(axil_awready),
    .m_axil_wdata(axil_wdata),
    .m_axil_wstrb(axil_wstrb),
    .m_axil_wvalid(axil_wvalid),
    .m_axil_wready(axil_wready),
    .m_axil_bresp(axil_bresp),
    .m_axil_bvalid(axil_bvalid),
    .m_axil_bready(axil_bready),
    .m_axil_araddr(axil_araddr),
    .m_axil_arprot(axil_arprot),
    .m_axil_arvalid(axil_arvalid),
    .m_axil_arready(axil_arready),
    .m_axil_rdata(axil_rdata),
    .m_axil_rresp(axil_rresp),
    .m_axil_rvalid(axil_rvalid),
    .m_axil_rready(axil_rready)
);

pevb_axi_ram #(
    .DATA_WIDTH(DW),
    .ADDR_WIDTH(AXI_ADDR_WIDTH),
    .ID_WIDTH(AXI_ID_WIDTH),
    .SIZE(RAM_SIZE)
) card_ram_inst (
    .clk(axi_aclk),
    .rst(axi_rst),
    .s_axi_awid(axi_awid),
    .s_axi_awaddr(axi_awaddr),
    .s_axi_awlen(axi_awlen),
    .s_axi_awsize(axi_awsize),
    .s_axi_awburst(axi_awburst),
    .s_axi_awlock(axi_awlock),
    .s_axi_awcache(axi_awcache),
    .s_axi_awprot(axi_awprot),
    .s_axi_awvalid(axi_awvalid),
    .s_axi_awready(axi_awready),
    .s_axi_wdata(axi_wdata),
    .s_axi_wstrb(axi_wstrb),
    .s_axi_wlast(axi_wlast),
    .s_axi_wvalid(axi_wvalid),
    .s_axi_wready(axi_wready),
    .s_axi_bid(axi_bid),
    .s_axi_bresp(axi_bresp),
    .s_axi_bvalid(axi_bvalid),
    .s_axi_bready(axi_bready),
    .s_axi_arid(axi_arid),
    .s_axi_araddr(axi_araddr),
    .s_axi_arlen(axi_arlen),
    .s_axi_arsize(axi_arsize),
    .s_axi_arburst(axi_arburst),
    .s_axi_arlock(axi_arlock),
    .s_axi_arcache(axi_arcache),
    .s_axi_arprot(axi_arprot),
    .s_axi_arvalid(axi_arvalid),
    .s_axi_arready(axi_arready),
    .s_axi_rid(axi_rid),
    .s_axi_rdata(axi_rdata),
    .s_axi_rresp(axi_rresp),
    .s_axi_rlast(axi_rlast),
    .s_axi_rvalid(axi_rvalid),
    .s_axi_rready(axi_rready)
);

pevb_axil_gpio #(
    .RAM_SIZE(RAM_SIZE)
) gpio_inst (
    .clk(axi_aclk),
    .rst(axi_rst),
    .s_axil_awaddr(axil_awaddr),
    .s_axil_awprot(axil_awprot),
    .s_axil_awvalid(axil_awvalid),
    .s_axil_awready(axil_awready),
    .s_axil_wdata(axil_wdata),
    .s_axil_wstrb(axil_wstrb),
    .s_axil_wvalid(axil_wvalid),
    .s_axil_wready(axil_wready),
    .s_axil_bresp(axil_bresp),
    .s_axil_bvalid(axil_bvalid),
    .s_axil_bready(axil_bready),
    .s_axil_araddr(axil_araddr),
    .s_axil_arprot(axil_arprot),
    .s_axil_arvalid(axil_arvalid),
    .s_axil_arready(axil_arready),
    .s_axil_rdata(axil_rdata),
    .s_axil_rresp(axil_rresp),
    .s_axil_rvalid(axil_rvalid),
    .s_axil_rready(axil_rready),
    .led(led),
    .irq_req(mbox_irq),
    .irq_ack(usr_irq_ack[`PEVB_MAILBOX_IRQ]),
    .legacy(!msi_enable && !msix_enable)
);

endmodule

`resetall
