// SPDX-License-Identifier: MIT
/*
 * The root complex's memory in the compiled data path (docs/performance.md, "Design: the
 * compiled data path", stage 3): the RAM regions Python's models hold (cocotbext-axi's
 * MemoryRegion, an mmap each), by bus address and pointer, read and written in place;
 * and the root complex's answer to a memory request against them, as
 * RootComplex.handle_mem_read_tlp and handle_mem_write_tlp give it (completer.cpp's
 * rules). A request that does not lie whole in one region is Python's: the library
 * answers only what it can answer exactly.
 */
#include "tlp.h"

#include <cstring>
#include <map>

struct dp_memory {
	struct Region {
		uint64_t size;
		uint8_t *ptr;
	};
	std::map<uint64_t, Region> regions;	/* by base */

	uint8_t *find(uint64_t addr, uint64_t len)
	{
		auto it = regions.upper_bound(addr);
		if (it == regions.begin())
			return nullptr;
		--it;
		uint64_t base = it->first;
		if (addr - base >= it->second.size || len > it->second.size - (addr - base))
			return nullptr;
		return it->second.ptr + (addr - base);
	}
};

uint8_t *dp_mem_find(dp_memory *mem, uint64_t addr, uint64_t len)
{
	return mem->find(addr, len);
}

extern "C" {

uint32_t dp_rc_read_completions(const dp::TlpHeader *req, uint32_t max_payload_size,
				uint32_t rcb_128, uint32_t split_on_all_rcb, dp::TlpHeader *cpls,
				uint32_t *offsets, uint32_t cap);
uint32_t dp_mem_write_runs(const dp::TlpHeader *req, uint32_t *runs);

dp_memory *dp_mem_new(void)
{
	return new dp_memory();
}

void dp_mem_free(dp_memory *mem)
{
	delete mem;
}

void dp_mem_clear(dp_memory *mem)
{
	mem->regions.clear();
}

/* RAM at bus address base, size bytes at ptr (Python keeps it alive) */
void dp_mem_add(dp_memory *mem, uint64_t base, uint64_t size, uint8_t *ptr)
{
	mem->regions[base] = dp_memory::Region{size, ptr};
}

/*
 * The root complex's answer to memory request req (its header; data, the payload of a
 * write): for a read, its completions one after another as bytes on the wire into out
 * (cap bytes), their total size returned; for a write, the write made, 0 returned.
 * UINT64_MAX: not the library's to answer (no region holds it whole, a 4 KiB crossing
 * Python discards with a warning, room too small).
 */
uint64_t dp_rc_memory_request(dp_memory *mem, const dp::TlpHeader *req, const uint8_t *data,
			      uint32_t max_payload_size, uint32_t rcb_128,
			      uint32_t split_on_all_rcb, uint8_t *out, uint64_t cap)
{
	uint64_t bytes = uint64_t(req->length) * 4;

	if (req->type != dp::TYPE_MEM || bytes > 0x1000 - (req->address & 0xfff))
		return UINT64_MAX;
	uint8_t *at = mem->find(req->address, bytes);
	if (!at)
		return UINT64_MAX;
	if (req->has_data()) {
		uint32_t runs[16];
		uint32_t n = dp_mem_write_runs(req, runs);
		for (uint32_t k = 0; k < n; k++)
			std::memcpy(at + runs[2 * k], data + runs[2 * k], runs[2 * k + 1]);
		return 0;
	}
	dp::TlpHeader cpls[1024];
	uint32_t offsets[1024];
	uint32_t n = dp_rc_read_completions(req, max_payload_size, rcb_128, split_on_all_rcb,
					    cpls, offsets, 1024);
	if (n == UINT32_MAX)
		return UINT64_MAX;
	uint64_t size = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t payload = uint64_t(cpls[k].length) * 4;
		if (size + 16 + payload > cap)
			return UINT64_MAX;
		size_t h = dp::pack_header(cpls[k], out + size);
		std::memcpy(out + size + h, at + uint64_t(offsets[k]) * 4, payload);
		size += h + payload;
	}
	return size;
}

}  // extern "C"
