// SPDX-License-Identifier: MIT
/*
 * The hard-IP model's requester side in the compiled data path (docs/performance.md,
 * "Design: the compiled data path", stage 3): its table of active requests and what it
 * does with a completion for one, rule for rule as cocotbext-pcie's
 * UltraScalePlusPcieDevice.upstream_recv (the completion branch) with
 * tb/models/hardip.py's additions (a late completion's credits, the completion data
 * credits each active request has received), so that a completion can reach the RC
 * stream without Python.
 *
 * A completion whose requester ID is one of the card's functions is the card's: its
 * error code (PG213's RC descriptor: poisoned, invalid tag, mismatched requester ID,
 * attributes or traffic class, bad status, a memory read's lower address that does
 * not match what is still owed, a read's completion without data) and whether it ends
 * its request, the lower address rebuilt to 12 bits, the request retired, the
 * completion credits given back, and the receive buffer's room (a completion that does
 * not fit is dropped with a local error). Tags past the table (10-bit tags) are
 * Python's.
 */
#include "dp.h"
#include "tlp.h"
#include "xact.h"
#include "hip.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

struct dp_checker;
struct dp_reads;

extern "C" {
uint32_t dp_ck_observe(dp_checker *ck, uint32_t link, uint32_t dir, const dp::TlpHeader *h,
		       uint64_t data_len, int stop);
void dp_reads_cpl(dp_reads *r, uint32_t tag, int ends);
struct dp_meter;
void dp_meter_cpl(dp_meter *m, const dp::TlpHeader *h, uint64_t data_len, uint64_t now);
}

namespace {

/*
 * Why the model's moving on by a completion the card's end took is Python's (dp_hip's
 * rc_blocks, which Python keeps): its RC loop is not idle in its queue's get with the
 * queue empty, its RQ logic waits for completion credit (the event a completion sets),
 * the RC source is not one the library writes into, a write of Python's in a timer
 * callback would not reach the simulator at once (cocotb defers it to the ReadWrite
 * phase).
 */
enum : uint32_t { RC_BUSY = 1, RC_WAITER = 2, RC_SOURCE = 4, RC_DEFERRED = 8 };

/* PG213's requester completion error codes (Tlp_us's ErrorCode) */
enum ErrorCode : uint32_t {
	NORMAL_TERMINATION = 0x0,
	POISONED = 0x1,
	BAD_STATUS = 0x2,
	INVALID_LENGTH = 0x3,
	MISMATCH = 0x4,
	INVALID_ADDRESS = 0x5,
	INVALID_TAG = 0x6,
};

}  // namespace

extern "C" {

/* what becomes of a completion (laid out as tb.dp's ctypes structure says) */
struct dp_hip_cpl {
	uint32_t outcome;	/* 0 not the card's, 1 for RC, 2 dropped: no buffer room */
	uint32_t error_code;
	uint32_t request_completed;
	uint32_t lower_address;
	uint32_t tag;
};

}  // extern "C"

