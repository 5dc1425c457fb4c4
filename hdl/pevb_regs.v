// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * Register file: the BAR1 DMA register space following the XDMA (PG195)
 * programming model for H2C_CHANNELS H2C and C2H_CHANNELS C2H channels:
 * channel, SGDMA, SGDMA common, IRQ and config blocks, and, when built with
 * MSIX, the MSI-X table and pending bits at 0x8000 (PG195; the table lives
 * here, as in XDMA).  Also owns the channel interrupt sources; the message
 * sender (pevb_irq_tx, inside) sends them and the user interrupts as MSI or
 * MSI-X on the hard IP's cfg_interrupt_msi(x)_* interfaces, or, with both off,
 * as the level of INTA on its cfg_interrupt_int interface.  The
 * channel buses hold 8 channels, index {direction, number}:
 * 0-3 H2C0-3, 4-7 C2H0-3; channels not built read as zero (identifiers too,
 * so a probe finds exactly the channels built).  Interrupt bits (channel
 * interrupt enable/request/pending, vector fields): H2C channels first, then
 * C2H.  Read data is combinational from the request address; side effects
 * (W1S, W1C, RW1C, clear-on-read) happen on the cycle reg_req_valid is high.
 */
module pevb_regs #
(
    // PCIe AXI stream data width, reported in the config block
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    // channels built in each direction (1 to 4)
    parameter H2C_CHANNELS = 1,
    parameter C2H_CHANNELS = 1,
    // stream channels (bit n: channel n), reported in the identifiers
    parameter H2C_STREAM = 0,
    parameter C2H_STREAM = 0,
    // user interrupt inputs (1 to 16)
    parameter USER_IRQS = 1,
    // build the MSI-X table and PBA (0 or 1)
    parameter MSIX = 0,
    // cycles to wait for cfg_interrupt_msi_sent/fail before giving up
    parameter MSI_TIMEOUT_CYCLES = 65536,
    // the DMA BAR's id (accesses with another BAR id are the user BAR's)
    parameter [2:0] BAR_DMA = `PEVB_BAR_DMA
)
(
    input  wire         clk,
    input  wire         rst,

    /* Register access from the completer */
    input  wire         reg_req_valid,
    input  wire         reg_req_we,
    input  wire [2:0]   reg_req_bar,
    input  wire [`PEVB_BAR_DMA_ADDR_WIDTH-1:0] reg_req_addr,
    input  wire [31:0]  reg_req_wdata,
    input  wire [3:0]   reg_req_be,
    output reg  [31:0]  reg_rd_data,

    /* Channel control (index {direction, number}: 0-3 H2C0-3, 4-7 C2H0-3) */
    output wire [8*32-1:0] ch_control,
    output wire [8*64-1:0] ch_desc_addr,
    output wire [8*6-1:0]  ch_desc_adj,
    output wire [8*64-1:0] ch_wb_addr,
    output wire [7:0]      ch_halt,
    // per channel {Run, interrupt pending, descriptor_stopped, descriptor_completed}
    // (XDMA's h2c_sts/c2h_sts bits 6, 5, 2, 1)
    output wire [8*4-1:0]  ch_sts,

    /* Channel status */
    input  wire [8*`PEVB_STAT_EVENT_WIDTH-1:0] ch_event,
    input  wire [7:0]      ch_busy,
    // a posted write taken by the requester, and one handed whole to the hard IP (the
    // interrupt sender keeps a channel's message behind them)
    input  wire            rq_wr_enter,
    input  wire            rq_wr_leave,
    input  wire [8*32-1:0] ch_count,
    // a data beat of the channel (its performance monitor counts them)
    input  wire [7:0]      ch_beat,

    /* Configuration status from the hard IP */
    input  wire [2:0]   cfg_max_payload,
    input  wire [2:0]   cfg_max_read_req,
    input  wire [7:0]   cfg_bus_number,

`include "pevb_hip_irq_ports.vh"

    /* User interrupts (XDMA's usr_irq_req/usr_irq_ack) */
    input  wire [USER_IRQS-1:0] usr_irq_req,
    output wire [USER_IRQS-1:0] usr_irq_ack
);

