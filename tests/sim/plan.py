"""What the simulation suite runs, declared in one place.

Every ``@cocotb.test`` of every cocotb module in ``tb/tests`` runs on the selected
simulator and profile (``--sim``, ``--profile``), found from the module's source: adding
a test to a module needs no second edit. Declared here are only the exceptions: the
modules that run once per variant (an environment, or a build with other Verilog
parameters), the subsets that also run on other
configurations (Verilator, gen3x8, the other stream widths), the modules launched by a
pytest file of their own, and the random regression's default seeds.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tb.flow import runner
from tb.models.choice import BEAT_MODEL, MODEL_ENV, TRANSACTOR_MODEL
from tb.regress.resets import RESET_BUILD

TB_TESTS = runner.ROOT / "tb" / "tests"
PACKAGE = "tb.tests"

# modules whose tests need per-run settings: their own pytest file launches them
OWN_LAUNCHER = {
    "cocotb_regress": "tests/sim/test_sim_regress.py",
    "cocotb_farm": "tests/sim/test_sim_farm.py",
    "cocotb_guest": "tests/sim/test_sim_guest.py",
    "cocotb_guest_dropin": "tests/sim/test_sim_guest.py",
}
# single tests launched by a pytest file of their own (their modules' other tests run here)
OWN_LAUNCHER_TESTS = {("cocotb_resets", "test_random_resets"): "tests/sim/test_sim_regress.py"}

# module -> {variant: extra environment}: the module runs once per variant
VARIANTS: dict[str, dict[str, dict[str, str]]] = {
    # the transactor model's own machinery: only on its builds
    "cocotb_xact": {"transactors": {MODEL_ENV: TRANSACTOR_MODEL}},
    "cocotb_gpu_peer": {
        "switch": {"PEVB_TOPOLOGY": "switch"},
        "root_ports": {"PEVB_TOPOLOGY": "root_ports"},
    },
    # the INTx wires collapsed by the switch, or taken by a root port
    "cocotb_intx": {
        "switch": {"PEVB_TOPOLOGY": "switch"},
        "root_ports": {"PEVB_TOPOLOGY": "root_ports"},
    },
}

# module -> {variant: Verilog parameters}: the module runs once per variant, each on a build
# of its own (the profile's parameters with these on top)
BUILDS: dict[str, dict[str, dict[str, object]]] = {
    "cocotb_channels": {
        "2x2": {"H2C_CHANNELS": 2, "C2H_CHANNELS": 2, "RAM_SIZE": 128 << 10, "MSIX": 1},
        "4x4": {
            "H2C_CHANNELS": 4,
            "C2H_CHANNELS": 4,
            "RAM_SIZE": 128 << 10,
            "MSIX": 1,
            "DESC_DEPTH": 32,
            "DESC_FETCHES": 4,
        },
    },
    # channel 1 of each direction streams, channel 0 stays on the card RAM
    "cocotb_stream": {
        "stream": {
            "H2C_CHANNELS": 2,
            "C2H_CHANNELS": 2,
            "H2C_STREAM": 2,
            "C2H_STREAM": 2,
            "RAM_SIZE": 128 << 10,
        },
    },
    # the drop-in: two channels each way, channel 1 streams; four user interrupts; MSI-X;
    # the AXI4-Lite slave to the DMA registers; dma_bridge_resetn; configuration management
    # and configuration extend with both user ranges; the IDs from the PCIe ID ports
    "cocotb_dropin": {
        "2x2": {
            "CFG_MGMT": 1,
            "CFG_EXT": 1,
            "CFG_EXT_LEGACY": 1,
            "CFG_EXT_EXTENDED": 1,
            "PCIE_ID_IF": 1,
            "H2C_CHANNELS": 2,
            "C2H_CHANNELS": 2,
            "H2C_STREAM": 2,
            "C2H_STREAM": 2,
            "USER_IRQS": 4,
            "MSIX": 1,
            "AXIL_SLAVE": 1,
            "SOFT_RESET_EN": 1,
        },
    },
    # the reset regression's drop-in (tb/regress/resets.py)
    "cocotb_resets": {"resets": dict(RESET_BUILD)},
    # descriptor bypass on every channel of the drop-in: two each way, channel 1 streams
    "cocotb_bypass": {
        "2x2": {
            "H2C_CHANNELS": 2,
            "C2H_CHANNELS": 2,
            "H2C_STREAM": 2,
            "C2H_STREAM": 2,
            "H2C_BYPASS": 3,
            "C2H_BYPASS": 3,
        },
    },
    # the frame store of our own: memory-mapped, the bypass BAR into its block RAM, the
    # AXI4-Lite slave to run the channel
    "cocotb_mm": {"mm": {"AXIB": 1, "AXIB_BAR_ADDR_WIDTH": 16, "AXIL_SLAVE": 1}},
    # the PCIe-to-DMA bypass master: a 64 KiB BAR2 at AXI address 0x40000
    "cocotb_axib": {
        "axib": {"AXIB": 1, "AXIB_BAR_ADDR_WIDTH": 16, "AXIB_AXI_BASE": 0x40000},
        # the 64-bit BARs (BAR0, 2, 4), prefetchable ones, the MSI-X table in the DMA BAR
        "bars64": {
            "AXIB": 1,
            "AXIB_BAR_ADDR_WIDTH": 16,
            "AXIB_AXI_BASE": 0x40000,
            "AXIL_MASTER_64BIT": 1,
            "PCIE_64BIT": 1,
            "PCIE_PREFETCHABLE": 1,
            "AXIB_64BIT": 1,
            "AXIB_PREFETCHABLE": 1,
            "MSIX": 1,
        },
        # no AXI4-Lite master (Vivado's default): the DMA BAR is BAR0/1, 64-bit, and the
        # bypass BAR BAR2
        "no_axil": {
            "AXIB": 1,
            "AXIB_BAR_ADDR_WIDTH": 16,
            "AXIB_AXI_BASE": 0x40000,
            "AXIL_MASTER": 0,
            "PCIE_64BIT": 1,
        },
    },
    # the frame grabber of our own: one stream channel each way, C2H 0 bypassed, the
    # AXI4-Lite slave to the DMA registers
    "cocotb_grabber": {
        "grabber": {"H2C_STREAM": 1, "C2H_STREAM": 1, "C2H_BYPASS": 1, "AXIL_SLAVE": 1}
    },
    # a design configured as no profile is (tb/verilog/ipconf_top.v), once per configuration
    "cocotb_ipconf": {
        "renamed": {"PEVB_XDMA_MODULE": "xdma_ip"},
        "x2": {"LANES": 2},
        "7series": {"7SERIES": 1},
    },
}

# module -> toplevel, for the modules whose toplevel is not the card; and the Verilog
# files of the user designs among them (the engine and the drop-in come with them)
TOPLEVELS: dict[str, str] = {
    "cocotb_dropin": runner.DROPIN_TOPLEVEL,
    "cocotb_bypass": runner.DROPIN_TOPLEVEL,
    "cocotb_axib": runner.DROPIN_TOPLEVEL,
    "cocotb_resets": runner.DROPIN_TOPLEVEL,
    "cocotb_byod": "byod_top",
    "cocotb_grabber": "grabber_top",
    "cocotb_mm": "mm_top",
    "cocotb_ipconf": "ipconf_top",
}
USER_SOURCES: dict[str, tuple[Path, ...]] = {
    "ipconf_top": (runner.TB_HDL_DIR / "ipconf_top.v",),
    "byod_top": (runner.TB_HDL_DIR / "byod_top.v",),
    "grabber_top": (runner.TB_HDL_DIR / "grabber_top.v",),
    "mm_top": (runner.TB_HDL_DIR / "mm_top.v", runner.TB_HDL_DIR / "mm_axi_arb.v"),
}

_ENGINE_SMOKE = [
    "test_identifiers",
    "test_stop_mid_chain",
    "test_unmapped_read",
    "test_msi_one_per_completion",
]
_ENGINE_WIDTHS = [
    "test_identifiers",
    "test_lengths_and_offsets",
    "test_rcb_split_completions",
    "test_concurrent_h2c_c2h",
    "test_unmapped_read",
]

# the bypass master's lane arithmetic at the other widths
_AXIB_WIDTHS = ["test_every_size_and_offset", "test_slverr_and_decerr"]


@dataclass(frozen=True)
class Subset:
    """Tests that also run on another simulator and/or profile."""

    name: str
    tests: dict[str, list[str]]
    sim: str | None = None  # None: the selected one
    profile: str | None = None
    # the model (runner.run's ``model``); None: the default (the transactors); "beats": a
    # build without the transactors, whose testbench runs the beat-level streams
    model: str | None = None


# a build without the transactors, as a plain cocotb build is (its testbench runs the
# beat-level streams), on what the default transactor model does otherwise: every stream
# under load and back-pressure, stalls, resets, the drop-in's hip and a user's design
_PLAIN = {
    "cocotb_engine": [
        *_ENGINE_SMOKE,
        "test_idle_backpressure",
        "test_concurrent_h2c_c2h",
        "test_performance_counters",
    ],
    "cocotb_driver": ["test_h2c2h_four_combinations", "test_cudafree_during_transfer"],
    "cocotb_faults": [
        "test_completion_faults",
        "test_long_backpressure_and_credit_starvation",
        "test_split_reorder_and_latency",
    ],
    "cocotb_recovery": [
        "test_hot_reset_mid_transfer",
        "test_link_down_mid_transfer",
        "test_hot_reset_mid_c2h_packet",
        "test_link_down_mid_c2h_packet",
    ],
    "cocotb_models": ["test_models_build_what_they_say"],
    "cocotb_dropin": ["test_axiram_h2c_c2h", "test_cfg_mgmt"],
    "cocotb_byod": ["test_user_memory_behind_the_axi_master"],
    "cocotb_intx": ["test_intx_level_disable_and_status", "test_driver_on_intx_moves_data"],
}

SUBSETS = [
    Subset("plain", model=BEAT_MODEL, tests=_PLAIN),
    Subset(
        "plain-verilator",
        sim="verilator",
        profile="gen3x8",
        model=BEAT_MODEL,
        tests={
            "cocotb_engine": [*_ENGINE_SMOKE, "test_concurrent_h2c_c2h"],
            "cocotb_dropin": ["test_axiram_h2c_c2h"],
        },
    ),
    Subset(
        "verilator",
        sim="verilator",
        tests={
            "cocotb_engine": _ENGINE_SMOKE,
            "cocotb_driver": ["test_h2c2h_four_combinations", "test_ioctl_errors"],
            "cocotb_faults": [
                "test_checker_sees_every_link",
                "test_completion_faults",
                "test_split_reorder_and_latency",
            ],
            # the hard-IP model drives the drop-in's hard-IP port through the hierarchy
            "cocotb_dropin": [
                "test_axiram_h2c_c2h",
                "test_cfg_mgmt",
                "test_cfg_ext",
                "test_legacy_interrupts",
                # a reset and register writes racing the engine, on both simulators
                "test_dma_bridge_reset_mid_transfer",
                "test_status_write_keeps_events",
            ],
            # the bypass port's ready/load rule, driven and read on the falling edge
            "cocotb_bypass": ["test_bypass_ready_and_the_extra_load"],
            # cocotbext-axi's models on the user side, clocked by the hard-IP port's clock
            # (a copy of it is a cycle late on Verilator: tb/env/streams.py)
            "cocotb_stream": ["test_h2c_stream_packets"],
            "cocotb_axib": ["test_slverr_and_decerr"],
            # the card's mailbox (its interrupt handshake) and the GPU's requests
            "cocotb_gpu_requester": ["test_the_card_mailbox", "test_gpu_started_dma"],
            # the legacy interrupt's level and its acknowledges
            "cocotb_intx": ["test_intx_level_disable_and_status", "test_driver_on_intx_moves_data"],
        },
    ),
    Subset(
        "gen3x8",
        profile="gen3x8",
        tests={
            "cocotb_engine": [
                *_ENGINE_SMOKE,
                "test_lengths_and_offsets",
                "test_concurrent_h2c_c2h",
                "test_performance_counters",
            ],
            "cocotb_driver": ["test_h2c2h_four_combinations", "test_cudafree_during_transfer"],
            "cocotb_faults": ["test_completion_faults", "test_split_reorder_and_latency"],
            # the GPU's requests at MPS 256 and a wider datapath
            "cocotb_gpu_requester": [
                "test_copy_engine_to_and_from_pinned_host_memory",
                "test_gpu_started_dma",
            ],
        },
    ),
    # the 128-bit and 512-bit builds of the engine's datapath
    Subset(
        "gen3x4",
        profile="gen3x4",
        tests={"cocotb_engine": _ENGINE_WIDTHS, "cocotb_axib": _AXIB_WIDTHS},
    ),
    Subset(
        "gen3x16",
        profile="gen3x16",
        tests={"cocotb_engine": _ENGINE_WIDTHS, "cocotb_axib": _AXIB_WIDTHS},
    ),
]

# the random regression's default runs, (simulator, profile, seed); the coverage of these
# together must meet the goal
REGRESS_DEFAULT = [
    ("icarus", "picoevb", 1),
    ("icarus", "picoevb", 2),
    ("verilator", "picoevb", 3),
    ("verilator", "gen3x8", 4),
]
DRIVER_REGRESS_DEFAULT = [("verilator", "picoevb", 1)]
# the reset regression's: one seed holds every (interruption, target) pair
RESET_REGRESS_DEFAULT = [("icarus", "picoevb", 1)]
COVERAGE_DIR = runner.BUILD_ROOT / "coverage" / "session"


def regress_run_names() -> set[str]:
    """The names the default regression runs record in their coverage."""
    return (
        {f"{s}-{p}-seed{n}" for s, p, n in REGRESS_DEFAULT}
        | {f"driver-{s}-{p}-seed{n}" for s, p, n in DRIVER_REGRESS_DEFAULT}
        | {f"resets-{s}-{p}-seed{n}" for s, p, n in RESET_REGRESS_DEFAULT}
    )


def _is_cocotb_test(decorator: ast.expr) -> bool:
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "test"
        and isinstance(node.value, ast.Name)
        and node.value.id == "cocotb"
    )


def cocotb_tests(path: Path) -> list[str]:
    """The ``@cocotb.test`` functions of a cocotb module, in source order (read from its
    source, so the module is not imported)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)
        and any(_is_cocotb_test(d) for d in node.decorator_list)
    ]


