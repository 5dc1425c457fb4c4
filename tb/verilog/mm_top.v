// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * A frame store written against the Vivado XDMA IP in AXI memory-mapped mode
 * with the PCIe to DMA bypass BAR (axist_bypass_en) and the AXI4-Lite slave
 * (xdma_axilite_slave), as a user would write it for GPUDirect RDMA
 * (tb/tests/cocotb_mm.py): the host writes each frame straight into the card's
 * block RAM through the bypass BAR and rings a doorbell; the design then runs
 * the C2H channel itself, through the IP's AXI4-Lite slave, on a descriptor
 * chain the driver prepared once per slot, and the DMA copies the frame from
 * the block RAM into a pinned CUDA surface.  The IP instance is connected as
 * Vivado's instantiation template connects it; the drop-in takes its place.
 *
 * Card memory: 64 KiB of block RAM (pevb_axi_ram) at AXI address 0, shared by
 * the IP's AXI4 master (the DMA) and its bypass master through mm_axi_arb.
 * A job (doorbell k): through the AXI4-Lite slave the design writes the C2H
 * channel 0 SGDMA descriptor address DESC[k] (adjacent 0), clears the channel
 * status, sets Run with every ie_* bit, polls the status until the channel is
 * idle having stopped or failed, reads the completed count, clears Run, counts
 * the job and raises usr_irq_req[0] until usr_irq_ack[0].
 *
 * User registers (AXI4-Lite, user BAR): 0x00 doorbell (write k: run slot k's
 * chain; ignored while a job runs), 0x04 jobs done, 0x08 the last job's
 * channel status, 0x0C its completed count, 0x10 busy (read only),
 * 0x80 + 8 * k / + 4: DESC[k] low/high, k < 8.
 */
module mm_top
(
    input  wire         sys_clk,
    input  wire         sys_clk_gt,
    input  wire         sys_rst_n,
    output wire [0:0]   pci_exp_txp,
    output wire [0:0]   pci_exp_txn,
    input  wire [0:0]   pci_exp_rxp,
    input  wire [0:0]   pci_exp_rxn,
    output wire         user_lnk_up
);

localparam SLOTS = 8;
// C2H channel 0 registers (PG195): control, status, completed count; its SGDMA block
localparam [31:0] C2H_CONTROL = 32'h0000_1004;
localparam [31:0] C2H_STATUS = 32'h0000_1040;
localparam [31:0] C2H_COMPLETED = 32'h0000_1048;
localparam [31:0] C2H_DESC_LO = 32'h0000_5080;
localparam [31:0] C2H_DESC_HI = 32'h0000_5084;
localparam [31:0] C2H_DESC_ADJ = 32'h0000_5088;
// Run and every ie_* bit (the picoevb driver's start value)
localparam [31:0] START = 32'h00FF_FE7F;

wire axi_aclk, axi_aresetn;
wire clk = axi_aclk;
wire rst = !axi_aresetn;
wire [0:0] usr_irq_req, usr_irq_ack;
wire msi_enable;
wire [2:0] msi_vector_width;
wire [7:0] h2c_sts_0, c2h_sts_0;

/* the IP's AXI4 master (DMA) and bypass master (host), into the arbiter */
wire [3:0] m_axi_awid, m_axi_arid, m_axib_awid, m_axib_arid;
wire [63:0] m_axi_awaddr, m_axi_araddr, m_axib_awaddr, m_axib_araddr;
wire [7:0] m_axi_awlen, m_axi_arlen, m_axib_awlen, m_axib_arlen;
wire [2:0] m_axi_awsize, m_axi_arsize, m_axib_awsize, m_axib_arsize;
wire [1:0] m_axi_awburst, m_axi_arburst, m_axib_awburst, m_axib_arburst;
wire [2:0] m_axi_awprot, m_axi_arprot, m_axib_awprot, m_axib_arprot;
wire [3:0] m_axi_awcache, m_axi_arcache, m_axib_awcache, m_axib_arcache;
wire m_axi_awlock, m_axi_arlock, m_axib_awlock, m_axib_arlock;
wire m_axi_awvalid, m_axi_arvalid, m_axib_awvalid, m_axib_arvalid;
wire [63:0] m_axi_wdata, m_axib_wdata;
wire [7:0] m_axi_wstrb, m_axib_wstrb;
wire m_axi_wlast, m_axi_wvalid, m_axib_wlast, m_axib_wvalid;
wire m_axi_bready, m_axi_rready, m_axib_bready, m_axib_rready;
wire [1:0] awready, wready, bvalid, arready, rvalid;
wire [3:0] bid, rid;
wire [1:0] bresp, rresp;
wire [63:0] rdata;
wire rlast;

