"""The layout's rules, checked on the imports of every module (read from the source):
the models import no simulator, the environment does not depend on the debug tools, and
no module imports a cocotb test module. And the launcher finds cocotb tests by itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.sim import plan

ROOT = Path(__file__).resolve().parents[2]


def imports(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports (relative imports resolved)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def modules(*folders: str) -> list[Path]:
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py"))


@pytest.mark.parametrize("package", ["driver_model", "cuda_model"])
def test_models_are_plain_python(package: str):
    for path in modules(package):
        bad = {m for m in imports(path) if m.split(".")[0] in ("cocotb", "cocotbext", "tb")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_environment_does_not_depend_on_debug_tools():
    for path in modules("tb/env"):
        bad = {m for m in imports(path) if m.startswith(("tb.debug", "tb.tests", "tb.regress"))}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_no_module_imports_a_cocotb_test_module():
    for path in modules("tb", "tests"):
        bad = {m for m in imports(path) if m.startswith("tb.tests.")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_imports_resolve_relative_names():
    # the checks above must see through relative imports
    names = imports(ROOT / "tb" / "env" / "harness.py")
    assert {"tb.env.system.TB", "tb.env.platform.TbPlatform"} <= names


def test_launcher_finds_cocotb_tests_from_source(tmp_path: Path):
    mod = tmp_path / "test_example.py"
    mod.write_text(
        "import cocotb\n"
        "@cocotb.test(timeout_time=1, timeout_unit='ms')\n"
        "async def test_a(dut): ...\n"
        "@cocotb.test\n"
        "async def test_b(dut): ...\n"
        "async def helper(dut): ...\n"
        "@cocotb.test(expect_fail=True)\n"
        "async def test_c(dut): ...\n"
    )
    assert plan.cocotb_tests(mod) == ["test_a", "test_b", "test_c"]


def test_launcher_covers_every_cocotb_test_once_per_configuration():
    found = plan.cocotb_modules()
    cases = plan.cases("icarus", "picoevb")
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "duplicate pytest items"
    main = {(c.module, c.test) for c in cases if (c.sim, c.profile) == ("icarus", "picoevb")}
    for module, tests in found.items():
        if module in plan.OWN_LAUNCHER:
            continue
        for test in tests:
            assert (module, test) in main, f"{module}.{test} is not run"
    # with Verilator selected, its subset is not run a second time
    on_verilator = plan.cases("verilator", "picoevb")
    assert len({c.id for c in on_verilator}) == len(on_verilator)
    assert all("verilator" in c.marks for c in on_verilator if c.sim == "verilator")


def test_plan_rejects_a_test_that_does_not_exist(monkeypatch: pytest.MonkeyPatch):
    bad = plan.Subset("bogus", tests={"test_engine": ["test_no_such_test"]}, sim="verilator")
    monkeypatch.setattr(plan, "SUBSETS", [*plan.SUBSETS, bad])
    with pytest.raises(ValueError, match="test_no_such_test"):
        plan.cases("icarus", "picoevb")


def test_the_installed_package_imports_itself_relatively():
    # installed, tb/ is the package gpudirect_cosim (a user's project keeps its own tb):
    # its modules (not the project's own cocotb tests) reach each other relatively
    for path in modules("tb"):
        if "tests" in path.relative_to(ROOT).parts:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        bad = [
            n.lineno
            for n in ast.walk(tree)
            if (isinstance(n, ast.ImportFrom) and not n.level and (n.module or "") == "tb")
            or (
                isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").startswith("tb.")
            )
            or (isinstance(n, ast.Import) and any(a.name.split(".")[0] == "tb" for a in n.names))
        ]
        assert not bad, f"{path.relative_to(ROOT)} imports tb by name on lines {bad}"
