// SPDX-License-Identifier: MIT
/*
 * The root complex as a completer of memory requests, in the compiled data path
 * (docs/performance.md, "Design: the compiled data path", stage 3): the completions it
 * makes for a memory read and the writes it makes of a memory write, rule for rule as
 * cocotbext-pcie's RootComplex.handle_mem_read_tlp and handle_mem_write_tlp with the
 * project's correction of zero-length reads (tb/models/rc.py).
 *
 * Reads: completions with data from completer ID 0, the request's requester ID, tag,
 * traffic class and attributes, in order; each says the bytes left (byte count) and
 * the low address bits of its first byte. With split_on_all_rcb every completion ends
 * at a read completion boundary (64 or 128 bytes); otherwise a read longer than the
 * maximum payload is cut so that each piece but the last ends at a boundary. A read of
 * one DW with no byte enabled (a flush) is one DW of data, byte count 1, the DW's
 * address in lower address.
 *
 * Writes: the enabled bytes, as runs of consecutive bytes (first DW's enables, the
 * middle DWs whole, the last DW's enables).
 */
#include "tlp.h"

namespace dp {

/* a completion for request req from completer ID 0, with data or not */
TlpHeader completion_for(const TlpHeader &req, bool data, uint8_t status)
{
	TlpHeader c{};

	c.fmt = data ? FMT_3DW_DATA : FMT_3DW;
	c.type = TYPE_CPL;
	c.requester_id = req.requester_id;
	c.status = status;
	c.attr = req.attr;
	c.tag = req.tag;
	c.tc = req.tc;
	return c;
}

}  // namespace dp

extern "C" {

/*
 * The completions of memory read req: their headers into cpls and the DW offset of
 * each one's data within the read's length * 4 bytes (read at req's address) into
 * offsets; their number, or UINT32_MAX when more than cap would be needed.
 */
uint32_t dp_rc_read_completions(const dp::TlpHeader *req, uint32_t max_payload_size,
				uint32_t rcb_128, uint32_t split_on_all_rcb, dp::TlpHeader *cpls,
				uint32_t *offsets, uint32_t cap)
{
	if (req->length == 1 && req->first_be == 0) {
		if (cap < 1)
			return UINT32_MAX;
		cpls[0] = dp::completion_for(*req, true, dp::CPL_SC);
		cpls[0].length = 1;
		cpls[0].byte_count = 1;
		cpls[0].lower_address = req->address & 0x7c;
		offsets[0] = 0;
		return 1;
	}
	uint64_t addr = req->address + req->first_be_offset();
	uint32_t dw_length = req->length;
	uint32_t byte_length = req->be_byte_count();
	uint32_t max_payload_dw = 32u << max_payload_size;
	uint32_t rcb = rcb_128 ? 128 : 64;
	uint32_t rcb_mask = (rcb - 1) & 0xfc;
	uint32_t m = 0, n = 0, count = 0;

	while (m < dw_length) {
		if (count == cap)
			return UINT32_MAX;
		dp::TlpHeader &c = cpls[count];
		c = dp::completion_for(*req, true, dp::CPL_SC);
		uint32_t cpl_dw = dw_length - m;
		c.byte_count = uint16_t(byte_length - n);
		if (split_on_all_rcb) {
			uint32_t to_rcb = (rcb - (addr & rcb_mask)) >> 2;
			if (to_rcb < cpl_dw)
				cpl_dw = to_rcb;
		} else if (cpl_dw > max_payload_dw) {
			cpl_dw = max_payload_dw - uint32_t((addr & rcb_mask) >> 2);
		}
		c.lower_address = addr & 0x7f;
		c.length = cpl_dw;
		offsets[count++] = m;
		m += cpl_dw;
		n += cpl_dw * 4 - (addr & 3);
		addr += cpl_dw * 4 - (addr & 3);
	}
	return count;
}

/*
 * The writes of memory write req: runs of enabled bytes as (byte offset into its data,
 * length) pairs in runs; their number (at most 5: room for 8 is plenty).
 */
uint32_t dp_mem_write_runs(const dp::TlpHeader *req, uint32_t *runs)
{
	uint32_t count = 0, offset = 0;
	int64_t start = -1;
	auto bytes = [&](unsigned mask) {
		for (unsigned k = 0; k < 4; k++, offset++) {
			if (mask & (1u << k)) {
				if (start < 0)
					start = offset;
			} else {
				if (start >= 0 && offset != uint32_t(start)) {
					runs[2 * count] = uint32_t(start);
					runs[2 * count++ + 1] = offset - uint32_t(start);
				}
				start = -1;
			}
		}
	};

	bytes(req->first_be);
	if (req->length > 2) {
		if (start < 0)
			start = offset;
		offset += (req->length - 2) * 4;
	}
	if (req->length > 1)
		bytes(req->last_be);
	if (start >= 0 && offset != uint32_t(start)) {
		runs[2 * count] = uint32_t(start);
		runs[2 * count++ + 1] = offset - uint32_t(start);
	}
	return count;
}

}  // extern "C"
