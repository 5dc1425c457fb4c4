"""Model and tool tests that need no simulator (``make test-unit``)."""
