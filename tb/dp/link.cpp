// SPDX-License-Identifier: MIT
/*
 * The TLP-level link in the compiled data path (docs/performance.md, "Design: the
 * compiled data path", stage 2): tb/models/link.py's TlpPort rule for rule, its state
 * and timed work here, so the TLPs Python sends and the ones the library will send
 * share one wire, one set of credits and one order of work.
 *
 * - Serialization: a TLP or DLLP of n bytes takes int(n * symbol period * time scale)
 *   steps, at least one, as cocotbext-pcie's SimPort.handle_tx computes it.
 * - ACKs: the receiver's ACK latency timer starts with the first TLP after it expired;
 *   the ACK goes on this port's own wire when it is due, before the next TLP that would
 *   otherwise delay it.
 * - Credits: consumed by the transmitter (12-bit header, 16-bit data counters; an
 *   initial allocation of 0 is infinite), consumed by the receiver on arrival and
 *   released when the TLP is passed on; a release starts the update timer, whose UpdateFC
 *   DLLPs take their time on the wire and set the transmitter's limit on arrival.
 * - The wire's hand-over to a waiting TLP keeps the place in the order of work it was
 *   given when the TLP on the wire went out, and is scheduled only when one waits.
 *
 * A TLP here is a handle and its credits; Python holds the TLP itself. Python keeps
 * what must stay Python's: its senders' events, its receive handlers.
 */
#include "dp.h"

#include <algorithm>

namespace {

constexpr int64_t HDR_MASK = 0xfff;	/* header credit counters: 12 bits */
constexpr int64_t DATA_MASK = 0xffff;	/* data credit counters: 16 bits */
constexpr uint64_t DLLP_WIRE_BYTES = 8;	/* a DLLP and its framing */

/* a TLP's credits in one word: virtual channel, type (P, NP, CPL), data credits */
inline uint64_t credits_word(uint64_t vc, uint64_t type, uint64_t dc)
{
	return vc | type << 4 | dc << 8;
}

inline int64_t mask_of(int k)
{
	return (k & 1) ? DATA_MASK : HDR_MASK;
}

int64_t tx_available(const dp_credits &c, int64_t mask)
{
	if (c.tx_initial_allocation == 0)
		return mask;
	return (c.tx_credit_limit - c.tx_credits_consumed) & mask;
}

void tx_consume(dp_credits &c, int64_t n, int64_t mask)
{
	if (c.tx_initial_allocation != 0)
		c.tx_credits_consumed = (c.tx_credits_consumed + n) & mask;
}

void rx_consume(dp_credits &c, int64_t n, int64_t mask)
{
	if (c.rx_initial_allocation != 0)
		c.rx_credits_received = (c.rx_credits_received + n) & mask;
}

void rx_release(dp_credits &c, int64_t n, int64_t mask)
{
	if (c.rx_initial_allocation != 0)
		c.rx_credits_allocated = (c.rx_credits_allocated + n) & mask;
}

/* a line of the arrival log: step, port, the TLP's bytes (Python's own: "py") */
void log_arrival(dp_calendar *cal, uint64_t now, uint32_t port, uint64_t tlp)
{
	std::fprintf(cal->log, "%llu %u ", static_cast<unsigned long long>(now), port);
	if (tlp & DP_NATIVE) {
		for (uint8_t b : cal->tlp(tlp).bytes)
			std::fprintf(cal->log, "%02x", b);
	} else {
		std::fputs("py", cal->log);
	}
	std::fputc('\n', cal->log);
}

}  // namespace

struct dp_port {
	dp_calendar *cal;
	uint32_t id;
	dp_port *other = nullptr;
	/* the bridge end the library takes its own TLPs past on arrival (fabric.cpp) */
	dp_fabric *fab = nullptr;
	dp_rxend *rx_end = nullptr;
	/* the GPU whose requests the library answers on arrival (gpu.cpp) */
	dp_gpu *gpu_end = nullptr;
	/* the card whose completions the library takes on arrival (hip.cpp) */
	dp_card_end *card_end = nullptr;
	dp_channel vc[8] = {};

	double symbol_period = 0;
	double time_scale = 0;
	uint64_t link_delay_steps = 0;
	uint64_t max_latency_timer_steps = 0;
	uint64_t fc_update_steps = 0;
	uint64_t dllp_steps = 1;

	uint64_t free_at = 0;		/* the step the transmitter's wire is free again */
	std::deque<uint64_t> acks;	/* steps at which ACKs become due on it */
	int64_t ack_end = -1;
	uint64_t dllps = 0;		/* ACKs and UpdateFCs given wire time */

