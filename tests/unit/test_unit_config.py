"""The build configuration (tb/config): one frozen object, checked when it is made, written
into a simulation as one variable and read there once; the choices and their defaults
listed in one place."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from tb.config import BuildConfig, build, choices
from tb.config.profiles import PROFILES, get_profile
from tb.config.sources import DROPIN_TOPLEVEL, TOPLEVEL
from tb.flow import runner

ROOT = Path(__file__).resolve().parents[2]


def test_made_from_make_variables_and_flags_on_top():
    env = {
        "SIM": "verilator",
        "PROFILE": "picoevb",
        "XDMA": "LANES=2 PF0_DEVICE_ID=0x9034 PEVB_XDMA_DSC_BYPASS_RD=1",
        "WAVES": "1",
        "TRACE": "0",
        "PEVB_MODEL": "exact",
        "PEVB_DATAPATH": "compiled",
    }
    c = BuildConfig.from_make(env, toplevel=DROPIN_TOPLEVEL)
    assert (c.sim, c.base_profile.name, c.toplevel) == ("verilator", "picoevb", DROPIN_TOPLEVEL)
    # the options by key, whatever name they were given by
    assert dict(c.options) == {"LANES": 2, "PF0_DEVICE_ID": 0x9034, "H2C_BYPASS": 1}
    assert (c.model, c.datapath, c.waves, c.trace) == ("exact", "compiled", True, False)
    assert c.hw.lanes == 2 and c.base_profile.lanes == 1  # the options on top of the profile
    assert c.ids[1] == 0x9034  # the ID option reaches the IDs the hard-IP model presents
    # a flag given wins over the make variable
    assert BuildConfig.from_make(env, toplevel=DROPIN_TOPLEVEL, sim="icarus").sim == "icarus"
    # nothing set: the defaults, each from tb/config/choices.py
    d = BuildConfig.from_make({})
    assert (d.sim, d.base_profile.name) == (choices.DEFAULT_SIM, choices.DEFAULT_PROFILE)
    assert d.model is None and d.build_model == choices.default_model()
    assert d.datapath == choices.DEFAULT_DATAPATH and d.toplevel == TOPLEVEL and not d.options


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"sim": "xsim"}, "unknown simulator 'xsim'"),
        ({"profile": "gen5x32"}, "unknown profile 'gen5x32'"),
        ({"toplevel": "nothing_here"}, "unknown toplevel 'nothing_here'"),
        ({"options": {"LANES": 16}}, "no Gen2 x16 link with a 64-bit stream"),
        ({"options": {"C2H_BYPASS": 1}}, "not one the card"),
        ({"toplevel": DROPIN_TOPLEVEL, "options": {"LANES": 3}}, "LANES=3: it accepts"),
        ({"toplevel": DROPIN_TOPLEVEL, "options": {"NOPE": 1}}, "unknown build option"),
        ({"model": "lean"}, "lean is no longer a choice"),
        ({"datapath": "fast"}, "choose compiled or python"),
    ],
)
def test_a_bad_configuration_is_one_line_when_made(fields: dict, says: str):
    with pytest.raises(ValueError, match=re.escape(says)) as e:
        BuildConfig(**fields)
    assert "\n" not in str(e.value)


def test_it_cannot_change_once_made():
    c = BuildConfig(toplevel=DROPIN_TOPLEVEL, options={"LANES": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.sim = "verilator"  # type: ignore[misc]
    with pytest.raises(TypeError):
        c.options["LANES"] = 8  # type: ignore[index]
    # a changed copy is checked as a new one
    assert c.replace(sim="verilator").sim == "verilator" and c.sim == choices.DEFAULT_SIM
    with pytest.raises(ValueError, match="LANES=5"):
        c.replace(options={"LANES": 5})


def test_written_into_the_simulation_once_and_read_there_once(monkeypatch, tmp_path):
    design = tmp_path / "my_top.v"
    design.write_text("module my_top; endmodule\n")
    custom = dataclasses.replace(get_profile("gen3x4"), name="mine", ram_size=1 << 20)
    c = BuildConfig(
        sim="verilator",
        profile=custom,
        toplevel="my_top",
        user_sources=[design],
        options={"MSIX": 1, "AXIB": 1},
        model="beats",
        datapath="compiled",
        waves=True,
        trace=True,
    )
    env = c.to_env()
    assert list(env) == [choices.CONFIG_ENV]  # one variable
    assert BuildConfig.from_env(env[choices.CONFIG_ENV]) == c
    assert hash(BuildConfig.from_env(env[choices.CONFIG_ENV])) == hash(c)
    assert len({c, c.replace(sim="icarus"), c.replace(sim="icarus")}) == 2
    monkeypatch.setenv(choices.CONFIG_ENV, env[choices.CONFIG_ENV])
    build.current.cache_clear()
    try:
        assert build.current() == c and build.current_profile() == c.hw
        assert build.current_profile().ram_size == 1 << 20  # a profile of the user's own
        # read once: a later change of the environment is not seen
        monkeypatch.setenv(choices.CONFIG_ENV, BuildConfig().to_env()[choices.CONFIG_ENV])
        assert build.current() == c
        # the model the testbench is told: none for the beat-level build (its own choice)
        assert c.named_model is None and c.replace(model="exact").named_model == "exact"
    finally:
        build.current.cache_clear()


def test_the_runner_takes_a_configuration_or_the_arguments_that_make_one():
    prof = get_profile("gen3x8")
    c = BuildConfig(profile=prof, options={"H2C_CHANNELS": 2}, model="transactors")
    assert runner.build_dir(c) == runner.build_dir(
        "icarus", prof, overrides={"H2C_CHANNELS": 2}, model="transactors"
    )
    assert runner.build_dir(c) != runner.build_dir(c.replace(options={"H2C_CHANNELS": 3}))
    # the build's parameters and toplevel follow from the configuration
    assert c.parameters["H2C_CHANNELS"] == 2 and c.hdl_toplevel == runner.XACT_CARD_TOPLEVEL
    assert c.replace(model="exact").hdl_toplevel == TOPLEVEL


def test_the_choices_are_listed_in_one_place():
    """The simulators, profiles and models, and their defaults, are written once: in
    tb/config/choices.py (the Makefile reads its lists from there); nowhere else names
    a default simulator, or lists the simulators."""
    assert tuple(PROFILES) == choices.PROFILE_NAMES
    assert choices.DEFAULT_SIM == choices.SIMULATORS[0]
    assert choices.MODELS[0] == choices.TRANSACTOR_MODEL
    for name, want in (
        ("SIMULATORS", " ".join(choices.SIMULATORS)),
        ("PROFILE_NAMES", " ".join(choices.PROFILE_NAMES)),
        ("DEFAULT_LONG_SIM", choices.DEFAULT_LONG_SIM),
    ):
        got = subprocess.run(
            ["python3", str(ROOT / "tb/config/choices.py"), name],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert got == want
    made = subprocess.run(
        ["make", "-n", "-s", "sim"], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    assert f"--sim {choices.DEFAULT_SIM} --profile {choices.DEFAULT_PROFILE}" in made
    restated = re.compile(r"""(default\s*=|:\s*str\s*=|get\("SIM",)\s*["'](icarus|verilator)""")
    found = []
    for path in [*sorted((ROOT / "tb").rglob("*.py")), ROOT / "tests" / "conftest.py"]:
        if path.name != "choices.py" and restated.search(path.read_text()):
            found.append(str(path.relative_to(ROOT)))
    assert not found, f"a default simulator written outside tb/config/choices.py: {found}"
    makefile = (ROOT / "Makefile").read_text()
    assert not re.search(r"^SIM \?= \w", makefile, re.M)
    assert "icarus verilator" not in makefile
