"""Simulation tests: cocotb runs through :mod:`tb.flow.runner` (the plan is in
:mod:`tests.sim.plan`)."""
