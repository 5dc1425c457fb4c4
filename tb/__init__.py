"""The cocotb testbench: the environment (:mod:`tb.env`), debugging (:mod:`tb.debug`), the
random regression (:mod:`tb.regress`), the demo programs (:mod:`tb.apps`), the bench
(:mod:`tb.bench`), the cocotb test modules (:mod:`tb.tests`) and the runner that builds
and runs the RTL (:mod:`tb.runner`)."""