def cocotb_modules() -> dict[str, list[str]]:
    """Every cocotb module of ``tb/tests`` (by name) and its tests."""
    return {p.stem: cocotb_tests(p) for p in sorted(TB_TESTS.glob("cocotb_*.py"))}


@dataclass(frozen=True)
class Case:
    """One cocotb test on one configuration: a pytest item."""

    module: str
    test: str
    sim: str
    profile: str
    variant: str = ""
    env: tuple[tuple[str, str], ...] = ()
    marks: tuple[str, ...] = ()
    overrides: tuple[tuple[str, object], ...] = ()
    toplevel: str = runner.TOPLEVEL
    model: str | None = None

    @property
    def id(self) -> str:
        short = self.module.removeprefix("cocotb_")
        tail = f"-{self.variant}" if self.variant else ""
        return f"{short}.{self.test}-{self.sim}-{self.profile}{tail}"

    @property
    def module_path(self) -> str:
        return f"{PACKAGE}.{self.module}"

    def run_settings(self) -> dict:
        """The keywords of :func:`tb.flow.runner.run` for this configuration (all but the
        test's name): simulator, profile, module, environment, build and sources."""
        return {
            "sim": self.sim,
            "profile": self.profile,
            "module": self.module_path,
            "extra_env": dict(self.env),
            "overrides": dict(self.overrides) or None,
            "toplevel": self.toplevel,
            "user_sources": USER_SOURCES.get(self.toplevel, ()),
            "model": self.model,
        }


