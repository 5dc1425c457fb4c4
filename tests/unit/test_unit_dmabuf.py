"""The dma-buf path: CUDA's export (cuMemGetHandleForAddressRange and the VMM calls it
needs), nvidia.ko's exporter (nv-dmabuf.c) and the kernel's dma-buf core, one rule per
test. Sources: the H100 measurement (``cuda_model/probes/dmabuf.txt``, "measured"), the
open kernel module (``kernel-open/nvidia/nv-dmabuf.c``, "nv-dmabuf.c") and the kernel
(``drivers/dma-buf/dma-buf.c``, Linux 6.2+, "dma-buf.c")."""

from __future__ import annotations

import pytest

from cuda_model import CudaError, CudaRuntime, CUresult, Gpu, NvidiaP2P
from cuda_model.dmabuf import DMA_BIDIRECTIONAL, DMA_FROM_DEVICE, DMA_TO_DEVICE
from cuda_model.errors import ENOTSUPP
from cuda_model.gpu import GPU_PAGE_SIZE, VMM_GRANULARITY
from cuda_model.runtime import (
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    CU_MEM_ALLOC_GRANULARITY_MINIMUM,
    CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE,
    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
    CUdevice_attribute,
    CUmemAllocationProp,
)
from driver_model.dmabuf import DmaBuf, DmaBufAttachOps, DmaBufCore, DmaDevice
from driver_model.host import HostMemory, UserProcess

FD = CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD
MIB = 1 << 20
BAR1_BASE = 0x38_0000_0000


class _Phys:
    def __init__(self) -> None:
        self.mem = bytearray(1 << 20)

    def read(self, addr: int, length: int) -> bytes:
        return bytes(self.mem[addr : addr + length])

    def write(self, addr: int, data) -> None:
        self.mem[addr : addr + len(data)] = data

    def view(self, addr: int, length: int) -> memoryview:
        return memoryview(self.mem)[addr : addr + length]


class Rig:
    """A GPU, its runtime with the kernel's dma-buf core behind it, and a process."""

    def __init__(self, bar1_size: int = 256 << 20) -> None:
        self.gpu = Gpu(vram_size=1 << 30, bar1_size=bar1_size)
        self.gpu.bar1_base_provider = lambda: BAR1_BASE
        self.rt = CudaRuntime(self.gpu)
        self.core = DmaBufCore()
        self.proc = UserProcess(HostMemory(_Phys(), 0, 1 << 20))
        self.rt.dma_buf_export = lambda ops, size: self.core.export_fd(self.proc, ops, size)
        self.dev = DmaDevice("picoevb", max_seg_size=0x0FFFF000)

    def export(self, ptr: int, size: int, flags: int = 0) -> int:
        return self.rt.cuMemGetHandleForAddressRange(ptr, size, FD, flags)

    def get(self, fd: int) -> DmaBuf:
        buf = self.core.dma_buf_get(self.proc, fd)
        assert isinstance(buf, DmaBuf)
        return buf

    def size(self, fd: int) -> int:
        """The size of the dma-buf behind ``fd`` (a reference taken and put)."""
        buf = self.get(fd)
        self.core.dma_buf_put(buf)
        return buf.size

    def vram_used(self) -> int:
        return self.gpu.vram.size - self.gpu.vram_free_bytes


def _code(fn) -> CUresult:
    with pytest.raises(CudaError) as e:
        fn()
    return e.value.code


# --------------------------------------------------------------------------- CUDA side
def test_device_attributes_as_measured():
    """measured: DMA_BUF_SUPPORTED 1, HOST_ALLOC_DMA_BUF_SUPPORTED 0."""
    rt = Rig().rt
    attr = CUdevice_attribute
    assert rt.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) == 1
    assert rt.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED) == 0
    assert rt.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED) == 1


def test_alignment_size_and_range_rules():
    """measured: 4 KiB aligned pointer and size, non-zero, inside the allocation; a
    4 KiB piece inside is fine, and the fd's size is the range's."""
    r = Rig()
    p = r.rt.cudaMalloc(8 * MIB)
    bad = CUresult.CUDA_ERROR_INVALID_VALUE
    for ptr, size in [
        (p + 1, 4096),
        (p + 256, 4096),
        (p, 4095),
        (p, 4097),
        (p, 0),
        (p + 8 * MIB - 4096, 8192),
    ]:
        assert _code(lambda ptr=ptr, size=size: r.export(ptr, size)) == bad, (ptr - p, size)
    assert r.size(r.export(p, 8 * MIB)) == 8 * MIB
    assert r.size(r.export(p + 64 * 1024, 4096)) == 4096


