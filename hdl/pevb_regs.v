// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Register file: BAR0 user space (LED register at offset 0, card RAM size at
 * offset 4) and the BAR1 DMA
 * register space following the XDMA (PG195) programming model for one H2C and
 * one C2H memory-mapped channel: channel, SGDMA, SGDMA common, IRQ and config
 * blocks.  Also owns the channel interrupt logic and the MSI sender on the
 * hard IP's cfg_interrupt_msi_* interface.  Channel index 0 is H2C0, 1 is C2H0.
 * Read data is combinational from the request address; side effects (W1S,
 * W1C, RW1C, clear-on-read) happen on the cycle reg_req_valid is high.
 */
module pevb_regs #
(
    // PCIe AXI stream data width, reported in the config block
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    // card RAM size in bytes, reported read-only at BAR0 offset 4
    parameter RAM_SIZE = 65536,
    // cycles to wait for cfg_interrupt_msi_sent/fail before giving up
    parameter MSI_TIMEOUT_CYCLES = 65536
)
(
    input  wire         clk,
    input  wire         rst,

    /* Register access from the completer */
    input  wire         reg_req_valid,
    input  wire         reg_req_we,
    input  wire [2:0]   reg_req_bar,
    input  wire [15:0]  reg_req_addr,
    input  wire [31:0]  reg_req_wdata,
    input  wire [3:0]   reg_req_be,
    output reg  [31:0]  reg_rd_data,

    /* Channel control (index 0: H2C0, 1: C2H0) */
    output wire [63:0]  ch_control,
    output wire [127:0] ch_desc_addr,
    output wire [11:0]  ch_desc_adj,
    output wire [127:0] ch_wb_addr,
    output wire [1:0]   ch_halt,

    /* Channel status */
    input  wire [47:0]  ch_event,
    input  wire [1:0]   ch_busy,
    input  wire [63:0]  ch_count,
    input  wire [1:0]   ch_bytes_valid,
    input  wire [55:0]  ch_bytes,

    /* Configuration status from the hard IP */
    input  wire [2:0]   cfg_max_payload,
    input  wire [2:0]   cfg_max_read_req,
    input  wire [7:0]   cfg_bus_number,

    /* MSI interface of the hard IP */
    input  wire [3:0]   cfg_interrupt_msi_enable,
    input  wire [11:0]  cfg_interrupt_msi_mmenable,
    output wire [31:0]  cfg_interrupt_msi_int,
    input  wire         cfg_interrupt_msi_sent,
    input  wire         cfg_interrupt_msi_fail,

    /* User outputs */
    output wire [2:0]   led
);

// target field of the DMA register address [15:12] (PG195)
localparam [3:0] TGT_H2C = 4'h0;
localparam [3:0] TGT_C2H = 4'h1;
localparam [3:0] TGT_IRQ = 4'h2;
localparam [3:0] TGT_CFG = 4'h3;
localparam [3:0] TGT_H2C_SGDMA = 4'h4;
localparam [3:0] TGT_C2H_SGDMA = 4'h5;
localparam [3:0] TGT_SGDMA_COMMON = 4'h6;

localparam [7:0] ID_VERSION = 8'h06;
localparam [31:0] RAM_SIZE_WORD = RAM_SIZE;

// writable/loggable bit masks
localparam [31:0] CTRL_MASK = 32'h0EFF_FE7F;
localparam [31:0] STATUS_MASK = 32'h00FF_FE7E;
localparam [31:0] ALIGNMENTS = 32'h0001_0140;  // 1 byte address/length granularity, 64 address bits
localparam [31:0] SYSTEM_ID = 32'h0000_FF01;

localparam [1:0] MSI_IDLE = 2'd0, MSI_WAIT = 2'd1;

// BAR0
reg [2:0] led_reg;

