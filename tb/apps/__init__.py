"""The picoevb demo programs (:mod:`tb.apps.programs`), their cocotb entry
(:mod:`tb.apps.demo`) and ``python -m tb.apps`` (``make sim``)."""
