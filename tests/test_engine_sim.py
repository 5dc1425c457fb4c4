"""The RTL regression: each cocotb test of tb/test_dma.py as a pytest item.

The full list runs on the selected simulator/profile (``SIM=``, ``PROFILE=``); a smoke
subset always runs on Verilator and on the gen3x8 profile too, and the datapath tests run
at the two other AXI-stream widths (128 and 512 bits). A failure prints the command that
reproduces it.
"""

from __future__ import annotations

import pytest

from tb import runner

ALL_TESTS = [
    "test_identifiers",
    "test_register_access",
    "test_chain_lengths",
    "test_lengths_and_offsets",
    "test_idle_backpressure",
    "test_rcb_split_completions",
    "test_stop_mid_chain",
    "test_completed_and_writeback",
    "test_msi_one_per_completion",
    "test_concurrent_h2c_c2h",
    "test_bad_magic",
    "test_unmapped_read",
    "test_descriptor_fetch_error",
    "test_card_out_of_range",
    "test_zero_length",
]
SMOKE = ["test_identifiers", "test_stop_mid_chain", "test_unmapped_read",
         "test_msi_one_per_completion"]


def _run(name: str, sim: str, profile: str) -> None:
    runner.run_and_check(name, sim=sim, profile=profile,
                         repro=f"make test SIM={sim} PROFILE={profile} SEED={{seed}} "
                               f"TESTS='-k {name}'")


@pytest.mark.parametrize("name", ALL_TESTS)
def test_rtl(name: str, sim: str, profile: str) -> None:
    _run(name, sim, profile)


@pytest.mark.verilator
@pytest.mark.parametrize("name", SMOKE)
def test_rtl_verilator_smoke(name: str, sim: str, profile: str) -> None:
    if sim == "verilator":
        pytest.skip("the full list already runs on Verilator")
    _run(name, "verilator", profile)


@pytest.mark.parametrize("name", [*SMOKE, "test_lengths_and_offsets", "test_concurrent_h2c_c2h"])
def test_rtl_gen3x8(name: str, sim: str, profile: str) -> None:
    if profile == "gen3x8":
        pytest.skip("the full list already runs on gen3x8")
    _run(name, sim, "gen3x8")


WIDTH_TESTS = ["test_identifiers", "test_lengths_and_offsets", "test_rcb_split_completions",
               "test_concurrent_h2c_c2h", "test_unmapped_read"]


@pytest.mark.parametrize("width_profile", ["gen3x4", "gen3x16"])
@pytest.mark.parametrize("name", WIDTH_TESTS)
def test_rtl_widths(name: str, width_profile: str, sim: str, profile: str) -> None:
    """128-bit (gen3x4) and 512-bit (gen3x16) builds of the engine."""
    if profile == width_profile:
        pytest.skip("the full list already runs on this profile")
    _run(name, sim, width_profile)
