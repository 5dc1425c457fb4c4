"""The picoevb demo programs (:mod:`.programs`), their cocotb entry (:mod:`.demo`) and
the live progress a run reports (:mod:`.progress`); ``make sim`` starts them from the
flow (:mod:`tb.flow.demo`)."""
