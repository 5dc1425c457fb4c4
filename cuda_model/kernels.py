"""Kernels of the picoevb applications, vectorised with numpy, and the registry that
compiled programs' kernels are dispatched to by name (:data:`KERNELS`)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

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


@dataclasses.dataclass(frozen=True)
class RegisteredKernel:
    """A kernel a compiled CUDA program may launch by name (the guest's runtime library
    looks it up by the name nvcc registered): ``params`` is each parameter's size in
    bytes, in order, as the kernel's C declaration (``signature``) lays them out, and
    ``run(rt, grid, block, *args)`` is the model's kernel."""

    name: str
    signature: str
    params: tuple[int, ...]
    run: Callable[..., None]

    def unpack(self, blob: bytes) -> tuple[int, ...]:
        """The arguments from their packed form: each parameter at the next offset
        aligned to its size (the C layout of a struct of them)."""
        args, off = [], 0
        for size in self.params:
            off = (off + size - 1) // size * size
            if off + size > len(blob):
                raise CudaError(
                    cudaError.cudaErrorInvalidValue,
                    f"{self.name}: {len(blob)} bytes of parameters, {self.packed_size} needed",
                )
            args.append(int.from_bytes(blob[off : off + size], "little"))
            off += size
        return tuple(args)

    @property
    def packed_size(self) -> int:
        off = 0
        for size in self.params:
            off = (off + size - 1) // size * size + size
        return off


# the kernels of the model, by name: what a program's kernels are dispatched to
KERNELS: dict[str, RegisteredKernel] = {
    k.name: k
    for k in (
        RegisteredKernel(
            "fill_surface",
            "void fill_surface(uint32_t *output, uint32_t xor_val)",
            (8, 4),
            fill_surface_kernel,
        ),
    )
}


def find_kernel(name: str) -> RegisteredKernel | None:
    """The registered kernel ``name`` names: an ``extern "C"`` name as it is, or a C++
    one by its Itanium-mangled function name (``_Z12fill_surfacePjj``)."""
    kernel = KERNELS.get(name)
    if kernel is not None:
        return kernel
    m = re.match(r"_Z(\d+)", name)
    if m:
        n = int(m.group(1))
        base = name[m.end() : m.end() + n]
        if len(base) == n:
            return KERNELS.get(base)
    return None
