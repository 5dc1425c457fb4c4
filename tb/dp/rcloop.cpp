// SPDX-License-Identifier: MIT
/*
 * The hard-IP model's RC loop in the library (docs/performance.md, "Design: the compiled
 * data path", stage 3): for the completions the card's end took (hip.cpp), what
 * tb/models/hardip.py's _run_rc_logic and TransactorRcSource.send_queued do, step for
 * step: each in turn is written into the RC transactor's buffer once the buffer has
 * room for it (cocotbext-pcie's queue occupancy limit, then the buffer's depth), the
 * receive buffer's counts dropped after it; where it must wait, it asks the transactor
 * for the point (wake_ptr, wake_req: tb/verilog/pevb_xact_source.v) and goes on at the
 * change of wake_ack, as the loop's task would resume there.
 *
 * The library runs the loop only while Python's loop is idle in its queue's get with the
 * queue empty (hip.cpp starts it, in a time step's tail), and until the completions it
 * took are all written; whatever Python puts into the model's RC queue meanwhile first
 * hands the loop back to Python where it stands (dp_rc_adopt): its wait, the completion
 * it holds, the rest as markers, so that Python's loop goes on from the same point.
 *
 * The writes are the loop's, made where its task would make them: at once in a timer
 * callback (the calendar's tail, where hip.cpp starts the loop only when Python's writes
 * there are at once too), and in the value-change callback as cocotb makes them there:
 * at once where it trusts the simulator's writes (Verilator), else in the ReadWrite
 * phase of that time step (Icarus). The callbacks are the simulator's own (IEEE 1364,
 * "Procedural interface": vpi_register_cb), found in the process as vpi.h says.
 */
#include "vpi.h"
#include "xact.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

using dpvpi::CbData;
using dpvpi::Time;
using dpvpi::Value;
using vpiHandle = dpvpi::Handle;

extern "C" {
uint32_t dp_vpi_get(void *signal);
void dp_vpi_put(void *signal, uint32_t value);
struct dp_words;
uint32_t dp_rcq_take(dp_rcq *q);
uint32_t dp_rcq_push(dp_rcq *q, dp_words *w, uint32_t start, const dp_stream *s,
		     uint32_t stride, uint64_t *dc);

/*
 * The model's RC source, a transactor's (TransactorRcSource, whose state it is, laid out
 * as tb.dp's RcSrc): the beats written in all; the buffer's depth, its pointers'
 * modulus, dwords a beat, a word's bytes; cocotbext-pcie's idle event set (which a write
 * clears), cocotb trusting the simulator's writes; cocotbext-pcie's queue occupancy limit
 * in frames (none below 1), the wake requests made (mod 256); the first beat of each
 * frame written while the per-beat packer would hold it, a ring of cap (a power of two)
 * from head; the buffer's words and the stream's layout (for dp_rcq_push); the
 * transactor's signals.
 */
struct dp_rc_src {
	uint64_t pushed;
	uint32_t depth, ptr_mod, lanes, stride;
	uint32_t idle, trust;
	int32_t limit;
	uint32_t wake_req;
	uint32_t starts_cap, starts_head, starts_len, pad;
	uint64_t *starts;
	dp_words *words;
	const dp_stream *stream;
	void *rd_ptr, *wr_ptr, *wake_ptr, *wake_req_sig, *wake_ack;
};

}  // extern "C"

namespace {

enum Phase : uint32_t {
	IDLE = 0,	/* Python's loop has it (idle or not) */
	FULL = 1,	/* the library's, waiting while the source's queue is full */
	ROOM = 2,	/* the library's, waiting for room in the buffer */
	RUNNING = 3,	/* the library's, running */
};

uint64_t taken(const dp_rc_src &s)
{
	uint64_t mod = s.ptr_mod, rd = dp_vpi_get(s.rd_ptr) % mod;

	return s.pushed - (s.pushed % mod + mod - rd) % mod;
}

/* _TransactorSource._waiting: the frames the per-beat packer would not have taken */
uint32_t waiting(dp_rc_src &s, uint64_t now_taken)
{
	while (s.starts_len && s.starts[s.starts_head] <= now_taken + 1) {
		s.starts_head = (s.starts_head + 1) & (s.starts_cap - 1);
		s.starts_len--;
	}
	return s.starts_len;
}

bool full(dp_rc_src &s)
{
	return s.limit > 0 && waiting(s, taken(s)) > uint32_t(s.limit);
}

/* TransactorRcSource._starting: where the next frame starts, if the packer would hold it
 * (the ones it took already dropped first, as _waiting would) */
void starting(dp_rc_src &s)
{
	uint64_t t = taken(s);

	if (s.pushed <= t + 1)
		return;
	waiting(s, t);
	if (s.starts_len < s.starts_cap) {
		s.starts[(s.starts_head + s.starts_len) & (s.starts_cap - 1)] = s.pushed;
		s.starts_len++;
	}
}

}  // namespace

