/* SPDX-License-Identifier: MIT */
/*
 * The compiled data path's shared definitions (docs/performance.md, "Design: the
 * compiled data path"): the calendar of the fabric's timed work and the TLP-level
 * links whose work it runs. calendar.cpp keeps the order, link.cpp the links.
 */
#ifndef PEVB_DP_H
#define PEVB_DP_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <queue>
#include <unordered_map>
#include <vector>

namespace dp {

/* what an entry of the calendar is: Python's work, or a link's own */
enum Kind : uint32_t {
	/* reported to Python, which runs what they stand for */
	K_NONE = 0,
	K_PY = 1,	/* Python's work, by its handle (a) */
	K_RX = 2,	/* a TLP (a) has reached a port's receiver (its receipt: b) */
	K_WAKE = 3,	/* a port's wire takes the first sender waiting for it */
	K_CREDIT = 4,	/* credit (vc a, type b) that a sender waits for has come */
	K_CHECKED = 5,	/* a TLP (a, the b-th received at port) taken at the port's end in
			 * the library (a bridge's crossing, the GPU's answer), the checker
			 * with records for Python first */
	K_ARBITRATE = 6,	/* switch port port's egress arbitration is Python's from
				 * here: from its start (a = ~0), or at TLP a, which is
				 * Python's (b = 1), waits for credit or the wire (b = 2), or
				 * is the next its loop takes on from (b = 0) */
	K_RESUME = 7,	/* a sender of the library's own (switch port port's arbitration,
			 * at TLP a) has the wire's next place, or (b = 1) the credit
			 * update it waits for has come: resumed from cocotb's event
			 * loop, in its turn (dp_fab_resume) */
	K_REST = 8,	/* a TLP (a, the b-th received at port) answered at the port's end
			 * in the library, with work left for Python in its receive lane */
	K_TOOK = 9,	/* a completion (tag a; b: it ended its request) taken at the
			 * card's end in the library: the model's Python moves on */
	K_RQ_RESUME = 10,	/* the RQ frames the card's drain holds (a, its
				 * dp_rq_drain) wait no longer for the wire's next place,
				 * or (b = 1) for the credit: resumed from cocotb's event
				 * loop, in its turn (dp_rq_resume) */
	K_RQ = 11,	/* the card's drain (a) has passed an RQ frame it held, which a
			 * Python task waits for (b = 0), or hands Python the b frames it
			 * holds from here (dp_rq_left) */
	/* the links' own, run in the library */
	K_ARRIVE_TLP = 16,	/* a TLP (a; its credits in b) reaches a port */
	K_ARRIVE_FC = 17,	/* an UpdateFC (vc, type, header, data in a) reaches a port */
	K_SENT = 18,		/* the hand-over of a port's wire to the next TLP */
	K_FC_TIMER = 19,	/* a port's flow-control update timer expires */
};

struct Entry {
	uint64_t step;
	uint64_t slot;
	uint32_t kind;
	uint32_t port;
	uint64_t a;
	uint64_t b;
};

struct Later {
	bool operator()(const Entry &x, const Entry &y) const
	{
		return x.step != y.step ? x.step > y.step : x.slot > y.slot;
	}
};

}  // namespace dp

/* what the calendar hands Python: laid out as tb/dp's ctypes structure says */
struct dp_out {
	uint32_t kind;
	uint32_t port;
	uint64_t slot;
	uint64_t a;
	uint64_t b;
};

/*
 * One credit type's counters, named and ordered as cocotbext-pcie's FcStateData keeps
 * them, so the flow-control initialization Python runs writes them in place.
 */
struct dp_credits {
	int64_t tx_initial_allocation;
	int64_t tx_credits_consumed;
	int64_t tx_credit_limit;
	int64_t rx_initial_allocation;
	int64_t rx_credits_allocated;
	int64_t rx_credits_received;
};

/* one virtual channel: P, NP and CPL, header then data each, as FcChannelState */
struct dp_channel {
	dp_credits fc[6];
	int64_t next_fc_tx[3];
	int64_t active;
};

struct dp_port;
struct dp_fabric;
struct dp_card_end;
struct dp_rq_drain;

/*
 * A sender waiting for a port's wire, in the order they came (TlpPort.send's
 * senders): Python's (fab and rq null), which Python wakes with its own event, or an
 * egress arbitration of the library's own (fabric.cpp) stopped at TLP handle, its
 * credits taken, which the library resumes itself; or such an arbitration waiting for
 * the link's credit for handle (credit set), which the library resumes when an update
 * comes; or, alike, the card's RQ frames the library holds (rq, rqdrain.cpp), the
 * first of them waiting.
 */
struct dp_waiter {
	dp_fabric *fab;
	uint32_t to;		/* its switch port, in fab (the card's: its link port) */
	uint64_t handle;
	uint32_t credit;	/* waits for credit (its credits not taken) */
	dp_rq_drain *rq = nullptr;

	bool library() const { return fab || rq; }
};

