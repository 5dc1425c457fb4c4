// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * A frame grabber written against the Vivado XDMA IP in AXI-Stream mode with
 * descriptor bypass for write on channel 0 (dsc_bypass_wr = "0001"), as a user
 * would write it for GPUDirect RDMA (tb/tests/cocotb_grabber.py): the host
 * pins a CUDA surface, hands the BAR1 bus addresses of its 64 KiB GPU pages to
 * the user registers once, and the design streams frames into a ring of slots
 * in the surface with no host work per frame.  The IP instance is connected as
 * Vivado's instantiation template connects it; the drop-in takes its place.
 *
 * Camera: while capturing, NFRAMES frames of FRAME_BYTES (a multiple of 8) on
 * s_axis_c2h_*_0, tlast on each frame's last beat; beat b of frame f carries
 * {SEED + f, 8 * b} (the frame number and the byte offset).
 * Descriptors: frame f goes to slot f % NSLOTS, at surface offset
 * (f % NSLOTS) * SLOT_BYTES, cut into descriptors of at most DESC_BYTES that
 * never cross a GPU page; surface offset p is at PAGE[(SURF_OFFSET + p) >> 16]
 * + ((SURF_OFFSET + p) & 0xFFFF).  Descriptor k's result (length, EOP) goes to
 * RESULT + 8 * (k % 256); the last descriptor of each frame has Completed.
 * Frames done: the status port's packet-done pulses.  When NFRAMES are done,
 * usr_irq_req[0] rises until usr_irq_ack[0].  The design runs the channel
 * itself through the IP's AXI4-Lite slave (xdma_axilite_slave): a capture
 * sets the C2H channel 0 control register's Run bit and clears it when the
 * last frame is done.
 *
 * User registers (AXI4-Lite, user BAR): 0x00 control (bit 0: capture; a rising
 * edge starts a capture), 0x04 FRAME_BYTES, 0x08 NFRAMES, 0x0C SLOT_BYTES,
 * 0x10 NSLOTS, 0x14/0x18 RESULT low/high, 0x1C DESC_BYTES, 0x20 frames done
 * (read only), 0x24 descriptors loaded (read only), 0x28 SEED, 0x2C
 * SURF_OFFSET, 0x80 + 8 * i / + 4: PAGE[i] low/high, i < 16.
 */
module grabber_top
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

localparam PAGES = 16;
// the C2H channel 0 control register (PG195) and its Run bit
localparam [31:0] CHANNEL_CONTROL = 32'h0000_1004;
localparam [31:0] RUN = 32'h0000_0001;

wire axi_aclk, axi_aresetn;
wire clk = axi_aclk;
wire rst = !axi_aresetn;
wire [0:0] usr_irq_req, usr_irq_ack;
wire msi_enable;
wire [2:0] msi_vector_width;

wire [63:0] m_axis_h2c_tdata_0;
wire [7:0] m_axis_h2c_tkeep_0;
wire m_axis_h2c_tlast_0, m_axis_h2c_tvalid_0;
wire [63:0] s_axis_c2h_tdata_0;
wire [7:0] s_axis_c2h_tkeep_0;
wire s_axis_c2h_tlast_0, s_axis_c2h_tvalid_0, s_axis_c2h_tready_0;
wire [7:0] h2c_sts_0, c2h_sts_0;

wire c2h_dsc_byp_ready_0;
reg c2h_dsc_byp_load_0;
reg [63:0] c2h_dsc_byp_src_addr_0, c2h_dsc_byp_dst_addr_0;
reg [27:0] c2h_dsc_byp_len_0;
reg [15:0] c2h_dsc_byp_ctl_0;

