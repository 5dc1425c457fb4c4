// SPDX-License-Identifier: MIT
/*
 * The compiled data path's calendar (docs/performance.md, "Design: the compiled data
 * path", stage 1): the fabric's timed work as (step, slot, handle) entries, earliest
 * step first and, within a step, lowest slot first, as tb/models/timeline.py orders
 * them. A handle names the work on the side that scheduled it (Python's work by a
 * number of its own).
 */
#include <cstdint>
#include <queue>
#include <vector>

namespace {

struct Entry {
	uint64_t step;
	uint64_t slot;
	uint64_t handle;
};

struct Later {
	bool operator()(const Entry &a, const Entry &b) const
	{
		return a.step != b.step ? a.step > b.step : a.slot > b.slot;
	}
};

}  // namespace

struct dp_calendar {
	std::priority_queue<Entry, std::vector<Entry>, Later> heap;
};

extern "C" {

dp_calendar *dp_cal_new(void)
{
	return new dp_calendar();
}

void dp_cal_free(dp_calendar *cal)
{
	delete cal;
}

void dp_cal_push(dp_calendar *cal, uint64_t step, uint64_t slot, uint64_t handle)
{
	cal->heap.push(Entry{step, slot, handle});
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

/* take the first entry if it is due by step now: 1 and its slot and handle, else 0 */
int dp_cal_pop_due(dp_calendar *cal, uint64_t now, uint64_t *slot, uint64_t *handle)
{
	if (cal->heap.empty() || cal->heap.top().step > now)
		return 0;
	*slot = cal->heap.top().slot;
	*handle = cal->heap.top().handle;
	cal->heap.pop();
	return 1;
}

void dp_cal_clear(dp_calendar *cal)
{
	cal->heap = decltype(cal->heap)();
}

}  // extern "C"
