"""The guest's calendar for shared time: User-mode Linux's ``time-travel=ext`` protocol
(``include/uapi/linux/um_timetravel.h``), on the simulation's side.

Under ``ext`` the guest's clock moves only when the calendar says: the guest asks to run
at a time (REQUEST), says it waits (WAIT), and runs again when the calendar grants that
time (RUN); it asks the calendar's time (GET) when a device interrupts it, and tells the
calendar its own (UPDATE) before it kicks a device. Plain Python, no simulator: the bridge
(:mod:`tb.guest.bridge`) decides when to grant, this class speaks the protocol and keeps
the guest's side of the state. Every wait has a bound.
"""

from __future__ import annotations

import logging
import struct
from enum import IntEnum

from .errors import GuestProtocolError
from .sockets import OnePeerSocket, PeerClosed

log = logging.getLogger("cocotb.guest.time")

MSG = struct.Struct("<IIQ")  # op, seq, time (ns)
# GET_TOD answers this fixed time of day plus the guest's clock: runs repeat exactly
EPOCH_NS = 1_767_225_600 * 10**9  # 2026-01-01 00:00:00 UTC
MAX_TIME_NS = 1 << 63  # ktime_t is signed: a guest's time stays below this


class TtOp(IntEnum):
    """``enum um_timetravel_ops``."""

    ACK = 0
    START = 1
    REQUEST = 2
    WAIT = 3
    GET = 4
    UPDATE = 5
    RUN = 6
    FREE_UNTIL = 7
    GET_TOD = 8


class TimeTravelError(GuestProtocolError):
    """The guest broke the protocol, went away (``closed``), or stopped answering."""

    def __init__(self, message: str, closed: bool = False) -> None:
        super().__init__(message)
        self.closed = closed


class Calendar(OnePeerSocket):
    """The calendar on a listening Unix socket at ``path``, one guest.

    ``now`` is the guest's clock as the calendar knows it (the last time it granted or the
    guest reported); ``request`` the time the guest asked to run at next (None: nothing
    asked); ``waiting`` whether the guest is stopped until a RUN. ``clock`` answers GET:
    the guest's time as the simulation sees it while the guest waits.
    """

    def __init__(self, path: str, wait_s: float = 10.0) -> None:
        super().__init__(path, "guest's clock", wait_s)
        self.now = 0
        self.request: int | None = None
        self.waiting = False
        self.started = False
        self.gets = 0  # GETs answered
        self.last_get = 0  # the time the last one answered
        self.clock = lambda: self.now
        self._seq = 0
        self._unacked: set[int] = set()

    def _send(self, op: TtOp, seq: int, time: int) -> None:
        assert self.conn is not None
        try:
            self.send_on(self.conn, MSG.pack(op, seq, time))
        except PeerClosed as e:
            raise TimeTravelError("the guest closed its time-travel socket", closed=True) from e
        except TimeoutError as e:
            raise TimeTravelError("the guest stopped taking time-travel messages") from e

    def _recv(self) -> tuple[int, int, int] | None:
        try:
            start = self.recv_start(MSG.size)
            if start is None:
                return None
            data = self.recv_rest(start[0], MSG.size)
        except PeerClosed as e:
            raise TimeTravelError("the guest closed its time-travel socket", closed=True) from e
        except TimeoutError as e:
            raise TimeTravelError("the guest sent part of a time-travel message") from e
        return MSG.unpack(data)

    def poll(self) -> bool:
        """Answer everything the guest has sent; whether anything came."""
        if self.conn is None and not self.accept():
            return False
        came = False
        while (msg := self._recv()) is not None:
            came = True
            self._handle(*msg)
        return came

    def _handle(self, op_: int, seq: int, time: int) -> None:
        try:
            op = TtOp(op_)
        except ValueError:
            raise TimeTravelError(f"unknown time-travel message {op_}") from None
        log.debug("time-travel: %s seq %d time %d", op.name, seq, time)
        answer = 0
        if op == TtOp.ACK:  # of a RUN of ours
            if seq not in self._unacked:
                raise TimeTravelError(f"the guest acknowledged message {seq}, never sent")
            self._unacked.discard(seq)
            return
        if op == TtOp.START:
            self.started = True
        elif op == TtOp.REQUEST:
            self._check_time(op, time)
            self.request = time
        elif op == TtOp.WAIT:
            self.waiting = True
        elif op == TtOp.GET:
            answer = self.clock() if self.waiting else self.now
            self.gets += 1
            self.last_get = answer
        elif op == TtOp.UPDATE:
            self._check_time(op, time)
            if time < self.now:
                raise TimeTravelError(f"the guest's clock went back: {self.now} -> {time} ns")
            self.now = time
        elif op == TtOp.GET_TOD:
            answer = EPOCH_NS + self.now
        else:
            raise TimeTravelError(f"{op.name} goes from the calendar to the guest")
        self._send(TtOp.ACK, seq, answer)

    @staticmethod
    def _check_time(op: TtOp, time: int) -> None:
        """A guest's time is a signed 64-bit count of nanoseconds (ktime_t)."""
        if time >= MAX_TIME_NS:
            raise TimeTravelError(f"{op.name} at {time} ns: past the guest's clock (2**63 ns)")

    def grant(self, time: int) -> None:
        """Let the waiting guest run at ``time`` (its clock becomes ``time``)."""
        if time < self.now:
            raise TimeTravelError(f"a RUN at {time} ns would send the guest's clock back")
        self._seq += 1
        self._unacked.add(self._seq)
        self.now = time
        self.waiting = False
        self.request = None
        self._send(TtOp.RUN, self._seq, time)

    def fileno(self) -> int:
        return self.conn.fileno() if self.conn is not None else self.listener.fileno()
