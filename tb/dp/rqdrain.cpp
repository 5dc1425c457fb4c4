// SPDX-License-Identifier: MIT
/*
 * The hard-IP model's RQ and CC sinks drained in the library (docs/performance.md,
 * "Design: the compiled data path", stage 3): what tb/models/transactors.py's
 * _SinkGroup does, step for step, with the card's posted writes sent and its memory
 * reads issued here.
 *
 * A change of either sink's TLP count (the transactor's frames counter,
 * tb/verilog/pevb_xact_sink.v) sets a drain for the ReadWrite phase of its time step,
 * once a step, when every counter of that clock edge has changed. The drain reads the
 * RQ transactor's new words and unpacks them (xact.cpp, as _TransactorSink._unpack
 * does); each frame in turn, while nothing holds RQ in Python (dp_hip's rq_blocks,
 * which Python keeps: its RQ logic holds frames, the model's conditions for sending a
 * write at once, the link's flow control), that is a well-formed posted write of a
 * function whose bus mastering is on, and that the link takes now (its credits there,
 * the wire's place free), is sent on the card's link as CardEnd.write sends it
 * (card.cpp's dp_rq_write); a well-formed memory read the model would issue at once
 * (its tag free, no non-posted request of Python's before it) is issued as the model's
 * RQ logic issues it, its request active in the model's table, which the model reads
 * through. The first frame that is neither, and every frame after it, is handed to
 * Python, as are the CC sink's new words: Python's part of the drain
 * (_SinkGroup.after_library) takes them in order, RQ before CC, as its own drain would.
 * The RQ sink's read pointer then moves past the words read.
 *
 * A posted write the link cannot take at once (no credit, or the wire's next place
 * taken) waits in the library as the model's RQ logic would wait in its credit gate
 * (CompiledTlpPort._gate): held, with every frame after it, in order, the first a
 * sender of the library's own on the card's port (dp.h's dp_waiter), which the calendar
 * resumes in its turn (dp_rq_resume). Resumed, it is sent, and each frame after it is
 * sent or issued as above, until one must wait again or is one the library does not
 * take: that one and every frame after it are then Python's (K_RQ, dp_rq_left), its
 * RQ logic taking them as they came. What waits for RQ's frames to pass in Python (a
 * completion from CC, an interrupt) counts the held ones (dp_hip's rq_held) and is
 * told as they pass (K_RQ).
 *
 * The callbacks are the simulator's own (IEEE 1364, "Procedural interface"), found in
 * the process as vpi.h says; Python is called from the ReadWrite callback as cocotb
 * calls a ReadWrite trigger's callbacks.
 */
#include "dp.h"
#include "hip.h"
#include "tlp.h"
#include "vpi.h"
#include "xact.h"

#include <cstdint>
#include <deque>
#include <vector>

using dpvpi::CbData;
using dpvpi::Time;
using dpvpi::Value;
using vpiHandle = dpvpi::Handle;

struct dp_words;
struct dp_unpacker;
struct dp_alarm;

extern "C" {
uint32_t dp_vpi_get(void *signal);
void dp_vpi_put(void *signal, uint32_t value);
uint32_t dp_unpack_run(dp_unpacker *u, dp_words *w, uint32_t start, uint32_t count,
		       uint32_t stride, const uint32_t **out, uint32_t *len);
void dp_rq_send(dp_calendar *cal, dp_port *port, const dp::TlpHeader *h, const uint32_t *dw,
		uint32_t n, uint64_t dc, uint64_t now);
int dp_rq_read_tlp(const uint32_t *dw, uint32_t n, uint32_t first_be, uint32_t last_be,
		   uint32_t bus, dp::TlpHeader *h, uint64_t *data_len);
uint64_t dp_alarm_now(const dp_alarm *a);
void dp_alarm_poke(dp_alarm *a, uint64_t now);
int dp_rq_write_tlp(const uint32_t *dw, uint32_t n, uint32_t first_be, uint32_t last_be,
		    uint32_t bus, dp::TlpHeader *h, uint64_t *data_len);
void dp_port_drop_waiters(dp_port *port, const dp_rq_drain *rq);

/*
 * The RQ sink's state, a transactor's (TransactorRqSink, whose state it is, laid out as
 * tb.dp's RqSnk): the words read in all; the buffer's depth, its pointers' modulus, a
 * word's bytes; cocotbext-pcie's queue occupancy limit in frames (none below 1); the
 * buffer's words and the unpacker; the RQ transactor's pointers and TLP count, the CC
 * transactor's; the RQ transactor's hold (back-pressure while the queue is over its
 * limit) and the value last written to it; the queue occupancy limit in bytes.
 */
struct dp_rq_sink {
	uint64_t read;
	uint32_t depth, ptr_mod, stride;
	int32_t limit;
	dp_words *words;
	dp_unpacker *u;
	void *rd_ptr, *wr_ptr, *frames;
	void *cc_rd_ptr, *cc_wr_ptr, *cc_frames;
	void *hold;
	uint32_t held, pad;
	int64_t limit_bytes;
};

}  // extern "C"