namespace {

bool ours(const dp_hip &hip, uint16_t requester_id)
{
	for (uint32_t k = 0; k < hip.functions; k++)
		if (hip.function_id[k] == requester_id)
			return true;
	return false;
}

/* what becomes of completion cpl (data_len bytes of data; its tag inside the table) for
 * the card, into out, with nothing changed */
void decide(const dp_hip &hip, const dp::TlpHeader &cpl, uint64_t data_len, dp_hip_cpl &out)
{
	int64_t dc = int64_t((data_len / 4 + 3) / 4);
	const dp_hip_request &req = hip.request[cpl.tag];

	std::memset(&out, 0, sizeof(out));
	out.lower_address = cpl.lower_address;
	out.tag = cpl.tag;
	if (!ours(hip, cpl.requester_id))
		return;
	out.error_code = NORMAL_TERMINATION;
	if (cpl.ep)
		out.error_code = POISONED;
	if (!req.active) {
		out.error_code = INVALID_TAG;
	} else if (cpl.requester_id != req.requester_id || cpl.attr != req.attr ||
		   cpl.tc != req.tc) {
		out.error_code = MISMATCH;
	} else if (cpl.status != dp::CPL_SC) {
		out.error_code = BAD_STATUS;
		out.request_completed = 1;
	} else if (req.mem_read) {
		int64_t la = int64_t(req.address) + req.first_be_offset + req.be_byte_count -
			     cpl.byte_count;
		if (cpl.lower_address != (la & 0x7f))
			out.error_code = INVALID_ADDRESS;
		else
			out.lower_address = uint32_t(la & 0xfff);
		if (int64_t(cpl.byte_count) <=
		    int64_t(cpl.length) * 4 - int64_t(out.lower_address & 0x3))
			out.request_completed = 1;
		if (!cpl.has_data()) {
			out.error_code = INVALID_LENGTH;
			out.request_completed = 1;
		}
	} else {
		out.request_completed = 1;
	}
	out.outcome = hip.rx_buf_cplh_fc_count + 1 <= hip.rx_buf_cplh_fc_limit &&
			      hip.rx_buf_cpld_fc_count + dc + 1 <= hip.rx_buf_cpld_fc_limit
		      ? 1
		      : 2;
}

/* the state moved on by completion cpl, as decide found it (out) */
void commit(dp_hip &hip, const dp::TlpHeader &cpl, uint64_t data_len, const dp_hip_cpl &out)
{
	int64_t dc = int64_t((data_len / 4 + 3) / 4);
	dp_hip_request &req = hip.request[cpl.tag];
	bool mine = out.outcome != 0;	/* (decide found it one of the card's functions') */

	/* tb/models/hardip.py: a late completion's credits were given back when its request
	 * ended, and are given back again below (keep the count); an active request counts
	 * the data credits it has received */
	if (!req.active) {
		if (mine)
			hip.cpld_credit_count += dc;
	} else if (cpl.requester_id == req.requester_id) {
		hip.credits_in[cpl.tag] += dc;
	}
	if (!mine)
		return;
	if (out.request_completed) {
		req.active = 0;
		hip.ended++;
	}
	hip.cpld_credit_count = std::max<int64_t>(hip.cpld_credit_count - dc, 0);
	if (out.outcome == 1) {
		hip.rx_buf_cplh_fc_count += 1;
		hip.rx_buf_cpld_fc_count += dc + 1;
	}
	count_free_tags(hip);
}

}  // namespace

