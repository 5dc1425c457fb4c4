"""pytest options shared by the simulation tests: SIM, PROFILE, SEED, WAVES."""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--sim", default=os.environ.get("SIM", "icarus"),
                     help="simulator for the full suite: icarus or verilator")
    parser.addoption("--profile", default=os.environ.get("PROFILE", "picoevb"),
                     help="profile: picoevb, gen3x8, gen3x4 (128-bit), gen3x16 (512-bit)")


@pytest.fixture
def sim(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--sim")


@pytest.fixture
def profile(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--profile")
