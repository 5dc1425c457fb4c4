"""The project used from another one: the package installed (a wheel built from this
checkout, as ``pip install`` makes it) into a directory of its own, and a user's project
elsewhere, with its own ``tb`` package, its own RTL written against the Vivado XDMA IP
(``tb/verilog/byod_top.v``) and its own cocotb test, builds and runs its design against
the GPU model through ``gpudirect_cosim.flow.runner``. The engine's Verilog comes from the
installed package, the build lands under the user's working directory, and nothing is
written into the installed package."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tb.flow import runner

REPO = runner.ROOT
# what a wheel is built from (the rest of the checkout stays out of the copy)
PACKAGE_FILES = ("pyproject.toml", "README.md", "tb", "hdl", "driver_model", "cuda_model")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "sim_build", "build", "*.egg-info")

USER_TB = '''"""The user's own testbench package (named tb, as in many projects)."""
USER_TB = True
'''

USER_TEST = '''"""The user's cocotb test of their design, on the installed package."""
import cocotb

import tb
from driver_model.desc import Segment
from gpudirect_cosim.env.harness import check_ok, pattern, setup


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_roundtrip(dut):
    assert tb.USER_TB, "the simulation imported another tb than the user's"
    h = await setup(dut, hip=dut.xdma_0_i.hip)
    if h.tb.model == "transactors" and cocotb.SIM_NAME.lower().startswith("icarus"):
        assert int(dut.xdma_0_i.hip.clk_run.value) == 1, "the user clock is not the HDL's"
    src, dst = h.tb.alloc_host(4096), h.tb.alloc_host(4096)
    data = pattern(3000, 5)
    src[0:3000] = data
    sa, da = src.get_absolute_address(0), dst.get_absolute_address(0)
    check_ok(await h.run(h.h2c, [Segment(sa, 0x100, 3000)]), 1, "H2C")
    assert await h.tb.user_read32(0x4) == sum(data) & 0xFFFFFFFF, "the design's byte sum"
    check_ok(await h.run(h.c2h, [Segment(0x100, da, 3000)]), 1, "C2H")
    assert bytes(dst[0:3000]) == data
'''

USER_RUN = """import json, sys
from pathlib import Path

import tb
import gpudirect_cosim
from gpudirect_cosim.flow import runner

design = [Path("rtl/byod_top.v")]
results = runner.run(
    "test_roundtrip", module="tb.test_user", toplevel="byod_top", user_sources=design
)
print(json.dumps({
    "user_tb": tb.__file__,
    "package": gpudirect_cosim.__file__,
    "sources": [str(p) for p in runner.hdl_sources("byod_top", design)],
    "build_root": str(runner.BUILD_ROOT),
    "results": str(results),
    "failures": runner.failures(results),
    "messages": runner.failure_messages(results),
}))
"""


def _files(root: Path) -> set[str]:
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_installed_package_in_a_user_project(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in PACKAGE_FILES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=IGNORE)
        else:
            shutil.copy2(path, src / name)
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site)]
    proc = subprocess.run([*pip, str(src)], capture_output=True, text=True, check=False)
    if proc.returncode != 0 and "Could not find a version" in proc.stderr:
        pytest.skip(f"no build backend to be had: {proc.stderr.strip()[-300:]}")
    assert proc.returncode == 0, proc.stderr
    pkg = site / "gpudirect_cosim"
    shipped = _files(pkg)
    assert {"hdl/pevb_regs.vh", "hdl/pevb_xdma_ip.v", "hdl/dropin/xdma_0.v"} <= shipped
    assert not any(f.startswith("tests/") for f in shipped), "the project's tests shipped"
    assert not (site / "tb").exists(), "the package installs a tb of its own"

    user = tmp_path / "user"
    (user / "tb").mkdir(parents=True)
    (user / "rtl").mkdir()
    (user / "tb" / "__init__.py").write_text(USER_TB)
    (user / "tb" / "test_user.py").write_text(USER_TEST)
    (user / "run.py").write_text(USER_RUN)
    shutil.copy2(REPO / "tb" / "verilog" / "byod_top.v", user / "rtl" / "byod_top.v")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PEVB_", "COCOTB"))}
    env["PYTHONPATH"] = str(site)
    before = _files(site)

    # the Makefile flow's file list, from the installed package
    proc = subprocess.run(
        [sys.executable, "-m", "gpudirect_cosim.flow.runner", "--sources"],
        cwd=user,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    listed = [Path(line) for line in proc.stdout.split()]
    shipped = (pkg / "hdl", pkg / "verilog")  # the engine, and the transactors
    assert listed and all(p.is_file() and _under(p, shipped) for p in listed)
    assert pkg / "hdl" / "dropin" / "xdma_0.v" in listed

    proc = subprocess.run(
        [sys.executable, "run.py"],
        cwd=user,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not out["failures"], f"{out['failures']}: {out['messages']} ({out['results']})"
    assert Path(out["user_tb"]) == user / "tb" / "__init__.py"
    assert Path(out["package"]) == pkg / "__init__.py", "not the installed package"
    engine = [Path(s) for s in out["sources"] if Path(s).name != "byod_top.v"]
    assert engine and all(_under(s, (pkg / "hdl", pkg / "verilog")) for s in engine)
    assert Path(out["build_root"]) == user / "sim_build"
    assert Path(out["results"]).is_relative_to(user / "sim_build")
    assert _files(site) == before, "the run wrote into the installed package"


def _under(path: Path, folders: tuple[Path, ...]) -> bool:
    return any(path.is_relative_to(f) for f in folders)
