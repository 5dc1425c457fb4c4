"""Fuzzing of every parser a guest, a user or a file feeds (Hypothesis): the vhost-user
messages, the virt-pci requests the bridge serves, the time-travel calendar, XDMA
descriptors and chains, and the runner's build options. (The driver model's ioctl surface
is fuzzed against the RTL: tb/tests/cocotb_driver.py, ``test_ioctl_fuzz``.)

The invariants: no exception but the module's named errors; no file descriptor left
open; nothing written to guest memory but the buffers a request gave and its used ring;
nothing reaching the device that the guest did not ask for, whole and within bounds.

The suite runs each target on a fixed budget (``PEVB_FUZZ_EXAMPLES``, 150 by default,
derandomized so that every run tries the same inputs); ``make fuzz`` runs them long with
fresh inputs and writes how many each tried (``PEVB_FUZZ_REPORT``).
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import socket
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driver_model.desc import (
    DESC_SIZE,
    Chain,
    Descriptor,
    DescriptorError,
    Segment,
    build_chain,
    split_segments,
)
from tb.config import options
from tb.config.profiles import PROFILES, get_profile
from tb.guest import bridge as bridge_module
from tb.guest.bridge import CMD_QUEUE, GuestBridge
from tb.guest.errors import GuestProtocolError
from tb.guest.frontend import NUM, RAM_BASE, RAM_SIZE, RINGS, FrontEnd
from tb.guest.timetravel import MSG as TT_MSG
from tb.guest.timetravel import Calendar
from tb.guest.uml import GuestError, GuestOptions
from tb.guest.vhost_user import (
    DESC,
    DESC_F_NEXT,
    DESC_F_WRITE,
    HEADER,
    MAX_QUEUE_SIZE,
    Kick,
    Request,
    VhostUserBackend,
)
from tb.guest.virtpci import MAX_ACCESS, MSG, Op, PciRequest, VirtPciError, parse

from .guestfakes import Device, GuestRam, RootComplex

EXAMPLES = int(os.environ.get("PEVB_FUZZ_EXAMPLES", "150"))
LONG = "PEVB_FUZZ_REPORT" in os.environ
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # any machine, however loaded
    derandomize=not LONG,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
TRIED: collections.Counter[str] = collections.Counter()
FOUND: collections.Counter[str] = collections.Counter()  # inputs refused with a named error

pytestmark = pytest.mark.fuzz


@pytest.fixture(scope="module", autouse=True)
def report():
    """``make fuzz``: add this run's counts to ``$PEVB_FUZZ_REPORT`` (JSON)."""
    yield
    path = os.environ.get("PEVB_FUZZ_REPORT")
    if not path:
        return
    p = Path(path)
    old = json.loads(p.read_text()) if p.exists() else {}
    for name, n in TRIED.items():
        entry = old.setdefault(name, {"tried": 0, "refused": 0})
        entry["tried"] += n
        entry["refused"] += FOUND[name]
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n")


def open_fds() -> set[int]:
    return {int(n) for n in os.listdir("/proc/self/fd")}


# --- vhost-user -----------------------------------------------------------------------

REQUESTS = [int(r) for r in Request] + [0, 19, 20, 22, 40, 0xFFFF]


def payloads() -> st.SearchStrategy[bytes]:
    """Payloads as a front end might send them: the request's own structures with any
    values, and raw bytes of any length."""
    u32 = st.integers(0, 2**32 - 1)
    u64 = st.integers(0, 2**64 - 1)
    near = st.sampled_from([0, 1, 2, 3, 16, 255, 256, 32768, 40000, 65535, 65536])
    return st.one_of(
        st.binary(max_size=64),
        st.builds(lambda i, n: struct.pack("<II", i, n), st.integers(0, 3), near | u32),
        st.builds(lambda v: struct.pack("<Q", v), u64 | st.sampled_from([0, 1 << 8, 0x101])),
        st.builds(
            lambda i, d, u, a: struct.pack("<IIQQQQ", i, 0, d, u, a, 0),
            st.integers(0, 3),
            st.sampled_from([RAM_BASE, RAM_BASE + 8, RAM_BASE + RAM_SIZE - 16, 0]) | u64,
            st.sampled_from([RAM_BASE + 0x400, RAM_BASE + 0x402]) | u64,
            st.sampled_from([RAM_BASE + 0x100, RAM_BASE + 0x101]) | u64,
        ),
        st.builds(
            lambda n, g, s, o: struct.pack("<II", n, 0) + struct.pack("<QQQQ", g, s, g, o),
            st.integers(0, 10),
            st.sampled_from([0, RAM_BASE, 2**64 - 4096]) | u64,
            st.sampled_from([0, 4096, RAM_SIZE, 2 * RAM_SIZE, 2**63]) | u64,
            st.sampled_from([0, 1, 4096, RAM_SIZE]) | u64,
        ),
    )