// register offsets, bits and masks come from pevb_regs.vh (generated from the Python
// register map, driver_model/regs.py)
localparam [31:0] CTRL_MASK = `PEVB_CTRL_WRITABLE;
localparam [31:0] STATUS_MASK = `PEVB_STAT_LOGGED_MASK;
localparam [2:0] PERF_CLEAR_BIT = 3'd1 << `PEVB_PERF_CLEAR;
localparam EVW = `PEVB_STAT_EVENT_WIDTH;

localparam NH = H2C_CHANNELS;
localparam NC = C2H_CHANNELS;
// channel interrupt bits: H2C channels, then C2H channels
localparam NIRQ = NH + NC;
localparam NU = USER_IRQS;

initial begin
    if (NH < 1 || NH > 4 || NC < 1 || NC > 4) begin
        $error("Error: H2C_CHANNELS and C2H_CHANNELS must be 1 to 4 (instance %m)");
        $finish;
    end
    if (USER_IRQS < 1 || USER_IRQS > 16) begin
        $error("Error: USER_IRQS must be 1 to 16 (instance %m)");
        $finish;
    end
    if (MSIX != 0 && MSIX != 1) begin
        $error("Error: MSIX must be 0 or 1 (instance %m)");
        $finish;
    end
end

// channel index {direction, number} -> built
localparam [3:0] H2C_BUILT = (1 << NH) - 1;
localparam [3:0] C2H_BUILT = (1 << NC) - 1;
localparam [7:0] BUILT = {C2H_BUILT, H2C_BUILT};

// per channel registers
reg [31:0] control_reg [0:7];
reg [31:0] status_reg [0:7];
reg [31:0] intmask_reg [0:7];
reg [63:0] wb_addr_reg [0:7];
reg [`PEVB_PERF_CTRL] perf_ctrl_reg [0:7];
// PG195's performance monitor: 42-bit cycle and data beat counters that stop at
// their maximum and flag it, each {maxed, count} (per channel, below; zero here but
// while the read mux addresses that channel's counters)
wire [8*43-1:0] perf_cyc;
wire [8*43-1:0] perf_data;
reg [63:0] desc_addr_reg [0:7];
reg [`PEVB_SG_DESC_ADJ_FIELD] desc_adj_reg [0:7];
reg [`PEVB_SG_CREDITS_FIELD] credits_reg [0:7];
reg run_d_reg [0:7];

// SGDMA common
reg [31:0] halt_reg;
reg [31:0] credit_mode_reg;

// IRQ block
reg [NU-1:0] user_int_en_reg;
reg [NIRQ-1:0] chan_int_en_reg;
reg [31:0] user_vec_reg [0:3];
reg [31:0] chan_vec_reg [0:1];

