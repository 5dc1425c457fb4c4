"""The cocotb side of ``make bench``: the engine's cases (:mod:`.engine`), the GPU's
(:mod:`.gpu`), the guest's (:mod:`.guest`), and the recording of the card's inputs for
the RTL alone (:mod:`.inputs`). The flow that runs them and writes the tables is
:mod:`tb.flow.bench`."""
