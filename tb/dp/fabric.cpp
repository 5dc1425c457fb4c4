// SPDX-License-Identifier: MIT
/*
 * The fabric's hops in the compiled data path (docs/performance.md, "Design: the
 * compiled data path", stage 3): a TLP of the library's own that reaches a bridge's
 * link end crosses the bridge and the switch's routing here, into the queue of the
 * switch port it leaves by, as tb/models/switch.py and cocotbext-pcie's Bridge would
 * move it, with no Python TLP made:
 *
 * - the bridge's receive: Bridge.downstream_recv for a TLP from its secondary side (a
 *   switch's downstream port, a root port), Bridge.upstream_recv from its primary side
 *   (a switch's upstream port); the TLP goes on when it is not the bridge's own and its
 *   windows and bus range send it on (route.cpp's rules on views of the bridge's
 *   configuration, which Python keeps up to date);
 * - Tlp.check(), which every hop asserts;
 * - the switch's routing: the first other port whose bridge takes it, in the ports'
 *   order, into the queue to that port (relaxed-ordering passing as that port says);
 * - the protocol checker, where the link end is tapped and the checker is the only
 *   observer that wants the TLP (checker.cpp); what it finds goes to Python before the
 *   TLP moves on;
 * - the fault injector's read tracking, where its tap is: a read that crosses there is
 *   recorded in its read log (reads.cpp).
 *
 * Anything else (a TLP for the bridge itself, one no window routes, a poisoned TLP, a
 * TLP other Python observers or fault injectors want, one that fails the check) is left to
 * Python before anything is done, and takes today's path there. The TLP keeps what the
 * hop leaves for whoever takes it next: the port whose receiver holds its credits and
 * their number, and the switch port it came in by.
 */
#include "dp.h"
#include "route.h"

#include <cstring>
#include <deque>
#include <memory>

struct dp_switch;
struct dp_checker;
struct dp_memory;
struct dp_reads;
struct dp_meter;

extern "C" {
void dp_sw_enqueue(dp_switch *sw, uint32_t id, uint64_t tlp, int posted_write, int ro,
		   int ro_passing);
uint32_t dp_ck_observe(dp_checker *ck, uint32_t link, uint32_t dir, const dp::TlpHeader *h,
		       uint64_t data_len, int stop);
uint32_t dp_rc_read_completions(const dp::TlpHeader *req, uint32_t max_payload_size,
				uint32_t rcb_128, uint32_t split_on_all_rcb, dp::TlpHeader *cpls,
				uint32_t *offsets, uint32_t cap);
uint32_t dp_mem_write_runs(const dp::TlpHeader *req, uint32_t *runs);
uint64_t dp_reads_put_tlp(dp_reads *r, const dp::TlpHeader *h);
void dp_meter_tlp(dp_meter *m, const dp::TlpHeader *h, uint64_t data_len, uint64_t now);
uint64_t dp_sw_next(dp_switch *sw, uint32_t port);
int dp_tlp_release(dp_calendar *cal, uint64_t handle, uint64_t now);
}

/* memory.cpp: the RAM regions by bus address */
uint8_t *dp_mem_find(dp_memory *mem, uint64_t addr, uint64_t len);

/* a bridge as the hops read it: laid out as tb/models/native.py's ctypes structure */
struct dp_bridge {
	dp_function_view fn;	/* its own function: BARs, ID */
	dp_bridge_view win;	/* its windows and bus range */
	uint32_t root;		/* a host bridge: everything from below goes up */
	uint32_t pad;
};

