"""The guest bridge inside the simulation: a guest's PCI bus (virt-pci over vhost-user)
attached to a function of the simulated fabric, with the guest's RAM as the root
complex's host memory. More devices can sit on the same bus, each on a socket of its
own (:meth:`GuestBridge.add_device`; the GPU model: :meth:`GuestBridge.add_gpu`).

- Config and BAR accesses the guest sends are done in order, each as the fabric does it
  (:class:`tb.guest.card.FabricFunction`); a read is answered before the guest's kick is
  acknowledged, so the guest waits for it however long the simulation takes; writes are
  posted (acknowledged at once, done in order).
- The guest's memory file is mapped once and registered in the root complex's memory
  space at the guest's physical addresses: the card's DMA reads and writes it in place.
- MSI and MSI-X writes to the guest's MSI address become ``irq`` queue messages (queued
  while the guest has no buffer posted). The device's legacy interrupt line (its INTx at
  the root complex, :meth:`GuestBridge.attach_intx`) is a level: an ``INT`` message when
  it rises, and another when the guest has handled one (its interrupt buffer came back)
  and the line is still up ``INTX_RESAMPLE_NS`` later, as a level-triggered interrupt
  controller fires again after its end-of-interrupt.
- The guest is a process watched on every poll: one that dies ends the run with its
  console's last lines (:class:`tb.guest.uml.GuestError`); every wait has a bound.

Time (``GuestOptions.time``): free-running, the simulation polls the guest's socket every
``poll_ns`` of simulated time while the guest runs in wall time. Shared, the bridge is
the guest's calendar (:class:`tb.guest.timetravel.Calendar`): while the guest runs the
simulation stands still, except to answer the guest's accesses, which take no guest
time; while the guest waits, simulated time passes as guest time until its timer or the
card's interrupt, or, once the fabric has been quiet for ``idle_ns``, the guest's clock
jumps to its timer. The fabric is not quiet while a write the guest posted is on its way
to the device (until the device's link carries it), for ``idle_ns`` after any access of
the guest's, nor while the device says it works on what the guest started (``busy``).
Interrupts reach a shared-time guest only while it waits, one notification at a time, so
that every run of a test repeats the last one exactly.
Every access, interrupt and grant is written to ``guest-journal.log`` in the run
directory with its simulated time.
"""

from __future__ import annotations

import collections
import logging
import os
import select
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cocotb
from cocotb.triggers import Timer
from cocotb.utils import get_sim_time
from cocotbext.axi.address_space import Region

from cuda_model import CudaRuntime

from ..env.link import DOWN, MEM_WRITES
from ..env.platform import CocotbCompletion
from .card import FabricFunction
from .errors import GuestProtocolError
from .gpu import GuestGpu
from .timetravel import Calendar, TimeTravelError
from .uml import GuestError, GuestOptions, UmlGuest
from .vhost_user import GuestMemory, Kick, VhostUserBackend, VhostUserError
from .virtpci import UML_MSI_ADDRESS, Op, PciRequest, execute, int_message, msi_message, parse

log = logging.getLogger("cocotb.guest")

CMD_QUEUE, IRQ_QUEUE = 0, 1
# the legacy interrupt: how long after the guest handled an INT message the line is
# looked at again (the device's Deassert is a message on its way after the handler's
# last access)
INTX_RESAMPLE_NS = 1000
# how long a guest that closed its socket may take to exit (wall time)
GUEST_EXIT_S = 10.0
# under shared time: how long a running guest may go without a message (wall time), and
# how many used command buffers the bridge lets build up before it notifies the guest
RUNNING_SILENCE_S = 120.0
CMD_CALL_BACKLOG = 128
# a posted write of the guest's that has not reached the device in this long (simulated)
# is taken as lost by the fabric: it no longer holds the guest's idle time back
POSTED_LOST_NS = 100_000


class GuestRam(Region):
    """One region of the guest's RAM in the root complex's memory space."""

    def __init__(self, mem: GuestMemory, base: int, size: int) -> None:
        super().__init__(size)
        self.mem = mem
        self.guest_base = base

    async def _read(self, address, length, **kwargs):
        return self.mem.read(self.guest_base + address, length)

    async def _write(self, address, data, **kwargs):
        self.mem.write(self.guest_base + address, bytes(data))


