// SPDX-License-Identifier: MIT
/*
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

#include <cstdint>
#include <vector>

/* tags are 10 bits (PCIe 6.0's 14-bit tags are not used here) */
constexpr uint32_t TAGS = 1024;

struct dp_reads {
	struct Read {
		uint64_t address;
		uint64_t number;	/* 0: no read under this tag */
		uint32_t nbytes;
	};
	std::vector<Read> by_tag = std::vector<Read>(TAGS, Read{0, 0, 0});
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
	e.number = ++r->count;
	return e.number;
}

/* the read request h, recorded as FaultInjector.observe records it: its number */
uint64_t dp_reads_put_tlp(dp_reads *r, const dp::TlpHeader *h)
{
	return dp_reads_put(r, h->tag, h->address + h->first_be_offset(), h->be_byte_count());
}

/* the read under tag: its number (0: none), with its address and bytes */
uint64_t dp_reads_get(const dp_reads *r, uint32_t tag, uint64_t *address, uint32_t *nbytes)
{
	const dp_reads::Read &e = r->by_tag[tag % TAGS];

	if (e.number) {
		*address = e.address;
		*nbytes = e.nbytes;
	}
	return e.number;
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

}  // extern "C"
