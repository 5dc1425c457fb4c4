"""The runner's choice of toplevel and sources (no simulator): the card, the XDMA
drop-in, or a user's design around the drop-in; bad choices answered with one clear
error before anything is built."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tb.config.options import PICOEVB_IDS, xdma_ids
from tb.config.options import check as check_options
from tb.config.profiles import get_profile
from tb.flow import runner
from tb.models import VERIFIED, choice
from tb.models.choice import MODEL_ENV
from tests.sim import plan

BYOD = plan.USER_SOURCES["byod_top"]


def test_sources_of_each_toplevel():
    card = runner.hdl_sources(model="exact")
    assert all(f.parent == runner.HDL_DIR for f in card)
    wrapper = runner.TB_HDL_DIR / f"{runner.XACT_CARD_TOPLEVEL}.v"
    transactors = set(runner.TB_HDL_DIR.glob("pevb_xact_*.v"))
    assert len(transactors) == 3
    dropin = runner.hdl_sources(runner.DROPIN_TOPLEVEL)
    assert set(dropin) - set(card) == set(runner.DROPIN_DIR.glob("*.v")) | transactors
    assert runner.hdl_sources("byod_top", BYOD) == [*dropin, *BYOD]
    # the transactor model's card: the card, the hard-IP port, its transactors, the wrapper
    xact = runner.hdl_sources(model="transactors")
    hip = runner.DROPIN_DIR / "pevb_hip_port.v"
    assert set(xact) - set(card) == {hip, wrapper} | transactors


def test_the_transactor_model_has_builds_of_its_own():
    prof = get_profile("picoevb")
    assert runner.hdl_toplevel(runner.TOPLEVEL, "transactors") == runner.XACT_CARD_TOPLEVEL
    assert runner.hdl_toplevel(runner.TOPLEVEL, "beats") == runner.TOPLEVEL
    assert runner.hdl_toplevel(runner.DROPIN_TOPLEVEL, "transactors") == runner.DROPIN_TOPLEVEL
    for top in (runner.TOPLEVEL, runner.DROPIN_TOPLEVEL):
        dirs = {
            m: runner.build_dir("icarus", prof, toplevel=top, model=m)
            for m in ("transactors", "beats", "exact")
        }
        assert dirs["beats"] == dirs["exact"] != dirs["transactors"]


def test_the_default_model(monkeypatch):
    """The transactor model unless one is named; the exact one where the extensions are
    off (an unverified cocotbext-pcie), so that an unnamed run still builds what runs."""
    monkeypatch.delenv(MODEL_ENV, raising=False)
    assert runner.model_of() == choice.default_model() == "transactors" == runner.MODELS[0]
    assert runner.MODELS == ("transactors", "exact")  # two for users
    assert runner.hdl_toplevel() == runner.XACT_CARD_TOPLEVEL
    assert choice.default_model({**VERIFIED, "cocotbext-pcie": "0.3.0"}) == "exact"
    monkeypatch.setenv(MODEL_ENV, "exact")
    assert runner.model_of() == "exact" and runner.model_of("transactors") == "transactors"
    # the beat-level model is a build's own choice: asked for in Python, not by users
    assert runner.model_of("beats") == "beats"
    for bad, says in (
        ("fast", "PEVB_MODEL='fast': choose transactors or exact"),
        ("beats", "PEVB_MODEL='beats': choose transactors or exact"),
        ("xact", r"\(xact is now transactors\)"),
        ("lean", "lean is no longer a choice"),
    ):
        monkeypatch.setenv(MODEL_ENV, bad)
        with pytest.raises(ValueError, match=says):
            runner.model_of()
    # the testbench's own choice on a build, named or not
    assert choice.model_for_build(True) == "transactors"
    assert choice.model_for_build(False) == "beats"
    assert choice.model_for_build(False, {**VERIFIED, "cocotb": "2.2.0"}) == "exact"


def test_bad_toplevels_and_sources_are_refused():
    with pytest.raises(ValueError, match="unknown toplevel 'my_top'"):
        runner.hdl_sources("my_top")
    with pytest.raises(ValueError, match="takes no user sources"):
        runner.hdl_sources(runner.TOPLEVEL, BYOD)
    with pytest.raises(FileNotFoundError, match=r"user sources not found: nowhere\.v"):
        runner.hdl_sources("my_top", [Path("nowhere.v")])
    with pytest.raises(ValueError, match="unknown toplevel"):
        runner.build("icarus", "picoevb", toplevel="my_top")


@pytest.mark.parametrize(
    "env, choices, known",
    [
        ("PEVB_DATAPATH", "compiled or python", "python"),
        ("PEVB_MODEL", "transactors or exact", "exact"),
    ],
)
def test_an_unknown_choice_is_refused_before_the_build(
    env: str, choices: str, known: str, monkeypatch: pytest.MonkeyPatch
):
    """The data path and the model, named in the run's environment or this process's: an
    unknown one is one line naming the choices, before anything is built."""

    def no_build(*args, **kwargs):
        raise AssertionError("the build was reached")

    monkeypatch.setattr(runner.builds, "build_with_runner", no_build)
    with pytest.raises(ValueError, match=f"{env}='fast': choose {choices}"):
        runner.run(module="m", extra_env={env: "fast"})
    monkeypatch.setenv(env, "quick")
    with pytest.raises(ValueError, match=f"{env}='quick'"):
        runner.run(module="m")
    monkeypatch.setenv(env, known)  # a known one reaches the build
    with pytest.raises(AssertionError, match="the build was reached"):
        runner.run(module="m")


def test_parameters_and_defines_per_toplevel():
    prof = get_profile("gen3x8")
    over = {"H2C_CHANNELS": 2, "C2H_STREAM": 1, "USER_IRQS": 4, "MSIX": 1, "C2H_BYPASS": 1}
    card = runner.hdl_parameters(prof, over)
    assert card["RAM_SIZE"] == prof.ram_size and card["H2C_CHANNELS"] == 2
    # only the parameters the card has (it has no descriptor bypass)
    assert set(card) <= set(runner.module_parameters(runner.TOPLEVEL)) and "C2H_BYPASS" not in card
    dropin = runner.hdl_parameters(prof, over, runner.DROPIN_TOPLEVEL)
    assert dropin == {k: v for k, v in card.items() if k != "RAM_SIZE"} | {"C2H_BYPASS": 1}
    assert runner.hdl_parameters(prof, over, "byod_top") == {}
    assert runner.dropin_defines(prof, over) == {
        "PEVB_XDMA_DATA_WIDTH": 256,
        "PEVB_XDMA_LANES": 8,
        "PEVB_XDMA_H2C_CHANNELS": 2,
        "PEVB_XDMA_C2H_CHANNELS": 1,
        "PEVB_XDMA_H2C_STREAM": 0,
        "PEVB_XDMA_C2H_STREAM": 1,
        "PEVB_XDMA_DSC_BYPASS_RD": 0,
        "PEVB_XDMA_DSC_BYPASS_WR": 1,
        "PEVB_XDMA_USR_IRQ": 4,
        "PEVB_XDMA_MSIX": 1,
        "PEVB_XDMA_AXILITE_SLAVE": 0,
        "PEVB_XDMA_SOFT_RESET_EN": 0,
        "PEVB_XDMA_CFG_MGMT": 0,
        "PEVB_XDMA_CFG_EXT": 0,
        "PEVB_XDMA_CFG_EXT_LEGACY": 0,
        "PEVB_XDMA_CFG_EXT_EXTENDED": 0,
        "PEVB_XDMA_PCIE_ID_IF": 0,
        "PEVB_XDMA_AXIST_BYPASS": 0,
        "PEVB_XDMA_AXIST_BYPASS_ADDR_WIDTH": 20,
        "PEVB_XDMA_AXIST_BYPASS_AXI_BASE": 0,
        "PEVB_XDMA_AXILITE_MASTER": 1,
        "PEVB_XDMA_AXIL_MASTER_64BIT": 0,
        "PEVB_XDMA_AXIL_MASTER_PREFETCHABLE": 0,
        "PEVB_XDMA_PCIE_64BIT": 0,
        "PEVB_XDMA_PCIE_PREFETCHABLE": 0,
        "PEVB_XDMA_AXI_BYPASS_64BIT": 0,
        "PEVB_XDMA_AXI_BYPASS_PREFETCHABLE": 0,
    }
    # each toplevel and each user design builds in a directory of its own
    dirs = {
        runner.build_dir("icarus", prof, overrides={"H2C_CHANNELS": 2}),
        runner.build_dir("icarus", prof, overrides=over, toplevel=runner.DROPIN_TOPLEVEL),
        runner.build_dir("icarus", prof, overrides=over, toplevel="byod_top", user_sources=BYOD),
    }
    assert len(dirs) == 3


def test_sources_command(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m <package>.flow.runner``: a toplevel's files and the include path, one per
    line; an unknown toplevel is one usage line and exit status 2, no traceback."""
    assert runner.main(["--sources"]) == 0
    listed = [Path(line) for line in capsys.readouterr().out.split()]
    assert listed == runner.hdl_sources(runner.DROPIN_TOPLEVEL)
    assert runner.main(["--includes"]) == 0
    assert [Path(p) for p in capsys.readouterr().out.split()] == runner.hdl_include_dirs()
    with pytest.raises(SystemExit) as e:
        runner.main(["--sources", "my_top"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'my_top'" in err and "Traceback" not in err


def test_assertions_rewritten_in_this_package_and_the_test_module_only():
    from _pytest.pathlib import fnmatch_ex  # what pytest matches python_files with

    patterns = runner.rewrite_patterns("tb.tests.cocotb_engine").split()

    def rewritten(path: Path) -> bool:
        return any(fnmatch_ex(p, path) for p in patterns)

    import cocotbext.pcie.core.tlp
    import numpy

    import cuda_model.gpu
    import driver_model.desc
    from tb.env import harness

    for mine in (harness, driver_model.desc, cuda_model.gpu, runner):
        assert rewritten(Path(mine.__file__)), mine.__name__
    assert rewritten(runner.PACKAGE_DIR / "tests" / "cocotb_engine.py")
    assert rewritten(Path("/elsewhere/cocotb_engine.py"))  # a user's module, by its name
    for theirs in (numpy, cocotbext.pcie.core.tlp, pytest):
        assert not rewritten(Path(theirs.__file__)), theirs.__name__


def test_the_simulators_python_caches_its_bytecode_under_the_build_root(monkeypatch):
    monkeypatch.setenv(runner.DONT_WRITE_BYTECODE_ENV, "1")
    monkeypatch.delenv(runner.PYCACHE_PREFIX_ENV, raising=False)
    with runner.runs.sim_python():
        assert os.environ[runner.PYCACHE_PREFIX_ENV] == str(runner.BUILD_ROOT / "pycache")
        assert os.environ[runner.DONT_WRITE_BYTECODE_ENV] == ""
    assert os.environ[runner.DONT_WRITE_BYTECODE_ENV] == "1"
    assert runner.PYCACHE_PREFIX_ENV not in os.environ
    # a prefix of the user's is theirs: nothing changes
    monkeypatch.setenv(runner.PYCACHE_PREFIX_ENV, "/somewhere")
    with runner.runs.sim_python():
        assert os.environ[runner.PYCACHE_PREFIX_ENV] == "/somewhere"
        assert os.environ[runner.DONT_WRITE_BYTECODE_ENV] == "1"


def test_verilator_builds_write_only_where_the_testbench_writes(monkeypatch):
    """A Verilator build's VPI access: every variable readable; writable only the
    toplevel's input ports (all of a user's own toplevel), the hard-IP port's output regs
    (the streams' only without the transactors) and the listed variables. Each listed
    module and variable exists in the HDL as a reg (a rename would leave the testbench's
    writes refused), and the access is part of the build's name (a change rebuilds)."""
    text = runner.verilator_access("pevb_card_xact", xact=True).splitlines()
    assert text[:2] == ["`verilator_config", 'public_flat_rd -module "*" -var "*"']

    def rw(module: str, var: str, lines: list[str] = text) -> bool:
        return f'public_flat_rw -module "{module}" -var "{var}"' in lines

    assert rw("pevb_card_xact", "usr_irq_req") and rw("pevb_card_xact", "s_axis_c2h_tdata_3")
    assert not rw("pevb_card_xact", "msi_enable")  # an output
    assert not rw("pevb_card_xact", "m_axis_rq_tlast")  # a wire between core and hip
    assert rw("pevb_hip_port", "user_clk") and rw("pevb_hip_port", "cfg_max_payload")
    assert not rw("pevb_hip_port", "s_axis_rc_tdata")  # the transactor drives it
    assert not rw("pevb_hip_port", "m_axis_rq_tdata")  # the RTL drives it
    lean = runner.verilator_access("pevb_dma_top").splitlines()
    assert rw("pevb_hip_port", "s_axis_rc_tdata", lean)
    assert rw("pevb_dma_top", "s_axis_rc_tdata", lean)  # the card's own hard-IP inputs
    assert not rw("pevb_dma_top", "m_axis_rq_tdata", lean)
    dropin = runner.verilator_access("xdma_0").splitlines()
    assert rw("xdma_0", "sys_clk", dropin) and not rw("xdma_0", "pci_exp_txp", dropin)
    assert rw("my_design", "*", runner.verilator_access("my_design").splitlines())
    with pytest.raises(LookupError, match="module nowhere is not in the project's HDL"):
        runner.module_ports("nowhere")
    hdl = {
        m.group(1): f.read_text()
        for d in (runner.HDL_DIR, runner.DROPIN_DIR, runner.TB_HDL_DIR)
        for f in d.glob("*.v")
        for m in re.finditer(r"^module\s+(\w+)", f.read_text(), re.M)
    }
    for module, names in runner.VERILATOR_WRITTEN:
        assert module in hdl, module
        for var in names:
            assert var == "*" or re.search(rf"\breg\b[^;]*\b{var}\b", hdl[module]), (module, var)
            assert rw(module, var)
    prof = get_profile("picoevb")
    before = {sim: runner.build_dir(sim, prof) for sim in runner.SIMULATORS}
    monkeypatch.setattr(runner.access, "VERILATOR_WRITTEN", runner.VERILATOR_WRITTEN[:-1])
    assert runner.build_dir("verilator", prof) != before["verilator"]
    assert runner.build_dir("icarus", prof) == before["icarus"]


def test_each_run_of_a_process_gets_a_directory_of_its_own(tmp_path: Path) -> None:
    """Two runs of the same tests on one build in one process (two variants, or a test
    run again alone) keep their own logs and results."""
    runs = tmp_path / "runs"
    first = runner.runs.run_dir(runs, "test_a-42")
    second = runner.runs.run_dir(runs, "test_a-42")
    third = runner.runs.run_dir(runs, "test_a-42")
    assert first == runs / "test_a-42"
    assert (second, third) == (runs / "test_a-42-2", runs / "test_a-42-3")
    assert runner.runs.run_dir(runs, "test_b-42") == runs / "test_b-42"


@pytest.fixture
def no_simulator(monkeypatch: pytest.MonkeyPatch):
    """Fail the test if a build reaches cocotb's runner."""

    def refuse(*_a, **_k):
        raise AssertionError("a build was started")

    monkeypatch.setattr(runner.builds, "get_runner", refuse)


@pytest.mark.parametrize(
    ("toplevel", "overrides", "says"),
    [
        (
            runner.TOPLEVEL,
            {"NO_SUCH_PARAM": 1},
            "unknown build option 'NO_SUCH_PARAM': one of MODULE",
        ),
        (runner.TOPLEVEL, {"H2C_CHANNELS": "two"}, "H2C_CHANNELS='two': it accepts 1 to 4"),
        (runner.TOPLEVEL, {"H2C_CHANNELS": 9}, "H2C_CHANNELS=9: it accepts 1 to 4"),
        (runner.TOPLEVEL, {"RAM_SIZE": 5000}, "RAM_SIZE=5000: it accepts a power of two"),
        (runner.TOPLEVEL, {"AXIB": 1}, "AXIB is not one the card (pevb_dma_top) takes"),
        (runner.DROPIN_TOPLEVEL, {"RAM_SIZE": 1 << 16}, "RAM_SIZE is not one the drop-in takes"),
        ("byod_top", {"PEVB_XDMA_MODULE": "2xdma"}, "MODULE='2xdma': it accepts a Verilog"),
        ("byod_top", {"PEVB_XDMA_7SERIES": 2}, "7SERIES=2: it accepts 0 or 1"),
        ("byod_top", {"AXIB_AXI_BASE": 0x800}, "aligned to 4 KiB"),
        ("byod_top", {"H2C_BYPASS": 2}, "H2C_BYPASS=2: a mask of H2C channels 0 to 0"),
        ("byod_top", {"LANES": 3}, "LANES=3: it accepts 1, 2, 4, 8 or 16"),
        ("byod_top", {"LANES": 16}, "no Gen2 x16 link with a 64-bit stream at 125 MHz"),
        ("byod_top", {"LANES": 2, "PEVB_XDMA_LANES": 2}, "LANES given twice"),
    ],
)
def test_bad_build_options_are_one_line_before_anything_builds(
    toplevel, overrides, says, no_simulator
):
    sources = BYOD if toplevel == "byod_top" else ()
    for call in (runner.build, lambda **k: runner.run(module="m", **k)):
        with pytest.raises(runner.OptionError) as e:
            call(toplevel=toplevel, user_sources=sources, overrides=overrides)
        assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_every_option_by_key_or_define_reaches_the_build():
    """The drop-in's options reach a design as its defines, by key or by define name; the
    link's width reaches the testbench's profile; STREAM spells out as the masks; the
    drop-in as the toplevel takes its parameters and its name."""
    prof = get_profile("picoevb")
    d = runner.dropin_defines(
        prof, {"PEVB_XDMA_MODULE": "xdma_ip", "LANES": 2, "7SERIES": 1, "DESC_DEPTH": 16}
    )
    assert d["PEVB_XDMA_MODULE"] == "xdma_ip" and d["PEVB_XDMA_LANES"] == 2
    assert d["PEVB_XDMA_7SERIES"] == 1 and d["PEVB_XDMA_DESC_DEPTH"] == 16
    assert prof.with_overrides({"LANES": 2}).lanes == 2
    s = runner.dropin_defines(prof, {"H2C_CHANNELS": 2, "STREAM": 1})
    assert (s["PEVB_XDMA_H2C_STREAM"], s["PEVB_XDMA_C2H_STREAM"]) == (3, 1)
    assert runner.hdl_parameters(prof, {"LANES": 2, "AXI_ID_WIDTH": 3}, "xdma_0")["LANES"] == 2
    assert runner.hdl_toplevel("xdma_0", "exact", {"PEVB_XDMA_MODULE": "xdma"}) == "xdma"
    # every define the drop-in reads has an option, and every option's define is read
    text = (runner.DROPIN_DIR / "xdma_0.v").read_text()
    read = set(re.findall(r"`ifndef (PEVB_XDMA_\w+)", text))
    assert read == {o.define for o in runner.OPTIONS.values() if o.define}
    # each key that names a parameter names one the drop-in (or the card) has
    params = set(runner.module_parameters("xdma_0"))
    card = set(runner.module_parameters(runner.TOPLEVEL))
    for o in runner.OPTIONS.values():
        assert o.dropin_parameter == (o.key in params), o.key
        assert o.card_parameter == (o.key in card), o.key
    # ... and docs/dropin.md's table gives each define its key and what it accepts
    doc = (runner.ROOT / "docs" / "dropin.md").read_text()
    rows = re.findall(r"^\| `(PEVB_XDMA_\w+)` \| `(\w+)` \|[^|]*\| ([^|]*) \|", doc, re.M)
    assert {d for d, _, _ in rows} == read
    for define, key, accepts in rows:
        o = runner.OPTIONS[key]
        assert o.define == define, key
        assert accepts == o.accepts, key


def test_the_defines_command(capsys: pytest.CaptureFixture[str]) -> None:
    """``--defines``: the drop-in's defines for a Makefile flow, with the options given;
    a bad option is one usage line and exit status 2."""
    assert runner.main(["--defines", "PEVB_XDMA_MODULE=xdma", "LANES=2", "H2C_CHANNELS=0x2"]) == 0
    lines = capsys.readouterr().out.split()
    assert {"PEVB_XDMA_MODULE=xdma", "PEVB_XDMA_LANES=2", "PEVB_XDMA_H2C_CHANNELS=2"} <= set(lines)
    with pytest.raises(SystemExit) as e:
        runner.main(["--defines", "H2C_CHANNELS=two"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "H2C_CHANNELS='two': the value must be a number" in err and "Traceback" not in err


def test_make_test_xdma_options_reach_the_drop_in_builds():
    """``make test XDMA=...``: the build configuration the runner makes for each case puts
    the options on top of every drop-in build's own, its ``MODULE`` only where the
    drop-in is the toplevel (the suite's designs instantiate ``xdma_0`` by name); the
    card's builds are untouched; a bad option is one usage line."""
    from tb.config import BuildConfig
    from tests.conftest import xdma_options

    env = {"XDMA": "PEVB_XDMA_MODULE=xdma_ip DESC_FETCHES=3 PF0_DEVICE_ID=0x9011"}
    seen = set()
    for c in plan.cases("icarus", "picoevb"):
        settings = c.run_settings()
        fields = {
            "sim": settings["sim"],
            "profile": settings["profile"],
            "options": settings["overrides"] or {},
            "toplevel": settings["toplevel"],
            "user_sources": settings["user_sources"],
        }
        plain = BuildConfig.from_make({}, **fields)
        given = BuildConfig.from_make(env, **fields)
        if c.toplevel == runner.TOPLEVEL:
            assert given == plain, c.id
            continue
        over, own = dict(given.options), dict(plain.options)
        assert over["DESC_FETCHES"] == 3 and given.ids[1] == 0x9011, c.id
        if "MODULE" not in own:  # (the renamed design names its own)
            renamed = over.get("MODULE") == "xdma_ip"
            assert renamed == (c.toplevel == runner.DROPIN_TOPLEVEL), c.id
            assert (given.hdl_toplevel == "xdma_ip") == renamed, c.id
        # the design's own options stay under the given ones
        given_keys = {"MODULE", "DESC_FETCHES", "PF0_DEVICE_ID"}
        assert {k: v for k, v in over.items() if k in own and k not in given_keys} == {
            k: v for k, v in own.items() if k not in given_keys
        }
        seen.add(c.toplevel)
    assert {runner.DROPIN_TOPLEVEL, "byod_top", "ipconf_top"} <= seen

    class Config:
        def __init__(self, words: str) -> None:
            self.opts = {"--xdma": words, "--profile": "picoevb", "--sim": "icarus"}

        def getoption(self, name: str) -> str:
            return self.opts[name]

    assert xdma_options(Config("LANES=2 7SERIES=1")) == {"LANES": 2, "7SERIES": 1}
    for words, says in (("LANES=3", "LANES=3: it accepts"), ("NOPE=1", "unknown build option")):
        with pytest.raises(pytest.UsageError, match=f"XDMA: .*{says}"):
            xdma_options(Config(words))


def test_the_defaults_a_design_gets_are_the_drop_ins():
    """The defines a design gets for options not given carry the drop-in's own defaults
    (its ``ifndef`` blocks): a default changed in one place only fails here."""
    from tb.config import sources

    text = (runner.DROPIN_DIR / "xdma_0.v").read_text()
    rtl = dict(re.findall(r"`ifndef (PEVB_XDMA_\w+)\n`define \1 ([^\n]+)", text))
    for key, value in sources.DEFINED_DEFAULTS.items():
        define = runner.OPTIONS[key].define
        got = rtl[define].strip()
        assert int(got.replace("64'h", "0x"), 0) == value, (define, got, value)


def test_the_drop_in_has_the_vivado_ids_and_its_options_replace_them():
    """The drop-in's function IDs: Vivado's defaults (a device ID of family, generation
    and lanes), each ID option in place of its default; the card takes no ID option (it
    keeps the real picoevb's IDs)."""
    gen3x8, gen3x16 = get_profile("gen3x8"), get_profile("gen3x16")
    assert xdma_ids(gen3x8) == (0x10EE, 0x9038, 0x00, 0x10EE, 0x0007, 0x070001)
    assert xdma_ids(gen3x16)[1] == 0x903F
    assert xdma_ids(get_profile("picoevb").with_overrides({"7SERIES": 1}))[1] == 0x7021
    opts = {"VENDOR_ID": 0x1234, "PF0_DEVICE_ID": 0xBEEF, "PF0_REVISION_ID": 7}
    opts |= {"PF0_SUBSYSTEM_VENDOR_ID": 0x4321, "PF0_SUBSYSTEM_ID": 9, "PF0_CLASS_CODE": 0x058000}
    checked = check_options("xdma_0", gen3x8, opts)
    assert xdma_ids(gen3x8.with_overrides(checked)) == (0x1234, 0xBEEF, 7, 0x4321, 9, 0x058000)
    with pytest.raises(runner.OptionError, match="PF0_DEVICE_ID=65536: it accepts 0 to 0xFFFF"):
        check_options("xdma_0", gen3x8, {"PF0_DEVICE_ID": 0x10000})
    with pytest.raises(runner.OptionError, match="not one the card"):
        check_options(runner.TOPLEVEL, gen3x8, {"PF0_DEVICE_ID": 0x1})
    assert PICOEVB_IDS[:2] == (0x10DE, 0x0001)


def test_the_hard_ip_links_are_the_models():
    """The links a build may have (tb/config/options.py, so that the flow checks them
    without importing the simulator's side) are those cocotbext-pcie's UltraScale+ model
    has a configuration for."""
    from cocotbext.pcie.xilinx.us.usp_model import valid_configs

    from tb.config.options import hard_ip_links

    assert hard_ip_links() == set(valid_configs)
