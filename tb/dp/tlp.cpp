// SPDX-License-Identifier: MIT
/*
 * A TLP header's fields to and from their bits on the wire (tlp.h), and the C entry
 * points Python's tests check them through against cocotbext-pcie's Tlp.
 */
#include "tlp.h"

namespace dp {

namespace {

uint32_t get_dw(const uint8_t *p)
{
	return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

void put_dw(uint8_t *p, uint32_t dw)
{
	p[0] = uint8_t(dw >> 24);
	p[1] = uint8_t(dw >> 16);
	p[2] = uint8_t(dw >> 8);
	p[3] = uint8_t(dw);
}

}  // namespace

unsigned TlpHeader::first_be_offset() const
{
	if (!(first_be & 0x7))
		return 3;
	if (!(first_be & 0x3))
		return 2;
	if (!(first_be & 0x1))
		return 1;
	return 0;
}

unsigned TlpHeader::last_be_offset() const
{
	unsigned be = length == 1 ? first_be : last_be;

	if ((be & 0xf) == 0x1)
		return 3;
	if ((be & 0xe) == 0x2)
		return 2;
	if ((be & 0xc) == 0x4)
		return 1;
	return 0;
}

int unpack_header(const uint8_t *p, TlpHeader &h)
{
	uint32_t dw = get_dw(p);

	h = TlpHeader{};
	h.length = dw & 0x3ff;
	h.at = (dw >> 10) & 0x3;
	h.attr = uint8_t(((dw >> 12) & 0x3) | ((dw >> 16) & 0x4));
	h.ep = (dw >> 14) & 1;
	h.td = (dw >> 15) & 1;
	h.th = (dw >> 16) & 1;
	h.ln = (dw >> 17) & 1;
	h.tag = uint16_t(((dw >> 11) & 0x100) | ((dw >> 14) & 0x200));
	h.tc = (dw >> 20) & 0x7;
	h.type = (dw >> 24) & 0x1f;
	h.fmt = (dw >> 29) & 0x7;
	if (h.fmt > FMT_4DW_DATA)
		return 0;
	/* a length of 0 is 1024 DWs, but in a Cpl or a message without data */
	if (h.length == 0 && !((h.type == TYPE_CPL || h.type == TYPE_CPL_LOCKED ||
				h.is_message()) && !h.has_data()))
		h.length = 1024;
	if (h.is_request()) {
		dw = get_dw(p + 4);
		h.first_be = dw & 0xf;
		h.last_be = (dw >> 4) & 0xf;
		h.tag |= (dw >> 8) & 0xff;
		h.requester_id = uint16_t(dw >> 16);
		if (h.is_config()) {
			dw = get_dw(p + 8);
			h.address = dw & 0xffc;
			h.completer_id = uint16_t(dw >> 16);
		} else if (h.four_dw()) {
			uint64_t v = uint64_t(get_dw(p + 8)) << 32 | get_dw(p + 12);
			h.address = v & ~uint64_t(3);
			h.ph = v & 0x3;
		} else {
			dw = get_dw(p + 8);
			h.address = dw & 0xfffffffc;
			h.ph = dw & 0x3;
		}
		return 1;
	}
	if (h.is_completion()) {
		dw = get_dw(p + 4);
		h.byte_count = dw & 0xfff;
		h.bcm = (dw >> 12) & 1;
		h.status = (dw >> 13) & 0x7;
		h.completer_id = uint16_t(dw >> 16);
		dw = get_dw(p + 8);
		h.lower_address = dw & 0x7f;
		h.tag |= (dw >> 8) & 0xff;
		h.requester_id = uint16_t(dw >> 16);
		if (h.byte_count == 0)
			h.byte_count = 4096;
		return 1;
	}
	return 0;
}

size_t pack_header(const TlpHeader &h, uint8_t *out)
{
	uint32_t dw = h.length & 0x3ff;

	dw |= uint32_t(h.at & 0x3) << 10;
	dw |= uint32_t(h.attr & 0x3) << 12;
	dw |= uint32_t(h.ep != 0) << 14;
	dw |= uint32_t(h.td != 0) << 15;
	dw |= uint32_t(h.th != 0) << 16;
	dw |= uint32_t(h.ln != 0) << 17;
	dw |= uint32_t(h.attr & 0x4) << 16;
	dw |= uint32_t(h.tag & 0x100) << 11;
	dw |= uint32_t(h.tc & 0x7) << 20;
	dw |= uint32_t(h.tag & 0x200) << 14;
	dw |= uint32_t(h.type & 0x1f) << 24;
	dw |= uint32_t(h.fmt & 0x7) << 29;
	put_dw(out, dw);
	if (h.is_request()) {
		dw = (h.first_be & 0xf) | uint32_t(h.last_be & 0xf) << 4;
		dw |= uint32_t(h.tag & 0xff) << 8 | uint32_t(h.requester_id) << 16;
		put_dw(out + 4, dw);
		if (h.is_config()) {
			put_dw(out + 8, uint32_t(h.address & 0xffc) | uint32_t(h.completer_id) << 16);
			return 12;
		}
		if (h.four_dw()) {
			uint64_t v = (h.address & ~uint64_t(3)) | (h.ph & 0x3);
			put_dw(out + 8, uint32_t(v >> 32));
			put_dw(out + 12, uint32_t(v));
			return 16;
		}
		put_dw(out + 8, uint32_t(h.address & 0xfffffffc) | (h.ph & 0x3));
		return 12;
	}
	if (h.is_completion()) {
		dw = (h.byte_count & 0xfff) | uint32_t(h.bcm != 0) << 12;
		dw |= uint32_t(h.status & 0x7) << 13 | uint32_t(h.completer_id) << 16;
		put_dw(out + 4, dw);
		dw = (h.lower_address & 0x7f) | uint32_t(h.tag & 0xff) << 8;
		dw |= uint32_t(h.requester_id) << 16;
		put_dw(out + 8, dw);
		return 12;
	}
	return 0;
}

/* cocotbext-pcie's Tlp.check() on what the compiled path moves (memory requests and
 * completions): true where it holds for the TLP without a doubt */
bool check(const TlpHeader &h, uint64_t data_len)
{
	if (h.has_data() && uint64_t(h.length) * 4 != data_len)
		return false;
	if (h.type == TYPE_MEM && uint64_t(h.length) * 4 > 0x1000 - (h.address & 0xfff))
		return false;
	if (h.type == TYPE_CPL && h.has_data() &&
	    uint64_t(h.byte_count) + (h.lower_address & 3) + 3 < uint64_t(h.length) * 4)
		return false;
	return true;
}

}  // namespace dp

extern "C" {

/* the header at p decoded into *h: 1, or 0 on a type the data path cannot carry */
int dp_tlp_unpack(const uint8_t *p, dp::TlpHeader *h)
{
	return dp::unpack_header(p, *h);
}

/* *h encoded into out (16 bytes room): its size in bytes, or 0 */
uint64_t dp_tlp_pack(const dp::TlpHeader *h, uint8_t *out)
{
	return dp::pack_header(*h, out);
}

/* dp::check of *h with data_len bytes of data */
int dp_tlp_check(const dp::TlpHeader *h, uint64_t data_len)
{
	return dp::check(*h, data_len);
}

}  // extern "C"