struct dp_rc_loop {
	dp_rcq *q;
	dp_rc_counts counts;
	dp_rc_src *s = nullptr;
	uint32_t phase = IDLE;
	uint64_t point = 0;	/* the point its wait is for (beats taken) */
	uint32_t ndw = 0;	/* the completion it holds: its payload dwords */
	vpiHandle ack_cb = nullptr;
	bool deferring = false;	/* in a value-change callback where writes wait */
	std::vector<std::pair<void *, uint32_t>> writes;	/* for the ReadWrite phase */
	vpiHandle rw_cb = nullptr;
	Time ack_time{}, rw_time{};
	Value ack_value{};
	uint64_t turns = 0;	/* completions written, since read */
	uint64_t waits = 0;	/* waits for the transactor, since read */
	uint64_t adopted = 0;	/* times Python took the loop over, since read */
};

namespace {

int32_t on_read_write(CbData *d)
{
	auto *l = reinterpret_cast<dp_rc_loop *>(d->user_data);

	l->rw_cb = nullptr;
	for (auto &w : l->writes)
		dp_vpi_put(w.first, w.second);
	l->writes.clear();
	return 0;
}

/* a write of the loop's, as its task would make it here */
void put(dp_rc_loop *l, void *signal, uint32_t value)
{
	if (!l->deferring) {
		dp_vpi_put(signal, value);
		return;
	}
	for (auto &w : l->writes)
		if (w.first == signal) {	/* (cocotb applies the last write of a signal) */
			w.second = value;
			return;
		}
	l->writes.emplace_back(signal, value);
	if (!l->rw_cb)
		l->rw_cb = dpvpi::at_read_write(on_read_write, l, &l->rw_time);
}

int32_t on_ack(CbData *d);

/* _taken_reaches: whether the transactor has put point beats on the bus, in all; else a
 * wake request for it made, and the loop goes on at wake_ack's change */
bool reaches(dp_rc_loop *l, uint64_t point)
{
	dp_rc_src &s = *l->s;

	if (taken(s) >= point)
		return true;
	s.wake_req = (s.wake_req + 1) % 256;
	put(l, s.wake_ptr, uint32_t(point % s.ptr_mod));
	put(l, s.wake_req_sig, s.wake_req);
	l->point = point;
	l->waits++;
	if (!l->ack_cb)
		l->ack_cb = dpvpi::on_change(s.wake_ack, on_ack, l, &l->ack_time, &l->ack_value);
	return false;
}

/* the completion held written into the buffer, as send_queued's end and the loop's */
void write_held(dp_rc_loop *l)
{
	dp_rc_src &s = *l->s;
	uint64_t dc;

	starting(s);
	s.pushed += dp_rcq_push(l->q, s.words, uint32_t(s.pushed % s.depth), s.stream,
				s.stride, &dc);
	put(l, s.wr_ptr, uint32_t(s.pushed % s.ptr_mod));
	s.idle = 0;
	*l->counts.cplh = std::max<int64_t>(*l->counts.cplh - 1, 0);
	*l->counts.cpld = std::max<int64_t>(*l->counts.cpld - int64_t(dc + 1), 0);
	l->turns++;
}

/*
 * The loop on from where it stands (resumed: at its wait's end; else at a completion to
 * take from the queue), until it waits or has written every completion queued.
 */
void run(dp_rc_loop *l, bool resumed)
{
	dp_rc_src &s = *l->s;

	for (;;) {
		if (resumed) {
			resumed = false;
			uint32_t was = l->phase;

			l->phase = RUNNING;
			if (!reaches(l, l->point)) {
				l->phase = was;
				return;
			}
			if (was == ROOM)
				goto write;
		} else {
			l->phase = RUNNING;
			l->ndw = dp_rcq_take(l->q);
		}
		/* _room_for_completion */
		while (full(s)) {
			if (!reaches(l, s.starts[s.starts_head] - 1)) {
				l->phase = FULL;
				return;
			}
		}
		{
			uint64_t beats = (3 + l->ndw + s.lanes - 1) / s.lanes;

			if (s.pushed + beats - taken(s) > s.depth &&
			    !reaches(l, s.pushed + beats - s.depth)) {
				l->phase = ROOM;
				return;
			}
		}
write:
		write_held(l);
		if (!dp_rcq_size(l->q)) {
			l->phase = IDLE;
			*l->counts.owned = 0;
			return;
		}
	}
}

int32_t on_ack(CbData *d)
{
	auto *l = reinterpret_cast<dp_rc_loop *>(d->user_data);

	if (l->ack_cb) {	/* (once, as cocotb's ValueChange trigger) */
		vpi_remove_cb(l->ack_cb);
		l->ack_cb = nullptr;
	}
	if (l->phase != FULL && l->phase != ROOM)
		return 0;
	l->deferring = !l->s->trust;
	run(l, true);
	l->deferring = false;
	return 0;
}

}  // namespace