/*
 * What the step has woken that Python's scheduler would run after the step's work, in
 * order: a sender of the library's own (card null), or the card's model moving on by a
 * completion its end took (card: its end, port its link port; tag, and whether it ended
 * its request), which wakes the model's RC loop (hip.cpp, dp_card_turn).
 */
struct dp_woken {
	dp_waiter w;
	dp_card_end *card;
	uint32_t port;
	uint64_t tag, completed;
};

/* why Python decides an arrival at a link end the library may take it past (bits, which
 * Python writes): the port's receive handler is not the one armed, its receive lane is
 * busy, a gate stands in front (a fault injector with a rule armed or TLPs its stall
 * holds; at a model's end, also the model not ready), a passive observer is shown what
 * arrives, not armed yet */
enum : uint32_t {
	HOLD_HANDLER = 1, HOLD_LANE = 2, HOLD_GATES = 4, HOLD_SHOWN = 8, HOLD_OFF = 16
};

/* what a bridge's end (fabric.cpp) and the card's (hip.cpp) read of Python's state,
 * laid out as tb/models/native.py's EndFlags */
struct dp_end_flags {
	uint32_t holds = HOLD_OFF;
	int32_t stop = 0;	/* the checker ends at its first broken rule */
	uint64_t until = 0;	/* before this step a stall in front may hold what comes */
};

/* TLPs of the library's own carry this bit in their handle; Python's do not */
constexpr uint64_t DP_NATIVE = uint64_t(1) << 62;

/* no port: a TLP whose receiver's credits are not held for it */
constexpr uint32_t DP_NO_PORT = UINT32_MAX;

/* a TLP of the library's own: its header and data as on the wire, and what a hop the
 * library took for Python leaves for the next (fabric.cpp) */
struct dp_tlp {
	std::vector<uint8_t> bytes;
	uint32_t release_port = DP_NO_PORT;	/* whose receiver holds its credits ... */
	uint64_t receipt = 0;			/* ... under which number */
	int32_t ingress = -1;			/* the switch port it entered by (fabric.cpp) */
};

/*
 * The trace ring: each TLP of the library's own that a hop takes past a link port whose
 * tap has passive observers for its kind (tb/env/link.py's LinkTaps; kind bits as
 * fabric.cpp's: 1 MRd, 2 MWr, 4 CplD) is recorded as a 16-byte head (step, the tap's
 * number, the TLP's size) and the TLP's bytes as on the wire, padded to 8 bytes; Python
 * drains the ring (dp_trace_take) and shows each record to those observers.
 */
struct dp_tap {
	uint32_t kinds = 0;	/* the kinds recorded here */
	uint32_t tag = 0;	/* the tap's number, which Python names */
};

struct dp_calendar {
	std::priority_queue<dp::Entry, std::vector<dp::Entry>, dp::Later> heap;
	uint64_t next_slot = 0;
	bool firing = false;
	uint64_t current = 0;		/* the slot of the work running, while firing */
	uint64_t pushed = UINT64_MAX;	/* the earliest step pushed since it was read */
	std::vector<dp_port *> ports;
	std::vector<dp_tlp> tlps;	/* the library's TLPs, by handle (less DP_NATIVE) */
	std::vector<uint64_t> free_tlps;
	std::FILE *log = nullptr;	/* every TLP's arrival at a port, when set */
	std::vector<dp_tap> taps;	/* by port number */
	/* what an entry has for Python beyond its first report, in order (dp_cal_pop_due
	 * hands them out before it runs the next entry) */
	std::deque<dp_out> reports;
	std::vector<uint8_t> ring;	/* the trace ring's records, oldest first */
	/*
	 * What the step woke before Python was handed anything in it (senders of the
	 * library's own, the card's model's turns): Python's scheduler would run them
	 * after the step's work, in this order, with nothing of Python's between, so the
	 * library runs them itself then where it can (the step's tail); handed to Python
	 * (K_RESUME, K_TOOK), in order, ahead of the first report that comes before that.
	 */
	std::deque<dp_woken> resumed;
	bool told = false;	/* Python has been handed a report in this step */
	bool tail = false;	/* the step's entries are done: its resumptions run */

	/* TLP handle, of kind bit kind, taken past port at step now: recorded when that
	 * port's tap wants it */
	void note(uint32_t port, uint32_t kind, uint64_t now, uint64_t handle)
	{
		if (port >= taps.size() || !(taps[port].kinds & kind))
			return;
		const std::vector<uint8_t> &bytes = tlp(handle).bytes;
		uint64_t at = ring.size(), size = bytes.size();
		uint32_t head[2] = {taps[port].tag, uint32_t(size)};

		ring.resize(at + 16 + ((size + 7) & ~uint64_t(7)), 0);
		std::memcpy(&ring[at], &now, 8);
		std::memcpy(&ring[at + 8], head, 8);
		std::memcpy(&ring[at + 16], bytes.data(), size);
	}

