// SPDX-License-Identifier: MIT
// A C2H reader's TLPs, from its TLP queue (pevb_tlp_queue) to the requester: the TLPs
// whose payload is buffered, and those dropped (a read error, or after one; for a
// stream, nothing left of the descriptor's packet), in order.  Included in the port
// lists of pevb_tlp_queue, pevb_axi_rd and pevb_axis_rd, each port followed by a comma,
// and connected by pevb_tlp_out_map.vh.
    /* TLPs whose payload is buffered */
    output wire                      m_tlp_valid,
    input  wire                      m_tlp_ready,
    output wire [63:0]               m_tlp_addr,
    output wire [12:0]               m_tlp_len,
    output wire [1:0]                m_tlp_slot,

    /* TLPs dropped (popped the cycle they show), in order with the above */
    output wire                      m_drop_valid,
    output wire [1:0]                m_drop_slot,
    output wire [4:0]                m_drop_err,
