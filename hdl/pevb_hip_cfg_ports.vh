// SPDX-License-Identifier: MIT
// The hard IP's configuration, flow-control and interrupt interfaces on the engine's
// side (PG213), each port followed by a comma: included in a port list after
// pevb_xdma_hip_ports.vh, and connected by pevb_hip_cfg_map.vh.
    /* Completer request flow control */
    output wire [1:0]                         pcie_cq_np_req,

    /* Configuration status */
    input  wire [2:0]                         cfg_max_payload,
    input  wire [2:0]                         cfg_max_read_req,
    input  wire [7:0]                         cfg_bus_number,
    output wire                               cfg_config_space_enable,

    /* MSI */
    input  wire [3:0]                         cfg_interrupt_msi_enable,
    input  wire [11:0]                        cfg_interrupt_msi_mmenable,
    output wire [31:0]                        cfg_interrupt_msi_int,
    input  wire                               cfg_interrupt_msi_sent,
    input  wire                               cfg_interrupt_msi_fail,
    output wire [7:0]                         cfg_interrupt_msi_function_number,

    /* Function-level reset */
    input  wire [3:0]                         cfg_flr_in_process,
    output wire [3:0]                         cfg_flr_done,

    /* MSI-X (the vector table is the engine's: PG213's external MSI-X table) */
    input  wire [3:0]                         cfg_interrupt_msix_enable,
    input  wire [3:0]                         cfg_interrupt_msix_mask,
    output wire [63:0]                        cfg_interrupt_msix_address,
    output wire [31:0]                        cfg_interrupt_msix_data,
    output wire                               cfg_interrupt_msix_int,
    input  wire                               cfg_interrupt_msix_sent,
    input  wire                               cfg_interrupt_msix_fail,

    /* Legacy interrupts (INTx): INTA's level while MSI and MSI-X are off */
    output wire [3:0]                         cfg_interrupt_int,
    output wire [3:0]                         cfg_interrupt_pending,
    input  wire                               cfg_interrupt_sent,
