"""The layout's rules, checked on the imports of every module (read from the source):
the models import no simulator, the environment does not depend on the debug tools, and
no module imports a cocotb test module. And the launcher finds cocotb tests by itself."""

from __future__ import annotations

import ast
import re
import sys
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
            names = {f"{mod}.{a.name}" for a in node.names}
            # ``from . import sub`` of a submodule imports the submodule, not the package
            # (which is already being imported)
            subs = {n for n in names if _is_module(n)}
            if not node.module and node.level and subs == names:
                out.update(names)
                continue
            out.add(mod)
            out.update(names)
    return out


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


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


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_cycles(package: str) -> list[list[str]]:
    """Every import circle among the modules of ``package`` (imports inside functions
    count: they still tie the two modules together), each once, as a closed path."""
    names = {module_name(p): p for p in modules(package)}
    edges = {m: sorted(n for n in imports(p) if n in names and n != m) for m, p in names.items()}
    cycles: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(path: list[str]) -> None:
        for nxt in edges[path[-1]]:
            if nxt == path[0]:
                if (key := frozenset(path)) not in seen:
                    seen.add(key)
                    cycles.append([*path, nxt])
            elif nxt not in path and nxt > path[0]:  # each circle from its smallest module
                walk([*path, nxt])

    for m in sorted(names):
        walk([m])
    return cycles


@pytest.mark.parametrize("package", ["driver_model", "cuda_model", "tb", "tests"])
def test_no_import_circle_inside_a_package(package: str):
    cycles = import_cycles(package)
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_import_circles_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The circle check sees a circle made through a function-level import."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import x\n")
    (pkg / "b.py").write_text("x = 1\ndef f():\n    from . import a\n")
    (pkg / "c.py").write_text("from . import a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert import_cycles("pkg") == [["pkg.a", "pkg.b", "pkg.a"]]


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
    bad = plan.Subset("bogus", tests={"cocotb_engine": ["test_no_such_test"]}, sim="verilator")
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


def test_test_file_names_are_unique_and_say_their_layer():
    layers = {"tb/tests": "cocotb_", "tests/unit": "test_unit_", "tests/sim": "test_sim_"}
    seen: dict[str, str] = {}
    for folder, prefix in layers.items():
        for path in sorted((ROOT / folder).glob("*.py")):
            if folder == "tb/tests":
                is_test = "@cocotb.test" in path.read_text()
            else:
                is_test = path.name.startswith("test_")
            if not is_test:
                continue
            assert path.name.startswith(prefix), f"{folder}/{path.name}: name it {prefix}*.py"
            assert path.name not in seen, f"{path.name} in {seen.get(path.name)} and {folder}"
            seen[path.name] = folder
    assert len(seen) > 40


def test_no_production_function_is_named_like_a_test():
    for path in modules("tb", "driver_model", "cuda_model"):
        if "tests" in path.relative_to(ROOT).parts:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        bad = [
            n.name
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")
        ]
        assert not bad, f"{path.relative_to(ROOT)}: {bad} (pytest would collect them as tests)"


def test_every_package_of_tb_is_installed():
    """pyproject.toml lists the installed packages by hand: a new subpackage of tb/ (not
    tb/tests) must be among them, or the installed gpudirect_cosim lacks it."""
    text = (ROOT / "pyproject.toml").read_text()
    for init in sorted((ROOT / "tb").rglob("__init__.py")):
        parts = init.parent.relative_to(ROOT / "tb").parts
        if parts[:1] == ("tests",):
            continue
        name = ".".join(("gpudirect_cosim", *parts))
        assert f'"{name}"' in text, f"{name} is not in pyproject.toml's packages"


def test_each_hdl_file_holds_one_module_named_after_it():
    """One module per file, named as the file (the docs' module tree, waves and the
    hierarchy paths in tb/ rely on it); a channel's body is its own module, instantiated
    once per channel, not written inline in the engine."""
    files = sorted((ROOT / "hdl").rglob("*.v"))
    assert files
    for f in files:
        modules = re.findall(r"^module\s+`?(\w+)", f.read_text(), flags=re.M)
        # (the drop-in's name is a define, PEVB_XDMA_MODULE, xdma_0 unless told)
        modules = ["xdma_0" if m == "PEVB_XDMA_MODULE" else m for m in modules]
        assert modules == [f.stem], f"{f.relative_to(ROOT)}: modules {modules}"
    engine = (ROOT / "hdl" / "pevb_xdma.v").read_text()
    instances = re.findall(r"^\s*(pevb_\w+)\s+#?\s*\(?", engine, flags=re.M)
    assert {"pevb_h2c_chan", "pevb_c2h_chan"} <= set(instances)
    assert "pevb_desc_eng" not in instances, "channel bodies belong in pevb_h2c_chan/pevb_c2h_chan"
