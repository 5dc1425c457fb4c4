"""The testbench, inside the simulator: the environment (:mod:`tb.env`), the models of the
fabric and hard IP (:mod:`tb.models`), the compiled data path (:mod:`tb.dp`), debugging
(:mod:`tb.debug`), the Linux guest's bridge (:mod:`tb.guest`), the random regression
(:mod:`tb.regress`), the demo programs (:mod:`tb.apps`), the bench's cases
(:mod:`tb.bench`) and the cocotb test modules (:mod:`tb.tests`); and beside it the flow
that builds and runs the RTL outside the simulator (:mod:`tb.flow`), and the build
configuration both read (:mod:`tb.config`)."""
