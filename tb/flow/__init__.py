"""The flow: what runs outside the simulator, around it. It builds the RTL and starts
simulations, and never runs inside one (nothing here imports cocotb, but for its runner,
cocotb_tools); the testbench inside the simulator (:mod:`tb.env`, :mod:`tb.models` and
the rest of :mod:`tb`) never imports it. What both sides read, the build configuration,
is :mod:`tb.config`.

- :mod:`.runner`: builds and runs of cocotb tests (``python -m tb.flow.runner`` prints a
  toplevel's Verilog for a Makefile flow);
- :mod:`.farm`: ``make regress``, the random regression on Dask;
- :mod:`.bench`: ``make bench`` and ``make profile`` (their cocotb side is :mod:`tb.bench`);
- :mod:`.demo`: ``make sim``, a picoevb demo program through the RTL (its cocotb side is
  :mod:`tb.apps.demo`).
"""
