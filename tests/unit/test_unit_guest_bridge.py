"""The guest bridge's protocol layers without a guest: vhost-user (tb/guest/vhost_user.py)
driven by a front end written here as UML's virtio_uml behaves (the handshake order, a
memfd for RAM, in-band kicks with reply-ack), the split virtqueue, the virt-pci codec."""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

import pytest

from tb.guest import virtpci
from tb.guest.frontend import RAM_BASE, RAM_SIZE, RINGS, FrontEnd
from tb.guest.timetravel import EPOCH_NS, Calendar, TimeTravelError, TtOp
from tb.guest.timetravel import MSG as TT_MSG
from tb.guest.uml import GuestError, GuestOptions, UmlGuest
from tb.guest.vhost_user import (
    DESC,
    DESC_F_NEXT,
    HEADER,
    U64,
    VRING_STATE,
    GuestMemoryError,
    ProtocolFeature,
    Request,
    SlaveRequest,
    VhostUserBackend,
    VhostUserError,
    VirtqueueError,
)
from tb.guest.virtpci import MSG, Op, PciRequest, VirtPciError


@pytest.fixture
def backend(tmp_path):
    b = VhostUserBackend(str(tmp_path / "dev.sock"), queues=2, wait_s=2)
    yield b
    b.close()


def test_handshake_maps_memory_and_sets_up_queues(backend, tmp_path) -> None:
    assert oct(os.stat(tmp_path / "dev.sock").st_mode & 0o777) == "0o600"
    fe = FrontEnd(backend.path)
    fe.handshake(backend)
    assert backend.ready
    assert list(backend.regions()) == [(RAM_BASE, RAM_SIZE)]
    fe.poke(RAM_BASE + 0x8000, b"guest bytes")
    assert backend.mem.read(RAM_BASE + 0x8000, 11) == b"guest bytes"
    backend.mem.write(RAM_BASE + RAM_SIZE - 4, b"\x01\x02\x03\x04")
    assert fe.peek(RAM_BASE + RAM_SIZE - 4, 4) == b"\x01\x02\x03\x04"
    with pytest.raises(GuestMemoryError, match="outside the memory the guest shared"):
        backend.mem.read(RAM_BASE + RAM_SIZE - 2, 4)
    with pytest.raises(GuestMemoryError):
        backend.mem.write(RAM_BASE - 1, b"x")


def test_read_kick_waits_for_ack_and_answer_lands_in_used_ring(backend) -> None:
    fe = FrontEnd(backend.path)
    fe.handshake(backend)
    hdr, out = RAM_BASE + 0x10000, RAM_BASE + 0x10100
    fe.poke(hdr, MSG.pack(Op.CFG_READ, 0, 0, 4, 0x10))
    fe.poke(out, b"\xff" * 8)
    fe.post(0, [(hdr, MSG.size, False), (out, 8, True)])
    fe.send(Request.VRING_KICK, VRING_STATE.pack(0, 0))
    kicks = backend.poll()
    assert [(k.queue, k.needs_ack) for k in kicks] == [(0, True)]
    q = backend.queues[0]
    chain = q.pop(backend.mem)
    assert q.pop(backend.mem) is None
    req = virtpci.parse(chain.data)
    assert req == PciRequest(Op.CFG_READ, 0, 4, 0x10)
    assert chain.room == 8
    fe.sock.settimeout(0.05)
    with pytest.raises(TimeoutError):  # the guest is held until the ack
        fe.sock.recv(HEADER.size)
    q.push(backend.mem, chain, b"\x0c\x00\xf0\xff")
    backend.ack_kick(kicks[0])
    backend.call(0)
    fe.sock.settimeout(5)
    request, flags, size = HEADER.unpack(fe.sock.recv(HEADER.size))
    assert (request, size, U64.unpack(fe.sock.recv(8))[0]) == (Request.VRING_KICK, 8, 0)
    assert fe.used(0) == (1, [(0, 4)])
    assert fe.peek(out, 8) == b"\x0c\x00\xf0\xff" + b"\xff" * 4
    request, flags, size = HEADER.unpack(fe.slave.recv(HEADER.size))
    assert (request, flags) == (SlaveRequest.VRING_CALL, 1)
    assert VRING_STATE.unpack(fe.slave.recv(size)) == (0, 0)


def test_no_call_when_the_driver_suppresses_interrupts(backend) -> None:
    fe = FrontEnd(backend.path)
    fe.handshake(backend)
    fe.poke(RINGS[1] + 0x100, struct.pack("<H", 1))  # VRING_AVAIL_F_NO_INTERRUPT
    backend.call(1)
    fe.slave.settimeout(0.05)
    with pytest.raises(TimeoutError):
        fe.slave.recv(1)


