"""The driver model's ioctl surface fuzzed against the RTL, long (``make fuzz``): the
suite runs ``test_ioctl_fuzz`` with its own small budget among the driver tests; this
runs it with ``PEVB_FUZZ_EXAMPLES`` calls and adds its count to ``PEVB_FUZZ_REPORT``."""

from __future__ import annotations

import os

import pytest

from tb.flow import runner

pytestmark = [pytest.mark.slow, pytest.mark.fuzz]


def test_ioctl_fuzz_long(sim: str, profile: str) -> None:
    env = {
        "PEVB_FUZZ_EXAMPLES": os.environ.get("PEVB_FUZZ_EXAMPLES", "2000"),
        "PEVB_FUZZ_REPORT": os.environ.get("PEVB_FUZZ_REPORT", ""),
    }
    runner.run_and_check(
        "test_ioctl_fuzz",
        sim=sim,
        profile=profile,
        module="tb.tests.cocotb_driver",
        extra_env={k: v for k, v in env.items() if v},
        repro="make fuzz",
    )
