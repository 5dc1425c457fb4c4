// SPDX-License-Identifier: MIT
/*
 * The compiled data path's calendar (docs/performance.md, "Design: the compiled data
 * path"): the fabric's timed work as entries at (step, slot), earliest step first and,
 * within a step, lowest slot first, as tb/models/timeline.py orders them. Slots come
 * from one counter here, for Python's work and the links' alike. An entry is Python's
 * work (named by a handle of Python's own) or a link's, which runs here (link.cpp) and
 * reports to Python only what Python must do next.
 */
#include "dp.h"

#include <algorithm>

bool dp_calendar::passed(uint64_t step, uint64_t slot, uint64_t now) const
{
	if (now != step)
		return now > step;
	if (firing && !tail)
		return current > slot;
	return !(!heap.empty() && heap.top().step == step && heap.top().slot < slot);
}

dp_calendar::~dp_calendar()
{
	for (dp_port *port : ports)
		dp_link_free(port);
	if (log)
		std::fclose(log);
}

extern "C" {

dp_calendar *dp_cal_new(void)
{
	return new dp_calendar();
}

void dp_cal_free(dp_calendar *cal)
{
	delete cal;
}

/* a place in the order of work, for work that may never be scheduled */
uint64_t dp_cal_slot(dp_calendar *cal)
{
	return cal->slot();
}

/* Python's work (handle) at step, in place slot among that step's work */
void dp_cal_push(dp_calendar *cal, uint64_t step, uint64_t slot, uint64_t handle)
{
	cal->push(step, slot, dp::K_PY, 0, handle, 0);
}

/* the earliest step scheduled since the last call (UINT64_MAX: none); resets it */
uint64_t dp_cal_pushed(dp_calendar *cal)
{
	uint64_t step = cal->pushed;

	cal->pushed = UINT64_MAX;
	return step;
}

uint64_t dp_cal_size(const dp_calendar *cal)
{
	return cal->heap.size();
}

/* the first entry's step and slot; 0 when there is none */
int dp_cal_first(const dp_calendar *cal, uint64_t *step, uint64_t *slot)
{
	if (cal->heap.empty())
		return 0;
	*step = cal->heap.top().step;
	*slot = cal->heap.top().slot;
	return 1;
}

namespace {

/* what the step woke handed to Python: a sender of the library's own to resume from
 * cocotb's event loop, or the card's model to move on */
dp_out resume_report(const dp_woken &w)
{
	if (w.card)
		return dp_out{dp::K_TOOK, w.port, 0, w.tag, w.completed};
	if (w.w.rq)
		return dp_out{dp::K_RQ_RESUME, w.w.to, 0, reinterpret_cast<uint64_t>(w.w.rq),
			      w.w.credit};
	return dp_out{dp::K_RESUME, w.w.to, 0, w.w.handle, w.w.credit};
}

/* what the step has woken so far to Python, ahead of the reports waiting: its
 * scheduler would run it before anything those reports wake */
void resumed_ahead(dp_calendar *cal)
{
	for (auto it = cal->resumed.rbegin(); it != cal->resumed.rend(); ++it)
		cal->reports.push_front(resume_report(*it));
	cal->resumed.clear();
}

/* *out for Python, after what the step has woken so far */
uint32_t hand(dp_calendar *cal, dp_out *out)
{
	if (!cal->resumed.empty()) {
		cal->reports.push_front(*out);
		resumed_ahead(cal);
		*out = cal->reports.front();
		cal->reports.pop_front();
	}
	cal->told = true;
	return out->kind;
}

}  // namespace

}  // extern "C"

/*
 * The step has woken w (a sender of the library's own has the wire's next place, or the
 * card's model moves on), which Python's scheduler would run after the step's work:
 * where Python has been handed nothing in this step yet, the calendar runs it then
 * (dp_cal_pop_due), else Python does in its turn (*out: K_RESUME or K_TOOK, true).
 */
bool dp_cal_woken(dp_calendar *cal, const dp_woken &w, dp_out *out)
{
	if (!cal->told) {
		cal->resumed.push_back(w);
		return false;
	}
	uint64_t slot = out->slot;

	*out = resume_report(w);
	out->slot = slot;
	return true;
}

