// SPDX-License-Identifier: MIT
/*
 * The transactor model's beat words in the compiled data path (tb/models/transactors.py,
 * below 512 bits with one segment; docs/performance.md, "Design: the compiled data
 * path"), made and read by the library and moved through the simulator (vpi.cpp):
 *
 * - a completion for the requester completion stream (RC): the words the RC
 *   transactor's buffer holds for it (_TransactorSource._pack_tlp), made from its
 *   descriptor's fields and payload as Tlp_us.pack_us_rc makes the frame (the
 *   descriptor's three dwords, the payload's byte enables from the lower address and
 *   byte count, odd parity per byte);
 * - the words the RQ and CC transactors' buffers hold, unpacked into frames as
 *   _TransactorSink._unpack unpacks them (cocotbext-pcie's RqSink and CcSink): a beat
 *   starts a frame when none is open or the open one has no dword yet, keeps the
 *   dwords and parity of the lanes its tkeep marks, RQ's first beat gives the byte
 *   enables and the sequence number, tlast ends the frame.
 *
 * A word is ((tlast << kw | tkeep) << uw | tuser) << dw | tdata, as limbs of 32 bits.
 */
#include "xact.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

struct dp_words;

extern "C" {
void dp_vpi_write_run(dp_words *w, uint32_t start, uint32_t count, const uint8_t *bytes,
		      uint32_t stride);
void dp_vpi_read_run(dp_words *w, uint32_t start, uint32_t count, uint8_t *bytes,
		     uint32_t stride);

}  // extern "C"

namespace {

/* nbits of value into the little-endian bit string out from bit at (ORed in), a byte's
 * worth at a time */
void put_bits(uint8_t *out, uint32_t at, uint64_t value, uint32_t nbits)
{
	while (nbits) {
		uint32_t off = at % 8, take = std::min(8 - off, nbits);

		out[at / 8] |= uint8_t((value & ((1u << take) - 1)) << off);
		value >>= take;
		at += take;
		nbits -= take;
	}
}

/* nbits (at most 64) of the little-endian bit string in from bit at, a byte's worth at
 * a time */
uint64_t get_bits(const uint8_t *in, uint32_t at, uint32_t nbits)
{
	uint64_t value = 0;

	for (uint32_t got = 0; got < nbits;) {
		uint32_t off = at % 8, take = std::min(8 - off, nbits - got);

		value |= uint64_t((in[at / 8] >> off) & ((1u << take) - 1)) << got;
		got += take;
		at += take;
	}
	return value;
}

/* each byte's even parity bit, inverted: the interface's odd parity of a dword */
uint32_t odd_parity(uint32_t d)
{
	uint32_t p = 0;

	for (int b = 0; b < 4; b++)
		p |= uint32_t(__builtin_parity((d >> (8 * b)) & 0xff)) << b;
	return p ^ 0xf;
}

}  // namespace

