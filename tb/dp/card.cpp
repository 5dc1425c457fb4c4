// SPDX-License-Identifier: MIT
/*
 * The card's end of its link in the compiled data path (docs/performance.md, "Design:
 * the compiled data path", stage 3): what the UltraScale+ hard-IP model
 * (cocotbext-pcie's UltraScalePlusPcieDevice with tb/models/hardip.py) does with a TLP
 * the RTL hands it, done here where nothing in Python needs to see it.
 *
 * A posted memory write from the requester request stream (RQ): its descriptor
 * (PG213, "Requester Request Descriptor Format") and data become the TLP
 * Tlp_us.unpack_us_rq makes (the request type, the address and its format, the dword
 * count, the requester ID with the bus number the core captured where the descriptor
 * does not set it, tag, traffic class, attributes, address type, byte enables), checked
 * as Tlp.check() checks it, and sent on the card's link as CompiledTlpPort.send sends
 * it: at once where it need not wait (its credits there, the wire's place free), else
 * after Python's credit gate has waited. Anything else (another request type, a
 * poisoned write, a TLP that fails the check) is left to Python with nothing done. A
 * memory read's TLP is made from its descriptor alike (rqdrain.cpp issues it).
 */
#include "dp.h"
#include "tlp.h"

#include <cstring>
#include <vector>

namespace {

/* the Req Types of a memory read and write (PG213, Table "Transaction Types") */
constexpr uint32_t REQ_MEM_READ = 0x0;
constexpr uint32_t REQ_MEM_WRITE = 0x1;
/* the credit type of a posted request */
constexpr uint32_t FC_POSTED = 0;

/*
 * The memory request Tlp_us.unpack_us_rq makes of an RQ frame's dwords (dw, n of them:
 * the descriptor's four, then the data) and its byte enables, of Req Type type, the
 * requester ID's bus set to bus where the descriptor leaves it to the core: its header
 * into *h and its data length in bytes; 0 where it is not one this path moves (not of
 * that type, poisoned, a reserved address type, a length outside 1 to 1024 dwords).
 */
int rq_memory_tlp(uint32_t type, const uint32_t *dw, uint32_t n, uint32_t first_be,
		  uint32_t last_be, uint32_t bus, dp::TlpHeader *h, uint64_t *data_len)
{
	if (n < 4 || ((dw[2] >> 11) & 0xf) != type || (dw[2] & (1u << 15)))
		return 0;
	if ((dw[0] & 3) == 3)	/* a reserved address type: the hard IP refuses it */
		return 0;
	uint32_t length = dw[2] & 0x7ff;
	if (length == 0 || length > 1024)
		return 0;
	bool data = type == REQ_MEM_WRITE;
	std::memset(h, 0, sizeof(*h));
	h->type = dp::TYPE_MEM;
	h->address = (uint64_t(dw[1]) << 32) | (dw[0] & ~3u);
	if (h->address > 0xffffffffull)
		h->fmt = data ? dp::FMT_4DW_DATA : dp::FMT_4DW;
	else
		h->fmt = data ? dp::FMT_3DW_DATA : dp::FMT_3DW;
	h->at = dw[0] & 3;
	h->length = length;
	uint32_t rid = dw[2] >> 16;
	if (!(dw[3] & (1u << 24)))
		rid = (bus & 0xff) << 8 | (rid & 0xff);
	h->requester_id = uint16_t(rid);
	h->tag = dw[3] & 0xff;
	h->tc = (dw[3] >> 25) & 7;
	h->attr = (dw[3] >> 28) & 7;
	h->first_be = first_be & 0xf;
	h->last_be = last_be & 0xf;
	*data_len = uint64_t(n - 4) * 4;
	return 1;
}

}  // namespace

extern "C" {

void dp_rq_send(dp_calendar *cal, dp_port *port, const dp::TlpHeader *h, const uint32_t *dw,
		uint32_t n, uint64_t dc, uint64_t now);

/* the memory write of an RQ frame, as rq_memory_tlp makes it */
int dp_rq_write_tlp(const uint32_t *dw, uint32_t n, uint32_t first_be, uint32_t last_be,
		    uint32_t bus, dp::TlpHeader *h, uint64_t *data_len)
{
	return rq_memory_tlp(REQ_MEM_WRITE, dw, n, first_be, last_be, bus, h, data_len);
}

/* the memory read of an RQ frame, as rq_memory_tlp makes it (its data length: what
 * follows the descriptor, which Tlp.check() finds wrong where there is any) */
int dp_rq_read_tlp(const uint32_t *dw, uint32_t n, uint32_t first_be, uint32_t last_be,
		   uint32_t bus, dp::TlpHeader *h, uint64_t *data_len)
{
	return rq_memory_tlp(REQ_MEM_READ, dw, n, first_be, last_be, bus, h, data_len);
}

/*
 * The hard IP sends the posted write of an RQ frame (as dp_rq_write_tlp reads it) on
 * the card's link port, at step now: 1 when it has; 0 when it is not a write the
 * library moves (nothing done, Python sends it); 2 when it must wait for credit or for
 * the wire (fc_ready: the link's flow control is initialized), nothing done and *dc
 * its data credits, for Python's gate (CompiledTlpPort._gate), after which it is sent
 * with gated set (the gate passed: its credits taken, the wire's place free).
 */
int dp_rq_write(dp_calendar *cal, dp_port *port, const uint32_t *dw, uint32_t n,
		uint32_t first_be, uint32_t last_be, uint32_t bus, int fc_ready, int gated,
		uint64_t now, uint64_t *dc)
{
	dp::TlpHeader h;
	uint64_t data_len;

	if (!dp_rq_write_tlp(dw, n, first_be, last_be, bus, &h, &data_len) ||
	    !dp::check(h, data_len))
		return 0;
	*dc = (data_len / 4 + 3) / 4;
	/* TlpPort.send's gate: credit taken, then the wire's place free, both at once */
	if (!gated && (!fc_ready || dp_port_must_wait(port, now) ||
		       !dp_port_take_credit(port, 0, FC_POSTED, *dc)))
		return 2;
	dp_rq_send(cal, port, &h, dw, n, *dc, now);
	return 1;
}

/*
 * The posted write whose header dp_rq_write_tlp made (h) and whose RQ frame's dwords
 * are dw (n of them: the descriptor's four, then the data) onto the card's link port at
 * step now, its gate passed (its dc data credits taken, the wire's place free)
 */
void dp_rq_send(dp_calendar *cal, dp_port *port, const dp::TlpHeader *h, const uint32_t *dw,
		uint32_t n, uint64_t dc, uint64_t now)
{
	uint8_t raw[16];
	size_t hb = dp::pack_header(*h, raw);
	std::vector<uint8_t> bytes(raw, raw + hb);
	bytes.reserve(hb + uint64_t(n - 4) * 4);
	for (uint32_t k = 4; k < n; k++) {	/* each data dword little-endian */
		bytes.push_back(uint8_t(dw[k]));
		bytes.push_back(uint8_t(dw[k] >> 8));
		bytes.push_back(uint8_t(dw[k] >> 16));
		bytes.push_back(uint8_t(dw[k] >> 24));
	}
	uint64_t handle = cal->tlp_new(bytes.data(), bytes.size());
	dp_port_send(port, now, handle, bytes.size() + 8, 0, FC_POSTED, dc);
}

}  // extern "C"
