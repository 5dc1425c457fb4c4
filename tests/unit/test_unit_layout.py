"""The layout's rules, checked on the imports of every module (read from the source):
the models import no simulator, the environment does not depend on the debug tools, and
no module imports a cocotb test module. And the launcher finds cocotb tests by itself."""

from __future__ import annotations

import ast
import re
import sys
from fnmatch import fnmatch
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
            if (module, test) in plan.OWN_LAUNCHER_TESTS:
                assert (module, test) not in main, f"{module}.{test} runs twice"
                continue
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


def test_the_compiled_data_paths_sources_are_installed():
    """The library is built where it is used, from the sources tb/dp lists: each must
    match the installed package's data, or an installed compiled path cannot build."""
    from tb.dp import SOURCES

    text = (ROOT / "pyproject.toml").read_text()
    line = re.search(r'^"gpudirect_cosim\.dp" = \[(.*)\]$', text, re.M)
    assert line, "pyproject.toml has no package data for gpudirect_cosim.dp"
    globs = re.findall(r'"([^"]+)"', line.group(1))
    for source in SOURCES:
        assert any(fnmatch(source.name, g) for g in globs), (
            f"tb/dp/{source.name} is not in the installed package's data ({globs})"
        )


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


# --- the rooms' rules ----------------------------------------------------------------------

HDL_LINE_LIMIT = 1000
# files over the limit (none: the drop-in's top takes the IP's port groups from the
# engine's include files). The list only shrinks: a file here that is no longer over the
# limit fails the test.
HDL_LONG_FILES: set[str] = set()
# what only a simulation does: dumps, delays, random numbers, file and console output,
# force/release (the elaboration checks' $error and $finish are allowed)
_SIM_ONLY = re.compile(
    r"\$(dump\w*|random|urandom\w*|display|write|monitor|strobe|fopen|fwrite|fdisplay|"
    r"readmem\w*|time|realtime)\b|^\s*#\s*\d|\bforce\b|\brelease\b",
    re.M,
)


def hdl_files(*folders: str) -> list[Path]:
    return sorted(
        p for f in folders for p in (ROOT / f).rglob("*") if p.suffix in (".v", ".sv", ".vh")
    )


def _code(path: Path) -> str:
    """The Verilog without its comments."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def test_hdl_holds_the_product_rtl_and_the_drop_in_only():
    """A reader of hdl/ finds what goes into a bitstream, and the drop-in: no
    simulation-only construct in hdl/*.v, no module of the testbench's Verilog
    (tb/verilog) instantiated there, and in hdl/dropin only the drop-in's top and the
    hard-IP port it holds."""
    tb_modules = {p.stem for p in hdl_files("tb/verilog")}
    assert {"pevb_xact_source", "pevb_card_xact", "pevb_annot", "byod_top"} <= tb_modules
    for path in sorted(p for p in (ROOT / "hdl").glob("*.v*") if p.suffix in (".v", ".vh")):
        code = _code(path)
        found = _SIM_ONLY.search(code)
        assert not found, f"{path.relative_to(ROOT)}: simulation-only {found.group(0)!r}"
        used = set(re.findall(r"^\s*(\w+)\s+(?:#\s*\(|\w+\s*\()", code, re.M))
        assert not used & tb_modules, f"{path.relative_to(ROOT)} instantiates {used & tb_modules}"
    dropin = sorted(p.name for p in (ROOT / "hdl" / "dropin").iterdir())
    assert dropin == ["pevb_hip_port.v", "xdma_0.v"], dropin


def test_hdl_rule_sees_a_simulation_only_construct(tmp_path: Path):
    bad = tmp_path / "bad.v"
    bad.write_text("module bad; // $display in a comment is fine\ninitial $dumpvars;\nendmodule\n")
    assert _SIM_ONLY.search(_code(bad)).group(0) == "$dumpvars"
    good = tmp_path / "good.v"
    good.write_text('module good;\n/* #5 $random */\ninitial if (0) $error("x");\nendmodule\n')
    assert not _SIM_ONLY.search(_code(good))


def test_no_hdl_file_over_the_line_limit():
    over = {
        p.relative_to(ROOT).as_posix()
        for p in hdl_files("hdl", "tb/verilog")
        if len(p.read_text().splitlines()) > HDL_LINE_LIMIT
    }
    assert over <= HDL_LONG_FILES, f"over {HDL_LINE_LIMIT} lines: {sorted(over - HDL_LONG_FILES)}"
    assert HDL_LONG_FILES <= over, f"no longer long, take off the list: {HDL_LONG_FILES - over}"


