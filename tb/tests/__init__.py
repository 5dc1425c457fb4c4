"""The cocotb test modules, one per part under test; they run inside the simulator
(``tests/sim`` launches them through :mod:`tb.flow.runner`) and share no code: their helpers
come from :mod:`tb.env`."""
