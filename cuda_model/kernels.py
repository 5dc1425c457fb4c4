"""Kernels of the picoevb applications, vectorised with numpy."""

from __future__ import annotations

import numpy as np

from .errors import CudaError, cudaError
from .runtime import CudaRuntime

FILL_BLOCK = 16  # the demo's block is 16 x 16 threads


def fill_surface_kernel(
    rt: CudaRuntime, grid: tuple[int, int, int], block: tuple[int, int, int], out: int, xor_val: int
) -> None:
    """``fill_surface``: thread (x, y) writes ``((y & 0xffff) << 16 | (x & 0xffff)) ^ xor``
    at ``out[y * W + x]``, W = gridDim.x * blockDim.x (the surface width)."""
    width, height = grid[0] * block[0], grid[1] * block[1]
    y = np.arange(height, dtype=np.uint32)[:, None]
    x = np.arange(width, dtype=np.uint32)[None, :]
    words = (((y & 0xFFFF) << 16) | (x & 0xFFFF)) ^ np.uint32(xor_val & 0xFFFFFFFF)
    rt.kernel_write(out, words.astype("<u4"))


def fill_surface(rt: CudaRuntime, out: int, xor_val: int, width: int, height: int) -> None:
    """Launch fill_surface over a ``width`` x ``height`` surface of 32-bit words, with the
    demo's grid (W/16, H/16) and block (16, 16). W and H must be >= 16 and multiples of 16."""
    for name, v in (("width", width), ("height", height)):
        if v < FILL_BLOCK or v % FILL_BLOCK:
            raise CudaError(
                cudaError.cudaErrorInvalidValue,
                f"fill_surface {name} {v} must be >= 16 and a multiple of 16",
            )
    rt.launch(
        fill_surface_kernel,
        (width // FILL_BLOCK, height // FILL_BLOCK),
        (FILL_BLOCK, FILL_BLOCK),
        out,
        xor_val,
    )


def surface_word(x: int, y: int, xor_val: int = 0) -> int:
    """The value fill_surface writes at (x, y) (the DATA(x, y) macro of the demo)."""
    return (((y & 0xFFFF) << 16) | (x & 0xFFFF)) ^ (xor_val & 0xFFFFFFFF)