	uint64_t tlp_new(const uint8_t *bytes, uint64_t size)
	{
		uint64_t k;

		if (free_tlps.empty()) {
			k = tlps.size();
			tlps.emplace_back();
		} else {
			k = free_tlps.back();
			free_tlps.pop_back();
		}
		tlps[k].bytes.assign(bytes, bytes + size);
		tlps[k].release_port = DP_NO_PORT;
		tlps[k].ingress = -1;
		return k | DP_NATIVE;
	}
	dp_tlp &tlp(uint64_t handle) { return tlps[handle & ~DP_NATIVE]; }
	void tlp_free(uint64_t handle)
	{
		tlps[handle & ~DP_NATIVE].bytes.clear();
		free_tlps.push_back(handle & ~DP_NATIVE);
	}

	uint64_t slot() { return next_slot++; }
	void push(uint64_t step, uint64_t slot, uint32_t kind, uint32_t port, uint64_t a,
		  uint64_t b)
	{
		heap.push(dp::Entry{step, slot, kind, port, a, b});
		if (step < pushed)
			pushed = step;
	}
	bool passed(uint64_t step, uint64_t slot, uint64_t now) const;
	~dp_calendar();
};

extern "C" {
/* link.cpp: a port's credit gate (credit of type on vc for dc data credits taken, or
 * none), whether a sender must wait for its wire, a TLP onto its wire, a received
 * TLP's credits given back by its receipt, whether a TLP waits for the wire's next
 * place, and a sender of the library's own waiting for that place */
int dp_port_take_credit(dp_port *port, uint32_t vc, uint32_t type, uint64_t dc);
int dp_port_must_wait(dp_port *port, uint64_t now);
int dp_port_has_next(const dp_port *port);
void dp_port_add_waiter(dp_port *port, const dp_waiter *w);
void dp_port_credit_waiter(dp_port *port, uint32_t vc, uint32_t type, const dp_waiter *w);
int dp_port_credit_waited(const dp_port *port, uint32_t vc, uint32_t type);
void dp_port_send(dp_port *port, uint64_t now, uint64_t tlp, uint64_t nbytes, uint32_t vc,
		  uint32_t type, uint64_t dc);
void dp_port_release(dp_port *port, uint64_t now, uint64_t receipt);
uint32_t dp_port_id(const dp_port *port);
/* fabric.cpp: a TLP of the library's own's credit type, data credits and wire size;
 * and that TLP onto a port's wire at once, as CompiledTlpPort.send's gate lets it go
 * (fc_ready: the link's flow control is initialized): whether it went (else nothing is
 * done, and it waits for Python's gate) */
uint32_t dp_tlp_fc(dp_calendar *cal, uint64_t handle, uint64_t *dc, uint64_t *wire);
bool dp_port_send_now(dp_calendar *cal, dp_port *port, uint64_t handle, int fc_ready,
		      uint64_t now);
}

struct dp_rxend;
struct dp_gpu;
struct dp_card_end;

/* fabric.cpp: a TLP of the library's own (handle) that has reached link port port (its
 * receipt-th) taken past the port's bridge end there and on, in the library: 0 when
 * there is nothing for Python, 1 when *out says what, -1 when Python takes it (K_RX) */
int dp_fab_arrive(dp_calendar *cal, dp_fabric *fab, dp_rxend *end, uint64_t handle,
		  uint32_t port, uint64_t receipt, uint64_t now, dp_out *out);

/* gpu.cpp: a request of the library's own (handle) that has reached the GPU's link port
 * (its receipt-th) answered there: as dp_fab_arrive */
int dp_gpu_arrive(dp_calendar *cal, dp_gpu *g, dp_port *port, uint64_t handle,
		  uint64_t receipt, uint64_t now, dp_out *out);

/* hip.cpp: a completion of the library's own (handle) that has reached the card's link
 * port (its receipt-th) taken there: as dp_fab_arrive */
int dp_card_arrive(dp_calendar *cal, dp_card_end *e, dp_port *port, uint64_t handle,
		   uint64_t receipt, uint64_t now, dp_out *out);

/* calendar.cpp: what a step woke (w: a sender of the library's own has the wire's next
 * place, or the card's model moves on) run in the step's tail or handed to Python
 * (*out, true); fabric.cpp: a sender resumed (its TLP sent, its arbitration run on;
 * what is Python's next in cal's reports) */
bool dp_cal_woken(dp_calendar *cal, const dp_woken &w, dp_out *out);
void dp_fab_resume(dp_calendar *cal, const dp_waiter &w, uint64_t now);

/* rqdrain.cpp: the card's held RQ frames resumed (w: their first has the wire's next
 * place, or the credit it waits for has come): sent on, what is Python's next in cal's
 * reports */
void dp_rq_resume(dp_calendar *cal, const dp_waiter &w, uint64_t now);

/* hip.cpp: the card's model moves on by the completion its end took (w), in the step's
 * tail, its RC loop's turn included: whether the library did it all (else Python) */
bool dp_card_turn(const dp_woken &w);

/* link.cpp: run a link's own entry; true when it has something for Python in *out */
bool dp_link_run(dp_calendar *cal, const dp::Entry &e, uint64_t now, dp_out *out);
void dp_link_free(dp_port *port);

#endif /* PEVB_DP_H */
