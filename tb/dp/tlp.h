/* SPDX-License-Identifier: MIT */
/*
 * A TLP's header in the compiled data path: its fields, and their encoding on the
 * wire (PCIe Base, "Transaction Layer Packet Header"; the same bits cocotbext-pcie's
 * Tlp.pack_header and unpack_header use: big-endian DWs, 10-bit tags with bits 8 and 9
 * in DW0, a length field of 0 meaning 1024 DWs where the TLP may carry data).
 */
#ifndef PEVB_DP_TLP_H
#define PEVB_DP_TLP_H

#include <cstddef>
#include <cstdint>

namespace dp {

/* Fmt[2:0]: header size and whether data follows */
enum Fmt : uint8_t { FMT_3DW = 0, FMT_4DW = 1, FMT_3DW_DATA = 2, FMT_4DW_DATA = 3 };

/* Type[4:0] of the TLPs the data path handles */
enum Type : uint8_t {
	TYPE_MEM = 0x00,	/* MRd (no data), MWr (data) */
	TYPE_MEM_LOCKED = 0x01,
	TYPE_IO = 0x02,
	TYPE_CFG0 = 0x04,
	TYPE_CFG1 = 0x05,
	TYPE_CPL = 0x0a,	/* Cpl (no data), CplD (data) */
	TYPE_CPL_LOCKED = 0x0b,
	TYPE_FETCH_ADD = 0x0c,
	TYPE_SWAP = 0x0d,
	TYPE_CAS = 0x0e,
};

enum CplStatus : uint8_t { CPL_SC = 0, CPL_UR = 1, CPL_CRS = 2, CPL_CA = 4 };

/* laid out as tb/dp's ctypes TlpHeader says */
struct TlpHeader {
	uint64_t address;
	uint32_t length;	/* DWs: 1 to 1024 (0 only for a Cpl or message) */
	uint16_t tag;		/* 10 bits */
	uint16_t requester_id;
	uint16_t completer_id;
	uint16_t byte_count;	/* 1 to 4096 */
	uint8_t fmt;
	uint8_t type;
	uint8_t tc;
	uint8_t attr;		/* bit 0 no snoop, 1 relaxed ordering, 2 ID-based ordering */
	uint8_t at;
	uint8_t ep, td, th, ln;
	uint8_t first_be, last_be;
	uint8_t ph;
	uint8_t status;
	uint8_t bcm;
	uint8_t lower_address;
	uint8_t pad[5];

	bool has_data() const { return fmt == FMT_3DW_DATA || fmt == FMT_4DW_DATA; }
	bool four_dw() const { return fmt == FMT_4DW || fmt == FMT_4DW_DATA; }
	size_t header_bytes() const { return four_dw() ? 16 : 12; }
	bool is_completion() const { return type == TYPE_CPL || type == TYPE_CPL_LOCKED; }
	bool is_config() const { return type == TYPE_CFG0 || type == TYPE_CFG1; }
	bool is_request() const
	{
		return type == TYPE_MEM || type == TYPE_MEM_LOCKED || type == TYPE_IO ||
		       is_config() || type == TYPE_FETCH_ADD || type == TYPE_SWAP ||
		       type == TYPE_CAS;
	}
	bool is_message() const { return (type & 0x18) == 0x10; }
	/* bytes before the first enabled one, and after the last */
	unsigned first_be_offset() const;
	unsigned last_be_offset() const;
	unsigned be_byte_count() const { return length * 4 - first_be_offset() - last_be_offset(); }
};

/* the header at p (its first DW says how long it is): 0 on a type it cannot carry */
int unpack_header(const uint8_t *p, TlpHeader &h);
/* h's header into out (16 bytes room): its size in bytes, 0 on a type it cannot carry */
size_t pack_header(const TlpHeader &h, uint8_t *out);
/* cocotbext-pcie's Tlp.check() on a memory request or completion with data_len bytes */
bool check(const TlpHeader &h, uint64_t data_len);

}  // namespace dp

#endif /* PEVB_DP_TLP_H */
