// SPDX-License-Identifier: MIT
// The engine's parameters, shared by pevb_xdma and pevb_xdma_ip (whose wrappers
// pass them on with pevb_xdma_params_map.vh): included inside a module's #( ).
    // PCIe AXI stream data width (64, 128, 256 or 512): XDMA's AXI data width
    parameter AXIS_PCIE_DATA_WIDTH = 64,
    // PCIe AXI stream tkeep width (DWORD lanes)
    parameter AXIS_PCIE_KEEP_WIDTH = AXIS_PCIE_DATA_WIDTH/32,
    // RQ tuser width
    parameter AXIS_PCIE_RQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 62 : 137,
    // RC tuser width
    parameter AXIS_PCIE_RC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 75 : 161,
    // CQ tuser width
    parameter AXIS_PCIE_CQ_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 88 : 183,
    // CC tuser width
    parameter AXIS_PCIE_CC_USER_WIDTH = AXIS_PCIE_DATA_WIDTH < 512 ? 33 : 81,
    // AXI4 master address and ID widths (XDMA: 64 and 4)
    parameter AXI_ADDR_WIDTH = 64,
    parameter AXI_ID_WIDTH = 4,
    // H2C and C2H channels, 1 to 4 each (XDMA's read and write channels)
    parameter H2C_CHANNELS = 1,
    parameter C2H_CHANNELS = 1,
    // AXI4-Stream channels (bit n: channel n streams; memory-mapped otherwise; the
    // Vivado IP builds all or none)
    parameter H2C_STREAM = 0,
    parameter C2H_STREAM = 0,
    // descriptor bypass channels (bit n: channel n takes its descriptors from the
    // h2c_dsc_byp_*/c2h_dsc_byp_* port instead of fetching them; PG195's "descriptor
    // bypass for read (H2C)" and "for write (C2H)")
    parameter H2C_BYPASS = 0,
    parameter C2H_BYPASS = 0,
    // user interrupt inputs (1 to 16, PG195's NUM_USR_IRQ)
    parameter USER_IRQS = 1,
    // MSI-X table and PBA at 0x8000 of the DMA BAR (0 or 1)
    parameter MSIX = 0,
    // the AXI4-Lite slave to the DMA registers, s_axil_* (0 or 1; Vivado's
    // xdma_axilite_slave): when 0 its ports are idle
    parameter AXIL_SLAVE = 0,
    // dma_bridge_resetn is used (0 or 1; Vivado's soft_reset_en): when 0 it is ignored
    parameter SOFT_RESET_EN = 0,
    // the PCIe-to-DMA bypass master m_axib_* behind BAR_AXIB (0 or 1; Vivado's
    // axist_bypass_en): when 0 its ports are idle and requests to that BAR get UR
    parameter AXIB = 0,
    // log2 of the bypass BAR's size (Vivado's axist_bypass_size/_scale), and the AXI
    // address of its first byte (pciebar2axibar_axist_bypass)
    parameter AXIB_BAR_ADDR_WIDTH = 20,
    parameter [63:0] AXIB_AXI_BASE = 64'd0,
    // the BARs (ids 0-5 of the CQ descriptor; 7: none): the AXI4-Lite master's user
    // BAR, the DMA BAR and the bypass BAR, where the PCIe BARs options put them
    parameter [2:0] BAR_USER = `PEVB_BAR_USER,
    parameter [2:0] BAR_DMA = `PEVB_BAR_DMA,
    parameter [2:0] BAR_AXIB = `PEVB_BAR_AXIB,
    // read tags an H2C channel may hold for data at once (1 to 32; the engine has
    // 32, shared by all channels and descriptor fetches)
    parameter H2C_READ_TAGS = 32 / H2C_CHANNELS,
    // descriptor prefetch buffer entries per channel (power of two)
    parameter DESC_DEPTH = 8,
    // descriptor fetches each channel keeps in flight (1 to 7)
    parameter DESC_FETCHES = 2,
    // completion timeout in user clock cycles
    parameter CPL_TIMEOUT_CYCLES = 131072
