// SPDX-License-Identifier: MIT
/*
 * Where a TLP goes at a bridge or a function, in the compiled data path
 * (docs/performance.md, "Design: the compiled data path", stage 3): cocotbext-pcie's
 * Function.match_tlp (is it for this function: its BARs, its ID, its device and function
 * numbers) and Bridge.match_tlp_secondary (does it go to the bridge's secondary side:
 * the memory, prefetchable and I/O windows, the bus range), rule for rule, on a view of
 * the configuration Python keeps up to date.
 *
 * A TLP these rules do not cover (a message, an atomic operation) answers -1: Python
 * decides, as it does today.
 */
#include "route.h"

namespace {

/* Function.match_bar: 1 when addr falls in a BAR of the kind asked, 0 if not, -1 when
 * the BARs are malformed (a 64-bit BAR last: Python raises) */
int match_bar(const dp_function_view &f, uint64_t addr, bool io)
{
	uint64_t offset;
	int slot = dp::bar_at(f, addr, io, &offset);

	return slot >= 0 ? 1 : slot == -1 ? 0 : -1;
}

bool in_bus_range(const dp_bridge_view &b, uint16_t id)
{
	uint32_t bus = id >> 8;

	return b.sec_bus_num <= bus && bus <= b.sub_bus_num && id != 0;
}

}  // namespace

/* Function.match_bar's answer: the slot of the BAR addr falls in (a 64-bit BAR: its
 * lower slot) and *offset, addr's offset in it; -1 in none, -2 when the BARs are
 * malformed */
int dp::bar_at(const dp_function_view &f, uint64_t addr, bool io, uint64_t *offset)
{
	uint32_t bar = 0;

	while (bar < f.bars) {
		uint64_t val = f.bar[bar], mask = f.bar_mask[bar];
		uint32_t slot = bar++;
		if (mask == 0)
			continue;
		if (val & 1) {
			if (io && ((addr ^ val) & mask) == 0) {
				*offset = addr & ~mask;
				return int(slot);
			}
			continue;
		}
		if (val & 4) {
			if (bar >= f.bars)
				return -2;
			val |= f.bar[bar] << 32;
			mask |= f.bar_mask[bar] << 32;
			bar++;
		}
		if (!io && ((addr ^ val) & mask) == 0) {
			*offset = addr & ~mask;
			return int(slot);
		}
	}
	return -1;
}

extern "C" {

/* Function.match_tlp: 1, 0, or -1 (Python decides) */
int dp_match_function(const dp_function_view *f, const dp::TlpHeader *h)
{
	switch (h->type) {
	case dp::TYPE_MEM:
		return match_bar(*f, h->address, false);
	case dp::TYPE_IO:
		return match_bar(*f, h->address, true);
	case dp::TYPE_CPL:
	case dp::TYPE_CPL_LOCKED:
		return f->pcie_id == h->requester_id;
	case dp::TYPE_CFG0:
		return f->device_num == ((h->completer_id >> 3) & 0x1f) &&
		       f->function_num == (h->completer_id & 0x7);
	case dp::TYPE_CFG1:
		return 0;
	default:
		return -1;
	}
}

/* Bridge.match_tlp_secondary: 1, 0, or -1 (Python decides) */
int dp_match_secondary(const dp_bridge_view *b, const dp::TlpHeader *h)
{
	switch (h->type) {
	case dp::TYPE_MEM:
		return (b->mem_base <= h->address && h->address <= b->mem_limit) ||
		       (b->prefetchable_mem_base <= h->address &&
			h->address <= b->prefetchable_mem_limit);
	case dp::TYPE_IO:
		return b->io_base <= h->address && h->address <= b->io_limit;
	case dp::TYPE_CPL:
	case dp::TYPE_CPL_LOCKED:
		return in_bus_range(*b, h->requester_id);
	case dp::TYPE_CFG1:
		return in_bus_range(*b, h->completer_id);
	case dp::TYPE_CFG0:
		return 0;
	default:
		return -1;
	}
}

}  // extern "C"