def cases(sim: str, profile: str) -> list[Case]:
    """The pytest items of the cocotb modules for the selected simulator and profile: all
    tests there, and each subset on its own configuration unless that is the selected one
    (``make test XDMA=...`` reaches the builds around the drop-in in the runner's build
    configuration, :meth:`tb.config.BuildConfig.from_make`). Raises ``ValueError`` when
    the plan names a module or test that does not exist."""
    modules = cocotb_modules()
    for m in [*VARIANTS, *OWN_LAUNCHER, *BUILDS, *TOPLEVELS]:
        if m not in modules:
            raise ValueError(f"the plan names {m!r}, not a module of {TB_TESTS}")
    configs: list[tuple[str, str, dict[str, list[str]] | None, str | None]] = [
        (sim, profile, None, None)
    ]
    for s in SUBSETS:
        for m, tests in s.tests.items():
            unknown = [t for t in tests if t not in modules.get(m, [])]
            if m not in modules or unknown:
                raise ValueError(f"subset {s.name}: {m} has no {unknown or 'module'}")
        ssim, sprof = s.sim or sim, s.profile or profile
        if (ssim, sprof) != (sim, profile) or s.model:
            configs.append((ssim, sprof, s.tests, s.model))
    out: list[Case] = []
    for csim, cprof, only, model in configs:
        # every run on Verilator carries the mark (-m "not verilator" leaves them out)
        tags = ("verilator",) if csim == "verilator" else ()
        for module, tests in modules.items():
            if module in OWN_LAUNCHER:
                continue
            selected = tests if only is None else only.get(module, [])
            selected = [t for t in selected if (module, t) not in OWN_LAUNCHER_TESTS]
            variants = VARIANTS.get(module, {"": {}})
            builds = BUILDS.get(module, {"": {}})
            for test in selected:
                for variant, env in variants.items():
                    for build, params in builds.items():
                        label = "plain" if model == BEAT_MODEL else model
                        name = "-".join(v for v in (variant, build, label) if v)
                        top = TOPLEVELS.get(module, runner.TOPLEVEL)
                        out.append(
                            Case(
                                module,
                                test,
                                csim,
                                cprof,
                                name,
                                tuple(env.items()),
                                tags,
                                tuple(params.items()),
                                top,
                                model,
                            )
                        )
    return out
