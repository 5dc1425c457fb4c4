// SPDX-License-Identifier: MIT
// The hard IP's interrupt interfaces (PG213: MSI, MSI-X with the table outside the hard
// IP, legacy INTx), for the engine's interrupt sender (pevb_irq_tx), the register file
// that holds it and the layers above (pevb_hip_cfg_ports.vh includes it): included in a
// port list, each port followed by a comma, and connected by pevb_hip_irq_map.vh.
    /* MSI */
    input  wire [3:0]                         cfg_interrupt_msi_enable,
    input  wire [11:0]                        cfg_interrupt_msi_mmenable,
    output wire [31:0]                        cfg_interrupt_msi_int,
    input  wire                               cfg_interrupt_msi_sent,
    input  wire                               cfg_interrupt_msi_fail,

    /* MSI-X (the vector table is the engine's: PG213's external MSI-X table) */
    input  wire [3:0]                         cfg_interrupt_msix_enable,
    input  wire [3:0]                         cfg_interrupt_msix_mask,
    output wire [63:0]                        cfg_interrupt_msix_address,
    output wire [31:0]                        cfg_interrupt_msix_data,
    output wire                               cfg_interrupt_msix_int,
    input  wire                               cfg_interrupt_msix_sent,
    input  wire                               cfg_interrupt_msix_fail,

    /* Legacy interrupts (INTx): INTA's level while MSI and MSI-X are off, function 0's
       pending bit, a message sent */
    output wire [3:0]                         cfg_interrupt_int,
    output wire [3:0]                         cfg_interrupt_pending,
    input  wire                               cfg_interrupt_sent,