	bool sending = false;		/* a TLP on the wire, until its hand-over */
	uint64_t end = 0;		/* the step it leaves the wire ... */
	uint64_t end_slot = 0;		/* ... and the hand-over's place in that step */
	bool end_set = false;		/* the hand-over is on the calendar */
	bool has_next = false;		/* a TLP waits for the wire: */
	uint64_t next = 0, next_bytes = 0, next_credits = 0;
	std::deque<dp_waiter> senders;	/* the senders waiting for that place */
	bool fc_timer_due = false;
	uint32_t credit_wait = 0;	/* (vc, type) a Python sender waits for credit of */
	/* the senders of the library's own that wait for credit, with the (vc, type) bit of
	 * each, in the order they came */
	std::deque<std::pair<uint32_t, dp_waiter>> credit_waiters;
	/* received TLPs whose credits are not released yet, by the number of their receipt */
	std::unordered_map<uint64_t, uint64_t> held;
	uint64_t received = 0;

	dp_port(dp_calendar *c, uint32_t i) : cal(c), id(i) {}

	uint64_t wire_steps(uint64_t nbytes) const
	{
		auto n = static_cast<int64_t>(static_cast<double>(nbytes) * symbol_period *
					      time_scale);
		return static_cast<uint64_t>(std::max<int64_t>(n, 1));
	}

	uint64_t claim_wire(uint64_t now, uint64_t steps)
	{
		uint64_t free = free_at;

		while (!acks.empty() && acks.front() <= std::max(now, free)) {
			free = std::max(free, acks.front()) + dllp_steps;
			acks.pop_front();
			dllps++;
		}
		uint64_t start = std::max(now, free);
		free_at = start + steps;
		return start;
	}

	void deliver(uint64_t sent, uint32_t kind, uint64_t a, uint64_t b)
	{
		cal->push(sent + std::max<uint64_t>(link_delay_steps, 1), cal->slot(), kind,
			  other->id, a, b);
	}

	void put_on_wire(uint64_t now, uint64_t tlp, uint64_t nbytes, uint64_t credits)
	{
		uint64_t length = wire_steps(nbytes);

		deliver(claim_wire(now, length) + length, dp::K_ARRIVE_TLP, tlp, credits);
		sending = true;
		end = free_at;
		end_slot = cal->slot();
		end_set = false;
	}

	bool busy(uint64_t now)
	{
		if (sending && !end_set && cal->passed(end, end_slot, now))
			sending = false;
		return sending;
	}

	void start_fc_update_timer(uint64_t now)
	{
		if (fc_timer_due)
			return;
		fc_timer_due = true;
		cal->push(now + std::max<uint64_t>(max_latency_timer_steps, 1), cal->slot(),
			  dp::K_FC_TIMER, id, 0, 0);
	}

	void send_fc_updates(uint64_t now)
	{
		fc_timer_due = false;
		for (uint64_t v = 0; v < 8; v++) {
			dp_channel &ch = vc[v];

			if (!ch.active)
				continue;
			for (uint64_t t = 0; t < 3; t++) {
				if (ch.next_fc_tx[t] > static_cast<int64_t>(now))
					continue;
				ch.next_fc_tx[t] = static_cast<int64_t>(now + fc_update_steps);
				uint64_t start = claim_wire(now, dllp_steps);
				dllps++;
				auto hdr = static_cast<uint64_t>(ch.fc[2 * t].rx_credits_allocated);
				auto data = static_cast<uint64_t>(ch.fc[2 * t + 1].rx_credits_allocated);
				deliver(start + dllp_steps, dp::K_ARRIVE_FC, v | t << 8,
					hdr << 32 | data);
			}
		}
	}
};

