"""Unit tests of the GPU model: CUDA calls, placement, nv-p2p pinning and BAR1 (no simulator)."""

from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest

from cuda_model import (
    GPU_PAGE_SIZE,
    NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING,
    CallbackPending,
    CudaError,
    CudaRuntime,
    CUpointer_attribute,
    CUresult,
    Gpu,
    MemoryType,
    NvidiaP2P,
    PeerDevice,
    PinState,
    cudaDeviceAttr,
    cudaError,
    cudaMemcpyKind,
    fill_surface,
    surface_word,
)
from cuda_model.errors import EINVAL, ENOMEM, ENOTSUPP
from cuda_model.gpu import BAR1_PIN_RESERVE, GH100_BOOT_0

MiB = 1 << 20
H2D = cudaMemcpyKind.cudaMemcpyHostToDevice
D2H = cudaMemcpyKind.cudaMemcpyDeviceToHost
D2D = cudaMemcpyKind.cudaMemcpyDeviceToDevice
SYNC = CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS


@pytest.fixture
def env():
    gpu = Gpu(vram_size=1 << 30, bar1_size=256 * MiB)
    return gpu, CudaRuntime(gpu), NvidiaP2P(gpu)


def d2h(rt: CudaRuntime, ptr: int, n: int) -> bytes:
    out = bytearray(n)
    rt.cudaMemcpy(out, ptr, n, D2H)
    return bytes(out)


class Callback:
    """A free callback that records its calls and frees the page table, like picoevb."""

    def __init__(self, p2p: NvidiaP2P) -> None:
        self.p2p, self.calls, self.table, self.rc = p2p, [], None, None

    def __call__(self, data) -> None:
        self.calls.append(data)
        self.rc = self.p2p.nvidia_p2p_free_page_table(self.table)


def pin(p2p: NvidiaP2P, va: int, length: int, data="surf"):
    cb = Callback(p2p)
    rc, pt = p2p.nvidia_p2p_get_pages(0, 0, va, length, cb, data)
    cb.table = pt
    return rc, pt, cb


# ---------------------------------------------------------------- CUDA runtime
def test_small_allocations_are_suballocated_like_an_h100(env):
    _gpu, rt, _ = env
    ptrs = [rt.cudaMalloc(n) for n in (1, 4096, 65536, 65537)]
    assert [b - a for a, b in itertools.pairwise(ptrs)] == [512, 4096, 65536]
    assert ptrs[1] % GPU_PAGE_SIZE == 512  # a 4 KiB buffer 512 B into a 64 KiB page
    big = [rt.cudaMalloc(n) for n in (2 * MiB, 3 * MiB, 2 * MiB + 1)]
    assert all(p % (2 * MiB) == 0 for p in big)


def test_malloc_free_errors(env):
    gpu, rt, _ = env
    # (size 0 and the measured edge cases: tests/unit/test_unit_cuda_fidelity.py)
    for bad in (-1, 2 << 30):  # a huge size_t; more than the 1 GiB of VRAM
        with pytest.raises(CudaError) as e:
            rt.cudaMalloc(bad)
        assert e.value.code is cudaError.cudaErrorMemoryAllocation
    p = rt.cudaMalloc(100)
    with pytest.raises(CudaError) as e:
        rt.cudaFree(p + 4)  # interior pointer
    assert e.value.code is cudaError.cudaErrorInvalidValue
    rt.cudaFree(p)
    with pytest.raises(CudaError):
        rt.cudaFree(p)  # double free
    rt.cudaFree(0)  # no-op
    # VRAM comes back: allocate almost all of it twice
    for _ in range(2):
        q = rt.cudaMalloc(1000 * MiB)
        rt.cudaFree(q)
    assert gpu.find_allocation(p) is None


