// Testbench-only (simulation helper, not part of the engine): text tracks for the waveform
// viewer. tb/debug/annotate.py writes a decoded label of each TLP and of the descriptor each
// engine is working on into these registers as the simulation runs, so the dump holds
// them beside the RTL buses; the save file shows them as ASCII.
//
// Under Verilator the module is bound into pevb_dma_top (pevb_annot_bind.sv) and traced with it.
// Under Icarus (no bind) it is a second root module; PEVB_ANNOT_DUMP adds it to the dump cocotb
// opened (#0 runs after cocotb's own $dumpfile/$dumpvars at time 0).
module pevb_annot;
    localparam integer CHARS = 64;

    /* verilator lint_off UNUSEDSIGNAL */
    reg [8*CHARS-1:0] fpga_tx;   // TLPs the FPGA sends: its reads and writes, completions, MSI
    reg [8*CHARS-1:0] fpga_rx;   // TLPs the FPGA receives: MMIO, read data completions
    reg [8*CHARS-1:0] gpu_rx;    // TLPs the GPU receives: peer writes and reads, MMIO
    reg [8*CHARS-1:0] gpu_tx;    // TLPs the GPU sends: completions of peer reads
    reg [8*CHARS-1:0] host_rx;   // TLPs the root complex receives (under a switch)
    reg [8*CHARS-1:0] host_tx;   // TLPs the root complex sends (under a switch)
    reg [8*CHARS-1:0] mmio;      // register and configuration accesses at either endpoint
    reg [8*CHARS-1:0] h2c_desc;  // the descriptor the H2C engine moves data for
    reg [8*CHARS-1:0] c2h_desc;  // the descriptor the C2H engine moves data for
    /* verilator lint_on UNUSEDSIGNAL */

    // blank until the first label (and a driver: Icarus drops registers nothing drives)
    initial begin
        fpga_tx = 0;
        fpga_rx = 0;
        gpu_rx = 0;
        gpu_tx = 0;
        host_rx = 0;
        host_tx = 0;
        mmio = 0;
        h2c_desc = 0;
        c2h_desc = 0;
    end

`ifdef PEVB_ANNOT_DUMP
    initial begin
        #0;
        $dumpvars(0, pevb_annot);
    end
`endif
endmodule
