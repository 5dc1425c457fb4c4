"""A user's mistakes on the command line: one clear line and a non-zero exit, before
anything is built (no simulator runs in these tests)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tb.config.profiles import PROFILES
from tb.flow import demo as sim_cli
from tb.flow import runner
from tb.regress import coverage

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_build(monkeypatch):
    """Fail the test if the command goes as far as building a simulation."""

    def refuse(*_a, **_k):
        raise AssertionError("a simulation was started for a bad command line")

    monkeypatch.setattr(runner, "run", refuse)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--profile", "bogus"], "invalid choice: 'bogus'"),
        (["--sim", "xcelium"], "invalid choice: 'xcelium'"),
        (["no-such-demo"], "unknown demo 'no-such-demo'; choose one of rdma-cuda"),
        (["rdma-cuda", "7x3"], "rdma-cuda: surface 7x3: W and H must be multiples of 16"),
        (["rdma-malloc", "abc"], "rdma-malloc: W must be a number, not 'abc'"),
        (["rdma-cuda", "64x64", "extra"], "rdma-cuda: takes one WxH argument, not 2"),
        (["set-leds"], "set-leds: needs the LED value (usage: set-leds <value>"),
        (["set-leds", "-1"], "set-leds: LED value -1: must fit in 32 bits"),
        (
            ["rdma-cuda-h2c-perf", "1000000"],
            "rdma-cuda-h2c-perf: length 1000000 exceeds the card RAM (65536 bytes)",
        ),
        (
            ["--profile", "gen3x8", "rdma-malloc-c2h-perf", "0"],
            "rdma-malloc-c2h-perf: length 0: must be at least 1 byte",
        ),
    ],
)
def test_bad_command_line_is_one_line(argv, says, no_build, capsys):
    with pytest.raises(SystemExit) as e:
        sim_cli.main(argv)
    assert e.value.code == 2
    out = capsys.readouterr()
    lines = (out.out + out.err).strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("make sim: ") and says in lines[0], lines[0]


def test_good_command_lines_pass_the_checks(monkeypatch):
    """The checks do not refuse what runs: each demo's documented forms."""
    for argv in (
        [],
        ["rdma-cuda", "256x256"],
        ["rdma-malloc", "32"],
        ["--profile", "gen3x8", "rdma-cuda-c2h-perf", "65536"],
        ["rdma-cuda-h2c-perf"],
        ["set-leds", "0x2"],
        ["--waves", "--sim", "verilator", "rdma-cuda", "1024x1024"],
    ):
        sim_cli.parse(argv)


def test_help_is_plain_text(capsys):
    """--help: no reStructuredText backticks, every option explained, every demo listed."""
    assert all(a.help for a in sim_cli.parser()._actions)
    with pytest.raises(SystemExit) as e:
        sim_cli.main(["--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    assert "`" not in text
    assert "set-leds               <value>" in text
    assert all(f"  {name} " in text for name in sim_cli.DEMOS)


@pytest.mark.parametrize(
    ("var", "says"),
    [
        ("WAVES=yes", "WAVES must be 0 or 1, not 'yes'"),
        ("SIM=xcelium", "SIM must be one of icarus verilator, not 'xcelium'"),
        ("PROFILE=bogus", "PROFILE must be one of picoevb gen3x8 gen3x4 gen3x16, not 'bogus'"),
    ],
)
def test_make_refuses_bad_variables(var, says):
    """make checks its variables before anything (``-n``: nothing would run anyway)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    r = subprocess.run(
        ["make", "-n", "--no-print-directory", "sim", var],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], r.stderr
    assert not r.stdout.strip(), r.stdout


def test_makefile_knows_every_profile():
    """The Makefile's PROFILES and SIMULATORS (for its one-line checks) are read from
    tb/config/choices.py, which lists tb.config.profiles' profiles."""
    text = (ROOT / "Makefile").read_text()
    (listed,) = re.findall(r"^PROFILES := (.*)$", text, flags=re.M)
    assert listed == "$(call CHOICE,PROFILE_NAMES)"
    out = subprocess.run(
        ["make", "-s", "-n", "-p", "sim"], capture_output=True, text=True, cwd=ROOT
    ).stdout
    assert f"PROFILES := {' '.join(PROFILES)}" in out
    assert "SIMULATORS := icarus verilator" in out


def test_coverage_with_nothing_to_merge(tmp_path, capsys):
    assert coverage.main([str(tmp_path / "none")]) == 1
    assert coverage.main([str(tmp_path)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and all(ln.startswith("coverage: nothing to merge") for ln in lines)


def test_a_python_without_the_packages_gets_one_line():
    """``python -m tb.flow.demo`` from a Python without the project's packages (-S: no
    site-packages) says what to run instead, in one line."""
    r = subprocess.run(
        [sys.executable, "-S", "-m", "tb.flow.demo", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0
    lines = (r.stdout + r.stderr).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("make sim: this Python"), lines