namespace {

/* the kinds of TLP the hops move: bit per kind */
enum : uint32_t { KIND_MRD = 1, KIND_MWR = 2, KIND_CPLD = 4 };

/* what an egress port's arbitration needs of Python's state, which Python writes:
 * whether its lane runs (or was handed to Python), and whether its bridge's handlers
 * are the ones armed and its link's flow control is initialized; the library writes
 * whether a sender of its own holds it */
struct EgressFlags {
	uint32_t busy = 0;
	uint32_t live = 0;
	uint32_t held = 0;	/* a sender of the library's own holds it (waiting, or
				 * handed to Python until Python's lane takes it) */
};

enum Side : uint32_t { FROM_SECONDARY = 0, FROM_PRIMARY = 1 };

struct SwitchPort {
	dp_bridge *bridge;
	dp_switch *sw;
	uint32_t number;	/* its number in its switch (switch.cpp) */
	uint32_t index;		/* its number in the fabric */
	bool upstream;
	bool ro_passing = false;
	std::vector<std::pair<SwitchPort *, uint32_t>> tx;	/* (port, queue), in order */
	EgressFlags eg;
	dp_port *link = nullptr;	/* the link its bridge sends on (an egress's) */
};

uint32_t kind_of(const dp::TlpHeader &h)
{
	if (h.type == dp::TYPE_MEM)
		return h.has_data() ? KIND_MWR : KIND_MRD;
	if (h.type == dp::TYPE_CPL && h.has_data())
		return KIND_CPLD;
	return 0;
}

}  // namespace

/* a link end at a bridge whose TLPs of the library's own may cross it here */
struct dp_rxend {
	dp_end_flags flags;
	SwitchPort *port;
	uint32_t side;
	uint32_t kinds = 0;	/* what may cross here (Python says, as its observers want) */
	dp_checker *ck = nullptr;
	uint32_t ck_link = 0, ck_dir = 0;
	/* a crossing the checker had something to say about, finished after Python has
	 * said it */
	SwitchPort *pending = nullptr;
	uint32_t pending_queue = 0;
	/* where the reads that cross here are recorded for a fault injector (reads.cpp) */
	dp_reads *reads = nullptr;
	/* a bench's meter of what crosses here (reads.cpp) */
	dp_meter *meter = nullptr;
};

/* what the root complex's answers in the library take, which Python writes: whether
 * they are the library's (its handlers the ones armed, no logging, its RAM mirrored as
 * it is), its Max Payload Size code, its read completion boundary of 128 bytes, its
 * split of completions at every boundary */
struct ServeFlags {
	uint32_t live = 0;
	uint32_t mps = 0;
	uint32_t rcb_128 = 0;
	uint32_t split = 0;
};

/* a completion the root complex has made, waiting to be routed (dp_rc_next) */
struct Pending {
	uint64_t handle;
	SwitchPort *to;
	uint32_t queue;
};

struct dp_fabric {
	std::vector<std::unique_ptr<dp_bridge>> bridges;
	std::vector<std::unique_ptr<SwitchPort>> ports;
	std::vector<std::unique_ptr<dp_rxend>> ends;
	std::deque<Pending> pending;	/* the root complex's completions, in order */
	int32_t pending_ingress = -1;
	uint64_t crossings = 0;	/* hops taken on arrival, with no Python (Python reads it) */
	uint64_t resumes = 0;	/* senders of the library's own resumed */
	uint64_t credit_resumes = 0;	/* of those the ones that waited for credit */
	int64_t serve_port = -1;	/* the root complex's host bridge port, answered here */
	dp_memory *serve_mem = nullptr;
	ServeFlags serve;

	/* where switch port from's switch sends h (the switch's routing alone) */
	bool route_from(const SwitchPort &from, const dp::TlpHeader &h, SwitchPort **to,
			uint32_t *queue) const
	{
		for (const auto &[other, q] : from.tx) {
			int m = dp_match_function(&other->bridge->fn, &h);
			if (m < 0)
				return false;
			int s = m ? 0 : dp_match_secondary(&other->bridge->win, &h);
			if (s < 0)
				return false;
			if (m || (other->upstream ? !s : s)) {
				*to = other;
				*queue = q;
				return true;
			}
		}
		return false;
	}

	/* where the bridge and switch send h: the egress port and its queue, or false */
	bool route(const dp_rxend &end, const dp::TlpHeader &h, SwitchPort **to,
		   uint32_t *queue) const
	{
		const dp_bridge &b = *end.port->bridge;

		if (end.side == FROM_SECONDARY) {
			if (!b.root && dp_match_function(&b.fn, &h) != 0)
				return false;	/* the bridge's own (or Python decides) */
			int s = dp_match_secondary(&b.win, &h);
			if (s < 0 || (s && !b.root))
				return false;	/* back down: Python's error path */
		} else {
			if (dp_match_function(&b.fn, &h) != 0)
				return false;
			if (dp_match_secondary(&b.win, &h) != 1)
				return false;
		}
		return route_from(*end.port, h, to, queue);	/* else the switch's own warns */
	}

