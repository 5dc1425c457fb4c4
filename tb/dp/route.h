/* SPDX-License-Identifier: MIT */
/*
 * The views of a function's and a bridge's configuration that the compiled data path
 * routes by (route.cpp's rules, fabric.cpp's hops): laid out as tb/dp's FunctionView
 * and BridgeView, written by Python whenever the configuration changes.
 */
#ifndef PEVB_DP_ROUTE_H
#define PEVB_DP_ROUTE_H

#include "tlp.h"

struct dp_function_view {
	uint64_t bar[6];	/* the BAR registers as written (32 bits each) */
	uint64_t bar_mask[6];	/* and their masks (0: not implemented) */
	uint32_t bars;		/* how many the function has */
	uint16_t pcie_id;	/* bus << 8 | device << 3 | function */
	uint8_t device_num;
	uint8_t function_num;
};

struct dp_bridge_view {
	uint64_t mem_base, mem_limit;
	uint64_t prefetchable_mem_base, prefetchable_mem_limit;
	uint64_t io_base, io_limit;
	uint32_t sec_bus_num, sub_bus_num;
};

namespace dp {
/* Function.match_bar's answer: the slot of the BAR addr falls in, *offset its offset
 * there; -1 in none, -2 when the BARs are malformed */
int bar_at(const dp_function_view &f, uint64_t addr, bool io, uint64_t *offset);
}

extern "C" {
/* Function.match_tlp: 1, 0, or -1 (Python decides) */
int dp_match_function(const dp_function_view *f, const dp::TlpHeader *h);
/* Bridge.match_tlp_secondary: 1, 0, or -1 (Python decides) */
int dp_match_secondary(const dp_bridge_view *b, const dp::TlpHeader *h);
}

#endif /* PEVB_DP_ROUTE_H */
