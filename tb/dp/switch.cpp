// SPDX-License-Identifier: MIT
/*
 * The switch of the TLP-level fabric in the compiled data path (docs/performance.md,
 * "Design: the compiled data path", stage 2): tb/models/switch.py's queues and its
 * egress arbitration, so the TLPs Python routes and the ones the library will route
 * wait in one set of queues and leave in one order.
 *
 * - A queue per ordered pair of switch ports, made as the ports are added: a new port's
 *   queue to each earlier port joins that port's inputs, and each earlier port's queue
 *   to the new one joins the new port's inputs, in that order.
 * - Relaxed ordering: with passing on at the egress port, a posted write with the RO
 *   attribute goes ahead of the posted writes waiting at the tail of its queue.
 * - Arbitration: passes over an egress port's input queues in order, one TLP from each
 *   that holds one, until a whole pass finds none; whoever sends (Python today) takes
 *   them one at a time, and what arrives meanwhile is found on the pass it is reached.
 */
#include "dp.h"

#include <memory>

namespace {

struct Item {
	uint64_t tlp;
	bool posted_write;
	bool ro;
};

struct Port {
	std::vector<uint32_t> inputs;	/* the queues into this egress port, in order */
	size_t pos = 0;			/* the arbitration's place in its pass */
	bool moved = false;		/* whether this pass has moved a TLP */
};

}  // namespace

struct dp_switch {
	std::vector<std::deque<Item>> queues;
	std::vector<uint32_t> egress;	/* each queue's egress port */
	std::vector<Port> ports;
};

extern "C" {

dp_switch *dp_sw_new(void)
{
	return new dp_switch();
}

void dp_sw_free(dp_switch *sw)
{
	delete sw;
}

uint32_t dp_sw_add_port(dp_switch *sw)
{
	sw->ports.emplace_back();
	return static_cast<uint32_t>(sw->ports.size() - 1);
}

/* a queue into egress port to (appended to its inputs): its number */
uint32_t dp_sw_add_queue(dp_switch *sw, uint32_t to)
{
	sw->queues.emplace_back();
	sw->egress.push_back(to);
	auto id = static_cast<uint32_t>(sw->queues.size() - 1);
	sw->ports[to].inputs.push_back(id);
	return id;
}

/* a TLP (handle) into queue id; ro_passing: the egress port lets RO writes pass */
void dp_sw_enqueue(dp_switch *sw, uint32_t id, uint64_t tlp, int posted_write, int ro,
		   int ro_passing)
{
	std::deque<Item> &q = sw->queues[id];
	Item item{tlp, posted_write != 0, ro != 0};

	if (ro_passing && item.posted_write && item.ro) {
		auto at = q.end();
		while (at != q.begin() && (at - 1)->posted_write)
			--at;
		q.insert(at, item);
	} else {
		q.push_back(item);
	}
}

uint64_t dp_sw_len(const dp_switch *sw, uint32_t id)
{
	return sw->queues[id].size();
}

/* the next TLP egress port takes, or UINT64_MAX when a whole pass finds none */
uint64_t dp_sw_next(dp_switch *sw, uint32_t port)
{
	Port &p = sw->ports[port];

	for (;;) {
		if (p.pos == p.inputs.size()) {
			p.pos = 0;
			if (!p.moved)
				return UINT64_MAX;
			p.moved = false;
		}
		std::deque<Item> &q = sw->queues[p.inputs[p.pos++]];
		if (!q.empty()) {
			uint64_t tlp = q.front().tlp;
			q.pop_front();
			p.moved = true;
			return tlp;
		}
	}
}

}  // extern "C"
