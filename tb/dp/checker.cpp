// SPDX-License-Identifier: MIT
/*
 * The protocol checker's request and completion rules in the compiled data path
 * (docs/performance.md, "Design: the compiled data path", stage 4): tb/env/link.py's
 * ProtocolChecker, rule for rule, with its table of outstanding requests here, so a
 * TLP the library moves is checked without Python and a TLP Python moves against the
 * same table.
 *
 * What it checks, as the Python checker does (PCIe Base, "Transaction Layer
 * Protocol"): a memory request's payload against MPS, a read against MRRS, the 4 KiB
 * boundary, the address bits and format, the byte enables; configuration and I/O
 * requests' length; a non-posted request's tag against its requester's tag width and
 * the tags in use; and each completion against the request it answers (attributes,
 * status, data, payload, length, byte count, lower address, the read completion
 * boundary). Messages stay Python's (they keep no state).
 *
 * A broken rule is a record (what, its numbers, the request it concerns): Python
 * formats the message, stamps the time and raises or keeps it. With ``stop`` set (a
 * checker that raises, where no violation is expected) the check ends at the first
 * broken rule, where the Python checker's exception ends it.
 */
#include "tlp.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

using dp::TlpHeader;

/* what a record says (tb/env/compiled_checker.py's table formats each) */
enum Code : uint32_t {
	V_UNEXPECTED = 1,	/* a completion no request is waiting for */
	V_CPL_ATTR,		/* a: TC, b: attributes; the request */
	V_CPL_STATUS,		/* a: status; the request */
	V_CPL_ERROR_DATA,	/* an unsuccessful completion with a payload */
	V_CPL_NO_DATA,		/* a successful read completion without data */
	V_CPL_MPS,		/* a: payload bytes */
	V_LENGTH,		/* a: payload bytes carried, b: length field (DWs) */
	V_BYTE_COUNT,		/* a: byte count, b: bytes still owed; the request */
	V_LOWER_ADDRESS,	/* a: lower address, b: next byte's address */
	V_CPL_EMPTY,		/* a completion carrying no requested byte */
	V_RCB,			/* a: where a partial completion ends */
	V_CPL_FINAL_LENGTH,	/* a: bytes carried, b: offset, c: DWs needed */
	V_CFG_IO_LENGTH,
	V_TAG_WIDTH,		/* a: tag, b: the requester's tag bits */
	V_TAG_IN_USE,		/* a: tag; the request outstanding */
	V_MPS,			/* a: payload bytes */
	V_MRRS,			/* a: bytes read */
	V_4K,			/* a: address, b: bytes */
	V_ADDRESS,
	V_ADDRESS_64,		/* a: address */
	V_ADDRESS_32,		/* a: address */
	V_BE_1DW,
	V_BE_ZERO,
	V_BE_CONTIGUOUS,
	N_LATE = 64,		/* not a violation: a completion after its request timed out */
};

enum Kind : uint8_t { MEM_READ = 0, CFG = 1, OTHER = 2 };

struct Request {
	uint64_t order;		/* when it was first registered under its key */
	uint64_t next_addr;	/* the address of the next byte a completion must carry */
	int64_t remaining;	/* bytes still to complete */
	uint8_t kind;
	TlpHeader hdr;		/* the request, to describe it */
};

struct Stop {};

}  // namespace

/* one record: laid out as tb/env/compiled_checker.py's ctypes structure says */
struct dp_ck_record {
	uint32_t code;
	uint32_t has_request;
	int64_t a, b, c;
	TlpHeader request;
};

struct dp_checker {
	int64_t mps = 256, mrrs = 512, rcb = 64;
	uint32_t default_tag_bits = 8;
	std::unordered_map<uint16_t, uint32_t> tag_bits;
	std::unordered_map<uint64_t, Request> outstanding;
	std::map<uint64_t, uint64_t> order;	/* registration order -> key */
	std::unordered_set<uint64_t> timed_out;
	uint64_t next_order = 0;
	uint64_t tlps = 0, late = 0;
	std::vector<dp_ck_record> records;
	bool stop = false;

