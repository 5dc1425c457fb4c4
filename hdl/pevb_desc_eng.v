// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

`include "pevb_regs.vh"

/*
 * Descriptor engine of one SGDMA channel.  On a rising Run bit it fetches
 * XDMA descriptors from the first-descriptor address, prefetching blocks of
 * adjacent descriptors (Dsc_Adj / Nxt_adj) into a DESC_DEPTH-entry buffer,
 * each read as large as the block, the free buffer space and MRRS allow
 * (PG195), never across 4 KiB, up to DESC_FETCHES reads in flight.  Each descriptor's next
 * pointer is checked against the prefetched address; a mismatch discards the
 * prefetch and fetches from the pointer.  Descriptors are checked (magic,
 * length) and dispatched to the data mover; completions come back in order
 * and produce the completed count, the status events, the poll-mode
 * write-back and the busy flag.  Stop ends the chain after its descriptor;
 * clearing Run ends it after the descriptors in flight (PG195): the chain's
 * descriptors not yet started never run, even when Run is set again before
 * the channel is idle; that starts a new chain, from the first-descriptor
 * registers with the completed count cleared, once the old one has drained.
 * Any error stops the channel once everything in flight has drained.
 *
 * Descriptor bypass (BYPASS = 1, PG195's "descriptor bypass" channel option):
 * nothing is fetched; user logic loads descriptors into the buffer on the
 * byp_* port (src, dst, len, ctl: bit 0 Stop, 1 Completed, 4 EOP) while the
 * channel runs.  byp_ready is high while two entries are free, so one more
 * descriptor may be loaded in the cycle after it falls; a load with Run low,
 * the channel stopped on an error, or the buffer full is ignored.  Bypassed
 * descriptors run in load order with the same checks, completed count,
 * status events, write-back and error handling as fetched ones; next pointers,
 * adjacent counts and the magic play no part, and Stop reports
 * descriptor_stopped without ending the channel (every descriptor loaded while
 * Run is set runs).  busy means loaded descriptors wait or are in flight.
 */
module pevb_desc_eng #
(
    // DWORD lanes of the descriptor buffer write port
    parameter KEEP = 2,
    // descriptor buffer entries (power of two)
    parameter DESC_DEPTH = 8,
    // descriptor fetches in flight at once (1 to 7)
    parameter DESC_FETCHES = 2,
    // DWORD index width of the descriptor buffer
    parameter IDX_WIDTH = $clog2(DESC_DEPTH*8),
    // descriptors come from the byp_* port instead of fetches (0 or 1)
    parameter BYPASS = 0
)
(
    input  wire                  clk,
    input  wire                  rst,

`include "pevb_desc_ports.vh"

    /* Descriptors to the data mover */
    output wire                  m_desc_valid,
    input  wire                  m_desc_ready,
    output wire [63:0]           m_desc_src,
    output wire [63:0]           m_desc_dst,
    output wire [27:0]           m_desc_len,
    output wire [2:0]            m_desc_flags,
    output wire                  mover_restart,

    /* Completions from the data mover, in order */
    input  wire                  done_valid,
    input  wire [2:0]            done_flags,
    input  wire [4:0]            done_rd_err,
    input  wire [4:0]            done_wr_err,
    input  wire                  done_abort,

    /* Poll-mode write-back */
    output wire                  m_wb_valid,
    input  wire                  m_wb_ready,
    output wire [63:0]           m_wb_addr,
    output wire [31:0]           m_wb_data,

    /* Status */
    output wire [`PEVB_STAT_EVENT_WIDTH-1:0] event_out,
    output wire                  busy,
    output wire [31:0]           count,
    // a descriptor completed (it counts), and one that came back with EOP
    output wire                  desc_done,
    output wire                  desc_done_eop
);

localparam LOG_DEPTH = $clog2(DESC_DEPTH);
localparam BUF_DW = DESC_DEPTH*8;

localparam EVW = `PEVB_STAT_EVENT_WIDTH;

// the descriptor flags this engine passes to the data mover and gets back with each
// completion: {EOP, Completed, Stop} (its own bus, not the descriptor's bit positions)
localparam DC_STOP = 0;
localparam DC_COMPLETED = 1;
localparam DC_EOP = 2;

initial begin
    if ((1 << LOG_DEPTH) != DESC_DEPTH || DESC_DEPTH < 2 || DESC_DEPTH > 64) begin
        $error("Error: DESC_DEPTH must be a power of two from 2 to 64 (instance %m)");
        $finish;
    end
    if (BYPASS != 0 && BYPASS != 1) begin
        $error("Error: BYPASS must be 0 or 1 (instance %m)");
        $finish;
    end
    if (DESC_FETCHES < 1 || DESC_FETCHES > 7) begin
        $error("Error: DESC_FETCHES must be 1 to 7 (instance %m)");
        $finish;
    end
end

reg running_reg;
reg start_pending_reg;
reg run_d_reg;
reg stopping_reg;
reg error_reg;
// Run fell while the chain ran: the chain ends, whatever Run does next
reg run_lost_reg;
reg err_wb_done_reg;

reg [LOG_DEPTH:0] rd_ptr_reg;
reg [LOG_DEPTH:0] wr_ptr_reg;
reg [63:0] entry_addr_reg [0:DESC_DEPTH-1];
reg [BUF_DW-1:0] dv_reg;
reg [31:0] mem_reg [0:BUF_DW-1];

reg [63:0] fetch_addr_reg;
reg [6:0] fetch_rem_reg;
reg [2:0] fetch_out_reg;
reg flush_pending_reg;
reg [63:0] flush_addr_reg;
reg [6:0] flush_rem_reg;

reg [3:0] inflight_reg;
reg [31:0] count_reg;
reg wb_pending_reg;
reg [31:0] wb_data_reg;

reg [EVW-1:0] event_reg;
reg restart_reg;
reg byp_ready_reg;

// the control bits this engine acts on are Run and pollmode_wb_enable; the others belong
// to the register block.  The write-back needs pollmode_wb_enable alone (PG195's control
// register table; libxdma and Xilinx's Windows driver enable poll mode without
// ie_descriptor_completed)
wire unused_control = ^control;
wire run = control[`PEVB_CTRL_RUN];
wire wb_enabled = control[`PEVB_CTRL_POLLMODE_WB_ENABLE];

/* fetch */
wire [LOG_DEPTH:0] used = wr_ptr_reg - rd_ptr_reg;
wire [LOG_DEPTH:0] free = DESC_DEPTH[LOG_DEPTH:0] - used;
// descriptors left before the 4 KiB boundary (a misaligned pointer never fetches)
wire [7:0] max_page = 8'd128 - {1'b0, fetch_addr_reg[11:5]};
wire [2:0] mrrs_e = mrrs_enc > 3'd5 ? 3'd5 : mrrs_enc;
wire [7:0] max_mrrs = 8'd4 << mrrs_e;
reg [7:0] fetch_n;
always @* begin
    fetch_n = {1'b0, fetch_rem_reg};
    if ({{(7-LOG_DEPTH){1'b0}}, free} < fetch_n) fetch_n = {{(7-LOG_DEPTH){1'b0}}, free};
    if (max_page < fetch_n) fetch_n = max_page;
    if (max_mrrs < fetch_n) fetch_n = max_mrrs;
end

wire active = running_reg && !error_reg && !stopping_reg && !run_lost_reg;
wire fetch_misaligned = fetch_addr_reg[4:0] != 5'd0;
// a fetch from a misaligned address stops the chain with an alignment error
wire fetch_align_stop = active && !halt && !flush_pending_reg && fetch_rem_reg != 7'd0 && fetch_misaligned;
wire fetch_want = active && !halt && !flush_pending_reg && fetch_rem_reg != 7'd0 && free != 0 &&
                  fetch_out_reg < DESC_FETCHES[2:0];

/* head descriptor */
wire [LOG_DEPTH-1:0] head = rd_ptr_reg[LOG_DEPTH-1:0];
wire [LOG_DEPTH-1:0] head_next = head + 1'b1;
wire head_present = used != 0;
wire head_ready = head_present && &dv_reg[head*8 +: 8];
wire [31:0] h_ctrl = mem_reg[{head, `PEVB_DESC_DW_CONTROL}];
wire [27:0] h_len = mem_reg[{head, `PEVB_DESC_DW_LENGTH}][`PEVB_DESC_LEN];
wire [63:0] h_src = {mem_reg[{head, `PEVB_DESC_DW_SRC_HI}], mem_reg[{head, `PEVB_DESC_DW_SRC_LO}]};
wire [63:0] h_dst = {mem_reg[{head, `PEVB_DESC_DW_DST_HI}], mem_reg[{head, `PEVB_DESC_DW_DST_LO}]};
wire [63:0] h_next = {mem_reg[{head, `PEVB_DESC_DW_NEXT_HI}], mem_reg[{head, `PEVB_DESC_DW_NEXT_LO}]};
wire [6:0] h_adj_total = {1'b0, h_ctrl[`PEVB_DESC_NXT_ADJ]} + 7'd1;
wire h_magic_ok = h_ctrl[`PEVB_DESC_MAGIC_FIELD] == `PEVB_DESC_MAGIC;
wire h_len_ok = h_len != 28'd0;

wire can_dispatch = active && run && head_ready && !flush_pending_reg;
assign m_desc_valid = can_dispatch && h_magic_ok && h_len_ok;
assign m_desc_src = h_src;
assign m_desc_dst = h_dst;
assign m_desc_len = h_len;
assign m_desc_flags = {h_ctrl[`PEVB_DESC_EOP], h_ctrl[`PEVB_DESC_COMPLETED], h_ctrl[`PEVB_DESC_STOP]};
wire consume = m_desc_valid && m_desc_ready;

// fetch is not issued in a cycle that consumes (both move the pointers)
assign m_fetch_valid = fetch_want && !fetch_misaligned && !consume;
assign m_fetch_addr = fetch_addr_reg;
assign m_fetch_len = {fetch_n[7:0], 5'd0};
assign m_fetch_info = {wr_ptr_reg[LOG_DEPTH-1:0], 3'd0};
wire fetch_fire = m_fetch_valid && m_fetch_ready;

// after consuming the head: entries still reserved behind it
wire [LOG_DEPTH:0] after = used - 1'b1;
wire next_matches = entry_addr_reg[head_next] == h_next;
wire [7:0] implied = {1'b0, h_adj_total} - {{(7-LOG_DEPTH){1'b0}}, after};

assign m_wb_valid = wb_pending_reg;
assign m_wb_addr = wb_addr;
assign m_wb_data = wb_data_reg;

assign mover_restart = restart_reg;
// Events raised while a poll-mode write-back waits for the requester are held until it
// has taken the write-back, so that the interrupt they raise goes after it (the message
// sender then waits for the write to reach the hard IP: pevb_irq_tx).
reg [EVW-1:0] ev_held_reg;
assign event_out = wb_pending_reg ? {EVW{1'b0}} : (event_reg | ev_held_reg);

always @(posedge clk) begin
    if (rst) begin
        ev_held_reg <= {EVW{1'b0}};
    end else if (wb_pending_reg) begin
        ev_held_reg <= ev_held_reg | event_reg;
    end else if (ev_held_reg != {EVW{1'b0}}) begin
        ev_held_reg <= {EVW{1'b0}};
    end
end
assign count = count_reg;

/* descriptor bypass: a load takes the entry at wr_ptr, written whole in one cycle */
wire byp_accepting = BYPASS != 0 && running_reg && run && !error_reg && !run_lost_reg;
wire byp_take = byp_load && byp_accepting && free != 0;
wire [LOG_DEPTH:0] free_next = free - {{LOG_DEPTH{1'b0}}, byp_take} + {{LOG_DEPTH{1'b0}}, consume};
assign byp_ready = byp_ready_reg;
// the descriptor's DWORDs as the fetch path would have written them
wire [31:0] byp_ctrl_dw = {`PEVB_DESC_MAGIC, 2'b00, 6'd0, 3'd0, byp_ctl[`PEVB_DESC_EOP], 2'b00,
                           byp_ctl[`PEVB_DESC_COMPLETED], byp_ctl[`PEVB_DESC_STOP]};
wire [8*32-1:0] byp_dws = {32'd0, 32'd0, byp_dst, byp_src, 4'd0, byp_len, byp_ctrl_dw};
wire unused_byp_ctl = ^{byp_ctl[15:5], byp_ctl[3:2]};
generate
    if (BYPASS) begin : byp_busy
        // loaded descriptors waiting, or work in flight
        assign busy = running_reg && (used != 0 || inflight_reg != 4'd0 || wb_pending_reg);
    end else begin : chain_busy
        assign busy = running_reg;
    end
endgenerate

wire done_ok = done_valid && !done_abort && done_rd_err == 5'd0 && done_wr_err == 5'd0;
assign desc_done = done_ok;
assign desc_done_eop = done_ok && done_flags[DC_EOP];
wire done_fail = done_valid && !done_abort && (done_rd_err != 5'd0 || done_wr_err != 5'd0);
// nothing in flight: no fetch, no descriptor in the mover, no write-back pending
wire drained = inflight_reg == 4'd0 && fetch_out_reg == 3'd0 && !wb_pending_reg && !done_valid;
wire finishing = running_reg && (stopping_reg || error_reg || !run || run_lost_reg) && drained &&
                 !consume &&
                 !(error_reg && wb_enabled && !err_wb_done_reg);

// buffer DWORD written by each completion lane (wraps around the buffer). The lanes see
// the index only on a beat that writes the buffer (it moves with every completion beat,
// data included, and is used only then).
wire [IDX_WIDTH-1:0] buf_lane_base = |buf_wr_en ? buf_wr_idx : {IDX_WIDTH{1'b0}};
wire [KEEP*IDX_WIDTH-1:0] buf_lane_idx;
genvar g;
generate
    for (g = 0; g < KEEP; g = g + 1) begin : lane
        localparam [IDX_WIDTH-1:0] OFS = g;
        assign buf_lane_idx[g*IDX_WIDTH +: IDX_WIDTH] = buf_lane_base + OFS;
    end
endgenerate

// buffer entries the next fetch fills: entry e holds descriptor (e - wr_ptr) of the burst
reg [DESC_DEPTH*LOG_DEPTH-1:0] ent_ofs;
reg [DESC_DEPTH-1:0] ent_fill;
integer f;
always @* begin
    for (f = 0; f < DESC_DEPTH; f = f + 1) begin
        ent_ofs[f*LOG_DEPTH +: LOG_DEPTH] = f[LOG_DEPTH-1:0] - wr_ptr_reg[LOG_DEPTH-1:0];
        ent_fill[f] = {{(8-LOG_DEPTH){1'b0}}, ent_ofs[f*LOG_DEPTH +: LOG_DEPTH]} < fetch_n;
    end
end

// The clocked block below changes nothing while the engine is stopped with nothing in
// flight (every assignment in it would keep its register's value): it runs only when one
// of these holds (a clock enable). Event-driven simulators then skip it on idle cycles,
// where evaluating its conditions was a third of the card's cost per cycle on Icarus.
wire wake = rst || running_reg || start_pending_reg || run != run_d_reg || restart_reg ||
            event_reg != {EVW{1'b0}} || byp_ready_reg || buf_wr_en != {KEEP{1'b0}} ||
            fetch_retire_valid || flush_pending_reg || done_valid || wb_pending_reg ||
            (error_reg && wb_enabled && !err_wb_done_reg);

// finer enables inside the block, each the OR of its section's conditions
wire fetch_wake = buf_wr_en != {KEEP{1'b0}} || fetch_fire || fetch_retire_valid ||
                  fetch_align_stop;
wire done_wake = consume || done_valid || (m_wb_valid && m_wb_ready) ||
                 (error_reg && wb_enabled && !err_wb_done_reg && drained);
wire chain_wake = finishing || (!running_reg && start_pending_reg && run);

integer e, j;
always @(posedge clk) begin
    if (wake) begin
        event_reg <= {EVW{1'b0}};
        restart_reg <= 1'b0;
        run_d_reg <= run;

        if (run && !run_d_reg) begin
            start_pending_reg <= 1'b1;
        end else if (!run) begin
            start_pending_reg <= 1'b0;
        end
        if (running_reg && !run) begin
            run_lost_reg <= 1'b1;
        end

        // bypass loads: the whole entry at once
        byp_ready_reg <= byp_accepting && free_next >= 2;
        if (byp_take) begin
            for (j = 0; j < 8; j = j + 1) begin
                mem_reg[{wr_ptr_reg[LOG_DEPTH-1:0], j[2:0]}] <= byp_dws[j*32 +: 32];
            end
            dv_reg[wr_ptr_reg[LOG_DEPTH-1:0]*8 +: 8] <= 8'hFF;
            wr_ptr_reg <= wr_ptr_reg + 1'b1;
        end

        // fetches and the descriptor buffer (a finer enable: most cycles of a transfer
        // have none of these)
        if (fetch_wake) begin
            // descriptor buffer writes from completions (the loop only on cycles with one)
            if (|buf_wr_en) begin
                for (j = 0; j < KEEP; j = j + 1) begin
                    if (buf_wr_en[j]) begin
                        mem_reg[buf_lane_idx[j*IDX_WIDTH +: IDX_WIDTH]] <= buf_wr_data[j*32 +: 32];
                        dv_reg[buf_lane_idx[j*IDX_WIDTH +: IDX_WIDTH]] <= 1'b1;
                    end
                end
            end

            // fetch issue
            if (fetch_align_stop) begin
                event_reg[`PEVB_STAT_ALIGN_MISMATCH] <= 1'b1;
                error_reg <= 1'b1;
            end
            if (fetch_fire) begin
                for (e = 0; e < DESC_DEPTH; e = e + 1) begin
                    if (ent_fill[e]) begin
                        entry_addr_reg[e] <= fetch_addr_reg
                            + {{(59-LOG_DEPTH){1'b0}}, ent_ofs[e*LOG_DEPTH +: LOG_DEPTH], 5'd0};
                        dv_reg[e*8 +: 8] <= 8'd0;
                    end
                end
                wr_ptr_reg <= wr_ptr_reg + fetch_n[LOG_DEPTH:0];
                fetch_addr_reg <= fetch_addr_reg + {51'd0, fetch_n, 5'd0};
                fetch_rem_reg <= fetch_rem_reg - fetch_n[6:0];
            end
            fetch_out_reg <= fetch_out_reg + (fetch_fire ? 3'd1 : 3'd0) - (fetch_retire_valid ? 3'd1 : 3'd0);
            if (fetch_retire_valid && fetch_retire_err != 5'd0) begin
                event_reg[`PEVB_STAT_DESC_ERROR] <= fetch_retire_err;
                error_reg <= 1'b1;
            end
        end

        if (can_dispatch) begin
            // head descriptor checks
            if (can_dispatch && !h_magic_ok) begin
                event_reg[`PEVB_STAT_MAGIC_STOPPED] <= 1'b1;
                error_reg <= 1'b1;
            end else if (can_dispatch && !h_len_ok) begin
                event_reg[`PEVB_STAT_INVALID_LENGTH] <= 1'b1;
                error_reg <= 1'b1;
            end

            // dispatch and follow the next pointer
            if (consume) begin
                rd_ptr_reg <= rd_ptr_reg + 1'b1;
                if (BYPASS != 0) begin
                    // no chain to follow: Stop is reported when the descriptor completes
                end else if (h_ctrl[DC_STOP]) begin
                    stopping_reg <= 1'b1;
                end else if (after != 0) begin
                    if (next_matches) begin
                        if (!implied[7] && implied[6:0] > fetch_rem_reg) begin
                            fetch_rem_reg <= implied[6:0];
                        end
                    end else begin
                        flush_pending_reg <= 1'b1;
                        flush_addr_reg <= h_next;
                        flush_rem_reg <= h_adj_total;
                    end
                end else begin
                    if (fetch_rem_reg != 7'd0 && fetch_addr_reg == h_next) begin
                        if (h_adj_total > fetch_rem_reg) begin
                            fetch_rem_reg <= h_adj_total;
                        end
                    end else begin
                        fetch_addr_reg <= h_next;
                        fetch_rem_reg <= h_adj_total;
                    end
                end
            end
        end

        // discard a mismatched prefetch once its reads have drained
        if (flush_pending_reg && fetch_out_reg == 3'd0) begin
            flush_pending_reg <= 1'b0;
            wr_ptr_reg <= rd_ptr_reg;
            fetch_addr_reg <= flush_addr_reg;
            fetch_rem_reg <= flush_rem_reg;
        end

        if (done_wake) begin
            // completions
            inflight_reg <= inflight_reg + (consume ? 4'd1 : 4'd0) - (done_valid ? 4'd1 : 4'd0);
            if (done_fail) begin
                event_reg[`PEVB_STAT_READ_ERROR] <= done_rd_err;
                event_reg[`PEVB_STAT_WRITE_ERROR] <= done_wr_err;
                error_reg <= 1'b1;
            end
            if (done_ok) begin
                count_reg <= count_reg + 32'd1;
                if (done_flags[DC_COMPLETED]) begin
                    event_reg[`PEVB_STAT_DESC_COMPLETED] <= 1'b1;
                end
                if (done_flags[DC_STOP]) begin
                    event_reg[`PEVB_STAT_DESC_STOPPED] <= 1'b1;
                end
            end

            // poll-mode write-back: {error, count}; the latest value wins if one is pending
            if (m_wb_valid && m_wb_ready) begin
                wb_pending_reg <= 1'b0;
            end
            if (done_ok && done_flags[DC_COMPLETED] && wb_enabled) begin
                wb_pending_reg <= 1'b1;
                wb_data_reg <= 32'd0;
                wb_data_reg[`PEVB_WB_COUNT] <= count_reg[`PEVB_WB_COUNT] + 1'b1;
            end else if (error_reg && wb_enabled && !err_wb_done_reg && drained) begin
                wb_pending_reg <= 1'b1;
                wb_data_reg <= 32'd0;
                wb_data_reg[`PEVB_WB_COUNT] <= count_reg[`PEVB_WB_COUNT];
                wb_data_reg[`PEVB_WB_ERROR] <= 1'b1;
                err_wb_done_reg <= 1'b1;
            end
        end

        if (chain_wake) begin
            if (finishing) begin
                running_reg <= 1'b0;
                run_lost_reg <= 1'b0;
                if (!stopping_reg && !error_reg) begin
                    event_reg[`PEVB_STAT_IDLE_STOPPED] <= 1'b1;
                end
            end else if (!running_reg && start_pending_reg && run) begin
                // start a new chain
                start_pending_reg <= 1'b0;
                running_reg <= 1'b1;
                stopping_reg <= 1'b0;
                error_reg <= 1'b0;
                run_lost_reg <= 1'b0;
                err_wb_done_reg <= 1'b0;
                rd_ptr_reg <= 0;
                wr_ptr_reg <= 0;
                fetch_addr_reg <= desc_addr;
                fetch_rem_reg <= BYPASS != 0 ? 7'd0 : {1'b0, desc_adj} + 7'd1;
                flush_pending_reg <= 1'b0;
                count_reg <= 32'd0;
                restart_reg <= 1'b1;
            end
        end

        if (rst) begin
            running_reg <= 1'b0;
            start_pending_reg <= 1'b0;
            run_d_reg <= 1'b0;
            stopping_reg <= 1'b0;
            error_reg <= 1'b0;
            run_lost_reg <= 1'b0;
            err_wb_done_reg <= 1'b0;
            rd_ptr_reg <= 0;
            wr_ptr_reg <= 0;
            dv_reg <= {BUF_DW{1'b0}};
            fetch_rem_reg <= 7'd0;
            fetch_out_reg <= 3'd0;
            flush_pending_reg <= 1'b0;
            inflight_reg <= 4'd0;
            count_reg <= 32'd0;
            wb_pending_reg <= 1'b0;
            event_reg <= {EVW{1'b0}};
            restart_reg <= 1'b0;
            byp_ready_reg <= 1'b0;
        end
    end
end

endmodule

`resetall