MESSAGE = st.tuples(
    st.sampled_from(REQUESTS) | st.integers(0, 2**32 - 1),
    st.integers(0, 15),
    payloads(),
    st.lists(st.sampled_from(["memfd", "pipe", "socket"]), max_size=3),
)


def drain(sock: socket.socket) -> None:
    sock.setblocking(False)
    try:
        while sock.recv(65536):
            pass
    except (BlockingIOError, ConnectionResetError):
        pass
    finally:
        sock.setblocking(True)


@FUZZ
@given(messages=st.lists(MESSAGE, min_size=1, max_size=10), handshake=st.booleans())
def test_fuzz_vhost_user_messages(messages, handshake) -> None:
    """Any messages, before or after a handshake, with any descriptors: each is taken or
    refused with a named error; no descriptor stays open once both ends close; a
    queue the back end calls ready has a split ring's size and its rings in memory."""
    TRIED["vhost-user messages"] += 1
    before = open_fds()
    with tempfile.TemporaryDirectory() as d:
        backend = VhostUserBackend(f"{d}/dev.sock", queues=2, wait_s=0.05)
        fe = FrontEnd(backend.path)
        extra: list[int] = []
        try:
            if handshake:
                fe.handshake(backend)
            backend.accept(1.0)
            for request, flags, payload, kinds in messages:
                fds = []
                for kind in kinds:
                    if kind == "memfd":
                        fds.append(os.dup(fe.fd))
                    elif kind == "pipe":
                        r, w = os.pipe()
                        fds.append(r)
                        extra.append(w)
                    else:
                        a, b = socket.socketpair()
                        fds.append(a.detach())
                        extra.append(b.detach())
                msg = HEADER.pack(request, flags, len(payload)) + payload
                if fds:
                    socket.send_fds(fe.sock, [msg], fds)
                else:
                    fe.sock.sendall(msg)
                for fd in fds:
                    os.close(fd)  # (the back end has its own copies)
                backend.poll()
                drain(fe.sock)
            for q in backend.queues:
                if q.ready:
                    assert 0 < q.num <= MAX_QUEUE_SIZE and not q.num & (q.num - 1)
                    q.check_rings(backend.mem)
        except GuestProtocolError:
            FOUND["vhost-user messages"] += 1
        finally:
            fe.close()
            backend.close()
            for fd in extra:
                os.close(fd)
    assert open_fds() <= before, "a descriptor stayed open"


# --- virt-pci -------------------------------------------------------------------------


def plausible_pci_messages() -> st.SearchStrategy[bytes]:
    """Requests as a guest's PCI core makes them, any of their fields at an edge."""
    return st.builds(
        lambda op, bar, size, addr, fill: MSG.pack(op, bar, 0, size, addr)
        + (bytes([fill]) * size if op in (Op.CFG_WRITE, Op.MMIO_WRITE) else b"")
        + (bytes([fill]) if op == Op.MMIO_MEMSET else b""),
        st.sampled_from([Op.CFG_READ, Op.CFG_WRITE, Op.MMIO_READ, Op.MMIO_WRITE, Op.MMIO_MEMSET]),
        st.sampled_from([*range(6)] * 4 + [6]),
        st.sampled_from([1, 2, 4, 8] * 4 + [16, 64]),
        st.sampled_from([0, 4, 0x10, 0x100] * 4 + [0xFFC, 0x1000, 0xFFFF_FFF8]),
        st.integers(0, 255),
    )


def pci_messages() -> st.SearchStrategy[bytes]:
    sizes = st.sampled_from([0, 1, 2, 3, 4, 8, 9, 64, 4096, MAX_ACCESS, MAX_ACCESS + 1, 2**32 - 1])
    head = st.builds(
        lambda op, bar, size, addr: MSG.pack(op, bar, 0, size, addr),
        st.integers(0, 9) | st.integers(0, 255),
        st.integers(0, 7) | st.integers(0, 255),
        sizes | st.integers(0, 2**32 - 1),
        st.sampled_from([0, 4, 0xFFC, 0xFFE, 0x1000, 0x2000]) | st.integers(0, 2**64 - 1),
    )
    return st.one_of(
        st.binary(max_size=40),
        st.builds(bytes.__add__, head, st.binary(max_size=24)),
        plausible_pci_messages(),
    )


