"""cocotb side of ``make bench``'s guest rows, with the GPU on a Linux guest's bus,
free-running (the guest's clock is wall time):

- ``bench_guest_cuda``: a C program's ``cudaMemcpy`` of ``$BENCH_BYTES`` each way on
  the project's CUDA libraries (``pevb-cuda-bench``, timed in the guest), beside the same
  copies through the Python API (:class:`cuda_model.CudaRuntime` on the same GPU model,
  timed here), twice: ``cudaMemcpy`` itself, which takes no simulated time, and the
  stream copy the GPU device runs for the guest's command (``memcpy_to_device``,
  ``memcpy_from_device``), each run to its end through its device time;
- ``bench_guest_rdma``: the project's ``pevb-rdma-cuda`` moving ``$BENCH_BYTES`` GPU ->
  FPGA -> GPU through the RTL, the whole guest run's wall time.

Each writes its figures to ``$BENCH_OUT``.
"""

from __future__ import annotations

import json
import os
import re
import time

import cocotb
import numpy as np

from cuda_model import CudaRuntime
from cuda_model.runtime import cudaMemcpyKind

from ..env.system import TB
from ..guest.boot import GPU_KO, PEVB_KO, run_to_end
from ..guest.boot import GUEST_SOURCES as GUEST
from ..guest.uml import TOOLS

RUNS = 8  # copies each way, after one that is not timed
WALL_LIMIT_S = 900


def _python_copies(tb: TB, size: int) -> dict[str, float]:
    """ns per copy of ``size`` bytes each way through the Python API, wall time."""
    rt = CudaRuntime(tb.gpu)
    ptr = rt.cudaMalloc(size)
    host = (np.arange(size, dtype=np.uint32) * 7).astype(np.uint8)
    back = np.zeros(size, dtype=np.uint8)
    out = {}
    for way, dst, src, kind in (
        ("HtoD", ptr, host, cudaMemcpyKind.cudaMemcpyHostToDevice),
        ("DtoH", back, ptr, cudaMemcpyKind.cudaMemcpyDeviceToHost),
    ):
        rt.cudaMemcpy(dst, src, size, kind)
        t0 = time.perf_counter()
        for _ in range(RUNS):
            rt.cudaMemcpy(dst, src, size, kind)
        out[way] = (time.perf_counter() - t0) * 1e9 / RUNS
    assert np.array_equal(back, host), "the Python API's copies came back wrong"
    rt.cudaFree(ptr)
    return out


async def _python_stream_copies(tb: TB, size: int) -> dict[str, float]:
    """ns per copy of ``size`` bytes each way as the GPU device makes them for a guest's
    command, each run to its end in simulated time (``stream_synchronize``), wall time:
    the steady state of a loop of them, as the guest's loop is (its H2D copies return
    once staged, and each runs while the next is on its way)."""
    rt = CudaRuntime(tb.gpu)
    ptr = rt.cudaMalloc(size)
    host = (np.arange(size, dtype=np.uint32) * 7).astype(np.uint8).tobytes()
    got: list[bytes] = []
    out = {}
    for way in ("HtoD", "DtoH"):
        for timed in (False, True):
            t0 = time.perf_counter()
            for _ in range(RUNS if timed else 1):
                if way == "HtoD":
                    rt.memcpy_to_device(ptr, host, 0)
                else:
                    rt.memcpy_from_device(ptr, size, 0, got.append)
                await rt.stream_synchronize(0)
            if timed:
                out[way] = (time.perf_counter() - t0) * 1e9 / RUNS
    assert got[-1] == host, "the Python API's stream copies came back wrong"
    rt.cudaFree(ptr)
    return out


@cocotb.test(timeout_time=60000, timeout_unit="ms")
async def bench_guest_cuda(dut):
    """``cudaMemcpy`` from a C program in the guest beside the Python API's."""
    size = int(os.environ.get("BENCH_BYTES", str(1 << 20)))
    tb = TB(dut)
    python = _python_copies(tb, size)
    stream = await _python_stream_copies(tb, size)
    program = [str(TOOLS / "pevb-cuda-bench"), str(RUNS), str(size)]
    command = ["/bin/sh", str(GUEST / "tests" / "cuda.sh"), str(TOOLS), str(GPU_KO), *program]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, gpu=True, time="free")
    guest = {
        m[1]: float(m[2])
        for m in re.finditer(r"pevb-cuda-bench: (HtoD|DtoH) \d+ B: (\d+) ns per copy", console)
    }
    assert set(guest) == {"HtoD", "DtoH"}, bridge.guest.tail(20)
    result = {
        "bytes": size,
        "runs": RUNS,
        "guest_ns": guest,
        "python_ns": python,
        "stream_ns": stream,
    }
    with open(os.environ["BENCH_OUT"], "w") as f:
        json.dump(result, f)


@cocotb.test(timeout_time=600000, timeout_unit="ms")
async def bench_guest_rdma(dut):
    """The project's rdma-cuda demo in the guest: its wall time from boot to exit."""
    size = int(os.environ.get("BENCH_BYTES", str(4 << 20)))
    t0 = time.perf_counter()
    tb = TB(dut)
    program = [str(TOOLS / "pevb-rdma-cuda"), "-s", str(size)]
    command = ["/bin/sh", str(GUEST / "tests" / "rdma.sh"), str(TOOLS), str(GPU_KO)]
    command = [*command, str(PEVB_KO), *program]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, gpu=True, time="free")
    wall = time.perf_counter() - t0
    assert f"GPU -> FPGA -> GPU: {size} bytes verified" in console, bridge.guest.tail(20)
    with open(os.environ["BENCH_OUT"], "w") as f:
        json.dump({"bytes": size, "wall_s": wall}, f)
