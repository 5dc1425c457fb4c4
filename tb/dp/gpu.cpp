// SPDX-License-Identifier: MIT
/*
 * The GPU's BAR1 as a completer in the compiled data path (docs/performance.md,
 * "Design: the compiled data path", stage 3): a peer's memory request to BAR1 answered
 * from VRAM through the live BAR1 page table, rule for rule as tb/env/gpu_endpoint.py's
 * GpuEndpoint does it on cocotbext-pcie's Device, Function and MemoryEndpoint.
 *
 * Python keeps the table current: each BAR1 page's VRAM page as the GPU model maps and
 * unmaps it (cuda_model.Gpu's peer hooks), and each VRAM page's 64 KiB of backing as
 * the model allocates and drops it (cuda_model.Vram), both numpy arrays read and
 * written in place. The accesses each BAR1 page takes are counted here and handed to
 * the model on request, which adds them to the pins that map the page (PinStats).
 *
 * A read: completions with data from the GPU's function, split as the endpoint splits
 * them (at most the Max Payload Size each, cut at a 128-byte boundary where longer),
 * the read's length in DWs from its dword address. A write: the enabled bytes as runs
 * (completer.cpp's dp_mem_write_runs), each run one access. The library answers only
 * a request of the kinds it knows that lies whole in mapped BAR1 (and, for a write, in
 * VRAM that has backing), within a 4 KiB page, not poisoned, with its first byte
 * enabled: anything else (a fault the model records, a write to VRAM never written, a
 * zero-length read, the other BARs) is Python's, untouched.
 *
 * On the live path (dp_gpu_serve) the request's receive credits go back as the
 * function takes it, then the completions go onto the GPU's link one after another as
 * CompiledTlpPort.send sends them; where one must wait for credit or for the wire, it
 * and those after it wait for Python's gate (dp_gpu_next hands them over in order).
 */
#include "dp.h"
#include "route.h"
#include "tlp.h"

#include <cstring>
#include <deque>
#include <unordered_map>
#include <vector>

extern "C" {
uint32_t dp_rc_read_completions(const dp::TlpHeader *req, uint32_t max_payload_size,
				uint32_t rcb_128, uint32_t split_on_all_rcb, dp::TlpHeader *cpls,
				uint32_t *offsets, uint32_t cap);
uint32_t dp_mem_write_runs(const dp::TlpHeader *req, uint32_t *runs);
struct dp_checker;
uint32_t dp_ck_observe(dp_checker *ck, uint32_t link, uint32_t dir, const dp::TlpHeader *h,
		       uint64_t data_len, int stop);
}

namespace {

constexpr unsigned PAGE_SHIFT = 16;	/* BAR1 and VRAM pages: 64 KiB */
constexpr uint64_t PAGE_SIZE = uint64_t(1) << PAGE_SHIFT;
constexpr uint32_t MAX_CPLS = 1024;

}  // namespace

/* a BAR1 page's accesses since they were last handed to Python (laid out as
 * tb/models/native.py's ctypes structure says) */
struct dp_gpu_counts {
	uint64_t page;
	uint64_t reads, read_bytes;
	uint64_t writes, write_bytes;
};

/*
 * Why Python decides a request arriving at the GPU's link port, and what the answer
 * takes, which Python writes as they change (tb/models/native.py's GpuFlags): holds,
 * dp.h's HOLD_ bits (the port's receive handler not the one armed, its
 * receive lane busy, the endpoint not ready, a passive observer shown it, not set yet);
 * the checker ends at its first broken rule; the function's Max Payload Size code; the
 * link's flow control initialized.
 */
struct GpuFlags {
	uint32_t holds = HOLD_OFF;
	int32_t stop = 0;
	uint32_t mps = 0;
	uint32_t fc_ready = 0;
};

struct dp_gpu {
	dp_function_view fn;	/* the GPU's function, written by Python */
	GpuFlags flags;
	uint64_t answered = 0;	/* requests answered on arrival, with no Python */
	uint32_t bar1 = 2;	/* BAR1's slot */
	uint64_t bar1_size = 0;
	uint8_t uninit = 0;	/* what VRAM never written reads as */
	std::vector<int64_t> phys;	/* per BAR1 page: its VRAM page, or -1 */
	std::unordered_map<uint64_t, uint8_t *> backing;	/* VRAM page -> its bytes */
	std::vector<dp_gpu_counts> counts;
	std::vector<int32_t> counted;	/* per BAR1 page: its place in counts, or -1 */
	/* the live path: what may be answered here, and the checker that sees it */
	uint32_t kinds = 0;		/* bit 0 reads, bit 1 writes */
	dp_checker *ck = nullptr;
	uint32_t ck_link = 0, ck_dir = 0;
	std::deque<uint64_t> waiting;	/* completions for Python's gate, in order */
};

