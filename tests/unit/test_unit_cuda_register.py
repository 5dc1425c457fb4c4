"""cudaHostRegister and its kin on the model, each rule with its source:
measured on an H200 with CUDA 13 (cuda_model/probes/h200-host-register.txt, "M" below),
or taken from NVIDIA's open kernel modules where the lent GPU machine maps no device
(cuda_model/probes/io_register.txt; reference/gpu-requester.md, "NV" below), and
cudaHostAlloc memory as an H200 treats it (cuda_model/probes/host_alloc.txt, "HA"). The process
is driver_model.host's, device mappings as a driver's mmap of a BAR makes them."""

from __future__ import annotations

import errno
import re
from pathlib import Path

import pytest

from cuda_model import CudaError, CudaRuntime, CUresult, Gpu, cudaError
from cuda_model.hostreg import (
    cudaHostRegisterIoMemory as IO,
)
from cuda_model.hostreg import (
    cudaHostRegisterMapped as MAPPED,
)
from cuda_model.hostreg import (
    cudaHostRegisterReadOnly as RO,
)
from cuda_model.runtime import CUdevice_attribute, cudaMemoryType
from driver_model.host import PAGE_SIZE, HostMemory, HostMemoryError, UserProcess

from .ram import Ram

INVALID = cudaError.cudaErrorInvalidValue
BAR = 0x60_0000_0000  # a device BAR (the FPGA's)
GPU_BAR1 = 0x70_0000_0000


PROBES = Path(__file__).resolve().parents[2] / "cuda_model" / "probes"


def test_device_attributes_are_the_h200s() -> None:
    """M: every driver-API device attribute the model answers is what the H200 gave
    (cuDeviceGetAttribute 1..160), the registration ones among them: the host pointer
    serves as device pointer (91), host and read-only registration work (99, 113),
    nothing flushes remote writes (98), GPUDirect RDMA writes are ordered (118: 100)."""
    text = (PROBES / "h200-host-register.txt").read_text()
    measured = {int(a): int(v) for a, v in re.findall(r"^attr +(\d+) = (-?\d+)$", text, re.M)}
    rt, _, _ = rig()
    assert len(CUdevice_attribute) >= 12
    for attr in CUdevice_attribute:
        assert rt.cuDeviceGetAttribute(attr) == measured[int(attr)], attr.name
    for attr in (91, 99, 113):
        assert rt.cuDeviceGetAttribute(attr) == 1
    with pytest.raises(CudaError) as e:
        rt.cuDeviceGetAttribute(CUdevice_attribute(98), dev=1)
    assert e.value.code == CUresult.CUDA_ERROR_INVALID_VALUE


def rig(privileged: bool = True):
    host = HostMemory(Ram(0x1000_0000, 4 << 20), 0x1000_0000, 4 << 20, 5)
    process = UserProcess(host, privileged=privileged)
    gpu = Gpu(vram_size=64 << 20)
    gpu.bar_ranges = lambda: [(GPU_BAR1, 256 << 20)]
    rt = CudaRuntime(gpu)
    rt.process = process
    return rt, process, host


def code(fn, *args) -> int:
    try:
        fn(*args)
    except CudaError as e:
        return int(e.code)
    return 0


@pytest.mark.parametrize(
    "flags, want",
    [(0, 0), (1, 0), (2, 0), (3, 0), (8, 0), (0xA, 0)]
    + [(f, 1) for f in (4, 5, 6, 7, 0xC, 0x10, 0x8000_0000)],
)
def test_flags_on_ordinary_memory(flags, want) -> None:
    """M: every flag combination on malloc'd memory (IoMemory refused there)."""
    rt, process, host = rig()
    p = process.malloc(1 << 20)
    assert code(rt.cudaHostRegister, p, 1 << 20, flags) == want
    if want == 0:
        assert rt.cudaHostGetDevicePointer(p) == p, "M: device pointer == host pointer"
        attr = rt.cudaPointerGetAttributes(p)
        assert attr.type == cudaMemoryType.cudaMemoryTypeHost and attr.devicePointer == p
        assert host.pinned_pages > 0
        rt.cudaHostUnregister(p)
    assert host.pinned_pages == 0, "every page pinned was put back"