@FUZZ
@given(message=pci_messages())
def test_fuzz_virtpci_parse(message: bytes) -> None:
    """Any bytes: a request whose size, BAR and data are within bounds, or VirtPciError."""
    TRIED["virt-pci parse"] += 1
    try:
        req = parse(message)
    except VirtPciError:
        FOUND["virt-pci parse"] += 1
        return
    assert isinstance(req, PciRequest)
    if req.op in (Op.CFG_READ, Op.CFG_WRITE):
        assert req.size in (1, 2, 4, 8) and req.addr + req.size <= 4096
    else:
        assert req.bar <= 5 and 0 < req.size <= MAX_ACCESS
    if req.op in (Op.CFG_WRITE, Op.MMIO_WRITE):
        assert len(req.data) == req.size
    if req.op == Op.MMIO_MEMSET:
        assert len(req.data) == 1


# one chain of the cmd queue: descriptors (address offset, length, writable), and what
# the readable ones hold
WELL_FORMED_CHAIN = st.builds(
    lambda message, reply: ([(0x10000, len(message), False), (0x20000, reply, True)], message),
    plausible_pci_messages(),
    st.sampled_from([8, 16, 64, 4096]),
)
# (well-formed six times in seven: a batch with one bad chain is refused whole)
CHAIN = st.one_of(
    *[WELL_FORMED_CHAIN] * 6,
    st.tuples(
        st.lists(
            st.tuples(
                st.sampled_from([0x10000, 0x10100, 0x20000, RAM_SIZE - 8, RAM_SIZE, 0x0]),
                st.sampled_from([0, 1, 4, 8, 16, 20, 24, 64, 4096]) | st.integers(0, 2**32 - 1),
                st.booleans(),
            ),
            min_size=1,
            max_size=4,
        ),
        pci_messages(),
    ),
)


@FUZZ
@given(chains=st.lists(CHAIN, min_size=1, max_size=3))
def test_fuzz_bridge_serves_cmd_chains(chains) -> None:
    """Any chains on the cmd queue: the bridge serves them or ends the run with a
    GuestError naming the fault, before the device sees any of them; what the device
    sees is exactly the parsed requests, each with room for its answer; guest memory
    changes only in the chains' writable buffers and the used ring."""
    TRIED["bridge cmd chains"] += 1
    with tempfile.TemporaryDirectory() as d:
        old = bridge_module.get_sim_time
        bridge_module.get_sim_time = lambda unit="ns": 0
        b = GuestBridge(RootComplex(), Device(), GuestOptions(["/bin/true"]), Path(d))
        fe = FrontEnd(str(b.socket))
        try:
            fe.handshake(b.backend)
            b._poll_guest()
            ring = RINGS[CMD_QUEUE]
            allowed = bytearray(RAM_SIZE)  # 1: a byte the bridge may write
            used = ring + 0x400 - RAM_BASE
            allowed[used : used + 6 + 8 * NUM] = b"\x01" * (6 + 8 * NUM)
            head = 0
            for descs, message in chains:
                if head + len(descs) > NUM:
                    break
                data_at = None
                for i, (at, length, writable) in enumerate(descs):
                    off = at + 0x200 * head  # (each chain's buffers its own)
                    last = i == len(descs) - 1
                    flags = (0 if last else DESC_F_NEXT) | (DESC_F_WRITE if writable else 0)
                    fe.poke(
                        ring + 16 * (head + i),
                        DESC.pack(RAM_BASE + off, length, flags, head + i + 1),
                    )
                    if writable and off + min(length, RAM_SIZE) <= RAM_SIZE:
                        allowed[off : off + length] = b"\x01" * min(length, RAM_SIZE - off)
                    elif not writable and data_at is None and off + len(message) <= RAM_SIZE:
                        data_at = off
                if data_at is not None:
                    fe.poke(RAM_BASE + data_at, message)
                slot = fe.avail_idx[CMD_QUEUE] % NUM
                fe.poke(ring + 0x100 + 4 + 2 * slot, struct.pack("<H", head))
                fe.avail_idx[CMD_QUEUE] += 1
                fe.poke(ring + 0x102, struct.pack("<H", fe.avail_idx[CMD_QUEUE]))
                head += len(descs)
            before = bytes(fe.ram)
            try:
                asyncio.run(b._serve_cmd(Kick(CMD_QUEUE, False)))
            except GuestError:
                FOUND["bridge cmd chains"] += 1
                assert b.device.seen == [], "the device saw part of a refused batch"
            after = bytes(fe.ram)
            for page in range(0, RAM_SIZE, 4096):
                if before[page : page + 4096] == after[page : page + 4096]:
                    continue
                for i in range(page, page + 4096):
                    if before[i] != after[i]:
                        assert allowed[i], f"guest RAM +0x{i:x} written outside its buffers"
            for seen in b.device.seen:
                kind = seen[0]
                if kind in ("bar_read", "bar_write"):
                    assert seen[1] <= 5 and 0 < seen[3] <= MAX_ACCESS
                else:
                    assert seen[2] in (1, 2, 4, 8)
        finally:
            fe.close()
            b.close()
            bridge_module.get_sim_time = old


