"""A real Linux kernel in the loop (tb/tests/cocotb_guest.py): a User-mode Linux guest
whose PCI bus holds the simulated card. ``make guest`` builds the kernel, the guest's
programs and the project's driver (``make test`` does it first); without them these
tests skip, unless ``PEVB_REQUIRE_GUEST=1`` (CI sets it) makes that a failure.
"""

from __future__ import annotations

import os

import pytest

from tb import runner
from tb.guest.uml import missing

MODULE = "tb.tests.cocotb_guest"


def _need_guest() -> None:
    why = missing()
    if why is None:
        return
    if os.environ.get("PEVB_REQUIRE_GUEST") == "1":
        pytest.fail(f"the guest is required here: {why}")
    pytest.skip(why)


@pytest.mark.parametrize(
    "test",
    ["test_guest_enumerates_card", "test_guest_driver_moves_data"],
)
def test_guest(test: str, sim: str, profile: str) -> None:
    _need_guest()
    runner.run_and_check(
        test,
        sim=sim,
        profile=profile,
        module=MODULE,
        repro=f"make test TESTS='tests/sim/test_sim_guest.py -k {test}'",
    )