def test_front_end_without_inband_notifications_is_refused(backend) -> None:
    fe = FrontEnd(backend.path, protocol=int(ProtocolFeature.REPLY_ACK | ProtocolFeature.SLAVE_REQ))
    backend.accept(1.0)
    with pytest.raises(VhostUserError, match="in-band notifications"):
        fe.handshake(backend)


def test_kick_file_descriptor_is_refused(backend) -> None:
    fe = FrontEnd(backend.path)
    fe.handshake(backend)
    r, w = os.pipe()
    fe.send(Request.SET_VRING_KICK, U64.pack(0), fds=[r])
    with pytest.raises(VhostUserError, match="in-band"):
        backend.poll()
    os.close(w)


def test_front_end_going_away_is_named(backend) -> None:
    fe = FrontEnd(backend.path)
    fe.handshake(backend)
    fe.sock.close()
    with pytest.raises(VhostUserError, match="closed") as info:
        backend.poll()
    assert info.value.closed


def test_looping_chain_is_an_error(backend) -> None:
    fe = FrontEnd(backend.path)
    fe.handshake(backend)
    ring = RINGS[0]
    fe.poke(ring, DESC.pack(RAM_BASE, 16, DESC_F_NEXT, 0))  # descriptor 0 points at itself
    fe.poke(ring + 0x104, struct.pack("<H", 0))
    fe.poke(ring + 0x102, struct.pack("<H", 1))
    with pytest.raises(VirtqueueError, match="bad chain"):
        backend.queues[0].pop(backend.mem)


@pytest.mark.parametrize(
    "message,expected",
    [
        (
            MSG.pack(Op.CFG_WRITE, 0, 0, 2, 0x4) + b"\x06\x00" + bytes(6),
            PciRequest(Op.CFG_WRITE, 0, 2, 0x4, b"\x06\x00"),
        ),
        (
            MSG.pack(Op.MMIO_WRITE, 1, 0, 4, 0x1004) + b"\x01\x00\x00\x00",
            PciRequest(Op.MMIO_WRITE, 1, 4, 0x1004, b"\x01\x00\x00\x00"),
        ),
        (MSG.pack(Op.MMIO_READ, 2, 0, 64, 0x40), PciRequest(Op.MMIO_READ, 2, 64, 0x40)),
        (
            MSG.pack(Op.MMIO_MEMSET, 0, 0, 256, 0x100) + b"\xa5",
            PciRequest(Op.MMIO_MEMSET, 0, 256, 0x100, b"\xa5"),
        ),
        # memset_io in 6.1 sends a config write with the BAR set: more than 8 bytes is that
        (
            MSG.pack(Op.CFG_WRITE, 1, 0, 32, 0x200) + b"\x00" + bytes(7),
            PciRequest(Op.MMIO_MEMSET, 1, 32, 0x200, b"\x00"),
        ),
    ],
)
def test_parse(message: bytes, expected: PciRequest) -> None:
    assert virtpci.parse(message) == expected


@pytest.mark.parametrize(
    "message,error",
    [
        (b"\x01" * 8, "header alone"),
        (MSG.pack(9, 0, 0, 4, 0), "unknown op 9"),
        (MSG.pack(Op.CFG_READ, 0, 0, 3, 0), "config access of 3 bytes"),
        (MSG.pack(Op.CFG_READ, 0, 0, 4, 0xFFE), "the space is 4 KiB"),
        (MSG.pack(Op.MMIO_READ, 6, 0, 4, 0), "BAR 6"),
        (MSG.pack(Op.MMIO_WRITE, 0, 0, 8, 0) + b"\x00" * 4, "carries 4"),
        (MSG.pack(Op.MSI, 0, 0, 4, 0), "from the device to the guest"),
        # (found by the fuzz target: a config write of 0 bytes was a memset of none)
        (MSG.pack(Op.CFG_WRITE, 0, 0, 0, 0) + b"\x00", "config access of 0 bytes"),
        (MSG.pack(Op.MMIO_READ, 0, 0, 0, 0), "MMIO_READ of 0 bytes"),
        (MSG.pack(Op.MMIO_MEMSET, 1, 0, (16 << 20) + 1, 0) + b"\x00", "1 to 16777216"),
    ],
)
def test_parse_errors(message: bytes, error: str) -> None:
    with pytest.raises(VirtPciError, match=error):
        virtpci.parse(message)


