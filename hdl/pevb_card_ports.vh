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

    /* Stream channels and their status ports, XDMA's port names (idle for
       memory-mapped or absent channels) */
`include "pevb_xdma_stream_ports.vh"
    output wire [7:0]                         c2h_sts_3,

    /* User outputs */
    output wire [2:0]                         led