# --- the time-travel calendar ---------------------------------------------------------


@FUZZ
@given(
    messages=st.lists(
        st.tuples(
            st.integers(0, 10) | st.integers(0, 2**32 - 1),
            st.integers(0, 5),
            st.integers(0, 2**64 - 1) | st.sampled_from([0, 1000, 5000]),
        ),
        max_size=12,
    )
)
def test_fuzz_time_travel_messages(messages) -> None:
    """Any time-travel messages: answered, or TimeTravelError; the clock never goes
    back."""
    TRIED["time-travel messages"] += 1
    with tempfile.TemporaryDirectory() as d:
        cal = Calendar(f"{d}/time.sock", wait_s=0.05)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(cal.path)
        try:
            cal.accept(1.0)
            last = cal.now
            for op, seq, time in messages:
                sock.sendall(TT_MSG.pack(op, seq, time))
                cal.poll()
                drain(sock)
                assert cal.now >= last
                last = cal.now
        except GuestProtocolError:
            FOUND["time-travel messages"] += 1
        finally:
            sock.close()
            cal.close()


# --- descriptors and chains ------------------------------------------------------------


@FUZZ
@given(data=st.binary(min_size=DESC_SIZE, max_size=DESC_SIZE) | st.binary(max_size=40))
def test_fuzz_descriptor_decode(data: bytes) -> None:
    """Any 32 bytes decode to a descriptor that encodes back to bytes that decode the
    same; any other length is a DescriptorError."""
    TRIED["descriptor decode"] += 1
    try:
        d = Descriptor.decode(data)
    except DescriptorError:
        FOUND["descriptor decode"] += 1
        assert len(data) != DESC_SIZE
        return
    assert Descriptor.decode(d.encode()) == d


SEGMENT = st.builds(
    Segment,
    st.integers(0, 2**64 - 1) | st.sampled_from([0, 0xFFF, 0x1000]),
    st.integers(0, 2**64 - 1) | st.sampled_from([0, 3, 0x2000]),
    st.integers(0, 2**28) | st.sampled_from([0, 1, 4096, (1 << 28) - 1]),
)


@FUZZ
@given(
    segments=st.lists(SEGMENT, max_size=6),
    base=st.integers(0, 2**64 - 1) | st.sampled_from([0x1000, 0x1020, 0x1001]),
)
def test_fuzz_chain_build(segments, base: int) -> None:
    """Any segments at any ring address: a chain whose descriptors, decoded from its
    bytes, move exactly those segments in order and link up, or DescriptorError."""
    TRIED["chain build"] += 1
    try:
        chain = build_chain(segments, base)
    except DescriptorError:
        FOUND["chain build"] += 1
        return
    assert isinstance(chain, Chain)
    memory: dict[int, bytes] = {}
    for start, run in chain.blocks().items():
        for i in range(0, len(run), DESC_SIZE):
            memory[start + i] = run[i : i + DESC_SIZE]
    got, addr = [], chain.first
    for _ in range(len(chain)):
        d = Descriptor.decode(memory[addr])
        got.append(Segment(d.src, d.dst, d.length))
        addr = d.next
    assert addr == 0, "the last descriptor links nowhere"
    assert got == split_segments(segments), "the chain moves other bytes than asked"


# --- the runner's options -------------------------------------------------------------

NAMES = [*options.OPTIONS, "PEVB_X", "", "=", "MODULE", "lanes", "AXI_ID_WIDTH "]
WORDS = st.one_of(
    st.builds(
        lambda n, v: f"{n}={v}",
        st.sampled_from(NAMES),
        st.sampled_from(["0", "1", "2", "0x10", "-1", "64", "256", "x", "", "1e3", "xdma"])
        | st.integers(-(2**70), 2**70).map(str),
    ),
    st.text(max_size=12),
)