// per channel registers
reg [31:0] control_reg [0:1];
reg [31:0] status_reg [0:1];
reg [31:0] intmask_reg [0:1];
reg [63:0] wb_addr_reg [0:1];
reg [2:0] perf_ctrl_reg [0:1];
reg [63:0] perf_cyc_reg [0:1];
reg [63:0] perf_data_reg [0:1];
reg [63:0] desc_addr_reg [0:1];
reg [5:0] desc_adj_reg [0:1];
reg [9:0] credits_reg [0:1];
reg run_d_reg [0:1];

// SGDMA common
reg [31:0] halt_reg;
reg [31:0] credit_mode_reg;

// IRQ block
reg [15:0] user_int_en_reg;
reg [1:0] chan_int_en_reg;
reg [31:0] user_vec_reg [0:3];
reg [31:0] chan_vec_reg;

// config block
reg [31:0] pcie_ctrl_reg;
reg [4:0] wr_flush_timeout_reg;

// MSI sender
reg [1:0] msi_state_reg;
reg [1:0] msi_pending_reg;
reg [31:0] msi_int_reg;
reg [16:0] msi_timer_reg;

// Power-up value (FPGA register INIT): the hard IP samples cfg_interrupt_msi_int every
// cycle, including the cycles before the first reset edge.
initial msi_int_reg = 32'd0;

wire [31:0] wmask = {{8{reg_req_be[3]}}, {8{reg_req_be[2]}}, {8{reg_req_be[1]}}, {8{reg_req_be[0]}}};
wire [31:0] wbits = reg_req_wdata & wmask;

function [31:0] merge;
    input [31:0] old;
    input [31:0] new_data;
    input [31:0] mask;
    begin
        merge = (old & ~mask) | (new_data & mask);
    end
endfunction

