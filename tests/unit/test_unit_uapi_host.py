"""The driver's user API encoding, host memory model and scatter lists (no simulator)."""

from __future__ import annotations

import ctypes
import errno
import itertools
import struct

import pytest

from driver_model import uapi
from driver_model.host import PAGE_SIZE, FrameAllocator, HostMemory, HostMemoryError, UserProcess
from driver_model.sg import overlaps, page_chunks, slice_scatter

from .ram import Ram


# --- uapi -------------------------------------------------------------------------------
def test_ioctl_numbers_match_hand_computed_values():
    # dir << 30 | size << 16 | 'P' << 8 | nr, worked out by hand from the C header:
    # _IOW = 1, _IOR = 2, _IOWR = 3; 'P' = 0x50; sizes 4, 24, 4, 40, 8, 40, 40
    assert uapi.PICOEVB_IOC_LED == 0x4004_5000
    assert uapi.PICOEVB_IOC_PIN_CUDA == 0xC018_5001
    assert uapi.PICOEVB_IOC_UNPIN_CUDA == 0x4004_5002
    assert uapi.PICOEVB_IOC_H2C2H_DMA == 0xC028_5003
    assert uapi.PICOEVB_IOC_CARD_INFO == 0x8008_5004
    assert uapi.PICOEVB_IOC_H2C_DMA == 0xC028_5005
    assert uapi.PICOEVB_IOC_C2H_DMA == 0xC028_5006
    # the model's extension, numbered apart (nr 0x40): _IOWR, 24 bytes
    assert uapi.PICOEVB_IOC_PIN_DMABUF == 0xC018_5040
    assert uapi.IOCTL_NAMES[uapi.PICOEVB_IOC_PIN_DMABUF] == "PICOEVB_IOC_PIN_DMABUF"
    # and the mailbox read (nr 0x41): _IOWR, 24 bytes
    assert uapi.PICOEVB_IOC_MAILBOX_READ == 0xC018_5041
    for cmd in uapi.ARG_TYPES:
        assert uapi.IOC_TYPE(cmd) == ord("P")
        t = uapi.ARG_TYPES[cmd]
        assert uapi.IOC_SIZE(cmd) == (4 if t is None else ctypes.sizeof(t))
    assert len(set(uapi.ARG_TYPES)) == 9
    with pytest.raises(ValueError):
        uapi.IOC(uapi.IOC_READ, "P", 0, 1 << 14)


def test_structs_have_the_c_layout():
    sizes = {
        uapi.picoevb_rdma_pin_cuda: 24,
        uapi.picoevb_rdma_unpin_cuda: 4,
        uapi.picoevb_rdma_h2c2h_dma: 40,
        uapi.picoevb_rdma_card_info: 8,
        uapi.picoevb_rdma_h2c_dma: 40,
        uapi.picoevb_rdma_c2h_dma: 40,
        uapi.picoevb_rdma_pin_dmabuf: 24,
        uapi.picoevb_rdma_mailbox: 24,
    }
    for t, n in sizes.items():
        assert ctypes.sizeof(t) == n, t.__name__
    # the bytes a C program would pass, packed independently with struct
    pin = uapi.picoevb_rdma_pin_cuda(va=0x7F40_0001_2345, size=0x40_0000, handle=7)
    assert pin.to_bytes() == struct.pack("<QQI4x", 0x7F40_0001_2345, 0x40_0000, 7)
    mbox = uapi.picoevb_rdma_mailbox(timeout_ns=1000, value=7, flags=1, left=2)
    assert mbox.to_bytes() == struct.pack("<QIIII", 1000, 7, 1, 2, 0)
    pin_fd = uapi.picoevb_rdma_pin_dmabuf(fd=5, size=0x20_0000, handle=3)
    assert pin_fd.to_bytes() == struct.pack("<iIQI4x", 5, 0, 0x20_0000, 3)
    c2h = uapi.picoevb_rdma_c2h_dma.from_bytes(struct.pack("<5Q", 1, 2, 3, 4, 5))
    assert (c2h.dst, c2h.src, c2h.len, c2h.flags, c2h.dma_time_ns) == (1, 2, 3, 4, 5)
    h2c = uapi.picoevb_rdma_h2c_dma.from_bytes(struct.pack("<5Q", 1, 2, 3, 4, 5))
    assert (h2c.src, h2c.dst) == (1, 2)
    with pytest.raises(ValueError):
        uapi.picoevb_rdma_card_info.from_bytes(b"\0" * 4)


# --- host memory ------------------------------------------------------------------------
def make_host(size=1 << 20, base=0x1000_0000, seed=3) -> HostMemory:
    return HostMemory(Ram(base, size), base, size, seed)


def test_frames_are_scattered_in_short_runs_and_reused():
    fa = FrameAllocator(0x10_0000, 256 * PAGE_SIZE, seed=5, max_run=4)
    frames = fa.alloc(64)
    assert len(set(frames)) == 64 and fa.free_frames == 192
    runs, run = [], 1
    for a, b in itertools.pairwise(frames):
        if b == a + PAGE_SIZE:
            run += 1
        else:
            runs.append(run)
            run = 1
    runs.append(run)
    assert max(runs) <= 4 and len(runs) > 8, runs  # scattered, some contiguity
    assert any(r > 1 for r in runs)
    fa.free(frames[:8])
    assert fa.free_frames == 200
    with pytest.raises(HostMemoryError) as e:
        fa.free(frames[:1])
    assert e.value.errno == errno.EINVAL
    base = fa.alloc_contiguous(16)
    assert base % PAGE_SIZE == 0
    with pytest.raises(HostMemoryError) as e:
        fa.alloc(1000)
    assert e.value.errno == errno.ENOMEM


