"""The transactor model: the hard IP's four streams cross into the simulator once per
TLP, not once per clock.

The RTL side (``tb/verilog/pevb_xact_source.v``, ``pevb_xact_sink.v``,
``pevb_xact_pause.v``, inside ``pevb_hip_port`` built with ``PEVB_HIP_XACT``) holds a
buffer of beats per stream and moves them at one per clock:

- CQ and RC (model to RTL): when the hard-IP model sends a frame, it is turned into
  beats at once, and they are written into the transactor's buffer, one word per beat,
  then its write pointer. Below 512 bits with one segment a pass over the whole frame
  does what cocotbext-pcie's packer (the source's ``_run``) does beat by beat (checked
  against it, tests/unit/test_unit_xact_per_tlp.py); otherwise that packer itself,
  stepped by hand as in the beat-level model. The transactor puts a beat on the bus on every
  edge the cocotbext-pcie source would: when the bus is free and the stream not paused.
- RQ and CC (RTL to model): the transactor stores every beat the RTL hands over and
  counts the TLPs that end. A change of that count (a simulator value-change callback,
  :class:`tb.models.timeline.Watch`: no task, no clock edge) sets a drain for the ReadWrite
  phase of its time step (cocotb's ``ReadWrite`` trigger calling it), which reads the
  new beats and unpacks them (below 512 bits in one pass over the run of beats, checked
  against cocotbext-pcie's unpacker in the same test file; otherwise that unpacker, beat
  by beat), building the frame at the time of the edge the per-beat sink would have.
  The two sinks of a hard IP are read together in the ReadWrite phase of that time
  step, RQ first: when both end a TLP on one edge, the model sees them in one order
  whatever order the simulator applied the two counters in. On the compiled data path
  the library drains them the same way (``tb/dp/rqdrain.cpp``, :meth:`_SinkGroup.to_library`)
  and sends the card's writes and reads it can from there, Python taking the rest.
- tready of RQ and CC: the transactor drives it on each edge from what Python writes
  only when it changes: ``hold`` while the sink's queue is full, and the pause.
- Stalls: a stream's ``pause`` is a register of the transactor; a pause generator is
  played from a 512-bit pattern that Python rewrites one half at a time (one wake per
  256 cycles), not by a coroutine per clock.
- The user clock runs with no Python on any edge: cocotb's GPI clock (in C) where cocotb
  trusts the simulator's inertial writes (Verilator), each edge written at once, as a
  timer callback's writes are there (:func:`tb.models.clocks.install_timed_writes`); on
  Icarus a clock in the HDL of
  ``pevb_hip_port``, which Python only starts and stops
  (:class:`tb.models.clocks.EdgeClock`). Each of its edges waits (``#0``) behind the timer
  callbacks of its time step, and from then on a write made in a timer callback is
  applied at once rather than in the ReadWrite phase
  (:func:`tb.models.clocks.timed_writes_at_once`): a frame or a queue release at the very
  time of an edge reaches the RTL on that edge, as with the Python clock the other
  models use there, whose edges came in the ReadWrite phase after such writes.

The queue accounting of the cocotbext-pcie source is kept: a frame counts as queued
until the per-beat packer would have taken it (when the beat two before its first has
gone onto the bus), so the hard-IP model's ``send`` blocks as it would.

Several tests in one simulator (cocotb running a whole module): the transactors keep
their registers from one test to the next while each test builds a new hard-IP model.
Its streams carry on from the transactors' pointers (a source drops the beats an ended
test left unplayed), start with no pause, never deposit a value on the bus nets the
transactors drive, and are drained per test.

Build a system with the transactor model by constructing its cocotbext-pcie objects
inside :func:`tb.models.choice.models` ``("transactors")`` on a build made with ``PEVB_HIP_XACT``.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import logging
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import cocotb
from cocotb.queue import QueueFull
from cocotb.triggers import ReadWrite, ValueChange
from cocotbext.pcie.core.tlp import TlpType
from cocotbext.pcie.xilinx.us import interface as _us

from ..dp import COMPILED, RcFields, RcSrc, RqSnk, Stream, Unpacker, Words, datapath
from .clocks import writes_trusted
from .signals import WAIT, Beat, Sync, reader, writer
from .timeline import Timeline, Watch, steps, timeline

_LOCKED = frozenset((TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA))

# the hard IP's stream prefixes and the transactor instances inside pevb_hip_port
TRANSACTORS = {
    "s_axis_cq": "cq_xact",
    "s_axis_rc": "rc_xact",
    "m_axis_rq": "rq_xact",
    "m_axis_cc": "cc_xact",
}


def rc_fields(tlp: Any) -> RcFields:
    """What ``Tlp_us.pack_us_rc`` reads of completion ``tlp``, as the library packs it."""
    return RcFields(
        tlp.lower_address,
        tlp.error_code,
        tlp.byte_count,
        tlp.fmt_type in _LOCKED,
        bool(tlp.request_completed),
        tlp.length,
        tlp.status,
        bool(tlp.ep),
        int(tlp.requester_id),
        tlp.tag,
        int(tlp.completer_id),
        tlp.tc,
        tlp.attr,
        bool(tlp.discontinue),
    )


def _in_state(field: str, doc: str) -> property:
    """A transactor's attribute kept in its state where the library reads and moves it
    too (the structure its ``_state()`` gives): field ``field`` of that structure."""

    def get(self: Any) -> Any:
        return getattr(self._state(), field)

    def put(self: Any, value: Any) -> None:
        setattr(self._state(), field, value)

    return property(get, put, doc=doc)


class TransactorError(RuntimeError):
    """The build has no transactor where the transactor model needs one."""


def transactor(bus):
    """The transactor instance behind a cocotbext-pcie stream bus of the hard IP."""
    name = TRANSACTORS.get(bus._name)
    found = getattr(bus._entity, name, None) if name else None
    if found is None:
        raise TransactorError(
            f"{bus._entity._name}.{bus._name}: no transactor ({name or '?'}); the "
            "transactor model needs a build with PEVB_HIP_XACT"
        )
    return found


class _Memory:
    """Word access to a transactor's beat buffer (one simulator handle per word, made
    the first time it is used)."""

    def __init__(self, handle) -> None:
        self._handle = handle
        self.depth = len(handle)
        self._readers: list[Callable[[], int] | None] = [None] * self.depth
        self._writers: list[Callable[[int], None] | None] = [None] * self.depth

    def read(self, i: int) -> int:
        r = self._readers[i]
        if r is None:
            r = self._readers[i] = reader(self._handle[i], strict=True)
        return r()

    def write(self, i: int, value: int) -> None:
        w = self._writers[i]
        if w is None:
            w = self._writers[i] = writer(self._handle[i])
        w(value)


class _Pauser:
    """A stream's stalls, played by its transactor's ``pevb_xact_pause``."""

    HALF = 256

    def __init__(self, inst) -> None:
        self._write_pause = writer(inst.pause)
        self._write_on = writer(inst.pat_on)
        self._write_gen = writer(inst.pat_gen)
        self._write_pat = writer(inst.pat)
        self._idx = reader(inst.pat_idx)
        self._half_handle = inst.pat_half
        self._half = reader(inst.pat_half)
        # the transactor keeps its state from an earlier test in the same simulator:
        # carry on from its pattern generation, and start unpaused with no pattern
        self._gen = reader(inst.pat_gen)()
        if reader(inst.pause)() or reader(inst.pat_on)():
            self._write_pause(0)
            self._write_on(0)
        self._task = None
        self._pat = 0  # the pattern as last written

    def set(self, value: bool) -> None:
        self._write_pause(int(bool(value)))

    def start(self, generator: Iterator) -> None:
        """Play ``generator`` (a value per cycle, as cocotbext-pcie's pause generators;
        one that ends leaves its last value in force)."""
        self.stop()
        gen = iter(generator)
        last = [0]

        def take(n: int) -> list[int]:
            out = []
            for v in itertools.islice(gen, n):
                last[0] = int(bool(v))
                out.append(last[0])
            return out + [last[0]] * (n - len(out))  # ended: its last value holds

        first = take(2 * self.HALF)
        self._pat = sum(v << i for i, v in enumerate(first))
        self._write_pat(self._pat)
        self._gen = (self._gen + 1) % 256
        self._write_gen(self._gen)
        self._write_on(1)

        async def refill() -> None:
            playing = 1  # the half that starts playing next (the upper one first)
            while True:
                await ValueChange(self._half_handle)
                if self._half() != playing:
                    continue  # the old pattern's half, as this one starts
                done = 1 - playing  # it has played: its next values go in now
                lo = done * self.HALF
                mask = ((1 << self.HALF) - 1) << lo
                bits = sum(v << i for i, v in enumerate(take(self.HALF)))
                self._pat = (self._pat & ~mask) | (bits << lo)
                self._write_pat(self._pat)
                playing = done

        self._task = cocotb.start_soon(refill())

    def stop(self) -> int | None:
        """Stop the pattern; the value in force for the next edge becomes the pause, as
        cocotbext-pcie leaves it (None: no pattern was playing)."""
        if self._task is None:
            return None
        self._task.cancel()
        self._task = None
        in_force = self._pat >> self._idx() & 1
        self._write_on(0)
        self.set(in_force)
        return in_force


class _Undriven:
    """A bus signal the transactor drives: its width and name as the handle's, and the
    cocotbext-pcie constructor's ``setimmediatevalue`` of it dropped. Icarus keeps a
    value deposited on a net until its driver changes: a later test in the same simulator
    would read the deposited zero where the transactor's register still holds the value
    an earlier test left (a tready stuck low, a tkeep of zero)."""

    def __init__(self, handle) -> None:
        self._handle = handle

    def __len__(self) -> int:
        return len(self._handle)

    def __getattr__(self, name: str):
        return getattr(self._handle, name)

    def setimmediatevalue(self, value) -> None:
        pass


class _QuietBus:
    """The stream bus as the cocotbext-pcie constructor sees it: the signals the
    transactor drives are :class:`_Undriven`."""

    def __init__(self, bus, driven: tuple[str, ...]) -> None:
        self._bus = bus
        self._driven = driven

    def __getattr__(self, name: str):
        handle = getattr(self._bus, name)
        return _Undriven(handle) if name in self._driven else handle


class _TransactorStream:
    """What the model side of each transactor stream has: the transactor's buffer, the
    bus widths a buffer word packs, and the stream's pause and pause generators (played
    by ``pevb_xact_pause``)."""

    _pauser: _Pauser
    _DRIVEN: tuple[str, ...] = ()  # the bus signals the transactor drives

    def __init__(self, bus, *args, **kwargs) -> None:
        super().__init__(_QuietBus(bus, self._DRIVEN), *args, **kwargs)
        self.bus = bus

    def _attach(self):
        """Find this stream's transactor and take its buffer and stall maker; it."""
        x = transactor(self.bus)
        self._mem = _Memory(x.mem)
        # on the compiled data path the library moves a TLP's words in one call
        self._words = Words.of(x.mem) if datapath() == COMPILED else None
        self._ptr_mod = 2 * self._mem.depth  # the pointers count to twice the depth
        self._pauser = _Pauser(x.pause_inst)
        self._dw = len(self.bus.tdata)
        self._uw = len(self.bus.tuser)
        self._kw = len(self.bus.tkeep)
        return x

    def _layout(self) -> Stream:
        """The stream's layout as the library packs and unpacks its words (below 512
        bits, one segment)."""
        return Stream(
            self.seg_byte_lanes,
            self._dw,
            self._uw,
            self._kw,
            self.parity_offset,
            self.discontinue_offset,
        )

    def _pause_update(self, val) -> None:
        self._pauser.set(val)

    def set_pause_generator(self, generator=None) -> None:
        self.clear_pause_generator()
        if generator is not None:
            # the generator's values are the pause from now on (cocotbext-pcie sets it
            # from them on every edge), whatever pause was in force
            self._pause = False
            self._pauser.set(0)
            self._pauser.start(generator)

    def clear_pause_generator(self) -> None:
        in_force = self._pauser.stop()
        if in_force is not None:
            self._pause = bool(in_force)