namespace {

/*
 * Why RQ's frames are Python's (dp_hip's rq_blocks, which Python keeps): its RQ logic
 * holds frames (received, queued or being sent), the model would not send a write at
 * once for reasons of its own (parity, the link down, its sending replaced, the
 * sequence numbers reported, a logger that logs each frame), the link's flow control
 * is not initialized; and why its memory reads are: non-posted requests queued or
 * being issued there, or tags the core manages (RQ_NP, which a write passes).
 */
enum : uint32_t { RQ_BUSY = 1, RQ_MODEL = 2, RQ_FC = 4, RQ_NP = 8 };
constexpr uint32_t RQ_WRITES = RQ_BUSY | RQ_MODEL | RQ_FC;

/* the Req Types of a memory read and write (PG213, Table "Transaction Types") */
constexpr uint32_t REQ_MEM_READ = 0x0;
constexpr uint32_t REQ_MEM_WRITE = 0x1;
/* the credit type of a non-posted request */
constexpr uint32_t FC_NONPOSTED = 1;

/* a frame as the unpacker leaves it: dwords, byte enables, sequence number,
 * discontinue, then the dwords and their parity */
constexpr uint32_t FRAME_HEAD = 5;
/* the credit type of a posted request */
constexpr uint32_t FC_POSTED = 0;

/* what became of a frame offered to the link: not the library's to send, sent, or
 * waiting (a sender of the library's own) */
enum Offer { NOT_OURS, SENT, WAITING };

}  // namespace

struct dp_rq_drain {
	dp_rq_sink *s;
	dp_hip *hip;
	dp_calendar *cal;
	dp_port *port;
	dp_alarm *alarm;
	int (*python)(uint32_t);	/* Python's part: the frames left, then CC */
	vpiHandle rq_cb = nullptr, cc_cb = nullptr, rw_cb = nullptr;
	Time rq_time{}, cc_time{}, rw_time{};
	Value rq_value{}, cc_value{};
	uint64_t set_for = UINT64_MAX;	/* the step a drain is set for */
	std::vector<uint32_t> left;	/* the frames handed to Python, as unpacked */
	uint64_t writes = 0;		/* posted writes sent, since read */
	uint64_t reads = 0;		/* memory reads issued, since read */
	uint64_t handed = 0;		/* drains that called Python, since read */
	uint64_t drains = 0;		/* drains, since read */
	uint64_t waited = 0;		/* writes sent after a wait for the link, since read */
	uint64_t adopted = 0;		/* writes the model's RQ logic handed over, since read */
	/* the frames held, in order, as unpacked; the first waits for the link (its TLP's
	 * header h and data credits dc), a sender of the library's own, while waiting is
	 * set */
	std::deque<std::vector<uint32_t>> held;
	dp::TlpHeader h{};
	uint64_t dc = 0;
	bool waiting = false;
	bool stopped = false;
};

