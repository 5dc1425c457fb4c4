"""make bench's arithmetic: the link payload ceiling, the targets and the tables."""

from __future__ import annotations

import re

import pytest

from tb.flow.bench import suite as bench


def test_payload_ceiling_of_each_profile() -> None:
    # Gen3 x8: 8 GT/s, 128b/130b, 8 lanes = 7877 MB/s of symbols; a 256 B write with a
    # 16-byte header and 8 bytes of framing/sequence/LCRC carries 256/280 of it
    assert bench.ceiling_mb_s("gen3x8", 256, "C2H", 16) == pytest.approx(
        8e9 * 128 / 130 * 8 / 8 * 256 / 280 / 1e6
    )
    # reads come back as completions with a 12-byte header
    assert bench.ceiling_mb_s("gen3x8", 256, "H2C") == pytest.approx(
        8e9 * 128 / 130 * 256 / 276 / 1e6
    )
    # Gen2 x1 (picoevb): 5 GT/s with 8b/10b = 500 MB/s of symbols
    assert bench.ceiling_mb_s("picoevb", 128, "C2H", 12) == pytest.approx(500 * 128 / 148)
    # a smaller MPS leaves less for the payload
    assert bench.ceiling_mb_s("gen3x8", 128, "H2C") < bench.ceiling_mb_s("gen3x8", 256, "H2C")


def _engine_row(profile: str, mps: int, direction: str, eff: float) -> dict:
    ceiling = bench.ceiling_mb_s(profile, mps, direction)
    return {
        "profile": profile,
        "mps": mps,
        "dir": direction,
        "bytes": 1 << 20,
        "ceiling_mb_s": ceiling,
        "run_mb_s": ceiling * eff,
        "stream_mb_s": ceiling,
        "run_eff": eff,
        "stream_eff": 1.0,
    }


