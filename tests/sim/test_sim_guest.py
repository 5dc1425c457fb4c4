"""A real Linux kernel in the loop (tb/tests/cocotb_guest.py): a User-mode Linux guest
whose PCI bus holds the simulated card. ``make guest`` builds the kernel, the guest's
programs and the project's driver (``make test`` does it first); without them these
tests skip, unless ``PEVB_REQUIRE_GUEST=1`` (CI sets it) makes that a failure.
"""

from __future__ import annotations

import os

import pytest

from tb.flow import runner
from tb.flow.farm.jobs import parse_seeds
from tb.guest.uml import TOOLS, missing

MODULE = "tb.tests.cocotb_guest"
DROPIN_MODULE = "tb.tests.cocotb_guest_dropin"


def _need_guest() -> None:
    why = missing()
    if why is None:
        return
    if os.environ.get("PEVB_REQUIRE_GUEST") == "1":
        pytest.fail(f"the guest is required here: {why}")
    pytest.skip(why)


def test_bridge_card(sim: str, profile: str) -> None:
    """The bridge's view of the card, without a guest (no guest needed)."""
    runner.run_and_check(
        "test_bridge_card_shadow_bars_and_failed_reads",
        sim=sim,
        profile=profile,
        module=MODULE,
        repro="make test TESTS='tests/sim/test_sim_guest.py -k bridge_card'",
    )


@pytest.mark.parametrize(
    "test",
    [
        "test_guest_enumerates_card",
        "test_guest_driver_moves_data",
        "test_guest_driver_sleeps_after_a_posted_start",
        "test_guest_driver_on_intx",
        "test_guest_driver_on_intx_shared_time",
        "test_guest_sees_the_gpu",
        "test_guest_gpu_driver",
        "test_guest_card_and_gpu",
        "test_guest_cuda_library",
    ],
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


@pytest.mark.parametrize(
    "test, program",
    [("test_guest_cuda_program", "cuda-fill"), ("test_guest_rdma_cuda", "pevb-rdma-cuda")],
)
def test_guest_cuda_program(test: str, program: str, sim: str, profile: str) -> None:
    """CUDA programs built by NVIDIA's nvcc against the project's libraries (``make
    guest-cuda`` fetches nvcc from PyPI; without it this test skips, unless
    ``PEVB_REQUIRE_GUEST=1``): cuda-fill, and the project's GPUDirect RDMA demos."""
    _need_guest()
    if not (TOOLS / program).exists():
        why = f"{TOOLS / program} is missing: run make guest-cuda"
        if os.environ.get("PEVB_REQUIRE_GUEST") == "1":
            pytest.fail(f"the CUDA program is required here: {why}")
        pytest.skip(why)
    runner.run_and_check(
        test,
        sim=sim,
        profile=profile,
        module=MODULE,
        repro=f"make test TESTS='tests/sim/test_sim_guest.py -k {test}'",
    )


@pytest.mark.parametrize("irq", ["MSI", "MSI-X"])
def test_guest_dropin(irq: str, sim: str, profile: str) -> None:
    """The project's C driver on the XDMA drop-in, bound by the IP's default IDs, on MSI
    and (built with the MSI-X table) on MSI-X."""
    _need_guest()
    runner.run_and_check(
        "test_guest_driver_on_dropin",
        sim=sim,
        profile=profile,
        module=DROPIN_MODULE,
        toplevel=runner.DROPIN_TOPLEVEL,
        overrides={"MSIX": 1} if irq == "MSI-X" else None,
        extra_env={"PEVB_GUEST_IRQ": irq},
        repro=f"make test TESTS='tests/sim/test_sim_guest.py -k \"dropin and {irq}\"'",
    )


def test_guest_command(sim: str, profile: str) -> None:
    """Your own program in the guest (``PEVB_GUEST_COMMAND``, ``PEVB_GUEST_TIME``; see
    docs/guest.md): skipped unless a command is given."""
    command = os.environ.get("PEVB_GUEST_COMMAND", "")
    if not command:
        pytest.skip("PEVB_GUEST_COMMAND names no command to run in the guest")
    _need_guest()
    runner.run_and_check(
        "test_guest_command",
        sim=sim,
        profile=profile,
        module=MODULE,
        extra_env={
            k: os.environ[k]
            for k in (
                "PEVB_GUEST_COMMAND",
                "PEVB_GUEST_TIME",
                "PEVB_GUEST_WALL_S",
                "PEVB_GUEST_GPU",
            )
            if k in os.environ
        },
        repro="make test TESTS='tests/sim/test_sim_guest.py -k guest_command' "
        f"PEVB_GUEST_COMMAND='{command}'",
    )


def test_guest_shared_time_repeats(sim: str, profile: str) -> None:
    """Under shared time a guest run repeats exactly: two runs of the driver test write
    the same journal (every access, interrupt and grant at the same simulated time)."""
    _need_guest()
    test = "test_guest_driver_shared_time"
    journals = []
    for _ in range(2):
        results = runner.run_as_make_test(test, sim=sim, profile=profile, module=MODULE)
        failed = runner.failures(results)
        assert not failed, (
            f"{failed} failed: {runner.failure_messages(results)}\n"
            f"log: {results.parent / 'sim.log'}\n"
            f"reproduce: make test TESTS='tests/sim/test_sim_guest.py -k shared_time'"
        )
        journals.append((results.parent / "guest-journal.log").read_text().splitlines())
    first, second = journals
    assert len(first) > 100, f"a journal of {len(first)} lines: too short to prove anything"
    for i, (a, b) in enumerate(zip(first, second, strict=False)):
        assert a == b, f"the runs part at journal line {i + 1}: {a!r} / {b!r}"
    assert len(first) == len(second), f"{len(first)} and {len(second)} lines"


GUEST_SEEDS = parse_seeds(os.environ.get("PEVB_GUEST_SEEDS", "1-4"))


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["none", "ur", "drop"])
@pytest.mark.parametrize("time", ["free", "shared"])
@pytest.mark.parametrize("seed", GUEST_SEEDS)
def test_guest_random(seed: int, time: str, fault: str, sim: str, profile: str) -> None:
    """The longer guest regression (``make guest-regress``, ``GUEST_SEEDS``): 100 random
    transfers through the C driver per seed, free-running and under shared time, clean
    and with faults on the card's reads (UR; a completion timeout)."""
    _need_guest()
    env = {"PEVB_GUEST_SEED": str(seed), "PEVB_GUEST_CASES": "100", "PEVB_GUEST_TIME": time}
    if fault != "none":
        env["PEVB_GUEST_FAULT"] = fault
    runner.run_and_check(
        "test_guest_random_transfers",
        sim=sim,
        profile=profile,
        module=MODULE,
        extra_env=env,
        repro=f"make guest-regress GUEST_SEEDS={seed} (the {time} case, faults: {fault})",
    )
