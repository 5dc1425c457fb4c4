"""The guest's side of vhost-user and virt-pci as User-mode Linux's virtio_uml speaks it
(the handshake's order, a memfd for RAM, in-band kicks with reply-ack), written here to
drive the bridge without a guest: its unit tests and its fuzz targets. A test may make it
break any rule on purpose. Plain Python, no simulator.
"""

from __future__ import annotations

import mmap
import os
import socket
import struct

from .vhost_user import (
    DESC,
    DESC_F_NEXT,
    DESC_F_WRITE,
    HEADER,
    MEM_REGION,
    U64,
    VRING_ADDR,
    VRING_POLL,
    VRING_STATE,
    Flag,
    Request,
    VhostUserBackend,
)

RAM_BASE = 0x40_0000  # UML offers its RAM from above the kernel image
RAM_SIZE = 1 << 20
NUM = 16
# the queues' rings, in the guest's RAM
RINGS = {0: RAM_BASE + 0x1000, 1: RAM_BASE + 0x3000}


class FrontEnd:
    """The guest's side of vhost-user, as virtio_uml does it, connected to the back end
    listening at ``path``; ``protocol`` the protocol features it keeps (None: all
    offered)."""

    def __init__(self, path: str, protocol: int | None = None) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.sock.settimeout(5)
        self.fd = os.memfd_create("guest-ram")
        os.ftruncate(self.fd, RAM_SIZE)
        self.ram = mmap.mmap(self.fd, RAM_SIZE)
        self.slave, self._slave_peer = socket.socketpair()
        self.slave.settimeout(5)
        self.protocol = protocol
        self.avail_idx = {0: 0, 1: 0}

    def close(self) -> None:
        """Hang up and free the RAM."""
        for s in (self.sock, self.slave, self._slave_peer):
            s.close()
        self.ram.close()
        os.close(self.fd)

    def send(self, request: int, payload: bytes = b"", fds=(), need_reply=True) -> None:
        flags = 1 | (Flag.NEED_REPLY if need_reply else 0)
        msg = HEADER.pack(request, flags, len(payload)) + payload
        socket.send_fds(self.sock, [msg], list(fds)) if fds else self.sock.sendall(msg)

    def reply(self, backend: VhostUserBackend) -> int:
        backend.poll()
        _, flags, size = HEADER.unpack(self.sock.recv(HEADER.size))
        assert flags == Flag.REPLY | 1, "a reply's flags are exactly REPLY | version 1"
        return U64.unpack(self.sock.recv(size))[0] if size == 8 else -1

    def handshake(self, backend: VhostUserBackend) -> None:
        backend.accept(1.0)
        self.send(Request.SET_OWNER)
        assert self.reply(backend) == 0
        self.send(Request.GET_FEATURES, need_reply=False)
        assert self.reply(backend) & (1 << 30)
        self.send(Request.GET_PROTOCOL_FEATURES, need_reply=False)
        offered = self.reply(backend)
        keep = offered if self.protocol is None else self.protocol
        self.send(Request.SET_PROTOCOL_FEATURES, U64.pack(keep))
        assert self.reply(backend) == 0
        self.send(Request.SET_SLAVE_REQ_FD, fds=[self._slave_peer.fileno()])
        assert self.reply(backend) == 0
        self.send(Request.SET_FEATURES, U64.pack((1 << 32) | (1 << 30)))
        assert self.reply(backend) == 0
        table = struct.pack("<II", 1, 0) + MEM_REGION.pack(RAM_BASE, RAM_SIZE, RAM_BASE, 0)
        self.send(Request.SET_MEM_TABLE, table, fds=[self.fd])
        assert self.reply(backend) == 0
        for q, ring in RINGS.items():
            self.send(Request.SET_VRING_CALL, U64.pack(q | VRING_POLL))
            assert self.reply(backend) == 0
            self.send(Request.SET_VRING_NUM, VRING_STATE.pack(q, NUM))
            assert self.reply(backend) == 0
            self.send(Request.SET_VRING_BASE, VRING_STATE.pack(q, 0))
            assert self.reply(backend) == 0
            addrs = VRING_ADDR.pack(q, 0, ring, ring + 0x400, ring + 0x100, 0)
            self.send(Request.SET_VRING_ADDR, addrs)
            assert self.reply(backend) == 0
        for q in RINGS:
            self.send(Request.SET_VRING_KICK, U64.pack(q | VRING_POLL))
            assert self.reply(backend) == 0
            self.send(Request.SET_VRING_ENABLE, VRING_STATE.pack(q, 1))
            assert self.reply(backend) == 0

    def poke(self, addr: int, data: bytes) -> None:
        self.ram[addr - RAM_BASE : addr - RAM_BASE + len(data)] = data

    def peek(self, addr: int, n: int) -> bytes:
        return bytes(self.ram[addr - RAM_BASE : addr - RAM_BASE + n])

    def post(self, q: int, descs: list[tuple[int, int, bool]], head: int = 0) -> None:
        """Descriptors (address, length, writable) chained from ``head``, made available."""
        ring = RINGS[q]
        for i, (addr, length, writable) in enumerate(descs):
            last = i == len(descs) - 1
            flags = (0 if last else DESC_F_NEXT) | (DESC_F_WRITE if writable else 0)
            self.poke(ring + 16 * (head + i), DESC.pack(addr, length, flags, head + i + 1))
        slot = self.avail_idx[q] % NUM
        self.poke(ring + 0x100 + 4 + 2 * slot, struct.pack("<H", head))
        self.avail_idx[q] += 1
        self.poke(ring + 0x100 + 2, struct.pack("<H", self.avail_idx[q]))

    def used(self, q: int) -> tuple[int, list[tuple[int, int]]]:
        ring = RINGS[q] + 0x400
        (idx,) = struct.unpack("<H", self.peek(ring + 2, 2))
        return idx, [struct.unpack("<II", self.peek(ring + 4 + 8 * i, 8)) for i in range(idx)]