	void enqueue(dp_calendar *cal, const dp_rxend &end, SwitchPort *to, uint32_t queue,
		     uint64_t handle, const dp::TlpHeader &h, uint32_t port, uint64_t receipt,
		     uint64_t now)
	{
		cal->note(port, kind_of(h), now, handle);
		dp_tlp &t = cal->tlp(handle);

		t.release_port = port;
		t.receipt = receipt;
		t.ingress = int32_t(end.port->index);
		dp_sw_enqueue(to->sw, queue, handle, kind_of(h) == KIND_MWR, (h.attr & 2) != 0,
			      to->ro_passing);
	}
};

namespace {

/*
 * TLP handle, which switch port port's arbitration hands its link and which cannot go
 * at once, waits as CompiledTlpPort._gate would make it wait, where that is for the
 * wire's next place alone: its credits taken, a sender of the library's own after those
 * waiting (the arbitration held by it). Whether it does (else nothing is done: it waits
 * for credit, in Python's gate).
 */
bool wait_for_wire(dp_calendar *cal, dp_fabric *fab, uint32_t port, dp_port *link,
		   uint64_t handle, uint64_t now)
{
	uint64_t dc, wire;
	uint32_t kind = dp_tlp_fc(cal, handle, &dc, &wire);

	if (!dp_port_must_wait(link, now) || !dp_port_take_credit(link, 0, kind, dc))
		return false;
	dp_waiter w{fab, port, handle, 0};
	dp_port_add_waiter(link, &w);
	fab->ports[port]->eg.held = 1;
	return true;
}

/*
 * CompiledTlpPort._gate's wait for credit, for the library's own TLP handle that switch
 * port port's arbitration stopped at (its credits not there; no sender of Python's
 * waiting for the same): it waits as a sender of the library's own that holds the
 * arbitration until an update for its credit type comes (dp_fab_resume). Whether it
 * does.
 */
bool wait_for_credit(dp_calendar *cal, dp_fabric *fab, uint32_t port, dp_port *link,
		     uint64_t handle)
{
	uint64_t dc, wire;
	uint32_t kind = dp_tlp_fc(cal, handle, &dc, &wire);

	if (dp_port_credit_waited(link, 0, kind))
		return false;
	dp_waiter w{fab, port, handle, 1};
	dp_port_credit_waiter(link, 0, kind, &w);
	fab->ports[port]->eg.held = 1;
	return true;
}

}  // namespace