bool dp_link_run(dp_calendar *cal, const dp::Entry &e, uint64_t now, dp_out *out)
{
	dp_port *p = cal->ports[e.port];

	switch (e.kind) {
	case dp::K_ARRIVE_TLP: {
		if (static_cast<int64_t>(now) >= p->ack_end) {
			p->ack_end = static_cast<int64_t>(
				now + std::max<uint64_t>(p->max_latency_timer_steps, 1));
			p->acks.push_back(static_cast<uint64_t>(p->ack_end));
		}
		dp_channel &ch = p->vc[e.b & 0xf];
		uint64_t t = e.b >> 4 & 0xf;
		rx_consume(ch.fc[2 * t], 1, HDR_MASK);
		rx_consume(ch.fc[2 * t + 1], static_cast<int64_t>(e.b >> 8), DATA_MASK);
		p->held[p->received] = e.b;
		if (p->cal->log)
			log_arrival(p->cal, now, p->id, e.a);
		uint64_t receipt = p->received++;
		if (e.a & DP_NATIVE) {
			int got = -1;

			if (p->rx_end)
				got = dp_fab_arrive(p->cal, p->fab, p->rx_end, e.a, p->id, receipt,
						    now, out);
			else if (p->gpu_end)
				got = dp_gpu_arrive(p->cal, p->gpu_end, p, e.a, receipt, now, out);
			else if (p->card_end)
				got = dp_card_arrive(p->cal, p->card_end, p, e.a, receipt, now, out);
			if (got >= 0)
				return got == 1;
		}
		out->kind = dp::K_RX;
		out->port = p->id;
		out->a = e.a;
		out->b = receipt;
		return true;
	}
	case dp::K_ARRIVE_FC: {
		uint64_t v = e.a & 0xff, t = e.a >> 8;
		dp_channel &ch = p->vc[v];
		ch.fc[2 * t].tx_credit_limit = static_cast<int64_t>(e.b >> 32);
		ch.fc[2 * t + 1].tx_credit_limit = static_cast<int64_t>(e.b & 0xffffffff);
		uint32_t bit = 1u << (v * 3 + t);
		bool told = false;
		/* the library's own first (each resumed where the step's woken list has it),
		 * then Python's, told after them */
		for (auto it = p->credit_waiters.begin(); it != p->credit_waiters.end();) {
			if (it->first != bit) {
				++it;
				continue;
			}
			dp_waiter w = it->second;
			it = p->credit_waiters.erase(it);
			if (told) {
				dp_out more{};
				dp_cal_woken(cal, dp_woken{w, nullptr, 0, 0, 0}, &more);
				cal->reports.push_back(more);
			} else {
				told = dp_cal_woken(cal, dp_woken{w, nullptr, 0, 0, 0}, out);
			}
		}
		if (!(p->credit_wait & bit))
			return told;
		p->credit_wait &= ~bit;
		dp_out credit{dp::K_CREDIT, p->id, out->slot, v, t};
		if (told)
			cal->reports.push_back(credit);
		else
			*out = credit;
		return true;
	}
	case dp::K_SENT:
		p->end_set = false;
		if (!p->has_next) {
			p->sending = false;
			return false;
		}
		p->has_next = false;
		p->put_on_wire(now, p->next, p->next_bytes, p->next_credits);
		if (p->senders.empty())
			return false;
		{
			dp_waiter w = p->senders.front();

			p->senders.pop_front();
			if (w.library())
				return dp_cal_woken(cal, dp_woken{w, nullptr, 0, 0, 0}, out);
		}
		out->kind = dp::K_WAKE;
		out->port = p->id;
		return true;
	case dp::K_FC_TIMER:
		p->send_fc_updates(now);
		return false;
	default:
		return false;
	}
}

void dp_link_free(dp_port *port)
{
	delete port;
}

