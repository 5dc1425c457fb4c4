"""What an nv-p2p pin covers and when it is revoked, as NVIDIA's driver has it.

The evidence (docs/gpu-model.md's "Pin granularity" lists it too):

- NVIDIA's resource manager (open-gpu-kernel-modules, ``src/nvidia/src/kernel/gpu/bus/
  third_party_p2p.c``) keeps third-party mappings per registered video-memory
  allocation: ``CliGetThirdPartyP2PVidmemInfoFromAddress`` finds the allocation holding
  a pin's first byte and refuses (NV_ERR_INVALID_ARGUMENT, -EINVAL) a range running past
  its end; the free callbacks fire from ``CliDelThirdPartyP2PVidmemInfo``, which
  ``vidmemDestruct`` reaches (``CliUnregisterMemoryFromThirdPartyP2P``) when that
  allocation is destroyed, not when a buffer carved from it is freed.
- What CUDA allocates from the resource manager, measured on the H100
  (``cuda_model/probes/pool_release.cu``, output ``pool_release.txt``, which also records
  that SYNC_MEMOPS is each buffer's own and set by a P2P_TOKENS query): a small buffer
  freed beside a live one gives no VRAM back (its 2 MiB pool chunk stays), the last
  buffer of a chunk gives the whole 2 MiB back, a large buffer its own range.
- gdrcopy's sanity tests, which pass on NVIDIA's GPUs: ``basic_unaligned_mapping`` pins a
  4-byte buffer rounded out to its 64 KiB page and a 64 KiB + 4 B buffer rounded out to
  two pages (over a neighbour), both succeed; ``invalidation_access_after_free`` frees a
  lone small buffer and finds its mapping revoked.

So a pin lies inside one pool chunk or one large buffer and lives as long as that does.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from cuda_model import (
    GPU_PAGE_SIZE,
    CudaError,
    CudaRuntime,
    CUpointer_attribute,
    Gpu,
    NvidiaP2P,
    PinState,
    cudaError,
    cudaMemcpyKind,
)
from cuda_model.errors import EINVAL
from tests.unit.test_unit_cuda_model import pin

MiB = 1 << 20
KiB = 1 << 10
CHUNK = 2 * MiB
H2D = cudaMemcpyKind.cudaMemcpyHostToDevice
RECORD = Path(__file__).resolve().parents[2] / "cuda_model" / "probes" / "pool_release.txt"


def fresh() -> tuple[Gpu, CudaRuntime, NvidiaP2P]:
    gpu = Gpu(vram_size=1 << 30, bar1_size=256 * MiB)
    return gpu, CudaRuntime(gpu), NvidiaP2P(gpu)


def model_run() -> list[str]:
    """pool_release.cu on the model: each scenario on a fresh GPU, as the probe's fork."""
    out: list[str] = []

    def touch(what: str, rt: CudaRuntime, ptr: int) -> None:
        try:
            rt.cudaMemset(ptr, 0x5A, 16)
            mset = 0
        except CudaError as e:
            mset = int(e.code)
        rt.cudaDeviceSynchronize()  # raises on a (sticky) fault, which would fail the test
        out.append(f"{what}: memset {mset}, synchronize 0 cudaSuccess")

    def back(what: str, rt: CudaRuntime, held: int) -> None:
        out.append(f"{what}: vram back {(rt.cudaMemGetInfo()[0] - held) // KiB} KiB")

    def lone(what: str, size: int) -> None:
        _, rt, _ = fresh()
        a = rt.cudaMalloc(size)
        held = rt.cudaMemGetInfo()[0]
        rt.cudaFree(a)
        back(what, rt, held)
        touch(what, rt, a)

    lone("lone 4 KiB freed", 4096)

    _, rt, _ = fresh()
    a, b = rt.cudaMalloc(4096), rt.cudaMalloc(4096)
    held = rt.cudaMemGetInfo()[0]
    rt.cudaFree(a)
    what = "4 KiB freed, neighbour live"
    back(what, rt, held)
    out.append(f"{what}: same chunk {'yes' if a >> 21 == b >> 21 else 'no'}")
    touch(what, rt, a)

    _, rt, _ = fresh()
    a, b = rt.cudaMalloc(4096), rt.cudaMalloc(65536)
    held = rt.cudaMemGetInfo()[0]
    rt.cudaFree(a)
    rt.cudaFree(b)
    back("chunk emptied", rt, held)
    touch("chunk emptied", rt, b)
    c = rt.cudaMalloc(4096)
    out.append(f"chunk emptied: next 4 KiB {'same' if c == a else 'another'} address")

    _, rt, _ = fresh()
    a = rt.cudaMalloc(4 * MiB)
    held = rt.cudaMemGetInfo()[0]
    rt.cudaFree(a)
    back("4 MiB freed", rt, held)
    try:
        rt.cudaMemcpy(a, bytes(16), 16, H2D)
        code = cudaError.cudaSuccess
    except CudaError as e:
        code = cudaError(e.code)
    out.append(f"4 MiB freed: H2D copy {int(code)} {code.name}")
    touch("4 MiB freed", rt, a)

    lone("lone 64 KiB cuMemFree", 65536)  # the driver API's allocator is the same

    # SYNC_MEMOPS is each buffer's own, off by default, and set by a P2P_TOKENS query
    _, rt, _ = fresh()
    sync = CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS
    a = rt.cudaMalloc(4096)
    out.append(f"SYNC_MEMOPS of a new 4 KiB buffer: {rt.cuPointerGetAttribute(sync, a)}")
    c = rt.cudaMalloc(4 * MiB)
    out.append(f"SYNC_MEMOPS of a new 4 MiB buffer: {rt.cuPointerGetAttribute(sync, c)}")
    b = rt.cudaMalloc(4096)
    rt.cuPointerSetAttribute(1, sync, b)
    out.append(
        f"SYNC_MEMOPS set on a neighbour: 0, the buffer's now "
        f"{rt.cuPointerGetAttribute(sync, a)}, the neighbour's {rt.cuPointerGetAttribute(sync, b)}"
    )
    d = rt.cudaMalloc(4096)
    out.append(f"SYNC_MEMOPS of the next 4 KiB buffer: {rt.cuPointerGetAttribute(sync, d)}")
    rt.cuPointerSetAttribute(1, sync, c)
    out.append(
        f"SYNC_MEMOPS set on the 4 MiB buffer: 0, the small buffers' "
        f"{rt.cuPointerGetAttribute(sync, a)} {rt.cuPointerGetAttribute(sync, d)}"
    )
    _, rt, _ = fresh()
    a = rt.cudaMalloc(4096)
    rt.cuPointerSetAttribute(1, sync, a + 64)
    rt.cudaFree(a)
    a2, n = rt.cudaMalloc(4096), rt.cudaMalloc(4096)
    out.append(
        f"SYNC_MEMOPS after free and reallocation: {'same' if a2 == a else 'another'} address "
        f"{rt.cuPointerGetAttribute(sync, a2)}, the next buffer {rt.cuPointerGetAttribute(sync, n)}"
    )
    _, rt, _ = fresh()
    a = rt.cudaMalloc(4096)
    before = rt.cuPointerGetAttribute(sync, a)
    tokens = rt.cuPointerGetAttribute(CUpointer_attribute.CU_POINTER_ATTRIBUTE_P2P_TOKENS, a)
    out.append(
        f"SYNC_MEMOPS around a P2P_TOKENS query (0, tokens {'set' if any(tokens) else 'zero'}):"
        f" {before}, then {rt.cuPointerGetAttribute(sync, a)}"
    )
    return out


