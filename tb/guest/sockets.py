"""What the guest's two sockets share: a Unix socket only the user can reach (mode
0600, in a private directory), one peer, sends bounded in time. Plain Python."""

from __future__ import annotations

import logging
import os
import select
import socket

log = logging.getLogger("cocotb.guest")


class PeerClosed(Exception):
    """The peer closed or reset the connection."""


class OnePeerSocket:
    """A listening Unix socket at ``path`` for one peer (``conn`` once it came);
    ``wait_s`` bounds every send and every wait for the rest of a message."""

    def __init__(self, path: str, name: str, wait_s: float = 10.0) -> None:
        self.path = path
        self.name = name
        self.wait_s = wait_s
        self.conn: socket.socket | None = None
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o600)
        self.listener.listen(1)
        self.listener.setblocking(False)

    def accept(self, timeout_s: float = 0.0) -> bool:
        """Take the peer's connection if it has come (waiting up to ``timeout_s``)."""
        if self.conn is not None:
            return True
        ready, _, _ = select.select([self.listener], [], [], timeout_s)
        if not ready:
            return False
        self.conn, _ = self.listener.accept()
        self.conn.setblocking(False)
        log.info("guest: %s connected on %s", self.name, self.path)
        return True

    def close(self) -> None:
        """Close the connection and the listener and remove the socket's file."""
        for s in (self.conn, self.listener):
            if s is not None:
                s.close()
        self.conn = None
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def send_on(self, sock: socket.socket, data: bytes) -> None:
        """Send all of ``data`` on ``sock`` within ``wait_s`` (:class:`PeerClosed`,
        :class:`TimeoutError`)."""
        sock.setblocking(True)
        sock.settimeout(self.wait_s)
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise PeerClosed(f"the {self.name} closed the connection") from e
        finally:
            sock.setblocking(False)

    def recv_start(self, n: int, max_fds: int = 0) -> tuple[bytes, list[int]] | None:
        """The first bytes (at most ``n``) of the peer's next message and the file
        descriptors that came with them, or None when nothing is waiting
        (:class:`PeerClosed`)."""
        assert self.conn is not None
        try:
            if max_fds:
                data, fds, _, _ = socket.recv_fds(self.conn, n, max_fds)
            else:
                data, fds = self.conn.recv(n), []
        except BlockingIOError:
            return None
        except ConnectionResetError as e:
            raise PeerClosed(f"the {self.name} reset the connection") from e
        if not data:
            raise PeerClosed(f"the {self.name} closed the connection")
        return data, fds

    def recv_rest(self, data: bytes, n: int) -> bytes:
        """``data``, the first bytes of an ``n``-byte message, with the rest read within
        ``wait_s`` (:class:`PeerClosed`, :class:`TimeoutError`)."""
        assert self.conn is not None
        buf = bytearray(data)
        while len(buf) < n:
            ready, _, _ = select.select([self.conn], [], [], self.wait_s)
            if not ready:
                raise TimeoutError(f"the {self.name} sent part of a message and stopped")
            chunk = self.conn.recv(n - len(buf))
            if not chunk:
                raise PeerClosed(f"the {self.name} closed the connection")
            buf += chunk
        return bytes(buf)