def test_alignment_overlap_and_unregister() -> None:
    """M: an unaligned range registers; a second overlapping it is 712; unregister of an
    interior pointer is 1, twice 713; size 0 and NULL are 1; flags of
    cudaHostGetDevicePointer must be 0, and an unregistered pointer has none."""
    rt, process, _ = rig()
    p = process.malloc(1 << 20)
    rt.cudaHostRegister(p + 1, 4097, MAPPED)
    assert rt.cudaHostGetDevicePointer(p + 1) == p + 1
    assert code(rt.cudaHostGetDevicePointer, p + 1, 1) == 1
    assert code(rt.cudaHostRegister, p, 4096, MAPPED) == 712
    assert code(rt.cudaHostUnregister, p + 2) == 1
    assert code(rt.cudaHostUnregister, p + 1) == 0
    assert code(rt.cudaHostUnregister, p + 1) == 713
    assert code(rt.cudaHostRegister, p, 0, 0) == 1
    assert code(rt.cudaHostRegister, 0, 4096, 0) == 1
    assert code(rt.cudaHostGetDevicePointer, p) == 1
    assert code(rt.cudaHostUnregister, 0) == 1


def test_read_only_mappings_need_the_read_only_flag() -> None:
    """M: a PROT_READ mapping is 1 without cudaHostRegisterReadOnly, 0 with it; the GPU
    may not write what it registered read-only."""
    rt, process, _ = rig()
    p = process.mmap(1 << 20, writable=False)
    assert code(rt.cudaHostRegister, p, 1 << 20, MAPPED) == 1
    assert code(rt.cudaHostRegister, p, 1 << 20, MAPPED | RO) == 0
    assert rt.registered.bus_pieces(p, 4, write=True) is None
    assert rt.registered.bus_pieces(p, 4, write=False) is not None


def test_memory_cuda_allocated_is_refused() -> None:
    """M: managed memory is refused with any flags; HA: cudaHostAlloc memory too, whole,
    in part and from inside, and cudaHostUnregister of it is cudaErrorInvalidValue; the
    model refuses device memory the same way (its choice)."""
    for process in (True, False):
        rt, _, _ = rig()
        if not process:
            rt.process = None
        h = rt.cudaHostAlloc(1 << 20)
        for ptr, size, flags in (
            (h, 4096, 0),
            (h, 1 << 20, MAPPED),
            (h + 4096, 4096, 0),
            (h, 4096, IO),
        ):
            assert code(rt.cudaHostRegister, ptr, size, flags) == INVALID, (process, flags)
        assert code(rt.cudaHostUnregister, h) == INVALID
        assert code(rt.cudaHostUnregister, h + 4096) == INVALID
        assert rt.cudaHostGetDevicePointer(h) == h
        d = rt.cudaMalloc(1 << 20)
        assert code(rt.cudaHostRegister, d, 4096, 0) == INVALID
        assert code(rt.cudaHostRegister, d, 4096, IO) == INVALID