	static uint64_t key(uint32_t link, uint32_t dir, uint16_t rid, uint16_t tag)
	{
		return uint64_t(link) << 40 | uint64_t(dir & 1) << 32 | uint64_t(rid) << 16 | tag;
	}

	void fail(uint32_t code, int64_t a = 0, int64_t b = 0, int64_t c = 0,
		  const Request *req = nullptr)
	{
		dp_ck_record r{};

		r.code = code;
		r.a = a;
		r.b = b;
		r.c = c;
		if (req) {
			r.has_request = 1;
			r.request = req->hdr;
		}
		records.push_back(r);
		if (stop)
			throw Stop{};
	}

	void forget(uint64_t k)
	{
		auto it = outstanding.find(k);

		order.erase(it->second.order);
		outstanding.erase(it);
	}

	void observe(uint32_t link, uint32_t dir, const TlpHeader &h, uint64_t data_len);
	void completion(uint32_t link, uint32_t dir, const TlpHeader &h, uint64_t data_len);
	void memory_request(const TlpHeader &h, uint64_t data_len, bool write, bool wide);
	void byte_enables(const TlpHeader &h);
};

void dp_checker::observe(uint32_t link, uint32_t dir, const TlpHeader &h, uint64_t data_len)
{
	tlps++;
	bool with_data = h.has_data();
	if (h.type == dp::TYPE_CPL) {
		completion(link, dir, h, data_len);
		return;
	}
	bool mem = h.type == dp::TYPE_MEM;
	if (mem) {
		memory_request(h, data_len, with_data, h.four_dw());
		if (with_data)
			return;	/* a posted write: no completion to wait for */
	} else if (h.is_config() || h.type == dp::TYPE_IO) {
		if (h.length != 1 || h.last_be != 0)
			fail(V_CFG_IO_LENGTH);
	} else {
		return;	/* the rest: no request/completion bookkeeping */
	}
	auto bits_it = tag_bits.find(h.requester_id);
	uint32_t bits = bits_it == tag_bits.end() ? default_tag_bits : bits_it->second;
	if (bits < 16 && (h.tag >> bits))
		fail(V_TAG_WIDTH, h.tag, bits);
	uint64_t k = key(link, dir, h.requester_id, h.tag);
	auto it = outstanding.find(k);
	if (it != outstanding.end())
		fail(V_TAG_IN_USE, h.tag, 0, 0, &it->second);
	timed_out.erase(k);
	Request req{};
	req.hdr = h;
	if (mem) {
		req.kind = MEM_READ;
		if (h.length == 1 && h.first_be == 0) {
			/* a flush: one byte, its lower address the DWORD's */
			req.next_addr = h.address & ~uint64_t(3);
			req.remaining = 1;
		} else {
			req.next_addr = h.address + h.first_be_offset();
			req.remaining = int64_t(h.length) * 4 - int64_t(h.first_be_offset()) -
					int64_t(h.last_be_offset());
		}
	} else {
		req.kind = h.is_config() ? CFG : OTHER;
		req.next_addr = 0;
		req.remaining = 4;
	}
	if (it != outstanding.end()) {
		/* a dict keeps a replaced key's place */
		req.order = it->second.order;
		it->second = req;
	} else {
		req.order = next_order++;
		order.emplace(req.order, k);
		outstanding.emplace(k, req);
	}
}

