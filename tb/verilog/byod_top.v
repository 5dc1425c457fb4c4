// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * A user's own design written against the Vivado XDMA IP ("bring your own
 * design", tb/tests/cocotb_byod.py): the IP instance connected as Vivado's
 * instantiation template connects it, and user logic behind it.  Compiled with
 * the drop-in (hdl/dropin) in place of the IP: no line here knows the
 * difference.
 *
 * User logic: on the AXI4 master, a 16 KiB memory that also sums every byte
 * written to it; on the AXI4-Lite master, registers: 0x00 scratch, 0x04 the
 * byte sum, 0x08 doorbell (bit 0 drives usr_irq_req[0], a write sets it),
 * 0x0C the number of usr_irq_ack pulses seen.  Everything on axi_aclk.
 */
module byod_top
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

localparam MEM_WORDS = 2048;  // 64-bit words: 16 KiB

wire axi_aclk, axi_aresetn;
wire rst = !axi_aresetn;
wire [0:0] usr_irq_req, usr_irq_ack;
wire msi_enable;
wire [2:0] msi_vector_width;

wire [3:0] m_axi_awid, m_axi_bid, m_axi_arid, m_axi_rid;
wire [63:0] m_axi_awaddr, m_axi_araddr;
wire [7:0] m_axi_awlen, m_axi_arlen;
wire [2:0] m_axi_awsize, m_axi_arsize, m_axi_awprot, m_axi_arprot;
wire [1:0] m_axi_awburst, m_axi_arburst, m_axi_bresp, m_axi_rresp;
wire m_axi_awlock, m_axi_arlock;
wire [3:0] m_axi_awcache, m_axi_arcache;
wire m_axi_awvalid, m_axi_awready, m_axi_wlast, m_axi_wvalid, m_axi_wready;
wire m_axi_bvalid, m_axi_bready, m_axi_arvalid, m_axi_arready;
wire m_axi_rlast, m_axi_rvalid, m_axi_rready;
wire [63:0] m_axi_wdata, m_axi_rdata;
wire [7:0] m_axi_wstrb;

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
    .m_axi_awready(m_axi_awready),
    .m_axi_wready(m_axi_wready),
    .m_axi_bid(m_axi_bid),
    .m_axi_bresp(m_axi_bresp),
    .m_axi_bvalid(m_axi_bvalid),
    .m_axi_arready(m_axi_arready),
    .m_axi_rid(m_axi_rid),
    .m_axi_rdata(m_axi_rdata),
    .m_axi_rresp(m_axi_rresp),
    .m_axi_rlast(m_axi_rlast),
    .m_axi_rvalid(m_axi_rvalid),
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
    .m_axil_rready(m_axil_rready)
);

/* AXI4 slave: one burst at a time each way, a beat per cycle */
reg [63:0] mem [0:MEM_WORDS-1];
reg [31:0] byte_sum_reg;

// the memory's initial contents, as a block RAM's INIT gives them
integer k;
initial begin
    for (k = 0; k < MEM_WORDS; k = k + 1) begin
        mem[k] = 64'd0;
    end
end

reg wr_active_reg, b_valid_reg;
reg [3:0] wr_id_reg;
reg [10:0] wr_word_reg;
reg rd_active_reg;
reg [3:0] rd_id_reg;
reg [10:0] rd_word_reg;
reg [7:0] rd_left_reg;
reg r_valid_reg;
reg [63:0] r_data_reg;

assign m_axi_awready = !wr_active_reg && !b_valid_reg;
assign m_axi_wready = wr_active_reg;
assign m_axi_bvalid = b_valid_reg;
assign m_axi_bid = wr_id_reg;
assign m_axi_bresp = 2'b00;
assign m_axi_arready = !rd_active_reg;
assign m_axi_rvalid = r_valid_reg;
assign m_axi_rdata = r_data_reg;
assign m_axi_rid = rd_id_reg;
assign m_axi_rresp = 2'b00;
assign m_axi_rlast = r_valid_reg && rd_left_reg == 8'd0;