extern "C" {

dp_fabric *dp_fab_new(void)
{
	return new dp_fabric();
}

void dp_fab_free(dp_fabric *fab)
{
	delete fab;
}

/* a bridge's views, which Python writes in place */
dp_bridge *dp_fab_bridge(dp_fabric *fab)
{
	fab->bridges.push_back(std::make_unique<dp_bridge>());
	return fab->bridges.back().get();
}

/* a switch port (its bridge, its switch, its number there): its number in the fabric */
uint32_t dp_fab_port(dp_fabric *fab, dp_bridge *bridge, dp_switch *sw, uint32_t number,
		     int upstream)
{
	auto port = std::make_unique<SwitchPort>();

	port->bridge = bridge;
	port->sw = sw;
	port->number = number;
	port->index = uint32_t(fab->ports.size());
	port->upstream = upstream != 0;
	fab->ports.push_back(std::move(port));
	return fab->ports.back()->index;
}

/* the next place port from routes to: port to, through queue (switch.cpp's number) */
void dp_fab_route(dp_fabric *fab, uint32_t from, uint32_t to, uint32_t queue)
{
	fab->ports[from]->tx.emplace_back(fab->ports[to].get(), queue);
}

void dp_fab_ro_passing(dp_fabric *fab, uint32_t port, int on)
{
	fab->ports[port]->ro_passing = on != 0;
}

/* the link end of switch port port's bridge, on its secondary (side 0) or primary side */
dp_rxend *dp_fab_end(dp_fabric *fab, uint32_t port, uint32_t side)
{
	auto end = std::make_unique<dp_rxend>();

	end->port = fab->ports[port].get();
	end->side = side;
	fab->ends.push_back(std::move(end));
	return fab->ends.back().get();
}

/* what may cross the end here (bits: MRd, MWr, CplD), and the checker that sees it
 * there (none: null) as link, direction */
void dp_fab_end_set(dp_rxend *end, uint32_t kinds, dp_checker *ck, uint32_t link, uint32_t dir)
{
	end->kinds = kinds;
	end->ck = ck;
	end->ck_link = link;
	end->ck_dir = dir;
}

/* where the reads crossing end are recorded from now on (none: null) */
void dp_fab_end_reads(dp_rxend *end, dp_reads *reads)
{
	end->reads = reads;
}

/* the meter of what crosses end from now on (none: null) */
void dp_fab_end_meter(dp_rxend *end, dp_meter *meter)
{
	end->meter = meter;
}

/*
 * A TLP of the library's own (handle), received at end as the receipt-th TLP of link
 * port port, crosses the bridge and the switch: 0 when it waits in its egress port's
 * queue (*to: that port's number in the fabric), 1 when the checker has records for
 * Python first (dp_fab_finish moves it on then), -1 when it is Python's to move
 * (nothing done). stop: the checker ends at its first broken rule; now: the step.
 */
int dp_fab_cross(dp_calendar *cal, dp_fabric *fab, dp_rxend *end, uint64_t handle,
		 uint32_t port, uint64_t receipt, int stop, uint64_t now, uint32_t *to)
{
	const std::vector<uint8_t> &bytes = cal->tlp(handle).bytes;
	dp::TlpHeader h;

	if (bytes.size() < 12 || !dp::unpack_header(bytes.data(), h))
		return -1;
	uint64_t data_len = bytes.size() - h.header_bytes();
	if (!(kind_of(h) & end->kinds) || h.ep || !dp::check(h, data_len))
		return -1;
	SwitchPort *out;
	uint32_t queue;
	if (!fab->route(*end, h, &out, &queue))
		return -1;
	if (end->reads && kind_of(h) == KIND_MRD)
		dp_reads_put_tlp(end->reads, &h);
	if (end->meter)
		dp_meter_tlp(end->meter, &h, data_len, now);
	if (end->ck && dp_ck_observe(end->ck, end->ck_link, end->ck_dir, &h, data_len, stop)) {
		end->pending = out;
		end->pending_queue = queue;
		return 1;
	}
	fab->enqueue(cal, *end, out, queue, handle, h, port, receipt, now);
	*to = out->index;
	return 0;
}

/*
 * A TLP of the library's own (handle) that switch port port's arbitration hands on:
 * whether it crosses the port's bridge onto the bridge's link (1: Python sends it
 * there) or is Python's to move (0). The bridge's receive from the switch's side:
 * Bridge.downstream_recv at the upstream port, Bridge.upstream_recv at a downstream one.
 */
int dp_fab_egress(dp_calendar *cal, dp_fabric *fab, uint32_t port, uint64_t handle)
{
	const std::vector<uint8_t> &bytes = cal->tlp(handle).bytes;
	const SwitchPort &sp = *fab->ports[port];
	const dp_bridge &b = *sp.bridge;
	dp::TlpHeader h;

	if (bytes.size() < 12 || !dp::unpack_header(bytes.data(), h))
		return 0;
	if (!kind_of(h) || h.ep || !dp::check(h, bytes.size() - h.header_bytes()))
		return 0;
	if (sp.upstream) {
		if (b.root || dp_match_function(&b.fn, &h) != 0)
			return 0;
		return dp_match_secondary(&b.win, &h) == 0;
	}
	if (dp_match_function(&b.fn, &h) != 0)
		return 0;
	return dp_match_secondary(&b.win, &h) == 1;
}

/*
 * Switch port port's arbitration (tb/models/switch.py's _arbitrate_compiled: the
 * passes of dp_sw_next over the queues of switch sw's port number) from the TLP
 * *handle it has just handed on, run here while it need not wait: a TLP of the
 * library's own that crosses the port's bridge onto its link (dp_fab_egress) goes
 * onto that link as CompiledTlpPort.send_released puts it there, its last receiver's
 * credits released first (its credits taken, the wire free; fc_ready: the link's flow
 * control is initialized). *sent counts those. Returns 0 when a pass finds the queues
 * empty; else it stops at the TLP *handle, which is Python's: 1, nothing done to it (a
 * TLP of Python's, one the bridge keeps); 2, its credits released, for Python's credit
 * gate and send (it must wait for credit or for the wire); or, where hold allows, 3:
 * it waits for the wire with its credits taken, or for credit, a sender of the
 * library's own that holds the arbitration (EgressFlags.held) until the library
 * resumes it.
 */
int dp_fab_arbitrate(dp_calendar *cal, dp_fabric *fab, dp_switch *sw, uint32_t number,
		     uint32_t port, dp_port *link, int fc_ready, uint64_t now, uint64_t *handle,
		     uint64_t *sent, int hold)
{
	uint64_t t = *handle;

	for (;;) {
		*handle = t;
		if (!(t & DP_NATIVE) || !dp_fab_egress(cal, fab, port, t))
			return 1;
		dp_tlp_release(cal, t, now);
		if (!dp_port_send_now(cal, link, t, fc_ready, now)) {
			if (!hold || !fc_ready)
				return 2;
			if (wait_for_wire(cal, fab, port, link, t, now) ||
			    wait_for_credit(cal, fab, port, link, t))
				return 3;
			return 2;
		}
		++*sent;
		t = dp_sw_next(sw, number);
		if (t == UINT64_MAX)
			return 0;
	}
}

/*
 * The TLP handle is passed on (sent on a link): the credits its last receiver holds go
 * back (Tlp.release_fc), and what its hops left is forgotten. Whether credits went back
 * (the calendar may have new work).
 */
int dp_tlp_release(dp_calendar *cal, uint64_t handle, uint64_t now)
{
	dp_tlp &t = cal->tlp(handle);
	uint32_t port = t.release_port;

	t.release_port = DP_NO_PORT;
	t.ingress = -1;
	if (port == DP_NO_PORT)
		return 0;
	dp_port_release(cal->ports[port], now, t.receipt);
	return 1;
}

/* what sending TLP handle takes: its credit type (P, NP, CPL), its data credits, its
 * bytes on the wire */
uint32_t dp_tlp_fc(dp_calendar *cal, uint64_t handle, uint64_t *dc, uint64_t *wire)
{
	const std::vector<uint8_t> &bytes = cal->tlp(handle).bytes;
	dp::TlpHeader h;

	dp::unpack_header(bytes.data(), h);
	uint64_t data = bytes.size() - h.header_bytes();
	*dc = (data / 4 + 3) / 4;
	*wire = bytes.size() + 8;
	if (h.type == dp::TYPE_CPL)
		return 2;
	return h.has_data() ? 0 : 1;
}

bool dp_port_send_now(dp_calendar *cal, dp_port *port, uint64_t handle, int fc_ready,
		      uint64_t now)
{
	uint64_t dc, wire;
	uint32_t kind = dp_tlp_fc(cal, handle, &dc, &wire);

	/* the gate's two checks, neither of which does anything when it fails */
	if (!fc_ready || dp_port_must_wait(port, now) || !dp_port_take_credit(port, 0, kind, dc))
		return false;
	dp_port_send(port, now, handle, wire, 0, kind, dc);
	return true;
}

/*
 * The root complex answers memory request handle, which switch port host (its host
 * bridge's port) hands its host bridge, from the RAM the library holds
 * (RootComplex.handle_tlp and its memory handlers with tb/models/rc.py's correction;
 * mps: its Max Payload Size code): -1 when it is Python's (nothing done), else the
 * request is done, its credits released, and the number of completions waiting for
 * dp_rc_next (0 for a write).
 */
int dp_rc_serve(dp_calendar *cal, dp_fabric *fab, dp_memory *mem, uint32_t host,
		uint64_t handle, uint32_t mps, uint32_t rcb_128, uint32_t split_on_all_rcb,
		uint64_t now)
{
	dp_tlp &t = cal->tlp(handle);
	const SwitchPort &hp = *fab->ports[host];
	dp::TlpHeader h;

	if (t.bytes.size() < 12 || !dp::unpack_header(t.bytes.data(), h))
		return -1;
	uint64_t data_len = t.bytes.size() - h.header_bytes();
	uint32_t kind = kind_of(h);
	if (!(kind == KIND_MRD || kind == KIND_MWR) || h.ep || !dp::check(h, data_len))
		return -1;
	if (!hp.upstream || !hp.bridge->root)
		return -1;
	uint64_t bytes = uint64_t(h.length) * 4;
	bool flush = kind == KIND_MRD && h.length == 1 && h.first_be == 0;
	uint8_t *at;
	if (flush) {
		at = dp_mem_find(mem, h.address & ~uint64_t(3), 4);
	} else {
		if (bytes > 0x1000 - (h.address & 0xfff))
			return -1;	/* discarded with a warning: Python's */
		at = dp_mem_find(mem, h.address, bytes);
	}
	if (!at)
		return -1;	/* not RAM the library holds whole */
	if (kind == KIND_MWR) {
		uint32_t runs[16];
		uint32_t n = dp_mem_write_runs(&h, runs);
		const uint8_t *data = t.bytes.data() + h.header_bytes();
		if (t.release_port != DP_NO_PORT)
			dp_port_release(cal->ports[t.release_port], now, t.receipt);
		for (uint32_t k = 0; k < n; k++)
			std::memcpy(at + runs[2 * k], data + runs[2 * k], runs[2 * k + 1]);
		cal->tlp_free(handle);
		return 0;
	}
	static dp::TlpHeader cpls[1024];
	static uint32_t offsets[1024];
	uint32_t n = dp_rc_read_completions(&h, mps, rcb_128, split_on_all_rcb, cpls, offsets,
					    1024);
	if (n == UINT32_MAX)
		return -1;
	/* each completion crosses the host bridge (upstream_recv) and the switch */
	std::vector<Pending> out;
	for (uint32_t k = 0; k < n; k++) {
		const dp::TlpHeader &c = cpls[k];
		Pending p{0, nullptr, 0};
		if (!check(c, uint64_t(c.length) * 4) ||
		    dp_match_function(&hp.bridge->fn, &c) != 0 ||
		    dp_match_secondary(&hp.bridge->win, &c) != 1 ||
		    !fab->route_from(hp, c, &p.to, &p.queue))
			return -1;
		out.push_back(p);
	}
	if (t.release_port != DP_NO_PORT)
		dp_port_release(cal->ports[t.release_port], now, t.receipt);
	for (uint32_t k = 0; k < n; k++) {
		uint8_t buf[16 + 4096];
		uint64_t payload = uint64_t(cpls[k].length) * 4;
		size_t hb = dp::pack_header(cpls[k], buf);
		std::memcpy(buf + hb, at + uint64_t(offsets[k]) * 4, payload);
		out[k].handle = cal->tlp_new(buf, hb + payload);
		fab->pending.push_back(out[k]);
	}
	fab->pending_ingress = int32_t(hp.index);
	cal->tlp_free(handle);
	return int(n);
}

/* the root complex's next completion into its egress queue: 1 and *to (that port's
 * number), or 0 when none waits */
int dp_rc_next(dp_fabric *fab, dp_calendar *cal, uint32_t *to)
{
	if (fab->pending.empty())
		return 0;
	Pending p = fab->pending.front();
	fab->pending.pop_front();
	cal->tlp(p.handle).ingress = fab->pending_ingress;
	dp_sw_enqueue(p.to->sw, p.queue, p.handle, 0, 0, p.to->ro_passing);
	*to = p.to->index;
	return 1;
}

/* the crossing dp_fab_cross left for Python's checker report, moved on: *to as there */
void dp_fab_finish(dp_calendar *cal, dp_fabric *fab, dp_rxend *end, uint64_t handle,
		   uint32_t port, uint64_t receipt, uint64_t now, uint32_t *to)
{
	dp::TlpHeader h;

	dp::unpack_header(cal->tlp(handle).bytes.data(), h);
	fab->enqueue(cal, *end, end->pending, end->pending_queue, handle, h, port, receipt,
		     now);
	*to = end->pending->index;
	end->pending = nullptr;
}

/* end's flags, which Python writes (dp_end_flags: holds, stop, until) */
void *dp_fab_end_flags(dp_rxend *end)
{
	return &end->flags;
}

/* switch port port's egress flags, which Python writes (EgressFlags: busy, live) */
void *dp_fab_egress_flags(dp_fabric *fab, uint32_t port)
{
	return &fab->ports[port]->eg;
}

/* the link switch port port's bridge sends on, for the library's arbitration there */
void dp_fab_egress_link(dp_fabric *fab, uint32_t port, dp_port *link)
{
	fab->ports[port]->link = link;
}

/* the root complex's host bridge port (host) answered in the library from mem: its
 * flags, which Python writes (ServeFlags) */
void *dp_fab_serve(dp_fabric *fab, uint32_t host, dp_memory *mem)
{
	fab->serve_port = host;
	fab->serve_mem = mem;
	return &fab->serve;
}

/* the hops taken on arrival with no Python since the last call */
uint64_t dp_fab_crossings(dp_fabric *fab)
{
	uint64_t n = fab->crossings;

	fab->crossings = 0;
	return n;
}

/* the senders of the library's own resumed, and in *credit those of them that waited
 * for credit, since the last call */
uint64_t dp_fab_resumes(dp_fabric *fab, uint64_t *credit)
{
	uint64_t n = fab->resumes;

	*credit = fab->credit_resumes;
	fab->resumes = fab->credit_resumes = 0;
	return n;
}

}  // extern "C"