extern "C" {

/*
 * The RC buffer words of completion f with its payload (data, ndw dwords) on stream s,
 * into out (stride bytes a word, zeroed here): how many.
 */
uint32_t dp_rc_pack(const dp_rc_fields *f, const uint8_t *data, uint32_t ndw,
		    const dp_stream *s, uint8_t *out, uint32_t stride)
{
	std::vector<uint32_t> dws(3 + ndw);
	std::vector<uint8_t> be(3 + ndw, 0);

	dws[0] = (f->lower_address & 0xfff) | (f->error_code & 0xf) << 12 |
		 (f->byte_count & 0x1fff) << 16 | uint32_t(f->locked != 0) << 29 |
		 uint32_t(f->request_completed != 0) << 30;
	dws[1] = (f->length & 0x7ff) | (f->status & 0x7) << 11 | uint32_t(f->ep != 0) << 14 |
		 (f->requester_id & 0xffff) << 16;
	dws[2] = (f->tag & 0xff) | (f->completer_id & 0xffff) << 8 | (f->tc & 0x7) << 25 |
		 (f->attr & 0x7) << 28;
	for (uint32_t k = 0; k < ndw; k++)
		dws[3 + k] = uint32_t(data[4 * k]) | uint32_t(data[4 * k + 1]) << 8 |
			     uint32_t(data[4 * k + 2]) << 16 | uint32_t(data[4 * k + 3]) << 24;
	uint32_t first_be = (0xfu << (f->lower_address & 3)) & 0xf;
	uint32_t last_be;
	if (uint64_t(f->byte_count) + (f->lower_address & 3) > uint64_t(f->length) * 4)
		last_be = 0xf;
	else
		last_be = 0xfu >> ((4 - f->byte_count - f->lower_address) & 3);
	if (ndw == 1)
		be[3] = uint8_t(first_be & last_be);
	else if (ndw > 1) {
		be[3] = uint8_t(first_be);
		for (uint32_t k = 4; k < 2 + ndw; k++)
			be[k] = 0xf;
		be[2 + ndw] = uint8_t(last_be);
	}
	uint32_t n = 3 + ndw, off = 0, words = 0;
	uint32_t disc = f->discontinue ? 1 : 0;
	for (;;) {
		uint8_t *w = out + size_t(words) * stride;
		uint32_t m = std::min(s->lanes, n - off);
		bool last;

		std::memset(w, 0, stride);
		for (uint32_t k = 0; k < m; k++) {
			uint32_t d = off + k;

			put_bits(w, 32 * k, dws[d], 32);
			put_bits(w, s->dw + 4 * k, be[d], 4);
			put_bits(w, s->dw + 4 * k + s->parity_offset, odd_parity(dws[d]), 4);
		}
		for (uint32_t k = m; k < s->lanes; k++)	/* empty lanes: parity all ones */
			put_bits(w, s->dw + 4 * k + s->parity_offset, 0xf, 4);
		put_bits(w, s->dw + s->discontinue_offset, disc, 1);
		if (words == 0)
			put_bits(w, s->dw + 32, 1, 1);	/* is_sop */
		off += m;
		last = off >= n;
		if (last) {
			put_bits(w, s->dw + 34, 1, 1);	/* is_eop, and its last lane */
			put_bits(w, s->dw + 35, m ? m - 1 : 0, 4);
		}
		put_bits(w, s->dw + s->uw, (1u << m) - 1, s->kw);	/* tkeep */
		put_bits(w, s->dw + s->uw + s->kw, last, 1);		/* tlast */
		words++;
		if (last)
			return words;
	}
}

/*
 * Completion f (its payload data, ndw dwords) packed as dp_rc_pack packs it and
 * written into the RC transactor's words from word start on, through the simulator:
 * how many words.
 */
uint32_t dp_rc_push(dp_words *w, uint32_t start, const dp_rc_fields *f, const uint8_t *data,
		    uint32_t ndw, const dp_stream *s, uint32_t stride)
{
	uint32_t most = (3 + ndw + s->lanes - 1) / s->lanes + 1;
	std::vector<uint8_t> out(size_t(most) * stride);
	uint32_t count = dp_rc_pack(f, data, ndw, s, out.data(), stride);

	dp_vpi_write_run(w, start, count, out.data(), stride);
	return count;
}

/*
 * The unpacker of an RQ or CC sink (rq: RQ's first-beat fields; seq_hi: the sequence
 * number's two high bits at tuser 61:60, a 62-bit RQ tuser), with the frame a run of
 * words left open. dp_unpack_run puts each frame a run ends in out, one after another:
 * its dwords n, first and last byte enables, sequence number, discontinue, then its n
 * dwords and their n parity nibbles.
 */
struct dp_unpacker {
	dp_stream s;
	bool rq, seq_hi;
	bool open = false;		/* a frame begun (open with no dword: started anew) */
	bool active = false;		/* the last beat did not end its frame */
	uint32_t first_be = 0, last_be = 0, seq_num = 0, discontinue = 0;
	std::vector<uint32_t> data, parity;
	std::vector<uint32_t> out;
	std::vector<uint8_t> words;

	void start(uint64_t tuser)
	{
		open = true;
		data.clear();
		parity.clear();
		first_be = last_be = seq_num = discontinue = 0;
		if (rq) {
			first_be = tuser & 0xf;
			last_be = (tuser >> 4) & 0xf;
			seq_num = (tuser >> 24) & 0xf;
			if (seq_hi)
				seq_num |= ((tuser >> 60) & 0x3) << 4;
		}
	}

	void end()
	{
		out.push_back(uint32_t(data.size()));
		out.push_back(first_be);
		out.push_back(last_be);
		out.push_back(seq_num);
		out.push_back(discontinue);
		out.insert(out.end(), data.begin(), data.end());
		out.insert(out.end(), parity.begin(), parity.end());
		open = false;
	}
};

dp_unpacker *dp_unpacker_new(const dp_stream *s, int rq, int seq_hi)
{
	auto *u = new dp_unpacker();

	u->s = *s;
	u->rq = rq != 0;
	u->seq_hi = seq_hi != 0;
	return u;
}

void dp_unpacker_free(dp_unpacker *u)
{
	delete u;
}

/* forget the frame left open (the link or the user side was reset) */
void dp_unpacker_reset(dp_unpacker *u)
{
	u->open = false;
	u->active = false;
}

/* whether the last beat unpacked left its frame open */
int dp_unpacker_active(const dp_unpacker *u)
{
	return u->active;
}

/*
 * count words (stride bytes each, from words) unpacked: how many frames they end;
 * *out and *len: where the frames are (until the next run)
 */
uint32_t dp_unpack(dp_unpacker *u, const uint8_t *words, uint32_t count, uint32_t stride,
		   const uint32_t **out, uint32_t *len)
{
	const dp_stream &s = u->s;
	uint32_t frames = 0;

	u->out.clear();
	for (uint32_t b = 0; b < count; b++) {
		const uint8_t *word = words + size_t(b) * stride;
		uint64_t tuser = get_bits(word, s.dw, std::min<uint32_t>(s.uw, 64));
		uint64_t tkeep = get_bits(word, s.dw + s.uw, s.kw);
		bool tlast = get_bits(word, s.dw + s.uw + s.kw, 1);

		u->active = true;
		if (!u->open || u->data.empty())
			u->start(tuser);
		if (get_bits(word, s.dw + s.discontinue_offset, 1))
			u->discontinue = 1;
		for (uint32_t k = 0; k < s.lanes; k++) {
			if (!(tkeep >> k & 1))
				continue;
			u->data.push_back(uint32_t(get_bits(word, 32 * k, 32)));
			u->parity.push_back(uint32_t(get_bits(word, s.dw + 4 * k + s.parity_offset, 4)));
		}
		if (tlast) {
			u->end();
			u->active = false;
			frames++;
		}
	}
	*out = u->out.data();
	*len = uint32_t(u->out.size());
	return frames;
}

/* count words of sink buffer w from word start on (wrapping at its depth), stride bytes
 * a word, read through the simulator and unpacked as dp_unpack unpacks them */
uint32_t dp_unpack_run(dp_unpacker *u, dp_words *w, uint32_t start, uint32_t count,
		       uint32_t stride, const uint32_t **out, uint32_t *len)
{
	u->words.resize(size_t(count) * stride);
	dp_vpi_read_run(w, start, count, u->words.data(), stride);
	return dp_unpack(u, u->words.data(), count, stride, out, len);
}

/*
 * The completions for RC that the library took for the card itself (hip.cpp,
 * dp_hip_receive), queued in order behind Python's (the hard-IP model's RC loop takes
 * each in its turn and pushes it with dp_rcq_push).
 */
struct dp_rcq {
	struct Cpl {
		dp_rc_fields f;
		std::vector<uint8_t> data;
		uint32_t ndw;
	};
	std::deque<Cpl> cpls;
	Cpl current;	/* the one taken, until it is pushed */
};

dp_rcq *dp_rcq_new(void)
{
	return new dp_rcq();
}

void dp_rcq_free(dp_rcq *q)
{
	delete q;
}

void dp_rcq_add(dp_rcq *q, const dp_rc_fields *f, const uint8_t *data, uint32_t ndw)
{
	q->cpls.push_back(dp_rcq::Cpl{*f, std::vector<uint8_t>(data, data + 4 * ndw), ndw});
}

/* the completions queued (none once the link went down: Python clears it) */
uint32_t dp_rcq_size(const dp_rcq *q)
{
	return uint32_t(q->cpls.size());
}

void dp_rcq_clear(dp_rcq *q)
{
	q->cpls.clear();
}

/* the first completion queued taken off the queue for dp_rcq_push (a reset that clears
 * the queue leaves it alone): its payload dwords */
uint32_t dp_rcq_take(dp_rcq *q)
{
	q->current = std::move(q->cpls.front());
	q->cpls.pop_front();
	return q->current.ndw;
}

/*
 * The completion taken, packed and written into the RC transactor's words from word
 * start on as dp_rc_push writes it: how many words, its data credits in *dc.
 */
uint32_t dp_rcq_push(dp_rcq *q, dp_words *w, uint32_t start, const dp_stream *s,
		     uint32_t stride, uint64_t *dc)
{
	dp_rcq::Cpl &c = q->current;

	*dc = (c.ndw + 3) / 4;
	return dp_rc_push(w, start, &c.f, c.data.data(), c.ndw, s, stride);
}

}  // extern "C"
