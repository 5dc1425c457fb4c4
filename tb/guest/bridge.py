"""The guest bridge inside the simulation: a guest's PCI bus (virt-pci over vhost-user)
attached to a function of the simulated fabric, with the guest's RAM as the root
complex's host memory.

- Config and BAR accesses the guest sends are done in order, each as the fabric does it
  (:class:`tb.guest.card.FabricFunction`); a read is answered before the guest's kick is
  acknowledged, so the guest waits for it however long the simulation takes; writes are
  posted (acknowledged at once, done in order).
- The guest's memory file is mapped once and registered in the root complex's memory
  space at the guest's physical addresses: the card's DMA reads and writes it in place.
- MSI and MSI-X writes to the guest's MSI address become ``irq`` queue messages (queued
  while the guest has no buffer posted).
- The guest is a process watched on every poll: one that dies ends the run with its
  console's last lines (:class:`tb.guest.uml.GuestError`); every wait has a bound.
"""

from __future__ import annotations

import collections
import logging
import os
import tempfile
import time
from pathlib import Path

from cocotb.triggers import Timer
from cocotb.utils import get_sim_time
from cocotbext.axi.address_space import Region

from .card import FabricFunction
from .uml import GuestError, GuestOptions, UmlGuest
from .vhost_user import GuestMemory, Kick, VhostUserBackend, VhostUserError
from .virtpci import UML_MSI_ADDRESS, PciRequest, VirtPciError, execute, msi_message, parse

log = logging.getLogger("cocotb.guest")

CMD_QUEUE, IRQ_QUEUE = 0, 1
# how long a guest that closed its socket may take to exit (wall time)
GUEST_EXIT_S = 10.0


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