namespace {

/* a report for Python, after those before it (in the entry running's place) */
void report(dp_calendar *cal, uint32_t kind, uint32_t port, uint64_t a, uint64_t b)
{
	cal->reports.push_back(dp_out{kind, port, cal->current, a, b});
}

bool arbitrate(dp_calendar *cal, dp_fabric *fab, uint32_t to, uint64_t now);

/*
 * The root complex's host bridge port's arbitration (switch port host), run here while
 * its answers are the library's (ServeFlags): each memory request of the library's own
 * its RAM holds whole answered (dp_rc_serve), each completion into its egress queue and
 * that egress's arbitration started, as RootServe.serve does; handed to Python at a
 * request the library does not answer (K_ARBITRATE, 1).
 */
void serve(dp_calendar *cal, dp_fabric *fab, uint32_t host, uint64_t now)
{
	SwitchPort &sp = *fab->ports[host];
	const ServeFlags &f = fab->serve;

	for (;;) {
		uint64_t t = dp_sw_next(sp.sw, sp.number);
		if (t == UINT64_MAX) {
			sp.eg.busy = 0;
			return;
		}
		if (!(t & DP_NATIVE) ||
		    dp_rc_serve(cal, fab, fab->serve_mem, host, t, f.mps, f.rcb_128, f.split, now) < 0) {
			report(cal, dp::K_ARBITRATE, host, t, 1);
			return;
		}
		fab->crossings++;
		uint32_t to;
		while (dp_rc_next(fab, cal, &to))
			arbitrate(cal, fab, to, now);
	}
}

/*
 * Switch port to's egress arbitration after a TLP joined its queues
 * (tb/models/switch.py's _arbitrate_compiled, started as _route starts it): nothing while
 * it runs; else its passes here while what they hand on is the library's own and goes
 * onto the link at once, or waits for the wire's next place as a sender of the
 * library's own; handed to Python (K_ARBITRATE, the lane held busy) where a TLP is
 * Python's or must wait for credit, or where the egress is not the library's to run.
 */
bool arbitrate(dp_calendar *cal, dp_fabric *fab, uint32_t to, uint64_t now)
{
	SwitchPort &sp = *fab->ports[to];
	uint64_t t, sent = 0;

	if (sp.eg.busy || sp.eg.held)
		return false;	/* the running arbitration finds it */
	sp.eg.busy = 1;
	if (int64_t(to) == fab->serve_port && fab->serve.live) {
		serve(cal, fab, to, now);
		return true;
	}
	if (!sp.eg.live || !sp.link) {
		report(cal, dp::K_ARBITRATE, to, UINT64_MAX, 0);
		return true;
	}
	t = dp_sw_next(sp.sw, sp.number);
	if (t == UINT64_MAX) {
		sp.eg.busy = 0;
		return false;
	}
	int got = dp_fab_arbitrate(cal, fab, sp.sw, sp.number, to, sp.link, 1, now, &t, &sent,
				   1);
	fab->crossings += sent + (got >= 2);
	if (got == 0 || got == 3) {	/* (3: its sender holds it) */
		sp.eg.busy = 0;
		return false;
	}
	report(cal, dp::K_ARBITRATE, to, t, uint64_t(got));
	return true;
}

}  // namespace

