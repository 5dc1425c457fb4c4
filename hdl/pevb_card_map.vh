// SPDX-License-Identifier: MIT
// The card's own ports (pevb_card_ports.vh) connected by name: included last in an
// instance's port list (no comma after the last).
    .usr_irq_req(usr_irq_req),
    .usr_irq_ack(usr_irq_ack),
    .msi_enable(msi_enable),
    .msi_vector_width(msi_vector_width),
    .msix_enable(msix_enable),
`include "pevb_xdma_stream_map.vh"
    .c2h_sts_3(c2h_sts_3),
    .led(led)
