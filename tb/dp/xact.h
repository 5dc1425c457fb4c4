/* SPDX-License-Identifier: MIT */
/*
 * The transactor model's stream layout and a completion's RC fields, as xact.cpp packs
 * them and hip.cpp queues them (laid out as tb/dp's ctypes structures say).
 */
#ifndef PEVB_DP_XACT_H
#define PEVB_DP_XACT_H

#include <cstdint>

extern "C" {

/* a stream's layout below 512 bits with one segment: dwords a beat, the bus's tdata,
 * tuser and tkeep widths, where tuser keeps the parity and the discontinue bit */
struct dp_stream {
	uint32_t lanes, dw, uw, kw;
	uint32_t parity_offset, discontinue_offset;
};

/* a completion's fields, as Tlp_us.pack_us_rc reads them */
struct dp_rc_fields {
	uint32_t lower_address, error_code, byte_count, locked, request_completed;
	uint32_t length, status, ep, requester_id, tag, completer_id, tc, attr;
	uint32_t discontinue;
};

/* completions for RC the library took for the card, in order (xact.cpp) */
struct dp_rcq;
void dp_rcq_add(dp_rcq *q, const dp_rc_fields *f, const uint8_t *data, uint32_t ndw);
uint32_t dp_rcq_size(const dp_rcq *q);

/* the hard-IP model's RC loop where the library runs it (rcloop.cpp), and the model's
 * counters it moves (hip.cpp's dp_hip's fields): the receive buffer's counts it drops
 * after each completion, and the flag that says the loop is the library's */
struct dp_rc_loop;
struct dp_rc_counts {
	int64_t *cplh, *cpld;
	uint32_t *owned;
};
dp_rc_loop *dp_rc_loop_new(dp_rcq *q, const dp_rc_counts *counts);
void dp_rc_loop_free(dp_rc_loop *l);
int dp_rc_loop_ready(const dp_rc_loop *l);
int dp_rc_loop_owned(const dp_rc_loop *l);
void dp_rc_loop_start(dp_rc_loop *l);

}  // extern "C"

#endif /* PEVB_DP_XACT_H */