def test_host_alloc_memory_is_the_process_ram_on_the_bus() -> None:
    """cudaHostAlloc memory of a runtime with a process is host RAM, registered for the
    GPU under its pointer: the host's view and the bus addresses are the same bytes, its
    attributes are host memory with device pointer = host pointer (HA), and
    cudaFreeHost gives the RAM and the registration back. After it, the pointer is
    unregistered memory: device -2, its host pointer kept (HA)."""
    rt, _, host = rig()
    free = host.frames.free_frames
    h = rt.cudaHostAlloc(3 * PAGE_SIZE + 100)
    reg = rt.registered.find(h + 5000)
    assert reg is not None and reg.owned and reg.va == h and reg.name == "cudaHostAlloc"
    assert host.frames.free_frames == free - 4
    rt.host_buffer(h)[4090:4110] = bytes(range(20))
    (piece,) = rt.registered.bus_pieces(h + 4090, 20, write=True)
    assert host.phys.read(piece.addr, 20) == bytes(range(20)), "one view of one RAM"
    host.phys.write(piece.addr + 20, b"\xee")
    assert rt.host_buffer(h)[4110] == 0xEE
    a = rt.cudaPointerGetAttributes(h + 10)
    assert (a.type, a.device, a.devicePointer, a.hostPointer) == (
        cudaMemoryType.cudaMemoryTypeHost,
        0,
        h + 10,
        h + 10,
    )
    rt.cudaFreeHost(h)
    assert rt.registered.find(h) is None and host.frames.free_frames == free
    a = rt.cudaPointerGetAttributes(h)
    assert (a.type, a.device, a.devicePointer, a.hostPointer) == (
        cudaMemoryType.cudaMemoryTypeUnregistered,
        -2,
        0,
        h,
    )
    assert code(rt.cudaHostGetDevicePointer, h) == INVALID
    assert code(rt.cudaFreeHost, h) == INVALID


def test_host_alloc_memory_is_ordinary_pages_of_the_process() -> None:
    """cudaHostAlloc memory is mapped into the process as ordinary pages (NVIDIA's
    driver maps system memory with struct pages): the process reads and writes it at the
    pointer, another driver pins it with get_user_pages and gets the pages the GPU
    reaches; pages still pinned at cudaFreeHost stay allocated until their last unpin."""
    rt, process, host = rig()
    free = host.frames.free_frames
    h = rt.cudaHostAlloc(2 * PAGE_SIZE)
    process.write(h + 8, b"card")
    assert bytes(rt.host_buffer(h)[8:12]) == b"card"
    frames = process.get_user_pages(h, 2, write=True)
    assert frames == rt.registered.find(h).pages
    rt.cudaFreeHost(h)
    assert process.vma(h) is None and host.frames.free_frames == free - 2, "pinned: kept"
    process.put_user_pages(frames)
    assert host.frames.free_frames == free


def test_host_alloc_beyond_the_ram_is_out_of_memory() -> None:
    """More than the host has in one run: cudaErrorMemoryAllocation, nothing taken."""
    rt, _, host = rig()
    free = host.frames.free_frames
    assert code(rt.cudaHostAlloc, 8 << 20) == cudaError.cudaErrorMemoryAllocation
    assert host.frames.free_frames == free and not list(rt.registered)


def test_registered_pages_are_the_process_pages_on_the_bus() -> None:
    """The registration holds the bus address of every page: what the GPU's requests go
    to (the process's frames are scattered: pieces split where they are)."""
    rt, process, _ = rig()
    p = process.malloc(3 * PAGE_SIZE)
    rt.cudaHostRegister(p, 3 * PAGE_SIZE, 0)
    pieces = rt.registered.bus_pieces(p, 3 * PAGE_SIZE, write=True)
    process.write(p, bytes(range(256)) * 48)
    got = b"".join(process.host.phys.read(x.addr, x.length) for x in pieces)
    assert got == bytes(range(256)) * 48


def test_bus_addresses_lead_back_to_their_registration() -> None:
    """``at_bus`` answers what a request of the GPU may reach: the registered bytes of
    each page (not the rest of a page an unaligned range starts or ends in), nothing
    after cudaHostUnregister."""
    rt, process, _ = rig()
    p = process.malloc(3 * PAGE_SIZE)  # 16 bytes past a page boundary
    rt.cudaHostRegister(p, 2 * PAGE_SIZE, 0)
    reg = rt.registered.find(p)
    for piece in rt.registered.bus_pieces(p, 2 * PAGE_SIZE, write=False):
        assert rt.registered.at_bus(piece.addr, 4) is reg
        assert rt.registered.at_bus(piece.addr + piece.length - 4, 4) is reg
    first = reg.pages[0]
    assert rt.registered.at_bus(first + 16, PAGE_SIZE - 16) is reg
    assert rt.registered.at_bus(first + 12, 8) is None, "bytes before the range"
    last = reg.pages[-1]
    assert rt.registered.at_bus(last + 12, 4) is reg and rt.registered.at_bus(last + 16, 4) is None
    rt.cudaHostUnregister(p)
    assert rt.registered.at_bus(first + 16, 4) is None