def test_memcpy_memset_and_directions(env):
    _gpu, rt, _ = env
    a, b = rt.cudaMalloc(10000), rt.cudaMalloc(10000)
    src = np.random.default_rng(1).integers(0, 256, 10000, dtype=np.uint8)
    rt.cudaMemcpy(a, src, 10000, H2D)
    rt.cudaMemcpy(b, a, 10000, D2D)
    assert d2h(rt, b, 10000) == src.tobytes()
    rt.cudaMemset(b + 10, 0xAB, 20)
    got = d2h(rt, b, 10000)
    assert got[10:30] == b"\xab" * 20 and got[:10] == src.tobytes()[:10]
    assert got[30:] == src.tobytes()[30:]
    out = bytearray(16)
    rt.cudaMemcpy(out, a, 16, cudaMemcpyKind.cudaMemcpyDefault)  # inferred D2H
    assert bytes(out) == src.tobytes()[:16]
    with pytest.raises(CudaError) as e:
        rt.cudaMemcpy(a, src, 10001, H2D)  # host buffer too small
    assert e.value.code is cudaError.cudaErrorInvalidValue
    with pytest.raises(CudaError) as e:
        rt.cudaMemcpy(a + 9000, src, 2000, H2D)  # overruns the allocation
    assert e.value.code is cudaError.cudaErrorInvalidValue
    with pytest.raises(CudaError) as e:
        rt.cudaMemcpy(a, src, 16, 7)
    assert e.value.code is cudaError.cudaErrorInvalidMemcpyDirection
    with pytest.raises(CudaError) as e:
        rt.cudaMemset(a + 9000, 0, 2000)  # overruns a live allocation (not measured)
    assert e.value.code is cudaError.cudaErrorInvalidValue


def test_async_work_lands_at_sync_points_unless_sync_memops(env):
    gpu, rt, _ = env
    a = rt.cudaMalloc(4096)
    rt.cudaMemset(a, 0x5A, 4096)
    assert gpu.read_va(a, 4)[0] == 0  # a peer would still see the old bytes
    assert rt.pending == 1
    rt.cudaDeviceSynchronize()
    assert gpu.read_va(a, 4)[0] == 0x5A and rt.pending == 0
    rt.cuPointerSetAttribute(1, SYNC, a)
    rt.cudaMemset(a, 0x33, 4096)  # synchronous now
    assert gpu.read_va(a, 1)[0] == 0x33
    rt.cudaMemcpy(a, b"\x01\x02", 2, H2D)
    assert bytes(gpu.read_va(a, 2)) == b"\x01\x02"


def test_each_context_synchronises_its_own_work_before_a_free(env):
    """Two contexts on one GPU (two processes): a cudaFree completes the freeing
    context's queued work first, and leaves the other's queued until it synchronises."""
    gpu, rt, _ = env
    other = CudaRuntime(gpu)
    a, b, c = rt.cudaMalloc(4096), other.cudaMalloc(4096), rt.cudaMalloc(4096)
    rt.cudaMemset(a, 0x5A, 4096)
    other.cudaMemset(b, 0x11, 4096)
    rt.cudaFree(c)
    assert gpu.read_va(a, 1)[0] == 0x5A and rt.pending == 0
    assert gpu.read_va(b, 1)[0] == 0 and other.pending == 1
    other.cudaFree(b)
    assert other.pending == 0


def test_pointer_attributes_and_address_range(env):
    _gpu, rt, _ = env
    d = rt.cudaMalloc(3 * MiB)
    h = rt.cudaHostAlloc(8192)
    assert rt.cuPointerGetAttribute(SYNC, d) == 0
    rt.cuPointerSetAttribute(1, SYNC, d)
    assert rt.cuPointerGetAttribute(SYNC, d + 100) == 1
    mt = CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE
    assert rt.cuPointerGetAttribute(mt, d) == MemoryType.CU_MEMORYTYPE_DEVICE
    assert rt.cuPointerGetAttribute(mt, h) == MemoryType.CU_MEMORYTYPE_HOST
    assert rt.cuMemGetAddressRange(d + 12345) == (d, 3 * MiB)
    with pytest.raises(CudaError) as e:
        rt.cuPointerGetAttribute(SYNC, 0xDEAD0000)
    assert e.value.code is CUresult.CUDA_ERROR_INVALID_VALUE
    with pytest.raises(CudaError):
        rt.cuPointerSetAttribute(1, mt, d)  # read-only attribute
    assert rt.cudaDeviceGetAttribute(cudaDeviceAttr.cudaDevAttrGPUDirectRDMASupported) == 1
    assert rt.cudaDeviceGetAttribute(cudaDeviceAttr.cudaDevAttrGPUDirectRDMAWritesOrdering) == 100