namespace {

int32_t on_read_write(CbData *d);

/* a sink's TLP count changed: the drain set for this step's ReadWrite phase, once */
int32_t on_count(CbData *d)
{
	auto *r = reinterpret_cast<dp_rq_drain *>(d->user_data);
	uint64_t now = dp_alarm_now(r->alarm);

	if (r->set_for == now)
		return 0;
	r->set_for = now;
	r->rw_cb = dpvpi::at_read_write(on_read_write, r, &r->rw_time);
	return 0;
}

/* whether frame f asks for a memory write (hardip.py's _posted_write) */
bool posted_write(const uint32_t *f)
{
	return f[0] > 2 && ((f[FRAME_HEAD + 2] >> 11) & 0xf) == REQ_MEM_WRITE;
}

/* the first held frame waits for the link as a sender of the library's own: for its
 * credit, or (its credits taken) for the wire's next place */
void wait_for_link(dp_rq_drain *r, bool credit)
{
	dp_waiter w{nullptr, dp_port_id(r->port), 0, credit};

	w.rq = r;
	if (credit)
		dp_port_credit_waiter(r->port, 0, FC_POSTED, &w);
	else
		dp_port_add_waiter(r->port, &w);
	r->waiting = true;
}

/*
 * The posted write of frame f sent on the card's link now, where the model would send
 * it (PevbUspDevice._rq_frame with _rq_write_movable: its function's bus mastering on,
 * nothing of the model's holding RQ, a write this path moves): SENT; else, where it
 * must wait for the link and may (may_wait: the library may hold it), the gate's wait
 * begun as CompiledTlpPort._gate begins it (its credit taken first, waiting for an
 * update while there is none, no sender of Python's waiting for the same; then the
 * wire's next place): WAITING, its data credits in r->dc; else NOT_OURS, nothing done.
 */
Offer send_write(dp_rq_drain *r, const uint32_t *f, uint64_t now, bool may_wait)
{
	const dp_hip &hip = *r->hip;
	const uint32_t *dw = f + FRAME_HEAD;
	uint32_t n = f[0];
	dp::TlpHeader h;
	uint64_t data_len, dc;

	if ((hip.rq_blocks & RQ_WRITES) || f[4] || !posted_write(f))
		return NOT_OURS;
	uint32_t fn = (dw[2] >> 16) & 0x7;
	if (fn >= hip.functions || !(hip.rq_bme >> fn & 1))
		return NOT_OURS;
	if (!dp_rq_write_tlp(dw, n, f[1], f[2], hip.bus, &h, &data_len) || !dp::check(h, data_len))
		return NOT_OURS;
	dp_port *port = r->port;
	dc = (data_len / 4 + 3) / 4;
	bool wire = dp_port_must_wait(port, now);
	if (!wire && dp_port_take_credit(port, 0, FC_POSTED, dc)) {
		dp_rq_send(r->cal, port, &h, dw, n, dc, now);
		return SENT;
	}
	if (!may_wait || r->s->limit_bytes > 0)	/* (a limit in bytes: Python's) */
		return NOT_OURS;
	bool credit = !dp_port_take_credit(port, 0, FC_POSTED, dc);
	if (credit && dp_port_credit_waited(port, 0, FC_POSTED))
		return NOT_OURS;
	r->h = h;
	r->dc = dc;
	wait_for_link(r, credit);
	return WAITING;
}

/*
 * The memory read of frame f (its dwords dw, n of them) issued on the card's link now,
 * where the model would issue it at once (PevbUspDevice._rq_frame, _np_fits and
 * _issue_np): the client's tag in range and free, the completion credits below their
 * limit (a read adds none: cocotbext-pcie counts a request's own data credits), its
 * function's bus mastering on, the link's credit there and its wire's place free. Its
 * request is then active in the table as _issue_np makes it, with what Python makes
 * the model's Tlp of (dp_hip's rq_desc and rq_be; the tag's bit in issued). Whether it
 * was issued.
 */
bool send_read(dp_rq_drain *r, const uint32_t *f, const uint32_t *dw, uint32_t n, uint64_t now)
{
	dp_hip &hip = *r->hip;
	dp::TlpHeader h;
	uint64_t data_len;

	if (hip.rq_blocks || f[4] || n < 3 || ((dw[2] >> 11) & 0xf) != REQ_MEM_READ)
		return false;
	uint32_t fn = (dw[2] >> 16) & 0x7, tag = dw[3] & 0xff;
	if (fn >= hip.functions || !(hip.rq_bme >> fn & 1))
		return false;
	uint32_t tags = tags_enabled(hip);
	if (tag >= tags || hip.request[tag].active)	/* (the model's violations) */
		return false;
	if (hip.cpld_credit_count > hip.cpld_credit_limit)
		return false;
	if (!dp_rq_read_tlp(dw, n, f[1], f[2], hip.bus, &h, &data_len) || !dp::check(h, data_len))
		return false;
	if (dp_port_must_wait(r->port, now) || !dp_port_take_credit(r->port, 0, FC_NONPOSTED, 0))
		return false;
	uint8_t raw[16];
	size_t hb = dp::pack_header(h, raw);
	dp_port_send(r->port, now, r->cal->tlp_new(raw, hb), hb + 8, 0, FC_NONPOSTED, 0);

	dp_hip_request &req = hip.request[tag];
	req.active = 1;
	req.requester_id = h.requester_id;
	req.attr = h.attr;
	req.tc = h.tc;
	req.mem_read = 1;
	req.first_be_offset = h.first_be_offset();
	req.be_byte_count = h.be_byte_count();
	req.address = h.address;
	hip.credits_in[tag] = 0;
	count_free_tags(hip);
	for (int k = 0; k < 4; k++)
		hip.rq_desc[tag][k] = dw[k];
	hip.rq_be[tag] = f[1] | f[2] << 4 | f[3] << 8;
	hip.issued[tag / 64] |= uint64_t(1) << (tag % 64);
	hip.issued_count++;
	return true;
}

/* frame f (size words, as unpacked) held behind those held: received, not passed */
void hold(dp_rq_drain *r, const uint32_t *f, uint32_t size)
{
	r->held.emplace_back(f, f + size);
	r->hip->rq_seen++;
	r->hip->rq_posted += posted_write(f);
	r->hip->rq_held++;
}

/*
 * The RQ transactor's hold as _TransactorSink._update_hold keeps it: set while the
 * frames queued in the sink, those held after the first (which the model's RQ logic
 * has taken, and holds in its credit gate), are over the queue's occupancy limit
 */
void update_hold(dp_rq_drain *r)
{
	dp_rq_sink &s = *r->s;
	uint32_t want = s.limit > 0 && r->held.size() > uint64_t(s.limit) + 1;

	if (want != s.held && s.hold) {
		dp_vpi_put(s.hold, want);
		s.held = want;
	}
}

/* a report for Python, after those waiting (the calendar hands them out in order) */
void report(dp_rq_drain *r, uint64_t b)
{
	r->cal->reports.push_back(
		dp_out{dp::K_RQ, dp_port_id(r->port), 0, reinterpret_cast<uint64_t>(r), b});
}

/* the first held frame has passed (sent, or issued): what waits in Python is told */
void passed(dp_rq_drain *r)
{
	r->held.pop_front();
	if (r->hip->rq_held)	/* (as _rq_passed: none after a reset forgot them) */
		r->hip->rq_held--;
	if (r->hip->rq_waiters)
		report(r, 0);
}

/*
 * The held frames offered in turn, as the model's RQ logic takes the frames queued in
 * its sink: each posted write sent or, where it must wait, waiting as the first; each
 * memory read the model would issue at once issued; the first that is neither, and
 * every frame after it, handed to Python (K_RQ with their number), which receives them
 * as they came (_TransactorSink._take).
 */
void take_held(dp_rq_drain *r, uint64_t now)
{
	while (!r->held.empty()) {
		const uint32_t *f = r->held.front().data();
		Offer got = send_write(r, f, now, true);

		if (got == WAITING) {
			update_hold(r);
			return;
		}
		if (got == SENT) {
			r->writes++;
			passed(r);
			continue;
		}
		if (send_read(r, f, f + FRAME_HEAD, f[0], now)) {
			r->reads++;
			passed(r);
			continue;
		}
		break;
	}
	update_hold(r);
	if (r->held.empty())
		return;
	/* Python receives them anew: its RQ logic counts them as they come */
	dp_hip &hip = *r->hip;
	r->left.clear();
	for (const std::vector<uint32_t> &f : r->held) {
		r->left.insert(r->left.end(), f.begin(), f.end());
		hip.rq_seen--;
		hip.rq_posted -= posted_write(f.data());
	}
	uint64_t n = r->held.size();
	hip.rq_held = hip.rq_held > n ? uint32_t(hip.rq_held - n) : 0;
	r->held.clear();
	update_hold(r);
	report(r, n);
}

int32_t on_read_write(CbData *d)
{
	auto *r = reinterpret_cast<dp_rq_drain *>(d->user_data);
	dp_rq_sink &s = *r->s;
	uint64_t now = dp_alarm_now(r->alarm);

	r->rw_cb = nullptr;
	r->drains++;
	r->left.clear();
	uint32_t nleft = 0;
	uint64_t mod = s.ptr_mod, wr = dp_vpi_get(s.wr_ptr) % mod;
	uint64_t end = s.read + (wr + mod - s.read % mod) % mod;
	bool moved = end != s.read;
	if (moved) {
		const uint32_t *out;
		uint32_t len;
		uint32_t frames = dp_unpack_run(s.u, s.words, uint32_t(s.read % s.depth),
						uint32_t(end - s.read), s.stride, &out, &len);
		const uint32_t *f = out;

		for (uint32_t k = 0; k < frames; k++) {
			uint32_t n = f[0], size = FRAME_HEAD + 2 * n;
			Offer got = NOT_OURS;

			if (!nleft && !r->held.empty()) {
				hold(r, f, size);	/* behind those held, in order */
			} else if (!nleft && (got = send_write(r, f, now, true)) == SENT) {
				r->hip->rq_seen++;
				r->hip->rq_posted++;
				r->writes++;
			} else if (got == WAITING) {
				hold(r, f, size);
			} else if (!nleft && send_read(r, f, f + FRAME_HEAD, n, now)) {
				r->hip->rq_seen++;
				r->reads++;
			} else {
				r->left.insert(r->left.end(), f, f + size);
				nleft++;
			}
			f += size;
		}
		s.read = end;
		update_hold(r);
	}
	bool cc = s.cc_wr_ptr && dp_vpi_get(s.cc_wr_ptr) != dp_vpi_get(s.cc_rd_ptr);
	int got = 0;
	if (nleft || cc) {
		r->handed++;
		got = r->python(nleft);
	}
	if (moved)
		dp_vpi_put(s.rd_ptr, uint32_t(end % mod));
	dp_alarm_poke(r->alarm, now);
	return got;
}

}  // namespace

