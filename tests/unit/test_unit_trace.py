"""The TLP trace decoder and the transfer report on hand-made TLPs (no simulator)."""

from __future__ import annotations

from types import SimpleNamespace

from cocotbext.pcie.core.tlp import Tlp

from cuda_model.gpu import BAR0, BAR1, BAR3, Gpu
from driver_model import regs
from driver_model.desc import Segment, build_chain
from driver_model.regs import BarLayout
from tb.debug.annotate import WaveAnnotations
from tb.debug.records import desc_label, encode, place, read_trace, tlp_label
from tb.debug.report import _ticks, human_bytes, summarize, write_report
from tb.debug.trace import JsonLinesSink, TlpTrace
from tests.unit.tlps import HOST, mem_read, mem_write

FPGA_BAR0, FPGA_BAR1 = 0xC000_0000, 0xC001_0000
GPU_BAR0, GPU_BAR1, GPU_BAR3 = 0xD000_0000, 0x8000_0000_0000_0000, 0xE000_0000


class FakeFunction:
    """match_bar over fixed windows: (base, size, bar index)."""

    def __init__(self, windows) -> None:
        self.windows = windows

    def match_bar(self, addr):
        for base, size, bar in self.windows:
            if base <= addr < base + size:
                return bar, addr - base
        return None


def make_trace(peek_host=None):
    gpu = Gpu(vram_size=1 << 30, bar1_size=256 << 20)
    gpu.bar1_base_provider = lambda: GPU_BAR1
    tb = SimpleNamespace(
        dev=SimpleNamespace(
            functions=[FakeFunction([(FPGA_BAR0, 4096, 0), (FPGA_BAR1, 65536, 1)])]
        ),
        gpu_ep=FakeFunction(
            [(GPU_BAR0, 16 << 20, BAR0), (GPU_BAR1, 256 << 20, BAR1), (GPU_BAR3, 32 << 20, BAR3)]
        ),
        gpu=gpu,
        bars=BarLayout(),
    )
    records: list[dict] = []
    clock = iter(range(0, 10**9, 10))
    trace = TlpTrace(tb, records.append, lambda: float(next(clock)), peek_host)
    return trace, records, gpu


def test_each_target_kind_is_named() -> None:
    trace, records, gpu = make_trace()
    va = gpu.alloc_device(1 << 20).base
    pin = gpu.pin(va, 256 << 10, False, None, None)
    trace.name_buffer(0x1000_0000, 1 << 20, "src buf")
    page1 = pin.bar1_pages[1]
    cases = [
        (mem_write(FPGA_BAR0 + regs.USER_LED, b"\x01\0\0\0", HOST), "fpga_reg", "FPGA LED"),
        (
            mem_write(FPGA_BAR1 + regs.ch_reg(regs.Target.C2H, regs.CH_CONTROL), bytes(4), HOST),
            "fpga_reg",
            "FPGA C2H control",
        ),
        (mem_read(GPU_BAR0, 4, requester=HOST), "gpu_reg", "GPU BAR0 NV_PMC_BOOT_0"),
        (
            mem_write(GPU_BAR1 + (page1 << 16) + 0x40, bytes(64)),
            "gpu_bar1",
            f"GPU BAR1 pin#{pin.pin_id} va+0x10040",
        ),
        (mem_write(0x8000_0000, b"\x03\0\0\0"), "msi", "MSI vector 3"),
        (mem_read(0x1000_0000 + 0x123, 100, tag=4), "host", "host src buf+0x123"),
        (mem_read(0x2000_0000, 4, tag=5), "host", "host 0x20000000"),
        # BAR3 sits in configuration slots 4-5: named by NVIDIA's name, not its slot
        (mem_read(GPU_BAR3 + 0x100, 4, requester=HOST), "gpu_reg", "GPU BAR3 +0x100"),
    ]
    for tlp, kind, label in cases:
        trace.observe("fpga", "up", tlp)
        target = records[-1]["target"]
        assert (target["kind"], target["label"]) == (kind, label), records[-1]
    bar1 = records[3]["target"]
    assert bar1["bar1_page"] == page1 and bar1["va"] == va + 0x10040
    assert bar1["vram"] == gpu.bar1_lookup((page1 << 16) + 0x40)[0]
    gpu.unpin(pin)
    trace.observe("fpga", "up", mem_write(GPU_BAR1 + (page1 << 16), bytes(4)))
    assert records[-1]["target"]["label"].endswith("(unmapped)")


