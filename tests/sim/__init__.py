"""Simulation tests: cocotb runs through :mod:`tb.runner` (the plan is in :mod:`tests.sim.plan`)."""