def test_targets_say_which_are_met() -> None:
    res = {
        "engine": [
            _engine_row("gen3x8", 256, "H2C", 0.96),
            _engine_row("gen3x8", 256, "C2H", 0.94),
            _engine_row("gen3x8", 128, "C2H", 0.5),
        ],  # not the profile's MPS: no target
        "desc": [
            {
                "profile": "gen3x8",
                "mps": 256,
                "dir": "H2C",
                "desc": 4096,
                "descriptors": 256,
                "bytes": 1 << 20,
                "run_mb_s": 1,
                "vs_1mib": 0.91,
            },
            {
                "profile": "gen3x8",
                "mps": 256,
                "dir": "C2H",
                "desc": 64,
                "descriptors": 2048,
                "bytes": 1 << 17,
                "run_mb_s": 1,
                "vs_1mib": 0.2,
            },
        ],
        "speed": [
            {
                "sim": "icarus",
                "profile": "gen3x8",
                "model": "beats",
                "sim_us_per_s": 60.0,
                "cycles_per_s": 15000,
                "mb_per_wall_s": 0.4,
                "bytes": 2,
                "wall_s": 1,
            },
            {
                "sim": "icarus",
                "profile": "gen3x8",
                "model": "exact",
                "sim_us_per_s": 20.0,
                "cycles_per_s": 5000,
                "mb_per_wall_s": 0.1,
                "bytes": 2,
                "wall_s": 1,
            },
            {
                "sim": "verilator",
                "profile": "gen3x8",
                "model": "beats",
                "sim_us_per_s": 149.0,
                "cycles_per_s": 1,
                "mb_per_wall_s": 0.1,
                "bytes": 2,
                "wall_s": 1,
            },
            # issue 66's: the compiled path against the RTL alone and the Python path
            *(
                {
                    "sim": sim,
                    "profile": profile,
                    "model": model,
                    "sim_us_per_s": rate,
                    "cycles_per_s": 1,
                    "mb_per_wall_s": 0.1,
                    "bytes": 2,
                    "wall_s": 1,
                }
                for sim, profile, model, rate in (
                    ("verilator", "gen3x8", "transactors, compiled", 300.0),
                    ("verilator", "gen3x8", "RTL alone", 2500.0),
                    ("verilator", "picoevb", "transactors, compiled", 1000.0),
                    ("verilator", "picoevb", "RTL alone", 5000.0),
                    ("icarus", "gen3x8", "transactors", 15.0),
                    ("icarus", "gen3x8", "transactors, compiled", 50.0),
                )
            ),
            {
                "sim": "icarus",
                "profile": "picoevb",
                "sim_us_per_s": 1.0,
                "cycles_per_s": 1,
                "mb_per_wall_s": 0.1,
                "bytes": 2,
                "wall_s": 1,
            },
        ],
        "demo": [
            {
                "demo": "rdma-cuda 1024x1024",
                "model": "beats",
                "wall_s": 31.0,
                "demo_wall_s": 50.0,
                "sim_ms": 25.0,
                "mb_s": 300.0,
            },
            {
                "demo": "rdma-cuda 1024x1024",
                "model": "transactors",
                "wall_s": 12.5,
                "demo_wall_s": 20.0,
                "sim_ms": 25.0,
                "mb_s": 300.0,
            },
        ],
        "guest": [
            {
                "copy": "HtoD",
                "bytes": 1 << 20,
                "guest_us": 1300.0,
                "python_us": 600.0,
                "stream_us": 1200.0,
                "ratio": 1300 / 1200,
            },
            {
                "copy": "DtoH",
                "bytes": 1 << 20,
                "guest_us": 4000.0,
                "python_us": 160.0,
                "stream_us": 1800.0,
                "ratio": 4000 / 1800,
            },
            {"rdma_bytes": 4 << 20, "wall_s": 61.5},
        ],
    }
    got = {t["target"]: t["met"] for t in bench.targets(res)}
    assert got == {
        "the guest's 1 MiB cudaMemcpy HtoD within 2x of the Python API's same stream copy": True,
        "the guest's 1 MiB cudaMemcpy DtoH within 2x of the Python API's same stream copy": False,
        "4 MiB rdma-cuda in the guest on Verilator < 120 s": True,
        "gen3x8 H2C 1 MiB >= 95% of the ceiling (Run->IRQ)": True,
        "gen3x8 C2H 1 MiB >= 95% of the ceiling (Run->IRQ)": False,
        "gen3x8 H2C 4 KiB descriptors >= 90% of 1 MiB": True,
        "icarus gen3x8 >= 40 us simulated per s": True,
        "verilator gen3x8 >= 400 us simulated per s": False,
        "verilator picoevb >= 2000 us simulated per s": False,
        "verilator gen3x8 compiled >= 10% of the RTL alone": True,
        "verilator picoevb compiled >= 25% of the RTL alone": False,
        "icarus gen3x8 compiled >= 3x the Python path": True,
        "4 MiB rdma-cuda demo < 5 s on Verilator": False,
    }
    res["targets"] = bench.targets(res)
    text = bench.table(res)
    assert "| gen3x8 | 256 | C2H |" in text and "94.0%" in text
    assert "| gen3x8 | C2H | 64 B | 2048 |" in text
    # the fastest model's figure goes against each target, named
    assert "| 4 MiB rdma-cuda demo < 5 s on Verilator | 12.5 s (transactors) | **no** |" in text
    assert "| verilator gen3x8 compiled >= 10% of the RTL alone | 12.0% | yes |" in text
    assert "| icarus gen3x8 compiled >= 3x the Python path | 3.33x | yes |" in text
    assert "| icarus gen3x8 >= 40 us simulated per s | 60.0 (beats) | yes |" in text
    assert "ARGS=1024x1024`, transactors model: 12.5 s wall" in text
    assert "| icarus | gen3x8 | beats | 60.0 | 15000 |" in text
    assert "| icarus | gen3x8 | exact | 20.0 | 5000 |" in text
    assert "| HtoD | 1048576 | 1300 | 600 | 1200 | 1.08 |" in text
    assert "`pevb-rdma-cuda -s 4194304` in the guest" in text and "61.5 s wall" in text