int dp_fab_arrive(dp_calendar *cal, dp_fabric *fab, dp_rxend *end, uint64_t handle,
		  uint32_t port, uint64_t receipt, uint64_t now, dp_out *out)
{
	uint32_t to;

	if (end->flags.holds || now < end->flags.until)
		return -1;
	int got = dp_fab_cross(cal, fab, end, handle, port, receipt, end->flags.stop, now, &to);
	if (got < 0)
		return -1;
	fab->crossings++;
	if (got == 1)
		report(cal, dp::K_CHECKED, port, handle, receipt);
	else
		arbitrate(cal, fab, to, now);
	if (cal->reports.empty())
		return 0;
	*out = cal->reports.front();
	cal->reports.pop_front();
	return 1;
}

/*
 * Sender w resumed, as CompiledTlpPort._gate and switch.py's _arbitrate_compiled go on
 * after its wake: it waits again where another TLP took the place meanwhile; else its
 * TLP goes onto the wire and the arbitration runs on here, holding the egress while it
 * waits again, until the queues are empty or it hands the arbitration to Python
 * (K_ARBITRATE in cal's reports: a TLP of Python's, one that waits for credit, or the
 * next TLP where the egress is not the library's to run now).
 */
void dp_fab_resume(dp_calendar *cal, const dp_waiter &w, uint64_t now)
{
	dp_fabric *fab = w.fab;
	SwitchPort &sp = *fab->ports[w.to];
	dp_port *link = sp.link;
	uint64_t dc, wire, sent = 0;
	uint32_t kind = dp_tlp_fc(cal, w.handle, &dc, &wire);

	fab->resumes++;
	if (w.credit) {
		fab->credit_resumes++;
		/* the gate's credit loop, then its wait for the wire */
		if (!dp_port_take_credit(link, 0, kind, dc)) {
			dp_port_credit_waiter(link, 0, kind, &w);
			return;
		}
		if (dp_port_must_wait(link, now)) {
			dp_waiter ww{w.fab, w.to, w.handle, 0};
			dp_port_add_waiter(link, &ww);
			return;
		}
	} else if (dp_port_has_next(link)) {
		dp_port_add_waiter(link, &w);
		return;
	}
	dp_port_send(link, now, w.handle, wire, 0, kind, dc);
	uint64_t t = dp_sw_next(sp.sw, sp.number);
	if (t == UINT64_MAX) {
		sp.eg.held = 0;
		return;
	}
	if (!(t & DP_NATIVE) || !sp.eg.live) {
		report(cal, dp::K_ARBITRATE, w.to, t, 0);
		return;
	}
	int got = dp_fab_arbitrate(cal, fab, sp.sw, sp.number, w.to, link, 1, now, &t, &sent, 1);
	fab->crossings += sent + (got >= 2);
	if (got == 0)
		sp.eg.held = 0;
	else if (got != 3)
		report(cal, dp::K_ARBITRATE, w.to, t, uint64_t(got));
}

extern "C" {

/* switch port to's sender, at TLP handle (credit: it waited for credit), resumed from
 * cocotb's event loop (K_RESUME): dp_fab_resume, what it has for Python next in cal's
 * reports (dp_cal_report) */
void dp_fab_resume_at(dp_calendar *cal, dp_fabric *fab, uint32_t to, uint64_t handle,
		      uint32_t credit, uint64_t now)
{
	dp_fab_resume(cal, dp_waiter{fab, to, handle, credit}, now);
}

}  // extern "C"
