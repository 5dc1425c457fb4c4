"""A real Linux kernel in the loop: a User-mode Linux guest whose PCI bus holds the
simulated card (tb/guest/). The guest's programs and the modules they load are in
guest/; ``make guest`` builds the kernel they run on.
"""

from __future__ import annotations

import os
import random
import shlex
import shutil
import tempfile
from pathlib import Path

import cocotb

from tb.debug.trace import enable_trace
from tb.env.faults import FaultRule
from tb.env.system import TB, is_picoevb
from tb.guest.boot import GPU_KO, PEVB_KO, boot, run_to_end
from tb.guest.boot import GUEST_SOURCES as GUEST
from tb.guest.card import FabricFunction
from tb.guest.uml import TOOLS

WALL_LIMIT_S = 300


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_guest_enumerates_card(dut):
    """The guest's PCI core finds the card with its IDs and class, sizes its BARs through
    the shadow registers and places them in its own window. Its command lies under the
    host's /tmp, as in a clone there: the guest's own /tmp must not hide it."""
    tb = TB(dut)
    f0 = tb.dev.functions[0]
    ids = [f"0x{f0.vendor_id:04x}", f"0x{f0.device_id:04x}", f"0x{f0.class_code:06x}"]
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="pevb-enumerate-") as d:
        script = Path(d) / "enumerate.sh"
        shutil.copy(GUEST / "tests" / "enumerate.sh", script)
        bridge = await boot(tb, ["/bin/sh", str(script), *ids])
        status = await bridge.run(WALL_LIMIT_S)
    assert status == 0, f"guest command failed ({status}):\n{bridge.guest.tail()}"
    assert bridge.stats["CFG_READ"] > 20, dict(bridge.stats)


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def test_guest_driver_moves_data(dut):
    """The project's C driver (guest/drivers/pevb) binds to the card, takes an MSI,
    and pevb-dma-test moves data host -> card -> host through H2C and C2H descriptor
    chains in the guest's memory, with odd lengths and offsets, across pages, at the end
    of the card's memory, and gets the errors it expects."""
    tb = TB(dut)
    records: list[dict] = []
    enable_trace(tb, records.append)
    script = GUEST / "tests" / "pevb-dma.sh"
    command = ["/bin/sh", str(script), str(TOOLS), str(PEVB_KO)]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S)
    assert "PASSED: 0 failure(s)" in console, bridge.guest.tail(60)
    assert "pevb-dma: driver unloaded" in console
    assert bridge.stats["msi"] > 0, "the driver's transfers completed without an interrupt"
    assert bridge.device.failed_reads == 0
    # the TLP trace names what the guest did: its register accesses by register, the
    # card's DMA into its RAM and its interrupts by the names the bridge gave them
    labels = {r["target"]["label"] for r in records if r.get("link") == "fpga" and "target" in r}
    assert "FPGA H2C status (clear on read)" in labels, sorted(labels)[:20]
    assert any(label.startswith("host guest RAM+") for label in labels), sorted(labels)[:20]
    msis = [r for r in records if r.get("target", {}).get("label", "").startswith("host guest MSI")]
    assert len(msis) >= 2 * bridge.stats["msi"], "each MSI on the FPGA's link and the switch's"


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def test_guest_driver_shared_time(dut):
    """The driver test with the simulation as the guest's calendar: the guest's clock is
    the simulation's (its idle time jumps while the fabric is quiet), the card's
    interrupts reach it while it waits, and the run's journal (every access, interrupt
    and grant, with its simulated time) is the same on every run
    (tests/sim/test_sim_guest.py runs it twice and compares)."""
    tb = TB(dut)
    script = GUEST / "tests" / "pevb-dma.sh"
    command = ["/bin/sh", str(script), str(TOOLS), str(PEVB_KO)]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, time="shared")
    assert "PASSED: 0 failure(s)" in console, bridge.guest.tail(60)
    assert bridge.stats["msi"] > 0
    grants = [what for _, what in bridge.journal if what.startswith("RUN ")]
    assert grants, "the guest never waited for the calendar"


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def test_guest_driver_sleeps_after_a_posted_start(dut):
    """Under shared time, the driver starts each chain with a posted write (Run) and
    sleeps until the interrupt with nothing read in between, as NVIDIA's picoevb-rdma
    does (``flush_start=0``): the guest's clock must not jump to its timer while that
    write is on its way to the card, nor while the chain it started runs."""
    tb = TB(dut)
    script = GUEST / "tests" / "pevb-dma.sh"
    command = ["/bin/sh", str(script), str(TOOLS), str(PEVB_KO), "flush_start=0", "-n", "4"]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, time="shared")
    assert "PASSED: 0 failure(s)" in console, bridge.guest.tail(60)
    assert "timed out" not in console.lower(), bridge.guest.tail(60)


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def test_guest_sees_the_gpu(dut):
    """The GPU as a second device of the guest's bus (00:01.0, a socket of its own): the
    modelled GPU's IDs and class 0x0302, its 64 KiB control block as BAR0 in the guest's
    window, no BAR1 there (it stays in the fabric); the card beside it at 00:00.0 moves
    data as before, under shared time."""
    tb = TB(dut)
    ep = tb.gpu_ep
    f0 = tb.dev.functions[0]
    ids = [f"0x{ep.vendor_id:04x}", f"0x{ep.device_id:04x}", f"0x{ep.class_code:06x}"]
    script = GUEST / "tests" / "gpu-device.sh"
    dma = GUEST / "tests" / "pevb-dma.sh"
    then = ["/bin/sh", str(dma), str(TOOLS), str(PEVB_KO), "-n", "2"]
    command = ["/bin/sh", str(script), *ids, f"0x{f0.vendor_id:04x}", *then]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, gpu=True, time="shared")
    assert "gpu-device: ok" in console and "PASSED: 0 failure(s)" in console
    assert bridge.stats["CFG_READ gpu"] > 10, dict(bridge.stats)
    assert bridge.slots[1].device.memory_enabled is False, "no driver enabled the GPU"


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def test_guest_gpu_driver(dut):
    """The project's GPU driver in the guest (pevb_gpu.ko, nv-p2p's exports): a context
    per open file, memory and copies through the control block's command ring, pins
    through nvidia_p2p_get_pages and nvidia_p2p_dma_map_pages (bus addresses in the
    fabric's BAR1), a free callback in process context before cudaFree returns, another
    at the file's release (the process's exit), and the errors (pevb-gpu-test); then no
    pin and no mapping is left in the GPU model, under shared time."""
    tb = TB(dut)
    command = ["/bin/sh", str(GUEST / "tests" / "gpu.sh"), str(TOOLS), str(GPU_KO)]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, gpu=True, time="shared")
    assert "PASSED: 0 failure(s)" in console and "gpu: driver unloaded" in console
    gpu = bridge.slots[1].device
    assert gpu.stats["P2P_GET_PAGES"] >= 3 and gpu.stats["CTX_DESTROY"] == 1, gpu.stats
    assert gpu.stats["free_callback"] == 2, gpu.stats  # at cudaFree, and at the exit
    assert bridge.stats["msi gpu"] > 0, dict(bridge.stats)
    # the journal names each command the GPU ran, with its status
    ran = [w for _, w in bridge.journal if w.startswith("GPU ")]
    assert any(w.startswith("GPU P2P_GET_PAGES ctx 0: status 0") for w in ran), ran[:8]
    assert any(w.startswith("GPU MEMCPY_HTOD ctx 1: status 0") for w in ran), ran[:8]
    assert not gpu.pins and not gpu.contexts
    assert tb.p2p.live_mappings() == 0
    assert all(p.state.value in ("released", "revoked") for p in tb.gpu.pins.values())