// config block
reg pcie_ro_reg;
reg [`PEVB_CFG_WR_FLUSH_TIMEOUT_FIELD] wr_flush_timeout_reg;

// MSI-X table (PG195: 32 entries, address and data 0 and every vector masked out of
// reset) and pending bits; written only when built with MSIX
localparam NV = `PEVB_MSIX_VECTORS;
reg [31:2] msix_addr_lo_mem [0:NV-1];
reg [31:0] msix_addr_hi_mem [0:NV-1];
reg [31:0] msix_data_mem [0:NV-1];
reg [NV-1:0] msix_masked_reg;
// pending bits (the message sender's)
wire [NV-1:0] msix_pba;

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

wire bar1 = reg_req_bar == BAR_DMA;
wire [3:0] tgt = reg_req_addr[`PEVB_ADDR_TARGET];
wire [3:0] chn = reg_req_addr[`PEVB_ADDR_CHANNEL];
wire [7:0] ofs = {reg_req_addr[7:2], 2'b00};
wire wr = reg_req_valid && reg_req_we;
wire rd = reg_req_valid && !reg_req_we;

// channel addressed by a channel/SGDMA access: {direction (target bit 0), number}
wire chan_tgt = tgt == `PEVB_TGT_H2C || tgt == `PEVB_TGT_C2H;
wire sgdma_tgt = tgt == `PEVB_TGT_H2C_SGDMA || tgt == `PEVB_TGT_C2H_SGDMA;
wire [2:0] ch_sel = {tgt[0], chn[1:0]};
wire ch_hit = bar1 && chn[3:2] == 2'd0 && BUILT[ch_sel] && (chan_tgt || sgdma_tgt);
// an access to one of the performance counters' registers: only then does the read mux
// see a counter (each channel's counters reach it gated by this and its number, so a
// counter that moves on every clock wakes nothing else)
wire perf_rd = ch_hit && chan_tgt && (ofs == `PEVB_CH_PERF_CYC_LO || ofs == `PEVB_CH_PERF_CYC_HI ||
                                      ofs == `PEVB_CH_PERF_DATA_LO || ofs == `PEVB_CH_PERF_DATA_HI);

// MSI-X table entry (0x8000 + 16 * entry) or the PBA's low DWORD (0x8FE0)
wire msix_tgt = MSIX != 0 && bar1 && tgt == `PEVB_TGT_MSIX;
wire msix_entry_hit = msix_tgt && reg_req_addr[11:9] == 3'd0;
wire [4:0] msix_entry = reg_req_addr[8:4];
wire [3:0] msix_ofs = {reg_req_addr[3:2], 2'b00};
wire msix_pba_hit = msix_tgt && {reg_req_addr[11:2], 2'b00} == `PEVB_MSIX_PBA;

wire [2:0] mps_enc = cfg_max_payload;
wire [2:0] mrrs_enc = cfg_max_read_req;
wire [2:0] width_enc = `PEVB_DATA_WIDTH_ENC(AXIS_PCIE_DATA_WIDTH);

// interrupt sources (XDMA: logged status bits enabled in the interrupt mask), per
// channel index and per interrupt bit
wire [7:0] ch_irq_src;
wire [7:0] ch_irq_event;
// channels whose per-cycle updates below can change a register this cycle: an event to
// log, Run changed, or a performance counter running or being cleared
wire [7:0] ch_wake;
// per channel: the events logged into status this cycle, and Run rising (which clears
// status); a write or read of status in the same cycle keeps the first and obeys the
// second, so no event is lost to a register access (PG195: RW1C and clear-on-read)
wire [8*32-1:0] ch_log;
wire [7:0] ch_run_rise;
wire [NIRQ-1:0] irq_src;
wire [NIRQ-1:0] irq_event;
genvar g;
generate
    for (g = 0; g < 8; g = g + 1) begin : chans
        if (BUILT[g]) begin : built
            assign ch_irq_src[g] = |(status_reg[g] & intmask_reg[g] & STATUS_MASK);
            assign ch_irq_event[g] = |(ch_event[g*EVW +: EVW] & control_reg[g][EVW-1:0] & intmask_reg[g][EVW-1:0] & STATUS_MASK[EVW-1:0]);
            assign ch_control[g*32 +: 32] = control_reg[g];
            assign ch_sts[g*4 +: 4] = {control_reg[g][`PEVB_CTRL_RUN], ch_irq_src[g],
                                       status_reg[g][`PEVB_STAT_DESC_STOPPED],
                                       status_reg[g][`PEVB_STAT_DESC_COMPLETED]};
            assign ch_desc_addr[g*64 +: 64] = desc_addr_reg[g];
            assign ch_desc_adj[g*6 +: 6] = desc_adj_reg[g];
            assign ch_wb_addr[g*64 +: 64] = wb_addr_reg[g];
            assign ch_log[g*32 +: 32] = {{(32-EVW){1'b0}}, ch_event[g*EVW +: EVW]} & control_reg[g] & STATUS_MASK;
            assign ch_run_rise[g] = control_reg[g][`PEVB_CTRL_RUN] && !run_d_reg[g];
            assign ch_wake[g] = ch_event[g*EVW +: EVW] != {EVW{1'b0}} ||
                                control_reg[g][`PEVB_CTRL_RUN] != run_d_reg[g] ||
                                perf_ctrl_reg[g][`PEVB_PERF_CLEAR];
        end else begin : absent
            assign ch_irq_src[g] = 1'b0;
            assign ch_wake[g] = 1'b0;
            assign ch_log[g*32 +: 32] = 32'd0;
            assign ch_run_rise[g] = 1'b0;
            wire unused_event = ^ch_event[g*EVW +: EVW];
            assign ch_irq_event[g] = 1'b0;
            assign ch_control[g*32 +: 32] = 32'd0;
            assign ch_sts[g*4 +: 4] = 4'd0;
            assign ch_desc_addr[g*64 +: 64] = 64'd0;
            assign ch_desc_adj[g*6 +: 6] = 6'd0;
            assign ch_wb_addr[g*64 +: 64] = 64'd0;
        end
        assign ch_halt[g] = halt_reg[(g >= 4 ? `PEVB_SGC_C2H_DESC_HALT_LSB : `PEVB_SGC_H2C_DESC_HALT_LSB) + g % 4];
    end
    // the performance counters, each channel's in a block of its own that runs only while
    // they count or clear (a clock enable: an event-driven simulator spends nothing on
    // the registers of a channel that is not counting)
    for (g = 0; g < 8; g = g + 1) begin : perf
        if (BUILT[g]) begin : built
            reg [42:0] cyc_reg;
            reg [42:0] data_reg;
            wire clear = perf_ctrl_reg[g][`PEVB_PERF_CLEAR];
            wire count = perf_ctrl_reg[g][`PEVB_PERF_RUN] &&
                         (!perf_ctrl_reg[g][`PEVB_PERF_AUTO] || ch_busy[g]);
            // a step: a counter at its maximum stays there and flags it
            wire [42:0] cyc_next = &cyc_reg[41:0] ? {1'b1, cyc_reg[41:0]} : cyc_reg + 43'd1;
            wire [42:0] data_next = ch_beat[g] && &data_reg[41:0] ? {1'b1, data_reg[41:0]}
                                                                  : data_reg + {42'd0, ch_beat[g]};
            wire perf_wake = rst || clear || count;
            always @(posedge clk) begin
                if (perf_wake) begin
                    if (rst || clear) begin
                        cyc_reg <= 43'd0;
                        data_reg <= 43'd0;
                    end else begin
                        cyc_reg <= cyc_next;
                        data_reg <= data_next;
                    end
                end
            end
            localparam [2:0] CH = g;
            wire shown = perf_rd && ch_sel == CH;
            assign perf_cyc[g*43 +: 43] = shown ? cyc_reg : 43'd0;
            assign perf_data[g*43 +: 43] = shown ? data_reg : 43'd0;
        end else begin : absent
            assign perf_cyc[g*43 +: 43] = 43'd0;
            assign perf_data[g*43 +: 43] = 43'd0;
            wire unused_beat = ch_beat[g];
        end
    end
    for (g = 0; g < NIRQ; g = g + 1) begin : irq_bits
        localparam CI = g < NH ? g : 4 + g - NH;
        assign irq_src[g] = ch_irq_src[CI];
        assign irq_event[g] = ch_irq_event[CI];
    end
endgenerate

// the addressed channel is a stream (identifier bit 15)
localparam [7:0] STREAM_MASK = {C2H_STREAM[3:0], H2C_STREAM[3:0]};
wire ch_stream = STREAM_MASK[ch_sel];

wire [42:0] sel_perf_cyc = perf_cyc[ch_sel*43 +: 43];
wire [42:0] sel_perf_data = perf_data[ch_sel*43 +: 43];

// read mux
always @* begin
    reg_rd_data = 32'd0;
    if (bar1) begin
        if (ch_hit && chan_tgt) begin
            case (ofs)
                `PEVB_CH_IDENTIFIER: reg_rd_data = `PEVB_IDENTIFIER(tgt, ch_stream, chn);
                `PEVB_CH_CONTROL, `PEVB_CH_CONTROL_W1S, `PEVB_CH_CONTROL_W1C:
                    reg_rd_data = control_reg[ch_sel];
                `PEVB_CH_STATUS, `PEVB_CH_STATUS_RC: begin
                    reg_rd_data = status_reg[ch_sel];
                    reg_rd_data[`PEVB_STAT_BUSY] = ch_busy[ch_sel];
                end
                `PEVB_CH_COMPLETED_COUNT: reg_rd_data = ch_count[ch_sel*32 +: 32];
                `PEVB_CH_ALIGNMENTS: reg_rd_data = `PEVB_ALIGNMENTS_VALUE;
                `PEVB_CH_POLL_WB_LO: reg_rd_data = wb_addr_reg[ch_sel][31:0];
                `PEVB_CH_POLL_WB_HI: reg_rd_data = wb_addr_reg[ch_sel][63:32];
                `PEVB_CH_INT_MASK, `PEVB_CH_INT_MASK_W1S, `PEVB_CH_INT_MASK_W1C:
                    reg_rd_data = intmask_reg[ch_sel];
                `PEVB_CH_PERF_CTRL: reg_rd_data[`PEVB_PERF_CTRL] = perf_ctrl_reg[ch_sel];
                `PEVB_CH_PERF_CYC_LO: reg_rd_data = sel_perf_cyc[31:0];
                `PEVB_CH_PERF_CYC_HI: begin
                    reg_rd_data[`PEVB_PERF_COUNT_HI] = sel_perf_cyc[41:32];
                    reg_rd_data[`PEVB_PERF_MAXED] = sel_perf_cyc[42];
                end
                `PEVB_CH_PERF_DATA_LO: reg_rd_data = sel_perf_data[31:0];
                `PEVB_CH_PERF_DATA_HI: begin
                    reg_rd_data[`PEVB_PERF_COUNT_HI] = sel_perf_data[41:32];
                    reg_rd_data[`PEVB_PERF_MAXED] = sel_perf_data[42];
                end
                default: reg_rd_data = 32'd0;
            endcase
        end else if (ch_hit && sgdma_tgt) begin
            case (ofs)
                `PEVB_SG_IDENTIFIER: reg_rd_data = `PEVB_IDENTIFIER(tgt, ch_stream, chn);
                `PEVB_SG_DESC_LO: reg_rd_data = desc_addr_reg[ch_sel][31:0];
                `PEVB_SG_DESC_HI: reg_rd_data = desc_addr_reg[ch_sel][63:32];
                `PEVB_SG_DESC_ADJ: reg_rd_data[`PEVB_SG_DESC_ADJ_FIELD] = desc_adj_reg[ch_sel];
                `PEVB_SG_CREDITS: reg_rd_data[`PEVB_SG_CREDITS_FIELD] = credits_reg[ch_sel];
                default: reg_rd_data = 32'd0;
            endcase
        end else if (tgt == `PEVB_TGT_SGDMA_COMMON && chn == 4'd0) begin
            case (ofs)
                `PEVB_SGC_IDENTIFIER: reg_rd_data = `PEVB_IDENTIFIER(tgt, 1'b0, chn);
                `PEVB_SGC_CONTROL, `PEVB_SGC_CONTROL_W1S, `PEVB_SGC_CONTROL_W1C:
                    reg_rd_data = halt_reg;
                `PEVB_SGC_CREDIT_MODE, `PEVB_SGC_CREDIT_MODE_W1S, `PEVB_SGC_CREDIT_MODE_W1C:
                    reg_rd_data = credit_mode_reg;
                default: reg_rd_data = 32'd0;
            endcase
        end else if (tgt == `PEVB_TGT_IRQ && chn == 4'd0) begin
            case (ofs)
                `PEVB_IRQ_IDENTIFIER: reg_rd_data = `PEVB_IDENTIFIER(tgt, 1'b0, chn);
                `PEVB_IRQ_USER_INT_EN, `PEVB_IRQ_USER_INT_EN_W1S, `PEVB_IRQ_USER_INT_EN_W1C:
                    reg_rd_data[NU-1:0] = user_int_en_reg;
                `PEVB_IRQ_CHAN_INT_EN, `PEVB_IRQ_CHAN_INT_EN_W1S, `PEVB_IRQ_CHAN_INT_EN_W1C:
                    reg_rd_data[NIRQ-1:0] = chan_int_en_reg;
                `PEVB_IRQ_USER_INT_REQ: reg_rd_data[NU-1:0] = usr_irq_req;
                `PEVB_IRQ_CHAN_INT_REQ: reg_rd_data[NIRQ-1:0] = irq_src;
                `PEVB_IRQ_USER_INT_PEND: reg_rd_data[NU-1:0] = usr_irq_req & user_int_en_reg;
                `PEVB_IRQ_CHAN_INT_PEND: reg_rd_data[NIRQ-1:0] = irq_src & chan_int_en_reg;
                `PEVB_IRQ_USER_VECTOR0: reg_rd_data = user_vec_reg[0];
                `PEVB_IRQ_USER_VECTOR1: reg_rd_data = user_vec_reg[1];
                `PEVB_IRQ_USER_VECTOR2: reg_rd_data = user_vec_reg[2];
                `PEVB_IRQ_USER_VECTOR3: reg_rd_data = user_vec_reg[3];
                `PEVB_IRQ_CHAN_VECTOR0: reg_rd_data = chan_vec_reg[0];
                `PEVB_IRQ_CHAN_VECTOR1: reg_rd_data = chan_vec_reg[1];
                default: reg_rd_data = 32'd0;
            endcase
        end else if (tgt == `PEVB_TGT_CONFIG && chn == 4'd0) begin
            case (ofs)
                `PEVB_CFG_IDENTIFIER: reg_rd_data = `PEVB_IDENTIFIER(tgt, 1'b0, chn);
                `PEVB_CFG_BUSDEV: reg_rd_data[`PEVB_CFG_BUS_FIELD] = cfg_bus_number;
                `PEVB_CFG_MPS, `PEVB_CFG_AXI_MPS: reg_rd_data[`PEVB_CFG_SIZE_FIELD] = mps_enc;
                `PEVB_CFG_MRRS, `PEVB_CFG_AXI_MRRS: reg_rd_data[`PEVB_CFG_SIZE_FIELD] = mrrs_enc;
                `PEVB_CFG_SYSTEM_ID: reg_rd_data = `PEVB_SYSTEM_ID_VALUE;
                `PEVB_CFG_MSI_ENABLE: begin
                    reg_rd_data[`PEVB_CFG_MSI_FIELD] = cfg_interrupt_msi_enable[0];
                    reg_rd_data[`PEVB_CFG_MSIX_FIELD] = MSIX != 0 && cfg_interrupt_msix_enable[0];
                end
                `PEVB_CFG_DATA_WIDTH: reg_rd_data[`PEVB_CFG_DATA_WIDTH_FIELD] = width_enc;
                `PEVB_CFG_PCIE_CONTROL: reg_rd_data[`PEVB_CFG_PCIE_CTRL_RELAXED_ORDERING] = pcie_ro_reg;
                `PEVB_CFG_WR_FLUSH_TIMEOUT:
                    reg_rd_data[`PEVB_CFG_WR_FLUSH_TIMEOUT_FIELD] = wr_flush_timeout_reg;
                default: reg_rd_data = 32'd0;
            endcase
        end else if (msix_entry_hit) begin
            case (msix_ofs)
                `PEVB_MSIX_ADDR_LO: reg_rd_data = {msix_addr_lo_mem[msix_entry], 2'b00};
                `PEVB_MSIX_ADDR_HI: reg_rd_data = msix_addr_hi_mem[msix_entry];
                `PEVB_MSIX_DATA: reg_rd_data = msix_data_mem[msix_entry];
                default: reg_rd_data[`PEVB_MSIX_CTRL_MASKED] = msix_masked_reg[msix_entry];
            endcase
        end else if (msix_pba_hit) begin
            reg_rd_data = msix_pba;
        end
    end
end

// per-channel register updates (channels not built: see below)
integer c, k;
always @(posedge clk) begin
    // (skipped on cycles where no channel's could change anything: event-driven
    // simulators then spend nothing on it while the channels are idle, and little on
    // the idle channels while another one runs)
    if (ch_wake != 8'd0) begin
        for (k = 0; k < NIRQ; k = k + 1) begin
            c = k < NH ? k : 4 + k - NH;  // the channels built: H2C, then C2H
            if (ch_wake[c]) begin
                run_d_reg[c] <= control_reg[c][`PEVB_CTRL_RUN];

                // status: log events enabled in control, clear on Run rising
                if (ch_run_rise[c]) begin
                    status_reg[c] <= 32'd0;
                end else begin
                    status_reg[c] <= status_reg[c] | ch_log[c*32 +: 32];
                end

                // a clear of the performance counters (block perf) is one cycle long
                if (perf_ctrl_reg[c][`PEVB_PERF_CLEAR]) begin
                    perf_ctrl_reg[c][`PEVB_PERF_CLEAR] <= 1'b0;
                end
            end
        end
    end

    // register accesses (every one below needs a request: tested once, the same logic)
    if (reg_req_valid) begin
        if (wr && ch_hit && chan_tgt) begin
            case (ofs)
                `PEVB_CH_CONTROL: control_reg[ch_sel] <= merge(control_reg[ch_sel], reg_req_wdata, wmask & CTRL_MASK);
                `PEVB_CH_CONTROL_W1S: control_reg[ch_sel] <= control_reg[ch_sel] | (wbits & CTRL_MASK);
                `PEVB_CH_CONTROL_W1C: control_reg[ch_sel] <= control_reg[ch_sel] & ~(wbits & CTRL_MASK);
                `PEVB_CH_STATUS: status_reg[ch_sel] <= ch_run_rise[ch_sel] ? 32'd0 :
                    (status_reg[ch_sel] & ~(wbits & STATUS_MASK)) | ch_log[ch_sel*32 +: 32];
                `PEVB_CH_POLL_WB_LO: wb_addr_reg[ch_sel][31:0] <= merge(wb_addr_reg[ch_sel][31:0], reg_req_wdata, wmask);
                `PEVB_CH_POLL_WB_HI: wb_addr_reg[ch_sel][63:32] <= merge(wb_addr_reg[ch_sel][63:32], reg_req_wdata, wmask);
                `PEVB_CH_INT_MASK: intmask_reg[ch_sel] <= merge(intmask_reg[ch_sel], reg_req_wdata, wmask & STATUS_MASK);
                `PEVB_CH_INT_MASK_W1S: intmask_reg[ch_sel] <= intmask_reg[ch_sel] | (wbits & STATUS_MASK);
                `PEVB_CH_INT_MASK_W1C: intmask_reg[ch_sel] <= intmask_reg[ch_sel] & ~(wbits & STATUS_MASK);
                // (a clear being done this cycle stays done: the clear bit is one cycle)
                `PEVB_CH_PERF_CTRL: perf_ctrl_reg[ch_sel] <= (perf_ctrl_reg[ch_sel] & ~wmask[`PEVB_PERF_CTRL] & ~PERF_CLEAR_BIT) | (reg_req_wdata[`PEVB_PERF_CTRL] & wmask[`PEVB_PERF_CTRL]);
                default: ;
            endcase
        end
        if (rd && ch_hit && chan_tgt && ofs == `PEVB_CH_STATUS_RC) begin
            // clear-on-read status (events arriving this cycle are kept)
            status_reg[ch_sel] <= ch_run_rise[ch_sel] ? 32'd0 : ch_log[ch_sel*32 +: 32];
        end

        if (wr && ch_hit && sgdma_tgt) begin
            case (ofs)
                `PEVB_SG_DESC_LO: desc_addr_reg[ch_sel][31:0] <= merge(desc_addr_reg[ch_sel][31:0], reg_req_wdata, wmask);
                `PEVB_SG_DESC_HI: desc_addr_reg[ch_sel][63:32] <= merge(desc_addr_reg[ch_sel][63:32], reg_req_wdata, wmask);
                `PEVB_SG_DESC_ADJ: desc_adj_reg[ch_sel] <= (desc_adj_reg[ch_sel] & ~wmask[`PEVB_SG_DESC_ADJ_FIELD]) | (reg_req_wdata[`PEVB_SG_DESC_ADJ_FIELD] & wmask[`PEVB_SG_DESC_ADJ_FIELD]);
                `PEVB_SG_CREDITS: credits_reg[ch_sel] <= (credits_reg[ch_sel] & ~wmask[`PEVB_SG_CREDITS_FIELD]) | (reg_req_wdata[`PEVB_SG_CREDITS_FIELD] & wmask[`PEVB_SG_CREDITS_FIELD]);
                default: ;
            endcase
        end

        if (wr && bar1 && tgt == `PEVB_TGT_SGDMA_COMMON && chn == 4'd0) begin
            case (ofs)
                `PEVB_SGC_CONTROL: halt_reg <= merge(halt_reg, reg_req_wdata, wmask & `PEVB_SGC_CHANNELS_MASK);
                `PEVB_SGC_CONTROL_W1S: halt_reg <= halt_reg | (wbits & `PEVB_SGC_CHANNELS_MASK);
                `PEVB_SGC_CONTROL_W1C: halt_reg <= halt_reg & ~(wbits & `PEVB_SGC_CHANNELS_MASK);
                `PEVB_SGC_CREDIT_MODE: credit_mode_reg <= merge(credit_mode_reg, reg_req_wdata, wmask & `PEVB_SGC_CHANNELS_MASK);
                `PEVB_SGC_CREDIT_MODE_W1S: credit_mode_reg <= credit_mode_reg | (wbits & `PEVB_SGC_CHANNELS_MASK);
                `PEVB_SGC_CREDIT_MODE_W1C: credit_mode_reg <= credit_mode_reg & ~(wbits & `PEVB_SGC_CHANNELS_MASK);
                default: ;
            endcase
        end

        if (wr && bar1 && tgt == `PEVB_TGT_IRQ && chn == 4'd0) begin
            case (ofs)
                `PEVB_IRQ_USER_INT_EN: user_int_en_reg <= (user_int_en_reg & ~wmask[NU-1:0]) | (reg_req_wdata[NU-1:0] & wmask[NU-1:0]);
                `PEVB_IRQ_USER_INT_EN_W1S: user_int_en_reg <= user_int_en_reg | wbits[NU-1:0];
                `PEVB_IRQ_USER_INT_EN_W1C: user_int_en_reg <= user_int_en_reg & ~wbits[NU-1:0];
                `PEVB_IRQ_CHAN_INT_EN: chan_int_en_reg <= (chan_int_en_reg & ~wmask[NIRQ-1:0]) | (reg_req_wdata[NIRQ-1:0] & wmask[NIRQ-1:0]);
                `PEVB_IRQ_CHAN_INT_EN_W1S: chan_int_en_reg <= chan_int_en_reg | wbits[NIRQ-1:0];
                `PEVB_IRQ_CHAN_INT_EN_W1C: chan_int_en_reg <= chan_int_en_reg & ~wbits[NIRQ-1:0];
                `PEVB_IRQ_USER_VECTOR0: user_vec_reg[0] <= merge(user_vec_reg[0], reg_req_wdata, wmask & `PEVB_IRQ_VECTOR_MASK);
                `PEVB_IRQ_USER_VECTOR1: user_vec_reg[1] <= merge(user_vec_reg[1], reg_req_wdata, wmask & `PEVB_IRQ_VECTOR_MASK);
                `PEVB_IRQ_USER_VECTOR2: user_vec_reg[2] <= merge(user_vec_reg[2], reg_req_wdata, wmask & `PEVB_IRQ_VECTOR_MASK);
                `PEVB_IRQ_USER_VECTOR3: user_vec_reg[3] <= merge(user_vec_reg[3], reg_req_wdata, wmask & `PEVB_IRQ_VECTOR_MASK);
                `PEVB_IRQ_CHAN_VECTOR0: chan_vec_reg[0] <= merge(chan_vec_reg[0], reg_req_wdata, wmask & `PEVB_IRQ_VECTOR_MASK);
                `PEVB_IRQ_CHAN_VECTOR1: chan_vec_reg[1] <= merge(chan_vec_reg[1], reg_req_wdata, wmask & `PEVB_IRQ_VECTOR_MASK);
                default: ;
            endcase
        end

        if (wr && bar1 && tgt == `PEVB_TGT_CONFIG && chn == 4'd0) begin
            case (ofs)
                `PEVB_CFG_PCIE_CONTROL: if (reg_req_be[0]) pcie_ro_reg <= reg_req_wdata[`PEVB_CFG_PCIE_CTRL_RELAXED_ORDERING];
                `PEVB_CFG_WR_FLUSH_TIMEOUT: wr_flush_timeout_reg <= (wr_flush_timeout_reg & ~wmask[`PEVB_CFG_WR_FLUSH_TIMEOUT_FIELD]) | (reg_req_wdata[`PEVB_CFG_WR_FLUSH_TIMEOUT_FIELD] & wmask[`PEVB_CFG_WR_FLUSH_TIMEOUT_FIELD]);
                default: ;
            endcase
        end

        if (wr && msix_entry_hit) begin
            case (msix_ofs)
                `PEVB_MSIX_ADDR_LO: msix_addr_lo_mem[msix_entry] <= (msix_addr_lo_mem[msix_entry] & ~wmask[31:2]) | (reg_req_wdata[31:2] & wmask[31:2]);
                `PEVB_MSIX_ADDR_HI: msix_addr_hi_mem[msix_entry] <= merge(msix_addr_hi_mem[msix_entry], reg_req_wdata, wmask);
                `PEVB_MSIX_DATA: msix_data_mem[msix_entry] <= merge(msix_data_mem[msix_entry], reg_req_wdata, wmask);
                default: if (reg_req_be[0]) msix_masked_reg[msix_entry] <= reg_req_wdata[`PEVB_MSIX_CTRL_MASKED];
            endcase
        end
    end

    // a channel not built is never written (a register access needs ch_hit) and reads
    // as zero everywhere (its outputs are masked), so its registers are unused logic
    if (rst) begin
        for (c = 0; c < 8; c = c + 1) begin
            control_reg[c] <= 32'd0;
            status_reg[c] <= 32'd0;
            intmask_reg[c] <= 32'd0;
            wb_addr_reg[c] <= 64'd0;
            perf_ctrl_reg[c] <= 0;
            desc_addr_reg[c] <= 64'd0;
            desc_adj_reg[c] <= 0;
            credits_reg[c] <= 0;
            run_d_reg[c] <= 1'b0;
        end
        for (c = 0; c < 4; c = c + 1) begin
            user_vec_reg[c] <= 32'd0;
        end
        halt_reg <= 32'd0;
        credit_mode_reg <= 32'd0;
        user_int_en_reg <= {NU{1'b0}};
        chan_int_en_reg <= {NIRQ{1'b0}};
        chan_vec_reg[0] <= 32'd0;
        chan_vec_reg[1] <= 32'd0;
        // relaxed ordering enabled out of reset (PG195 PCIE Control register)
        pcie_ro_reg <= 1'b1;
        wr_flush_timeout_reg <= 0;
        for (c = 0; c < NV; c = c + 1) begin
            msix_addr_lo_mem[c] <= 30'd0;
            msix_addr_hi_mem[c] <= 32'd0;
            msix_data_mem[c] <= 32'd0;
        end
        msix_masked_reg <= {NV{1'b1}};
    end
end

// registers are DWORDs
wire unused_regs = ^reg_req_addr[1:0];

// the message sender, reading the MSI-X table entry it sends
wire [4:0] msix_vec;

pevb_irq_tx #(
    .CHAN_IRQS(NIRQ),
    .USER_IRQS(NU),
    .MSIX(MSIX),
    .MSI_TIMEOUT_CYCLES(MSI_TIMEOUT_CYCLES)
) irq_inst (
    .clk(clk),
    .rst(rst),
    .irq_src(irq_src),
    .irq_event(irq_event),
    .chan_int_en(chan_int_en_reg),
    .user_int_en(user_int_en_reg),
    .chan_vec({chan_vec_reg[1], chan_vec_reg[0]}),
    .user_vec({user_vec_reg[3], user_vec_reg[2], user_vec_reg[1], user_vec_reg[0]}),
    .msix_masked(msix_masked_reg),
    .msix_pba(msix_pba),
    .msix_vec(msix_vec),
    .msix_entry_addr({msix_addr_hi_mem[msix_vec], msix_addr_lo_mem[msix_vec], 2'b00}),
    .msix_entry_data(msix_data_mem[msix_vec]),
    .usr_irq_req(usr_irq_req),
    .usr_irq_ack(usr_irq_ack),
`include "pevb_hip_irq_map.vh"
    .wr_enter(rq_wr_enter),
    .wr_leave(rq_wr_leave)
);

endmodule

`resetall