extern "C" {

dp_port *dp_port_new(dp_calendar *cal)
{
	auto *port = new dp_port(cal, static_cast<uint32_t>(cal->ports.size()));

	cal->ports.push_back(port);
	return port;
}

uint32_t dp_port_id(const dp_port *port)
{
	return port->id;
}

/* the bridge end of fabric fab the library takes its own TLPs past as they reach port
 * (none: null) */
void dp_port_end(dp_port *port, dp_fabric *fab, dp_rxend *end)
{
	port->fab = fab;
	port->rx_end = end;
}

/* the GPU whose requests of the library's own the library answers as they reach port
 * (none: null) */
void dp_port_gpu(dp_port *port, dp_gpu *gpu)
{
	port->gpu_end = gpu;
}

/* the card's end whose completions of the library's own the library takes as they
 * reach port (none: null) */
void dp_port_card(dp_port *port, dp_card_end *end)
{
	port->card_end = end;
}

/* the eight channels' credit counters, where Python reads and writes them */
dp_channel *dp_port_channels(dp_port *port)
{
	return port->vc;
}

/* the link's parameters, as SimPort's connection works them out */
void dp_port_connect(dp_port *port, dp_port *other, double symbol_period, double time_scale,
		     uint64_t link_delay_steps, uint64_t max_latency_timer_steps,
		     uint64_t fc_update_steps)
{
	port->other = other;
	port->symbol_period = symbol_period;
	port->time_scale = time_scale;
	port->link_delay_steps = link_delay_steps;
	port->max_latency_timer_steps = max_latency_timer_steps;
	port->fc_update_steps = fc_update_steps;
	port->dllp_steps = port->wire_steps(DLLP_WIRE_BYTES);
}

/* a DLLP of the flow-control initialization takes nbytes of the wire from now */
void dp_port_occupy(dp_port *port, uint64_t now, uint64_t nbytes)
{
	port->free_at = std::max(port->free_at, now) + port->wire_steps(nbytes);
}

/* take a TLP's credits if the transmitter has them: 1, else 0 */
int dp_port_take_credit(dp_port *port, uint32_t vc, uint32_t type, uint64_t dc)
{
	dp_credits *fc = port->vc[vc].fc;
	auto d = static_cast<int64_t>(dc);

	if (!(tx_available(fc[2 * type], HDR_MASK) > 0 &&
	      tx_available(fc[2 * type + 1], DATA_MASK) >= d))
		return 0;
	tx_consume(fc[2 * type], 1, HDR_MASK);
	tx_consume(fc[2 * type + 1], d, DATA_MASK);
	return 1;
}

/* a Python sender waits for credit of (vc, type): report the next update */
void dp_port_wait_credit(dp_port *port, uint32_t vc, uint32_t type)
{
	port->credit_wait |= 1u << (vc * 3 + type);
}

/* whether a sender must wait for the wire's next place (TlpPort.send's loop) */
int dp_port_must_wait(dp_port *port, uint64_t now)
{
	return port->busy(now) && (port->has_next || !port->senders.empty());
}

/* a sender of Python's waits for the wire's next place, after those waiting */
void dp_port_add_sender(dp_port *port)
{
	port->senders.push_back(dp_waiter{nullptr, 0, 0, 0});
}

/* a sender of the library's own (w) waits for it, after those waiting */
void dp_port_add_waiter(dp_port *port, const dp_waiter *w)
{
	port->senders.push_back(*w);
}

/* a sender of the library's own (w) waits for credit of (vc, type), after those waiting */
void dp_port_credit_waiter(dp_port *port, uint32_t vc, uint32_t type, const dp_waiter *w)
{
	port->credit_waiters.emplace_back(1u << (vc * 3 + type), *w);
}

/* the senders of card drain rq's own gone from port's queues (its test ended) */
void dp_port_drop_waiters(dp_port *port, const dp_rq_drain *rq)
{
	for (auto it = port->senders.begin(); it != port->senders.end();)
		it = it->rq == rq ? port->senders.erase(it) : it + 1;
	for (auto it = port->credit_waiters.begin(); it != port->credit_waiters.end();)
		it = it->second.rq == rq ? port->credit_waiters.erase(it) : it + 1;
}

/* whether a sender of Python's waits for credit of (vc, type) */
int dp_port_credit_waited(const dp_port *port, uint32_t vc, uint32_t type)
{
	return (port->credit_wait >> (vc * 3 + type)) & 1;
}

int dp_port_has_next(const dp_port *port)
{
	return port->has_next;
}

/* a TLP (handle, wire bytes, credits word) onto the wire, or next when it is busy */
void dp_port_send(dp_port *port, uint64_t now, uint64_t tlp, uint64_t nbytes, uint32_t vc,
		  uint32_t type, uint64_t dc)
{
	uint64_t credits = credits_word(vc, type, dc);

	if (!port->busy(now)) {
		port->put_on_wire(now, tlp, nbytes, credits);
		return;
	}
	port->has_next = true;
	port->next = tlp;
	port->next_bytes = nbytes;
	port->next_credits = credits;
	if (!port->end_set) {
		port->end_set = true;
		port->cal->push(port->end, port->end_slot, dp::K_SENT, port->id, 0, 0);
	}
}

/* the TLP received as number receipt is passed on: its credits go back (once), the
 * update timer starts */
void dp_port_release(dp_port *port, uint64_t now, uint64_t receipt)
{
	auto it = port->held.find(receipt);

	if (it == port->held.end())
		return;
	uint64_t credits = it->second;
	port->held.erase(it);
	dp_channel &ch = port->vc[credits & 0xf];
	uint64_t t = credits >> 4 & 0xf;
	ch.next_fc_tx[t] = 0;
	rx_release(ch.fc[2 * t], 1, mask_of(0));
	rx_release(ch.fc[2 * t + 1], static_cast<int64_t>(credits >> 8), mask_of(1));
	port->start_fc_update_timer(now);
}

uint64_t dp_port_dllps(const dp_port *port)
{
	return port->dllps;
}

}  // extern "C"