def _bar1_bytes(records: list[dict]) -> tuple[int, int]:
    """The bytes the card read from and wrote to the GPU's BAR1, by the trace (its
    requests on its own link)."""
    bar1 = [
        r
        for r in records
        if r.get("link") == "fpga" and r.get("target", {}).get("kind") == "gpu_bar1"
    ]
    reads = sum(r["len"] for r in bar1 if r["type"] == "MRd")
    return reads, sum(r["len"] for r in bar1 if r["type"] == "MWr")


@cocotb.test(timeout_time=4000, timeout_unit="ms")
async def test_guest_card_and_gpu(dut):
    """The card's driver pins GPU memory through the GPU driver's nv-p2p and moves it
    with picoevb-rdma's ioctls (pevb-rdma-test): GPU -> card -> host, host -> card -> GPU
    and GPU -> card -> GPU (H2C2H, in pieces of the card's memory) through the RTL, every
    byte; the card's reads and writes reach the GPU's BAR1 in the fabric; memory freed
    under the card's pins runs the card driver's callback, after which the handle is gone;
    closing the card's file releases the pin it still holds. Under shared time."""
    tb = TB(dut)
    records: list[dict] = []
    enable_trace(tb, records.append)
    script = GUEST / "tests" / "rdma.sh"
    command = ["/bin/sh", str(script), str(TOOLS), str(GPU_KO), str(PEVB_KO)]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, gpu=True, time="shared")
    assert "PASSED: 0 failure(s)" in console and "rdma: drivers unloaded" in console
    reads, writes = _bar1_bytes(records)
    # H2C from the surfaces: 40000 (H2C) + 2 x 100000 (H2C2H); C2H into them: 30000 (C2H)
    # + 2 x 100000 (H2C2H)
    assert (reads, writes) == (240000, 230000), "the card's bytes to and from BAR1"
    gpu = bridge.slots[1].device
    # the two pins in the memory freed under them; the one left pinned is put at close
    assert gpu.stats["free_callback"] == 2, gpu.stats
    assert tb.p2p.live_mappings() == 0 and not gpu.pins
    assert all(p.state.value in ("released", "revoked") for p in tb.gpu.pins.values())
    if is_picoevb(dut):
        assert int(dut.led.value) == 5