def test_host_alloc_roundtrip(env):
    _gpu, rt, _ = env
    h = rt.cudaHostAlloc(4096)
    d = rt.cudaMalloc(4096)
    rt.host_buffer(h)[:4] = b"abcd"
    rt.cudaMemcpy(d, h, 4, H2D)
    h2 = rt.cudaHostAlloc(4096)
    rt.cudaMemcpy(h2, d, 4, D2H)
    assert bytes(rt.host_buffer(h2)[:4]) == b"abcd"
    rt.cudaFreeHost(h)
    with pytest.raises(CudaError):
        rt.cudaFreeHost(d)  # device memory is not host memory


@pytest.mark.parametrize("w,h,xor", [(1024, 1024, 0), (16, 16, 0xFFFFFFFF), (48, 32, 0x1234)])
def test_fill_surface_values(env, w, h, xor):
    _gpu, rt, _ = env
    s = rt.cudaMalloc(w * h * 4)
    fill_surface(rt, s, xor, w, h)
    rt.cudaDeviceSynchronize()
    words = np.frombuffer(d2h(rt, s, w * h * 4), dtype="<u4").reshape(h, w)
    y, x = np.mgrid[0:h, 0:w].astype(np.uint32)
    assert np.array_equal(words, (((y & 0xFFFF) << 16) | (x & 0xFFFF)) ^ np.uint32(xor))
    if (w, h, xor) == (1024, 1024, 0):  # values measured on an H100
        flat = words.reshape(-1)
        assert (flat[0], flat[1], flat[1024], flat[-1]) == (0, 1, 0x10000, 0x03FF03FF)
    assert surface_word(w - 1, h - 1, xor) == int(words[-1, -1])


def test_fill_surface_configuration_errors(env):
    _gpu, rt, _ = env
    s = rt.cudaMalloc(64 * 64 * 4)
    for w, h in ((8, 16), (16, 8), (24, 16), (16, 40)):
        with pytest.raises(CudaError) as e:
            fill_surface(rt, s, 0, w, h)
        assert e.value.code is cudaError.cudaErrorInvalidValue
    with pytest.raises(CudaError) as e:
        rt.launch(lambda *a: None, (1, 1), (64, 32))  # 2048 threads per block
    assert e.value.code is cudaError.cudaErrorInvalidValue  # CUDA 13 (probe)
    # a surface bigger than its buffer faults at the next synchronisation, and stays faulted
    fill_surface(rt, s, 0, 128, 64)
    with pytest.raises(CudaError) as e:
        rt.cudaDeviceSynchronize()
    assert e.value.code is cudaError.cudaErrorIllegalAddress
    with pytest.raises(CudaError):
        rt.cudaMalloc(16)