def private_imports(package: str) -> list[str]:
    """``module imports name`` for each private name (``_x``) a module of ``package``
    imports from another module of the project."""
    out = []
    for path in modules(package.replace(".", "/")):
        me = module_name(path)
        for name in sorted(imports(path)):
            last = name.rsplit(".", 1)[-1]
            owner = name.rsplit(".", 1)[0]
            if (
                last.startswith("_")
                and not last.startswith("__")
                and owner.split(".")[0] in ("tb", "driver_model", "cuda_model")
                and owner != me
                and _is_module(owner)
            ):
                out.append(f"{me} imports {name}")
    return out


def test_no_private_import_across_modules():
    """The simulation models (and the rest of the testbench) reach each other through
    public names only."""
    bad = [line for line in private_imports("tb") if ".tests." not in line.split(" ")[0]]
    assert not bad, bad


def test_private_import_rule_sees_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pkg = tmp_path / "tb" / "models"
    pkg.mkdir(parents=True)
    (tmp_path / "tb" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("_X = 1\nY = 2\n")
    (pkg / "b.py").write_text("from .a import _X, Y\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert private_imports("tb") == ["tb.models.b imports tb.models.a._X"]


def package_cycles(root: str = "tb") -> list[list[str]]:
    """Import circles between the subpackages of ``root`` (an edge where any module of
    one imports a module of the other)."""
    edges: dict[str, set[str]] = {}
    for path in modules(root):
        parts = module_name(path).split(".")
        if len(parts) < 2 or parts[1] == "tests":
            continue
        here = ".".join(parts[:2])
        for name in imports(path):
            there = ".".join(name.split(".")[:2])
            if name.startswith(f"{root}.") and there != here and _is_module(there):
                edges.setdefault(here, set()).add(there)
    cycles = []
    for start in sorted(edges):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(edges.get(node, ())):
                if nxt == start:
                    cycles.append([*path, start])
                elif nxt not in path and nxt > start:
                    stack.append((nxt, [*path, nxt]))
    return cycles


def test_no_import_circle_between_the_testbench_packages():
    """tb.env builds on tb.models, never the other way round; no two packages of the
    testbench import each other, through any path."""
    assert not package_cycles(), package_cycles()
    for path in modules("tb/models"):
        bad = sorted(n for n in imports(path) if n.startswith("tb.env"))
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def _file_of(name: str) -> Path | None:
    """The source file of module ``name`` of this tree (None: not one of its modules)."""
    path = ROOT.joinpath(*name.split("."))
    for f in (path.with_suffix(".py"), path / "__init__.py"):
        if f.is_file():
            return f
    return None


def simulator_imports(package: str) -> list[str]:
    """Each way a module of ``package`` reaches the simulator's side: cocotb (its runner,
    ``cocotb_tools``, is not), cocotbext or pyuvm imported by it or by any module of the
    tree it imports, at any depth (imports inside functions count), as a chain of names."""
    sim = ("cocotb", "cocotbext", "pyuvm")
    found = []
    for start in modules(package):
        first = module_name(start)
        seen = {first}
        stack = [(start, [first])]
        while stack:
            path, chain = stack.pop()
            names = imports(path)
            for name in sorted(names):
                if name.split(".")[0] in sim:
                    if name.rpartition(".")[0] not in names:  # (``from m import x``: m)
                        found.append(" -> ".join([*chain, name]))
                    continue
                f = _file_of(name)
                if f is not None and module_name(f) not in seen:
                    seen.add(module_name(f))
                    stack.append((f, [*chain, module_name(f)]))
    return found


def test_the_flow_runs_outside_the_simulator():
    """The flow (tb/flow: the runner, the farm, the bench's driver, the demo's command
    line) never imports the simulator's side, through any module; the configuration
    both sides read (tb/config) neither; the testbench never imports the flow."""
    for package in ("tb/flow", "tb/config"):
        bad = simulator_imports(package)
        assert not bad, "\n".join(bad[:5])
    for path in modules("tb"):
        name = module_name(path)
        if name.startswith(("tb.flow", "tb.tests")):
            continue
        bad = sorted(n for n in imports(path) if n == "tb.flow" or n.startswith("tb.flow."))
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"
    for path in modules("tb/config"):
        bad = sorted(
            n for n in imports(path) if n.startswith("tb.") and not n.startswith("tb.config")
        )
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_the_flow_rule_sees_a_simulator_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for pkg in ("flow", "env"):
        (tmp_path / "tb" / pkg).mkdir(parents=True)
        (tmp_path / "tb" / pkg / "__init__.py").write_text("")
    (tmp_path / "tb" / "__init__.py").write_text("")
    (tmp_path / "tb" / "flow" / "a.py").write_text("def f():\n    from ..env import b\n")
    (tmp_path / "tb" / "env" / "b.py").write_text("import cocotb_tools.runner\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert simulator_imports("tb/flow") == []
    (tmp_path / "tb" / "env" / "b.py").write_text("from cocotb.triggers import Timer\n")
    assert simulator_imports("tb/flow") == ["tb.flow.a -> tb.env.b -> cocotb.triggers"]


def test_package_circle_rule_sees_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for pkg in ("env", "models"):
        (tmp_path / "tb" / pkg).mkdir(parents=True)
        (tmp_path / "tb" / pkg / "__init__.py").write_text("")
    (tmp_path / "tb" / "__init__.py").write_text("")
    (tmp_path / "tb" / "env" / "system.py").write_text("from ..models import choice\n")
    (tmp_path / "tb" / "models" / "choice.py").write_text("x = 1\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert package_cycles() == []
    late = "def f():\n    from ..env import system\n"  # a function-level import counts
    (tmp_path / "tb" / "models" / "choice.py").write_text(late)
    assert package_cycles() == [["tb.env", "tb.models", "tb.env"]]


def test_the_engine_wrappers_share_one_parameter_list():
    """pevb_xdma and pevb_xdma_ip declare the engine's parameters in one header, and the
    layers above pass them on with one map: a new parameter is written in two places
    (the list and the map), not five. The map names each parameter of the list once."""
    from tb.flow import runner

    hdl = ROOT / "hdl"
    declared = runner.module_parameters("pevb_xdma")
    assert len(declared) > 20 and declared == runner.module_parameters("pevb_xdma_ip")
    for name in ("pevb_xdma.v", "pevb_xdma_ip.v"):
        text = (hdl / name).read_text()
        header = re.search(r"^module\b.*?^\);", text, re.M | re.S).group(0)
        assert '`include "pevb_xdma_params.vh"' in header, name
        assert not re.search(r"^\s*parameter\b", header, re.M), f"{name} restates a parameter"
    mapped = re.findall(r"\.(\w+)\(\1\)", (hdl / "pevb_xdma_params_map.vh").read_text())
    assert mapped == declared
    for name in ("pevb_xdma_ip.v", "dropin/xdma_0.v"):
        assert '`include "pevb_xdma_params_map.vh"' in (hdl / name).read_text(), name
    # the shared port groups: each header's ports, connected by its map in the same order
    for group in (
        "pevb_xdma_hip",
        "pevb_hip_cfg",
        "pevb_hip_irq",
        "pevb_tlp_out",
        "pevb_xdma_axi",
        "pevb_xdma_stream",
        "pevb_xdma_user",
    ):
        ports = re.findall(
            r"wire\s*(?:\[[^\]]*\])?\s*(\w+),", (hdl / f"{group}_ports.vh").read_text()
        )
        conns = re.findall(r"\.(\w+)\(\1\),", (hdl / f"{group}_map.vh").read_text())
        assert ports and ports == conns, group


def test_every_rtl_module_has_a_bench_or_says_why_not():
    """Each module of hdl/ has a bench of its own (tb/tests/rtl/<module>.py, built from
    files that exist) or is a composition of benched modules, which names them and the
    system tests that run it; never both."""
    from tb.flow.runner.rtl_benches import BENCHES, COMPOSITIONS

    modules = {p.stem for p in (ROOT / "hdl").glob("*.v")}
    assert not set(BENCHES) & set(COMPOSITIONS)
    assert set(BENCHES) | set(COMPOSITIONS) == modules, (
        f"no bench: {sorted(modules - set(BENCHES) - set(COMPOSITIONS))}; "
        f"not a module: {sorted((set(BENCHES) | set(COMPOSITIONS)) - modules)}"
    )
    for module, bench in BENCHES.items():
        assert (ROOT / "tb" / "tests" / "rtl" / f"{module}.py").is_file(), module
        assert bench.sources[0] == f"{module}.v", module
        assert all((ROOT / "hdl" / s).is_file() for s in bench.sources), module
    tests = {p.stem for p in (ROOT / "tb" / "tests").glob("cocotb_*.py")}
    for module, why in COMPOSITIONS.items():
        parts = set(re.findall(r"\bpevb_\w+", why))
        named = set(re.findall(r"\bcocotb_\w+", why))
        assert parts <= set(BENCHES) | set(COMPOSITIONS), (module, parts - modules)
        assert named and named <= tests, (module, named - tests)