wire bar1 = reg_req_bar == 3'd1;
wire [3:0] tgt = reg_req_addr[15:12];
wire [3:0] chn = reg_req_addr[11:8];
wire [7:0] ofs = {reg_req_addr[7:2], 2'b00};
wire wr = reg_req_valid && reg_req_we;
wire rd = reg_req_valid && !reg_req_we;

// channel index addressed by a channel/SGDMA access, or 2 for none
wire chan_tgt = tgt == TGT_H2C || tgt == TGT_C2H;
wire sgdma_tgt = tgt == TGT_H2C_SGDMA || tgt == TGT_C2H_SGDMA;
wire ch_sel = tgt[0];
wire ch_hit = bar1 && chn == 4'd0 && (chan_tgt || sgdma_tgt);

wire [2:0] mps_enc = cfg_max_payload;
wire [2:0] mrrs_enc = cfg_max_read_req;
wire [2:0] width_enc = AXIS_PCIE_DATA_WIDTH == 64 ? 3'd0 :
                       AXIS_PCIE_DATA_WIDTH == 128 ? 3'd1 :
                       AXIS_PCIE_DATA_WIDTH == 256 ? 3'd2 : 3'd3;

// interrupt sources (XDMA: logged status bits enabled in the interrupt mask)
wire [1:0] irq_src;
wire [1:0] irq_event;
genvar g;
generate
    for (g = 0; g < 2; g = g + 1) begin : irqs
        assign irq_src[g] = |(status_reg[g] & intmask_reg[g] & STATUS_MASK);
        assign irq_event[g] = |(ch_event[g*24 +: 24] & control_reg[g][23:0] & intmask_reg[g][23:0] & STATUS_MASK[23:0]);
        assign ch_control[g*32 +: 32] = control_reg[g];
        assign ch_desc_addr[g*64 +: 64] = desc_addr_reg[g];
        assign ch_desc_adj[g*6 +: 6] = desc_adj_reg[g];
        assign ch_wb_addr[g*64 +: 64] = wb_addr_reg[g];
    end
endgenerate

assign ch_halt = {halt_reg[16], halt_reg[0]};
assign led = led_reg;
assign cfg_interrupt_msi_int = msi_int_reg;

// read mux
always @* begin
    reg_rd_data = 32'd0;
    if (reg_req_bar == 3'd0) begin
        if (reg_req_addr[11:2] == 10'd0) begin
            reg_rd_data = {29'd0, led_reg};
        end else if (reg_req_addr[11:2] == 10'd1) begin
            reg_rd_data = RAM_SIZE_WORD;
        end
    end else if (bar1) begin
        if (ch_hit && chan_tgt) begin
            case (ofs)
                8'h00: reg_rd_data = {12'h1FC, tgt, 1'b0, 3'd0, chn, ID_VERSION};
                8'h04, 8'h08, 8'h0C: reg_rd_data = control_reg[ch_sel];
                8'h40, 8'h44: reg_rd_data = status_reg[ch_sel] | {31'd0, ch_busy[ch_sel]};
                8'h48: reg_rd_data = ch_count[ch_sel*32 +: 32];
                8'h4C: reg_rd_data = ALIGNMENTS;
                8'h88: reg_rd_data = wb_addr_reg[ch_sel][31:0];
                8'h8C: reg_rd_data = wb_addr_reg[ch_sel][63:32];
                8'h90, 8'h94, 8'h98: reg_rd_data = intmask_reg[ch_sel];
                8'hC0: reg_rd_data = {29'd0, perf_ctrl_reg[ch_sel]};
                8'hC4: reg_rd_data = perf_cyc_reg[ch_sel][31:0];
                8'hC8: reg_rd_data = perf_cyc_reg[ch_sel][63:32];
                8'hCC: reg_rd_data = perf_data_reg[ch_sel][31:0];
                8'hD0: reg_rd_data = perf_data_reg[ch_sel][63:32];
                default: reg_rd_data = 32'd0;
            endcase
        end else if (ch_hit && sgdma_tgt) begin
            case (ofs)
                8'h00: reg_rd_data = {12'h1FC, tgt, 1'b0, 3'd0, chn, ID_VERSION};
                8'h80: reg_rd_data = desc_addr_reg[ch_sel][31:0];
                8'h84: reg_rd_data = desc_addr_reg[ch_sel][63:32];
                8'h88: reg_rd_data = {26'd0, desc_adj_reg[ch_sel]};
                8'h8C: reg_rd_data = {22'd0, credits_reg[ch_sel]};
                default: reg_rd_data = 32'd0;
            endcase
        end else if (tgt == TGT_SGDMA_COMMON && chn == 4'd0) begin
            case (ofs)
                8'h00: reg_rd_data = {12'h1FC, tgt, 1'b0, 3'd0, chn, ID_VERSION};
                8'h10, 8'h14, 8'h18: reg_rd_data = halt_reg;
                8'h20, 8'h24, 8'h28: reg_rd_data = credit_mode_reg;
                default: reg_rd_data = 32'd0;
            endcase
        end else if (tgt == TGT_IRQ && chn == 4'd0) begin
            case (ofs)
                8'h00: reg_rd_data = {12'h1FC, tgt, 1'b0, 3'd0, chn, ID_VERSION};
                8'h04, 8'h08, 8'h0C: reg_rd_data = {16'd0, user_int_en_reg};
                8'h10, 8'h14, 8'h18: reg_rd_data = {30'd0, chan_int_en_reg};
                8'h40: reg_rd_data = 32'd0;
                8'h44: reg_rd_data = {30'd0, irq_src};
                8'h48: reg_rd_data = 32'd0;
                8'h4C: reg_rd_data = {30'd0, irq_src & chan_int_en_reg};
                8'h80: reg_rd_data = user_vec_reg[0];
                8'h84: reg_rd_data = user_vec_reg[1];
                8'h88: reg_rd_data = user_vec_reg[2];
                8'h8C: reg_rd_data = user_vec_reg[3];
                8'hA0: reg_rd_data = chan_vec_reg;
                default: reg_rd_data = 32'd0;
            endcase
        end else if (tgt == TGT_CFG && chn == 4'd0) begin
            case (ofs)
                8'h00: reg_rd_data = {12'h1FC, tgt, 1'b0, 3'd0, chn, ID_VERSION};
                8'h04: reg_rd_data = {16'd0, cfg_bus_number, 8'd0};
                8'h08: reg_rd_data = {29'd0, mps_enc};
                8'h0C: reg_rd_data = {29'd0, mrrs_enc};
                8'h10: reg_rd_data = SYSTEM_ID;
                8'h14: reg_rd_data = {31'd0, cfg_interrupt_msi_enable[0]};
                8'h18: reg_rd_data = {29'd0, width_enc};
                8'h1C: reg_rd_data = pcie_ctrl_reg;
                8'h40: reg_rd_data = {29'd0, mps_enc};
                8'h44: reg_rd_data = {29'd0, mrrs_enc};
                8'h60: reg_rd_data = {27'd0, wr_flush_timeout_reg};
                default: reg_rd_data = 32'd0;
            endcase
        end
    end