def test_profile_breakdown_by_part() -> None:
    """make profile's grouping: each function's own time goes to the first part whose
    path fragment its file has; built-ins and the standard library are parts of their
    own; the top list is by own time."""
    from tb.flow.bench.profile import OTHER, breakdown, part_of, report, top_functions

    site = "/v/lib/python3.11/site-packages"
    stats = {
        (f"{site}/cocotb/task.py", 326, "_resume"): (10, 10, 3.0, 9.0, {}),
        (f"{site}/cocotb/handle.py", 864, "value"): (5, 5, 1.0, 1.0, {}),
        (f"{site}/cocotbext/pcie/core/port.py", 438, "_run_transmit"): (2, 2, 0.5, 2.0, {}),
        (f"{site}/cocotbext/pcie/core/tlp.py", 277, "check"): (9, 9, 1.5, 1.5, {}),
        (f"{site}/cocotbext/pcie/xilinx/us/interface.py", 605, "_run"): (3, 3, 2.0, 4.0, {}),
        ("/repo/tb/env/link.py", 154, "observe"): (4, 4, 0.25, 0.5, {}),
        ("~", 0, "<built-in method builtins.len>"): (7, 7, 0.5, 0.5, {}),
        ("/usr/lib/python3.11/enum.py", 1230, "__hash__"): (8, 8, 0.75, 0.75, {}),
    }
    assert part_of(f"{site}/cocotb/types/_logic.py") == "signal access"
    assert part_of("/x/gpudirect_cosim/models/hardip.py") == part_of("/repo/tb/models/hardip.py")
    assert part_of("/repo/tb/models/transactors.py").startswith("transactor model")
    assert part_of("/repo/tb/models/link.py") == part_of("/repo/tb/models/switch.py")
    parts = dict(breakdown(stats))
    assert parts["cocotb scheduler: tasks, triggers, event loop"] == 3.0
    assert parts["signal access"] == 1.0
    assert parts["hard-IP model and its AXI-stream interfaces"] == 2.0
    assert parts["links: serialization, ACK and flow-control DLLPs"] == 0.5
    assert parts["TLP objects"] == 1.5
    assert parts["this testbench (tb/)"] == 0.25
    assert parts["Python built-ins"] == 0.5 and parts[OTHER] == 0.75
    assert sum(parts.values()) == 9.5
    assert breakdown(stats)[0][0] == "cocotb scheduler: tasks, triggers, event loop"
    assert [name for name, _, _ in top_functions(stats, 2)] == [
        "task.py:326(_resume)",
        "interface.py:605(_run)",
    ]
    text = report(stats, top=3)
    assert "(9.5 s profiled)" in text and " 31.6%     3.00 s  cocotb scheduler" in text


def test_profile_counts_coroutine_resumes() -> None:
    """make profile's resumes: per coroutine function, the calls it gets from a
    coroutine's send, not its other callers; in all, the sends cocotb's scheduler makes
    (not the models' own stepping); per cycle when the cycles are given."""
    from tb.flow.bench.profile import report, resumes, scheduler_resumes

    send = ("~", 0, "<method 'send' of 'coroutine' objects>")
    other = ("/repo/tb/models/transactors.py", 90, "_push")
    resume = ("/s/cocotb/task.py", 326, "_resume")
    stats = {
        send: (
            25,
            25,
            0.1,
            1.0,
            {resume: (19, 19, 0, 0), ("/repo/tb/models/link.py", 1, "_step"): 6},
        ),
        ("/repo/tb/models/link.py", 150, "_run_wire"): (30, 30, 0.1, 1.0, {send: (12, 12, 0, 0)}),
        ("/s/cocotbext/pcie/core/switch.py", 227, "_run_arbitration"): (
            8,
            8,
            0.1,
            1.0,
            {send: (8, 8, 0, 0), other: (5, 5, 0, 0)},
        ),
        other: (5, 5, 0.1, 0.1, {("/repo/tb/models/transactors.py", 200, "send"): (5, 5, 0, 0)}),
    }
    assert resumes(stats) == [
        ("link.py:150(_run_wire)", 12),
        ("switch.py:227(_run_arbitration)", 8),
    ]
    assert scheduler_resumes(stats) == 19
    text = report(stats, top=2, cycles=40)
    assert "resumed by cocotb's scheduler: 19, 0.47 per user-clock cycle" in text


def test_bench_tables_go_into_the_docs_page(tmp_path):
    """``make bench BENCH_ARGS=--docs`` replaces what stands between the page's markers and
    nothing else; the real page has exactly one such block."""
    page = tmp_path / "performance.md"
    page.write_text(f"intro\n{bench.DOCS_BEGIN}\nold table\n{bench.DOCS_END}\nafter\n")
    bench.write_docs("| new | table |\n", page)
    assert page.read_text() == (
        f"intro\n{bench.DOCS_BEGIN}\n| new | table |\n{bench.DOCS_END}\nafter\n"
    )
    real = (bench.runner.ROOT / "docs" / "performance.md").read_text()
    assert real.count(bench.DOCS_BEGIN) == 1 and real.count(bench.DOCS_END) == 1
    assert real.index(bench.DOCS_BEGIN) < real.index(bench.DOCS_END)


def test_recorded_inputs_are_every_input_of_the_card():
    """The RTL-alone record drives every input port of the card, those of the port
    groups its header includes (the hard IP's streams) among them: one left out would
    make the replay differ from the run it was recorded from."""
    from tb.config.sources import input_ports
    from tb.flow import runner

    ports = input_ports()
    header = runner.module_header(runner.TOPLEVEL)
    declared = re.findall(r"^\s*input\s+wire\s*(?:\[[^\]]*\])?\s*(\w+)", header, re.M)
    assert ports == declared and len(set(ports)) == len(ports)
    for name in ("s_axis_rc_tdata", "s_axis_cq_tvalid", "m_axis_rq_tready", "m_axis_cc_tready"):
        assert name in ports, name