void dp_checker::completion(uint32_t link, uint32_t dir, const TlpHeader &h, uint64_t data_len)
{
	uint64_t k = key(link, dir ^ 1, h.requester_id, h.tag);
	auto it = outstanding.find(k);

	if (it == outstanding.end()) {
		if (timed_out.count(k)) {
			late++;
			records.push_back(dp_ck_record{N_LATE, 0, 0, 0, 0, TlpHeader{}});
			return;
		}
		fail(V_UNEXPECTED);
		return;
	}
	Request &req = it->second;
	if (h.tc != req.hdr.tc || (h.attr & 3) != (req.hdr.attr & 3))
		fail(V_CPL_ATTR, h.tc, h.attr, 0, &req);
	unsigned status = h.status;
	if (!(status == dp::CPL_SC || status == dp::CPL_UR || status == dp::CPL_CRS ||
	      status == dp::CPL_CA) ||
	    (status == dp::CPL_CRS && req.kind != CFG))
		fail(V_CPL_STATUS, status, 0, 0, &req);
	if (status != dp::CPL_SC) {
		if (h.has_data() || h.length != 0)
			fail(V_CPL_ERROR_DATA);
		forget(k);
		return;
	}
	if (req.kind != MEM_READ) {
		forget(k);
		return;
	}
	if (!h.has_data()) {
		fail(V_CPL_NO_DATA);
		forget(k);
		return;
	}
	int64_t payload = int64_t(h.length) * 4;
	if (payload > mps)
		fail(V_CPL_MPS, payload);
	if (int64_t(data_len) != payload)
		fail(V_LENGTH, int64_t(data_len), h.length);
	if (int64_t(h.byte_count) != req.remaining)
		fail(V_BYTE_COUNT, h.byte_count, req.remaining, 0, &req);
	if (h.lower_address != (req.next_addr & 0x7f))
		fail(V_LOWER_ADDRESS, h.lower_address, int64_t(req.next_addr));
	int64_t offset = int64_t(req.next_addr & 3);
	int64_t carried = std::min(req.remaining, payload - offset);
	if (carried <= 0) {
		fail(V_CPL_EMPTY);
		forget(k);
		return;
	}
	if (carried < req.remaining) {
		int64_t end = int64_t(req.next_addr) + carried;
		if (end % rcb)
			fail(V_RCB, end);
	} else if ((offset + carried + 3) / 4 != int64_t(h.length)) {
		fail(V_CPL_FINAL_LENGTH, carried, offset, (offset + carried + 3) / 4);
	}
	req.remaining -= carried;
	req.next_addr += uint64_t(carried);
	if (req.remaining <= 0)
		forget(k);
}

void dp_checker::memory_request(const TlpHeader &h, uint64_t data_len, bool write, bool wide)
{
	int64_t nbytes = int64_t(h.length) * 4;

	if (write) {
		if (int64_t(data_len) != nbytes)
			fail(V_LENGTH, int64_t(data_len), h.length);
		if (nbytes > mps)
			fail(V_MPS, nbytes);
	} else if (nbytes > mrrs) {
		fail(V_MRRS, nbytes);
	}
	if (int64_t(h.address & 0xfff) + nbytes > 0x1000)
		fail(V_4K, int64_t(h.address), nbytes);
	if (h.address & 3)
		fail(V_ADDRESS);
	if (wide && (h.address >> 32) == 0)
		fail(V_ADDRESS_64, int64_t(h.address));
	else if (!wide && (h.address >> 32))
		fail(V_ADDRESS_32, int64_t(h.address));
	byte_enables(h);
}

void dp_checker::byte_enables(const TlpHeader &h)
{
	unsigned first = h.first_be, last = h.last_be;

	if (h.length == 1) {
		if (last != 0)
			fail(V_BE_1DW);
		return;	/* first BE 0: a zero-length read or write, which PCIe allows */
	}
	if (first == 0 || last == 0) {
		fail(V_BE_ZERO);
		return;
	}
	if (h.length == 2 && (h.address & 7) == 0)
		return;	/* QW-aligned 2 DW requests may use non-contiguous byte enables */
	bool first_ok = first == 0xf || first == 0xe || first == 0xc || first == 0x8;
	bool last_ok = last == 0xf || last == 0x7 || last == 0x3 || last == 0x1;
	if (!first_ok || !last_ok)
		fail(V_BE_CONTIGUOUS);
}