# ---------------------------------------------------------------- nv-p2p
def test_get_pages_argument_errors(env):
    _gpu, rt, p2p = env
    d = rt.cudaMalloc(4 * MiB)
    h = rt.cudaHostAlloc(256 * 1024)
    cb = Callback(p2p)
    assert p2p.nvidia_p2p_get_pages(0, 0, d + 4096, GPU_PAGE_SIZE, cb, None)[0] == -EINVAL
    assert p2p.nvidia_p2p_get_pages(0, 0, d, GPU_PAGE_SIZE + 1, cb, None)[0] == -EINVAL
    assert p2p.nvidia_p2p_get_pages(0, 0, d, 0, cb, None)[0] == -EINVAL
    assert p2p.nvidia_p2p_get_pages(0, 0, d, GPU_PAGE_SIZE, None, None)[0] == -EINVAL
    assert p2p.nvidia_p2p_get_pages(1, 2, d, GPU_PAGE_SIZE, cb, None)[0] == -EINVAL
    h_aligned = (h + GPU_PAGE_SIZE - 1) & ~(GPU_PAGE_SIZE - 1)
    assert p2p.nvidia_p2p_get_pages(0, 0, h_aligned, GPU_PAGE_SIZE, cb, None)[0] == -EINVAL
    assert p2p.nvidia_p2p_get_pages(0, 0, d + 4 * MiB, GPU_PAGE_SIZE, cb, None)[0] == -EINVAL
    assert p2p.nvidia_p2p_get_pages(0, 0, 0x1000_0000, GPU_PAGE_SIZE, cb, None)[0] == -EINVAL
    assert not cb.calls


def test_page_table_and_peer_access(env):
    gpu, rt, p2p = env
    gpu.bar1_base_provider = lambda: 0x8000_0000_0000_0000
    d = rt.cudaMalloc(4 * MiB)
    rt.cuPointerSetAttribute(1, SYNC, d)
    fill_surface(rt, d, 0, 1024, 1024)
    rt.cudaDeviceSynchronize()
    rc, pt, _cb = pin(p2p, d, 4 * MiB)
    assert rc == 0 and pt.entries == 64 and len(pt.pages) == 64
    assert pt.version == 0x00020000 and pt.page_size == 1 and pt.gpu_uuid == gpu.uuid
    assert all(p.physical_address % GPU_PAGE_SIZE == 0 for p in pt.pages)
    assert all(p.physical_address >= 0x8000_0000_0000_0000 for p in pt.pages)
    rc, m = p2p.nvidia_p2p_dma_map_pages(PeerDevice("fpga"), pt)
    assert rc == 0 and m.dma_addresses == [p.physical_address for p in pt.pages]
    rc, m2 = p2p.nvidia_p2p_dma_map_pages(PeerDevice("behind-iommu", lambda a: a ^ (1 << 62)), pt)
    assert rc == 0 and m2.dma_addresses[3] == pt.pages[3].physical_address ^ (1 << 62)
    # page 5 holds rows 80..95: a peer read through BAR1 sees fill_surface's words
    off = pt.pages[5].physical_address - gpu.bar1_bus_address
    assert (
        gpu.bar1_read(off, 8)
        == np.array([surface_word(0, 80), surface_word(1, 80)], dtype="<u4").tobytes()
    )
    assert gpu.bar1_write(off + 4, b"\xff" * 4)
    assert d2h(rt, d + 5 * GPU_PAGE_SIZE + 4, 4) == b"\xff" * 4
    st = p2p.pin_of(pt).stats
    assert (st.reads, st.read_bytes, st.writes, st.write_bytes) == (1, 8, 1, 4)
    # nv-p2p.c, nvidia_p2p_dma_unmap_pages: NULL arguments are -EINVAL; a mapping no
    # longer on the table's list is 0, so unmapping twice is 0
    assert p2p.nvidia_p2p_dma_unmap_pages(None, pt, m) == -EINVAL
    assert p2p.nvidia_p2p_dma_unmap_pages(m.pci_dev, pt, None) == -EINVAL
    assert p2p.nvidia_p2p_dma_unmap_pages(m.pci_dev, pt, m) == 0
    assert p2p.nvidia_p2p_dma_unmap_pages(m.pci_dev, pt, m) == 0
    # nvidia_p2p_free_dma_mapping is a no-op returning 0: m2 stays until put_pages
    assert p2p.nvidia_p2p_free_dma_mapping(m2) == 0
    assert p2p.live_mappings() == 1
    assert p2p.nvidia_p2p_put_pages(0, 0, d, pt) == 0
    assert p2p.live_mappings() == 0, "put_pages frees the table's mappings with it"
    assert gpu.bar1_read(off, 4) is None
    assert gpu.fault_log[-1].reason.startswith("revoked (pin #1 released")
    # nv_p2p_put_pages: a table no longer tracked is OBJECT_NOT_FOUND -> 0; NULL is 0
    assert p2p.nvidia_p2p_put_pages(0, 0, d, pt) == 0
    assert p2p.nvidia_p2p_put_pages(0, 0, d, None) == 0