def test_descriptor_fetches_are_numbered_from_the_chain() -> None:
    trace, records, _ = make_trace()
    ring = 0x4000_0000
    chain = build_chain(
        [Segment(0x1000_0000 + i * 64, i * 64, 64) for i in range(3)],
        [ring, ring + 32, ring + 0x800],
    )
    lo = regs.sg_reg(regs.Target.H2C, regs.SG_DESC_LO)
    hi = regs.sg_reg(regs.Target.H2C, regs.SG_DESC_HI)
    trace.observe("fpga", "down", mem_write(FPGA_BAR1 + lo, ring.to_bytes(4, "little"), HOST))
    trace.observe("fpga", "down", mem_write(FPGA_BAR1 + hi, bytes(4), HOST))
    blocks = chain.blocks()
    # the engine fetches the adjacent pair, then follows the next pointer
    for tag, (addr, n) in enumerate(((ring, 64), (ring + 0x800, 32))):
        req = mem_read(addr, n, tag=tag)
        trace.observe("fpga", "up", req)
        cpl = Tlp.create_completion_data_for_tlp(req, HOST)
        cpl.byte_count = n
        cpl.set_data(blocks[addr])  # the descriptors stored at that address
        trace.observe("fpga", "down", cpl)
    labels = [r["target"]["label"] for r in records if r.get("type") == "MRd"]
    assert labels == ["desc 0-1 H2C chain#1", "desc 2 H2C chain#1"]
    # a second chain in the same ring, the other way round: renumbered, not the old names
    trace.observe(
        "fpga", "down", mem_write(FPGA_BAR1 + lo, (ring + 0x800).to_bytes(4, "little"), HOST)
    )
    trace.observe("fpga", "down", mem_write(FPGA_BAR1 + hi, bytes(4), HOST))
    again = build_chain([Segment(0, 0, 64), Segment(64, 64, 64)], [ring + 0x800, ring])
    req = mem_read(ring + 0x800, 32, tag=9)
    trace.observe("fpga", "up", req)
    cpl = Tlp.create_completion_data_for_tlp(req, HOST)
    cpl.byte_count = 32
    cpl.set_data(again.blocks()[ring + 0x800])
    trace.observe("fpga", "down", cpl)
    trace.observe("fpga", "up", mem_read(ring, 32, tag=10))
    assert records[-1]["target"]["label"] == "desc 1 H2C chain#2"
    assert [r["descriptors"] for r in records if r.get("event") == "chain"] == [3]
    cpls = [r for r in records if r.get("type") == "CplD"]
    assert all(r["target"]["kind"] == "desc" for r in cpls)


