// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * Interrupt message sender: turns the channel interrupt sources and the user
 * interrupt requests into MSI messages on the hard IP's cfg_interrupt_msi_*
 * interface, or, when built with MSIX and the host enabled it, MSI-X messages
 * on its cfg_interrupt_msix_* interface; with both off, a legacy interrupt: the
 * level of INTA on its cfg_interrupt_int interface.  The register file (pevb_regs)
 * owns the enables, the vector registers and the MSI-X table; this block owns the
 * pending bits (the PBA) and reads the table entry of the message it sends
 * through msix_vec / msix_entry_*.
 */
module pevb_irq_tx #
(
    // channel interrupt bits (H2C channels, then C2H; 2 to 8)
    parameter CHAN_IRQS = 2,
    // user interrupt inputs (1 to 16)
    parameter USER_IRQS = 1,
    // MSI-X built (0 or 1)
    parameter MSIX = 0,
    // cycles to wait for cfg_interrupt_msi(x)_sent/fail before giving up
    parameter MSI_TIMEOUT_CYCLES = 65536
)
(
    input  wire                  clk,
    input  wire                  rst,

    /* channel interrupt sources: active (level) and a new event (pulse) */
    input  wire [CHAN_IRQS-1:0]  irq_src,
    input  wire [CHAN_IRQS-1:0]  irq_event,

    /* the IRQ block's enables and vector registers (PG195), flattened */
    input  wire [CHAN_IRQS-1:0]  chan_int_en,
    input  wire [USER_IRQS-1:0]  user_int_en,
    input  wire [2*32-1:0]       chan_vec,
    input  wire [4*32-1:0]       user_vec,

    /* MSI-X: the entries' mask bits, the pending bits, and the table read port */
    input  wire [`PEVB_MSIX_VECTORS-1:0] msix_masked,
    output wire [`PEVB_MSIX_VECTORS-1:0] msix_pba,
    output wire [4:0]            msix_vec,
    input  wire [63:0]           msix_entry_addr,
    input  wire [31:0]           msix_entry_data,

    /* User interrupts (XDMA's usr_irq_req/usr_irq_ack) */
    input  wire [USER_IRQS-1:0]  usr_irq_req,
    output wire [USER_IRQS-1:0]  usr_irq_ack,

`include "pevb_hip_irq_ports.vh"

    /* Posted writes of the requester: one taken, one handed whole to the hard IP */
    input  wire                  wr_enter,
    input  wire                  wr_leave
);

localparam NIRQ = CHAN_IRQS;
localparam NU = USER_IRQS;
localparam NV = `PEVB_MSIX_VECTORS;
// sources: the channel interrupt bits, then the user interrupts
localparam NSRC = NIRQ + NU;
localparam SRC_IDX_W = 5;
localparam [SRC_IDX_W-1:0] NIRQ_W = NIRQ[SRC_IDX_W-1:0];

localparam [1:0] MSI_IDLE = 2'd0, MSI_WAIT = 2'd1;

reg [1:0] msi_state_reg;
reg [NIRQ-1:0] msi_pending_reg;
reg [31:0] msi_int_reg;
reg msix_int_reg;
reg [63:0] msix_address_reg;
reg [31:0] msix_data_reg;
reg [16:0] msi_timer_reg;
reg [NV-1:0] msix_pba_reg;

// Power-up values (FPGA register INIT): the hard IP samples cfg_interrupt_msi_int and
// the cfg_interrupt_msix_* outputs every cycle, including before the first reset edge.
initial begin
    msi_int_reg = 32'd0;
    msix_int_reg = 1'b0;
    msix_address_reg = 64'd0;
    msix_data_reg = 32'd0;
end

assign cfg_interrupt_msi_int = msi_int_reg;
assign cfg_interrupt_msix_int = msix_int_reg;
assign cfg_interrupt_msix_address = msix_address_reg;
assign cfg_interrupt_msix_data = msix_data_reg;
assign msix_pba = msix_pba_reg;

// Channel interrupts: one message per new enabled interrupt
// event (coalesced while one is pending for the same channel), and one when a
// channel's interrupt enable is set while its source is already active.  User
// interrupts (PG195): a request held high is sent once its enable bit is set,
// and usr_irq_ack pulses for a cycle when the hard IP has taken the message
// (sent, failed, or no answer within MSI_TIMEOUT_CYCLES); the request must
// then fall before it can interrupt again.  Pending sources are served
// round-robin, each with the vector its field of the channel or user vector
// registers holds.  MSI-X, when enabled, takes precedence over MSI (the host
// enables one of them): the vector is the table entry; a message for a masked
// entry (or while the function is masked) sets the entry's pending bit and is
// sent when the entry is unmasked, before any new message (a user interrupt
// is acknowledged when its message is logged pending).
reg [NIRQ-1:0] chan_int_en_d_reg;
wire [NIRQ-1:0] msi_trigger = (irq_event & chan_int_en) | (irq_src & chan_int_en & ~chan_int_en_d_reg);
wire [2:0] msi_mme = cfg_interrupt_msi_mmenable[2:0];

// user requests already sent (until they fall), and the one being sent
reg [NU-1:0] usr_done_reg;
reg [NU-1:0] usr_ack_reg;
reg [NU-1:0] usr_sending_reg;
wire [NU-1:0] usr_pending = usr_irq_req & user_int_en & ~usr_done_reg & ~usr_sending_reg;
// user requests acknowledged by the legacy interrupt logic (below)
wire [NU-1:0] leg_ack;
assign usr_irq_ack = usr_ack_reg | leg_ack;

// only physical function 0 has MSI and MSI-X
wire unused_funcs = ^{cfg_interrupt_msi_enable[3:1], cfg_interrupt_msi_mmenable[11:3],
                      cfg_interrupt_msix_enable[3:1], cfg_interrupt_msix_mask[3:1]};
wire [4:0] msi_vec_mask = msi_mme >= 3'd5 ? 5'h1F : ((5'd1 << msi_mme) - 5'd1);

wire msix_on = MSIX != 0 && cfg_interrupt_msix_enable[0];
wire msi_on = !msix_on && cfg_interrupt_msi_enable[0];
wire msix_fmask = cfg_interrupt_msix_mask[0];

// MSI-X entries whose pending message may go now, and the lowest of them
wire [NV-1:0] pba_ready = msix_pba_reg & ~msix_masked & {NV{!msix_fmask}};
wire pba_go = msix_on && pba_ready != {NV{1'b0}};
reg [4:0] pba_vec;
integer pv;
always @* begin
    pba_vec = 5'd0;
    for (pv = NV - 1; pv >= 0; pv = pv - 1) begin
        if (pba_ready[pv]) begin
            pba_vec = pv[4:0];
        end
    end
end

// The write fence: a channel interrupt goes only after every posted write the requester
// took before its event (a data write, the poll-mode write-back) has been handed whole to
// the hard IP, which keeps its message behind the writes it has accepted.  The requester
// hands its writes on in order, one a cycle at most, so the count of writes handed on
// reaches the count taken at the last channel event exactly: two small counters, that
// count, and whether it is still ahead.
reg [3:0] wr_in_reg;
reg [3:0] wr_out_reg;
reg [3:0] fence_reg;
reg fence_wait_reg;
wire fence_ok = !fence_wait_reg;

always @(posedge clk) begin
    if (rst) begin
        wr_in_reg <= 4'd0;
        wr_out_reg <= 4'd0;
        fence_reg <= 4'd0;
        fence_wait_reg <= 1'b0;
    end else begin
        if (wr_enter) begin
            wr_in_reg <= wr_in_reg + 4'd1;
        end
        if (wr_leave) begin
            wr_out_reg <= wr_out_reg + 4'd1;
        end
        if (irq_event != {NIRQ{1'b0}}) begin
            fence_reg <= wr_in_reg;
            fence_wait_reg <= wr_in_reg != wr_out_reg + {3'd0, wr_leave};
        end else if (fence_wait_reg && wr_out_reg == fence_reg) begin
            fence_wait_reg <= 1'b0;
        end
    end
end

wire [NSRC-1:0] msi_req = {usr_pending, msi_pending_reg};
wire msi_sel_valid;
wire [SRC_IDX_W-1:0] msi_sel;
wire [NSRC-1:0] msi_sel_mask;
// the vector field of source k: channel bit k in channel vector register k / 4, user
// interrupt u = k - NIRQ in user vector register u / 4; byte k % 4 (u % 4)
wire msi_sel_user = msi_sel >= NIRQ_W;
wire msi_send = msi_state_reg == MSI_IDLE && (msi_on || msix_on) && !pba_go &&
                msi_req != {NSRC{1'b0}} && (fence_ok || msi_sel_user);
wire [SRC_IDX_W-1:0] msi_field = msi_sel_user ? msi_sel - NIRQ_W : msi_sel;
wire [31:0] msi_vec_word = msi_sel_user ? user_vec[msi_field[3:2]*32 +: 32] : chan_vec[msi_field[2]*32 +: 32];
wire [4:0] sel_vec = msi_vec_word[msi_field[1:0]*`PEVB_IRQ_VECTOR_STRIDE +: `PEVB_IRQ_VECTOR_WIDTH];
wire [4:0] msi_vec = sel_vec & msi_vec_mask;
wire sel_masked = msix_masked[sel_vec] || msix_fmask;
// the MSI-X entry of the next message: a pending one first; and whether it goes now
// (a new one for a masked entry is logged pending instead)
assign msix_vec = pba_go ? pba_vec : sel_vec;
wire msix_fire = msi_state_reg == MSI_IDLE && (pba_go || (msi_send && msix_on && !sel_masked));
wire unused_msi_sel = ^{msi_sel_valid, msi_field[4]};

pevb_rr_arb #(
    .N(NSRC),
    .IDX_WIDTH(SRC_IDX_W)
) msi_arb_inst (
    .clk(clk),
    .rst(rst),
    .req(msi_req),
    .fire(msi_send),
    .grant_valid(msi_sel_valid),
    .grant_idx(msi_sel),
    .grant(msi_sel_mask)
);

wire msi_done = msi_state_reg == MSI_WAIT &&
                (cfg_interrupt_msi_sent || cfg_interrupt_msi_fail ||
                 cfg_interrupt_msix_sent || cfg_interrupt_msix_fail ||
                 msi_timer_reg == MSI_TIMEOUT_CYCLES[16:0]);

// The block below changes nothing while no message is in flight, wanted or pending and
// the one-cycle pulses are low (a clock enable): event-driven simulators then skip it on
// idle cycles.
wire wake = rst || msi_state_reg != MSI_IDLE || msix_fire || pba_go || msi_send ||
            |msi_trigger || |msi_pending_reg || chan_int_en != chan_int_en_d_reg ||
            |msi_int_reg || msix_int_reg || |usr_ack_reg || |(usr_done_reg & ~usr_irq_req);

always @(posedge clk) begin
    if (wake) begin
        chan_int_en_d_reg <= chan_int_en;
        msi_int_reg <= 32'd0;
        msix_int_reg <= 1'b0;
        usr_ack_reg <= {NU{1'b0}};
        // a request that fell may interrupt again
        usr_done_reg <= usr_done_reg & usr_irq_req;

        if (msix_fire) begin
            msix_int_reg <= 1'b1;
            msix_address_reg <= msix_entry_addr;
            msix_data_reg <= msix_entry_data;
        end

        case (msi_state_reg)
            MSI_IDLE: begin
                msi_pending_reg <= msi_pending_reg | msi_trigger;
                if (!msi_on && !msix_on) begin
                    // messages disabled by the host: nothing can be sent, nothing is queued
                    msi_pending_reg <= {NIRQ{1'b0}};
                end else if (pba_go) begin
                    // a pending MSI-X entry was unmasked
                    msix_pba_reg[msix_vec] <= 1'b0;
                    msi_timer_reg <= 17'd0;
                    msi_state_reg <= MSI_WAIT;
                end else if (msi_send) begin
                    msi_pending_reg <= (msi_pending_reg & ~msi_sel_mask[NIRQ-1:0]) | msi_trigger;
                    if (msix_on && sel_masked) begin
                        // logged in the PBA; a user interrupt is taken
                        msix_pba_reg[msix_vec] <= 1'b1;
                        usr_ack_reg <= msi_sel_mask[NSRC-1:NIRQ];
                        usr_done_reg <= (usr_done_reg & usr_irq_req) | msi_sel_mask[NSRC-1:NIRQ];
                    end else begin
                        if (!msix_on) begin
                            msi_int_reg <= 32'd1 << msi_vec;
                        end
                        usr_sending_reg <= msi_sel_mask[NSRC-1:NIRQ];
                        msi_timer_reg <= 17'd0;
                        msi_state_reg <= MSI_WAIT;
                    end
                end
            end
            MSI_WAIT: begin
                msi_pending_reg <= msi_pending_reg | msi_trigger;
                msi_timer_reg <= msi_timer_reg + 17'd1;
                if (msi_done) begin
                    usr_ack_reg <= usr_sending_reg;
                    usr_done_reg <= (usr_done_reg & usr_irq_req) | usr_sending_reg;
                    usr_sending_reg <= {NU{1'b0}};
                    msi_state_reg <= MSI_IDLE;
                end
            end
            default: msi_state_reg <= MSI_IDLE;
        endcase

        if (rst) begin
            chan_int_en_d_reg <= {NIRQ{1'b0}};
            msi_state_reg <= MSI_IDLE;
            msi_pending_reg <= {NIRQ{1'b0}};
            msi_int_reg <= 32'd0;
            msix_int_reg <= 1'b0;
            msix_address_reg <= 64'd0;
            msix_data_reg <= 32'd0;
            msix_pba_reg <= {NV{1'b0}};
            msi_timer_reg <= 17'd0;
            usr_done_reg <= {NU{1'b0}};
            usr_ack_reg <= {NU{1'b0}};
            usr_sending_reg <= {NU{1'b0}};
        end
    end
end

// Legacy interrupts (PG195, PG213).  With MSI and MSI-X both off, INTA is the level of
// every enabled, active source: a channel's interrupt bit (its status under its mask,
// enabled in the channel interrupt enable register), a user request (enabled in the
// user interrupt enable register).  The hard IP sends Assert_INTA when
// cfg_interrupt_int[0] rises and Deassert_INTA when it falls (or neither while the
// host's Interrupt Disable is set) and pulses cfg_interrupt_sent for each change; the
// level is held until then, or for MSI_TIMEOUT_CYCLES.  A rise a channel causes waits
// for the write fence, as its MSI would.  A user request is acknowledged twice, as
// XDMA's: once the line is up (its Assert sent), and again once the request has fallen
// and the line says so (its Deassert sent, or the line held up by another source).
wire legacy_on = !msi_on && !msix_on;
wire [NIRQ-1:0] leg_chan = irq_src & chan_int_en;
wire [NU-1:0] leg_user = usr_irq_req & user_int_en;
wire leg_want = legacy_on && (leg_chan != {NIRQ{1'b0}} || leg_user != {NU{1'b0}});

reg leg_int_reg;
reg leg_wait_reg;
reg [16:0] leg_timer_reg;
reg [NU-1:0] leg_up_reg;
reg [NU-1:0] leg_ack_reg;

initial begin
    leg_int_reg = 1'b0;
end

assign cfg_interrupt_int = {3'b000, leg_int_reg};
assign cfg_interrupt_pending = {3'b000, leg_int_reg};
assign leg_ack = leg_ack_reg;

wire leg_raise = !leg_wait_reg && !leg_int_reg && legacy_on &&
                 ((leg_chan != {NIRQ{1'b0}} && fence_ok) || leg_user != {NU{1'b0}});
wire leg_drop = !leg_wait_reg && leg_int_reg && !leg_want;
wire [NU-1:0] leg_ack_first = leg_user & ~leg_up_reg & {NU{leg_int_reg && !leg_wait_reg}};
wire [NU-1:0] leg_ack_second = leg_up_reg & ~usr_irq_req &
                               {NU{!leg_wait_reg && (!leg_int_reg || leg_want)}};
// a clock enable, as for the message sender above
wire leg_wake = rst || leg_wait_reg || leg_raise || leg_drop || |leg_ack_reg ||
                |leg_ack_first || |leg_ack_second || (!legacy_on && |leg_up_reg);

always @(posedge clk) begin
    if (leg_wake) begin
        leg_ack_reg <= leg_ack_first | leg_ack_second;
        leg_up_reg <= legacy_on ? (leg_up_reg | leg_ack_first) & ~leg_ack_second : {NU{1'b0}};
        if (leg_wait_reg) begin
            leg_timer_reg <= leg_timer_reg + 17'd1;
            if (cfg_interrupt_sent || leg_timer_reg == MSI_TIMEOUT_CYCLES[16:0]) begin
                leg_wait_reg <= 1'b0;
            end
        end else if (leg_raise || leg_drop) begin
            leg_int_reg <= leg_raise;
            leg_wait_reg <= 1'b1;
            leg_timer_reg <= 17'd0;
        end

        if (rst) begin
            leg_int_reg <= 1'b0;
            leg_wait_reg <= 1'b0;
            leg_timer_reg <= 17'd0;
            leg_up_reg <= {NU{1'b0}};
            leg_ack_reg <= {NU{1'b0}};
        end
    end
end

endmodule

`resetall