def test_cudafree_while_pinned_fires_callback_then_unmaps(env):
    gpu, rt, p2p = env
    d = rt.cudaMalloc(2 * MiB)
    keep = rt.cudaMalloc(2 * MiB)
    rt.cudaMemset(d, 0x11, 2 * MiB)
    rc, pt, cb = pin(p2p, d, 2 * MiB)
    rc2, pt_keep, cb_keep = pin(p2p, keep, 2 * MiB)
    assert rc == rc2 == 0
    off = pt.pages[0].physical_address
    seen_during_callback = []
    orig = cb.__call__

    def check_still_mapped(data):
        # BAR1 is torn down only after the callback returns
        seen_during_callback.append(gpu.bar1_read(off, 1))
        orig(data)

    p2p.pin_of(pt).free_callback, orig = check_still_mapped, p2p.pin_of(pt).free_callback
    rt.cudaFree(d)
    assert cb.calls == ["surf"] and cb.rc == 0
    assert seen_during_callback == [b"\x11"]  # the pending memset had landed first
    assert p2p.pin_of(pt) is None and gpu.pins[1].state is PinState.REVOKED
    assert gpu.bar1_read(off, 4) is None
    assert not gpu.bar1_write(off, b"\x22" * 4)
    assert [f.op for f in gpu.fault_log] == ["read", "write"]
    assert "cudaFree" in gpu.fault_log[0].reason
    # nv-p2p.c: after the callback the table is freed and untracked: put_pages is 0
    # (the pattern of the GPUDirect RDMA guide and picoevb), with no effect
    assert p2p.nvidia_p2p_put_pages(0, 0, d, pt) == 0
    assert cb.calls == ["surf"] and not cb_keep.calls  # fired once, others intact
    assert p2p.pin_of(pt_keep).state is PinState.LIVE
    # memory reused by a new allocation is not reachable through the stale BAR1 address
    d2 = rt.cudaMalloc(2 * MiB)
    rt.cudaMemset(d2, 0x33, 2 * MiB)
    rt.cudaDeviceSynchronize()
    gpu.bar1_write(off, b"\x44" * 4)
    assert d2h(rt, d2, 2 * MiB) == b"\x33" * 2 * MiB


def test_a_sleeping_free_callback_keeps_the_pages_until_done(env):
    """A free callback that must sleep until its device stopped (it returns a
    CallbackPending, as the kernel's callback would block cudaFree): until done() the
    pin stays mapped over the freed pages (REVOKING), a peer write still lands in them,
    and neither the BAR1 pages nor the physical pages go to a new allocation or pin;
    after done() the pin is revoked and unmapped and the pages are free again."""
    gpu, rt, p2p = env
    d = rt.cudaMalloc(2 * MiB)
    va = d & ~(GPU_PAGE_SIZE - 1)
    pending = CallbackPending()
    rc, pt = p2p.nvidia_p2p_get_pages(0, 0, va, 2 * MiB, lambda _data: pending, None)
    assert rc == 0
    pin_ = gpu.pins[max(gpu.pins)]
    bar1 = set(pin_.bar1_pages)
    phys = set(pin_.phys_pages)
    off = pt.pages[0].physical_address - gpu.bar1_bus_address
    free_before = gpu.bar1_free_bytes
    rt.cudaFree(d)
    assert pin_.state is PinState.REVOKING and p2p.pin_of(pt) is None
    assert gpu.bar1_write(off, b"\x5a" * 4), "the device may still write until done()"
    assert gpu.bar1_free_bytes == free_before
    d2 = rt.cudaMalloc(2 * MiB)
    rc, pt2 = p2p.nvidia_p2p_get_pages(0, 0, d2, 2 * MiB, lambda _data: None, None)
    assert rc == 0
    pin2 = gpu.pins[max(gpu.pins)]
    assert not bar1 & set(pin2.bar1_pages) and not phys & set(pin2.phys_pages)
    assert gpu.bar1_free_bytes == free_before - len(pin2.bar1_pages) * GPU_PAGE_SIZE
    pending.done()
    assert pin_.state is PinState.REVOKED
    assert not gpu.bar1_write(off, b"\x5a" * 4), "a write after done() is dropped"
    assert gpu.bar1_free_bytes == free_before, "the revoked pin's BAR1 pages are free again"
    pending.done()  # idempotent
    assert p2p.nvidia_p2p_put_pages(0, 0, d2, pt2) == 0


