"""The GPU model against CUDA 13.0 on an H100, line by line.

``cuda_model/probes/edge_cases.cu`` was run on an H100 80GB (driver 580.159.04, CUDA
13.0); its output is ``cuda_model/probes/edge_cases.txt``. :func:`model_run` is the
same program against the model, in the same order (the probe's state carries from call
to call: a pointer freed early is used later). Each recorded line is one test, named by
the call it reports: the model must print exactly what the GPU did.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from cuda_model import (
    CUDA_VERSION,
    DRIVER_BRANCH,
    CudaError,
    CudaRuntime,
    CUpointer_attribute,
    CUresult,
    Gpu,
    cudaDeviceAttr,
    cudaError,
    cudaMemcpyKind,
)

PROBES = Path(__file__).resolve().parents[2] / "cuda_model" / "probes"
RECORD = PROBES / "edge_cases.txt"
D2H = cudaMemcpyKind.cudaMemcpyDeviceToHost
MALLOC_POINTER = 0x7F00_0000_1000  # a pointer from the C library's malloc
GPUDIRECT_ATTRIBUTES = (
    cudaDeviceAttr.cudaDevAttrGPUDirectRDMASupported,
    cudaDeviceAttr.cudaDevAttrGPUDirectRDMAFlushWritesOptions,
    cudaDeviceAttr.cudaDevAttrGPUDirectRDMAWritesOrdering,
)


def recorded() -> dict[str, str]:
    """The probe's output: label -> what followed it."""
    out: dict[str, str] = {}
    for line in RECORD.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("runtime "):
            out["versions"] = line
            continue
        label, _, value = line.partition(": ")
        out[label] = value
    return out


def code_name(code: int, driver: bool) -> str:
    enum = CUresult if driver else cudaError
    return f"{int(code)} {enum(code).name}"


