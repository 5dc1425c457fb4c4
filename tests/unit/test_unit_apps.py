"""The demo programs' own logic without a simulator: surface images, the mismatch report
and exit status, argument handling."""

from __future__ import annotations

import asyncio

import numpy as np

from tb.apps.programs import AppEnv, _check_surface, expected_surface, run_demo


def make_env() -> tuple[AppEnv, list[str]]:
    lines: list[str] = []
    env = AppEnv(open=None, cuda=None, process=None, out=lines.append, err=lines.append)
    return env, lines


def test_expected_surface_is_the_data_macro():
    s = expected_surface(32, 16)
    # DATA(x, y) = ((y & 0xffff) << 16) | (x & 0xffff), OFFSET(x, y) = y * W + x
    assert s[0] == 0 and s[1] == 1 and s[32] == 0x1_0000 and s[32 * 15 + 31] == 0xF_001F
    assert expected_surface(16, 16, 0xFFFFFFFF)[17] == (0x1_0001 ^ 0xFFFFFFFF)
    assert s.dtype == np.uint32 and s.size == 32 * 16


def test_mismatch_report_and_exit_status():
    env, lines = make_env()
    good = expected_surface(16, 16)
    assert _check_surface(env, good.copy(), 16, 16) == 0 and lines == []
    bad = good.copy()
    bad[0x21] ^= 0x100
    bad[0x40:0x60] = 0xFFFFFFFF
    assert _check_surface(env, bad, 16, 16) == 1
    assert lines[0] == "dst[0x21] is 0x20101 not 0x20001"  # W=16: (x, y) = (1, 2)
    assert lines[1] == "dst[0x40] is 0xffffffff not 0x40000"
    assert len(lines) == 17 and lines[-1] == "... and 17 more mismatching words"
    assert env.results["mismatches"] == 33


def test_bad_arguments_exit_nonzero():
    env, lines = make_env()
    assert asyncio.run(run_demo(env, "rdma-cuda", ["100x16"])) == 1
    assert "multiples of 16" in lines[-1]
    assert asyncio.run(run_demo(env, "set-leds", [])) == 1
    assert asyncio.run(run_demo(env, "rdma-cuda", ["abc"])) == 1
    assert asyncio.run(run_demo(env, "no-such-demo", [])) != 0