@cocotb.test(timeout_time=4000, timeout_unit="ms")
async def test_guest_cuda_library(dut):
    """The project's CUDA libraries in the guest (libcudart.so.13 and libcuda.so.1 over
    pevb_gpu.ko) from a C program, pevb-cuda-test: device queries, 1 MiB copies both ways
    and between device buffers, memsets, fill_surface launched by name both ways nvcc's
    code does and checked word by word, a stream held by cuStreamWaitValue32 while
    another thread synchronises on it and the process goes on, events, pointer
    attributes, host memory and error names. Under shared time; then the process's
    context and everything it allocated are gone from the GPU model."""
    tb = TB(dut)
    program = TOOLS / "pevb-cuda-test"
    command = ["/bin/sh", str(GUEST / "tests" / "cuda.sh"), str(TOOLS), str(GPU_KO), str(program)]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, gpu=True, time="shared")
    assert "cuda: all checks passed" in console and "cuda: driver unloaded" in console
    gpu = bridge.slots[1].device
    for command in ("LAUNCH", "KERNEL_LOOKUP", "WAIT_VALUE", "WRITE_VALUE", "EVENT_ELAPSED"):
        assert gpu.stats[command] >= 1, gpu.stats
    assert gpu.stats["CTX_DESTROY"] == 1 and not gpu.contexts, gpu.stats
    assert tb.gpu.find_allocation(0) is None and not tb.gpu._allocs, "memory outlived the process"


