// SPDX-License-Identifier: MIT
// The card's own ports (pevb_dma_top's, beside the hard IP's): user interrupts, the
// stream channels, the channels' status, the LEDs. Included last in a port list (its
// last port ends it: no comma).
    /* User interrupts of the engine (driven by the testbench) */
    input  wire [USER_IRQS-1:0]               usr_irq_req,
    output wire [USER_IRQS-1:0]               usr_irq_ack,
    // MSI enabled by the host, and the vectors it granted (log2)
    output wire                               msi_enable,
    output wire [2:0]                         msi_vector_width,
    // MSI-X enabled by the host
    output wire                               msix_enable,

    /* Stream channels n = 0-3, XDMA's port names (idle for memory-mapped or
       absent channels) */
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_h2c_tdata_0,
    output wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axis_h2c_tkeep_0,
    output wire                               m_axis_h2c_tlast_0,
    output wire                               m_axis_h2c_tvalid_0,
    input  wire                               m_axis_h2c_tready_0,
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_h2c_tdata_1,
    output wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axis_h2c_tkeep_1,
    output wire                               m_axis_h2c_tlast_1,
    output wire                               m_axis_h2c_tvalid_1,
    input  wire                               m_axis_h2c_tready_1,
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_h2c_tdata_2,
    output wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axis_h2c_tkeep_2,
    output wire                               m_axis_h2c_tlast_2,
    output wire                               m_axis_h2c_tvalid_2,
    input  wire                               m_axis_h2c_tready_2,
    output wire [AXIS_PCIE_DATA_WIDTH-1:0]    m_axis_h2c_tdata_3,
    output wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  m_axis_h2c_tkeep_3,
    output wire                               m_axis_h2c_tlast_3,
    output wire                               m_axis_h2c_tvalid_3,
    input  wire                               m_axis_h2c_tready_3,
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_c2h_tdata_0,
    input  wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  s_axis_c2h_tkeep_0,
    input  wire                               s_axis_c2h_tlast_0,
    input  wire                               s_axis_c2h_tvalid_0,
    output wire                               s_axis_c2h_tready_0,
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_c2h_tdata_1,
    input  wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  s_axis_c2h_tkeep_1,
    input  wire                               s_axis_c2h_tlast_1,
    input  wire                               s_axis_c2h_tvalid_1,
    output wire                               s_axis_c2h_tready_1,
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_c2h_tdata_2,
    input  wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  s_axis_c2h_tkeep_2,
    input  wire                               s_axis_c2h_tlast_2,
    input  wire                               s_axis_c2h_tvalid_2,
    output wire                               s_axis_c2h_tready_2,
    input  wire [AXIS_PCIE_DATA_WIDTH-1:0]    s_axis_c2h_tdata_3,
    input  wire [AXIS_PCIE_DATA_WIDTH/8-1:0]  s_axis_c2h_tkeep_3,
    input  wire                               s_axis_c2h_tlast_3,
    input  wire                               s_axis_c2h_tvalid_3,
    output wire                               s_axis_c2h_tready_3,

    /* Channel status ports n = 0-3 (XDMA's) */
    output wire [7:0]                         h2c_sts_0,
    output wire [7:0]                         h2c_sts_1,
    output wire [7:0]                         h2c_sts_2,
    output wire [7:0]                         h2c_sts_3,
    output wire [7:0]                         c2h_sts_0,
    output wire [7:0]                         c2h_sts_1,
    output wire [7:0]                         c2h_sts_2,
    output wire [7:0]                         c2h_sts_3,

    /* User outputs */
    output wire [2:0]                         led