def model_run() -> dict[str, str]:
    """edge_cases.cu, line for line, on the model."""
    gpu = Gpu(vram_size=1 << 30, bar1_size=256 << 20)
    rt = CudaRuntime(gpu)
    out: dict[str, str] = {}

    def show(label: str, call: Callable[[], object], driver: bool = False) -> object:
        try:
            result = call()
            # the calls that return their error (cudaGetLastError...) rather than raise
            code = int(result) if isinstance(result, cudaError) else 0
        except CudaError as e:
            result, code = None, int(e.code)
        out[label] = code_name(code, driver)
        return result

    def launch(grid, block, kernel=lambda *a: None, *args) -> None:
        try:
            rt.launch(kernel, grid, block, *args)
        except CudaError:
            pass  # void in C: the error is the next cudaGetLastError's

    out["versions"] = f"runtime {rt.cudaRuntimeGetVersion()} driver {rt.cudaDriverGetVersion()}"
    p = show("cudaMalloc(0)", lambda: rt.cudaMalloc(0))
    out["cudaMalloc(0) pointer"] = "NULL" if p == 0 else "not NULL"
    show("cudaMalloc(1<<62)", lambda: rt.cudaMalloc(1 << 62))
    show("cudaFree(NULL)", lambda: rt.cudaFree(0))
    d = show("cudaMalloc(4096)", lambda: rt.cudaMalloc(4096))
    show("cudaFree(interior)", lambda: rt.cudaFree(d + 256))
    show("cudaFree(malloc pointer)", lambda: rt.cudaFree(MALLOC_POINTER))
    rng = show("cuMemGetAddressRange(interior)", lambda: rt.cuMemGetAddressRange(d + 100), True)
    base, size = rng
    out["cuMemGetAddressRange(interior) base"] = (
        f"{'the allocation' + chr(39) + 's' if base == d else 'other'} size: {size}"
    )
    show("cudaFree(d)", lambda: rt.cudaFree(d))
    show("cudaFree(d) again", lambda: rt.cudaFree(d))
    show("cuMemGetAddressRange(freed)", lambda: rt.cuMemGetAddressRange(d), True)
    show("cuMemGetAddressRange(never allocated)", lambda: rt.cuMemGetAddressRange(0x10), True)
    for what, ptr in (("freed", d), ("malloc pointer", MALLOC_POINTER), ("NULL", 0)):
        attr = show(
            f"cudaPointerGetAttributes({what})", lambda ptr=ptr: rt.cudaPointerGetAttributes(ptr)
        )
        out[f"cudaPointerGetAttributes({what}) type"] = str(int(attr.type))
    show(
        "cuPointerGetAttribute(MEMORY_TYPE, freed)",
        lambda: rt.cuPointerGetAttribute(CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d),
        True,
    )
    hbuf = bytearray(64)
    e = rt.cudaMalloc(64)
    out["cudaMalloc(64) after cudaFree(d)"] = (
        f"{'d' + chr(39) + 's' if e == d else 'another'} address"
    )
    show("cudaMemcpy(count 0, NULL, NULL)", lambda: rt.cudaMemcpy(0, 0, 0, D2H))
    show("cudaMemcpy(kind 7)", lambda: rt.cudaMemcpy(hbuf, e, 16, 7))
    show("cudaMemcpy(D2H beyond the allocation)", lambda: rt.cudaMemcpy(hbuf, e + 32, 64, D2H))
    show("cudaMemset(freed, reused)", lambda: rt.cudaMemset(d, 0, 16))
    show("cudaMemset(count 0, NULL)", lambda: rt.cudaMemset(0, 0, 0))
    h = show("cudaHostAlloc(0)", lambda: rt.cudaHostAlloc(0))
    out["cudaHostAlloc(0) pointer"] = "NULL" if h == 0 else "not NULL"
    show("cudaHostAlloc(flags 0x100)", lambda: rt.cudaHostAlloc(4096, 0x100))
    show("cudaFreeHost(NULL)", lambda: rt.cudaFreeHost(0))
    show("cudaFreeHost(device pointer)", lambda: rt.cudaFreeHost(e))
    h = show("cudaHostAlloc(4096)", lambda: rt.cudaHostAlloc(4096))
    show("cudaFreeHost(interior)", lambda: rt.cudaFreeHost(h + 16))
    show("cudaFreeHost(h)", lambda: rt.cudaFreeHost(h))
    show("cudaFreeHost(h) again", lambda: rt.cudaFreeHost(h))
    show("cudaFree(cudaHostAlloc pointer)", lambda: rt.cudaFree(h))
    g = rt.cudaMalloc(4096)
    H2D = cudaMemcpyKind.cudaMemcpyHostToDevice
    D2D = cudaMemcpyKind.cudaMemcpyDeviceToDevice
    show("cudaMemcpy(H2D into freed, reused memory)", lambda: rt.cudaMemcpy(d, hbuf, 16, H2D))
    show("cudaMemcpy(D2H from freed, reused memory)", lambda: rt.cudaMemcpy(hbuf, d, 16, D2H))
    show("cudaMemcpy(H2D beyond the allocation)", lambda: rt.cudaMemcpy(g + 4090, hbuf, 16, H2D))
    show("cudaMemset(beyond the allocation)", lambda: rt.cudaMemset(g + 4090, 0, 16))
    show("cudaMemcpy(D2D overlapping)", lambda: rt.cudaMemcpy(g + 8, g, 64, D2D))
    rdma = cudaDeviceAttr.cudaDevAttrGPUDirectRDMASupported
    show("cudaDeviceGetAttribute(device 1)", lambda: rt.cudaDeviceGetAttribute(rdma, 1))
    show("cudaDeviceGetAttribute(attribute 100000)", lambda: rt.cudaDeviceGetAttribute(100000))
    sync = CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS
    show(
        "cuPointerSetAttribute(SYNC_MEMOPS, malloc pointer)",
        lambda: rt.cuPointerSetAttribute(1, sync, MALLOC_POINTER),
        True,
    )
    show(
        "cuPointerSetAttribute(SYNC_MEMOPS, interior)",
        lambda: rt.cuPointerSetAttribute(1, sync, g + 64),
        True,
    )
    buffer_id = CUpointer_attribute.CU_POINTER_ATTRIBUTE_BUFFER_ID
    id1 = rt.cuPointerGetAttribute(buffer_id, g)
    rt.cudaFree(g)
    g2 = rt.cudaMalloc(4096)
    id2 = rt.cuPointerGetAttribute(buffer_id, g2)
    out["cudaMalloc after cudaFree, same size"] = (
        f"{'same' if g2 == g else 'another'} address, {'new' if id2 != id1 else 'same'} buffer ID"
    )
    id3 = show(
        "cuPointerGetAttribute(BUFFER_ID, interior)",
        lambda: rt.cuPointerGetAttribute(buffer_id, g2 + 100),
        True,
    )
    out["cuPointerGetAttribute(BUFFER_ID, interior) value"] = (
        "the allocation's" if id3 == id2 else "other"
    )
    hp = show("cudaHostAlloc(Portable|Mapped|WriteCombined)", lambda: rt.cudaHostAlloc(4096, 7))
    show("cudaHostAlloc(flags 0x8)", lambda: rt.cudaHostAlloc(4096, 0x8))
    H2H = cudaMemcpyKind.cudaMemcpyHostToHost
    show("cudaMemcpy(H2H, cudaHostAlloc -> malloc)", lambda: rt.cudaMemcpy(hbuf, hp, 16, H2H))
    show(
        "cudaMemcpy(Default, cudaHostAlloc -> device)",
        lambda: rt.cudaMemcpy(g2, hp, 16, cudaMemcpyKind.cudaMemcpyDefault),
    )
    show("cudaMemcpy(H2D with a device source)", lambda: rt.cudaMemcpy(g2, g2, 16, H2D))
    show("cudaMemcpy(D2H into a device pointer)", lambda: rt.cudaMemcpy(g2, g2, 16, D2H))
    rt.cudaFreeHost(hp)
    live_memory(rt, show, out)
    for label, grid, block in (
        ("launch grid 0", 0, 32),
        ("launch block 0", 1, 0),
        ("launch block 1025", 1, 1025),
        ("launch grid.y 65536", (1, 65536), 1),
        ("launch block.z 65", 1, (1, 1, 65)),
    ):
        launch(grid, block)
        show(label, rt.cudaGetLastError)
    launch(1, 1025)
    show("cudaPeekAtLastError after a bad launch", rt.cudaPeekAtLastError)
    show("cudaGetLastError", rt.cudaGetLastError)
    show("cudaGetLastError again", rt.cudaGetLastError)
    show("cudaDeviceSynchronize after bad launches", rt.cudaDeviceSynchronize)

    def store_at(rt_: CudaRuntime, _g, _b, ptr: int) -> None:
        rt_.kernel_write(ptr, np.array([1], dtype="<i4"))

    launch(1, 1, store_at, 0x10)
    show("launch of a faulting kernel", rt.cudaGetLastError)
    show("cudaDeviceSynchronize after the fault", rt.cudaDeviceSynchronize)
    show("cudaGetLastError after the fault", rt.cudaGetLastError)
    show("cudaMalloc after the fault", lambda: rt.cudaMalloc(64))
    show("cudaMemcpy after the fault", lambda: rt.cudaMemcpy(hbuf, e, 16, D2H))
    show("cudaFree after the fault", lambda: rt.cudaFree(e))
    show("cudaGetLastError at the end", rt.cudaGetLastError)
    return out


