// SPDX-License-Identifier: MIT
// A data mover's side of its channel's descriptor engine (pevb_h2c_rd, pevb_c2h_wr; the
// engine's pevb_desc_ports.vh has the other): the descriptors in, and each done, in
// order.  Included in a port list, each port followed by a comma.
    /* Descriptors */
    input  wire                      s_desc_valid,
    output wire                      s_desc_ready,
    input  wire [63:0]               s_desc_src,
    input  wire [63:0]               s_desc_dst,
    input  wire [27:0]               s_desc_len,
    input  wire [2:0]                s_desc_flags,

    /* Done, in order: {EOP, Completed, Stop} (a C2H stream channel's EOP says whether
       the packet ended, tlast, in the descriptor, not what its EOP bit was), the read
       and write error bits, and aborted behind an error */
    output wire                      m_done_valid,
    output wire [2:0]                m_done_flags,
    output wire [4:0]                m_done_rd_err,
    output wire [4:0]                m_done_wr_err,
    output wire                      m_done_abort,
