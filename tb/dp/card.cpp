// SPDX-License-Identifier: MIT
/*
 * The card's end of its link in the compiled data path (docs/performance.md, "Design:
 * the compiled data path", stage 3): what the UltraScale+ hard-IP model
 * (cocotbext-pcie's UltraScalePlusPcieDevice with tb/models/hardip.py) does with a TLP
 * the RTL hands it, done here where nothing in Python needs to see it.
 *
 * A posted memory write from the requester request stream (RQ): its descriptor
 * (PG213, "Requester Request Descriptor Format") and data become the TLP
 * Tlp_us.unpack_us_rq makes (the request type, the address and its format, the dword
 * count, the requester ID with the bus number the core captured where the descriptor
 * does not set it, tag, traffic class, attributes, address type, byte enables), checked
 * as Tlp.check() checks it, and sent on the card's link as CompiledTlpPort.send sends
 * it: at once where it need not wait (its credits there, the wire's place free), else
 * after Python's credit gate has waited. Anything else (another request type, a
 * poisoned write, a TLP that fails the check) is left to Python with nothing done.
 *
 * A completion for the requester completion stream (RC): the words the RC transactor's
 * buffer holds for it (tb/models/transactors.py, _TransactorSource._pack_tlp below 512
 * bits with one segment), made from its descriptor's fields and payload as
 * Tlp_us.pack_us_rc makes the frame (the descriptor's three dwords, the payload's byte
 * enables from the lower address and byte count, odd parity per byte), and written
 * into the buffer through the simulator (vpi.cpp).
 */
#include "dp.h"
#include "tlp.h"

#include <algorithm>
#include <cstring>
#include <vector>

struct dp_words;

extern "C" {
void dp_vpi_write_run(dp_words *w, uint32_t start, uint32_t count, const uint8_t *bytes,
		      uint32_t stride);
int dp_port_take_credit(dp_port *port, uint32_t vc, uint32_t type, uint64_t dc);
int dp_port_must_wait(dp_port *port, uint64_t now);
void dp_port_send(dp_port *port, uint64_t now, uint64_t tlp, uint64_t nbytes, uint32_t vc,
		  uint32_t type, uint64_t dc);
}

namespace {

/* the Req Type of a memory write (PG213, Table "Transaction Types") */
constexpr uint32_t REQ_MEM_WRITE = 0x1;
/* the credit type of a posted request */
constexpr uint32_t FC_POSTED = 0;

}  // namespace

