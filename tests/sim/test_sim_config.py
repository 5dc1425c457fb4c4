"""A drop-in ID option from make's variable to the configuration space the host reads:
``make test XDMA="PF0_DEVICE_ID=... PF0_SUBSYSTEM_ID=..."`` reaches the runner's build
configuration (tb.config.BuildConfig.from_make), the simulation reads it, and the hard-IP
model presents those IDs (tb/tests/cocotb_dropin.py's ``test_ids_as_built``)."""

from __future__ import annotations

import json

import pytest

from tb.config import BuildConfig
from tb.flow import runner


def test_an_id_option_reaches_the_configuration_space(
    monkeypatch: pytest.MonkeyPatch, sim: str
) -> None:
    monkeypatch.setenv("XDMA", "PF0_DEVICE_ID=0x9011 PF0_SUBSYSTEM_ID=0x0042")
    want = BuildConfig.from_make(toplevel=runner.DROPIN_TOPLEVEL, sim=sim).ids
    assert want[1] == 0x9011 and want[4] == 0x0042 and want[0] == 0x10EE
    results = runner.run(
        "test_ids_as_built",
        module="tb.tests.cocotb_dropin",
        sim=sim,
        toplevel=runner.DROPIN_TOPLEVEL,
        extra_env={"PEVB_EXPECT_IDS": json.dumps(list(want))},
    )
    assert not runner.failures(results), runner.failure_messages(results)
