"""``make bench``: the driver (:mod:`tb.bench.suite`) and its cocotb side
(:mod:`tb.bench.engine`)."""