@cocotb.test(timeout_time=4000, timeout_unit="ms")
async def test_guest_cuda_program(dut):
    """A CUDA program built unmodified by NVIDIA's nvcc (``make guest-cuda``) runs in the
    guest on the project's libraries: its <<<>>> launch of fill_surface reaches the GPU
    model's kernel by name, its surface comes back verified, and a copy queued behind
    cuStreamWaitValue32 lands only once another stream writes the value."""
    tb = TB(dut)
    program = TOOLS / "cuda-fill"
    command = ["/bin/sh", str(GUEST / "tests" / "cuda.sh"), str(TOOLS), str(GPU_KO), str(program)]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, gpu=True, time="shared")
    assert "cuda-fill: fill_surface 256 x 256 verified" in console
    assert "cuda-fill: PASSED" in console and "cuda: driver unloaded" in console
    gpu = bridge.slots[1].device
    assert gpu.stats["LAUNCH"] == 1 and gpu.stats["KERNEL_LOOKUP"] == 1, gpu.stats
    assert not gpu.contexts


@cocotb.test(timeout_time=8000, timeout_unit="ms")
async def test_guest_rdma_cuda(dut):
    """The project's own GPUDirect RDMA programs, built by nvcc (``make guest-cuda``), on
    its drivers and CUDA libraries: pevb-rdma-cuda fills a cudaMalloc surface with
    fill_surface<<<>>>, pins it and a second one through the card's driver and moves it
    GPU -> FPGA -> GPU (H2C2H) and GPU -> FPGA -> host through the RTL, every word
    checked, then frees a surface under the card's pin (the card driver's callback runs
    before cudaFree returns; the handle is gone); pevb-rdma-perf times H2C and C2H runs
    from 4 KiB to the card's memory and checks each size's data. Under shared time."""
    tb = TB(dut)
    records: list[dict] = []
    enable_trace(tb, records.append)
    script = GUEST / "tests" / "rdma.sh"
    programs = [str(TOOLS / "pevb-rdma-cuda"), "-s", "262144", "-r", "+"]
    programs += [str(TOOLS / "pevb-rdma-perf"), "-n", "2"]
    command = ["/bin/sh", str(script), str(TOOLS), str(GPU_KO), str(PEVB_KO), *programs]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, gpu=True, time="shared")
    for line in (
        "pevb-rdma-cuda: GPU -> FPGA -> GPU: 262144 bytes verified",
        "pevb-rdma-cuda: GPU -> FPGA -> host: 262144 bytes verified",
        "pevb-rdma-cuda: cudaFree under the card's pin: the handle is gone",
        "pevb-rdma-cuda: PASSED",
        "pevb-rdma-perf: PASSED",
        "rdma: drivers unloaded",
    ):
        assert line in console, f"{line!r} missing:\n{bridge.guest.tail(60)}"
    rates = [ln for ln in console.splitlines() if "MB/s" in ln]
    assert len(rates) == 2 * 5, rates  # H2C and C2H, 4 KiB to the picoevb's 64 KiB
    reads, writes = _bar1_bytes(records)
    perf = 2 * (4 + 8 + 16 + 32 + 64) * 1024  # each size twice, each way
    # pevb-rdma-cuda: H2C2H and H2C of 256 KiB, 64 bytes before the free; C2H2H into BAR1
    assert (reads, writes) == (2 * 262144 + 64 + perf, 262144 + perf), (reads, writes)
    gpu = bridge.slots[1].device
    assert gpu.stats["free_callback"] == 1, gpu.stats
    assert gpu.stats["LAUNCH"] == 4, gpu.stats  # two surfaces, the revoked one, perf's
    # the trace names the GPU's commands by the calls they serve, the kernel's pins too
    calls = [(r["ctx"], r["call"], r["detail"]) for r in records if r.get("event") == "gpu"]
    assert len(calls) == sum(v for k, v in gpu.stats.items() if k.isupper()), gpu.stats
    # pevb-rdma-cuda: two surfaces, three pieces of the first, the revoked one; perf: two
    assert sum(c[1] == "nvidia_p2p_get_pages" and c[0] == 0 for c in calls) == 2 + 3 + 1 + 2
    launches = [c for c in calls if c[1] == "cudaLaunchKernel"]
    assert len(launches) == 4 and all(c[2].startswith("fill_surface<<<") for c in launches)
    assert tb.p2p.live_mappings() == 0 and not gpu.pins and not gpu.contexts