def test_put_pages_harmless_after_callback_and_inside(env):
    """nv-p2p.c: the table is no longer tracked once the callback runs, so put_pages
    inside it (forbidden by the guide: logged) and after it is OBJECT_NOT_FOUND -> 0;
    nvidia_p2p_free_page_table is a no-op returning 0."""
    _gpu, rt, p2p = env
    d = rt.cudaMalloc(GPU_PAGE_SIZE)
    results = []
    holder = {}

    def bad_callback(data):
        results.append(p2p.nvidia_p2p_put_pages(0, 0, holder["va"], holder["pt"]))

    va = d & ~(GPU_PAGE_SIZE - 1)
    rc, pt = p2p.nvidia_p2p_get_pages(0, 0, va, GPU_PAGE_SIZE, bad_callback, None)
    holder.update(va=va, pt=pt)
    assert rc == 0
    rt.cudaFree(d)
    assert results == [0]  # a no-op (logged as a contract violation)
    assert p2p.nvidia_p2p_put_pages(0, 0, va, pt) == 0  # afterwards: harmless
    assert p2p.nvidia_p2p_free_page_table(pt) == 0
    assert p2p.nvidia_p2p_free_page_table(pt) == 0
    assert p2p.pin_of(pt) is None


def test_overlapping_pins_share_bar1(env):
    gpu, rt, p2p = env
    d = rt.cudaMalloc(4 * MiB)
    free0 = gpu.bar1_free_bytes
    _, pt_a, _ = pin(p2p, d, 2 * MiB)
    _, pt_b, _ = pin(p2p, d + MiB, 2 * MiB)
    assert free0 - gpu.bar1_free_bytes == 3 * MiB  # 1 MiB shared
    assert [p.physical_address for p in pt_a.pages[16:]] == [
        p.physical_address for p in pt_b.pages[:16]
    ]
    assert p2p.nvidia_p2p_put_pages(0, 0, d, pt_a) == 0
    shared = pt_b.pages[0].physical_address
    assert gpu.bar1_read(shared, 4) is not None  # still mapped by pin B
    assert gpu.bar1_read(pt_a.pages[0].physical_address, 4) is None
    assert p2p.nvidia_p2p_put_pages(0, 0, d + MiB, pt_b) == 0
    assert gpu.bar1_free_bytes == free0


def test_bar1_exhaustion_and_recovery(env):
    gpu, rt, p2p = env
    usable = gpu.bar1_free_bytes - BAR1_PIN_RESERVE  # 256 - 32 - 36 = 188 MiB
    assert usable == 188 * MiB
    d = rt.cudaMalloc(200 * MiB)
    rc, pt1, _ = pin(p2p, d, 100 * MiB)
    assert rc == 0
    rc, _, _ = pin(p2p, d + 100 * MiB, 90 * MiB)  # 2 MiB over the reserve
    assert rc == -ENOMEM
    rc, _pt2, _ = pin(p2p, d + 100 * MiB, 88 * MiB)  # exactly fits
    assert rc == 0 and gpu.bar1_free_bytes == BAR1_PIN_RESERVE
    assert pin(p2p, d + 188 * MiB, GPU_PAGE_SIZE)[0] == -ENOMEM
    assert p2p.nvidia_p2p_put_pages(0, 0, d, pt1) == 0
    assert pin(p2p, d + 188 * MiB, 12 * MiB)[0] == 0  # recovered after unpin


