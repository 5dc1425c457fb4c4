// SPDX-License-Identifier: MIT
// The engine's optional user-side interfaces (PG195): the AXI4-Lite slave to the
// DMA registers, the PCIe-to-DMA bypass master and the AXI4-Lite master of the user
// BAR.  Included in a port list, each port followed by a comma.
    /* AXI4-Lite slave: the DMA registers from the user side (AXIL_SLAVE) */
    input  wire [31:0]                        s_axil_awaddr,
    input  wire [2:0]                         s_axil_awprot,
    input  wire                               s_axil_awvalid,
    output wire                               s_axil_awready,
    input  wire [31:0]                        s_axil_wdata,
    input  wire [3:0]                         s_axil_wstrb,
    input  wire                               s_axil_wvalid,
    output wire                               s_axil_wready,
    output wire                               s_axil_bvalid,
    output wire [1:0]                         s_axil_bresp,
    input  wire                               s_axil_bready,
    input  wire [31:0]                        s_axil_araddr,
    input  wire [2:0]                         s_axil_arprot,
    input  wire                               s_axil_arvalid,
    output wire                               s_axil_arready,
    output wire [31:0]                        s_axil_rdata,
    output wire [1:0]                         s_axil_rresp,
    output wire                               s_axil_rvalid,
    input  wire                               s_axil_rready,

    /* PCIe-to-DMA bypass master: host requests to its BAR as AXI4 bursts (AXIB) */
`include "pevb_axib_ports.vh"

    /* AXI4-Lite master (user BAR) */
`include "pevb_axil_master_ports.vh"
