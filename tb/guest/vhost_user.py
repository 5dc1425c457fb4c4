"""The device side of vhost-user (QEMU's docs/interop/vhost-user.rst; Linux's
``arch/um/drivers/vhost_user.h``): a Unix socket a front end (User-mode Linux's
virtio_uml) connects to, shares its RAM over and drives its virtqueues through.

Plain Python, no simulator: :class:`VhostUserBackend` takes the front end's requests when
asked (:meth:`VhostUserBackend.poll`), never blocks for longer than its bound, and hands
the caller what needs the device: kicks of its queues. The bridge needs in-band
notifications with reply-ack (a kick is a ``VRING_KICK`` message the front end waits on
until :meth:`VhostUserBackend.ack_kick`; a call to the front end is a ``VRING_CALL`` on
the slave channel): with eventfd kicks a slow answer is lost (see the guest reference).
"""

from __future__ import annotations

import errno
import logging
import mmap
import os
import select
import socket
import stat
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum, IntFlag

from .errors import GuestProtocolError
from .sockets import OnePeerSocket, PeerClosed

log = logging.getLogger("cocotb.guest.vhost")

HEADER = struct.Struct("<III")  # request, flags, size
U64 = struct.Struct("<Q")
VRING_STATE = struct.Struct("<II")  # index, num
VRING_ADDR = struct.Struct("<IIQQQQ")  # index, flags, desc, used, avail, log
MEM_REGION = struct.Struct("<QQQQ")  # guest address, size, user address, mmap offset
MAX_PAYLOAD = 4096
MAX_FDS = 8  # and regions of a memory table (VHOST_MEMORY_BASELINE_NREGIONS)
MAX_QUEUE_SIZE = 32768  # a split ring's largest (virtio 1.x, 2.7)
# the most a chain may give the device to read: a virt-pci message and its largest write
MAX_CHAIN_DATA = (16 << 20) + 64
VERSION = 1


class Request(IntEnum):
    """Front end -> back end requests (``enum vhost_user_request``)."""

    GET_FEATURES = 1
    SET_FEATURES = 2
    SET_OWNER = 3
    RESET_OWNER = 4
    SET_MEM_TABLE = 5
    SET_LOG_BASE = 6
    SET_LOG_FD = 7
    SET_VRING_NUM = 8
    SET_VRING_ADDR = 9
    SET_VRING_BASE = 10
    GET_VRING_BASE = 11
    SET_VRING_KICK = 12
    SET_VRING_CALL = 13
    SET_VRING_ERR = 14
    GET_PROTOCOL_FEATURES = 15
    SET_PROTOCOL_FEATURES = 16
    GET_QUEUE_NUM = 17
    SET_VRING_ENABLE = 18
    SET_SLAVE_REQ_FD = 21
    GET_CONFIG = 24
    SET_CONFIG = 25
    VRING_KICK = 35


class SlaveRequest(IntEnum):
    """Back end -> front end requests on the slave channel."""

    CONFIG_CHANGE_MSG = 2
    VRING_CALL = 4


class Flag(IntFlag):
    """Header flags (the low two bits are the protocol version)."""

    REPLY = 1 << 2
    NEED_REPLY = 1 << 3


VIRTIO_F_VERSION_1 = 1 << 32
F_PROTOCOL_FEATURES = 1 << 30


class ProtocolFeature(IntFlag):
    """``VHOST_USER_PROTOCOL_F_*`` bits the bridge offers (all three are required)."""

    REPLY_ACK = 1 << 3
    SLAVE_REQ = 1 << 5
    INBAND_NOTIFICATIONS = 1 << 14


REQUIRED_PROTOCOL = (
    ProtocolFeature.REPLY_ACK | ProtocolFeature.SLAVE_REQ | ProtocolFeature.INBAND_NOTIFICATIONS
)
VRING_POLL = 1 << 8  # SET_VRING_KICK/CALL: no file descriptor (in-band)
VRING_INDEX_MASK = 0xFF


class VhostUserError(GuestProtocolError):
    """The front end broke the protocol, asked for what the bridge does not do, or went
    away (``closed`` is then true)."""

    def __init__(self, message: str, closed: bool = False) -> None:
        super().__init__(message)
        self.closed = closed


class GuestMemoryError(GuestProtocolError):
    """A guest physical address outside the memory the front end shared, or a memory
    table the bridge cannot map."""


