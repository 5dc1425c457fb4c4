// SPDX-License-Identifier: MIT
// A channel's descriptor side (pevb_desc_eng, and the H2C and C2H channels that hold
// one): its registers, its descriptor fetches and their completions into the buffer,
// and the bypass port's loads.  Uses the includer's KEEP and IDX_WIDTH parameters.
// Included in a port list, each port followed by a comma.
    /* the channel's registers */
    input  wire [31:0]               control,
    input  wire [63:0]               desc_addr,
    input  wire [5:0]                desc_adj,
    input  wire [63:0]               wb_addr,
    input  wire                      halt,
    input  wire [2:0]                mrrs_enc,

    /* descriptor fetch requests, and their completions into the buffer */
    output wire                      m_fetch_valid,
    input  wire                      m_fetch_ready,
    output wire [63:0]               m_fetch_addr,
    output wire [12:0]               m_fetch_len,
    output wire [IDX_WIDTH-1:0]      m_fetch_info,
    input  wire [KEEP-1:0]           buf_wr_en,
    input  wire [IDX_WIDTH-1:0]      buf_wr_idx,
    input  wire [KEEP*32-1:0]        buf_wr_data,
    input  wire                      fetch_retire_valid,
    input  wire [4:0]                fetch_retire_err,

    /* descriptor bypass loads (BYPASS channels) */
    input  wire                      byp_load,
    output wire                      byp_ready,
    input  wire [63:0]               byp_src,
    input  wire [63:0]               byp_dst,
    input  wire [27:0]               byp_len,
    input  wire [15:0]               byp_ctl,