def test_fragmented_bar1_gives_non_contiguous_pages(env):
    gpu, rt, p2p = env
    d = rt.cudaMalloc(190 * MiB)
    tables = [pin(p2p, d + i * GPU_PAGE_SIZE, GPU_PAGE_SIZE)[1] for i in range(188 * 16)]
    assert gpu.bar1_free_bytes == BAR1_PIN_RESERVE
    for i in range(0, len(tables), 2):  # free every other page
        assert p2p.nvidia_p2p_put_pages(0, 0, d + i * GPU_PAGE_SIZE, tables[i]) == 0
    assert gpu._bar1.runs()[0][1] - gpu._bar1.runs()[0][0] == 1  # holes of one page
    e = rt.cudaMalloc(4 * MiB)
    fill_surface(rt, e, 0x5A5A, 1024, 1024)
    rt.cudaDeviceSynchronize()
    rc, pt, _ = pin(p2p, e, 4 * MiB)
    assert rc == 0
    addrs = [p.physical_address for p in pt.pages]
    assert any(b - a != GPU_PAGE_SIZE for a, b in itertools.pairwise(addrs))
    # every page still reaches the right VRAM
    for i, a in enumerate(addrs):
        y = i * GPU_PAGE_SIZE // 4096
        assert gpu.bar1_read(a, 4) == surface_word(0, y, 0x5A5A).to_bytes(4, "little")


def test_persistent_pins(env):
    gpu, rt, p2p = env
    d = rt.cudaMalloc(2 * MiB)
    rt.cuPointerSetAttribute(1, SYNC, d)
    rt.cudaMemset(d, 0x77, 2 * MiB)
    # nv-p2p.c reads only FORCE_BAR1_MAPPING from the flags: others are ignored; a
    # FORCE_BAR1 table cannot be DMA-mapped (-ENOTSUPP)
    rc, other = p2p.nvidia_p2p_get_pages_persistent(d, 2 * MiB, 0x80)
    assert rc == 0 and p2p.nvidia_p2p_dma_map_pages(PeerDevice("fpga"), other)[0] == 0
    assert p2p.nvidia_p2p_put_pages_persistent(d, other) == 0
    rc, pt = p2p.nvidia_p2p_get_pages_persistent(d, 2 * MiB, NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING)
    assert rc == 0
    assert p2p.nvidia_p2p_dma_map_pages(PeerDevice("fpga"), pt) == (-ENOTSUPP, None)
    # the non-persistent release does not find it: 0, no effect
    assert p2p.nvidia_p2p_put_pages(0, 0, d, pt) == 0
    assert p2p.pin_of(pt).state is PinState.LIVE
    rt.cudaFree(d)  # no callback; stays mapped
    a = pt.pages[0].physical_address
    assert gpu.bar1_read(a, 1) == b"\x77"
    e = rt.cudaMalloc(2 * MiB)  # cannot reuse the held pages
    rt.cuPointerSetAttribute(1, SYNC, e)
    rt.cudaMemset(e, 0x00, 2 * MiB)
    assert gpu.bar1_read(a, 1) == b"\x77"
    # nvidia_p2p_put_pages_persistent: any flags -> -EINVAL, checked before NULL -> 0
    assert p2p.nvidia_p2p_put_pages_persistent(d, pt, NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING) == (
        -EINVAL
    )
    assert p2p.nvidia_p2p_put_pages_persistent(d, None, 1) == -EINVAL
    assert p2p.nvidia_p2p_put_pages_persistent(d, None) == 0
    assert p2p.nvidia_p2p_put_pages_persistent(d, pt) == 0
    assert gpu.bar1_read(a, 1) is None
    # no longer held: OBJECT_NOT_FOUND, which the persistent path does not forgive
    assert p2p.nvidia_p2p_put_pages_persistent(d, pt) == -EINVAL