def recorded() -> list[str]:
    """The recording's lines but the placement one (test_placement_as_on_the_h100)."""
    return [
        ln
        for ln in RECORD.read_text().splitlines()
        if ln and not ln.startswith("#") and not ln.startswith("placement:")
    ]


def placement(line: str) -> list[tuple[int, int, bool]]:
    """``placement:`` entries as (size, offset from the first, on a 2 MiB boundary)."""
    return [
        (int(n), int(off), bool(big))
        for n, off, big in re.findall(r"(\d+) B at ([+-]\d+)( \(2 MiB\))?", line)
    ]


def test_placement_as_on_the_h100():
    """Successive cudaMalloc buffers (pool_release.txt, placement): below 2 MiB packed in
    512 B granules from the first chunk's start; 2 MiB and up on 2 MiB boundaries (where
    in the VA space is the allocator's business: those offsets are not compared)."""
    (line,) = [ln for ln in RECORD.read_text().splitlines() if ln.startswith("placement:")]
    want = placement(line)
    _, rt, _ = fresh()
    ptrs = [rt.cudaMalloc(n) for n, _, _ in want]
    got = [(n, p - ptrs[0], p % CHUNK == 0) for (n, _, _), p in zip(want, ptrs, strict=True)]
    assert [(n, big) for n, _, big in got] == [(n, big) for n, _, big in want]
    small = [(n, off) for n, off, _ in want if n < CHUNK]
    assert [(n, off) for n, off, _ in got if n < CHUNK] == small


@functools.cache
def _model() -> list[str]:
    return model_run()


@pytest.mark.parametrize("line", recorded())
def test_pool_release_as_on_the_h100(line: str):
    """One line of pool_release.txt: the model prints it too."""
    assert line in _model(), f"the H100 printed {line!r}; the model:\n" + "\n".join(_model())


def test_pool_release_covers_the_recording():
    assert _model() == recorded()