@FUZZ
@given(
    words=st.lists(WORDS, max_size=5),
    toplevel=st.sampled_from(["design", "pevb_dma_top", "xdma_0"]),
    profile=st.sampled_from(sorted(PROFILES)),
)
def test_fuzz_runner_options(words, toplevel: str, profile: str) -> None:
    """Any ``XDMA=`` words for any toplevel and profile: checked options, or one
    ValueError line naming the bad word."""
    TRIED["runner options"] += 1
    try:
        given_ = options.parse_options(words)
        opts = options.check(toplevel, get_profile(profile), given_)
    except ValueError as e:
        FOUND["runner options"] += 1
        assert "\n" not in str(e) and str(e)
        return
    assert set(opts) <= set(options.OPTIONS)


# --- the GPU on the guest's bus -------------------------------------------------------------

GPU_RAM_BASE, GPU_RAM_SIZE = 0x1000_0000, 1 << 16


GPU_REG_WRITE = st.tuples(
    st.sampled_from([*range(0, 0x60, 4), 0x58, 0xFFFC, 0x10000, 2]),
    st.integers(0, 2**32 - 1) | st.sampled_from([0, 1, 3, 8, 64, 4096, GPU_RAM_BASE]),
)
GPU_ENTRY = st.tuples(
    st.integers(0, 14) | st.integers(0, 2**32 - 1),
    st.integers(0, 3),
    st.lists(
        st.integers(0, 2**64 - 1)
        | st.sampled_from([0, 1, 64, 1 << 16, 1 << 21, 1 << 25, GPU_RAM_BASE + 0x8000]),
        min_size=5,
        max_size=5,
    ),
)


@FUZZ
@given(
    writes=st.lists(GPU_REG_WRITE, max_size=12),
    entries=st.lists(GPU_ENTRY, max_size=8),
    doorbell=st.integers(0, 2**32 - 1) | st.integers(0, 10),
)
def test_fuzz_guest_gpu_control_block(writes, entries, doorbell) -> None:
    """Any control-block writes and ring entries: no exception; every command that ran
    has its done flag and a status; the device writes guest memory only in the ring's
    status words, the event ring and the tables and copies commands name; COMPLETED never
    passes the doorbell."""
    from cuda_model import CudaRuntime, Gpu, NvidiaP2P
    from tb.guest.gpu import CONTROL_IRQ, CONTROL_RUN, ENTRY, ENTRY_SIZE, GuestGpu

    TRIED["guest GPU"] += 1
    gpu = Gpu(vram_size=1 << 28, bar1_size=64 << 20)
    tasks: list = []
    dev = GuestGpu(lambda: CudaRuntime(gpu), gpu.vram.size, lambda: (0, 64 << 20), tasks.append)
    dev.p2p = NvidiaP2P(gpu)
    ram = GuestRam(GPU_RAM_BASE, GPU_RAM_SIZE)
    dev.mem = ram
    ring = GPU_RAM_BASE + 0x1000

    async def run() -> None:
        await dev.config_write(0x04, 2, 0x6)
        setup = [(0x20, ring), (0x24, 0), (0x28, 8), (0x2C, CONTROL_RUN | CONTROL_IRQ)]
        for off, value in setup + list(writes):
            await dev.bar_write(0, off, value.to_bytes(4, "little"))
        for i, (op, ctx, args) in enumerate(entries):
            ram.write(ring + (i % 8) * ENTRY_SIZE, ENTRY.pack(op, ctx, *args, 0, 0, 0))
        ram.writes.clear()
        await dev.bar_write(0, 0x30, doorbell.to_bytes(4, "little"))
        while tasks:
            await tasks.pop(0)

    asyncio.run(run())
    done = int.from_bytes(asyncio.run(dev.bar_read(0, 0x34, 4)), "little")
    assert done <= doorbell, "COMPLETED passed the doorbell"
    # where the device may write: a status word of the ring, an event slot, or the
    # address a command named (a copy's destination, a pin's table)
    named = {a for _, _, args in entries for a in args}
    events = [v for off, v in writes if off == 0x40]
    rings = [ring] + [v for off, v in writes if off == 0x20]
    for addr, n in ram.writes:
        status_word = n == 16 and any(
            addr >= base and (addr - base) % ENTRY_SIZE == 48 for base in rings
        )
        event = n == 16 and any((addr - base) % 16 == 0 and addr >= base for base in events)
        assert status_word or event or addr in named, (hex(addr), n)
    if dev._status & 1:  # the ring stopped: nothing ran after the error
        FOUND["guest GPU"] += 1