def test_unmapped_and_reserved_bar1_faults(env):
    gpu, _rt, _p2p = env
    assert gpu.bar1_read(0, 4) is None  # driver's own 32 MiB
    assert gpu.bar1_read(200 * MiB, 4) is None
    assert not gpu.bar1_write(200 * MiB, b"x")
    assert [f.reason for f in gpu.fault_log] == ["driver-reserved", "unmapped", "unmapped"]
    assert gpu.bar0_read(0, 4) == GH100_BOOT_0.to_bytes(4, "little")
    assert gpu.bar0_read(0x100, 4) == b"\0" * 4


def test_large_model_stays_small_in_memory():
    tracemalloc.start()
    gpu = Gpu(vram_size=80 << 30, bar1_size=128 << 30)
    rt, p2p = CudaRuntime(gpu), NvidiaP2P(gpu)
    d = rt.cudaMalloc(8 << 30)
    rc, pt, _ = pin(p2p, d + (4 << 30), 64 * MiB)
    rt.cudaMemcpy(d + (7 << 30), b"\x01" * 100, 100, H2D)
    rt.cudaDeviceSynchronize()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert rc == 0 and pt.entries == 1024
    assert gpu.bar1_free_bytes == (128 << 30) - MiB - 64 * MiB  # 1 MiB used when idle
    assert gpu.vram.resident_pages == 1
    assert peak < 64 * MiB, f"peak {peak / MiB:.1f} MiB"


def test_extent_allocator():
    from cuda_model.extents import ExtentAllocator

    ea = ExtentAllocator(16)
    assert ea.alloc(4, align=4) == 0 and ea.alloc(2) == 4
    ea.free(0, 4)
    with pytest.raises(ValueError):
        ea.free(1)  # double free
    assert ea.alloc_lowest(6) == [0, 1, 2, 3, 6, 7]
    ea.free(4, 2)
    assert ea.runs() == [(4, 6), (8, 16)] and ea.free_units == 10
    assert ea.alloc(9) is None and ea.alloc_scatter(11) is None


def test_p2p_tokens_of_this_process_are_accepted(env):
    """cuPointerGetAttribute(P2P_TOKENS) gives p2pToken 0 and a non-zero vaSpaceToken on
    the H100 (edge_cases.txt) and sets SYNC_MEMOPS (pool_release.txt); get_pages takes
    those tokens as gdrcopy's basic_with_tokens passes them, or none, and refuses others
    (the model has one process)."""
    _gpu, rt, p2p = env
    d = rt.cudaMalloc(2 * MiB)
    assert rt.cuPointerGetAttribute(SYNC, d) == 0
    p2p_token, va_space = rt.cuPointerGetAttribute(
        CUpointer_attribute.CU_POINTER_ATTRIBUTE_P2P_TOKENS, d
    )
    assert p2p_token == 0 and va_space != 0
    assert rt.cuPointerGetAttribute(SYNC, d) == 1
    cb = Callback(p2p)
    rc, pt = p2p.nvidia_p2p_get_pages(p2p_token, va_space, d, 2 * MiB, cb, None)
    assert rc == 0
    assert p2p.nvidia_p2p_put_pages(p2p_token, va_space, d, pt) == 0
    assert p2p.pin_of(pt) is None  # released
    assert p2p.nvidia_p2p_get_pages(0, va_space + 1, d, 2 * MiB, cb, None)[0] == -EINVAL
    assert p2p.nvidia_p2p_get_pages(7, va_space, d, 2 * MiB, cb, None)[0] == -EINVAL
    h = rt.cudaHostAlloc(4096)
    with pytest.raises(CudaError) as e:
        rt.cuPointerGetAttribute(CUpointer_attribute.CU_POINTER_ATTRIBUTE_P2P_TOKENS, h)
    assert e.value.code == CUresult.CUDA_ERROR_INVALID_VALUE
