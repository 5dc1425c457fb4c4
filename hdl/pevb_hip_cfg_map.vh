// SPDX-License-Identifier: MIT
// The hard IP's configuration, flow-control and interrupt interfaces between the engine
// and the hard IP (PG213), connected by name: included in an instance's port list after
// pevb_xdma_hip_map.vh, each connection followed by a comma.
    .pcie_cq_np_req(pcie_cq_np_req),
    .cfg_max_payload(cfg_max_payload),
    .cfg_max_read_req(cfg_max_read_req),
    .cfg_bus_number(cfg_bus_number),
    .cfg_config_space_enable(cfg_config_space_enable),
    .cfg_interrupt_msi_function_number(cfg_interrupt_msi_function_number),
    .cfg_flr_in_process(cfg_flr_in_process),
    .cfg_flr_done(cfg_flr_done),
`include "pevb_hip_irq_map.vh"
