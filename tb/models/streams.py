"""The hard IP's streams driven from Python a beat at a time, for a build without the
RTL-side transactors (the beat-level model, ``beats``): the UltraScale+ model's
CQ/CC/RQ/RC sources and sinks (``cocotbext.pcie.xilinx.us.interface``) each run one
coroutine per clock edge, and only while they have a beat to move or the RTL holds
tvalid. The exact ones run two per
interface and beat: one on the clock and one that packs or unpacks the beat, handing it
over through events. Here that second one, cocotbext-pcie's own frame packer or unpacker
(its ``_run``, straddle included), is stepped by hand from the clock coroutine as a plain
generator, so each beat is built and parsed by the same code at the same edge; a signal
is written only when its value changes (the exact source writes all five every beat).
"""

from __future__ import annotations

from cocotb.triggers import RisingEdge
from cocotbext.pcie.xilinx.us import interface as _us

from .signals import WAIT, Beat, Sync, never, reader, writer


class _BeatSource:
    """The clock side of a beat source; mixed in before the cocotbext-pcie source class,
    whose ``_run`` packs frames into beats."""

    def _init(self) -> None:
        super()._init()
        # what each signal holds (the base class set them all to 0)
        self._written = dict.fromkeys(("tdata", "tkeep", "tlast", "tuser"), 0)
        self._writers = {name: writer(getattr(self.bus, name)) for name in self._written}
        self._tvalid = 0
        self._write_tvalid = writer(self.bus.tvalid)
        self._packer = super()._run()  # stepped by hand; see _step
        self._step()

    async def _run(self) -> None:
        return  # the packer is stepped by the clock coroutine instead

    def _step(self) -> None:
        self._packer.send(None)

    def drop_partial(self) -> None:
        """The user side was reset: drop the frames not yet sent and the rest of the one
        in the middle of its beats."""
        self.clear()
        self.drive_obj = None
        self._set_tvalid(0)
        self._packer = super()._run()
        self._step()

    async def _get_frame(self):
        while self.queue.empty():
            await WAIT
        return self._get_frame_nowait()

    async def _drive(self, obj) -> None:
        while self.drive_obj is not None:
            await WAIT
        self.drive_obj = obj
        self.bus_active_event.set()

    async def send(self, frame) -> None:
        await super().send(frame)
        self._step()

    def send_nowait(self, frame) -> None:
        super().send_nowait(frame)
        self._step()

    def _write(self, obj) -> None:
        writers, written = self._writers, self._written
        for name in ("tdata", "tkeep", "tlast", "tuser"):
            value = int(getattr(obj, name))
            if written[name] != value:
                writers[name](value)
                written[name] = value

    def _set_tvalid(self, value: int) -> None:
        if self._tvalid != value:
            self._write_tvalid(value)
            self._tvalid = value

    async def _run_source(self) -> None:
        self.active = False
        edge = RisingEdge(self.clock)
        tready = reader(self.bus.tready)
        reset = never if self.reset is None else reader(self.reset)
        while True:
            await edge
            if reset():
                self._set_tvalid(0)
                continue
            if self._tvalid and not tready():
                continue  # the beat on the bus stays until the RTL takes it
            if self.drive_obj and not self.pause:
                self._write(self.drive_obj)
                self.drive_obj = None
                self._set_tvalid(1)
                self.active = True
                self._step()  # the packer stages the next beat now, as drive_sync does
            else:
                self._set_tvalid(0)
                self.active = bool(self.drive_obj)
                if not self.drive_obj:
                    self.idle_event.set()
                    self.bus_active_event.clear()
                    await self.bus_active_event.wait()


class _BeatSink:
    """The clock side of a beat sink; mixed in before the cocotbext-pcie sink class,
    whose ``_run`` unpacks beats into frames."""

    def _init(self) -> None:
        super()._init()
        self.sample_sync = Sync()
        self._tready = 0
        self._write_tready = writer(self.bus.tready)
        self._unpacker = super()._run()
        self._unpacker.send(None)

    async def _run(self) -> None:
        return  # the unpacker is stepped by the clock coroutine instead

    def drop_partial(self) -> None:
        """The link went down (or the user side was reset) with a TLP taken in part:
        forget its beats, so nothing from before the reset is joined to what the RTL
        sends after it."""
        self.sample_obj = None
        self._unpacker = super()._run()
        self._unpacker.send(None)
        self.active = False

    def _set_tready(self, value: int) -> None:
        if self._tready != value:
            self._write_tready(value)
            self._tready = value

    async def _run_sink(self) -> None:
        edge = RisingEdge(self.clock)
        wake = self.wake_event.wait()
        bus = self.bus
        valid = reader(bus.tvalid)
        reset = never if self.reset is None else reader(self.reset)
        # X or Z in a beat fails here, as in the exact unpacker
        tdata, tkeep = reader(bus.tdata, strict=True), reader(bus.tkeep, strict=True)
        tlast, tuser = reader(bus.tlast, strict=True), reader(bus.tuser, strict=True)
        while True:
            pause_sample = bool(self.pause)
            await edge
            tvalid = valid()
            if reset():
                self._set_tready(0)
                continue
            beat = None
            if self._tready and tvalid:
                beat = Beat()
                beat.tdata, beat.tkeep, beat.tlast, beat.tuser = tdata(), tkeep(), tlast(), tuser()
            paused = self.full() or pause_sample  # before this beat's frame is queued
            self._set_tready(int(not paused))
            if beat is not None:
                self.sample_obj = beat
                self._unpacker.send(None)
            if (not tvalid or paused) and pause_sample == bool(self.pause):
                self.wake_event.clear()
                await wake


class BeatRqSink(_BeatSink, _us.RqSink):
    """RQ (requests from the RTL) with one coroutine per clock edge."""


class BeatCcSink(_BeatSink, _us.CcSink):
    """CC (completions from the RTL) with one coroutine per clock edge."""


class BeatRcSource(_BeatSource, _us.RcSource):
    """RC (completions to the RTL) with one coroutine per clock edge."""


class BeatCqSource(_BeatSource, _us.CqSource):
    """CQ (requests to the RTL) with one coroutine per clock edge."""


BEAT_INTERFACES = {
    "RqSink": BeatRqSink,
    "CcSink": BeatCcSink,
    "RcSource": BeatRcSource,
    "CqSource": BeatCqSource,
}