def test_report_counts_and_pages(tmp_path) -> None:
    trace, _, gpu = make_trace()
    va = gpu.alloc_device(1 << 20).base
    pin = gpu.pin(va, 128 << 10, False, None, None)
    sink = JsonLinesSink(tmp_path / "t.jsonl")
    trace.sinks = [sink]
    trace.name_buffer(0x1000_0000, 1 << 20, "src")
    for i in range(4):  # C2H: 4 x 128 B to the GPU
        trace.observe(
            "fpga", "up", mem_write(GPU_BAR1 + (pin.bar1_pages[0] << 16) + i * 128, bytes(128))
        )
    req = mem_read(0x1000_0002, 300, tag=1)  # H2C: 300 B read from host, two completions
    trace.observe("fpga", "up", req)
    for first, size, remaining in ((0x1000_0002, 62, 300), (0x1000_0040, 238, 238)):
        c = Tlp.create_completion_data_for_tlp(req, HOST)
        c.lower_address = first & 0x7F
        c.byte_count = remaining
        c.set_data(bytes(((first & 3) + size + 3) // 4 * 4))
        trace.observe("fpga", "down", c)
    sink.close()
    records = read_trace(tmp_path / "t.jsonl")
    s = summarize(records)
    assert s["directions"]["C2H"]["by_target"] == {f"gpu pin#{pin.pin_id}": 512}
    assert s["directions"]["H2C"]["by_target"] == {"host src": 300}
    assert s["directions"]["H2C"]["mb_per_s"] > 0
    j, h = write_report(tmp_path / "t.jsonl")
    page = h.read_text()
    assert "<svg" in page and "gpu pin#" in page and j.is_file()
    # units, the axis, the bandwidth's definition, what up and down mean
    assert ">512 B<" in page and ">300 B<" in page and "title='512 bytes'" in page
    assert "simulated time (us)" in page and "<b>Bandwidth</b> here is" in page
    assert "<i>up</i> is towards the root complex" in page
    assert human_bytes(3 << 20) == "3.0 MiB" and human_bytes(1536) == "1.5 KiB"
    assert _ticks(0, 1000) == [0, 200, 400, 600, 800, 1000]
    assert _ticks(1234, 1300, 4) == [1240, 1260, 1280, 1300]


def _peek(blocks: dict[int, bytes]):
    """Host memory holding a chain's descriptor blocks (``build_chain(...).blocks()``)."""

    def peek(addr: int, n: int) -> bytes | None:
        for base, data in blocks.items():
            if base <= addr and addr + n <= base + len(data):
                return data[addr - base : addr - base + n]
        return None

    return peek


def _start_chain(trace, ring: int, blocks: dict[int, bytes], fetches) -> None:
    """Program H2C's first descriptor and answer the engine's descriptor fetches."""
    lo = regs.sg_reg(regs.Target.H2C, regs.SG_DESC_LO)
    hi = regs.sg_reg(regs.Target.H2C, regs.SG_DESC_HI)
    trace.observe("fpga", "down", mem_write(FPGA_BAR1 + lo, ring.to_bytes(4, "little"), HOST))
    trace.observe("fpga", "down", mem_write(FPGA_BAR1 + hi, bytes(4), HOST))
    for tag, (addr, n) in enumerate(fetches):
        req = mem_read(addr, n, tag=tag)
        trace.observe("fpga", "up", req)
        cpl = Tlp.create_completion_data_for_tlp(req, HOST)
        cpl.byte_count = n
        cpl.set_data(_peek(blocks)(addr, n))
        trace.observe("fpga", "down", cpl)


def test_data_tlps_name_their_descriptor_in_chain_order() -> None:
    ring, src = 0x4000_0000, 0x1000_0000
    # descriptors 1 and 2 read the same source: the first not yet fully read gets the TLPs
    segs = [Segment(src, 0, 256), Segment(src + 0x1000, 256, 128), Segment(src + 0x1000, 384, 128)]
    blocks = build_chain(segs, [ring, ring + 32, ring + 64]).blocks()
    trace, records, _ = make_trace(_peek(blocks))
    trace.name_buffer(src, 1 << 20, "src")
    _start_chain(trace, ring, blocks, [(ring, 96)])
    for addr, n in ((src, 128), (src + 128, 128), (src + 0x1000, 128), (src + 0x1000, 128)):
        trace.observe("fpga", "up", mem_read(addr, n, tag=7))
    events = [
        (r["index"], r["total"], r["len"], r["pcie"]) for r in records if r.get("event") == "desc"
    ]
    assert events == [
        (0, 3, 256, "host src+0x0"),
        (1, 3, 128, "host src+0x1000"),
        (2, 3, 128, "host src+0x1000"),
    ]
    data = [r["desc"] for r in records if r.get("type") == "MRd" and r["target"]["kind"] == "host"]
    assert data == [["H2C", 1, 0], ["H2C", 1, 0], ["H2C", 1, 1], ["H2C", 1, 2]]
    # the event comes just before the first TLP of its descriptor
    first = next(i for i, r in enumerate(records) if r.get("event") == "desc")
    assert records[first + 1]["desc"] == ["H2C", 1, 0]
    # a TLP no descriptor covers names none
    trace.observe("fpga", "up", mem_read(src + 0x8000, 64, tag=8))
    assert "desc" not in records[-1]


def test_chain_length_unknown_when_memory_cannot_tell() -> None:
    ring, src = 0x4000_0000, 0x1000_0000
    blocks = build_chain([Segment(src, 0, 64)], [ring]).blocks()
    trace, records, _ = make_trace(None)  # no host memory to walk
    _start_chain(trace, ring, blocks, [(ring, 32)])
    trace.observe("fpga", "up", mem_read(src, 64, tag=3))
    event = next(r for r in records if r.get("event") == "desc")
    assert event["total"] is None and desc_label(event).startswith("desc 0/? H2C 64B")
    # a chain that loops has no length either
    loop = {ring: blocks[ring][:24] + ring.to_bytes(8, "little")}
    loop[ring] = bytes([loop[ring][0] & ~1]) + loop[ring][1:]  # clear Stop: next -> itself
    assert trace._walk(ring) is None
    trace.peek_host = _peek(loop)
    assert trace._walk(ring) is None
    trace.peek_host = _peek(blocks)
    assert trace._walk(ring) == 1


def test_labels_and_tracks() -> None:
    trace, records, gpu = make_trace()
    va = gpu.alloc_device(1 << 20).base
    pin = gpu.pin(va, 256 << 10, False, None, None)
    trace.observe("fpga", "up", mem_write(GPU_BAR1 + (pin.bar1_pages[1] << 16), bytes(256)))
    assert place(records[-1]) == ("fpga_tx", f"MWr 256B -> GPU BAR1 pin#{pin.pin_id} va+0x10000")
    req = mem_read(GPU_BAR1 + (pin.bar1_pages[0] << 16), 256, tag=2)
    trace.observe("gpu", "down", req)
    assert place(records[-1]) == ("gpu_rx", f"MRd 256B tag 2 -> GPU BAR1 pin#{pin.pin_id} va+0x0")
    for first, n in ((0, 128), (128, 128)):
        c = Tlp.create_completion_data_for_tlp(req, HOST)
        c.lower_address, c.byte_count = first, 256 - first
        c.set_data(bytes(n))
        trace.observe("gpu", "up", c)
    assert place(records[-1]) == (
        "gpu_tx",
        f"CplD 128B tag 2 <- GPU BAR1 pin#{pin.pin_id} va+0x0 [+0x80]",
    )
    ur = Tlp.create_ur_completion_for_tlp(mem_read(0x1000, 4, tag=3), HOST)
    trace.observe("fpga", "down", mem_read(0x1000, 4, tag=3))
    trace.observe("fpga", "up", ur)
    assert place(records[-1]) == ("fpga_tx", "Cpl UR tag 3 <- host 0x1000")
    assert place({"event": "chain", "channel": "H2C"}) is None
    # register accesses (the driver's status polling) go to the MMIO track, where the
    # endpoint sees them; the root complex's end of the same TLP is not shown twice
    status = FPGA_BAR1 + regs.ch_reg(regs.Target.C2H, regs.CH_STATUS)
    poll = mem_read(status, 4, tag=9, requester=HOST)
    trace.observe("switch", "down", poll)
    assert place(records[-1]) is None
    trace.observe("fpga", "down", poll)
    assert place(records[-1]) == ("mmio", "MRd 4B tag 9 -> FPGA C2H status")
    done = Tlp.create_completion_data_for_tlp(poll, HOST)
    done.set_data(bytes(4))
    trace.observe("fpga", "up", done)
    assert place(records[-1]) == ("mmio", "CplD 4B tag 9 <- FPGA C2H status")
    trace.observe("gpu", "down", mem_write(GPU_BAR0 + 0x40, bytes(4), HOST))
    assert place(records[-1]) == ("mmio", "MWr 4B -> GPU BAR0 +0x40")
    assert place({"link": "other", "dir": "up", "type": "MWr"}) is None
    assert (
        tlp_label({"type": "CfgRd0", "tag": 7, "target": {"label": "config 03:00.0 +0x10"}})
        == "CfgRd0 tag 7 -> config 03:00.0 +0x10"
    )
    assert place(
        {
            "event": "desc",
            "channel": "C2H",
            "index": 16,
            "total": 64,
            "len": 4096,
            "pcie": "GPU BAR1 pin#2 va+0x10000",
        }
    ) == ("c2h_desc", "desc 16/64 C2H 4096B -> GPU BAR1 pin#2 va+0x10000")


class FakeSignal:
    def __init__(self, bits: int) -> None:
        self.bits, self.value = bits, 0

    def __len__(self) -> int:
        return self.bits


def test_wave_annotations_write_ascii_and_mark_repeats() -> None:
    from tb.debug.records import TRACKS

    handle = SimpleNamespace(**{t: FakeSignal(8 * 16) for t in TRACKS})
    sink = WaveAnnotations(handle)
    rec = {
        "link": "fpga",
        "dir": "up",
        "type": "MWr",
        "addr": 0,
        "len": 4,
        "target": {"label": "host buf+0x0"},
    }
    sink(rec)
    assert handle.fpga_tx.value == encode("MWr 4B -> host b", 16)
    assert encode("MWr 4B -> host b", 16).to_bytes(16, "big") == b"MWr 4B -> host b"
    sink(rec)  # the same label again: marked, so the viewer shows two boxes
    assert handle.fpga_tx.value.to_bytes(16, "big") == b"MWr 4B -> host *"
    sink(rec)
    assert handle.fpga_tx.value == encode("MWr 4B -> host b", 16)
    sink({"event": "chain", "channel": "H2C", "chain": 1, "descriptors": 1})
    assert sink.writes == 3
    assert encode("ab", 8) == 0x6162  # leading NULs: GTKWave shows "ab"


def test_dmabuf_mappings_are_named_by_their_export() -> None:
    """A TLP into a dma-buf's BAR1 mapping is named by the export (``dmabuf#N``), as one
    into an nv-p2p pin is by the pin; the transfer report groups by the same name."""
    from cuda_model.dmabuf import NvDmaBuf

    trace, records, gpu = make_trace()
    va = gpu.alloc_device(2 << 20).base
    phys = [gpu.translate(va + k * 0x10000) >> 16 for k in range(4)]
    export = NvDmaBuf(gpu, va, 4 << 16, phys, phys, 7)
    mapping = gpu.map_phys(va, 4 << 16, phys, "dmabuf")
    mapping.data = export
    trace.observe("fpga", "up", mem_write(GPU_BAR1 + (mapping.bar1_pages[2] << 16), bytes(128)))
    assert place(records[-1]) == ("fpga_tx", "MWr 128B -> GPU BAR1 dmabuf#7 va+0x20000")
    s = summarize(records)
    assert s["directions"]["C2H"]["by_target"] == {"gpu dmabuf#7": 128}