extern "C" {

/*
 * The TLP Tlp_us.unpack_us_rq makes of an RQ frame's dwords (dw, n of them: the
 * descriptor's four, then the data) and its byte enables, the requester ID's bus set to
 * bus where the descriptor leaves it to the core: its header into *h and its data
 * length in bytes; 0 where it is not a memory write this path moves (no poisoned
 * write, no reserved address type, no length outside 1 to 1024 dwords).
 */
int dp_rq_write_tlp(const uint32_t *dw, uint32_t n, uint32_t first_be, uint32_t last_be,
		    uint32_t bus, dp::TlpHeader *h, uint64_t *data_len)
{
	if (n < 4 || ((dw[2] >> 11) & 0xf) != REQ_MEM_WRITE || (dw[2] & (1u << 15)))
		return 0;
	if ((dw[0] & 3) == 3)	/* a reserved address type: the hard IP refuses it */
		return 0;
	uint32_t length = dw[2] & 0x7ff;
	if (length == 0 || length > 1024)
		return 0;
	std::memset(h, 0, sizeof(*h));
	h->type = dp::TYPE_MEM;
	h->address = (uint64_t(dw[1]) << 32) | (dw[0] & ~3u);
	h->fmt = h->address > 0xffffffffull ? dp::FMT_4DW_DATA : dp::FMT_3DW_DATA;
	h->at = dw[0] & 3;
	h->length = length;
	uint32_t rid = dw[2] >> 16;
	if (!(dw[3] & (1u << 24)))
		rid = (bus & 0xff) << 8 | (rid & 0xff);
	h->requester_id = uint16_t(rid);
	h->tag = dw[3] & 0xff;
	h->tc = (dw[3] >> 25) & 7;
	h->attr = (dw[3] >> 28) & 7;
	h->first_be = first_be & 0xf;
	h->last_be = last_be & 0xf;
	*data_len = uint64_t(n - 4) * 4;
	return 1;
}

/*
 * The hard IP sends the posted write of an RQ frame (as dp_rq_write_tlp reads it) on
 * the card's link port, at step now: 1 when it has; 0 when it is not a write the
 * library moves (nothing done, Python sends it); 2 when it must wait for credit or for
 * the wire (fc_ready: the link's flow control is initialized), nothing done and *dc
 * its data credits, for Python's gate (CompiledTlpPort._gate), after which it is sent
 * with gated set (the gate passed: its credits taken, the wire's place free).
 */
int dp_rq_write(dp_calendar *cal, dp_port *port, const uint32_t *dw, uint32_t n,
		uint32_t first_be, uint32_t last_be, uint32_t bus, int fc_ready, int gated,
		uint64_t now, uint64_t *dc)
{
	dp::TlpHeader h;
	uint64_t data_len;

	if (!dp_rq_write_tlp(dw, n, first_be, last_be, bus, &h, &data_len) ||
	    !dp::check(h, data_len))
		return 0;
	*dc = (data_len / 4 + 3) / 4;
	/* TlpPort.send's gate: credit taken, then the wire's place free, both at once */
	if (!gated && (!fc_ready || dp_port_must_wait(port, now) ||
		       !dp_port_take_credit(port, 0, FC_POSTED, *dc)))
		return 2;
	uint8_t raw[16];
	size_t hb = dp::pack_header(h, raw);
	std::vector<uint8_t> bytes(raw, raw + hb);
	bytes.reserve(hb + data_len);
	for (uint32_t k = 4; k < n; k++) {	/* each data dword little-endian */
		bytes.push_back(uint8_t(dw[k]));
		bytes.push_back(uint8_t(dw[k] >> 8));
		bytes.push_back(uint8_t(dw[k] >> 16));
		bytes.push_back(uint8_t(dw[k] >> 24));
	}
	uint64_t handle = cal->tlp_new(bytes.data(), bytes.size());
	dp_port_send(port, now, handle, bytes.size() + 8, 0, FC_POSTED, *dc);
	return 1;
}

/* an RC stream's layout below 512 bits with one segment (RcSource's): dwords a beat,
 * the bus's tdata, tuser and tkeep widths, where tuser keeps the parity and the
 * discontinue bit */
struct dp_rc_stream {
	uint32_t lanes, dw, uw, kw;
	uint32_t parity_offset, discontinue_offset;
};

/* a completion's fields, as Tlp_us.pack_us_rc reads them */
struct dp_rc_fields {
	uint32_t lower_address, error_code, byte_count, locked, request_completed;
	uint32_t length, status, ep, requester_id, tag, completer_id, tc, attr;
	uint32_t discontinue;
};

}  // extern "C"

namespace {

/* nbits of value into the little-endian bit string out from bit at */
void put_bits(uint8_t *out, uint32_t at, uint64_t value, uint32_t nbits)
{
	for (uint32_t k = 0; k < nbits; k++, at++)
		if (value >> k & 1)
			out[at / 8] |= uint8_t(1u << (at % 8));
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
		    const dp_rc_stream *s, uint8_t *out, uint32_t stride)
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
		    uint32_t ndw, const dp_rc_stream *s, uint32_t stride)
{
	uint32_t most = (3 + ndw + s->lanes - 1) / s->lanes + 1;
	std::vector<uint8_t> out(size_t(most) * stride);
	uint32_t count = dp_rc_pack(f, data, ndw, s, out.data(), stride);

	dp_vpi_write_run(w, start, count, out.data(), stride);
	return count;
}

}  // extern "C"