def test_flags_rules():
    """measured: the PCIe mapping-type flag is NOT_SUPPORTED (801) on the H100; other
    flags INVALID_VALUE; another handle type too."""
    r = Rig()
    p = r.rt.cudaMalloc(2 * MIB)
    pcie = CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE
    assert _code(lambda: r.export(p, 2 * MIB, pcie)) == CUresult.CUDA_ERROR_NOT_SUPPORTED
    for flags in (0x2, 0x80):
        assert _code(lambda f=flags: r.export(p, 2 * MIB, f)) == CUresult.CUDA_ERROR_INVALID_VALUE
    bad_type = lambda: r.rt.cuMemGetHandleForAddressRange(p, 2 * MIB, 2, 0)  # noqa: E731
    assert _code(bad_type) == CUresult.CUDA_ERROR_INVALID_VALUE


def test_host_memory_is_refused():
    """measured: cudaMallocHost memory (and pageable/managed) INVALID_VALUE."""
    r = Rig()
    h = r.rt.cudaHostAlloc(2 * MIB)
    assert _code(lambda: r.export(h, 2 * MIB)) == CUresult.CUDA_ERROR_INVALID_VALUE
    assert _code(lambda: r.export(0x7000_0000_0000, 2 * MIB)) == CUresult.CUDA_ERROR_INVALID_VALUE