async def _driver_on_intx(dut, time: str) -> None:
    tb = TB(dut)
    records: list[dict] = []
    enable_trace(tb, records.append)
    script = GUEST / "tests" / "pevb-dma.sh"
    command = ["/bin/sh", str(script), str(TOOLS), str(PEVB_KO), "msi=0", "-n", "8"]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S, time=time)
    assert "PASSED: 0 failure(s)" in console, bridge.guest.tail(60)
    assert ", INTx, DMA BAR" in console, bridge.guest.tail(60)
    f0 = tb.dev.functions[0]
    assert not f0.msi_cap.msi_enable and bridge.stats["msi"] == 0, dict(bridge.stats)
    # every transfer woke on the legacy line: INT messages, the line down at the end
    assert bridge.stats["int"] > 0 and bridge.stats["intx_assert"] > 0, dict(bridge.stats)
    assert bridge.stats["intx_assert"] == bridge.stats["intx_deassert"], dict(bridge.stats)
    assert not tb.intx.level(tb.intx_line)
    ints = [r["type"] for r in records if r.get("link") == "fpga" and "INT" in r["type"]]
    assert ints[:2] == ["Assert_INTA", "Deassert_INTA"], ints[:4]
    assert ints.count("Assert_INTA") == ints.count("Deassert_INTA") == tb.dev.intx_messages // 2
    assert "timed out" not in console.lower(), bridge.guest.tail(60)


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def test_guest_driver_on_intx(dut):
    """The project's C driver with ``msi=0`` takes the card's legacy interrupt, shared
    (as NVIDIA's picoevb-rdma does): the card asserts INTA with MSI off, the bridge sends
    the guest virt-pci's INT message, and pevb-dma-test moves data, each chain woken by
    the line."""
    await _driver_on_intx(dut, "free")


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def test_guest_driver_on_intx_shared_time(dut):
    """The INTx driver test under shared time: the line's INT reaches the guest while it
    waits, and after the guest handled one the line is looked at again."""
    await _driver_on_intx(dut, "shared")


@cocotb.test(timeout_time=100000, timeout_unit="ms")
async def test_guest_command(dut):
    """Your own program in the guest against the card (``PEVB_GUEST_COMMAND``: a program
    and its arguments, split as a shell would, paths as the host sees them;
    ``PEVB_GUEST_TIME``: free or shared; ``PEVB_GUEST_GPU=1``: the GPU on the bus too;
    ``PEVB_GUEST_WALL_S``: its wall-time bound, 1800 s): it must exit 0
    (``tests/sim/test_sim_guest.py::test_guest_command`` skips without one)."""
    line = os.environ.get("PEVB_GUEST_COMMAND", "")
    assert line, "PEVB_GUEST_COMMAND names no command"
    tb = TB(dut)
    time = os.environ.get("PEVB_GUEST_TIME", "free")
    # (words, not a shell line: the kernel's command line carries init's arguments)
    gpu = os.environ.get("PEVB_GUEST_GPU") == "1"
    bridge = await boot(tb, shlex.split(line), gpu=gpu, time=time)
    status = await bridge.run(float(os.environ.get("PEVB_GUEST_WALL_S", "1800")))
    tb.log.info("guest bridge: %s", dict(bridge.stats))
    assert status == 0, f"guest command failed ({status}):\n{bridge.guest.tail(60)}"