end

// per-channel register updates
integer c;
always @(posedge clk) begin
    for (c = 0; c < 2; c = c + 1) begin
        run_d_reg[c] <= control_reg[c][0];

        // status: log events enabled in control, clear on Run rising
        if (control_reg[c][0] && !run_d_reg[c]) begin
            status_reg[c] <= 32'd0;
        end else begin
            status_reg[c] <= status_reg[c] | ({8'd0, ch_event[c*24 +: 24]} & control_reg[c] & STATUS_MASK);
        end

        // performance counters
        if (perf_ctrl_reg[c][1]) begin
            perf_cyc_reg[c] <= 64'd0;
            perf_data_reg[c] <= 64'd0;
            perf_ctrl_reg[c][1] <= 1'b0;
        end else if (perf_ctrl_reg[c][2] && (!perf_ctrl_reg[c][0] || ch_busy[c])) begin
            perf_cyc_reg[c] <= perf_cyc_reg[c] + 64'd1;
            if (ch_bytes_valid[c]) begin
                perf_data_reg[c] <= perf_data_reg[c] + {36'd0, ch_bytes[c*28 +: 28]};
            end
        end
    end

    if (wr && reg_req_bar == 3'd0 && reg_req_addr[11:2] == 10'd0 && reg_req_be[0]) begin
        led_reg <= reg_req_wdata[2:0];
    end

    if (wr && ch_hit && chan_tgt) begin
        case (ofs)
            8'h04: control_reg[ch_sel] <= merge(control_reg[ch_sel], reg_req_wdata, wmask & CTRL_MASK);
            8'h08: control_reg[ch_sel] <= control_reg[ch_sel] | (wbits & CTRL_MASK);
            8'h0C: control_reg[ch_sel] <= control_reg[ch_sel] & ~(wbits & CTRL_MASK);
            8'h40: status_reg[ch_sel] <= status_reg[ch_sel] & ~(wbits & STATUS_MASK);
            8'h88: wb_addr_reg[ch_sel][31:0] <= merge(wb_addr_reg[ch_sel][31:0], reg_req_wdata, wmask);
            8'h8C: wb_addr_reg[ch_sel][63:32] <= merge(wb_addr_reg[ch_sel][63:32], reg_req_wdata, wmask);
            8'h90: intmask_reg[ch_sel] <= merge(intmask_reg[ch_sel], reg_req_wdata, wmask & STATUS_MASK);
            8'h94: intmask_reg[ch_sel] <= intmask_reg[ch_sel] | (wbits & STATUS_MASK);
            8'h98: intmask_reg[ch_sel] <= intmask_reg[ch_sel] & ~(wbits & STATUS_MASK);
            8'hC0: perf_ctrl_reg[ch_sel] <= (perf_ctrl_reg[ch_sel] & ~wmask[2:0]) | (reg_req_wdata[2:0] & wmask[2:0]);
            default: ;
        endcase
    end
    if (rd && ch_hit && chan_tgt && ofs == 8'h44) begin
        // clear-on-read status (events arriving this cycle are kept)
        status_reg[ch_sel] <= {8'd0, ch_event[ch_sel*24 +: 24]} & control_reg[ch_sel] & STATUS_MASK;
    end

    if (wr && ch_hit && sgdma_tgt) begin
        case (ofs)
            8'h80: desc_addr_reg[ch_sel][31:0] <= merge(desc_addr_reg[ch_sel][31:0], reg_req_wdata, wmask);
            8'h84: desc_addr_reg[ch_sel][63:32] <= merge(desc_addr_reg[ch_sel][63:32], reg_req_wdata, wmask);
            8'h88: desc_adj_reg[ch_sel] <= (desc_adj_reg[ch_sel] & ~wmask[5:0]) | (reg_req_wdata[5:0] & wmask[5:0]);
            8'h8C: credits_reg[ch_sel] <= (credits_reg[ch_sel] & ~wmask[9:0]) | (reg_req_wdata[9:0] & wmask[9:0]);
            default: ;
        endcase
    end

    if (wr && bar1 && tgt == TGT_SGDMA_COMMON && chn == 4'd0) begin
        case (ofs)
            8'h10: halt_reg <= merge(halt_reg, reg_req_wdata, wmask & 32'h000F_000F);
            8'h14: halt_reg <= halt_reg | (wbits & 32'h000F_000F);
            8'h18: halt_reg <= halt_reg & ~(wbits & 32'h000F_000F);
            8'h20: credit_mode_reg <= merge(credit_mode_reg, reg_req_wdata, wmask & 32'h000F_000F);
            8'h24: credit_mode_reg <= credit_mode_reg | (wbits & 32'h000F_000F);
            8'h28: credit_mode_reg <= credit_mode_reg & ~(wbits & 32'h000F_000F);
            default: ;
        endcase
    end

    if (wr && bar1 && tgt == TGT_IRQ && chn == 4'd0) begin
        case (ofs)
            8'h04: user_int_en_reg <= (user_int_en_reg & ~wmask[15:0]) | (reg_req_wdata[15:0] & wmask[15:0]);
            8'h08: user_int_en_reg <= user_int_en_reg | wbits[15:0];
            8'h0C: user_int_en_reg <= user_int_en_reg & ~wbits[15:0];
            8'h10: chan_int_en_reg <= (chan_int_en_reg & ~wmask[1:0]) | (reg_req_wdata[1:0] & wmask[1:0]);
            8'h14: chan_int_en_reg <= chan_int_en_reg | wbits[1:0];
            8'h18: chan_int_en_reg <= chan_int_en_reg & ~wbits[1:0];
            8'h80: user_vec_reg[0] <= merge(user_vec_reg[0], reg_req_wdata, wmask & 32'h1F1F1F1F);
            8'h84: user_vec_reg[1] <= merge(user_vec_reg[1], reg_req_wdata, wmask & 32'h1F1F1F1F);
            8'h88: user_vec_reg[2] <= merge(user_vec_reg[2], reg_req_wdata, wmask & 32'h1F1F1F1F);
            8'h8C: user_vec_reg[3] <= merge(user_vec_reg[3], reg_req_wdata, wmask & 32'h1F1F1F1F);
            8'hA0: chan_vec_reg <= merge(chan_vec_reg, reg_req_wdata, wmask & 32'h1F1F1F1F);
            default: ;
        endcase
    end

    if (wr && bar1 && tgt == TGT_CFG && chn == 4'd0) begin
        case (ofs)
            8'h1C: pcie_ctrl_reg <= merge(pcie_ctrl_reg, reg_req_wdata, wmask & 32'h1);
            8'h60: wr_flush_timeout_reg <= (wr_flush_timeout_reg & ~wmask[4:0]) | (reg_req_wdata[4:0] & wmask[4:0]);
            default: ;
        endcase
    end

    if (rst) begin
        led_reg <= 3'b111;
        for (c = 0; c < 2; c = c + 1) begin
            control_reg[c] <= 32'd0;
            status_reg[c] <= 32'd0;
            intmask_reg[c] <= 32'd0;
            wb_addr_reg[c] <= 64'd0;
            perf_ctrl_reg[c] <= 3'd0;
            perf_cyc_reg[c] <= 64'd0;
            perf_data_reg[c] <= 64'd0;
            desc_addr_reg[c] <= 64'd0;
            desc_adj_reg[c] <= 6'd0;
            credits_reg[c] <= 10'd0;
            run_d_reg[c] <= 1'b0;
            user_vec_reg[c] <= 32'd0;
            user_vec_reg[c+2] <= 32'd0;
        end
        halt_reg <= 32'd0;
        credit_mode_reg <= 32'd0;
        user_int_en_reg <= 16'd0;
        chan_int_en_reg <= 2'd0;
        chan_vec_reg <= 32'd0;
        pcie_ctrl_reg <= 32'd0;
        wr_flush_timeout_reg <= 5'd0;
    end