class GuestMemory:
    """The front end's RAM as ``SET_MEM_TABLE`` shares it: each region mapped once, read
    and written in place (a DMA address of the guest is a guest physical address here)."""

    def __init__(self) -> None:
        self.regions: list[tuple[int, int, mmap.mmap]] = []
        # how many tables this memory has held: a user of the regions (the bridge's root
        # complex) follows a new table when it changes
        self.generation = 0

    def add(self, guest_addr: int, size: int, fd: int, offset: int) -> None:
        """Map ``size`` bytes of ``fd`` from ``offset`` at guest address ``guest_addr``
        (:class:`GuestMemoryError` when ``fd`` is no file that can back it, the range is
        not in the file, or it overlaps a region already added)."""
        where = f"region 0x{guest_addr:x}+0x{size:x} (fd offset 0x{offset:x})"
        try:
            st = os.fstat(fd)
        except OSError as e:
            raise GuestMemoryError(f"{where}: its descriptor: {e.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            raise GuestMemoryError(f"{where}: its descriptor is no file (a memfd or a file)")
        if size == 0 or offset + size > st.st_size:
            raise GuestMemoryError(f"{where}: the file has 0x{st.st_size:x} bytes")
        if guest_addr + size > 1 << 64:
            raise GuestMemoryError(f"{where}: past the end of the 64-bit address space")
        for base, other, _ in self.regions:
            if guest_addr < base + other and base < guest_addr + size:
                raise GuestMemoryError(f"{where} overlaps 0x{base:x}+0x{other:x}")
        page = mmap.ALLOCATIONGRANULARITY
        skew = offset % page
        try:
            m = mmap.mmap(fd, size + skew, mmap.MAP_SHARED, offset=offset - skew)
        except (OSError, ValueError, OverflowError) as e:
            raise GuestMemoryError(f"{where}: cannot be mapped ({e})") from None
        self.regions.append((guest_addr, size, _Skewed(m, skew) if skew else m))

    def close(self) -> None:
        for _, _, m in self.regions:
            m.close()
        self.regions.clear()

    def contains(self, addr: int, length: int) -> bool:
        """Whether ``[addr, addr + length)`` lies in one region."""
        return any(base <= addr and addr + length <= base + size for base, size, _ in self.regions)

    def find(self, addr: int, length: int) -> tuple[object, int]:
        """The mapping and the offset in it of ``[addr, addr + length)``, which must lie in
        one region (:class:`GuestMemoryError` otherwise)."""
        for base, size, m in self.regions:
            if base <= addr and addr + length <= base + size:
                return m, addr - base
        raise GuestMemoryError(
            f"guest address 0x{addr:x}+{length} is outside the memory the guest shared"
            f" ({self.describe()})"
        )

    def describe(self) -> str:
        return ", ".join(f"0x{b:x}-0x{b + s - 1:x}" for b, s, _ in self.regions) or "none"

    def read(self, addr: int, length: int) -> bytes:
        m, off = self.find(addr, length)
        return bytes(m[off : off + length])

    def write(self, addr: int, data: bytes) -> None:
        m, off = self.find(addr, len(data))
        m[off : off + len(data)] = data


class _Skewed:
    """A mapping whose start is ``skew`` bytes into its first page (an mmap offset that is
    not page aligned)."""

    def __init__(self, m: mmap.mmap, skew: int) -> None:
        self._m = m
        self._skew = skew

    def __getitem__(self, key: slice) -> bytes:
        return self._m[key.start + self._skew : key.stop + self._skew]

    def __setitem__(self, key: slice, value: bytes) -> None:
        self._m[key.start + self._skew : key.stop + self._skew] = value

    def close(self) -> None:
        self._m.close()


# split virtqueue layout (virtio 1.x, 2.7)
DESC = struct.Struct("<QIHH")  # addr, len, flags, next
DESC_F_NEXT = 1
DESC_F_WRITE = 2
DESC_F_INDIRECT = 4
AVAIL_F_NO_INTERRUPT = 1
USED_ELEM = struct.Struct("<II")


@dataclass
class Chain:
    """One request taken from a virtqueue: what the driver gave to read (``data``), the
    buffers it gave to write (``writable``: (address, length) each), and its head."""

    head: int
    data: bytes
    writable: list[tuple[int, int]]

    @property
    def room(self) -> int:
        return sum(n for _, n in self.writable)


class VirtqueueError(GuestProtocolError):
    """A malformed descriptor chain (a loop, a bad index, an indirect table, buffers
    outside the guest's memory) or an avail index moved past the ring."""


@dataclass
class Virtqueue:
    """The device's view of one split virtqueue in guest memory."""

    index: int
    num: int = 0
    desc: int = 0
    avail: int = 0
    used: int = 0
    enabled: bool = False
    last_avail: int = 0
    used_idx: int = 0
    ready: bool = False

    def rings(self) -> list[tuple[str, int, int, int]]:
        """(name, address, length, alignment) of the three parts of the ring."""
        return [
            ("descriptor table", self.desc, 16 * self.num, 16),
            ("avail ring", self.avail, 6 + 2 * self.num, 2),
            ("used ring", self.used, 6 + 8 * self.num, 4),
        ]

    def check_rings(self, mem: GuestMemory) -> None:
        """:class:`VirtqueueError` unless every part of the ring lies, aligned, in
        ``mem``."""
        for name, addr, length, align in self.rings():
            if addr % align or not mem.contains(addr, length):
                raise VirtqueueError(
                    f"queue {self.index}: its {name} at 0x{addr:x}+{length} is"
                    f" {'misaligned' if addr % align else 'outside the guest memory'}"
                    f" ({mem.describe()})"
                )

    def pending(self, mem: GuestMemory) -> int:
        """Chains the driver has made available and the device has not taken (a driver
        that moved its index more than the ring's size ahead broke the ring)."""
        (idx,) = struct.unpack("<H", mem.read(self.avail + 2, 2))
        n = (idx - self.last_avail) & 0xFFFF
        if n > self.num:
            raise VirtqueueError(
                f"queue {self.index}: the avail index moved {n} ahead of the device"
                f" ({self.last_avail} -> {idx}) on a ring of {self.num}"
            )
        return n

    def pop(self, mem: GuestMemory) -> Chain | None:
        """The next available chain, or None."""
        if not self.ready or self.pending(mem) == 0:
            return None
        slot = self.last_avail % self.num
        (head,) = struct.unpack("<H", mem.read(self.avail + 4 + 2 * slot, 2))
        self.last_avail = (self.last_avail + 1) & 0xFFFF
        data = bytearray()
        writable: list[tuple[int, int]] = []
        i, seen = head, 0
        while True:
            if i >= self.num or seen >= self.num:
                raise VirtqueueError(f"queue {self.index}: bad chain from head {head}")
            addr, length, flags, nxt = DESC.unpack(mem.read(self.desc + 16 * i, 16))
            if flags & DESC_F_INDIRECT:
                raise VirtqueueError(f"queue {self.index}: indirect descriptors not offered")
            if not mem.contains(addr, length):
                raise VirtqueueError(
                    f"queue {self.index}: descriptor {i}'s buffer 0x{addr:x}+{length} is"
                    f" outside the guest memory ({mem.describe()})"
                )
            if flags & DESC_F_WRITE:
                writable.append((addr, length))
            elif writable:
                raise VirtqueueError(f"queue {self.index}: readable after writable")
            elif len(data) + length > MAX_CHAIN_DATA:
                raise VirtqueueError(
                    f"queue {self.index}: a chain of more than {MAX_CHAIN_DATA} bytes to read"
                )
            else:
                data += mem.read(addr, length)
            seen += 1
            if not flags & DESC_F_NEXT:
                break
            i = nxt
        return Chain(head, bytes(data), writable)

    def push(self, mem: GuestMemory, chain: Chain, reply: bytes = b"") -> None:
        """Write ``reply`` into the chain's writable buffers and return it to the driver."""
        rest = memoryview(reply)
        for addr, length in chain.writable:
            if not rest:
                break
            n = min(length, len(rest))
            mem.write(addr, bytes(rest[:n]))
            rest = rest[n:]
        slot = self.used_idx % self.num
        mem.write(self.used + 4 + 8 * slot, USED_ELEM.pack(chain.head, len(reply) - len(rest)))
        self.used_idx = (self.used_idx + 1) & 0xFFFF
        mem.write(self.used + 2, struct.pack("<H", self.used_idx))

    def wants_interrupt(self, mem: GuestMemory) -> bool:
        (flags,) = struct.unpack("<H", mem.read(self.avail, 2))
        return not flags & AVAIL_F_NO_INTERRUPT


@dataclass
class Kick:
    """The front end made buffers available on ``queue`` and waits for the answer
    (:meth:`VhostUserBackend.ack_kick`) when ``needs_ack``."""

    queue: int
    needs_ack: bool


class VhostUserBackend(OnePeerSocket):
    """A vhost-user device with ``queues`` virtqueues on a listening Unix socket at
    ``path`` (made in a directory only the user can reach; the front end connects).

    :meth:`poll` takes what the front end sent and returns the kicks; the front end is
    blocked on each kick that ``needs_ack`` until :meth:`ack_kick`. ``wait_s`` bounds every
    wait for the rest of a message once its first byte came.
    """

    def __init__(self, path: str, queues: int, wait_s: float = 10.0) -> None:
        super().__init__(path, "vhost-user front end", wait_s)
        self.queues = [Virtqueue(i) for i in range(queues)]
        self.mem = GuestMemory()
        self.features = 0
        self.protocol = 0
        self.owner = False
        self.slave: socket.socket | None = None

    def close(self) -> None:
        if self.slave is not None:
            self.slave.close()
            self.slave = None
        self.mem.close()
        super().close()

    @property
    def ready(self) -> bool:
        """Every queue set up and enabled: the device may take and return buffers."""
        return all(q.ready and q.enabled for q in self.queues)

    # --- messages ---------------------------------------------------------------------
    def _recv_exact(self, data: bytes, n: int) -> bytes:
        try:
            return self.recv_rest(data, n)
        except PeerClosed as e:
            raise VhostUserError(str(e), closed=True) from e
        except TimeoutError as e:
            raise VhostUserError(str(e)) from e

    def _recv(self) -> tuple[int, int, bytes, list[int]] | None:
        """One message, or None when nothing is waiting."""
        try:
            start = self.recv_start(HEADER.size, MAX_FDS)
        except PeerClosed as e:
            raise VhostUserError(str(e), closed=True) from e
        if start is None:
            return None
        data, fds = start
        try:
            request, flags, size = HEADER.unpack(self._recv_exact(data, HEADER.size))
            if size > MAX_PAYLOAD:
                raise VhostUserError(f"request {request}: payload of {size} bytes")
            payload = self._recv_exact(b"", size) if size else b""
        except VhostUserError:
            for fd in fds:
                os.close(fd)
            raise
        return request, flags, payload, fds

    def _send(self, sock: socket.socket, data: bytes) -> None:
        try:
            self.send_on(sock, data)
        except PeerClosed as e:
            raise VhostUserError(str(e), closed=True) from e
        except TimeoutError as e:
            raise VhostUserError("front end stopped taking messages") from e

    def _reply(self, request: int, payload: bytes) -> None:
        assert self.conn is not None
        self._send(self.conn, HEADER.pack(request, VERSION | Flag.REPLY, len(payload)) + payload)

    def _ack(self, request: int, flags: int, status: int = 0) -> None:
        if flags & Flag.NEED_REPLY:
            self._reply(request, U64.pack(status))

    def ack_kick(self, kick: Kick) -> None:
        """Let the front end go on after a kick (it waits when ``needs_ack``)."""
        if kick.needs_ack:
            self._reply(Request.VRING_KICK, U64.pack(0))

    def call(self, queue: int, need_reply: bool = False) -> bool:
        """Tell the front end that ``queue`` has used buffers (an interrupt of the virtio
        device), unless the driver asked for none; whether it was told. With
        ``need_reply`` the front end answers once it has taken the notification
        (:meth:`call_answered`)."""
        q = self.queues[queue]
        if self.slave is None or not q.ready or not q.wants_interrupt(self.mem):
            return False
        flags = VERSION | (Flag.NEED_REPLY if need_reply else 0)
        msg = HEADER.pack(SlaveRequest.VRING_CALL, flags, VRING_STATE.size)
        self._send(self.slave, msg + VRING_STATE.pack(queue, 0))
        return True

    def call_answered(self) -> bool:
        """Whether the front end answered a notification sent with ``need_reply`` (a
        front end that refuses one is an error)."""
        assert self.slave is not None
        try:
            head = self.slave.recv(HEADER.size, socket.MSG_PEEK)
        except BlockingIOError:
            return False
        if not head:
            raise VhostUserError("front end closed the slave channel", closed=True)
        if len(head) < HEADER.size:
            return False
        request, flags, size = HEADER.unpack(self.slave.recv(HEADER.size))
        if size != U64.size:
            raise VhostUserError(f"slave channel: an answer of {size} bytes (8)")
        self.slave.setblocking(True)
        self.slave.settimeout(self.wait_s)
        try:
            payload = self.slave.recv(size)
        except TimeoutError:
            raise VhostUserError("slave channel: the front end sent part of an answer") from None
        except (ConnectionResetError, BrokenPipeError):
            raise VhostUserError("front end closed the slave channel", closed=True) from None
        finally:
            self.slave.setblocking(False)
        if request != SlaveRequest.VRING_CALL or not flags & Flag.REPLY or len(payload) != 8:
            raise VhostUserError(f"slave channel: unexpected answer {request} flags 0x{flags:x}")
        (status,) = U64.unpack(payload)
        if status:
            raise VhostUserError(f"front end refused a notification (status {status})")
        return True

    def poll(self, timeout_s: float = 0.0) -> list[Kick]:
        """Handle everything the front end has sent (waiting up to ``timeout_s`` for the
        first message); the kicks, in order."""
        if self.conn is None:
            if not self.accept(timeout_s):
                return []
            timeout_s = 0.0
        kicks: list[Kick] = []
        if timeout_s > 0:
            select.select([self.conn], [], [], timeout_s)
        while (msg := self._recv()) is not None:
            kick = self._handle(*msg)
            if kick is not None:
                kicks.append(kick)
                if kick.needs_ack:  # the front end waits: nothing more comes until the ack
                    break
        return kicks

    def _handle(self, request: int, flags: int, payload: bytes, fds: list[int]) -> Kick | None:
        try:
            name = Request(request).name
        except ValueError:
            name = str(request)
        log.debug("vhost-user: %s flags 0x%x %d bytes %d fds", name, flags, len(payload), len(fds))
        # the descriptors a message brings are the bridge's from here on: the two requests
        # that keep one take it out of the list, every other one is closed whatever happens
        try:
            return self._take(request, name, flags, payload, fds)
        finally:
            for fd in fds:
                os.close(fd)

    @staticmethod
    def _unpack(name: str, st: struct.Struct, payload: bytes) -> tuple:
        if len(payload) < st.size:
            raise VhostUserError(f"{name} carries {len(payload)} bytes; it needs {st.size}")
        return st.unpack_from(payload)

    def _take(
        self, request: int, name: str, flags: int, payload: bytes, fds: list[int]
    ) -> Kick | None:
        if request == Request.VRING_KICK:
            index, _ = self._unpack(name, VRING_STATE, payload)
            if index >= len(self.queues):
                raise VhostUserError(f"kick of queue {index}: the device has {len(self.queues)}")
            return Kick(index, bool(flags & Flag.NEED_REPLY))
        if request == Request.GET_FEATURES:
            self._reply(request, U64.pack(VIRTIO_F_VERSION_1 | F_PROTOCOL_FEATURES))
            return None
        if request == Request.GET_PROTOCOL_FEATURES:
            self._reply(request, U64.pack(int(REQUIRED_PROTOCOL)))
            return None
        status = 0
        if request == Request.SET_OWNER:
            self.owner = True
        elif request == Request.SET_FEATURES:
            (self.features,) = self._unpack(name, U64, payload)
        elif request == Request.SET_PROTOCOL_FEATURES:
            (self.protocol,) = self._unpack(name, U64, payload)
            missing = REQUIRED_PROTOCOL & ~self.protocol
            if missing:
                raise VhostUserError(
                    f"front end declined {ProtocolFeature(missing)!r}: the bridge needs "
                    "in-band notifications, reply-ack and the slave channel"
                )
        elif request == Request.SET_SLAVE_REQ_FD:
            self._set_slave(fds)
        elif request == Request.SET_MEM_TABLE:
            self._set_mem_table(payload, fds)
        elif request in (Request.SET_VRING_NUM, Request.SET_VRING_BASE, Request.SET_VRING_ENABLE):
            index, num = self._unpack(name, VRING_STATE, payload)
            q = self._queue(index)
            if request != Request.SET_VRING_ENABLE and q.ready:
                raise VhostUserError(
                    f"{name} on queue {index} while it runs (GET_VRING_BASE stops it first)"
                )
            if request == Request.SET_VRING_NUM:
                if not 0 < num <= MAX_QUEUE_SIZE or num & (num - 1):
                    raise VhostUserError(
                        f"{name}: queue {index} of {num} entries (a split ring has a power of"
                        f" two, 1-{MAX_QUEUE_SIZE})"
                    )
                q.num = num
            elif request == Request.SET_VRING_BASE:
                if num > 0xFFFF:
                    raise VhostUserError(f"{name}: queue {index} from index {num} (16 bits)")
                q.last_avail = q.used_idx = num
            else:
                q.enabled = bool(num)
        elif request == Request.SET_VRING_ADDR:
            index, _, desc, used, avail, _ = self._unpack(name, VRING_ADDR, payload)
            q = self._queue(index)
            if q.num == 0:
                raise VhostUserError(f"{name}: queue {index} has no size yet (SET_VRING_NUM)")
            q.desc, q.used, q.avail = desc, used, avail
            q.ready = False
            q.check_rings(self.mem)
            # with in-band notifications no SET_VRING_KICK follows: the rings make it ready
            q.ready = True
        elif request in (Request.SET_VRING_KICK, Request.SET_VRING_CALL):
            (value,) = self._unpack(name, U64, payload)
            self._queue(value & VRING_INDEX_MASK)
            if not value & VRING_POLL or fds:
                raise VhostUserError(
                    f"{name} with a file descriptor: the bridge needs in-band notifications"
                )
        elif request == Request.GET_VRING_BASE:
            index, _ = self._unpack(name, VRING_STATE, payload)
            q = self._queue(index)
            q.ready = q.enabled = False
            self._reply(request, VRING_STATE.pack(index, q.last_avail))
            return None
        else:
            log.warning("vhost-user: request %s not handled", name)
            status = errno.ENOTSUP
        self._ack(request, flags, status)
        return None

    def _queue(self, index: int) -> Virtqueue:
        if index >= len(self.queues):
            raise VhostUserError(f"queue {index}: the device has {len(self.queues)}")
        return self.queues[index]

    def _set_slave(self, fds: list[int]) -> None:
        if len(fds) != 1:
            raise VhostUserError(f"SET_SLAVE_REQ_FD with {len(fds)} descriptors (one socket)")
        mode = os.fstat(fds[0]).st_mode
        if not stat.S_ISSOCK(mode):
            raise VhostUserError(f"SET_SLAVE_REQ_FD: its descriptor is no socket (mode 0o{mode:o})")
        if self.slave is not None:
            self.slave.close()
        self.slave = socket.socket(fileno=fds.pop())
        self.slave.setblocking(False)

    def _set_mem_table(self, payload: bytes, fds: list[int]) -> None:
        """Map the front end's new table (whole, or not at all: the old one stays until the
        new one is mapped); the rings of running queues must lie in it."""
        (num,) = self._unpack("SET_MEM_TABLE", struct.Struct("<I"), payload)
        if num != len(fds) or not 0 < num <= MAX_FDS:
            raise VhostUserError(
                f"SET_MEM_TABLE: {num} regions with {len(fds)} descriptors (1-{MAX_FDS} each)"
            )
        if len(payload) < 8 + num * MEM_REGION.size:
            raise VhostUserError(
                f"SET_MEM_TABLE of {num} regions carries {len(payload)} bytes;"
                f" it needs {8 + num * MEM_REGION.size}"
            )
        new = GuestMemory()
        try:
            for i, fd in enumerate(fds):
                entry = 8 + i * MEM_REGION.size
                guest, size, _user, offset = MEM_REGION.unpack_from(payload, entry)
                new.add(guest, size, fd, offset)
            for q in self.queues:
                if q.ready:
                    q.check_rings(new)
        except GuestProtocolError:
            new.close()
            raise
        self.mem.close()
        self.mem.regions = new.regions
        self.mem.generation += 1
        for base, size, _ in self.mem.regions:
            log.info("vhost-user: guest memory 0x%x-0x%x", base, base + size - 1)

    def regions(self) -> Iterator[tuple[int, int]]:
        """(guest address, size) of each shared memory region."""
        for base, size, _ in self.mem.regions:
            yield base, size
