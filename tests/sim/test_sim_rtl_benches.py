"""The RTL modules' own benches (tb/tests/rtl): each module alone, on both simulators,
for each parameter set its bench names."""

from __future__ import annotations

import pytest

from tb.flow.runner.rtl_benches import BENCHES, run

CASES = [
    pytest.param(module, sim, p, id=f"{module}-{sim}-" + "-".join(f"{k}{v}" for k, v in p.items()))
    for module, bench in BENCHES.items()
    for sim in ("icarus", "verilator")
    for p in bench.sets(sim)
]


@pytest.mark.parametrize("module, sim, params", CASES)
def test_rtl_bench(module: str, sim: str, params: dict[str, int], request) -> None:
    if sim == "verilator":
        request.applymarker(pytest.mark.verilator)
    run(module, sim, params)