extern "C" {

dp_checker *dp_ck_new(int64_t mps, int64_t mrrs, int64_t rcb)
{
	auto *ck = new dp_checker;

	ck->mps = mps;
	ck->mrrs = mrrs;
	ck->rcb = rcb;
	return ck;
}

void dp_ck_free(dp_checker *ck)
{
	delete ck;
}

/* the programmed sizes (bytes) and the completers' boundary */
void dp_ck_set_sizes(dp_checker *ck, int64_t mps, int64_t mrrs, int64_t rcb)
{
	ck->mps = mps;
	ck->mrrs = mrrs;
	ck->rcb = rcb;
}

/* the tag width of requester rid (0 to 16 bits), or of any other when rid is < 0 */
void dp_ck_set_tag_bits(dp_checker *ck, int32_t rid, uint32_t bits)
{
	if (rid < 0)
		ck->default_tag_bits = bits;
	else
		ck->tag_bits[uint16_t(rid)] = bits;
}

/*
 * Check the TLP of header h, carrying data_len bytes, received on link travelling dir
 * (0 up, 1 down): the records it left, to read with dp_ck_record (stop: end at the
 * first broken rule).
 */
uint32_t dp_ck_observe(dp_checker *ck, uint32_t link, uint32_t dir, const TlpHeader *h,
		       uint64_t data_len, int stop)
{
	ck->records.clear();
	ck->stop = stop != 0;
	try {
		ck->observe(link, dir, *h, data_len);
	} catch (const Stop &) {
	}
	return uint32_t(ck->records.size());
}

/* the records the last check left */
uint32_t dp_ck_records(const dp_checker *ck)
{
	return uint32_t(ck->records.size());
}

/* count the TLPs of a kind checked elsewhere (messages) */
void dp_ck_count(dp_checker *ck)
{
	ck->tlps++;
}

const dp_ck_record *dp_ck_record_at(const dp_checker *ck, uint32_t i)
{
	return i < ck->records.size() ? &ck->records[i] : nullptr;
}

uint64_t dp_ck_tlps(const dp_checker *ck)
{
	return ck->tlps;
}

uint64_t dp_ck_late(const dp_checker *ck)
{
	return ck->late;
}

/*
 * The requests outstanding on link (any when it is negative), in the order they were
 * first seen, into out (room for max): how many there are.
 */
uint32_t dp_ck_outstanding(const dp_checker *ck, int64_t link, TlpHeader *out, uint32_t max)
{
	uint32_t n = 0;

	for (const auto &[_, k] : ck->order) {
		if (link >= 0 && (k >> 40) != uint64_t(link))
			continue;
		if (n < max)
			out[n] = ck->outstanding.at(k).hdr;
		n++;
	}
	return n;
}

/* the requester gave the request up on link, dir: later completions for it are late */
void dp_ck_timeout(dp_checker *ck, uint32_t link, uint32_t dir, uint16_t rid, uint16_t tag)
{
	uint64_t k = dp_checker::key(link, dir, rid, tag);

	if (ck->outstanding.count(k)) {
		ck->forget(k);
		ck->timed_out.insert(k);
	}
}

/* ... on every link and direction it was seen */
void dp_ck_gave_up(dp_checker *ck, uint16_t rid, uint16_t tag)
{
	std::vector<uint64_t> keys;

	for (const auto &[_, k] : ck->order)
		if ((k & 0xffffffff) == (uint64_t(rid) << 16 | tag))
			keys.push_back(k);
	for (uint64_t k : keys) {
		ck->forget(k);
		ck->timed_out.insert(k);
	}
}

/* every request outstanding on link (any when negative) is over: into out as listed */
uint32_t dp_ck_abandon(dp_checker *ck, int64_t link, TlpHeader *out, uint32_t max)
{
	uint32_t n = dp_ck_outstanding(ck, link, out, max);
	std::vector<uint64_t> keys;

	for (const auto &[_, k] : ck->order)
		if (link < 0 || (k >> 40) == uint64_t(link))
			keys.push_back(k);
	for (uint64_t k : keys) {
		ck->forget(k);
		ck->timed_out.insert(k);
	}
	return n;
}

}  // extern "C"