class _TransactorSource(_TransactorStream):
    """The model side of a source transactor; mixed in before the cocotbext-pcie source
    class, whose ``_run`` packs frames into beats."""

    _DRIVEN = ("tdata", "tvalid", "tlast", "tkeep", "tuser")

    def _init(self) -> None:
        super()._init()
        x = self._x = self._attach()
        self._write_wr = writer(x.wr_ptr)
        self._read_rd = reader(x.rd_ptr)
        self._write_wake = writer(x.wake_ptr)
        self._write_wake_req = writer(x.wake_req)
        self._wake_ack = x.wake_ack
        self._write_flush = writer(x.flush_ptr)
        # an earlier test in the same simulator may have used this transactor: carry on
        # from its pointers, and drop the beats that test left unplayed
        self._wake_req = reader(x.wake_req)()
        self._flushes = reader(x.flush_ptr)()
        self._pushed = reader(x.wr_ptr)()  # beats written, in all (from there)
        if self._read_rd() != self._pushed:
            self._flushes += 1
            self._write_flush(self._flushes % self._ptr_mod)
        self._starts: deque[int] = deque()  # first beat of each frame not yet taken
        self._staged: list = []
        self._packer = super()._run()
        self._packer.send(None)
        self._init_pack()

    async def _run(self) -> None:
        return  # the packer is stepped when a frame is sent

    async def _run_source(self) -> None:
        return  # the transactor drives the bus

    async def _get_frame(self):
        while self.queue.empty():
            await WAIT
        return self._get_frame_nowait()

    async def _drive(self, obj) -> None:
        self._staged.append(obj)

    # --- the queue, as the hard-IP model sees it ----------------------------------------
    def _taken(self) -> int:
        """Beats the transactor has put on the bus, in all."""
        unread = (self._pushed - self._read_rd()) % self._ptr_mod
        return self._pushed - unread

    def _waiting(self) -> int:
        """Frames the per-beat packer would not have taken yet. It runs two beats ahead
        of the bus: one staged for the next free edge and one built and waiting to be
        staged, so it takes a frame once every beat before the frame's last two has gone
        (the beat before its first is then staged)."""
        return self._drop_taken(self._taken())

    def _drop_taken(self, taken: int) -> int:
        """Drop the frames the packer has taken by ``taken`` beats on the bus: how many
        are left."""
        starts = self._starts
        while starts and starts[0] <= taken + 1:
            starts.popleft()
        return len(starts)

    def full(self) -> bool:
        limit = self.queue_occupancy_limit_frames
        return limit > 0 and self._waiting() > limit

    def _fits(self, beats: int) -> bool:
        return self._pushed + beats - self._taken() <= self._mem.depth

    async def _taken_reaches(self, count: int) -> None:
        """Wait until the transactor has put ``count`` beats on the bus, in all (one wake,
        on the edge it happens)."""
        while self._taken() < count:
            self._wake_req = (self._wake_req + 1) % 256
            self._write_wake(count % self._ptr_mod)
            self._write_wake_req(self._wake_req)
            await ValueChange(self._wake_ack)

    def _init_pack(self) -> None:
        """What :meth:`_pack_tlp` needs: below 512 bits with one segment (no straddling)
        each beat holds one frame's dwords and the sideband has one layout per stream;
        otherwise the frames go through cocotbext-pcie's own packer."""
        self._per_tlp = self.seg_count == 1 and self.width < 512
        self._cq = isinstance(self, _us.CqSource)
        self._be_offset = self.byte_en_offset if self._cq else 0
        lanes = self.seg_byte_lanes
        # the parity bits of the lanes a beat of m dwords leaves empty: all ones
        self._pad = [
            sum(0xF << (4 * k + self.parity_offset) for k in range(m, lanes))
            for m in range(lanes + 1)
        ]
        self._tx_msg = f"TX {'CQ' if self._cq else 'RC'} frame: %r"
        # RC on the compiled data path: the library packs a completion's words too
        self._rc_stream = None
        if self._per_tlp and not self._cq and getattr(self, "_words", None) is not None:
            self._rc_stream = self._layout()

    def _pack_tlp(self) -> list[int]:
        """cocotbext-pcie's RcSource/CqSource ``_run`` below 512 bits with one segment,
        over the next queued frame at once, as buffer words: each beat takes the next
        dwords into its lanes from 0 with their byte enables and parity (the empty
        lanes' parity all ones), the first beat is_sop (CQ: and first_be, last_be),
        every beat the discontinue bit, the last beat tlast (RC: and is_eop with its
        last lane). Checked beat for beat against the original
        (tests/unit/test_unit_xact_per_tlp.py)."""
        frame = self._get_frame_nowait()
        self.log.info(self._tx_msg, frame)
        data, byte_en, parity = frame.data, frame.byte_en, frame.parity
        n = len(data)
        lanes, cq = self.seg_byte_lanes, self._cq
        dw, uw, kw = self._dw, self._uw, self._kw
        bo, po, pad = self._be_offset, self.parity_offset, self._pad
        disc = 1 << self.discontinue_offset if frame.discontinue else 0
        tuser = disc | 1 << (40 if cq else 32)  # is_sop
        if cq:
            tuser |= (frame.first_be & 0xF) | (frame.last_be & 0xF) << 4
        words = []
        off = 0
        while True:
            m = min(lanes, n - off)
            tdata = 0
            for k in range(m):
                d = off + k
                tdata |= data[d] << 32 * k
                tuser |= byte_en[d] << (4 * k + bo) | parity[d] << (4 * k + po)
            tuser |= pad[m]
            off += m
            last = off >= n
            if last and not cq:
                tuser |= 1 << 34 | max(m - 1, 0) << 35  # is_eop, its last lane
            words.append(((last << kw | (1 << m) - 1) << uw | tuser) << dw | tdata)
            if last:
                return words
            tuser = disc

    def _pack(self, frame) -> list[int]:
        """The frame's beats, as buffer words."""
        super().send_nowait(frame)  # into the queue, counted as cocotbext-pcie does
        if self._per_tlp:
            return self._pack_tlp()
        self._packer.send(None)
        staged, self._staged = self._staged, []
        dw, uw, kw = self._dw, self._uw, self._kw
        return [
            ((int(b.tlast) << kw | int(b.tkeep)) << uw | int(b.tuser)) << dw | int(b.tdata)
            for b in staged
        ]

    def _push(self, words: list[int]) -> None:
        self._starting()
        mem, depth, pushed = self._mem, self._mem.depth, self._pushed
        if self._words is not None:
            self._words.write(pushed % depth, words)
        else:
            for word in words:
                mem.write(pushed % depth, word)
                pushed += 1
        self._pushed_more(len(words))

    def _starting(self) -> None:
        """A frame's words go in next: where it starts, if the packer would hold it (the
        frames it has taken dropped first, as :meth:`_waiting` would drop them, so that
        the list stays as long as the frames in the buffer with no occupancy limit)."""
        taken = self._taken()
        if self._pushed > taken + 1:
            self._drop_taken(taken)
            self._starts.append(self._pushed)

    def _pushed_more(self, count: int) -> None:
        """``count`` words went into the buffer: the write pointer past them."""
        self._pushed += count
        self._write_wr(self._pushed % self._ptr_mod)
        self.idle_event.clear()

    def packs(self, tlp) -> bool:
        """Whether :meth:`send_completion` may send completion ``tlp`` (an RC source on
        the compiled data path, the frames not logged)."""
        return (
            self._rc_stream is not None
            and not len(tlp.data) & 3
            and not self.log.isEnabledFor(logging.INFO)
        )

    async def _room_for_completion(self, ndw: int) -> None:
        """:meth:`send`'s waits for a completion of ``ndw`` payload dwords: the queue
        takes another frame, and the buffer has room for its beats (the descriptor's
        three dwords, then the payload)."""
        beats = -(-(3 + ndw) // self.seg_byte_lanes)
        while self.full():
            await self._taken_reaches(self._starts[0] - 1)
        if not self._fits(beats):
            await self._taken_reaches(self._pushed + beats - self._mem.depth)

    async def send_completion(self, tlp) -> None:
        """``send(tlp.pack_us_rc())`` with the words packed and written by the library
        (``tb/dp/xact.cpp``, ``dp_rc_push``): the same waits for the queue and the
        buffer, the same words."""
        ndw = len(tlp.data) >> 2
        await self._room_for_completion(ndw)
        fields = rc_fields(tlp)
        words = self._words
        self._starting()
        count = words.lib.dp_rc_push(
            words.words,
            self._pushed % words.depth,
            fields,
            bytes(tlp.data),
            ndw,
            self._rc_stream,
            words.stride,
        )
        self._pushed_more(count)

    async def send_queued(self, queue: Any) -> int:
        """:meth:`send_completion` of the next completion the library took for the card
        (``queue``: its ``dp_rcq``, ``tb/dp/xact.cpp``), packed and written by the
        library: the same waits for the queue and the buffer, the same words. Its data
        credits."""
        await self._room_for_completion(self._words.lib.dp_rcq_take(queue))
        return self._write_queued(queue)

    def _write_queued(self, queue: Any) -> int:
        """The completion taken from ``queue`` packed and written: its data credits."""
        words, dc = self._words, ctypes.c_uint64()
        lib = words.lib
        self._starting()
        count = lib.dp_rcq_push(
            queue,
            words.words,
            self._pushed % words.depth,
            self._rc_stream,
            words.stride,
            ctypes.byref(dc),
        )
        self._pushed_more(count)
        return dc.value

    async def send(self, frame) -> None:
        while self.full():  # until the first waiting frame is taken
            await self._taken_reaches(self._starts[0] - 1)
        beats = self._pack(frame)
        if not self._fits(len(beats)):
            await self._taken_reaches(self._pushed + len(beats) - self._mem.depth)
        self._push(beats)

    def send_nowait(self, frame) -> None:
        if self.full():
            raise QueueFull()
        beats = self._pack(frame)
        if not self._fits(len(beats)):
            raise QueueFull()
        self._push(beats)

    def idle(self) -> bool:
        return self._taken() == self._pushed

    def drop_partial(self) -> None:
        """The user side was reset: drop every beat not yet on the bus, the rest of a
        TLP in the middle of its beats included."""
        self.clear()

    def clear(self) -> None:
        """Drop every frame and beat not yet on the bus."""
        super().clear()
        self._starts.clear()
        self._flushes += 1
        self._write_flush(self._flushes % self._ptr_mod)


class _SinkGroup:
    """The sinks of one hard IP, drained together, in a fixed order (RQ, then CC), once
    per time step in which any of them ended a TLP: a change of a sink's TLP count
    (a simulator callback, no task) sets the drain for the ReadWrite phase of its time
    step, when every counter of that edge has changed. On the compiled data path the
    library may take the drain over (:meth:`to_library`, ``tb/dp/rqdrain.cpp``): it then
    reads RQ, sends the posted writes the model would send at once, and calls
    :meth:`after_library` for the rest."""

    ORDER = ("m_axis_rq", "m_axis_cc")

    def __init__(self) -> None:
        self.sinks: list[_TransactorSink] = []
        self._step = -1  # the time step a drain is set for
        # cocotb's ReadWrite trigger (one object) calls the drain directly, after the
        # writes cocotb deferred to that phase, and applies the drain's at once
        self._phase = ReadWrite()
        self._work = functools.partial(timeline().run, self.drain)
        self._watches: list[Watch] = []

    def add(self, sink: _TransactorSink, frames) -> None:
        self.sinks.append(sink)
        self.sinks.sort(key=lambda s: self.ORDER.index(s.bus._name))
        self._watches.append(Watch(frames, self._changed))

    def _changed(self) -> None:
        now = steps()
        if self._step != now:  # else another sink's count set this step's drain
            self._step = now
            self._phase._register(self._work)

    def drain(self) -> None:
        for sink in self.sinks:
            sink._drain()

    def to_library(self) -> RqSnk | None:
        """Hand the drain to the library: the RQ sink's state, with the signals the
        library watches and reads, where the group is an RQ sink the library unpacks for
        and a CC sink, and the simulator's signals are found (else None: the drain stays
        Python's). The caller starts the library's drain; Python's watches stop here."""
        if len(self.sinks) != 2 or not isinstance(self.sinks[0], TransactorRqSink):
            return None
        rq, cc = self.sinks
        if rq._unpacker_lib is None or not isinstance(cc, TransactorCcSink):
            return None
        lib = rq._words.lib
        signals = (
            rq._x.rd_ptr,
            rq._x.wr_ptr,
            rq._x.frames,
            cc._x.rd_ptr,
            cc._x.wr_ptr,
            cc._x.frames,
            rq._x.hold,
        )
        found = [lib.dp_vpi_signal(h._path.encode()) for h in signals]
        if not all(found):
            return None
        snk = rq._state()
        snk.rd_ptr, snk.wr_ptr, snk.frames, snk.cc_rd_ptr, snk.cc_wr_ptr, snk.cc_frames = found[:6]
        snk.hold = found[6]
        snk.depth, snk.ptr_mod, snk.stride = rq._mem.depth, rq._ptr_mod, rq._words.stride
        snk.words, snk.u = rq._words.words, rq._unpacker_lib.u
        for watch in self._watches:
            watch.stop()
        self._watches.clear()
        return snk

    def after_library(self, drain: int, left: int) -> None:
        """Python's part of a drain the library made (``drain``): the ``left`` frames of
        RQ it did not send, then CC, as :meth:`drain` takes them."""
        rq, cc = self.sinks
        if left:
            rq._take(rq._unpacker_lib.left(drain, left))
        cc._drain()


def _group(entity) -> _SinkGroup:
    """The sink group of the hard IP whose signals are under ``entity``, in the running
    test: a later test in the same simulator builds sinks of its own, whose beats the
    ended test's sinks must not drain."""
    line = timeline()
    if _GROUPS_TEST[0] is not line:
        _GROUPS.clear()
        _GROUPS_TEST[0] = line
    key = entity._path
    if key not in _GROUPS:
        _GROUPS[key] = _SinkGroup()
    return _GROUPS[key]


def sink_group(sink: Any) -> _SinkGroup | None:
    """The sink group a transactor sink of the running test is drained in (None: not a
    transactor sink)."""
    if not isinstance(sink, _TransactorSink):
        return None
    return _group(sink.bus._entity)


_GROUPS: dict[str, _SinkGroup] = {}
_GROUPS_TEST: list[Timeline | None] = [None]  # the test (its timeline) they belong to


class _TransactorSink(_TransactorStream):
    """The model side of a sink transactor; mixed in before the cocotbext-pcie sink
    class, whose ``_run`` unpacks beats into frames."""

    _DRIVEN = ("tready",)

    def _state(self) -> RqSnk:
        snk = self.__dict__.get("_snk")
        if snk is None:
            snk = self.__dict__["_snk"] = RqSnk()
        return snk

    @property
    def _read(self) -> int:
        """Beats read, in all (where the library's drain reads them too)."""
        return self._snk.read

    @_read.setter
    def _read(self, value: int) -> None:
        self._state().read = value

    # where the library's drain reads and writes them too
    _hold = _in_state("held", "The value last written to the transactor's hold.")
    queue_occupancy_limit_frames = _in_state(
        "limit", "cocotbext-pcie's queue occupancy limit in frames (none below 1)."
    )
    queue_occupancy_limit_bytes = _in_state(
        "limit_bytes", "cocotbext-pcie's queue occupancy limit in bytes (none below 1)."
    )

    @property
    def active(self) -> bool:  # (cocotbext-pcie's: a frame is open)
        lib = self.__dict__.get("_unpacker_lib")
        return lib.active if lib is not None else self.__dict__.get("_active", False)

    @active.setter
    def active(self, value: bool) -> None:
        self.__dict__["_active"] = value

    def _init(self) -> None:
        super()._init()
        x = self._x = self._attach()
        self._read_wr = reader(x.wr_ptr)
        self._write_rd = writer(x.rd_ptr)
        self._write_hold = writer(x.hold)
        # as for a source: carry on from the pointers of an earlier test's sink, dropping
        # the beats it did not read, and take the bus on with tready free
        self._read = self._read_wr()  # beats read, in all (from there)
        if reader(x.rd_ptr)() != self._read:
            self._write_rd(self._read % self._ptr_mod)
        self._hold = 0
        if reader(x.hold)():
            self._write_hold(0)
        self.sample_sync = Sync()
        self._unpacker = super()._run()
        self._unpacker.send(None)
        self._init_unpack()
        _group(self.bus._entity).add(self, x.frames)

    async def _run(self) -> None:
        return  # the unpacker is stepped as TLPs arrive

    async def _run_sink(self) -> None:
        return  # the transactor samples the bus

    async def _run_tvalid_monitor(self) -> None:
        return

    async def _run_tready_monitor(self) -> None:
        return

    def _init_unpack(self) -> None:
        """What :meth:`_unpack` needs: below 512 bits a beat holds one TLP's dwords at
        most (cocotbext-pcie's ``seg_count`` of 1) and the sideband has one layout; at
        512 bits (other tuser offsets, straddling) the beats go through cocotbext-pcie's
        own unpacker, one by one."""
        self._per_tlp = self.seg_count == 1 and self.width < 512
        self._rq = isinstance(self, _us.RqSink)
        self._seq_hi = self._rq and len(self.bus.tuser) == 62
        self._frame: _us.UsPcieFrame | None = _us.UsPcieFrame()
        # the dword lanes each tkeep value keeps, as (data shift, parity shift)
        self._lanes = [
            tuple(
                (32 * k, 4 * k + self.parity_offset)
                for k in range(self.seg_byte_lanes)
                if keep >> k & 1
            )
            for keep in range(1 << len(self.bus.tkeep))
        ]
        self._rx_msg = f"RX {'RQ' if self._rq else 'CC'} frame: %r"
        # on the compiled data path the library reads and unpacks the words
        self._unpacker_lib = None
        if self._per_tlp and getattr(self, "_words", None) is not None:
            self._unpacker_lib = Unpacker(self._layout(), self._rq, self._seq_hi)

    def _unpack(self, words: list[int]) -> None:
        """cocotbext-pcie's RqSink/CcSink ``_run`` below 512 bits, over a run of
        buffer words at once: a beat starts a frame when none is open or the open one has
        no dword yet; it keeps the dwords and parity of the lanes its tkeep marks; RQ's
        first beat gives first_be, last_be and seq_num; tlast hands the frame over.
        Checked beat for beat against the original (tests/unit/test_unit_xact_per_tlp.py)."""
        dw, uw, kw = self._dw, self._uw, self._kw
        dmask, umask, kmask = (1 << dw) - 1, (1 << uw) - 1, (1 << kw) - 1
        disc = 1 << self.discontinue_offset
        lanes, frame, rq = self._lanes, self._frame, self._rq
        for word in words:
            tdata = word & dmask
            word >>= dw
            tuser = word & umask
            word >>= uw
            tkeep = word & kmask
            tlast = word >> kw
            self.active = True
            if frame is None or not frame.data:
                frame = _us.UsPcieFrame()
                if rq:
                    frame.first_be = tuser & 0xF
                    frame.last_be = (tuser >> 4) & 0xF
                    frame.seq_num = (tuser >> 24) & 0xF
                    if self._seq_hi:
                        frame.seq_num |= ((tuser >> 60) & 0x3) << 4
            if tuser & disc:
                frame.discontinue = True
            data, parity = frame.data, frame.parity
            for ds, ps in lanes[tkeep]:
                data.append((tdata >> ds) & 0xFFFFFFFF)
                parity.append((tuser >> ps) & 0xF)
            if tlast:
                self.log.info(self._rx_msg, frame)
                self._sink_frame(frame)
                self.active = False
                frame = None
        self._frame = frame

    def _drain(self) -> None:
        """Hand every beat stored since the last drain to the unpacker."""
        end = self._read + (self._read_wr() - self._read) % self._ptr_mod
        if end == self._read:
            return
        mem, depth = self._mem, self._mem.depth
        lib = self._unpacker_lib
        if lib is not None:
            self._take(lib.run(self._words, self._read % depth, end - self._read))
            self._advance(end)
            return
        if self._words is not None:
            words = self._words.read(self._read % depth, end - self._read)
        else:
            words = [mem.read(i % depth) for i in range(self._read, end)]
        if self._per_tlp:
            self._unpack(words)
        else:
            dw, uw, kw = self._dw, self._uw, self._kw
            dmask, umask, kmask = (1 << dw) - 1, (1 << uw) - 1, (1 << kw) - 1
            unpacker = self._unpacker
            for word in words:
                beat = Beat()
                beat.tdata = word & dmask
                word >>= dw
                beat.tuser = word & umask
                word >>= uw
                beat.tkeep = word & kmask
                beat.tlast = word >> kw
                self.sample_obj = beat
                unpacker.send(None)
        self._advance(end)

    def _take(self, frames: list) -> None:
        """The frames the library unpacked, into the sink in order."""
        for frame in frames:
            self.log.info(self._rx_msg, frame)
            self._sink_frame(frame)
        self._update_hold()

    def _advance(self, end: int) -> None:
        """The words up to ``end`` are read: the read pointer past them."""
        self._read = end
        self._write_rd(end % self._ptr_mod)
        self._update_hold()

    def drop_partial(self) -> None:
        """The link went down (or the user side was reset) with a TLP taken in part:
        forget its beats, those still in the transactor's buffer included, so nothing
        from before the reset is joined to what the RTL sends after it."""
        self._read = self._read_wr()
        self._write_rd(self._read % self._ptr_mod)
        self._frame = None
        if self._unpacker_lib is not None:
            self._unpacker_lib.reset()
        self._unpacker = super()._run()
        self._unpacker.send(None)
        self.active = False

    def _update_hold(self) -> None:
        hold = int(self.full())
        if hold != self._hold:
            self._write_hold(hold)
            self._hold = hold

    def _dequeue(self, frame) -> None:
        super()._dequeue(frame)
        self._update_hold()


class TransactorRqSink(_TransactorSink, _us.RqSink):
    """RQ (requests from the RTL), read once per TLP from the transactor."""


class TransactorCcSink(_TransactorSink, _us.CcSink):
    """CC (completions from the RTL), read once per TLP from the transactor."""


class _Starts:
    """The first beats of the frames an RC source wrote while the per-beat packer would
    hold them (``_TransactorSource._starts``, a deque there) as a ring in the source's
    :class:`RcSrc`, which the library's RC loop reads and moves too."""

    __slots__ = ("_mask", "_ring", "_s")

    def __init__(self, rcs: RcSrc, depth: int) -> None:
        cap = 1 << (depth + 2).bit_length()  # (at most a frame per beat in the buffer)
        self._s, self._ring, self._mask = rcs, (ctypes.c_uint64 * cap)(), cap - 1
        rcs.starts = ctypes.addressof(self._ring)
        rcs.starts_cap, rcs.starts_head, rcs.starts_len = cap, 0, 0

    def __len__(self) -> int:
        return self._s.starts_len

    def __getitem__(self, index: int) -> int:
        s = self._s
        if not 0 <= index < s.starts_len:
            raise IndexError(index)
        return self._ring[(s.starts_head + index) & self._mask]

    def popleft(self) -> int:
        first = self[0]
        s = self._s
        s.starts_head = (s.starts_head + 1) & self._mask
        s.starts_len -= 1
        return first

    def append(self, start: int) -> None:
        s = self._s
        if s.starts_len > self._mask:
            raise OverflowError("more frames waiting than the buffer holds beats")
        self._ring[(s.starts_head + s.starts_len) & self._mask] = start
        s.starts_len += 1

    def clear(self) -> None:
        self._s.starts_head = self._s.starts_len = 0


class TransactorRcSource(_TransactorSource, _us.RcSource):
    """RC (completions to the RTL), written once per TLP into the transactor. Its state
    is where the library's RC loop (``tb/dp/rcloop.cpp``) can write completions into it
    too, as :meth:`send_queued` does (:class:`RcSrc`, :attr:`rc_state` its address on
    the compiled data path): the beats written, the frames the packer would hold, the
    wake requests made, the queue occupancy limit, whether it is idle by cocotbext-pcie's
    event. ``on_clear`` (None: nothing) is called when it drops what it holds."""

    on_clear: Callable[[], None] | None = None

    def _state(self) -> RcSrc:
        rcs = self.__dict__.get("_rcs")
        if rcs is None:
            rcs = self.__dict__["_rcs"] = RcSrc()
        return rcs

    def _init(self) -> None:
        rcs = self._state()
        super()._init()
        self._starts = _Starts(rcs, self._mem.depth)  # type: ignore[assignment]
        rcs.idle = self.idle_event.is_set()
        rcs.trust = writes_trusted()
        self.rc_state: int | None = None  # (where the library writes here too)
        words, x = self._words, self._x
        if self._rc_stream is None or words is None:
            return
        signals = (x.rd_ptr, x.wr_ptr, x.wake_ptr, x.wake_req, x.wake_ack)
        found = [words.lib.dp_vpi_signal(h._path.encode()) for h in signals]
        if not all(found):
            return
        rcs.rd_ptr, rcs.wr_ptr, rcs.wake_ptr, rcs.wake_req_sig, rcs.wake_ack = found
        rcs.depth, rcs.ptr_mod = self._mem.depth, self._ptr_mod
        rcs.lanes, rcs.stride = self.seg_byte_lanes, words.stride
        rcs.words, rcs.stream = words.words, ctypes.addressof(self._rc_stream)
        self.rc_state = ctypes.addressof(rcs)

    @property
    def _pushed(self) -> int:  # type: ignore[override]
        """Beats written, in all."""
        return self._rcs.pushed

    @_pushed.setter
    def _pushed(self, value: int) -> None:
        self._state().pushed = value

    @property
    def _wake_req(self) -> int:  # type: ignore[override]
        """The wake requests made (mod 256)."""
        return self._rcs.wake_req

    @_wake_req.setter
    def _wake_req(self, value: int) -> None:
        self._state().wake_req = value

    queue_occupancy_limit_frames = _in_state(
        "limit", "cocotbext-pcie's queue occupancy limit in frames (none below 1)."
    )

    def _pushed_more(self, count: int) -> None:
        super()._pushed_more(count)
        self._rcs.idle = 0

    def clear(self) -> None:
        super().clear()
        self._state().idle = 1
        if self.on_clear is not None:
            self.on_clear()

    async def send_adopted(self, queue: Any, point: int, phase: int, ndw: int) -> int:
        """:meth:`send_queued` of the completion the library's RC loop holds, from the
        wait it was in (for ``point`` beats taken; ``phase`` 1: while the queue was full,
        2: for room in the buffer), handed over with it: its data credits."""
        await ValueChange(self._wake_ack)
        await self._taken_reaches(point)
        if phase == 1:
            await self._room_for_completion(ndw)
        return self._write_queued(queue)


class TransactorCqSource(_TransactorSource, _us.CqSource):
    """CQ (requests to the RTL), written once per TLP into the transactor."""


TRANSACTOR_INTERFACES = {
    "RqSink": TransactorRqSink,
    "CcSink": TransactorCcSink,
    "RcSource": TransactorRcSource,
    "CqSource": TransactorCqSource,
}
