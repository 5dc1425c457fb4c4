// SPDX-License-Identifier: MIT
// A C2H reader's TLPs (pevb_tlp_out_ports.vh) connected by name, each connection
// followed by a comma.
    .m_tlp_valid(m_tlp_valid),
    .m_tlp_ready(m_tlp_ready),
    .m_tlp_addr(m_tlp_addr),
    .m_tlp_len(m_tlp_len),
    .m_tlp_slot(m_tlp_slot),
    .m_drop_valid(m_drop_valid),
    .m_drop_slot(m_drop_slot),
    .m_drop_err(m_drop_err),