def test_msi_message_is_what_uml_decodes() -> None:
    msg = virtpci.msi_message(0x2A)
    op, _, _, size, addr = MSG.unpack_from(msg)
    assert (op, size, addr) == (Op.MSI, 4, virtpci.UML_MSI_ADDRESS)
    assert struct.unpack_from("<I", msg, MSG.size) == (0x2A,)
    assert len(msg) == 20  # the guest's irq buffers are 20 bytes


# --- the calendar of shared time (tb/guest/timetravel.py) -------------------------------


class TimeClient:
    """The guest's side of time-travel=ext, as UML's arch/um/kernel/time.c speaks it."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.sock.settimeout(5)
        self.seq = 0

    def req(self, cal: Calendar, op: TtOp, time: int = 0) -> tuple[int, int, int]:
        self.seq += 1
        self.sock.sendall(TT_MSG.pack(op, self.seq, time))
        cal.poll()
        ack = TT_MSG.unpack(self.sock.recv(TT_MSG.size))
        assert ack[:2] == (TtOp.ACK, self.seq), ack
        return ack


@pytest.fixture
def calendar(tmp_path):
    c = Calendar(str(tmp_path / "time.sock"), wait_s=2)
    yield c
    c.close()


def test_calendar_requests_waits_and_grants(calendar) -> None:
    guest = TimeClient(calendar.path)
    calendar.accept(1.0)
    guest.req(calendar, TtOp.START, 0xFFFFFFFF)
    assert calendar.started
    guest.req(calendar, TtOp.REQUEST, 5000)
    guest.req(calendar, TtOp.WAIT)
    assert (calendar.request, calendar.waiting) == (5000, True)
    # while it waits, its time is the simulation's (the bridge's clock)
    calendar.clock = lambda: 1234
    assert guest.req(calendar, TtOp.GET)[2] == 1234
    assert (calendar.gets, calendar.last_get) == (1, 1234)
    calendar.grant(5000)
    op, seq, time = TT_MSG.unpack(guest.sock.recv(TT_MSG.size))
    assert (op, time) == (TtOp.RUN, 5000)
    assert (calendar.now, calendar.waiting, calendar.request) == (5000, False, None)
    guest.sock.sendall(TT_MSG.pack(TtOp.ACK, seq, 0))
    # running, its time is its own; UPDATE moves it, GET_TOD adds the fixed epoch
    assert guest.req(calendar, TtOp.GET)[2] == 5000
    guest.req(calendar, TtOp.UPDATE, 7000)
    assert calendar.now == 7000
    assert guest.req(calendar, TtOp.GET_TOD)[2] == EPOCH_NS + 7000


def test_calendar_refuses_time_going_back(calendar) -> None:
    guest = TimeClient(calendar.path)
    calendar.accept(1.0)
    guest.req(calendar, TtOp.UPDATE, 9000)
    guest.sock.sendall(TT_MSG.pack(TtOp.UPDATE, 9, 8000))
    with pytest.raises(TimeTravelError, match="went back: 9000 -> 8000"):
        calendar.poll()
    with pytest.raises(TimeTravelError, match="send the guest's clock back"):
        calendar.grant(100)


def test_calendar_names_bad_messages_and_a_closed_guest(calendar) -> None:
    guest = TimeClient(calendar.path)
    calendar.accept(1.0)
    guest.sock.sendall(TT_MSG.pack(42, 1, 0))
    with pytest.raises(TimeTravelError, match="unknown time-travel message 42"):
        calendar.poll()
    guest.sock.sendall(TT_MSG.pack(TtOp.RUN, 2, 0))
    with pytest.raises(TimeTravelError, match="RUN goes from the calendar to the guest"):
        calendar.poll()
    guest.sock.sendall(TT_MSG.pack(TtOp.ACK, 77, 0))
    with pytest.raises(TimeTravelError, match="acknowledged message 77, never sent"):
        calendar.poll()
    # (found by the fuzz target: a time past 2**63 made GET_TOD's answer overflow)
    guest.sock.sendall(TT_MSG.pack(TtOp.UPDATE, 3, 1 << 63))
    with pytest.raises(TimeTravelError, match="UPDATE at 9223372036854775808 ns: past"):
        calendar.poll()
    guest.sock.sendall(TT_MSG.pack(TtOp.REQUEST, 4, 2**64 - 1))
    with pytest.raises(TimeTravelError, match=r"REQUEST at \d+ ns: past the guest's clock"):
        calendar.poll()
    guest.sock.close()
    with pytest.raises(TimeTravelError, match="closed") as info:
        calendar.poll()
    assert info.value.closed


# --- the guest process (tb/guest/uml.py) -----------------------------------------------


def test_guest_options_refuse_bad_values() -> None:
    with pytest.raises(ValueError, match="time 'fast': one of free, shared"):
        GuestOptions(["/bin/true"], time="fast")
    with pytest.raises(ValueError, match="idle_ns 0: a positive number"):
        GuestOptions(["/bin/true"], idle_ns=0)


def test_guest_command_line(tmp_path) -> None:
    """The kernel's command line: root from hostfs read-only, UML's files and the device
    socket in the private directory, console=tty0 given (else UML appends it to the
    command's arguments), time-travel only under shared time, the command after --."""
    free = UmlGuest(
        GuestOptions(["/bin/sh", "x.sh", "a"]), tmp_path, tmp_path / "c", tmp_path / "s"
    )
    argv = free.argv()
    assert argv[-4:] == ["--", "/bin/sh", "x.sh", "a"]
    assert {"rootfstype=hostfs", "rootflags=/", "ro", "console=tty0"} <= set(argv)
    assert f"uml_dir={tmp_path}" in argv and f"virtio_uml.device={tmp_path / 's'}:1234" in argv
    assert not any(a.startswith("time-travel") for a in argv)
    shared = UmlGuest(
        GuestOptions(["/bin/true"], time="shared"),
        tmp_path,
        tmp_path / "c",
        tmp_path / "s",
        tmp_path / "t",
    )
    assert f"time-travel=ext:{tmp_path / 't'}" in shared.argv()
    with pytest.raises(GuestError, match="shared time needs the calendar's socket"):
        UmlGuest(
            GuestOptions(["/bin/true"], time="shared"), tmp_path, tmp_path / "c", tmp_path / "s"
        ).argv()


@pytest.mark.parametrize("said,status", [("pevb-init: exit status 3", 3), ("panic", None)])
def test_guest_exit_status_is_what_init_printed(tmp_path, said: str, status) -> None:
    """The command's status comes from pevb-init's console line; a guest that ended
    without one (a panic, a kill) has none, which the bridge reports as an error."""
    kernel = tmp_path / "kernel"
    kernel.write_text(f"#!/bin/sh\necho booting\necho '{said}'\nexit 0\n")
    kernel.chmod(0o755)
    guest = UmlGuest(
        GuestOptions(["/bin/true"], kernel=kernel), tmp_path, tmp_path / "console", tmp_path / "s"
    )
    guest.start()
    assert guest.wait(10) == 0
    guest.stop()
    assert guest.exit_status() == status
    assert guest.tail(1) == said


def test_guest_is_shown_the_host_dirs_its_tmp_hides(tmp_path, monkeypatch) -> None:
    """pevb-init mounts a fresh /tmp and /run: a repository cloned under either, and
    every folder of the command's absolute paths there, are named on the kernel's command
    line (init's environment) so that init shows them again, read-only."""
    from tb.guest import uml

    monkeypatch.setattr(uml, "ROOT", Path("/tmp/ci/clone"))
    monkeypatch.setattr(uml, "GUEST_DIR", Path("/tmp/ci/clone/sim_build/guest"))
    command = ["/bin/sh", "/run/user/7/t.sh", "/usr/bin/true", "/tmp", "-n", "/tmp/ci/clone/x"]
    g = UmlGuest(GuestOptions(command), tmp_path, tmp_path / "c", tmp_path / "s")
    argv = g.argv()
    assert "PEVB_HOST_DIRS=/run/user/7:/tmp/ci/clone" in argv
    assert argv.index("PEVB_HOST_DIRS=/run/user/7:/tmp/ci/clone") < argv.index("--")
    monkeypatch.setattr(uml, "ROOT", Path("/home/u/p"))
    monkeypatch.setattr(uml, "GUEST_DIR", Path("/home/u/p/sim_build/guest"))
    g = UmlGuest(GuestOptions(["/bin/sh", "/usr/x.sh"]), tmp_path, tmp_path / "c", tmp_path / "s")
    assert not any(a.startswith("PEVB_HOST_DIRS") for a in g.argv()), "nothing hidden"
    g = UmlGuest(GuestOptions(["/tmp/a b/x"]), tmp_path, tmp_path / "c", tmp_path / "s")
    with pytest.raises(GuestError, match="cannot be shown /tmp/a b: a ' ' in its path"):
        g.argv()