def _vmm(rt: CudaRuntime, n: int, rdma: bool) -> tuple[int, list[int]]:
    prop = CUmemAllocationProp(gpu_direct_rdma_capable=rdma)
    gran = rt.cuMemGetAllocationGranularity(prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)
    handles = [rt.cuMemCreate(gran, prop) for _ in range(n)]
    va = rt.cuMemAddressReserve(n * gran)
    for i, h in enumerate(handles):
        rt.cuMemMap(va + i * gran, gran, 0, h)
    rt.cuMemSetAccess(va, n * gran, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    return va, handles


@pytest.mark.parametrize("rdma", [False, True])
def test_vmm_memory_exports_with_or_without_rdma_flag(rdma: bool):
    """measured: cuMemCreate memory exports with gpuDirectRDMACapable 0 and 1 alike
    (granularity 2 MiB), and a range may cross two mappings of one reservation."""
    r = Rig()
    assert r.rt.cuMemGetAllocationGranularity(CUmemAllocationProp(), 0) == VMM_GRANULARITY
    base = r.vram_used()
    va, handles = _vmm(r.rt, 2, rdma)
    across = r.export(va + 2 * MIB - 4096, 8192)
    first = r.export(va, 2 * MIB)
    assert r.size(across) == 8192 and r.size(first) == 2 * MIB
    # the bytes are the device's: a copy in lands where the export points
    r.rt.cudaMemcpy(va + 2 * MIB - 4, b"\x11\x22\x33\x44\x55\x66\x77\x88", 8, 1)
    r.rt.cudaDeviceSynchronize()
    assert bytes(r.gpu.read_va(va + 2 * MIB - 4, 8)) == b"\x11\x22\x33\x44\x55\x66\x77\x88"
    # unmapped and released, the exported allocations stay until their exports go:
    # each export holds the whole cuMemCreate allocations it touches (dup'd handles)
    r.rt.cuMemUnmap(va, 4 * MIB)
    for h in handles:
        r.rt.cuMemRelease(h)
    r.rt.cuMemAddressFree(va, 4 * MIB)
    assert r.vram_used() - base == 4 * MIB
    r.proc.close(first)
    assert r.vram_used() - base == 4 * MIB, "the range across holds both allocations"
    r.proc.close(across)
    assert r.vram_used() == base


def test_vmm_rules():
    """cuMemCreate sizes are granularity multiples; cuMemMap stays inside a reservation,
    over nothing mapped; cudaFree is not for mapped memory; cuMemAddressFree wants the
    reservation empty."""
    r = Rig()
    bad = CUresult.CUDA_ERROR_INVALID_VALUE
    assert _code(lambda: r.rt.cuMemCreate(MIB, CUmemAllocationProp())) == bad
    va, (h,) = _vmm(r.rt, 1, True)
    assert _code(lambda: r.rt.cuMemMap(va, 2 * MIB, 0, h)) == bad  # mapped already
    assert _code(lambda: r.rt.cuMemMap(va + 2 * MIB, 2 * MIB, 0, h)) == bad  # outside
    assert _code(lambda: r.rt.cudaFree(va)) == 1  # cudaErrorInvalidValue
    assert _code(lambda: r.rt.cuMemAddressFree(va, 2 * MIB)) == bad  # still mapped
    used = r.vram_used()
    r.rt.cuMemRelease(h)
    assert r.vram_used() == used, "released while mapped: the memory stays"
    r.rt.cuMemUnmap(va, 2 * MIB)
    assert r.vram_used() == used - 2 * MIB
    r.rt.cuMemAddressFree(va, 2 * MIB)


def test_export_takes_no_vram_and_cudafree_returns_none_until_close():
    """measured: the export takes no VRAM; cudaFree with the fd open returns none;
    closing the fd returns all of it (nv-dmabuf.c duplicates the handles)."""
    r = Rig()
    base = r.vram_used()
    p = r.rt.cudaMalloc(64 * MIB)
    assert r.vram_used() - base == 64 * MIB
    fd = r.export(p, 64 * MIB)
    assert r.vram_used() - base == 64 * MIB
    r.rt.cudaFree(p)
    assert r.vram_used() - base == 64 * MIB
    assert r.proc.close(fd) == 0
    assert r.vram_used() == base


def test_mmap_is_enotsupp():
    """measured: mmap of the fd fails with errno 524; nv-dmabuf.c: -ENOTSUPP."""
    r = Rig()
    fd = r.export(r.rt.cudaMalloc(2 * MIB), 2 * MIB)
    assert r.core.mmap(r.proc, fd) == -ENOTSUPP == -524


# --------------------------------------------------------------------------- exporter
def test_static_attachment_maps_bar1_addresses_without_pages():
    """nv-dmabuf.c (nv_dma_buf_map_pfns): a static attachment on a non-coherent GPU maps
    to BAR1 bus addresses with no struct page, covering the range exactly."""
    r = Rig()
    p = r.rt.cudaMalloc(4 * MIB)
    buf = r.get(r.export(p + 12288, 1 * MIB))
    att = r.core.dma_buf_attach(buf, r.dev)
    assert not isinstance(att, int) and not att.peer2peer
    assert att.sgt is None, "static importer, static exporter: nothing mapped at attach"
    sgt = r.core.dma_buf_map_attachment_unlocked(att, DMA_FROM_DEVICE)
    assert not isinstance(sgt, int)
    assert sgt.length == 1 * MIB and all(e.page is None for e in sgt.entries)
    # every byte reaches the VRAM behind the exported VA, through BAR1
    pos = p + 12288
    for e in sgt.entries:
        for off in range(0, e.length, 4096):
            bar1 = e.dma_address + off - BAR1_BASE
            hit = r.gpu.bar1_lookup(bar1)
            assert hit is not None and hit[0] == r.gpu.translate(pos + off)
        pos += e.length
    assert (
        r.gpu.bar1_page_pins((sgt.entries[0].dma_address - BAR1_BASE) // GPU_PAGE_SIZE)[0].kind
        == "dmabuf"
    )


def test_segments_split_at_the_importers_max_seg_size():
    """nv-dmabuf.c (nv_dma_buf_get_sg_count): each BAR1 run is split at the importer's
    max segment size rounded down to 4 KiB; below 4 KiB there is no table (-ENOMEM)."""
    r = Rig()
    p = r.rt.cudaMalloc(4 * MIB)
    buf = r.get(r.export(p, 4 * MIB))
    for seg in (64 << 10, 100_000, 1 << 20):
        dev = DmaDevice("dev", max_seg_size=seg)
        att = r.core.dma_buf_attach(buf, dev)
        assert not isinstance(att, int)
        sgt = r.core.dma_buf_map_attachment_unlocked(att, DMA_TO_DEVICE)
        assert not isinstance(sgt, int)
        limit = seg // 4096 * 4096
        assert all(e.length <= limit for e in sgt.entries) and sgt.length == 4 * MIB
        r.core.dma_buf_unmap_attachment_unlocked(att, sgt, DMA_TO_DEVICE)
        r.core.dma_buf_detach(buf, att)
    tiny = r.core.dma_buf_attach(buf, DmaDevice("tiny", max_seg_size=2048))
    assert not isinstance(tiny, int)
    assert r.core.dma_buf_map_attachment_unlocked(tiny, DMA_TO_DEVICE) == -12


def test_dynamic_attachment_needs_peer2peer():
    """nv-dmabuf.c (nv_dma_buf_map): a dynamic attachment without peer2peer cannot be
    mapped; dma-buf.c maps a dynamic importer of a non-dynamic exporter at attach, so
    the attach fails (-ENOMEM). With allow_peer2peer it attaches mapped, and a map
    returns that cached table."""
    r = Rig()
    buf = r.get(r.export(r.rt.cudaMalloc(2 * MIB), 2 * MIB))
    no_p2p = DmaBufAttachOps(move_notify=lambda a: None, allow_peer2peer=False)
    assert r.core.dma_buf_dynamic_attach(buf, r.dev, no_p2p) == -12
    assert not buf.attachments
    p2p = DmaBufAttachOps(move_notify=lambda a: None, allow_peer2peer=True)
    att = r.core.dma_buf_dynamic_attach(buf, r.dev, p2p)
    assert not isinstance(att, int) and att.peer2peer and att.sgt is not None
    r.core.dma_resv_lock(buf)
    assert r.core.dma_buf_pin(att) == 0  # nothing to pin: the exporter never moves it
    assert r.core.dma_buf_map_attachment(att, DMA_BIDIRECTIONAL) is att.sgt
    r.core.dma_buf_unmap_attachment(att, att.sgt, DMA_BIDIRECTIONAL)
    r.core.dma_buf_unpin(att)
    r.core.dma_resv_unlock(buf)
    assert not r.core.warnings
    r.core.dma_buf_detach(buf, att)
    assert r.gpu.bar1_free_bytes == r.gpu.bar1_size - r.gpu.bar1_driver_pages * GPU_PAGE_SIZE


def test_move_notify_is_required_and_never_called():
    """dma-buf.c: importer ops without move_notify are refused (-EINVAL, WARN); the
    exporter never calls move_notify, not even when the memory is freed."""
    r = Rig()
    p = r.rt.cudaMalloc(2 * MIB)
    buf = r.get(r.export(p, 2 * MIB))
    assert r.core.dma_buf_dynamic_attach(buf, r.dev, DmaBufAttachOps(None, True)) == -22
    assert r.core.warnings
    calls = []
    ops = DmaBufAttachOps(move_notify=calls.append, allow_peer2peer=True)
    att = r.core.dma_buf_dynamic_attach(buf, r.dev, ops)
    assert not isinstance(att, int)
    r.rt.cudaFree(p)
    assert calls == []


def test_memory_and_mapping_live_until_release():
    """measured and nv-dmabuf.c: after cudaFree, a peer write through the mapping still
    reaches the exported memory (no revocation), and the VRAM comes back only when the
    last reference goes (detach, put, close)."""
    r = Rig()
    base = r.vram_used()
    p = r.rt.cudaMalloc(2 * MIB)
    fd = r.export(p, 2 * MIB)
    buf = r.get(fd)
    att = r.core.dma_buf_attach(buf, r.dev)
    assert not isinstance(att, int)
    sgt = r.core.dma_buf_map_attachment_unlocked(att, DMA_BIDIRECTIONAL)
    assert not isinstance(sgt, int)
    r.rt.cudaFree(p)
    e = sgt.entries[0]
    assert r.gpu.bar1_write(e.dma_address - BAR1_BASE + 16, b"after free")
    assert r.gpu.bar1_read(e.dma_address - BAR1_BASE + 16, 10) == b"after free"
    assert r.vram_used() - base == 2 * MIB
    r.core.dma_buf_unmap_attachment_unlocked(att, sgt, DMA_BIDIRECTIONAL)
    r.core.dma_buf_detach(buf, att)
    r.core.dma_buf_put(buf)
    assert r.vram_used() - base == 2 * MIB, "the fd still holds it"
    r.proc.close(fd)
    assert r.vram_used() == base
    assert not r.core.warnings


def test_bar1_exhaustion_fails_the_map():
    """nv-dmabuf.c: a failed BAR1 mapping (rm_dma_buf_map_mem_handle) fails the map,
    which the core reports as -ENOMEM; BAR1 counts as for nv-p2p pins, so pins and
    dma-buf mappings share one aperture."""
    r = Rig(bar1_size=128 << 20)  # 32 MiB the driver's, 36 MiB the pin reserve: 60 free
    p = r.rt.cudaMalloc(64 * MIB)
    big = r.get(r.export(p, 64 * MIB))
    att = r.core.dma_buf_attach(big, r.dev)
    assert not isinstance(att, int)
    assert r.core.dma_buf_map_attachment_unlocked(att, DMA_TO_DEVICE) == -12
    small = r.get(r.export(p, 2 * MIB))
    att2 = r.core.dma_buf_attach(small, r.dev)
    assert not isinstance(att2, int)
    sgt = r.core.dma_buf_map_attachment_unlocked(att2, DMA_TO_DEVICE)
    assert not isinstance(sgt, int)
    rc, _pt = NvidiaP2P(r.gpu).nvidia_p2p_get_pages(0, 0, p + 4 * MIB, 60 * MIB, lambda d: None, 0)
    assert rc < 0, "the dma-buf mapping took BAR1 the pin would have needed"


def test_mappings_share_one_bar1_mapping_per_export():
    """nv-dmabuf.c (phys_refcount): two attachments of one export map the same BAR1
    pages, and BAR1 is given back with the last unmap."""
    r = Rig()
    free0 = r.gpu.bar1_free_bytes
    buf = r.get(r.export(r.rt.cudaMalloc(2 * MIB), 2 * MIB))
    a1 = r.core.dma_buf_attach(buf, r.dev)
    a2 = r.core.dma_buf_attach(buf, DmaDevice("nic"))
    assert not isinstance(a1, int) and not isinstance(a2, int)
    s1 = r.core.dma_buf_map_attachment_unlocked(a1, DMA_TO_DEVICE)
    s2 = r.core.dma_buf_map_attachment_unlocked(a2, DMA_TO_DEVICE)
    assert not isinstance(s1, int) and not isinstance(s2, int)
    assert s1.entries[0].dma_address == s2.entries[0].dma_address
    assert free0 - r.gpu.bar1_free_bytes == 2 * MIB
    r.core.dma_buf_unmap_attachment_unlocked(a1, s1, DMA_TO_DEVICE)
    assert free0 - r.gpu.bar1_free_bytes == 2 * MIB
    r.core.dma_buf_unmap_attachment_unlocked(a2, s2, DMA_TO_DEVICE)
    assert r.gpu.bar1_free_bytes == free0


# --------------------------------------------------------------------------- misuse
def test_misuse_is_reported():
    """dma-buf.c: map without the reservation lock is a lockdep splat; pinning a static
    attachment a WARN; a bad fd -EBADF, a non-dma-buf file -EINVAL; releasing with
    attachments left a WARN; a second lock a deadlock."""
    r = Rig()
    fd = r.export(r.rt.cudaMalloc(2 * MIB), 2 * MIB)
    assert r.core.dma_buf_get(r.proc, 99) == -9

    class NotDmaBuf:
        def fput(self) -> None:
            pass

    other = r.proc.fd_install(NotDmaBuf())
    assert r.core.dma_buf_get(r.proc, other) == -22
    buf = r.get(fd)
    att = r.core.dma_buf_attach(buf, r.dev)
    assert not isinstance(att, int)
    sgt = r.core.dma_buf_map_attachment(att, DMA_TO_DEVICE)
    assert not isinstance(sgt, int)
    assert any("lockdep" in w for w in r.core.warnings)
    r.core.dma_resv_lock(buf)
    assert r.core.dma_buf_pin(att) == 0
    assert any("static attachment" in w for w in r.core.warnings)
    with pytest.raises(RuntimeError, match="deadlock"):
        r.core.dma_resv_lock(buf)
    r.core.dma_buf_unmap_attachment(att, sgt, DMA_TO_DEVICE)
    r.core.dma_resv_unlock(buf)
    n = len(r.core.warnings)
    r.core.dma_buf_put(buf)
    r.proc.close(fd)
    assert len(r.core.warnings) == n + 1 and "attachment" in r.core.warnings[-1]


def test_a_partial_export_keeps_the_whole_allocation():
    """nv-dmabuf.c (nv_dma_buf_dup_mem_handles): the export duplicates the memory's
    handle, so 4 KiB exported from an 8 MiB buffer keeps all 8 MiB after cudaFree."""
    r = Rig()
    base = r.vram_used()
    p = r.rt.cudaMalloc(8 * MIB)
    fd = r.export(p + 64 * 1024, 4096)
    r.rt.cudaFree(p)
    assert r.vram_used() - base == 8 * MIB
    r.proc.close(fd)
    assert r.vram_used() == base
