"""A hostile or broken front end against the guest bridge (tb/guest/): every malformed
message, table, ring or buffer gets a named error, nothing the guest did not ask for
reaches the device, and no descriptor is left open. The front end is
:class:`tb.guest.frontend.FrontEnd` made to break the rules; the bridge runs without a
simulator (its clock stands at 0 and its fabric is an address space of cocotbext-axi).
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct

import pytest

from tb.guest import bridge as bridge_module
from tb.guest.bridge import CMD_QUEUE, IRQ_QUEUE, GuestBridge
from tb.guest.frontend import NUM, RAM_BASE, RAM_SIZE, RINGS, FrontEnd
from tb.guest.uml import GuestError, GuestOptions
from tb.guest.vhost_user import (
    DESC,
    MEM_REGION,
    U64,
    VRING_ADDR,
    VRING_STATE,
    GuestMemoryError,
    Kick,
    Request,
    VhostUserBackend,
    VhostUserError,
    VirtqueueError,
)
from tb.guest.virtpci import MSG, Op

from .guestfakes import Device, RootComplex


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def backend(tmp_path):
    b = VhostUserBackend(str(tmp_path / "dev.sock"), queues=2, wait_s=2)
    yield b
    b.close()


@pytest.fixture
def fe(backend):
    f = FrontEnd(backend.path)
    f.handshake(backend)
    yield f
    f.close()


# --- 1: truncated messages ------------------------------------------------------------


@pytest.mark.parametrize(
    "request_,payload,needs",
    [
        (Request.SET_VRING_NUM, b"", 8),
        (Request.VRING_KICK, b"\x00\x00", 8),
        (Request.SET_FEATURES, b"\x00" * 4, 8),
        (Request.SET_VRING_ADDR, b"\x00" * 8, 40),
        (Request.SET_VRING_CALL, b"\x01", 8),
        (Request.GET_VRING_BASE, b"", 8),
    ],
)
def test_truncated_message_is_a_named_error(backend, fe, request_, payload, needs) -> None:
    fe.send(request_, payload)
    with pytest.raises(VhostUserError, match=f"carries {len(payload)} bytes; it needs {needs}"):
        backend.poll()


def test_truncated_memory_table_closes_its_descriptors(backend, fe) -> None:
    before = open_fds()
    fe.send(Request.SET_MEM_TABLE, b"\x01\x00", fds=[fe.fd])
    with pytest.raises(VhostUserError, match="carries 2 bytes"):
        backend.poll()
    assert open_fds() == before
    table = struct.pack("<II", 2, 0) + MEM_REGION.pack(RAM_BASE, RAM_SIZE, 0, 0)
    fe.send(Request.SET_MEM_TABLE, table, fds=[fe.fd, fe.fd])
    with pytest.raises(VhostUserError, match="2 regions carries 40 bytes; it needs 72"):
        backend.poll()
    assert open_fds() == before


# --- 2: bad memory tables -------------------------------------------------------------


def table(*regions: tuple[int, int, int]) -> bytes:
    """A SET_MEM_TABLE payload of (guest address, size, offset) regions."""
    body = b"".join(MEM_REGION.pack(g, n, g, off) for g, n, off in regions)
    return struct.pack("<II", len(regions), 0) + body


@pytest.mark.parametrize(
    "what,regions,error",
    [
        ("pipe", [(0, 4096, 0)], "is no file"),
        ("larger than its file", [(0, 2 * RAM_SIZE, 0)], "the file has 0x100000 bytes"),
        ("2**63 bytes", [(0, 1 << 63, 0)], "the file has"),
        ("past 2**64", [((1 << 64) - 4096, 8192, 0)], "the file has|64-bit"),
        ("overlapping", [(0, 8192, 0), (4096, 4096, 0)], "overlaps 0x0\\+0x2000"),
        ("empty", [(0, 0, 0)], "the file has"),
    ],
)
def test_bad_memory_table_is_refused_and_keeps_the_old(backend, fe, what, regions, error) -> None:
    r, w = os.pipe()
    fds = [r] if what == "pipe" else [fe.fd] * len(regions)
    before = open_fds()
    fe.send(Request.SET_MEM_TABLE, table(*regions), fds=fds)
    with pytest.raises(GuestMemoryError, match=error):
        backend.poll()
    assert open_fds() == before, "the table's descriptors are closed"
    assert list(backend.regions()) == [(RAM_BASE, RAM_SIZE)], "the old table stays"
    assert backend.mem.generation == 1
    os.close(r)
    os.close(w)


def test_region_count_not_matching_its_descriptors_leaks_none(backend, fe) -> None:
    before = open_fds()
    fe.send(Request.SET_MEM_TABLE, table((0, 4096, 0)), fds=[fe.fd, fe.fd, fe.fd])
    with pytest.raises(VhostUserError, match="1 regions with 3 descriptors"):
        backend.poll()
    assert open_fds() == before


# --- 3: ring sizes --------------------------------------------------------------------


@pytest.mark.parametrize("num", [0, 3, 40000, 65536])
def test_ring_size_must_be_a_split_rings(backend, fe, num) -> None:
    fe.send(Request.GET_VRING_BASE, VRING_STATE.pack(0, 0), need_reply=False)
    fe.reply(backend)  # stopped: its size may change
    fe.send(Request.SET_VRING_NUM, VRING_STATE.pack(0, num))
    with pytest.raises(VhostUserError, match=f"queue 0 of {num} entries"):
        backend.poll()
    assert backend.queues[0].num == NUM


@pytest.mark.parametrize("request_", [Request.SET_VRING_NUM, Request.SET_VRING_BASE])
def test_running_ring_keeps_its_size_and_base(backend, fe, request_) -> None:
    fe.send(request_, VRING_STATE.pack(0, 0))
    with pytest.raises(VhostUserError, match="on queue 0 while it runs"):
        backend.poll()
    assert (backend.queues[0].num, backend.queues[0].ready) == (NUM, True)


@pytest.mark.parametrize(
    "desc,used,avail,error",
    [
        (RAM_BASE - 0x1000, RAM_BASE + 0x400, RAM_BASE + 0x100, "descriptor table .* outside"),
        (RAM_BASE, RAM_BASE + RAM_SIZE - 8, RAM_BASE + 0x100, "used ring .* outside"),
        (RAM_BASE + 8, RAM_BASE + 0x400, RAM_BASE + 0x100, "descriptor table .* misaligned"),
        (RAM_BASE, RAM_BASE + 0x400, RAM_BASE + 0x101, "avail ring .* misaligned"),
    ],
)
def test_rings_outside_guest_memory_are_refused(backend, fe, desc, used, avail, error) -> None:
    fe.send(Request.SET_VRING_ADDR, VRING_ADDR.pack(1, 0, desc, used, avail, 0))
    with pytest.raises(VirtqueueError, match=error):
        backend.poll()
    assert not backend.queues[1].ready, "a queue with bad rings takes nothing"


# --- 4: stray descriptors -------------------------------------------------------------


@pytest.mark.parametrize(
    "request_,payload",
    [
        (Request.VRING_KICK, VRING_STATE.pack(0, 0)),
        (Request.GET_FEATURES, b""),
        (Request.GET_PROTOCOL_FEATURES, b""),
        (Request.SET_OWNER, b""),
    ],
)
def test_descriptors_sent_with_any_message_are_closed(backend, fe, request_, payload) -> None:
    r, w = os.pipe()
    before = open_fds()
    for _ in range(3):
        fe.send(request_, payload, fds=[r], need_reply=False)
    backend.poll()
    assert open_fds() == before
    os.close(r)
    os.close(w)


def test_slave_channel_must_be_a_socket(backend, fe) -> None:
    r, w = os.pipe()
    before = open_fds()
    fe.send(Request.SET_SLAVE_REQ_FD, fds=[r])
    with pytest.raises(VhostUserError, match="no socket"):
        backend.poll()
    assert open_fds() == before
    os.close(r)
    os.close(w)


def test_second_slave_channel_replaces_the_first(backend, fe) -> None:
    a, b = socket.socketpair()
    before = open_fds()
    fe.send(Request.SET_SLAVE_REQ_FD, fds=[a.fileno()])
    assert fe.reply(backend) == 0
    assert open_fds() == before, "the first channel is closed as the second comes"
    assert backend.slave is not None
    a.close()
    b.close()


# --- 5: an avail index moved past the ring --------------------------------------------


def test_avail_index_past_the_ring_is_an_error(backend, fe) -> None:
    hdr = RAM_BASE + 0x10000
    fe.poke(hdr, MSG.pack(Op.MMIO_WRITE, 0, 0, 4, 0) + bytes(4))
    fe.post(0, [(hdr, MSG.size + 4, False)])
    fe.poke(RINGS[0] + 0x100 + 2, struct.pack("<H", NUM + 1))
    with pytest.raises(VirtqueueError, match=r"moved 17 ahead .* on a ring of 16"):
        backend.queues[0].pop(backend.mem)


def test_descriptor_buffer_outside_memory_is_an_error(backend, fe) -> None:
    fe.post(0, [(RAM_BASE + RAM_SIZE - 8, 16, False)])
    with pytest.raises(VirtqueueError, match=r"descriptor 0's buffer .* outside"):
        backend.queues[0].pop(backend.mem)


# --- the bridge: 6 to 9 ---------------------------------------------------------------


@pytest.fixture
def bridge(tmp_path, monkeypatch):
    monkeypatch.setattr(bridge_module, "get_sim_time", lambda unit="ns": 0)
    b = GuestBridge(RootComplex(), Device(), GuestOptions(["/bin/true"]), tmp_path)
    yield b
    b.close()


def connect(bridge: GuestBridge) -> FrontEnd:
    f = FrontEnd(str(bridge.socket))
    f.handshake(bridge.backend)
    bridge._poll_guest()
    return f


def ram_regions(bridge: GuestBridge) -> list[tuple[int, int]]:
    space = bridge.rc.mem_address_space
    return sorted((b, n) for b, n, _, r in space.regions if type(r).__name__ == "GuestRam")


def test_guest_memory_size_is_bounded() -> None:
    with pytest.raises(ValueError, match=r"mem_mb 2560: 32-1536 .*0x80000000"):
        GuestOptions(["/bin/true"], mem_mb=2560)
    with pytest.raises(ValueError, match="mem_mb 0"):
        GuestOptions(["/bin/true"], mem_mb=0)


def test_guest_ram_over_the_msi_region_is_a_named_error(bridge) -> None:
    f = connect(bridge)
    big = os.memfd_create("big")
    os.ftruncate(big, 0x2000_0000)  # sparse: 512 MiB from 0x70000000 crosses 0x80000000
    t = struct.pack("<II", 2, 0) + MEM_REGION.pack(RAM_BASE, RAM_SIZE, 0, 0)
    t += MEM_REGION.pack(0x7000_0000, 0x2000_0000, 0, 0)
    f.send(Request.SET_MEM_TABLE, t, fds=[f.fd, big])
    assert f.reply(bridge.backend) == 0
    with pytest.raises(GuestError, match="0x70000000-0x8fffffff overlaps the fabric's Region at"):
        bridge._poll_guest()
    os.close(big)
    f.close()


def test_second_memory_table_is_followed_by_the_root_complex(bridge) -> None:
    f = connect(bridge)
    assert ram_regions(bridge) == [(RAM_BASE, RAM_SIZE)]
    # the same RAM at the same place and a second region beside it
    fd2 = os.memfd_create("more")
    os.ftruncate(fd2, 1 << 16)
    t = struct.pack("<II", 2, 0) + MEM_REGION.pack(RAM_BASE, RAM_SIZE, 0, 0)
    t += MEM_REGION.pack(0x1000_0000, 1 << 16, 0, 0)
    f.send(Request.SET_MEM_TABLE, t, fds=[f.fd, fd2])
    assert f.reply(bridge.backend) == 0
    bridge._poll_guest()
    assert ram_regions(bridge) == [(RAM_BASE, RAM_SIZE), (0x1000_0000, 1 << 16)]
    space = bridge.rc.mem_address_space
    asyncio.run(space.write(0x1000_0010, b"new table"))
    assert bridge.backend.mem.read(0x1000_0010, 9) == b"new table"
    os.close(fd2)
    f.close()


def post_read(f: FrontEnd, op: Op, size: int, room: int) -> None:
    hdr, out = RAM_BASE + 0x10000, RAM_BASE + 0x20000
    f.poke(hdr, MSG.pack(op, 0, 0, size, 0))
    f.post(CMD_QUEUE, [(hdr, MSG.size, False), (out, room, True)])


@pytest.mark.parametrize("op,size", [(Op.MMIO_READ, 64 << 10), (Op.CFG_READ, 4)])
def test_read_larger_than_its_buffer_never_reaches_the_device(bridge, op, size) -> None:
    f = connect(bridge)
    post_read(f, op, size, size // 2)
    with pytest.raises(GuestError, match=f"room for {size // 2} bytes of answer: not performed"):
        asyncio.run(bridge._serve_cmd(Kick(CMD_QUEUE, False)))
    assert bridge.device.seen == []
    f.close()


@pytest.mark.parametrize("room,writable", [(20, False), (8, True)])
def test_interrupt_buffer_without_room_is_an_error_and_keeps_it(bridge, room, writable) -> None:
    f = connect(bridge)
    f.post(IRQ_QUEUE, [(RAM_BASE + 0x30000, room, writable)])
    bridge.pending_irqs.append(0x2A)
    with pytest.raises(GuestError, match=f"room for {room if writable else 0} bytes"):
        bridge._deliver_irqs()
    assert list(bridge.pending_irqs) == [0x2A], "the interrupt stays pending"
    f.close()


def test_interrupt_lands_in_a_buffer_with_room(bridge) -> None:
    f = connect(bridge)
    f.post(IRQ_QUEUE, [(RAM_BASE + 0x30000, 20, True)])
    bridge.pending_irqs.append(0x2A)
    bridge._deliver_irqs()
    assert not bridge.pending_irqs
    assert f.used(IRQ_QUEUE) == (1, [(0, 20)])
    assert struct.unpack_from("<I", f.peek(RAM_BASE + 0x30000 + MSG.size, 4)) == (0x2A,)
    f.close()


def test_malformed_ring_ends_the_run_as_a_guest_error(bridge) -> None:
    f = connect(bridge)
    f.poke(RINGS[CMD_QUEUE], DESC.pack(RAM_BASE + RAM_SIZE, 16, 0, 0))
    f.poke(RINGS[CMD_QUEUE] + 0x104, struct.pack("<H", 0))
    f.poke(RINGS[CMD_QUEUE] + 0x102, struct.pack("<H", 1))
    with pytest.raises(GuestError, match="guest bridge: queue 0: descriptor 0's buffer"):
        asyncio.run(bridge._serve_cmd(Kick(CMD_QUEUE, False)))
    assert bridge.device.seen == []
    f.send(Request.SET_FEATURES, U64.pack(0)[:3])
    with pytest.raises(GuestError, match="SET_FEATURES carries 3 bytes"):
        bridge._poll_guest()
    f.close()


def test_a_device_added_after_the_guest_started_is_named(bridge) -> None:
    """Devices go on the guest's bus before it boots: one added later is a GuestError."""
    bridge.guest.proc = object()  # as if started
    try:
        with pytest.raises(GuestError, match=r"add_device\(\) after the guest started"):
            bridge.add_device(Device(), "late")
    finally:
        bridge.guest.proc = None
    assert len(bridge.slots) == 1
