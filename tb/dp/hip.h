/* SPDX-License-Identifier: MIT */
/*
 * The hard-IP model's requester state where the library reads and moves it (hip.cpp's
 * completions, rqdrain.cpp's RQ frames), laid out as tb.dp's Hip says.
 */
#ifndef PEVB_DP_HIP_H
#define PEVB_DP_HIP_H

#include <cstdint>

constexpr uint32_t TAGS = 256;

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
	uint32_t rc_blocks;	/* why the RC loop's turn is Python's (RC_ bits) */
	uint32_t ended;		/* requests the library ended, in all (mod 2^32) */
	uint32_t rc_owned;	/* the RC loop is the library's (rcloop.cpp) */
	uint32_t rq_blocks;	/* why the RQ frames are Python's (rqdrain.cpp's RQ_ bits) */
	uint32_t rq_bme;	/* the functions whose bus mastering is on (bit per function) */
	uint32_t bus;		/* the bus number the core captured */
	uint64_t rq_seen;	/* RQ TLPs received, in all */
	uint64_t rq_posted;	/* of those the memory writes */
	int64_t cpld_credit_limit;	/* the completion credits reads may hold */
	/* the memory reads the library issued (rqdrain.cpp): each one's RQ descriptor, its
	 * byte enables and sequence number (first_be | last_be << 4 | seq_num << 8), the
	 * tags issued that Python has not looked at (a bit per tag), and how many, in all */
	uint32_t rq_desc[TAGS][4];
	uint32_t rq_be[TAGS];
	uint64_t issued[TAGS / 64];
	uint32_t issued_count;
	uint32_t rq_held;	/* RQ frames the library holds (rqdrain.cpp), received, not passed */
	uint32_t rq_waiters;	/* Python's tasks waiting for RQ frames to pass */
	uint32_t pad;
};

}  // extern "C"

/* the tags the card's requests may use (function 0's Extended Tag Field Enable) */
inline uint32_t tags_enabled(const dp_hip &hip)
{
	return hip.extended_tags ? TAGS : 32;
}

/* the tags available counted anew, as the model's get_available_tag_count counts them */
inline void count_free_tags(dp_hip &hip)
{
	uint32_t tags = tags_enabled(hip), free_tags = 0;

	for (uint32_t t = 0; t < tags; t++)
		free_tags += !hip.request[t].active;
	hip.tag_available_count = free_tags;
}

#endif /* PEVB_DP_HIP_H */
