"""The guest's CUDA libraries and NVIDIA's headers agree: ``guest/cuda/abi-probe.c``
prints the layouts and values a program shares with the libraries, built once with
NVIDIA's headers (``make guest-cuda`` installs them into sim_build/cuda) and once with
the project's ``guest/cuda/pevb_cuda.h``; the two must print the same. Without NVIDIA's
headers the test skips, unless ``PEVB_REQUIRE_GUEST=1``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "guest" / "cuda" / "abi-probe.c"


def _nvidia_include() -> Path | None:
    found = sorted(ROOT.glob("sim_build/cuda/venv/lib/python3*/site-packages/nvidia/cu13/include"))
    return found[0] if found and (found[0] / "cuda_runtime_api.h").exists() else None


def _run(tmp: Path, name: str, flags: list[str]) -> str:
    exe = tmp / name
    subprocess.run(["cc", "-o", str(exe), str(PROBE), *flags], check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


def test_pevb_cuda_h_is_cuda_13s_abi(tmp_path: Path) -> None:
    include = _nvidia_include()
    if include is None or shutil.which("cc") is None:
        why = "NVIDIA's headers are not installed (make guest-cuda)"
        if os.environ.get("PEVB_REQUIRE_GUEST") == "1":
            pytest.fail(why)
        pytest.skip(why)
    theirs = _run(tmp_path, "nvidia", ["-DNVIDIA_HEADERS", f"-I{include}"])
    ours = _run(tmp_path, "ours", [f"-I{ROOT / 'guest' / 'cuda'}"])
    assert "sizeof cudaDeviceProp 1008" in theirs
    assert ours.splitlines() == theirs.splitlines()
