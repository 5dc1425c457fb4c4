"""``make bench`` (:mod:`.suite`) and ``make profile`` (:mod:`.profile`): the runs, their
tables and the RTL alone (:mod:`.rtl_alone`); the cases run by the cocotb side in
:mod:`tb.bench`."""