def test_a_device_mapping_registers_on_the_io_path() -> None:
    """NV: pinning fails on VM_IO | VM_PFNMAP, the I/O path takes it with IoMemory: the
    pages are the BAR's, contiguous; no page is pinned; the pointer is the device
    pointer. Without IoMemory it is refused (the model's choice, as NV types the
    descriptor by the flag)."""
    rt, process, host = rig()
    p = process.mmap_io(BAR, 64 << 10, name="card BAR")
    assert process.get_user_pages(p, 1) == [], "Linux: get_user_pages fails on VM_PFNMAP"
    with pytest.raises(HostMemoryError) as e:
        process.read(p, 4)
    assert e.value.errno == errno.EFAULT
    assert code(rt.cudaHostRegister, p, 64 << 10, MAPPED) == 1
    rt.cudaHostRegister(p + 0x104, 0x200, IO)  # unaligned inside it: fine
    reg = rt.registered.find(p + 0x104)
    assert reg.io and reg.pages == [BAR] and reg.name == "card BAR"
    assert rt.cudaHostGetDevicePointer(p + 0x104) == p + 0x104
    assert [(x.addr, x.length) for x in rt.registered.bus_pieces(p + 0x200, 8, True)] == [
        (BAR + 0x200, 8)
    ]
    assert host.pinned_pages == 0
    rt.cudaHostUnregister(p + 0x104)
    rt.cudaHostRegister(p, 64 << 10, IO | MAPPED)
    assert rt.registered.find(p).pages == [BAR + i * PAGE_SIZE for i in range(16)]


def test_the_io_path_refusals() -> None:
    """NV: the range must lie in one device mapping (not two side by side, not half in
    ordinary memory), uncached, and not in a GPU's BAR."""
    rt, process, _ = rig()
    a = process.mmap_io(BAR, 2 * PAGE_SIZE)
    b = process.mmap_io(BAR + 2 * PAGE_SIZE, 2 * PAGE_SIZE)
    assert code(rt.cudaHostRegister, a, b + PAGE_SIZE - a, IO) == 1
    cached = process.mmap_io(BAR + 0x10_0000, PAGE_SIZE, cached=True)
    assert code(rt.cudaHostRegister, cached, PAGE_SIZE, IO) == 1
    gpu_bar = process.mmap_io(GPU_BAR1 + 0x1000, PAGE_SIZE)
    assert code(rt.cudaHostRegister, gpu_bar, PAGE_SIZE, IO) == 1
    assert not list(rt.registered)


def test_io_memory_needs_root_or_peer_mapping_override() -> None:
    """CUDA's documentation and NV: I/O memory of an unprivileged process is refused with
    cudaErrorNotPermitted unless the driver's PeerMappingOverride is set; ordinary
    memory is not affected. The driver API gives the same numbers as CUresult."""
    rt, process, _ = rig(privileged=False)
    p = process.mmap_io(BAR, PAGE_SIZE)
    assert code(rt.cudaHostRegister, p, PAGE_SIZE, IO) == 800
    with pytest.raises(CudaError) as e:
        rt.cuMemHostRegister(p, PAGE_SIZE, IO)
    assert e.value.code is CUresult.CUDA_ERROR_NOT_PERMITTED
    q = process.malloc(PAGE_SIZE)
    assert code(rt.cudaHostRegister, q, PAGE_SIZE, 0) == 0
    rt.gpu.peer_mapping_override = True
    rt.cuMemHostRegister(p, PAGE_SIZE, IO)
    assert rt.cuMemHostGetDevicePointer(p) == p
    rt.cuMemHostUnregister(p)
    with pytest.raises(CudaError) as e:
        rt.cuMemHostUnregister(p)
    assert e.value.code is CUresult.CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
