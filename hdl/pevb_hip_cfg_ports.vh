// SPDX-License-Identifier: MIT
// The hard IP's configuration, flow-control and interrupt interfaces on the engine's
// side (PG213; the interrupts are pevb_hip_irq_ports.vh), each port followed by a
// comma: included in a port list after pevb_xdma_hip_ports.vh, and connected by
// pevb_hip_cfg_map.vh.
    /* Completer request flow control */
    output wire [1:0]                         pcie_cq_np_req,

    /* Configuration status */
    input  wire [2:0]                         cfg_max_payload,
    input  wire [2:0]                         cfg_max_read_req,
    input  wire [7:0]                         cfg_bus_number,
    output wire                               cfg_config_space_enable,

    /* MSI: the function number of the function sending */
    output wire [7:0]                         cfg_interrupt_msi_function_number,

    /* Function-level reset */
    input  wire [3:0]                         cfg_flr_in_process,
    output wire [3:0]                         cfg_flr_done,

`include "pevb_hip_irq_ports.vh"