def test_user_process_memory_and_get_user_pages():
    host = make_host()
    p = UserProcess(host)
    ptr = p.malloc(3 * PAGE_SIZE)
    assert ptr % PAGE_SIZE == 16, "large malloc: 16 bytes past a page boundary"
    data = bytes(range(256)) * 48
    p.write(ptr, data)
    assert p.read(ptr, len(data)) == data
    start = ptr & ~(PAGE_SIZE - 1)
    frames = p.get_user_pages(start, 4)
    assert len(frames) == 4
    # the bytes really live in those frames
    assert host.phys.read(frames[1], 16) == data[PAGE_SIZE - 16 : PAGE_SIZE]
    short = p.get_user_pages(start, 6)
    assert len(short) == 4, "short count at the unmapped guard page"
    assert host.pinned_pages == 8, "a short count pins what it returns"
    assert p.copy_from_user(start + 4 * PAGE_SIZE, 4) is None
    assert not p.copy_to_user(0x1000, b"x")
    with pytest.raises(HostMemoryError) as e:
        p.write(ptr + 4 * PAGE_SIZE - 20, b"x" * 8)
    assert e.value.errno == errno.EFAULT
    assert p.read(ptr + 4 * PAGE_SIZE - 28, 4) == bytes(4), "a faulting write stores nothing"
    free_before = host.frames.free_frames
    p.free(ptr)
    # pinned pages outlive their mapping (the device may still be writing them)
    assert host.frames.free_frames == free_before
    p.put_user_pages(frames)
    assert host.frames.free_frames == free_before and host.pinned_pages == 4
    p.put_user_pages(short)
    assert host.frames.free_frames == free_before + 4 and host.pinned_pages == 0
    with pytest.raises(HostMemoryError, match="not pinned"):
        p.put_user_pages(frames[:1])
    with pytest.raises(HostMemoryError):
        p.free(ptr)
    buf = host.dma_alloc_coherent(5000)
    assert buf.size == 2 * PAGE_SIZE and buf.bus % PAGE_SIZE == 0
    buf.write(4090, b"abcdefgh")
    assert host.phys.read(buf.bus + 4090, 8) == b"abcdefgh"
    with pytest.raises(HostMemoryError):
        buf.read(buf.size - 2, 4)


def test_read_only_mappings():
    """A read-only mapping (const data, mprotect): loads and copy_from_user work; stores,
    copy_to_user and get_user_pages for writing (FOLL_WRITE) fault, storing nothing."""
    host = make_host()
    p = UserProcess(host)
    ro = p.mmap(2 * PAGE_SIZE, writable=False)
    assert p.read(ro, 8) == bytes(8) and p.copy_from_user(ro, 8) == bytes(8)
    with pytest.raises(HostMemoryError) as e:
        p.write(ro + 8, b"x")
    assert e.value.errno == errno.EFAULT
    assert not p.copy_to_user(ro, b"abcd")
    assert p.read(ro, 8) == bytes(8), "a refused store stored something"
    assert len(p.get_user_pages(ro, 2)) == 2, "reading pins work"
    assert p.get_user_pages(ro, 2, write=True) == [], "FOLL_WRITE on read-only pages"
    # mprotect turns a mapping read-only and back
    rw = p.mmap(PAGE_SIZE)
    p.mprotect(rw, False)
    with pytest.raises(HostMemoryError):
        p.write(rw, b"y")
    p.mprotect(rw, True)
    p.write(rw, b"y")
    assert p.read(rw, 1) == b"y"
    with pytest.raises(HostMemoryError):
        p.mprotect(rw + PAGE_SIZE, True)


# --- scatter lists ----------------------------------------------------------------------
def test_page_chunks_coalesce_and_slice():
    pages = [0x5000, 0x6000, 0x9000, 0x2000]
    assert page_chunks(pages, PAGE_SIZE, 0x10, 0x2000) == [(0x5010, 0x1FF0), (0x9000, 0x10)]
    assert page_chunks(pages, PAGE_SIZE, 0xFFF, 0x2002) == [
        (0x5FFF, 0x1001),
        (0x9000, 0x1000),
        (0x2000, 1),
    ]
    with pytest.raises(ValueError):
        page_chunks(pages, PAGE_SIZE, 1, 4 * PAGE_SIZE)
    sg = [(0x1000, 0x100), (0x8000, 0x200), (0x3000, 0x50)]
    assert slice_scatter(sg, 0, 0x350) == sg
    assert slice_scatter(sg, 0xF0, 0x20) == [(0x10F0, 0x10), (0x8000, 0x10)]
    assert slice_scatter(sg, 0x300, 0x50) == [(0x3000, 0x50)]
    assert slice_scatter(sg, 0x120, 0x1) == [(0x8020, 1)]
    with pytest.raises(ValueError):
        slice_scatter(sg, 0x300, 0x51)


def test_overlaps():
    a = [(0x1000, 0x1000), (0x5000, 0x800)]
    assert overlaps(a, [(0x57FF, 1)]) and overlaps([(0x0, 0x1001)], a)
    assert not overlaps(a, [(0x2000, 0x3000), (0x5800, 0x100)]), "touching is not sharing"
    assert not overlaps(a, [(0x1800, 0)])