wire [31:0] s_axil_rdata;
wire [1:0] s_axil_bresp, s_axil_rresp;
wire s_axil_awready, s_axil_wready, s_axil_bvalid, s_axil_arready, s_axil_rvalid;
reg s_axil_awvalid, s_axil_wvalid, s_axil_arvalid;
reg [31:0] s_axil_awaddr, s_axil_wdata, s_axil_araddr;

wire [31:0] m_axil_awaddr, m_axil_wdata, m_axil_araddr, m_axil_rdata;
wire [2:0] m_axil_awprot, m_axil_arprot;
wire [3:0] m_axil_wstrb;
wire [1:0] m_axil_bresp, m_axil_rresp;
wire m_axil_awvalid, m_axil_awready, m_axil_wvalid, m_axil_wready;
wire m_axil_bvalid, m_axil_bready, m_axil_arvalid, m_axil_arready;
wire m_axil_rvalid, m_axil_rready;

xdma_0 xdma_0_i (
    .sys_clk(sys_clk),
    .sys_clk_gt(sys_clk_gt),
    .sys_rst_n(sys_rst_n),
    .user_lnk_up(user_lnk_up),
    .pci_exp_txp(pci_exp_txp),
    .pci_exp_txn(pci_exp_txn),
    .pci_exp_rxp(pci_exp_rxp),
    .pci_exp_rxn(pci_exp_rxn),
    .axi_aclk(axi_aclk),
    .axi_aresetn(axi_aresetn),
    .usr_irq_req(usr_irq_req),
    .usr_irq_ack(usr_irq_ack),
    .msi_enable(msi_enable),
    .msi_vector_width(msi_vector_width),
    .m_axi_awready(awready[0]),
    .m_axi_wready(wready[0]),
    .m_axi_bid(bid),
    .m_axi_bresp(bresp),
    .m_axi_bvalid(bvalid[0]),
    .m_axi_arready(arready[0]),
    .m_axi_rid(rid),
    .m_axi_rdata(rdata),
    .m_axi_rresp(rresp),
    .m_axi_rlast(rlast),
    .m_axi_rvalid(rvalid[0]),
    .m_axi_awid(m_axi_awid),
    .m_axi_awaddr(m_axi_awaddr),
    .m_axi_awlen(m_axi_awlen),
    .m_axi_awsize(m_axi_awsize),
    .m_axi_awburst(m_axi_awburst),
    .m_axi_awprot(m_axi_awprot),
    .m_axi_awvalid(m_axi_awvalid),
    .m_axi_awlock(m_axi_awlock),
    .m_axi_awcache(m_axi_awcache),
    .m_axi_wdata(m_axi_wdata),
    .m_axi_wstrb(m_axi_wstrb),
    .m_axi_wlast(m_axi_wlast),
    .m_axi_wvalid(m_axi_wvalid),
    .m_axi_bready(m_axi_bready),
    .m_axi_arid(m_axi_arid),
    .m_axi_araddr(m_axi_araddr),
    .m_axi_arlen(m_axi_arlen),
    .m_axi_arsize(m_axi_arsize),
    .m_axi_arburst(m_axi_arburst),
    .m_axi_arprot(m_axi_arprot),
    .m_axi_arvalid(m_axi_arvalid),
    .m_axi_arlock(m_axi_arlock),
    .m_axi_arcache(m_axi_arcache),
    .m_axi_rready(m_axi_rready),
    .m_axil_awaddr(m_axil_awaddr),
    .m_axil_awprot(m_axil_awprot),
    .m_axil_awvalid(m_axil_awvalid),
    .m_axil_awready(m_axil_awready),
    .m_axil_wdata(m_axil_wdata),
    .m_axil_wstrb(m_axil_wstrb),
    .m_axil_wvalid(m_axil_wvalid),
    .m_axil_wready(m_axil_wready),
    .m_axil_bvalid(m_axil_bvalid),
    .m_axil_bresp(m_axil_bresp),
    .m_axil_bready(m_axil_bready),
    .m_axil_araddr(m_axil_araddr),
    .m_axil_arprot(m_axil_arprot),
    .m_axil_arvalid(m_axil_arvalid),
    .m_axil_arready(m_axil_arready),
    .m_axil_rdata(m_axil_rdata),
    .m_axil_rresp(m_axil_rresp),
    .m_axil_rvalid(m_axil_rvalid),
    .m_axil_rready(m_axil_rready),
    .m_axib_awid(m_axib_awid),
    .m_axib_awaddr(m_axib_awaddr),
    .m_axib_awlen(m_axib_awlen),
    .m_axib_awsize(m_axib_awsize),
    .m_axib_awburst(m_axib_awburst),
    .m_axib_awprot(m_axib_awprot),
    .m_axib_awvalid(m_axib_awvalid),
    .m_axib_awready(awready[1]),
    .m_axib_awlock(m_axib_awlock),
    .m_axib_awcache(m_axib_awcache),
    .m_axib_wdata(m_axib_wdata),
    .m_axib_wstrb(m_axib_wstrb),
    .m_axib_wlast(m_axib_wlast),
    .m_axib_wvalid(m_axib_wvalid),
    .m_axib_wready(wready[1]),
    .m_axib_bid(bid),
    .m_axib_bresp(bresp),
    .m_axib_bvalid(bvalid[1]),
    .m_axib_bready(m_axib_bready),
    .m_axib_arid(m_axib_arid),
    .m_axib_araddr(m_axib_araddr),
    .m_axib_arlen(m_axib_arlen),
    .m_axib_arsize(m_axib_arsize),
    .m_axib_arburst(m_axib_arburst),
    .m_axib_arprot(m_axib_arprot),
    .m_axib_arvalid(m_axib_arvalid),
    .m_axib_arready(arready[1]),
    .m_axib_arlock(m_axib_arlock),
    .m_axib_arcache(m_axib_arcache),
    .m_axib_rid(rid),
    .m_axib_rdata(rdata),
    .m_axib_rresp(rresp),
    .m_axib_rlast(rlast),
    .m_axib_rvalid(rvalid[1]),
    .m_axib_rready(m_axib_rready),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awprot(3'd0),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(4'hF),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wready(s_axil_wready),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bready(1'b1),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(3'd0),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(1'b1),
    .h2c_sts_0(h2c_sts_0),
    .c2h_sts_0(c2h_sts_0)
);

/* the block RAM, shared by the DMA (master 0) and the bypass BAR (master 1) */
wire [3:0] ram_awid, ram_arid, ram_bid, ram_rid;
wire [63:0] ram_awaddr, ram_araddr, ram_wdata, ram_rdata;
wire [7:0] ram_awlen, ram_arlen, ram_wstrb;
wire [2:0] ram_awsize, ram_arsize;
wire [1:0] ram_awburst, ram_arburst, ram_bresp, ram_rresp;
wire ram_awvalid, ram_awready, ram_wlast, ram_wvalid, ram_wready, ram_bvalid, ram_bready;
wire ram_arvalid, ram_arready, ram_rlast, ram_rvalid, ram_rready;

mm_axi_arb #(
    .DATA_WIDTH(64),
    .ADDR_WIDTH(64),
    .ID_WIDTH(4)
) arb_inst (
    .clk(clk),
    .rst(rst),
    .s_axi_awid({m_axib_awid, m_axi_awid}),
    .s_axi_awaddr({m_axib_awaddr, m_axi_awaddr}),
    .s_axi_awlen({m_axib_awlen, m_axi_awlen}),
    .s_axi_awsize({m_axib_awsize, m_axi_awsize}),
    .s_axi_awburst({m_axib_awburst, m_axi_awburst}),
    .s_axi_awvalid({m_axib_awvalid, m_axi_awvalid}),
    .s_axi_awready(awready),
    .s_axi_wdata({m_axib_wdata, m_axi_wdata}),
    .s_axi_wstrb({m_axib_wstrb, m_axi_wstrb}),
    .s_axi_wlast({m_axib_wlast, m_axi_wlast}),
    .s_axi_wvalid({m_axib_wvalid, m_axi_wvalid}),
    .s_axi_wready(wready),
    .s_axi_bid(bid),
    .s_axi_bresp(bresp),
    .s_axi_bvalid(bvalid),
    .s_axi_bready({m_axib_bready, m_axi_bready}),
    .s_axi_arid({m_axib_arid, m_axi_arid}),
    .s_axi_araddr({m_axib_araddr, m_axi_araddr}),
    .s_axi_arlen({m_axib_arlen, m_axi_arlen}),
    .s_axi_arsize({m_axib_arsize, m_axi_arsize}),
    .s_axi_arburst({m_axib_arburst, m_axi_arburst}),
    .s_axi_arvalid({m_axib_arvalid, m_axi_arvalid}),
    .s_axi_arready(arready),
    .s_axi_rid(rid),
    .s_axi_rdata(rdata),
    .s_axi_rresp(rresp),
    .s_axi_rlast(rlast),
    .s_axi_rvalid(rvalid),
    .s_axi_rready({m_axib_rready, m_axi_rready}),
    .m_axi_awid(ram_awid),
    .m_axi_awaddr(ram_awaddr),
    .m_axi_awlen(ram_awlen),
    .m_axi_awsize(ram_awsize),
    .m_axi_awburst(ram_awburst),
    .m_axi_awvalid(ram_awvalid),
    .m_axi_awready(ram_awready),
    .m_axi_wdata(ram_wdata),
    .m_axi_wstrb(ram_wstrb),
    .m_axi_wlast(ram_wlast),
    .m_axi_wvalid(ram_wvalid),
    .m_axi_wready(ram_wready),
    .m_axi_bid(ram_bid),
    .m_axi_bresp(ram_bresp),
    .m_axi_bvalid(ram_bvalid),
    .m_axi_bready(ram_bready),
    .m_axi_arid(ram_arid),
    .m_axi_araddr(ram_araddr),
    .m_axi_arlen(ram_arlen),
    .m_axi_arsize(ram_arsize),
    .m_axi_arburst(ram_arburst),
    .m_axi_arvalid(ram_arvalid),
    .m_axi_arready(ram_arready),
    .m_axi_rid(ram_rid),
    .m_axi_rdata(ram_rdata),
    .m_axi_rresp(ram_rresp),
    .m_axi_rlast(ram_rlast),
    .m_axi_rvalid(ram_rvalid),
    .m_axi_rready(ram_rready)
);