extern "C" {

/* the RC loop for queue q, dropping the counts in counts */
dp_rc_loop *dp_rc_loop_new(dp_rcq *q, const dp_rc_counts *counts)
{
	auto *l = new dp_rc_loop();

	l->q = q;
	l->counts = *counts;
	return l;
}

/* the loop stopped where it stands, its callbacks gone, its writes not yet made
 * dropped (the test ended: cocotb ends the loop's task then) */
void dp_rc_loop_stop(dp_rc_loop *l)
{
	if (l->ack_cb && vpi_remove_cb)
		vpi_remove_cb(l->ack_cb);
	if (l->rw_cb && vpi_remove_cb)
		vpi_remove_cb(l->rw_cb);
	l->ack_cb = l->rw_cb = nullptr;
	l->writes.clear();
	if (l->phase != IDLE) {
		l->phase = IDLE;
		*l->counts.owned = 0;
	}
}

void dp_rc_loop_free(dp_rc_loop *l)
{
	dp_rc_loop_stop(l);
	delete l;
}

/* the RC source it writes into (null: none) */
void dp_rc_loop_source(dp_rc_loop *l, dp_rc_src *s)
{
	l->s = s;
}

/* whether the library can run the loop: an RC source it writes into, not idle by
 * cocotbext-pcie's event (which the loop's first write would clear) */
int dp_rc_loop_ready(const dp_rc_loop *l)
{
	return l->s && !l->s->idle;
}

/* whether the loop is the library's */
int dp_rc_loop_owned(const dp_rc_loop *l)
{
	return l->phase != IDLE;
}

/* the loop the library's from here (Python's is idle in its get, the queue empty, the
 * source one it writes into): the completions queued written in turn, from a timer
 * callback (writes at once) */
void dp_rc_loop_start(dp_rc_loop *l)
{
	*l->counts.owned = 1;
	l->deferring = false;
	run(l, false);
}

/*
 * The loop handed back to Python where it stands: -1 where it is not the library's;
 * else the completions still queued behind the one it holds (Python queues a marker for
 * each), and in *point, *phase (1 waiting while the queue is full, 2 for room) and *ndw
 * its wait and the completion it holds. Its ReadWrite writes still go out.
 */
int64_t dp_rc_adopt(dp_rc_loop *l, uint64_t *point, uint32_t *phase, uint32_t *ndw)
{
	if (l->phase == IDLE)
		return -1;
	if (l->ack_cb) {
		vpi_remove_cb(l->ack_cb);
		l->ack_cb = nullptr;
	}
	*point = l->point;
	*phase = l->phase;
	*ndw = l->ndw;
	l->adopted++;
	l->phase = IDLE;
	*l->counts.owned = 0;
	return dp_rcq_size(l->q);
}

/* the completions the loop wrote, the waits it made and the times Python took it over,
 * since the last call */
uint64_t dp_rc_loop_turns(dp_rc_loop *l, uint64_t *waits, uint64_t *adopted)
{
	uint64_t n = l->turns;

	*waits = l->waits;
	*adopted = l->adopted;
	l->turns = l->waits = l->adopted = 0;
	return n;
}

}  // extern "C"
