"""The GPU model's device queries against an H200 (CUDA 13.0, driver 580):
``cuda_model/probes/device_query.cu`` ran there and printed
``cuda_model/probes/device_query.txt``. The guest's runtime library answers
cudaDeviceGetAttribute and cuDeviceGetAttribute from these values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cuda_model import CudaRuntime, Gpu, cudaDeviceAttr

RECORD = Path(__file__).resolve().parents[2] / "cuda_model" / "probes" / "device_query.txt"


def recorded() -> dict[int, int]:
    """attribute -> value, as the H200 printed them."""
    out = {}
    for m in re.finditer(r"^attr (\d+) = (-?\d+) \(err 0\)$", RECORD.read_text(), re.M):
        out[int(m.group(1))] = int(m.group(2))
    return out


def test_the_record_covers_every_attribute_the_model_knows() -> None:
    """(The record also has the PCI location, which is the machine's, not the GPU's.)"""
    assert {int(a) for a in cudaDeviceAttr} <= set(recorded())


@pytest.mark.parametrize("attr", list(cudaDeviceAttr), ids=lambda a: a.name)
def test_attribute_as_the_h200(attr: cudaDeviceAttr) -> None:
    rt = CudaRuntime(Gpu(vram_size=64 << 20))
    want = recorded()[int(attr)]
    assert rt.cudaDeviceGetAttribute(attr) == want
    assert rt.cuDeviceGetAttribute(int(attr)) == want  # the driver API: same numbers