pevb_axi_ram #(
    .DATA_WIDTH(64),
    .ADDR_WIDTH(64),
    .ID_WIDTH(4),
    .SIZE(65536)
) ram_inst (
    .clk(clk),
    .rst(rst),
    .s_axi_awid(ram_awid),
    .s_axi_awaddr(ram_awaddr),
    .s_axi_awlen(ram_awlen),
    .s_axi_awsize(ram_awsize),
    .s_axi_awburst(ram_awburst),
    .s_axi_awlock(1'b0),
    .s_axi_awcache(4'd0),
    .s_axi_awprot(3'd0),
    .s_axi_awvalid(ram_awvalid),
    .s_axi_awready(ram_awready),
    .s_axi_wdata(ram_wdata),
    .s_axi_wstrb(ram_wstrb),
    .s_axi_wlast(ram_wlast),
    .s_axi_wvalid(ram_wvalid),
    .s_axi_wready(ram_wready),
    .s_axi_bid(ram_bid),
    .s_axi_bresp(ram_bresp),
    .s_axi_bvalid(ram_bvalid),
    .s_axi_bready(ram_bready),
    .s_axi_arid(ram_arid),
    .s_axi_araddr(ram_araddr),
    .s_axi_arlen(ram_arlen),
    .s_axi_arsize(ram_arsize),
    .s_axi_arburst(ram_arburst),
    .s_axi_arlock(1'b0),
    .s_axi_arcache(4'd0),
    .s_axi_arprot(3'd0),
    .s_axi_arvalid(ram_arvalid),
    .s_axi_arready(ram_arready),
    .s_axi_rid(ram_rid),
    .s_axi_rdata(ram_rdata),
    .s_axi_rresp(ram_rresp),
    .s_axi_rlast(ram_rlast),
    .s_axi_rvalid(ram_rvalid),
    .s_axi_rready(ram_rready)
);

/* the job sequencer: the C2H channel run through the IP's AXI4-Lite slave */
localparam [3:0]
    J_IDLE = 4'd0,
    J_DESC_LO = 4'd1,
    J_DESC_HI = 4'd2,
    J_DESC_ADJ = 4'd3,
    J_CLEAR = 4'd4,
    J_START = 4'd5,
    J_POLL = 4'd6,
    J_COUNT = 4'd7,
    J_STOP = 4'd8,
    J_DONE = 4'd9;

reg [3:0] job_state_reg;
reg job_issued_reg;   // this step's access has been sent, its response awaited
reg [2:0] job_slot_reg;
reg [63:0] desc_mem [0:SLOTS-1];
reg [31:0] jobs_done_reg, last_status_reg, last_count_reg;
reg irq_reg;
reg doorbell_reg;
reg [2:0] doorbell_slot_reg;

wire [63:0] job_desc = desc_mem[job_slot_reg];
wire job_write = job_state_reg != J_POLL && job_state_reg != J_COUNT;
// a status with the channel idle, having stopped (descriptor_stopped) or failed
wire job_finished = !s_axil_rdata[0] && (s_axil_rdata[1] || |s_axil_rdata[31:3]);

reg [31:0] step_addr, step_data;
always @* begin
    step_data = 32'd0;
    case (job_state_reg)
        J_DESC_LO: begin step_addr = C2H_DESC_LO; step_data = job_desc[31:0]; end
        J_DESC_HI: begin step_addr = C2H_DESC_HI; step_data = job_desc[63:32]; end
        J_DESC_ADJ: step_addr = C2H_DESC_ADJ;
        J_CLEAR: begin step_addr = C2H_STATUS; step_data = 32'hFFFF_FFFF; end
        J_START: begin step_addr = C2H_CONTROL; step_data = START; end
        J_POLL: step_addr = C2H_STATUS;
        J_COUNT: step_addr = C2H_COMPLETED;
        J_STOP: step_addr = C2H_CONTROL;  // Run cleared
        default: step_addr = 32'd0;
    endcase
end

assign usr_irq_req = irq_reg;

always @(posedge clk) begin
    if (s_axil_awvalid && s_axil_awready) s_axil_awvalid <= 1'b0;
    if (s_axil_wvalid && s_axil_wready) s_axil_wvalid <= 1'b0;
    if (s_axil_arvalid && s_axil_arready) s_axil_arvalid <= 1'b0;

    case (job_state_reg)
        J_IDLE: begin
            if (doorbell_reg) begin
                job_slot_reg <= doorbell_slot_reg;
                job_state_reg <= J_DESC_LO;
            end
        end
        J_DONE: begin
            jobs_done_reg <= jobs_done_reg + 32'd1;
            irq_reg <= 1'b1;
            job_state_reg <= J_IDLE;
        end
        default: begin
            if (!job_issued_reg) begin
                // send this step's access
                job_issued_reg <= 1'b1;
                if (job_write) begin
                    s_axil_awvalid <= 1'b1;
                    s_axil_wvalid <= 1'b1;
                    s_axil_awaddr <= step_addr;
                    s_axil_wdata <= step_data;
                end else begin
                    s_axil_arvalid <= 1'b1;
                    s_axil_araddr <= step_addr;
                end
            end else if (job_write ? s_axil_bvalid : s_axil_rvalid) begin
                // its response: on to the next step (the poll repeats until finished)
                job_issued_reg <= 1'b0;
                if (job_state_reg == J_POLL) begin
                    if (job_finished) begin
                        last_status_reg <= s_axil_rdata;
                        job_state_reg <= J_COUNT;
                    end
                end else begin
                    if (job_state_reg == J_COUNT) begin
                        last_count_reg <= s_axil_rdata;
                    end
                    job_state_reg <= job_state_reg + 4'd1;
                end
            end
        end
    endcase
    if (usr_irq_ack[0]) begin
        irq_reg <= 1'b0;
    end
    if (rst) begin
        job_state_reg <= J_IDLE;
        job_issued_reg <= 1'b0;
        jobs_done_reg <= 32'd0;
        irq_reg <= 1'b0;
        s_axil_awvalid <= 1'b0;
        s_axil_wvalid <= 1'b0;
        s_axil_arvalid <= 1'b0;
    end
end

/* user registers */
reg aw_seen_reg, w_seen_reg, bl_valid_reg, rl_valid_reg;
reg [7:2] aw_addr_reg;
reg [31:0] w_data_reg, rl_data_reg;

assign m_axil_awready = !aw_seen_reg && !bl_valid_reg;
assign m_axil_wready = !w_seen_reg && !bl_valid_reg;
assign m_axil_bvalid = bl_valid_reg;
assign m_axil_bresp = 2'b00;
assign m_axil_arready = !rl_valid_reg;
assign m_axil_rvalid = rl_valid_reg;
assign m_axil_rdata = rl_data_reg;
assign m_axil_rresp = 2'b00;

wire [2:0] aw_slot = aw_addr_reg[5:3];
wire [2:0] ar_slot = m_axil_araddr[5:3];

always @(posedge clk) begin
    doorbell_reg <= 1'b0;
    if (m_axil_awvalid && m_axil_awready) begin
        aw_seen_reg <= 1'b1;
        aw_addr_reg <= m_axil_awaddr[7:2];
    end
    if (m_axil_wvalid && m_axil_wready) begin
        w_seen_reg <= 1'b1;
        w_data_reg <= m_axil_wdata;
    end
    if (aw_seen_reg && w_seen_reg) begin
        if (aw_addr_reg[7]) begin
            if (aw_addr_reg[2]) begin
                desc_mem[aw_slot][63:32] <= w_data_reg;
            end else begin
                desc_mem[aw_slot][31:0] <= w_data_reg;
            end
        end else if (aw_addr_reg[6:2] == 5'd0 && job_state_reg == J_IDLE) begin
            doorbell_reg <= 1'b1;
            doorbell_slot_reg <= w_data_reg[2:0];
        end
        aw_seen_reg <= 1'b0;
        w_seen_reg <= 1'b0;
        bl_valid_reg <= 1'b1;
    end
    if (m_axil_bvalid && m_axil_bready) begin
        bl_valid_reg <= 1'b0;
    end
    if (m_axil_arvalid && m_axil_arready) begin
        if (m_axil_araddr[7]) begin
            rl_data_reg <= m_axil_araddr[2] ? desc_mem[ar_slot][63:32] : desc_mem[ar_slot][31:0];
        end else begin
            case (m_axil_araddr[6:2])
                5'h1: rl_data_reg <= jobs_done_reg;
                5'h2: rl_data_reg <= last_status_reg;
                5'h3: rl_data_reg <= last_count_reg;
                5'h4: rl_data_reg <= {31'd0, job_state_reg != J_IDLE};
                default: rl_data_reg <= 32'd0;
            endcase
        end
        rl_valid_reg <= 1'b1;
    end else if (m_axil_rvalid && m_axil_rready) begin
        rl_valid_reg <= 1'b0;
    end
    if (rst) begin
        doorbell_reg <= 1'b0;
        aw_seen_reg <= 1'b0;
        w_seen_reg <= 1'b0;
        bl_valid_reg <= 1'b0;
        rl_valid_reg <= 1'b0;
    end
end

// what the design does not use: the status ports, MSI state, the AXI sideband the
// block RAM ignores, AXI-Lite protection and strobes, the upper address bits
wire unused = ^{h2c_sts_0, c2h_sts_0, msi_enable, msi_vector_width, m_axi_awprot,
                m_axi_arprot, m_axi_awcache, m_axi_arcache, m_axi_awlock, m_axi_arlock,
                m_axib_awprot, m_axib_arprot, m_axib_awcache, m_axib_arcache, m_axib_awlock,
                m_axib_arlock, m_axil_awprot, m_axil_arprot, m_axil_wstrb,
                m_axil_awaddr[31:8], m_axil_awaddr[1:0], m_axil_araddr[31:8],
                m_axil_araddr[1:0], s_axil_bresp, s_axil_rresp, s_axil_rdata[2]};

endmodule

`resetall
