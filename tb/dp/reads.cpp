// SPDX-License-Identifier: MIT
/*
 * What Python's observers of a link end keep of the TLPs the library moves across it
 * (fabric.cpp), recorded here instead.
 *
 * The read requests a fault injector keeps track of (tb/env/faults.py,
 * FaultInjector.observe), held where the library can add to them: the library records
 * the card's reads it moves across the link end the injector watches (fabric.cpp), and
 * Python records those it moves itself, so the injector finds every read of the card
 * here, by tag, when its completions come back.
 *
 * A read is what the injector needs of it: the address of its first enabled byte and
 * the bytes it asks for (cocotbext-pcie's Tlp.get_first_be_offset and
 * get_be_byte_count), and a number that grows with each read recorded, so Python can
 * tell a read of a reused tag from the one it knew.
 */
#include "tlp.h"

#include <algorithm>
#include <cstdint>
#include <vector>

/* tags are 10 bits (PCIe 6.0's 14-bit tags are not used here) */
constexpr uint32_t TAGS = 1024;

struct dp_reads {
	struct Read {
		uint64_t address;
		uint64_t number;	/* 0: no read under this tag */
		uint32_t nbytes;
		uint32_t started;	/* a completion of it has come */
	};
	std::vector<Read> by_tag = std::vector<Read>(TAGS, Read{0, 0, 0, 0});
	uint64_t count = 0;
};

extern "C" {

dp_reads *dp_reads_new(void)
{
	return new dp_reads();
}

void dp_reads_free(dp_reads *r)
{
	delete r;
}

/* a read under tag, replacing any it had: its number (never 0) */
uint64_t dp_reads_put(dp_reads *r, uint32_t tag, uint64_t address, uint32_t nbytes)
{
	dp_reads::Read &e = r->by_tag[tag % TAGS];

	e.address = address;
	e.nbytes = nbytes;
	e.started = 0;
	e.number = ++r->count;
	return e.number;
}

/* the read request h, recorded as FaultInjector.observe records it: its number */
uint64_t dp_reads_put_tlp(dp_reads *r, const dp::TlpHeader *h)
{
	return dp_reads_put(r, h->tag, h->address + h->first_be_offset(), h->be_byte_count());
}

/* the read under tag: its number (0: none), with its address, bytes and whether a
 * completion of it has come */
uint64_t dp_reads_get(const dp_reads *r, uint32_t tag, uint64_t *address, uint32_t *nbytes,
		      uint32_t *started)
{
	const dp_reads::Read &e = r->by_tag[tag % TAGS];

	if (e.number) {
		*address = e.address;
		*nbytes = e.nbytes;
		*started = e.started;
	}
	return e.number;
}

/* a completion for the read under tag has come, as the injector takes one with no rule
 * armed (FaultInjector._receive): the read has started, and is over if it ends it */
void dp_reads_cpl(dp_reads *r, uint32_t tag, int ends)
{
	dp_reads::Read &e = r->by_tag[tag % TAGS];

	if (!e.number)
		return;
	e.started = 1;
	if (ends)
		e.number = 0;
}

void dp_reads_drop(dp_reads *r, uint32_t tag)
{
	r->by_tag[tag % TAGS].number = 0;
}

/* the first tag from tag on with a read (TAGS: none) */
uint32_t dp_reads_next(const dp_reads *r, uint32_t tag)
{
	while (tag < TAGS && !r->by_tag[tag].number)
		tag++;
	return tag;
}

/*
 * A bench's meter of one buffer's data crossing a link end (tb/bench/engine.py's
 * DataClock): the memory writes into [lo, hi) (the first and last one's step, the first
 * one's bytes and all bytes, the last one's header size, the largest payload) and the
 * tags of the memory reads from there, whose completions it counts the same way where
 * the library takes them at the card (hip.cpp), and Python where it does.
 */
struct dp_meter {
	uint64_t lo = 0, hi = 0;
	uint64_t seen = 0, first = 0, last = 0, first_bytes = 0, bytes = 0, header = 0;
	uint64_t largest = 0;
	std::vector<uint8_t> tags = std::vector<uint8_t>(TAGS, 0);
};

/* what a meter has counted, laid out as tb.models.native.Meter reads it */
struct dp_meter_figures {
	uint64_t seen, first, last, first_bytes, bytes, header, largest;
};

dp_meter *dp_meter_new(void)
{
	return new dp_meter();
}

void dp_meter_free(dp_meter *m)
{
	delete m;
}

/* count anew, the buffer at [lo, hi) */
void dp_meter_reset(dp_meter *m, uint64_t lo, uint64_t hi)
{
	*m = dp_meter();
	m->lo = lo;
	m->hi = hi;
}

void dp_meter_figures_of(const dp_meter *m, dp_meter_figures *f)
{
	*f = dp_meter_figures{m->seen, m->first, m->last, m->first_bytes, m->bytes, m->header,
			      m->largest};
}

/* whether a read of the buffer went out under tag; untag: its last completion came */
int dp_meter_tagged(const dp_meter *m, uint32_t tag)
{
	return m->tags[tag % TAGS];
}

void dp_meter_untag(dp_meter *m, uint32_t tag)
{
	m->tags[tag % TAGS] = 0;
}

/* a read of the buffer went out under tag, seen by Python */
void dp_meter_tag(dp_meter *m, uint32_t tag)
{
	m->tags[tag % TAGS] = 1;
}

/* n bytes of the buffer's data in TLP h (data_len bytes of data) at step now, as
 * DataClock._data counts them */
static void meter_data(dp_meter *m, const dp::TlpHeader *h, uint64_t data_len, uint64_t n,
		       uint64_t now)
{
	m->header = h->header_bytes();
	m->largest = std::max(m->largest, data_len);
	if (!m->seen) {
		m->seen = 1;
		m->first = now;
		m->first_bytes = n;
	}
	m->last = now;
	m->bytes += n;
}

/* TLP h with data_len bytes of data crossed the link end at step now */
void dp_meter_tlp(dp_meter *m, const dp::TlpHeader *h, uint64_t data_len, uint64_t now)
{
	if (h->type != dp::TYPE_MEM || h->address < m->lo || h->address >= m->hi)
		return;
	if (!h->has_data()) {
		m->tags[h->tag % TAGS] = 1;
		return;
	}
	meter_data(m, h, data_len, data_len, now);
}

/* completion h with data_len bytes of data reached the card at step now: data of the
 * buffer when a read of it went out under its tag (its last completion untags it) */
void dp_meter_cpl(dp_meter *m, const dp::TlpHeader *h, uint64_t data_len, uint64_t now)
{
	if (!m->tags[h->tag % TAGS])
		return;
	uint64_t skipped = h->lower_address & 3;
	meter_data(m, h, data_len, data_len - skipped, now);
	if (h->status != dp::CPL_SC || h->byte_count <= uint64_t(h->length) * 4 - skipped)
		m->tags[h->tag % TAGS] = 0;
}

}  // extern "C"