@cocotb.test(timeout_time=20000, timeout_unit="ms")
async def test_guest_random_transfers(dut):
    """The longer guest regression (``make guest-regress``): the driver test with
    ``PEVB_GUEST_CASES`` random transfers more (lengths up to 64 KiB, offsets of host
    buffers and card memory drawn from ``PEVB_GUEST_SEED``), in ``PEVB_GUEST_TIME``
    (free or shared). With ``PEVB_GUEST_FAULT`` (``ur``: an Unsupported Request, ``drop``:
    a completion the card never gets, so its completion timeout) that fault strikes three
    of the card's reads of guest memory, placed by the seed: the driver returns EIO for
    the transfer each one hits, and that transfer, run again, is exact."""
    seed = int(os.environ.get("PEVB_GUEST_SEED", "1"))
    cases = int(os.environ.get("PEVB_GUEST_CASES", "20"))
    time = os.environ.get("PEVB_GUEST_TIME", "free")
    fault = os.environ.get("PEVB_GUEST_FAULT", "")
    tb = TB(dut)
    script = GUEST / "tests" / "pevb-dma.sh"
    command = ["/bin/sh", str(script), str(TOOLS), str(PEVB_KO), "-s", str(seed), "-n", str(cases)]
    rules = []
    if fault:
        rng = random.Random(seed)
        # (past the fixed cases' reads, before the last random ones': the edge cases at
        # the end expect exact answers)
        skips = sorted(rng.sample(range(40 * 8, 40 * max(cases, 10)), 3))
        rules = [tb.faults.add(FaultRule(fault, target="host", skip=s)) for s in skips]
        command += ["-f", str(len(rules))]
    bridge, console = await run_to_end(tb, command, WALL_LIMIT_S * 4, time=time)
    assert "PASSED: 0 failure(s)" in console, bridge.guest.tail(60)
    assert console.count("\nok   len") >= 7 + cases, bridge.guest.tail(60)
    if rules:
        assert all(r.fired == 1 for r in rules), [(r.skip, r.fired) for r in rules]
        eio = console.count("\nfault ")
        assert 1 <= eio <= len(rules), f"{eio} EIOs for {len(rules)} faults"
        assert f"faults: {eio} transfer(s) failed with EIO" in console, bridge.guest.tail(60)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_bridge_card_shadow_bars_and_failed_reads(dut):
    """The bridge's view of the card, without a guest: the BAR registers are the guest's
    (a size probe reads the real BAR's size and flags, a placement is kept, the fabric's
    BAR is left alone), BAR accesses reach the card at the fabric's address, and a read
    the card answers with UR (memory space off), or one outside the BAR, reads
    all-ones."""
    tb = TB(dut)
    await tb.init(bind=False)
    card = FabricFunction(tb.rc, tb.pci, "picoevb")
    await card.probe()
    dma = tb.bars.dma
    real = tb.pci.bar_addr[dma]
    assert card.bars[dma].address == real and card.bars[dma].size == 64 << 10
    reg = 0x10 + 4 * dma
    await card.config_write(reg, 4, 0xFFFFFFFF)
    assert await card.config_read(reg, 4) == 0xFFFF0000, "the size probe of a 64 KiB BAR"
    await card.config_write(reg, 4, 0xF0000000)
    assert await card.config_read(reg, 4) == 0xF0000000
    assert await card.config_read(reg + 2, 2) == 0xF000
    fabric = int.from_bytes(await tb.rc.config_read(tb.pci.pcie_id, reg, 4), "little")
    assert fabric & ~0xF == real, "the fabric's BAR is left as enumeration placed it"
    vendor = await card.config_read(0, 2)
    assert vendor == tb.dev.functions[0].vendor_id, "other registers are the card's own"
    await tb.pci.enable_device()
    ident = await card.bar_read(dma, 0x2000, 4)
    assert int.from_bytes(ident, "little") >> 20 == 0x1FC, ident.hex()
    assert await card.bar_read(dma, 64 << 10, 4) == b"\xff" * 4, "outside the BAR"
    command = await card.config_read(0x04, 2)
    await card.config_write(0x04, 2, command & ~0x2)  # memory space off: the card URs
    assert await card.bar_read(dma, 0x2000, 4) == b"\xff" * 4
    assert card.failed_reads == 2
