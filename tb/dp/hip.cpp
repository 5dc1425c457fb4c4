// SPDX-License-Identifier: MIT
/*
 * The hard-IP model's requester side in the compiled data path (docs/performance.md,
 * "Design: the compiled data path", stage 3): its table of active requests and what it
 * does with a completion for one, rule for rule as cocotbext-pcie's
 * UltraScalePlusPcieDevice.upstream_recv (the completion branch) with
 * tb/models/hardip.py's additions (a late completion's credits, the completion data
 * credits each active request has received), so that a completion can reach the RC
 * stream without Python.
 *
 * A completion whose requester ID is one of the card's functions is the card's: its
 * error code (PG213's RC descriptor: poisoned, invalid tag, mismatched requester ID,
 * attributes or traffic class, bad status, a memory read's lower address that does
 * not match what is still owed, a read's completion without data) and whether it ends
 * its request, the lower address rebuilt to 12 bits, the request retired, the
 * completion credits given back, and the receive buffer's room (a completion that does
 * not fit is dropped with a local error). Tags past the table (10-bit tags) are
 * Python's.
 */
#include "tlp.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace {

constexpr uint32_t TAGS = 256;

/* PG213's requester completion error codes (Tlp_us's ErrorCode) */
enum ErrorCode : uint32_t {
	NORMAL_TERMINATION = 0x0,
	POISONED = 0x1,
	BAD_STATUS = 0x2,
	INVALID_LENGTH = 0x3,
	MISMATCH = 0x4,
	INVALID_ADDRESS = 0x5,
	INVALID_TAG = 0x6,
};

}  // namespace

extern "C" {

/* an active request, as a completion's checks read it (laid out as tb.dp's ctypes
 * structure says) */
struct dp_hip_request {
	uint32_t active;
	uint32_t requester_id, attr, tc;
	uint32_t mem_read;	/* a memory read (else the request ends with any completion) */
	uint32_t first_be_offset, be_byte_count;
	uint32_t pad;
	uint64_t address;
};

/* the requester side's state (laid out as tb.dp's ctypes structure says) */
struct dp_hip {
	dp_hip_request request[TAGS];
	int64_t credits_in[TAGS];	/* completion data credits received per active tag */
	int64_t cpld_credit_count;
	int64_t rx_buf_cplh_fc_count, rx_buf_cpld_fc_count;
	int64_t rx_buf_cplh_fc_limit, rx_buf_cpld_fc_limit;
	int64_t tag_available_count;
	uint32_t extended_tags;		/* function 0's Extended Tag Field Enable */
	uint32_t functions;		/* how many of function_id */
	uint32_t function_id[8];
};

/* what becomes of a completion (laid out as tb.dp's ctypes structure says) */
struct dp_hip_cpl {
	uint32_t outcome;	/* 0 not the card's, 1 for RC, 2 dropped: no buffer room */
	uint32_t error_code;
	uint32_t request_completed;
	uint32_t lower_address;
};

/*
 * Completion cpl (its data data_len bytes) for the card: what becomes of it, in *out, and
 * the state moved on: 1, or 0 when it is Python's (its tag is past the table; nothing
 * done).
 */
int dp_hip_completion(dp_hip *hip, const dp::TlpHeader *cpl, uint64_t data_len,
		      dp_hip_cpl *out)
{
	if (cpl->tag >= TAGS)
		return 0;
	bool ours = false;
	for (uint32_t k = 0; k < hip->functions; k++)
		ours = ours || hip->function_id[k] == cpl->requester_id;
	int64_t dc = int64_t((data_len / 4 + 3) / 4);
	dp_hip_request &req = hip->request[cpl->tag];

	/* tb/models/hardip.py: a late completion's credits were given back when its request
	 * ended, and are given back again below (keep the count); an active request counts
	 * the data credits it has received */
	if (!req.active) {
		if (ours)
			hip->cpld_credit_count += dc;
	} else if (cpl->requester_id == req.requester_id) {
		hip->credits_in[cpl->tag] += dc;
	}
	std::memset(out, 0, sizeof(*out));
	out->lower_address = cpl->lower_address;
	if (!ours)
		return 1;
	out->error_code = NORMAL_TERMINATION;
	if (cpl->ep)
		out->error_code = POISONED;
	if (!req.active) {
		out->error_code = INVALID_TAG;
	} else if (cpl->requester_id != req.requester_id || cpl->attr != req.attr ||
		   cpl->tc != req.tc) {
		out->error_code = MISMATCH;
	} else if (cpl->status != dp::CPL_SC) {
		out->error_code = BAD_STATUS;
		out->request_completed = 1;
		req.active = 0;
	} else if (req.mem_read) {
		int64_t la = int64_t(req.address) + req.first_be_offset + req.be_byte_count -
			     cpl->byte_count;
		if (cpl->lower_address != (la & 0x7f)) {
			out->error_code = INVALID_ADDRESS;
		} else {
			out->lower_address = uint32_t(la & 0xfff);
		}
		if (int64_t(cpl->byte_count) <=
		    int64_t(cpl->length) * 4 - int64_t(out->lower_address & 0x3)) {
			out->request_completed = 1;
			req.active = 0;
		}
		if (!cpl->has_data()) {
			out->error_code = INVALID_LENGTH;
			out->request_completed = 1;
			req.active = 0;
		}
	} else {
		out->request_completed = 1;
		req.active = 0;
	}
	hip->cpld_credit_count = std::max<int64_t>(hip->cpld_credit_count - dc, 0);
	if (hip->rx_buf_cplh_fc_count + 1 <= hip->rx_buf_cplh_fc_limit &&
	    hip->rx_buf_cpld_fc_count + dc + 1 <= hip->rx_buf_cpld_fc_limit) {
		hip->rx_buf_cplh_fc_count += 1;
		hip->rx_buf_cpld_fc_count += dc + 1;
		out->outcome = 1;
	} else {
		out->outcome = 2;
	}
	uint32_t tags = hip->extended_tags ? TAGS : 32, free_tags = 0;
	for (uint32_t t = 0; t < tags; t++)
		free_tags += !hip->request[t].active;
	hip->tag_available_count = free_tags;
	return 1;
}

}  // extern "C"