namespace {

/* what the GPU would do with a request the library answers */
struct Plan {
	dp::TlpHeader h;
	uint64_t data_len;
	uint64_t page;		/* its BAR1 page */
	uint64_t in_page;	/* its dword address's offset there */
	uint8_t *vram;		/* the page's backing (null: never written) */
};

void count(dp_gpu &g, uint64_t page, bool read, uint64_t bytes)
{
	if (g.counted[page] < 0) {
		g.counted[page] = int32_t(g.counts.size());
		g.counts.push_back({page, 0, 0, 0, 0});
	}
	dp_gpu_counts &c = g.counts[g.counted[page]];
	if (read) {
		c.reads++;
		c.read_bytes += bytes;
	} else {
		c.writes++;
		c.write_bytes += bytes;
	}
}

/* whether the library answers request h (data_len bytes of data) and how; kinds: the
 * request kinds it may answer (bit 0 reads, bit 1 writes) */
bool plan(const dp_gpu &g, const dp::TlpHeader &h, uint64_t data_len, uint32_t kinds, Plan &p)
{
	if (h.type != dp::TYPE_MEM || h.ep || !dp::check(h, data_len))
		return false;
	bool read = !h.has_data();
	if (!(kinds & (read ? 1u : 2u)) || h.first_be == 0)
		return false;
	uint64_t offset;
	if (dp::bar_at(g.fn, h.address, false, &offset) != int(g.bar1))
		return false;
	uint64_t bytes = uint64_t(h.length) * 4;
	if (offset + bytes > g.bar1_size || bytes > 0x1000 - (offset & 0xfff))
		return false;	/* a fault, or discarded with a warning: Python's */
	uint64_t page = offset >> PAGE_SHIFT;	/* within 4 KiB: one page */
	if (page >= g.phys.size() || g.phys[page] < 0)
		return false;
	auto b = g.backing.find(uint64_t(g.phys[page]));
	p.vram = b == g.backing.end() ? nullptr : b->second;
	if (!read && !p.vram)
		return false;	/* the model gives the page its backing first */
	p.h = h;
	p.data_len = data_len;
	p.page = page;
	p.in_page = offset & (PAGE_SIZE - 1);
	return true;
}

/* a write's runs into VRAM, each counted */
void write(dp_gpu &g, const Plan &p, const uint8_t *data)
{
	uint32_t runs[16];
	uint32_t n = dp_mem_write_runs(&p.h, runs);

	for (uint32_t k = 0; k < n; k++) {
		std::memcpy(p.vram + p.in_page + runs[2 * k], data + runs[2 * k], runs[2 * k + 1]);
		count(g, p.page, false, runs[2 * k + 1]);
	}
}

/* a read's completions: their headers into cpls and each one's data offset in DWs into
 * offsets (room for MAX_CPLS), the read counted; their number */
uint32_t read(dp_gpu &g, const Plan &p, uint32_t mps, dp::TlpHeader *cpls, uint32_t *offsets)
{
	uint32_t n = dp_rc_read_completions(&p.h, mps, 1, 0, cpls, offsets, MAX_CPLS);

	count(g, p.page, true, uint64_t(p.h.length) * 4);
	for (uint32_t k = 0; k < n; k++)
		cpls[k].completer_id = g.fn.pcie_id;
	return n;
}

/* completion c of the read (its data from DW offset at) as wire bytes into out (room
 * for 16 + 4096): how many */
size_t completion_bytes(const dp_gpu &g, const Plan &p, const dp::TlpHeader &c, uint32_t at,
			uint8_t *out)
{
	size_t hb = dp::pack_header(c, out);
	uint64_t len = uint64_t(c.length) * 4;

	if (p.vram)
		std::memcpy(out + hb, p.vram + p.in_page + uint64_t(at) * 4, len);
	else
		std::memset(out + hb, g.uninit, len);
	return hb + len;
}

/* the completions waiting onto the link while it need not wait: 0 when all went, 2
 * when the first left must wait for Python's gate */
int send_waiting(dp_calendar *cal, dp_gpu &g, dp_port *port, int fc_ready, uint64_t now)
{
	while (!g.waiting.empty()) {
		if (!dp_port_send_now(cal, port, g.waiting.front(), fc_ready, now))
			return 2;
		g.waiting.pop_front();
	}
	return 0;
}

/* answer the planned request (the library's TLP handle, the receipt-th received at
 * port): its credits back, the write done or the completions on their way */
int answer(dp_calendar *cal, dp_gpu &g, dp_port *port, const Plan &p, uint64_t handle,
	   uint64_t receipt, uint32_t mps, int fc_ready, uint64_t now)
{
	static dp::TlpHeader cpls[MAX_CPLS];
	static uint32_t offsets[MAX_CPLS];
	uint8_t buf[16 + 4096];

	cal->note(dp_port_id(port), p.h.has_data() ? 2 : 1, now, handle);
	dp_port_release(port, now, receipt);
	if (p.h.has_data()) {
		write(g, p, cal->tlp(handle).bytes.data() + p.h.header_bytes());
		cal->tlp_free(handle);
		return 0;
	}
	cal->tlp_free(handle);
	uint32_t n = read(g, p, mps, cpls, offsets);
	for (uint32_t k = 0; k < n; k++) {
		size_t size = completion_bytes(g, p, cpls[k], offsets[k], buf);
		g.waiting.push_back(cal->tlp_new(buf, size));
	}
	return send_waiting(cal, g, port, fc_ready, now);
}

bool plan_of(dp_calendar *cal, const dp_gpu &g, uint64_t handle, Plan &p)
{
	const std::vector<uint8_t> &bytes = cal->tlp(handle).bytes;
	dp::TlpHeader h;

	if (bytes.size() < 12 || !dp::unpack_header(bytes.data(), h))
		return false;
	return plan(g, h, bytes.size() - h.header_bytes(), g.kinds, p);
}

}  // namespace