extern "C" {

/*
 * Run the work due by step now in order, the links' own here, until one entry has
 * something for Python: its kind (and *out), or K_NONE when nothing due is left. The
 * calendar counts as firing from the first call until dp_cal_settle. When the step's
 * entries are done, what it woke before Python was handed anything runs here, in order
 * (dp.h, resumed): a sender of the library's own is resumed, and where it has something
 * for Python, those after it are handed to Python first; the card's model's turn is
 * the library's where it can be, else it and those after it are handed to Python.
 */
uint32_t dp_cal_pop_due(dp_calendar *cal, uint64_t now, dp_out *out)
{
	if (!cal->firing) {
		cal->firing = true;
		cal->told = false;
		cal->tail = false;
	}
	for (;;) {
		if (!cal->reports.empty()) {
			*out = cal->reports.front();
			cal->reports.pop_front();
			cal->told = true;
			return out->kind;
		}
		while (!cal->heap.empty() && cal->heap.top().step <= now) {
			dp::Entry e = cal->heap.top();

			cal->heap.pop();
			cal->current = e.slot;
			if (e.kind == dp::K_PY) {
				*out = dp_out{dp::K_PY, 0, e.slot, e.a, 0};
				return hand(cal, out);
			}
			out->slot = e.slot;
			if (dp_link_run(cal, e, now, out))
				return hand(cal, out);
		}
		if (cal->resumed.empty())
			return dp::K_NONE;
		cal->tail = true;
		dp_woken w = cal->resumed.front();
		if (w.card) {
			/* the model's turn: the library's, else it and what comes after it
			 * Python's, in order */
			if (dp_card_turn(w))
				cal->resumed.pop_front();
			else
				resumed_ahead(cal);
			continue;
		}
		cal->resumed.pop_front();
		if (w.w.rq)
			dp_rq_resume(cal, w.w, now);
		else
			dp_fab_resume(cal, w.w, now);
		if (!cal->reports.empty())
			resumed_ahead(cal);
	}
}

/* the next report an entry or a resumption left for Python, outside the step's work
 * (a sender resumed from cocotb's event loop): its kind and *out, or K_NONE */
uint32_t dp_cal_report(dp_calendar *cal, dp_out *out)
{
	if (cal->reports.empty())
		return dp::K_NONE;
	*out = cal->reports.front();
	cal->reports.pop_front();
	return out->kind;
}

/* the work of a time step is done (or has failed) */
void dp_cal_settle(dp_calendar *cal)
{
	cal->firing = false;
	cal->pushed = UINT64_MAX;
}

/* whether work at (step, slot) would have run by step now (Timeline.passed) */
int dp_cal_passed(const dp_calendar *cal, uint64_t step, uint64_t slot, uint64_t now)
{
	return cal->passed(step, slot, now);
}

void dp_cal_clear(dp_calendar *cal)
{
	cal->heap = decltype(cal->heap)();
	cal->pushed = UINT64_MAX;
	cal->tlps.clear();
	cal->free_tlps.clear();
	cal->ring.clear();
	cal->reports.clear();
	cal->resumed.clear();
	cal->told = cal->tail = false;
}

/* a TLP of the library's own from its bytes on the wire (header, data): its handle */
uint64_t dp_tlp_new(dp_calendar *cal, const uint8_t *bytes, uint64_t size)
{
	return cal->tlp_new(bytes, size);
}

uint64_t dp_tlp_size(dp_calendar *cal, uint64_t handle)
{
	return cal->tlp(handle).bytes.size();
}

/*
 * What a hop the library took left for whoever takes the TLP next: the port whose
 * receiver holds its credits (DP_NO_PORT: none) and their number, the switch port it
 * entered by (-1: none)
 */
uint32_t dp_tlp_meta(dp_calendar *cal, uint64_t handle, uint64_t *receipt, int32_t *ingress)
{
	const dp_tlp &t = cal->tlp(handle);

	*receipt = t.receipt;
	*ingress = t.ingress;
	return t.release_port;
}

/* log every TLP's arrival at a port into path (a line each: step, port, its bytes or
 * "py" for Python's own), for comparing two runs; an empty path stops it */
int dp_cal_log(dp_calendar *cal, const char *path)
{
	if (cal->log)
		std::fclose(cal->log);
	cal->log = *path ? std::fopen(path, "a") : nullptr;
	return !*path || cal->log != nullptr;
}

/* port's tap in the trace ring (dp.h): the kinds it records, under number tag */
void dp_trace_tap(dp_calendar *cal, uint32_t port, uint32_t kinds, uint32_t tag)
{
	if (cal->taps.size() <= port)
		cal->taps.resize(port + 1);
	cal->taps[port].kinds = kinds;
	cal->taps[port].tag = tag;
}

/* the trace ring's size in bytes (0: empty) */
uint64_t dp_trace_size(dp_calendar *cal)
{
	return cal->ring.size();
}

/* the trace ring's records into out (dp_trace_size bytes of it), emptying it */
void dp_trace_take(dp_calendar *cal, uint8_t *out)
{
	std::copy(cal->ring.begin(), cal->ring.end(), out);
	cal->ring.clear();
}

/* its bytes into out (dp_tlp_size of them); the TLP stays */
void dp_tlp_copy(dp_calendar *cal, uint64_t handle, uint8_t *out)
{
	const std::vector<uint8_t> &b = cal->tlp(handle).bytes;

	std::copy(b.begin(), b.end(), out);
}

void dp_tlp_free(dp_calendar *cal, uint64_t handle)
{
	cal->tlp_free(handle);
}

/* its bytes into out (dp_tlp_size of them), and the TLP is gone */
void dp_tlp_take(dp_calendar *cal, uint64_t handle, uint8_t *out)
{
	const std::vector<uint8_t> &b = cal->tlp(handle).bytes;

	std::copy(b.begin(), b.end(), out);
	cal->tlp_free(handle);
}

/*
 * The calendar's alarm: one simulator timer at a time, at the step of its earliest
 * work, registered through cocotb's GPI (the functions Python hands over) where and
 * when tb/models/timeline.py's Alarm would register it, so the simulator orders it
 * among the other callbacks as it orders that one. When it fires, the links' own work
 * due runs here; Python is called (fire, with the first report in *out) only for a
 * step that has work of Python's, and runs the rest of the step, then cocotb's event
 * loop, as the Alarm's trigger would; a step with none is re-armed here, without
 * Python.
 */
using gpi_cb_hdl = void *;

struct dp_alarm {
	int64_t step = -1;	/* the step armed for, -1: none (Python reads it) */
	dp_calendar *cal;
	dp_out *out;
	gpi_cb_hdl (*reg)(int (*)(void *), void *, uint64_t);
	int (*remove)(gpi_cb_hdl);
	void (*time)(uint32_t *, uint32_t *);
	int (*fire)(uint32_t);
	gpi_cb_hdl hdl = nullptr;
	uint64_t wakes = 0, python = 0;	/* steps fired, and of those Python's */
};

namespace {

uint64_t now_of(const dp_alarm *a)
{
	uint32_t high, low;

	a->time(&high, &low);
	return uint64_t(high) << 32 | low;
}

int on_alarm(void *data);

void arm(dp_alarm *a, uint64_t step, uint64_t now)
{
	if (a->hdl)
		a->remove(a->hdl);
	a->step = int64_t(step);
	a->hdl = a->reg(on_alarm, a, step > now ? step - now : 1);
}

int on_alarm(void *data)
{
	dp_alarm *a = static_cast<dp_alarm *>(data);
	uint64_t now = now_of(a), step, slot;

	a->hdl = nullptr;
	a->wakes++;
	uint32_t kind = dp_cal_pop_due(a->cal, now, a->out);
	if (kind != dp::K_NONE) {
		a->python++;
		return a->fire(kind);
	}
	dp_cal_settle(a->cal);
	if (dp_cal_first(a->cal, &step, &slot))
		arm(a, step, now);
	else
		a->step = -1;
	return 0;
}

}  // namespace

/* cal's alarm, through the GPI's timed callbacks (reg, remove) and time; fire:
 * Python's, for a step with work of its own (the first report in out), which returns
 * what the GPI callback returns */
dp_alarm *dp_alarm_new(dp_calendar *cal, dp_out *out, void *reg, void *remove, void *time,
		       void *fire)
{
	dp_alarm *a = new dp_alarm();

	a->cal = cal;
	a->out = out;
	a->reg = reinterpret_cast<decltype(a->reg)>(reg);
	a->remove = reinterpret_cast<decltype(a->remove)>(remove);
	a->time = reinterpret_cast<decltype(a->time)>(time);
	a->fire = reinterpret_cast<decltype(a->fire)>(fire);
	return a;
}

/* arm for step (absolute), from step now: at once moved if armed already */
void dp_alarm_at(dp_alarm *a, uint64_t step, uint64_t now)
{
	arm(a, step, now);
}

void dp_alarm_stop(dp_alarm *a)
{
	if (a->hdl)
		a->remove(a->hdl);
	a->hdl = nullptr;
	a->step = -1;
}

/* whether a timer is registered */
int dp_alarm_armed(const dp_alarm *a)
{
	return a->hdl != nullptr;
}

/* the simulator's time now, in steps (as cocotb's get_sim_time_steps reads it) */
uint64_t dp_alarm_now(const dp_alarm *a)
{
	return now_of(a);
}

/* after a call outside the calendar's own firing that may have scheduled work: the
 * alarm moved to it if it is earlier (Timeline.poke) */
void dp_alarm_poke(dp_alarm *a, uint64_t now)
{
	uint64_t step = dp_cal_pushed(a->cal);

	if (step != UINT64_MAX && (a->step < 0 || step < uint64_t(a->step)))
		arm(a, step, now);
}

/* steps fired, and of those the ones that called Python, since the last call */
void dp_alarm_counts(dp_alarm *a, uint64_t *wakes, uint64_t *python)
{
	*wakes = a->wakes;
	*python = a->python;
	a->wakes = a->python = 0;
}

void dp_alarm_free(dp_alarm *a)
{
	dp_alarm_stop(a);
	delete a;
}

}  // extern "C"
