"""Benches of the RTL modules, one cocotb module per module, each its module alone
against a model of it; tb/flow/runner/rtl_benches.py lists them with their parameter sets and
runs them (tests/sim/test_sim_rtl_benches.py)."""