end

// MSI sender: one message per new enabled interrupt event (coalesced while
// one is pending for the same channel), and one when a channel's interrupt
// enable is set while its source is already active.
reg [1:0] chan_int_en_d_reg;
wire [1:0] msi_trigger = (irq_event & chan_int_en_reg) | (irq_src & chan_int_en_reg & ~chan_int_en_d_reg);
wire [2:0] msi_mme = cfg_interrupt_msi_mmenable[2:0];

// registers are DWORDs; only physical function 0 has MSI
wire unused_regs = ^{reg_req_addr[1:0], cfg_interrupt_msi_enable[3:1],
                     cfg_interrupt_msi_mmenable[11:3]};
wire [4:0] msi_vec_mask = msi_mme >= 3'd5 ? 5'h1F : ((5'd1 << msi_mme) - 5'd1);
wire msi_sel = !msi_pending_reg[0];
wire [4:0] msi_vec = (msi_sel ? chan_vec_reg[12:8] : chan_vec_reg[4:0]) & msi_vec_mask;

always @(posedge clk) begin
    chan_int_en_d_reg <= chan_int_en_reg;
    msi_int_reg <= 32'd0;

    case (msi_state_reg)
        MSI_IDLE: begin
            msi_pending_reg <= msi_pending_reg | msi_trigger;
            if (!cfg_interrupt_msi_enable[0]) begin
                // MSI disabled by the host: nothing can be sent, nothing is queued
                msi_pending_reg <= 2'd0;
            end else if (msi_pending_reg != 2'd0) begin
                msi_int_reg <= 32'd1 << msi_vec;
                msi_pending_reg <= (msi_pending_reg & ~(2'b01 << msi_sel)) | msi_trigger;
                msi_timer_reg <= 17'd0;
                msi_state_reg <= MSI_WAIT;
            end
        end
        MSI_WAIT: begin
            msi_pending_reg <= msi_pending_reg | msi_trigger;
            msi_timer_reg <= msi_timer_reg + 17'd1;
            if (cfg_interrupt_msi_sent || cfg_interrupt_msi_fail || msi_timer_reg == MSI_TIMEOUT_CYCLES[16:0]) begin
                msi_state_reg <= MSI_IDLE;
            end
        end
        default: msi_state_reg <= MSI_IDLE;
    endcase

    if (rst) begin
        chan_int_en_d_reg <= 2'd0;
        msi_state_reg <= MSI_IDLE;
        msi_pending_reg <= 2'd0;
        msi_int_reg <= 32'd0;
        msi_timer_reg <= 17'd0;
    end
end

endmodule

`resetall