extern "C" {

/*
 * Completion cpl (its data data_len bytes) for the card: what becomes of it, in *out, and
 * the state moved on: 1, or 0 when it is Python's (its tag is past the table; nothing
 * done).
 */
int dp_hip_completion(dp_hip *hip, const dp::TlpHeader *cpl, uint64_t data_len,
		      dp_hip_cpl *out)
{
	if (cpl->tag >= TAGS)
		return 0;
	decide(*hip, *cpl, data_len, *out);
	commit(*hip, *cpl, data_len, *out);
	return 1;
}

/* the fields RC gives completion cpl, as the model took it (*out) */
void dp_hip_rc_fields(const dp::TlpHeader *cpl, const dp_hip_cpl *out, dp_rc_fields *f)
{
	std::memset(f, 0, sizeof(*f));
	f->lower_address = out->lower_address;
	f->error_code = out->error_code;
	f->byte_count = cpl->byte_count;
	f->locked = cpl->type == dp::TYPE_CPL_LOCKED;
	f->request_completed = out->request_completed;
	f->length = cpl->length;
	f->status = cpl->status;
	f->ep = cpl->ep;
	f->requester_id = cpl->requester_id;
	f->tag = cpl->tag;
	f->completer_id = cpl->completer_id;
	f->tc = cpl->tc;
	f->attr = cpl->attr;
}

/* the completion handle (its header h, data_len bytes of data), as decide found it
 * (*out), taken: past the injector's read log and the meter, its credits back, the
 * state moved on, into q for RC */
static int take(dp_calendar *cal, dp_hip *hip, dp_rcq *q, dp_port *port, uint64_t handle,
		uint64_t receipt, dp_reads *reads, dp_meter *meter, uint64_t now,
		const dp::TlpHeader &h, uint64_t data_len, dp_hip_cpl *out)
{
	cal->note(dp_port_id(port), 4, now, handle);	/* (a CplD) */
	if (reads)	/* (tb/env/link.py's ends_request, on the completion as it came) */
		dp_reads_cpl(reads, h.tag,
			     int64_t(h.byte_count) <= int64_t(h.length) * 4 - (h.lower_address & 3));
	if (meter)
		dp_meter_cpl(meter, &h, data_len, now);
	dp_port_release(port, now, receipt);
	commit(*hip, h, data_len, *out);
	dp_rc_fields f;
	dp_hip_rc_fields(&h, out, &f);
	dp_rcq_add(q, &f, cal->tlp(handle).bytes.data() + h.header_bytes(),
		   uint32_t(data_len / 4));
	cal->tlp_free(handle);
	return 0;
}

/*
 * The card's link port has received the library's TLP handle as its receipt-th, at step
 * now: the hard-IP model takes a completion for an active memory read of one of its
 * functions whose checks all pass and that its receive buffer has room for
 * (UltraScalePlusPcieDevice.upstream_recv with tb/models/hardip.py's additions), past the
 * fault injector with no rule armed (reads: its read log, null: none; the read has
 * started, and ends with its last completion), the protocol checker (ck, as link and
 * dir; stop: it ends at its first broken rule) and a bench's meter (null: none): its
 * credits go back, the state moves on, and the completion joins q for RC with the
 * fields the model gives it. Returns -1 when it is Python's (nothing done), 1 when the
 * checker has records for Python first (dp_hip_receive_finish takes it then), 0 when it
 * is taken: *out says whether it ended its request.
 */
int dp_hip_receive(dp_calendar *cal, dp_hip *hip, dp_rcq *q, dp_port *port, uint64_t handle,
		   uint64_t receipt, dp_checker *ck, uint32_t link, uint32_t dir, int stop,
		   dp_reads *reads, dp_meter *meter, uint64_t now, dp_hip_cpl *out)
{
	const std::vector<uint8_t> &bytes = cal->tlp(handle).bytes;
	dp::TlpHeader h;

	if (bytes.size() < 12 || !dp::unpack_header(bytes.data(), h))
		return -1;
	uint64_t data_len = bytes.size() - h.header_bytes();
	if (h.type != dp::TYPE_CPL || !h.has_data() || h.ep || h.tag >= TAGS ||
	    !dp::check(h, data_len))
		return -1;
	decide(*hip, h, data_len, *out);
	if (out->outcome != 1 || out->error_code != NORMAL_TERMINATION)
		return -1;	/* not the card's, an error the model names, no room: Python's */
	if (ck && dp_ck_observe(ck, link, dir, &h, data_len, stop))
		return 1;
	return take(cal, hip, q, port, handle, receipt, reads, meter, now, h, data_len, out);
}

/* the completion dp_hip_receive left for the checker's records, taken: 0 as there */
int dp_hip_receive_finish(dp_calendar *cal, dp_hip *hip, dp_rcq *q, dp_port *port,
			  uint64_t handle, uint64_t receipt, dp_reads *reads, dp_meter *meter,
			  uint64_t now, dp_hip_cpl *out)
{
	const std::vector<uint8_t> &bytes = cal->tlp(handle).bytes;
	dp::TlpHeader h;

	dp::unpack_header(bytes.data(), h);
	uint64_t data_len = bytes.size() - h.header_bytes();
	decide(*hip, h, data_len, *out);	/* (nothing changed it since dp_hip_receive) */
	return take(cal, hip, q, port, handle, receipt, reads, meter, now, h, data_len, out);
}

}  // extern "C"

/*
 * The card's end of its link, receiving (tb/models/native.py's CardCpl): a completion of
 * the library's own taken there as it arrives (dp_card_arrive, dp_hip_receive's rules)
 * while what CardCpl.ready reads allows it, which Python copies into the flags as it
 * changes (dp.h's dp_end_flags: its gate bit for the fault injector in front holding what
 * comes or the model not ready to take it; until, the step from which the injector's
 * stall is over for certain).
 */
struct dp_card_end {
	dp_hip *hip;
	dp_rcq *q;
	dp_end_flags flags;
	dp_checker *ck = nullptr;	/* the checker that sees the completions (null: none) */
	uint32_t ck_link = 0, ck_dir = 0;
	dp_reads *reads = nullptr;	/* the fault injector's read log (null: none) */
	dp_meter *meter = nullptr;	/* a bench's meter (null: none) */
	dp_rc_loop *loop;		/* the model's RC loop, where the library runs it */
	uint64_t turns = 0;		/* completions the model moved on by here, since read */
	dp_hip_cpl out{};
};