/*
 * The held frames resumed (w), as CompiledTlpPort._gate goes on after its wake: the
 * first waits again where another TLP took the wire's next place meanwhile, or (after
 * a wait for credit) for the wire, or for credit where the update was not enough; else
 * it is sent, and the frames after it offered in turn (take_held).
 */
void dp_rq_resume(dp_calendar *cal, const dp_waiter &w, uint64_t now)
{
	dp_rq_drain *r = w.rq;
	dp_port *port = r->port;

	r->waiting = false;
	if (r->stopped || r->held.empty())
		return;
	if (w.credit) {
		if (!dp_port_take_credit(port, 0, FC_POSTED, r->dc)) {
			wait_for_link(r, true);
			return;
		}
		if (dp_port_must_wait(port, now)) {
			wait_for_link(r, false);
			return;
		}
	} else if (dp_port_has_next(port)) {
		wait_for_link(r, false);
		return;
	}
	/* its credits taken, the wire's place free: it goes (as _rq_frame's gated write) */
	const uint32_t *f = r->held.front().data();
	dp_rq_send(cal, port, &r->h, f + FRAME_HEAD, f[0], r->dc, now);
	r->writes++;
	r->waited++;
	passed(r);
	take_held(r, now);
}

extern "C" {

/* the held frames resumed from cocotb's event loop (K_RQ_RESUME): dp_rq_resume, what
 * is Python's next in the calendar's reports (dp_cal_report) */
void dp_rq_resume_at(dp_rq_drain *r, uint32_t credit, uint64_t now)
{
	dp_waiter w{nullptr, dp_port_id(r->port), 0, credit};

	w.rq = r;
	dp_rq_resume(r->cal, w, now);
}

/*
 * The model's RQ logic hands the library the posted write it is about to wait for the
 * link with (frame f, size words as unpacked; PevbUspDevice._rq_frame), where nothing is
 * held: the library takes it as its drain would, sent at once (2) or waiting (1), then
 * holds every frame queued in the model's sink behind it (dp_rq_adopt_more); 0 where
 * it does not (the RQ logic waits in its gate), nothing done. The frames were counted
 * as received when the model received them; they are counted as held from here.
 */
int dp_rq_adopt(dp_rq_drain *r, const uint32_t *f, uint32_t size, uint64_t now)
{
	dp_hip &hip = *r->hip;

	if (r->stopped || !r->held.empty())
		return 0;
	uint32_t blocks = hip.rq_blocks;
	hip.rq_blocks &= ~RQ_BUSY;	/* (the frame the RQ logic holds is this one) */
	Offer got = send_write(r, f, now, true);
	hip.rq_blocks = blocks;
	if (got == NOT_OURS)
		return 0;
	r->adopted++;
	if (got == SENT) {
		r->writes++;
		return 2;
	}
	r->held.emplace_back(f, f + size);
	hip.rq_held++;
	update_hold(r);
	return 1;
}

/* a frame the model's sink had queued after the one dp_rq_adopt took, held behind it */
void dp_rq_adopt_more(dp_rq_drain *r, const uint32_t *f, uint32_t size)
{
	r->held.emplace_back(f, f + size);
	r->hip->rq_held++;
	update_hold(r);
}

/*
 * The card's user side reset (PevbUspDevice._drop_partial_tlps): the frames held are
 * lost but the first where it waits for the link, which goes when it may, as the
 * frame the model's RQ logic holds in its credit gate; none of them is counted as
 * received and not passed any more (as _rq_pending cleared).
 */
void dp_rq_drop(dp_rq_drain *r)
{
	while (r->held.size() > (r->waiting ? 1u : 0u))
		r->held.pop_back();
	r->hip->rq_held = 0;
	update_hold(r);
}

/*
 * The drain of RQ sink s and the CC sink beside it, for the hard IP whose requester
 * state is hip, sending on the card's link port (calendar cal, alarm alarm); python:
 * Python's part, called with the frames left for it (dp_rq_left) and returning what a
 * simulator callback returns. It watches the sinks' TLP counts from here on.
 */
dp_rq_drain *dp_rq_drain_new(dp_rq_sink *s, dp_hip *hip, dp_calendar *cal, dp_port *port,
			     dp_alarm *alarm, void *python)
{
	auto *r = new dp_rq_drain();

	r->s = s;
	r->hip = hip;
	r->cal = cal;
	r->port = port;
	r->alarm = alarm;
	r->python = reinterpret_cast<int (*)(uint32_t)>(python);
	r->rq_cb = dpvpi::on_change(s->frames, on_count, r, &r->rq_time, &r->rq_value);
	if (s->cc_frames)
		r->cc_cb = dpvpi::on_change(s->cc_frames, on_count, r, &r->cc_time, &r->cc_value);
	return r;
}

/* the drain stopped, its callbacks gone and its frames held forgotten, no sender of
 * its own left on the link (the test ended) */
void dp_rq_drain_stop(dp_rq_drain *r)
{
	for (vpiHandle *cb : {&r->rq_cb, &r->cc_cb, &r->rw_cb}) {
		if (*cb && vpi_remove_cb)
			vpi_remove_cb(*cb);
		*cb = nullptr;
	}
	dp_port_drop_waiters(r->port, r);
	r->held.clear();
	r->waiting = false;
	r->stopped = true;
}

void dp_rq_drain_free(dp_rq_drain *r)
{
	dp_rq_drain_stop(r);
	delete r;
}

/* the frames the last drain left for Python, as dp_unpack leaves them */
void dp_rq_left(const dp_rq_drain *r, const uint32_t **out, uint32_t *len)
{
	*out = r->left.data();
	*len = uint32_t(r->left.size());
}

/* the posted writes the drain sent, and in *waited those of them sent after a wait for
 * the link, in *adopted those the model's RQ logic handed over, in *reads, *drains and
 * *handed the memory reads it issued, the drains made and those that called Python,
 * since the last call */
uint64_t dp_rq_drain_counts(dp_rq_drain *r, uint64_t *waited, uint64_t *adopted,
			    uint64_t *reads, uint64_t *drains, uint64_t *handed)
{
	uint64_t n = r->writes;

	*waited = r->waited;
	*adopted = r->adopted;
	*reads = r->reads;
	*drains = r->drains;
	*handed = r->handed;
	r->writes = r->waited = r->adopted = r->reads = r->drains = r->handed = 0;
	return n;
}

}  // extern "C"