wire [31:0] s_axil_rdata;
wire [1:0] s_axil_bresp, s_axil_rresp;
wire s_axil_awready, s_axil_wready, s_axil_bvalid, s_axil_arready, s_axil_rvalid;
reg s_axil_awvalid, s_axil_wvalid;
reg [31:0] s_axil_wdata;

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
    .s_axis_c2h_tdata_0(s_axis_c2h_tdata_0),
    .s_axis_c2h_tlast_0(s_axis_c2h_tlast_0),
    .s_axis_c2h_tvalid_0(s_axis_c2h_tvalid_0),
    .s_axis_c2h_tready_0(s_axis_c2h_tready_0),
    .s_axis_c2h_tkeep_0(s_axis_c2h_tkeep_0),
    .m_axis_h2c_tdata_0(m_axis_h2c_tdata_0),
    .m_axis_h2c_tlast_0(m_axis_h2c_tlast_0),
    .m_axis_h2c_tvalid_0(m_axis_h2c_tvalid_0),
    .m_axis_h2c_tready_0(1'b1),
    .m_axis_h2c_tkeep_0(m_axis_h2c_tkeep_0),
    .c2h_dsc_byp_ready_0(c2h_dsc_byp_ready_0),
    .c2h_dsc_byp_src_addr_0(c2h_dsc_byp_src_addr_0),
    .c2h_dsc_byp_dst_addr_0(c2h_dsc_byp_dst_addr_0),
    .c2h_dsc_byp_len_0(c2h_dsc_byp_len_0),
    .c2h_dsc_byp_ctl_0(c2h_dsc_byp_ctl_0),
    .c2h_dsc_byp_load_0(c2h_dsc_byp_load_0),
    .h2c_sts_0(h2c_sts_0),
    .c2h_sts_0(c2h_sts_0),
    .s_axil_awaddr(CHANNEL_CONTROL),
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
    .s_axil_araddr(32'd0),
    .s_axil_arprot(3'd0),
    .s_axil_arvalid(1'b0),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(1'b1),
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

/* user registers */
reg capture_reg, capture_d_reg;
reg [31:0] frame_bytes_reg, nframes_reg, slot_bytes_reg, nslots_reg, desc_bytes_reg;
reg [31:0] seed_reg, surf_offset_reg;
reg [63:0] result_reg;
reg [63:0] page_mem [0:PAGES-1];
reg [31:0] frames_done_reg, loaded_reg;
reg irq_reg;

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
assign usr_irq_req = irq_reg;

wire [3:0] aw_page = aw_addr_reg[6:3];
wire [3:0] ar_page = m_axil_araddr[6:3];
wire start = capture_reg && !capture_d_reg;
// the status port's packet-done pulse: a frame has been written
wire frame_done = c2h_sts_0[4];

always @(posedge clk) begin
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
                page_mem[aw_page][63:32] <= w_data_reg;
            end else begin
                page_mem[aw_page][31:0] <= w_data_reg;
            end
        end else if (!aw_addr_reg[6]) begin
            case (aw_addr_reg[5:2])
                4'h0: capture_reg <= w_data_reg[0];
                4'h1: frame_bytes_reg <= w_data_reg;
                4'h2: nframes_reg <= w_data_reg;
                4'h3: slot_bytes_reg <= w_data_reg;
                4'h4: nslots_reg <= w_data_reg;
                4'h5: result_reg[31:0] <= w_data_reg;
                4'h6: result_reg[63:32] <= w_data_reg;
                4'h7: desc_bytes_reg <= w_data_reg;
                4'hA: seed_reg <= w_data_reg;
                4'hB: surf_offset_reg <= w_data_reg;
                default: ;
            endcase
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
            rl_data_reg <= m_axil_araddr[2] ? page_mem[ar_page][63:32] : page_mem[ar_page][31:0];
        end else if (!m_axil_araddr[6]) begin
            case (m_axil_araddr[5:2])
                4'h0: rl_data_reg <= {31'd0, capture_reg};
                4'h1: rl_data_reg <= frame_bytes_reg;
                4'h2: rl_data_reg <= nframes_reg;
                4'h3: rl_data_reg <= slot_bytes_reg;
                4'h4: rl_data_reg <= nslots_reg;
                4'h5: rl_data_reg <= result_reg[31:0];
                4'h6: rl_data_reg <= result_reg[63:32];
                4'h7: rl_data_reg <= desc_bytes_reg;
                4'h8: rl_data_reg <= frames_done_reg;
                4'h9: rl_data_reg <= loaded_reg;
                4'hA: rl_data_reg <= seed_reg;
                4'hB: rl_data_reg <= surf_offset_reg;
                default: rl_data_reg <= 32'd0;
            endcase
        end else begin
            rl_data_reg <= 32'd0;
        end
        rl_valid_reg <= 1'b1;
    end else if (m_axil_rvalid && m_axil_rready) begin
        rl_valid_reg <= 1'b0;
    end

    capture_d_reg <= capture_reg;
    if (start) begin
        frames_done_reg <= 32'd0;
    end else if (frame_done) begin
        frames_done_reg <= frames_done_reg + 32'd1;
        if (frames_done_reg + 32'd1 == nframes_reg) begin
            irq_reg <= 1'b1;
        end
    end
    if (usr_irq_ack[0]) begin
        irq_reg <= 1'b0;
    end

    if (rst) begin
        capture_reg <= 1'b0;
        capture_d_reg <= 1'b0;
        frames_done_reg <= 32'd0;
        irq_reg <= 1'b0;
        aw_seen_reg <= 1'b0;
        w_seen_reg <= 1'b0;
        bl_valid_reg <= 1'b0;
        rl_valid_reg <= 1'b0;
    end
end

/* the channel's Run bit, written through the AXI4-Lite slave: set when a capture starts,
   cleared when its last frame is done */
wire last_frame_done = frame_done && frames_done_reg + 32'd1 == nframes_reg;

always @(posedge clk) begin
    if (s_axil_awvalid && s_axil_awready) begin
        s_axil_awvalid <= 1'b0;
    end
    if (s_axil_wvalid && s_axil_wready) begin
        s_axil_wvalid <= 1'b0;
    end
    if (start || last_frame_done) begin
        s_axil_awvalid <= 1'b1;
        s_axil_wvalid <= 1'b1;
        s_axil_wdata <= start ? RUN : 32'd0;
    end
    if (rst) begin
        s_axil_awvalid <= 1'b0;
        s_axil_wvalid <= 1'b0;
    end
end

/* camera: NFRAMES frames of FRAME_BYTES, a beat a clock when the channel takes it */
reg cam_active_reg;
reg [31:0] cam_frame_reg, cam_pos_reg;
wire cam_last = cam_pos_reg + 32'd8 >= frame_bytes_reg;
assign s_axis_c2h_tvalid_0 = cam_active_reg;
assign s_axis_c2h_tdata_0 = {seed_reg + cam_frame_reg, cam_pos_reg};
assign s_axis_c2h_tkeep_0 = 8'hFF;
assign s_axis_c2h_tlast_0 = cam_last;

always @(posedge clk) begin
    if (start) begin
        cam_active_reg <= nframes_reg != 32'd0;
        cam_frame_reg <= 32'd0;
        cam_pos_reg <= 32'd0;
    end else if (s_axis_c2h_tvalid_0 && s_axis_c2h_tready_0) begin
        cam_pos_reg <= cam_pos_reg + 32'd8;
        if (cam_last) begin
            cam_pos_reg <= 32'd0;
            cam_frame_reg <= cam_frame_reg + 32'd1;
            if (cam_frame_reg + 32'd1 == nframes_reg) begin
                cam_active_reg <= 1'b0;
            end
        end
    end
    if (rst) begin
        cam_active_reg <= 1'b0;
    end
end

/* descriptor generator: a descriptor a clock while the channel's bypass port is ready */
reg gen_active_reg;
reg [31:0] gen_frame_reg, gen_pos_reg, gen_slot_reg, gen_slot_base_reg;
reg [7:0] gen_result_reg;
// where the next descriptor starts, and how long it may be
wire [31:0] gen_q = surf_offset_reg + gen_slot_base_reg + gen_pos_reg;
wire [31:0] gen_page_left = 32'h0001_0000 - {16'd0, gen_q[15:0]};
wire [31:0] gen_frame_left = frame_bytes_reg - gen_pos_reg;
wire [31:0] gen_len_a = gen_frame_left < desc_bytes_reg ? gen_frame_left : desc_bytes_reg;
wire [31:0] gen_len = gen_len_a < gen_page_left ? gen_len_a : gen_page_left;
wire gen_frame_end = gen_len == gen_frame_left;
wire gen_load = gen_active_reg && c2h_dsc_byp_ready_0;

always @(posedge clk) begin
    c2h_dsc_byp_load_0 <= 1'b0;
    if (start) begin
        gen_active_reg <= nframes_reg != 32'd0;
        gen_frame_reg <= 32'd0;
        gen_pos_reg <= 32'd0;
        gen_slot_reg <= 32'd0;
        gen_slot_base_reg <= 32'd0;
        gen_result_reg <= 8'd0;
        loaded_reg <= 32'd0;
    end else if (gen_load) begin
        c2h_dsc_byp_load_0 <= 1'b1;
        c2h_dsc_byp_src_addr_0 <= result_reg + {53'd0, gen_result_reg, 3'd0};
        c2h_dsc_byp_dst_addr_0 <= page_mem[gen_q[19:16]] + {48'd0, gen_q[15:0]};
        c2h_dsc_byp_len_0 <= gen_len[27:0];
        // Completed on the frame's last descriptor
        c2h_dsc_byp_ctl_0 <= {14'd0, gen_frame_end, 1'b0};
        gen_result_reg <= gen_result_reg + 8'd1;
        loaded_reg <= loaded_reg + 32'd1;
        gen_pos_reg <= gen_pos_reg + gen_len;
        if (gen_frame_end) begin
            gen_pos_reg <= 32'd0;
            gen_frame_reg <= gen_frame_reg + 32'd1;
            if (gen_slot_reg + 32'd1 == nslots_reg) begin
                gen_slot_reg <= 32'd0;
                gen_slot_base_reg <= 32'd0;
            end else begin
                gen_slot_reg <= gen_slot_reg + 32'd1;
                gen_slot_base_reg <= gen_slot_base_reg + slot_bytes_reg;
            end
            if (gen_frame_reg + 32'd1 == nframes_reg) begin
                gen_active_reg <= 1'b0;
            end
        end
    end
    if (rst) begin
        gen_active_reg <= 1'b0;
        c2h_dsc_byp_load_0 <= 1'b0;
        loaded_reg <= 32'd0;
    end
end

// what the design does not use: the H2C stream, the other status bits, the AXI-Lite
// protection and strobes, the upper address bits
wire unused = ^{m_axis_h2c_tdata_0, m_axis_h2c_tkeep_0, m_axis_h2c_tlast_0,
                m_axis_h2c_tvalid_0, h2c_sts_0, c2h_sts_0[7:5], c2h_sts_0[3:0],
                m_axil_awprot, m_axil_arprot, m_axil_wstrb, m_axil_awaddr[31:8],
                m_axil_awaddr[1:0], m_axil_araddr[31:8], m_axil_araddr[1:0], s_axil_bvalid,
                s_axil_bresp, s_axil_arready, s_axil_rdata, s_axil_rresp, s_axil_rvalid,
                gen_q[31:20], msi_enable, msi_vector_width};

endmodule