def live_memory(rt: CudaRuntime, show: Callable, out: dict[str, str]) -> None:
    """The probe's "attributes of live memory" section."""
    dv, hv = rt.cudaMalloc(4096), rt.cudaHostAlloc(4096)

    def which(got: int, ptr: int) -> str:
        return "self" if got == ptr else ("other" if got else "NULL")

    attrs = (
        ("CONTEXT", "s"),
        ("MEMORY_TYPE", "n"),
        ("DEVICE_POINTER", "p"),
        ("HOST_POINTER", "p"),
        ("P2P_TOKENS", "s"),
        ("SYNC_MEMOPS", "n"),
        ("IS_MANAGED", "n"),
        ("DEVICE_ORDINAL", "n"),
    )
    for name, ptr in (("device", dv), ("interior", dv + 100), ("cudaHostAlloc", hv)):
        label = f"cudaPointerGetAttributes({name})"
        a = show(label, lambda ptr=ptr: rt.cudaPointerGetAttributes(ptr))
        out[f"{label} fields"] = (
            f"type {int(a.type)} device {a.device} devicePointer "
            f"{which(a.devicePointer, ptr)} hostPointer {which(a.hostPointer, ptr)}"
        )
        for attr, how in attrs:
            label = f"cuPointerGetAttribute({attr}, {name})"
            kind = CUpointer_attribute[f"CU_POINTER_ATTRIBUTE_{attr}"]
            v = show(label, lambda ptr=ptr, kind=kind: rt.cuPointerGetAttribute(kind, ptr), True)
            if v is None:
                continue
            first = v[0] if isinstance(v, tuple) else int(v)  # the C buffer's first word
            out[f"{label} value"] = (
                which(first, ptr)
                if how == "p"
                else str(first)
                if how == "n"
                else ("set" if first else "zero")
            )
    show("cuMemGetAddressRange(cudaHostAlloc)", lambda: rt.cuMemGetAddressRange(hv), True)
    rt.cudaFree(dv)
    rt.cudaFreeHost(hv)
    for attr in GPUDIRECT_ATTRIBUTES:  # the rest: test_unit_cuda_device_query
        label = f"cudaDeviceGetAttribute({int(attr)})"
        value = show(label, lambda attr=attr: rt.cudaDeviceGetAttribute(attr))
        out[f"{label} value"] = str(value)


def _value(got: object) -> str:
    return got if isinstance(got, str) else code_name(int(got), False)


@functools.cache
def _model() -> dict[str, str]:
    return {k: _value(v) for k, v in model_run().items()}


@pytest.mark.parametrize("label", list(recorded()))
def test_model_answers_as_the_h100(label: str):
    """One recorded line of edge_cases.txt: the model prints the same."""
    want = recorded()[label]
    got = _model().get(label)
    assert got == want, f"{label}: the H100 printed {want!r}, the model {got!r}"


def test_every_model_line_is_recorded():
    """The model's run and the recording cover the same calls (a probe edited without
    a new recording, or a model line without a measurement, fails here)."""
    assert set(_model()) == set(recorded())


def test_the_model_names_the_cuda_version_it_follows():
    """CUDA 13.0 (13000, as cudaRuntimeGetVersion says on the H100) and driver branch
    580, the recording's (its header and first line)."""
    rec = RECORD.read_text()
    assert f"runtime {CUDA_VERSION} driver {CUDA_VERSION}" in rec
    assert f"driver {DRIVER_BRANCH}." in rec.splitlines()[0]