class GuestBridge:
    """The bridge between a guest (``guest``, started by :meth:`start`) and ``device``, a
    function of ``rc``'s fabric. ``poll_ns`` is how often (in simulated time) the bridge
    looks for the guest's requests. ``stats`` counts what crossed."""

    def __init__(
        self,
        rc,
        device: FabricFunction,
        options: GuestOptions,
        run_dir: Path,
        poll_ns: int = 200,
    ) -> None:
        self.rc = rc
        self.device = device
        self.options = options
        self.run_dir = Path(run_dir)
        self.poll_ns = poll_ns
        self.private = Path(tempfile.mkdtemp(prefix="pevb-guest-"))
        os.chmod(self.private, 0o700)
        self.socket = self.private / "virt-pci.sock"
        self.backend = VhostUserBackend(str(self.socket), queues=2)
        self.guest = UmlGuest(
            options, self.private, self.run_dir / "guest-console.log", self.socket
        )
        self.pending_irqs: collections.deque[int] = collections.deque()
        self.stats = collections.Counter()
        self._ram_regions: list[tuple[int, int, GuestRam]] = []
        self._doorbell: MsiDoorbell | None = None
        self._stopped = False

    # --- the root complex's memory --------------------------------------------------
    def _attach_memory(self) -> None:
        """Make the guest's RAM the root complex's host memory (once the guest shared it):
        the pool the root complex allocates from goes, the guest's regions and its MSI
        address come in."""
        space = self.rc.mem_address_space
        if self._doorbell is None:
            space.regions = [r for r in space.regions if r[3] is not self.rc.mem_pool]
            self._doorbell = MsiDoorbell(self)
            space.register_region(self._doorbell, UML_MSI_ADDRESS)
        shared = list(self.backend.regions())
        if [(b, s) for b, s, _ in self._ram_regions] == shared:
            return
        space.regions = [r for r in space.regions if not isinstance(r[3], GuestRam)]
        self._ram_regions = []
        for base, size in shared:
            region = GuestRam(self.backend.mem, base, size)
            space.register_region(region, base)
            self._ram_regions.append((base, size, region))
            log.info("guest: RAM 0x%x-0x%x is the root complex's memory", base, base + size - 1)

    # --- interrupts -------------------------------------------------------------------
    def interrupt(self, data: int) -> None:
        """An MSI or MSI-X write of ``data`` from the fabric: to the guest."""
        self.stats["msi"] += 1
        self.pending_irqs.append(data)
        self._deliver_irqs()

    def _deliver_irqs(self) -> None:
        q = self.backend.queues[IRQ_QUEUE]
        delivered = False
        while self.pending_irqs and self.backend.ready:
            chain = q.pop(self.backend.mem)
            if chain is None:
                break
            q.push(self.backend.mem, chain, msi_message(self.pending_irqs.popleft()))
            delivered = True
        if delivered:
            self.backend.call(IRQ_QUEUE)

    # --- requests ---------------------------------------------------------------------
    async def _serve_cmd(self, kick: Kick) -> None:
        q = self.backend.queues[CMD_QUEUE]
        mem = self.backend.mem
        chains = []
        while (chain := q.pop(mem)) is not None:
            chains.append(chain)
        requests: list[PciRequest] = []
        for chain in chains:
            try:
                requests.append(parse(chain.data))
            except VirtPciError as e:
                raise GuestError(f"guest sent a request the bridge cannot take: {e}") from e
        reads = any(not r.posted for r in requests)
        if not reads:  # posted writes only: the guest goes on at once
            self.backend.ack_kick(kick)
        for chain, req in zip(chains, requests, strict=True):
            self.stats[req.op.name] += 1
            reply = await execute(self.device, req)
            if reply and len(reply) > chain.room:
                raise GuestError(f"{req.describe()}: the guest left {chain.room} bytes for it")
            q.push(mem, chain, reply)
        if chains:
            self.backend.call(CMD_QUEUE)
        if reads:
            self.backend.ack_kick(kick)

    async def _serve(self, kicks: list[Kick]) -> None:
        for kick in kicks:
            if kick.queue == CMD_QUEUE:
                await self._serve_cmd(kick)
            else:  # the guest posted interrupt buffers
                self.backend.ack_kick(kick)
                self._deliver_irqs()

    # --- the run ----------------------------------------------------------------------
    async def start(self, connect_timeout_s: float = 30.0) -> None:
        """Start the guest and take its connection (bounded in wall time: UML starts in a
        fraction of a second)."""
        self.guest.start()
        log.info("guest: %s", " ".join(self.guest.argv()))
        deadline = time.monotonic() + connect_timeout_s
        while not self.backend.accept(0.01):
            self._check_alive()
            if time.monotonic() > deadline:
                raise GuestError(f"the guest did not connect in {connect_timeout_s} s")
            await Timer(self.poll_ns, "ns")

    def _check_alive(self) -> None:
        code = self.guest.poll()
        if code is not None and not self._stopped:
            status = self.guest.exit_status()
            if status is None:
                raise GuestError(
                    f"the guest ended (process exit {code}) before its command finished; "
                    f"console:\n{self.guest.tail()}"
                )

    async def run(self, limit_s: float, limit_sim_us: float | None = None) -> int:
        """Serve the guest until it powers off; its command's exit status. ``limit_s``
        bounds the wall time, ``limit_sim_us`` the simulated time."""
        start_wall = time.monotonic()
        start_sim = get_sim_time("us")
        try:
            while True:
                try:
                    kicks = self.backend.poll()
                except VhostUserError as e:
                    # a guest that powers off closes the socket just before it exits
                    if not (e.closed and self.guest.wait(GUEST_EXIT_S) is not None):
                        raise GuestError(f"guest bridge: {e}") from e
                    kicks = []
                if self.backend.mem.regions and not self._ram_regions:
                    self._attach_memory()
                if kicks:
                    await self._serve(kicks)
                code = self.guest.poll()
                if code is not None:
                    status = self.guest.exit_status()
                    if status is None:
                        raise GuestError(
                            f"the guest ended (process exit {code}) before its command "
                            f"finished; console:\n{self.guest.tail()}"
                        )
                    log.info("guest: command exited with status %d; %s", status, dict(self.stats))
                    return status
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
                await Timer(self.poll_ns, "ns")
        finally:
            self.close()

    def close(self) -> None:
        """End the guest (if it still runs) and the bridge's socket and files."""
        if self._stopped:
            return
        self._stopped = True
        self.guest.stop()
        self.backend.close()
        for p in self.private.iterdir():
            try:
                if p.is_dir():
                    for q in p.iterdir():
                        q.unlink()
                    p.rmdir()
                else:
                    p.unlink()
            except OSError:
                pass
        try:
            self.private.rmdir()
        except OSError:
            pass