extern "C" {

dp_gpu *dp_gpu_new(uint64_t bar1_size, uint32_t uninit)
{
	dp_gpu *g = new dp_gpu();
	std::memset(&g->fn, 0, sizeof(g->fn));
	g->bar1_size = bar1_size;
	g->uninit = uint8_t(uninit);
	g->phys.assign(bar1_size >> PAGE_SHIFT, -1);
	g->counted.assign(bar1_size >> PAGE_SHIFT, -1);
	return g;
}

void dp_gpu_free(dp_gpu *g)
{
	delete g;
}

/* the GPU function's view, for Python to write */
dp_function_view *dp_gpu_fn(dp_gpu *g)
{
	return &g->fn;
}

/* BAR1 page maps VRAM page phys (-1: unmapped) */
void dp_gpu_map(dp_gpu *g, uint64_t page, int64_t phys)
{
	if (page < g->phys.size())
		g->phys[page] = phys;
}

/* VRAM page phys has its 64 KiB at bytes (null: none, it reads as never written) */
void dp_gpu_backing(dp_gpu *g, uint64_t phys, uint8_t *bytes)
{
	if (bytes)
		g->backing[phys] = bytes;
	else
		g->backing.erase(phys);
}

/* the pages counted since the last call, up to cap of them into out (the rest stay for
 * the next call): how many */
uint32_t dp_gpu_counts_take(dp_gpu *g, dp_gpu_counts *out, uint32_t cap)
{
	uint32_t n = 0;

	while (n < cap && !g->counts.empty()) {
		out[n] = g->counts.back();
		g->counted[out[n].page] = -1;
		g->counts.pop_back();
		n++;
	}
	return n;
}

/*
 * The GPU answers request req (its wire bytes, n of them) on its own, as the unit tests
 * call it: -1 when it is Python's (nothing done); else the write is done (0), or the
 * read's completions' wire bytes are in out (cap bytes of room: -1 and nothing done
 * when they do not fit), each one's size in sizes (room for 1024), and their number.
 */
int dp_gpu_request(dp_gpu *g, const uint8_t *req, uint64_t n, uint32_t mps, uint8_t *out,
		   uint64_t cap, uint32_t *sizes)
{
	dp::TlpHeader h;
	Plan p;

	if (n < 12 || !dp::unpack_header(req, h) || !plan(*g, h, n - h.header_bytes(), 3, p))
		return -1;
	if (h.has_data()) {
		write(*g, p, req + h.header_bytes());
		return 0;
	}
	if (uint64_t(h.length) * 4 + MAX_CPLS * 16 > cap)
		return -1;
	static dp::TlpHeader cpls[MAX_CPLS];
	static uint32_t offsets[MAX_CPLS];
	uint32_t count = read(*g, p, mps, cpls, offsets);
	for (uint32_t k = 0; k < count; k++) {
		sizes[k] = uint32_t(completion_bytes(*g, p, cpls[k], offsets[k], out));
		out += sizes[k];
	}
	return int(count);
}

/* what the live path may answer (bits: 1 reads, 2 writes), and the checker that sees
 * the requests (none: null) as link, direction */
void dp_gpu_set(dp_gpu *g, uint32_t kinds, dp_checker *ck, uint32_t link, uint32_t dir)
{
	g->kinds = kinds;
	g->ck = ck;
	g->ck_link = link;
	g->ck_dir = dir;
}

/*
 * The library's TLP handle has reached the GPU's link port as its receipt-th TLP, at step
 * now (fc_ready: that link's flow control is initialized; mps: the function's Max
 * Payload Size code; stop: the checker ends at its first broken rule): -1 when it is
 * Python's (nothing done); 1 when the checker has records for Python first
 * (dp_gpu_finish answers it then); else answered: 0, all done; 2, completions wait for
 * Python's gate (dp_gpu_next).
 */
int dp_gpu_serve(dp_calendar *cal, dp_gpu *g, dp_port *port, uint64_t handle, uint64_t receipt,
		 uint32_t mps, int stop, int fc_ready, uint64_t now)
{
	Plan p;

	if (!g->waiting.empty() || !plan_of(cal, *g, handle, p))
		return -1;
	if (g->ck && dp_ck_observe(g->ck, g->ck_link, g->ck_dir, &p.h, p.data_len, stop))
		return 1;
	return answer(cal, *g, port, p, handle, receipt, mps, fc_ready, now);
}

/* the request dp_gpu_serve left for the checker's records, answered: 0 or 2 as there */
int dp_gpu_finish(dp_calendar *cal, dp_gpu *g, dp_port *port, uint64_t handle,
		  uint64_t receipt, uint32_t mps, int fc_ready, uint64_t now)
{
	Plan p;

	if (!plan_of(cal, *g, handle, p))
		return -1;	/* (nothing changes the plan between the two calls) */
	return answer(cal, *g, port, p, handle, receipt, mps, fc_ready, now);
}

/* the next completion waiting for Python's gate (taken off the queue), or 0 */
uint64_t dp_gpu_next(dp_gpu *g)
{
	if (g->waiting.empty())
		return 0;
	uint64_t t = g->waiting.front();
	g->waiting.pop_front();
	return t;
}

/* the flags Python writes (GpuFlags) */
void *dp_gpu_flags(dp_gpu *g)
{
	return &g->flags;
}

/* the requests answered on arrival since the last call */
uint64_t dp_gpu_answered(dp_gpu *g)
{
	uint64_t n = g->answered;

	g->answered = 0;
	return n;
}

}  // extern "C"

/*
 * The library's request handle has reached the GPU's link port (port) as its
 * receipt-th TLP: answered here while the flags allow it, as Python's GpuServe.cross
 * would answer it. -1 when Python decides it (nothing done); 0 when answered with
 * nothing for Python; 1 when answered with *out for Python: K_CHECKED (the checker's
 * records first, then dp_gpu_finish) or K_REST (completions wait for Python's gate,
 * which holds the port's receive lane).
 */
int dp_gpu_arrive(dp_calendar *cal, dp_gpu *g, dp_port *port, uint64_t handle,
		  uint64_t receipt, uint64_t now, dp_out *out)
{
	const GpuFlags &f = g->flags;

	if (f.holds)
		return -1;
	int got = dp_gpu_serve(cal, g, port, handle, receipt, f.mps, f.stop, int(f.fc_ready), now);
	if (got < 0)
		return -1;
	out->port = dp_port_id(port);
	out->a = handle;
	out->b = receipt;
	if (got == 1) {
		out->kind = dp::K_CHECKED;
		return 1;
	}
	g->answered++;
	if (got == 0)
		return 0;
	out->kind = dp::K_REST;
	return 1;
}

