// Testbench-only: puts the annotation tracks (pevb_annot.v) inside the engine's top for
// the Verilator build, which traces one top module.
bind pevb_dma_top pevb_annot annot();