class MsiDoorbell(Region):
    """The guest's MSI address: a 4-byte write here is an interrupt with that data."""

    def __init__(self, bridge: GuestBridge) -> None:
        super().__init__(16)
        self.bridge = bridge

    async def _read(self, address, length, **kwargs):
        return bytes(length)

    async def _write(self, address, data, **kwargs):
        if address != 0 or len(data) not in (2, 4):
            log.warning("guest: write of %d bytes at MSI address + %d ignored", len(data), address)
            return
        self.bridge.interrupt(int.from_bytes(data, "little"))


class Slot:
    """One device on the guest's bus: its name, its vhost-user backend (a socket of its
    own), the device (:class:`tb.guest.virtpci.GuestPciDevice`), its MSIs waiting for the
    guest (their data), the kicks polled and not yet served, and the command buffers it
    returned without notifying a shared-time guest."""

    def __init__(self, name: str, backend: VhostUserBackend, device) -> None:
        self.name = name
        self.backend = backend
        self.device = device
        self.pending_irqs: collections.deque[int] = collections.deque()
        self.kicks: list[Kick] = []
        self.unnotified = 0
        self.closed = False  # the guest closed the socket (it powers off)


class GuestBridge:
    """The bridge between a guest (``guest``, started by :meth:`start`) and ``device``, a
    function of ``rc``'s fabric. ``poll_ns`` is how often (in simulated time) a
    free-running bridge looks for the guest's requests; ``name_host(base, size, name)``
    (the TB's) names the guest's RAM and MSI address for the TLP trace. ``stats`` counts
    what crossed;
    ``journal`` holds (simulated ns, what) of every access, interrupt and grant.
    :meth:`note_activity` is called on every TLP of the fabric (shared time's idle
    detection; the caller taps the links); ``device_link`` names the tapped link the
    device hangs from, where the guest's posted writes arrive, and ``busy()`` says whether
    the device still works on what the guest started (a DMA channel running)."""

    def __init__(
        self,
        rc,
        device: FabricFunction,
        options: GuestOptions,
        run_dir: Path,
        poll_ns: int = 200,
        name_host: Callable[[int, int, str], None] | None = None,
        device_link: str | None = None,
        busy: Callable[[], bool] | None = None,
    ) -> None:
        self.rc = rc
        self.name_host = name_host
        self.device = device
        self.options = options
        self.run_dir = Path(run_dir)
        self.poll_ns = poll_ns
        self.shared = options.time == "shared"
        self.private = Path(tempfile.mkdtemp(prefix="pevb-guest-"))
        os.chmod(self.private, 0o700)
        self.socket = self.private / "virt-pci.sock"
        self.backend = VhostUserBackend(str(self.socket), queues=2)
        self.calendar: Calendar | None = None
        time_socket = None
        if self.shared:
            time_socket = self.private / "time.sock"
            self.calendar = Calendar(str(time_socket))
            self.calendar.clock = self._guest_clock
        self.guest = UmlGuest(
            options, self.private, self.run_dir / "guest-console.log", self.socket, time_socket
        )
        # the card first (slot 0: 00:00.0 on the guest's bus), then add_device()'s
        self.slots = [Slot(getattr(device, "name", "card"), self.backend, device)]
        self.pending_irqs = self.slots[0].pending_irqs
        # the legacy interrupt: its pin (0: none attached), the line's level, an INT message
        # owed, one delivered and not yet handled, when to look at the line again
        self.intx_pin = 0
        self._int_level = False
        self._int_owed = False
        self._int_in_service = False
        self._resample_at: int | None = None
        self.stats = collections.Counter()
        self.journal: list[tuple[int, str]] = []
        self._ram_regions: list[tuple[int, int, GuestRam]] = []
        self._ram_generation = 0  # the memory table the root complex holds (0: none)
        self._doorbell: MsiDoorbell | None = None
        self._stopped = False
        self._offset = 0  # simulated ns minus the guest's ns (shared time)
        self._last_activity: int | None = None  # simulated ns of the fabric's last TLP
        self.device_link = device_link
        self.busy = busy
        # the guest's posted writes on their way (shared time): (the fabric address of the
        # write's last byte, simulated ns it was sent), oldest first (they stay in order)
        self._posted: collections.deque[tuple[int, int]] = collections.deque()

    @classmethod
    def on_tb(cls, tb, device: FabricFunction, options: GuestOptions, run_dir: Path) -> GuestBridge:
        """A bridge for ``device`` on a TB's fabric (:class:`tb.env.system.TB`), wired as
        the TB offers: its root complex, its names for the trace, its card's link (where
        the guest's posted writes arrive) and engine (``engine_busy``), its link taps
        (shared time's idle detection)."""
        bridge = cls(
            tb.rc,
            device,
            options,
            run_dir,
            name_host=tb.name_host,
            device_link="fpga",
            busy=tb.engine_busy,
        )
        tb.links.add_observer(bridge.note_activity, passive=True)
        pin = tb.dev.functions[0].interrupt_pin
        if pin and device.pci is tb.pci:
            bridge.attach_intx(tb.intx, tb.intx_line, pin)
        return bridge

    def attach_intx(self, fabric, line, pin: int) -> None:
        """Carry the device's legacy interrupt: ``line`` of ``fabric`` (a
        :class:`tb.models.intx.IntxFabric`), which the device's Interrupt Pin ``pin``
        (1-4) reaches."""
        self.intx_pin = pin
        self._int_level = fabric.level(line)
        fabric.watch(line, self.intx_changed)

    def add_gpu(self, tb) -> GuestGpu:
        """Put the TB's GPU on the guest's bus (:class:`tb.guest.gpu.GuestGpu`, slot 1):
        each context its commands create is a :class:`CudaRuntime` on ``tb.gpu``, its pins
        are ``tb.p2p``'s (bus addresses of the GPU's BAR1 where enumeration placed it in
        the fabric, which the card's TLPs reach)."""
        gpu = GuestGpu(
            lambda: CudaRuntime(tb.gpu),
            tb.gpu.vram.size,
            lambda: (tb.gpu_ep.bar1_bus_address(), tb.gpu.bar1_size),
            cocotb.start_soon,
            p2p=tb.p2p,
            completion=CocotbCompletion,
        )
        self.add_device(gpu, "gpu")
        gpu.note = self._note  # each command in the journal
        # and in the TLP trace, named by the CUDA call it serves, once a trace is on
        gpu.clock = lambda: int(get_sim_time("ns"))
        gpu.on_command = lambda rec: tb.trace.event(rec) if tb.trace is not None else None
        return gpu

    def add_device(self, device, name: str) -> Slot:
        """Put ``device`` on the guest's bus too (before :meth:`start`), at the next slot,
        with a socket of its own. A device with an ``msi`` attribute sends its MSIs through
        it (its data, as UML programmed it); one with ``mem`` gets the guest's RAM; one
        with a true ``busy`` keeps shared time from jumping."""
        if self.guest.proc is not None:
            raise GuestError("add_device() after the guest started")
        sock = self.private / f"virt-pci-{len(self.slots)}.sock"
        slot = Slot(name, VhostUserBackend(str(sock), queues=2), device)
        self.slots.append(slot)
        self.guest.extra_sockets.append(sock)
        if hasattr(device, "msi"):
            device.msi = lambda data: self.interrupt(data, slot)
        if hasattr(device, "mem"):
            device.mem = slot.backend.mem
        return slot

    def intx_changed(self, asserted: bool) -> None:
        """The device's INTx line rose or fell: a rise sends an ``INT`` message (under
        shared time, once the guest waits), unless one is still owed or in service."""
        self._int_level = asserted
        self.stats["intx_assert" if asserted else "intx_deassert"] += 1
        self._note(f"INTx {'assert' if asserted else 'deassert'}")
        if asserted and not (self._int_owed or self._int_in_service):
            self._int_owed = True
            if not self.shared:
                self._deliver_irqs()

    def _resample(self) -> None:
        """After the guest handled an INT: a line still asserted fires again."""
        if self._resample_at is None or int(get_sim_time("ns")) < self._resample_at:
            return
        self._resample_at = None
        if self._int_level and not self._int_owed:
            self._note("INTx still asserted")
            self._int_owed = True
            if not self.shared:
                self._deliver_irqs()

    @property
    def irqs_pending(self) -> bool:
        """An interrupt waits to go to the guest (an MSI, or an INT message)."""
        return any(s.pending_irqs for s in self.slots) or self._int_owed

    def note_activity(
        self, link: str | None = None, direction: str | None = None, tlp=None
    ) -> None:
        """A TLP crossed the fabric now (``tlp`` on ``link``, going ``direction``)."""
        self._last_activity = int(get_sim_time("ns"))
        posted = self._posted
        if posted and link == self.device_link and direction == DOWN:
            if tlp.fmt_type in MEM_WRITES:
                start = tlp.address & ~3
                while posted and start <= posted[0][0] < start + 4 * max(tlp.length, 1):
                    posted.popleft()

    def fabric_quiet(self) -> bool:
        """Whether nothing the guest started is under way: no posted write of its on the
        way, no TLP for ``idle_ns``, the device not busy."""
        now = int(get_sim_time("ns"))
        while self._posted and now - self._posted[0][1] > POSTED_LOST_NS:
            addr, sent = self._posted.popleft()
            log.warning("guest: a posted write to 0x%x sent at %d ns never arrived", addr, sent)
        if self._posted or self._resample_at is not None:
            return False
        if any(getattr(s.device, "busy", False) for s in self.slots[1:]):
            return False
        last = self._last_activity
        if last is not None and now - last < self.options.idle_ns:
            return False
        return not (self.busy is not None and self.busy())

    def _note(self, what: str) -> None:
        self.journal.append((int(get_sim_time("ns")), what))

    def _guest_clock(self) -> int:
        """The guest's time now, as the simulation sees it (shared time)."""
        return int(get_sim_time("ns")) - self._offset

    # --- the root complex's memory --------------------------------------------------
    def _attach_memory(self) -> None:
        """Make the guest's RAM the root complex's host memory (when the guest shares it,
        and again for each new table it sends): the pool the root complex allocates from
        goes, the guest's regions and its MSI address come in, the last table's regions
        go. RAM that would overlap the fabric's own ranges (the MSI address, the BAR
        windows) is an error."""
        space = self.rc.mem_address_space
        if self._doorbell is None:
            space.regions = [r for r in space.regions if r[3] is not self.rc.mem_pool]
            self._doorbell = MsiDoorbell(self)
            space.register_region(self._doorbell, UML_MSI_ADDRESS)
            if self.name_host is not None:
                self.name_host(UML_MSI_ADDRESS, self._doorbell.size, "guest MSI")
        old = {id(region) for _, _, region in self._ram_regions}
        space.regions = [r for r in space.regions if id(r[3]) not in old]
        self._ram_regions.clear()
        self._ram_generation = self.backend.mem.generation
        for base, size in self.backend.regions():
            clash = space.find_regions(base, size)
            if clash:
                b, n, _, r = clash[0]
                raise GuestError(
                    f"guest RAM 0x{base:x}-0x{base + size - 1:x} overlaps the fabric's"
                    f" {type(r).__name__} at 0x{b:x}-0x{b + n - 1:x} (a smaller mem_mb keeps"
                    " the guest's RAM below it)"
                )
            region = GuestRam(self.backend.mem, base, size)
            space.register_region(region, base)
            self._ram_regions.append((base, size, region))
            if self.name_host is not None:
                self.name_host(base, size, "guest RAM")
            log.info("guest: RAM 0x%x-0x%x is the root complex's memory", base, base + size - 1)

    # --- interrupts -------------------------------------------------------------------
    def interrupt(self, data: int, slot: Slot | None = None) -> None:
        """An MSI or MSI-X write of ``data`` from the fabric (or a message of another
        device's, ``slot``): to the guest (under shared time, once it waits)."""
        slot = slot or self.slots[0]
        key = "msi" if slot is self.slots[0] else f"msi {slot.name}"
        self.stats[key] += 1
        self._note(f"MSI 0x{data:x}" + ("" if slot is self.slots[0] else f" {slot.name}"))
        slot.pending_irqs.append(data)
        if not self.shared:
            self._deliver_irqs(slot)

    def _deliver_irqs(self, slot: Slot | None = None) -> None:
        """Put the pending interrupts in the guest's buffers and notify it once (under
        shared time, and wait until it has taken the notification)."""
        if slot is None:
            for each in self.slots:
                self._deliver_irqs(each)
            return
        card = slot is self.slots[0]
        backend, pending = slot.backend, slot.pending_irqs
        q = backend.queues[IRQ_QUEUE]
        delivered = False
        while (pending or (card and self._int_owed)) and backend.ready:
            chain = self._guarded(q.pop, backend.mem)
            if chain is None:
                break
            if pending:
                message = msi_message(pending[0])
            else:
                message = int_message(self.intx_pin)
            if chain.room < len(message):
                raise GuestError(
                    f"guest bridge: an interrupt buffer (head {chain.head}) has room for"
                    f" {chain.room} bytes; an interrupt takes {len(message)}"
                    f" ({len(pending) + self._int_owed} pending)"
                )
            if pending:
                pending.popleft()
            else:
                self._int_owed = False
                self._int_in_service = True
                self.stats["int"] += 1
                self._note(f"INT {self.intx_pin}")
            self._guarded(q.push, backend.mem, chain, message)
            delivered = True
        if delivered:
            self._call(IRQ_QUEUE, slot)

    def _call(self, queue: int, slot: Slot | None = None) -> None:
        """Notify the guest of used buffers on ``queue``. Under shared time the guest asks
        the calendar's time (and to run then) as it takes a notification; the simulation
        stands still until it has answered, so that the notification lands at the same
        point of every run."""
        backend = (slot or self.slots[0]).backend
        if not self.shared:
            self._guarded(backend.call, queue)
            return
        if self._guarded(backend.call, queue, need_reply=True):
            assert self.calendar is not None
            self._wait_calendar(backend.call_answered, "to take an interrupt")

    # --- requests ---------------------------------------------------------------------
    async def _serve_cmd(self, kick: Kick, slot: Slot | None = None) -> None:
        slot = slot or self.slots[0]
        backend, device = slot.backend, slot.device
        q = backend.queues[CMD_QUEUE]
        mem = backend.mem
        chains = []
        while (chain := self._guarded(q.pop, mem)) is not None:
            chains.append(chain)
        requests: list[PciRequest] = []
        for chain in chains:
            req = self._guarded(parse, chain.data)
            # a read is refused before the device sees it (reading a FIFO register pops it)
            answer = req.size if req.op in (Op.CFG_READ, Op.MMIO_READ) else 0
            if answer > chain.room:
                raise GuestError(
                    f"guest bridge: {req.describe()} with room for {chain.room} bytes"
                    " of answer: not performed"
                )
            requests.append(req)
        reads = any(not r.posted for r in requests)
        if not reads:  # posted writes only: the guest goes on at once
            backend.ack_kick(kick)
        card = slot is self.slots[0]
        for chain, req in zip(chains, requests, strict=True):
            self.stats[req.op.name if card else f"{req.op.name} {slot.name}"] += 1
            data = f" 0x{req.data.hex()}" if req.data and req.size <= 8 else ""
            self._note(f"{req.describe()}{data}" + ("" if card else f" {slot.name}"))
            self.note_activity()
            if card and self.shared and req.posted and req.op != Op.CFG_WRITE and self.device_link:
                addr = device.fabric_address(req.bar, req.addr, req.size)
                if addr is not None:
                    self._posted.append((addr + req.size - 1, int(get_sim_time("ns"))))
            reply = await execute(device, req)
            self._guarded(q.push, mem, chain, reply)
        slot.unnotified += len(chains)
        # posted buffers come back to the guest with its next read; a shared-time guest
        # is notified of a long run of writes only once it waits (an interrupt)
        if chains and not self.shared:
            self._guarded(backend.call, CMD_QUEUE)
            slot.unnotified = 0
        if reads:
            backend.ack_kick(kick)

    async def _serve(self, kicks: list[Kick]) -> None:
        """Serve the card's ``kicks``, then what the other devices' sockets brought."""
        self.slots[0].kicks += kicks
        for slot in self.slots:
            while slot.kicks:
                await self._serve_kick(slot, slot.kicks.pop(0))

    async def _serve_kick(self, slot: Slot, kick: Kick) -> None:
        if kick.queue == CMD_QUEUE:
            await self._serve_cmd(kick, slot)
            return
        # the guest posted interrupt buffers
        slot.backend.ack_kick(kick)
        if slot is self.slots[0] and self._int_in_service:
            # it recycles a buffer once its handlers ran: the INT was handled
            self._int_in_service = False
            self._resample_at = int(get_sim_time("ns")) + INTX_RESAMPLE_NS
        if not self.shared:
            self._deliver_irqs(slot)

    def _poll_guest(self) -> list[Kick]:
        """What the guest sent on the card's socket (and its memory, once shared); what it
        sent the other devices waits in their slots for :meth:`_serve`."""
        kicks = self._poll_backend(self.slots[0])
        for slot in self.slots[1:]:
            slot.kicks += self._poll_backend(slot)
        if self.backend.mem.regions and self._ram_generation != self.backend.mem.generation:
            self._attach_memory()
        return kicks

    def _poll_backend(self, slot: Slot) -> list[Kick]:
        if slot.closed:
            return []
        try:
            return slot.backend.poll()
        except VhostUserError as e:
            if not e.closed:
                raise GuestError(f"guest bridge: {e}") from e
            # a guest that powers off closes its devices' sockets one by one (each device
            # it removes asks for answers first) and then exits
            slot.closed = True
            if all(s.closed for s in self.slots) and self.guest.wait(GUEST_EXIT_S) is None:
                raise GuestError(f"guest bridge: {e}") from e
            return []
        except GuestProtocolError as e:
            raise GuestError(f"guest bridge: {e}") from e

    @staticmethod
    def _guarded(fn, *args, **kwargs):
        """``fn(*args)``, with what the guest's side got wrong (a ring, a message, its
        memory) ending the run as a :class:`GuestError` that names it."""
        try:
            return fn(*args, **kwargs)
        except GuestProtocolError as e:
            raise GuestError(f"guest bridge: {e}") from e

    def _poll_calendar(self) -> None:
        assert self.calendar is not None
        try:
            self.calendar.poll()
        except TimeTravelError as e:
            if not (e.closed and self.guest.wait(GUEST_EXIT_S) is not None):
                raise GuestError(f"guest calendar: {e}") from e

    # --- the run ----------------------------------------------------------------------
    async def start(self, connect_timeout_s: float = 30.0) -> None:
        """Start the guest and take its first connection (bounded in wall time: UML
        starts in a fraction of a second): its PCI socket, or under shared time its
        calendar's (it asks for its time before it probes its devices)."""
        self.guest.start()
        log.info("guest: %s", " ".join(self.guest.argv()))
        listener = self.calendar if self.calendar is not None else self.backend
        deadline = time.monotonic() + connect_timeout_s
        while not listener.accept(0.01):
            for slot in self.slots[1:]:
                slot.kicks += self._poll_backend(slot)
            self._check_alive()
            if time.monotonic() > deadline:
                raise GuestError(f"the guest did not connect in {connect_timeout_s} s")
            if not self.shared:
                await Timer(self.poll_ns, "ns")
        self._offset = int(get_sim_time("ns"))

    def _check_alive(self) -> int | None:
        """The guest command's exit status once the guest has ended (None: it runs); a
        guest that ended without finishing its command is an error."""
        code = self.guest.poll()
        if code is None or self._stopped:
            return None
        status = self.guest.exit_status()
        if status is None:
            raise GuestError(
                f"the guest ended (process exit {code}) before its command finished; "
                f"console:\n{self.guest.tail()}"
            )
        log.info("guest: command exited with status %d; %s", status, dict(self.stats))
        return status

    def _check_limits(self, start_wall: float, start_sim: float, limit_s, limit_sim_us) -> None:
        if time.monotonic() - start_wall > limit_s:
            raise GuestError(
                f"the guest ran {limit_s} s of wall time without finishing; "
                f"console:\n{self.guest.tail()}"
            )
        if limit_sim_us is not None and get_sim_time("us") - start_sim > limit_sim_us:
            raise GuestError(
                f"the guest ran {limit_sim_us} us of simulated time without finishing; "
                f"console:\n{self.guest.tail()}"
            )

    async def run(self, limit_s: float, limit_sim_us: float | None = None) -> int:
        """Serve the guest until it powers off; its command's exit status. ``limit_s``
        bounds the wall time, ``limit_sim_us`` the simulated time."""
        start_wall, start_sim = time.monotonic(), get_sim_time("us")
        try:
            while True:
                if self.shared:
                    await self._step_shared()
                else:
                    await self._serve(self._poll_guest())
                    self._resample()
                status = self._check_alive()
                if status is not None:
                    return status
                self._check_limits(start_wall, start_sim, limit_s, limit_sim_us)
                if not self.shared:
                    await Timer(self.poll_ns, "ns")
        finally:
            self.close()

    async def _step_shared(self) -> None:
        """One step of the calendar: the running guest served with the simulation held,
        or the waiting guest's time passed, jumped or interrupted."""
        cal = self.calendar
        assert cal is not None
        if not cal.waiting:
            # the guest runs: the simulation stands still until it sends something
            socks = [cal.fileno()]
            socks += [s.backend.conn or s.backend.listener for s in self.slots if not s.closed]
            ready, _, _ = select.select(socks, [], [], RUNNING_SILENCE_S)
            if not ready and self.guest.poll() is None:
                raise GuestError(
                    f"the guest ran {RUNNING_SILENCE_S} s without a message; "
                    f"console:\n{self.guest.tail()}"
                )
            self._poll_calendar()
            await self._serve(self._poll_guest())
            if cal.waiting:  # it stopped: its clock goes on from where it was
                self._offset = int(get_sim_time("ns")) - cal.now
            return
        # the guest waits for its timer (cal.request) or an interrupt
        self._poll_calendar()
        await self._serve(self._poll_guest())
        self._resample()
        if self.irqs_pending:
            self._deliver_irqs()
        for slot in self.slots:
            if slot.unnotified >= CMD_CALL_BACKLOG:
                slot.unnotified = 0
                self._call(CMD_QUEUE, slot)
        now = self._guest_clock()
        if cal.request is not None and cal.request <= now:
            self._grant(cal.request)
            return
        if cal.request is not None and not self.irqs_pending and self.fabric_quiet():
            self._grant(cal.request)  # nothing on the fabric: the guest's idle time jumps
            return
        step = self.poll_ns if cal.request is None else min(self.poll_ns, cal.request - now)
        await Timer(max(1, step), "ns")

    def _grant(self, at: int) -> None:
        assert self.calendar is not None
        self._note(f"RUN {at}")
        try:
            self.calendar.grant(at)
        except TimeTravelError as e:
            if not (e.closed and self.guest.wait(GUEST_EXIT_S) is not None):
                raise GuestError(f"guest calendar: {e}") from e
        self._offset = int(get_sim_time("ns")) - at

    def _wait_calendar(self, done, what: str) -> None:
        """Hold the simulation, answering the guest's calendar, until ``done()``."""
        assert self.calendar is not None
        deadline = time.monotonic() + RUNNING_SILENCE_S
        socks = [self.calendar.fileno()] + [s.backend.slave for s in self.slots if s.backend.slave]
        while True:
            self._poll_calendar()
            try:
                if done():
                    return
            except VhostUserError as e:
                raise GuestError(f"guest bridge: {e}") from e
            left = deadline - time.monotonic()
            if left <= 0 or self.guest.poll() is not None:
                raise GuestError(f"the guest did not come {what}; console:\n{self.guest.tail()}")
            select.select(socks, [], [], min(left, 1.0))

    def close(self) -> None:
        """End the guest (if it still runs), write the journal, and remove the bridge's
        sockets and files."""
        if self._stopped:
            return
        self._stopped = True
        self.guest.stop()
        for slot in self.slots:
            slot.backend.close()
        if self.calendar is not None:
            self.calendar.close()
        with open(self.run_dir / "guest-journal.log", "w") as f:
            for ns, what in self.journal:
                f.write(f"{ns} {what}\n")
        shutil.rmtree(self.private, ignore_errors=True)