def test_pin_rounds_over_a_neighbour_and_outlives_its_free():
    """A small buffer's pin rounds out to its 64 KiB page, over a neighbour (gdrcopy's
    basic_unaligned_mapping pins such ranges). Freeing the neighbour frees no
    resource-manager allocation (pool_release.txt: no VRAM back), so no callback fires
    and the pin stays: a peer then reaches the freed bytes, and whatever buffer reuses
    them - the hazard a driver must avoid by pinning only what it owns."""
    gpu, rt, p2p = fresh()
    a, b = rt.cudaMalloc(4096), rt.cudaMalloc(4096)
    va = a & ~(GPU_PAGE_SIZE - 1)
    rc, pt, cb = pin(p2p, va, GPU_PAGE_SIZE)
    assert rc == 0
    rt.cudaFree(b)
    assert cb.calls == [] and p2p.pin_of(pt).state is PinState.LIVE
    c = rt.cudaMalloc(4096)
    assert c == b  # the freed spot is reused
    rt.cudaMemcpy(c, b"\x99" * 16, 16, H2D)
    rt.cudaDeviceSynchronize()
    assert gpu.bar1_read(pt.pages[0].physical_address + (c - va), 16) == b"\x99" * 16
    assert gpu.bar1_write(pt.pages[0].physical_address + (c - va), b"\x11" * 4)
    out = bytearray(4)
    rt.cudaMemcpy(out, c, 4, cudaMemcpyKind.cudaMemcpyDeviceToHost)
    assert out == b"\x11" * 4  # a peer write lands in the new buffer


def test_last_buffer_of_a_chunk_revokes_every_pin_on_it():
    """The chunk goes with its last buffer (pool_release.txt: 2 MiB back), so every
    callback pin inside it is revoked then (gdrcopy's invalidation_access_after_free:
    the lone buffer's mapping is gone after cuMemFree), whichever buffer it was for."""
    gpu, rt, p2p = fresh()
    a, b = rt.cudaMalloc(4096), rt.cudaMalloc(200 * KiB)
    _, pt_a, cb_a = pin(p2p, a & ~(GPU_PAGE_SIZE - 1), GPU_PAGE_SIZE, "a")
    b_page = -(-b // GPU_PAGE_SIZE) * GPU_PAGE_SIZE
    _, pt_b, cb_b = pin(p2p, b_page, GPU_PAGE_SIZE, "b")
    bar1_free = gpu.bar1_free_bytes
    rt.cudaFree(a)  # b still lives in the chunk
    assert cb_a.calls == [] and cb_b.calls == []
    rt.cudaFree(b)
    assert cb_a.calls == ["a"] and cb_b.calls == ["b"]
    assert p2p.pin_of(pt_a) is None and p2p.pin_of(pt_b) is None  # tables freed
    assert gpu.bar1_free_bytes == bar1_free + 2 * GPU_PAGE_SIZE
    assert gpu.bar1_read(pt_b.pages[0].physical_address, 4) is None
    assert gpu.fault_log[-1].reason.startswith("revoked")


def test_pin_must_lie_inside_one_allocation():
    """third_party_p2p.c: a range past the end of the allocation holding its first byte
    is NV_ERR_INVALID_ARGUMENT (-EINVAL), even when the next VA is device memory too;
    freed bytes inside a live chunk can be pinned (the allocation is the chunk)."""
    _gpu, rt, p2p = fresh()
    big1, big2 = rt.cudaMalloc(CHUNK), rt.cudaMalloc(CHUNK)
    assert big2 == big1 + CHUNK  # adjacent in VA
    assert pin(p2p, big1 + CHUNK - GPU_PAGE_SIZE, 2 * GPU_PAGE_SIZE)[0] == -EINVAL
    assert pin(p2p, big1 + CHUNK - GPU_PAGE_SIZE, GPU_PAGE_SIZE)[0] == 0
    small = rt.cudaMalloc(4096)
    chunk = small & ~(CHUNK - 1)
    assert pin(p2p, chunk + CHUNK - GPU_PAGE_SIZE, GPU_PAGE_SIZE)[0] == 0  # nothing there
    assert pin(p2p, chunk, CHUNK + GPU_PAGE_SIZE)[0] == -EINVAL
    assert pin(p2p, chunk, CHUNK)[0] == 0
    rt.cudaFree(big2)
    assert pin(p2p, big2, GPU_PAGE_SIZE)[0] == -EINVAL  # freed with its range


def test_persistent_pin_keeps_a_released_chunk_in_vram():
    """A persistent pin holds the memory behind it past the free (the resource manager
    keeps its own reference): the chunk's VA goes, its pinned page stays readable and
    counted as used until put_pages_persistent."""
    gpu, rt, p2p = fresh()
    a = rt.cudaMalloc(4096)
    rt.cudaMemset(a, 0x42, 4096)
    rt.cudaDeviceSynchronize()
    rc, pt = p2p.nvidia_p2p_get_pages_persistent(a & ~(GPU_PAGE_SIZE - 1), GPU_PAGE_SIZE)
    assert rc == 0
    before = gpu.vram_free_bytes
    rt.cudaFree(a)
    assert gpu.vram_free_bytes == before + CHUNK - GPU_PAGE_SIZE  # one page held
    assert gpu.bar1_read(pt.pages[0].physical_address + (a % GPU_PAGE_SIZE), 4) == b"\x42" * 4
    assert p2p.nvidia_p2p_put_pages_persistent(a & ~(GPU_PAGE_SIZE - 1), pt) == 0
    assert gpu.vram_free_bytes == before + CHUNK
