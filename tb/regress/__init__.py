"""The constrained-random regression: the chain generator, the scoreboard and functional
coverage (``python -m tb.regress.coverage`` merges coverage files)."""