// the bytes of a write beat its strobes enable, summed
function [31:0] strobed_sum;
    input [63:0] data;
    input [7:0] strb;
    integer i;
    begin
        strobed_sum = 32'd0;
        for (i = 0; i < 8; i = i + 1) begin
            if (strb[i]) begin
                strobed_sum = strobed_sum + {24'd0, data[i*8 +: 8]};
            end
        end
    end
endfunction

integer b;
always @(posedge axi_aclk) begin
    if (m_axi_awvalid && m_axi_awready) begin
        wr_active_reg <= 1'b1;
        wr_id_reg <= m_axi_awid;
        wr_word_reg <= m_axi_awaddr[13:3];
    end
    if (m_axi_wvalid && m_axi_wready) begin
        for (b = 0; b < 8; b = b + 1) begin
            if (m_axi_wstrb[b]) begin
                mem[wr_word_reg][b*8 +: 8] <= m_axi_wdata[b*8 +: 8];
            end
        end
        byte_sum_reg <= byte_sum_reg + strobed_sum(m_axi_wdata, m_axi_wstrb);
        wr_word_reg <= wr_word_reg + 11'd1;
        if (m_axi_wlast) begin
            wr_active_reg <= 1'b0;
            b_valid_reg <= 1'b1;
        end
    end
    if (m_axi_bvalid && m_axi_bready) begin
        b_valid_reg <= 1'b0;
    end

    if (m_axi_arvalid && m_axi_arready) begin
        rd_active_reg <= 1'b1;
        rd_id_reg <= m_axi_arid;
        rd_word_reg <= m_axi_araddr[13:3];
        rd_left_reg <= m_axi_arlen;
        r_valid_reg <= 1'b0;
    end else if (rd_active_reg && (!r_valid_reg || m_axi_rready)) begin
        if (r_valid_reg && rd_left_reg == 8'd0) begin
            rd_active_reg <= 1'b0;
            r_valid_reg <= 1'b0;
        end else begin
            if (r_valid_reg) begin
                rd_left_reg <= rd_left_reg - 8'd1;
            end
            r_data_reg <= mem[rd_word_reg];
            rd_word_reg <= rd_word_reg + 11'd1;
            r_valid_reg <= 1'b1;
        end
    end

    if (rst) begin
        wr_active_reg <= 1'b0;
        b_valid_reg <= 1'b0;
        rd_active_reg <= 1'b0;
        r_valid_reg <= 1'b0;
        byte_sum_reg <= 32'd0;
    end
end

/* AXI4-Lite registers */
reg [31:0] scratch_reg;
reg doorbell_reg;
reg [31:0] acks_reg;
reg aw_seen_reg, w_seen_reg, bl_valid_reg, rl_valid_reg;
reg [1:0] aw_addr_reg;
reg [31:0] w_data_reg, rl_data_reg;

assign m_axil_awready = !aw_seen_reg && !bl_valid_reg;
assign m_axil_wready = !w_seen_reg && !bl_valid_reg;
assign m_axil_bvalid = bl_valid_reg;
assign m_axil_bresp = 2'b00;
assign m_axil_arready = !rl_valid_reg;
assign m_axil_rvalid = rl_valid_reg;
assign m_axil_rdata = rl_data_reg;
assign m_axil_rresp = 2'b00;
assign usr_irq_req = doorbell_reg;

always @(posedge axi_aclk) begin
    if (m_axil_awvalid && m_axil_awready) begin
        aw_seen_reg <= 1'b1;
        aw_addr_reg <= m_axil_awaddr[3:2];
    end
    if (m_axil_wvalid && m_axil_wready) begin
        w_seen_reg <= 1'b1;
        w_data_reg <= m_axil_wdata;
    end
    if (aw_seen_reg && w_seen_reg) begin
        case (aw_addr_reg)
            2'd0: scratch_reg <= w_data_reg;
            2'd2: doorbell_reg <= w_data_reg[0];
            default: ;
        endcase
        aw_seen_reg <= 1'b0;
        w_seen_reg <= 1'b0;
        bl_valid_reg <= 1'b1;
    end
    if (m_axil_bvalid && m_axil_bready) begin
        bl_valid_reg <= 1'b0;
    end
    if (m_axil_arvalid && m_axil_arready) begin
        case (m_axil_araddr[3:2])
            2'd0: rl_data_reg <= scratch_reg;
            2'd1: rl_data_reg <= byte_sum_reg;
            2'd2: rl_data_reg <= {31'd0, doorbell_reg};
            default: rl_data_reg <= acks_reg;
        endcase
        rl_valid_reg <= 1'b1;
    end else if (m_axil_rvalid && m_axil_rready) begin
        rl_valid_reg <= 1'b0;
    end
    if (usr_irq_ack[0]) begin
        acks_reg <= acks_reg + 32'd1;
    end
    if (rst) begin
        scratch_reg <= 32'd0;
        doorbell_reg <= 1'b0;
        acks_reg <= 32'd0;
        aw_seen_reg <= 1'b0;
        w_seen_reg <= 1'b0;
        bl_valid_reg <= 1'b0;
        rl_valid_reg <= 1'b0;
    end
end

// the user's design uses neither burst type nor size (the IP sends INCR, full width)
wire unused = ^{m_axi_awlen, m_axi_awsize, m_axi_awburst, m_axi_awprot, m_axi_awlock,
                m_axi_awcache, m_axi_awaddr[63:14], m_axi_awaddr[2:0], m_axi_arsize,
                m_axi_arburst, m_axi_arprot, m_axi_arlock, m_axi_arcache,
                m_axi_araddr[63:14], m_axi_araddr[2:0], m_axil_awprot, m_axil_arprot,
                m_axil_wstrb, m_axil_awaddr[31:4], m_axil_awaddr[1:0],
                m_axil_araddr[31:4], m_axil_araddr[1:0], msi_enable, msi_vector_width};

endmodule

`resetall
