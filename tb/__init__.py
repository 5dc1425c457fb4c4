"""cocotb testbench library: system topology, TB class, runner helpers and test modules."""