extern "C" {

/* the card's end for the hard-IP model's table hip, its completions into q for RC */
dp_card_end *dp_card_end_new(dp_hip *hip, dp_rcq *q)
{
	auto *e = new dp_card_end();
	dp_rc_counts counts{&hip->rx_buf_cplh_fc_count, &hip->rx_buf_cpld_fc_count,
			    &hip->rc_owned};

	e->hip = hip;
	e->q = q;
	e->loop = dp_rc_loop_new(q, &counts);
	return e;
}

void dp_card_end_free(dp_card_end *e)
{
	dp_rc_loop_free(e->loop);
	delete e;
}

/* the model's RC loop, where the library runs it (rcloop.cpp) */
dp_rc_loop *dp_card_end_loop(dp_card_end *e)
{
	return e->loop;
}

/* the completions the model moved on by in the library (dp_card_turn) since the last
 * call: those CardCpl.took is not called for */
uint64_t dp_card_end_turns(dp_card_end *e)
{
	uint64_t n = e->turns;

	e->turns = 0;
	return n;
}

/* the flags Python writes (dp_end_flags) */
void *dp_card_end_flags(dp_card_end *e)
{
	return &e->flags;
}

/* what sees the completions taken there: the checker (as link and dir), the injector's
 * read log and a bench's meter (each null: none) */
void dp_card_end_set(dp_card_end *e, dp_checker *ck, uint32_t link, uint32_t dir,
		     dp_reads *reads, dp_meter *meter)
{
	e->ck = ck;
	e->ck_link = link;
	e->ck_dir = dir;
	e->reads = reads;
	e->meter = meter;
}

}  // extern "C"

/*
 * The card's model moves on by the completion its end took (w), in the step's tail, as
 * CardCpl.took moves it: the request the completion ended is gone from the library's
 * table already (which the model's active requests read through), and the credit event
 * it would set has no waiter; the RC loop, where it is idle in its queue's get with the
 * queue empty, or already the library's, takes the completion from the library's queue
 * in its turn (rcloop.cpp). Whether the library did it all (else nothing is done, and it
 * is Python's).
 */
bool dp_card_turn(const dp_woken &w)
{
	dp_card_end *e = w.card;
	uint32_t blocks = e->hip->rc_blocks;

	if (dp_rc_loop_owned(e->loop)) {
		if (blocks & RC_WAITER)
			return false;
		e->turns++;	/* (queued behind the one the loop holds) */
		return true;
	}
	if (blocks || !dp_rc_loop_ready(e->loop) || !dp_rcq_size(e->q))
		return false;
	e->turns++;
	dp_rc_loop_start(e->loop);
	return true;
}

/*
 * The library's completion handle has reached the card's link port (port) as its
 * receipt-th TLP: taken here while the flags allow it, as CardCpl.cross would take it.
 * -1 when Python decides it (nothing done); 0 when the model's moving on by it waits
 * for the step's tail (dp_cal_woken); else 1 and *out for Python: K_CHECKED (the
 * checker's records first, then dp_hip_receive_finish) or K_TOOK (the model's Python
 * moves on: tag a, b whether it ended its request).
 */
int dp_card_arrive(dp_calendar *cal, dp_card_end *e, dp_port *port, uint64_t handle,
		   uint64_t receipt, uint64_t now, dp_out *out)
{
	const dp_end_flags &f = e->flags;

	if (f.holds || now < f.until)
		return -1;
	int got = dp_hip_receive(cal, e->hip, e->q, port, handle, receipt, e->ck, e->ck_link,
				 e->ck_dir, f.stop, e->reads, e->meter, now, &e->out);
	if (got < 0)
		return -1;
	out->port = dp_port_id(port);
	if (got == 1) {
		out->kind = dp::K_CHECKED;
		out->a = handle;
		out->b = receipt;
		return 1;
	}
	return dp_cal_woken(cal, dp_woken{{}, e, out->port, e->out.tag, e->out.request_completed},
			    out);
}
