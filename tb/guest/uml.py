"""A User-mode Linux guest as a host process: its kernel (``make guest`` builds it into
``sim_build/guest``), its command line, its console log, its end.

The guest's root is the host's ``/`` read-only through hostfs; ``pevb-init`` (guest/tools)
mounts /proc, /sys, /dev and /tmp, runs the command it is given, prints its exit status on
the console and powers the guest off. Its PCI bus is virt-pci over vhost-user: the device
socket, UML's own files (its memory file, the mconsole socket) all live in a private
directory of the run (mode 0700); nothing listens on a network port.
"""

from __future__ import annotations

import ctypes
import os
import re
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..config.sources import ROOT

# make guest builds here ($PEVB_GUEST_DIR names another place)
GUEST_DIR = Path(os.environ.get("PEVB_GUEST_DIR") or ROOT / "sim_build" / "guest")
KERNEL = GUEST_DIR / "linux"
BUILD_TREE = GUEST_DIR / "obj"
TOOLS = GUEST_DIR / "bin"
# CONFIG_UML_PCI_OVER_VIRTIO_DEVICE_ID in guest/linux/uml.config
VIRT_PCI_ID = 1234
TIME_MODES = ("free", "shared")
# the guest's RAM, which UML places just above its own image, becomes the root complex's
# host memory, which ends at 0x80000000 where the root complex's MSI region starts
MIN_MEM_MB, MAX_MEM_MB = 32, 1536
# the guest's own file systems over the host's (pevb-init mounts them)
HIDDEN = (Path("/tmp"), Path("/run"))
STATUS = re.compile(r"^pevb-init: exit status (\d+)$", re.M)


class GuestError(Exception):
    """The guest could not start, died, or broke an expectation of the bridge."""


def missing() -> str | None:
    """Why a guest cannot run here (None: it can): the kernel or the tools not built."""
    for path in (KERNEL, TOOLS / "pevb-init", TOOLS / "pevb-insmod"):
        if not path.exists():
            return f"{path} is missing: run make guest"
    return None


@dataclass
class GuestOptions:
    """How the guest runs: the command ``pevb-init`` runs (``command``: program and
    arguments, paths as the host sees them), memory, time, extra kernel arguments.

    ``time`` is ``free`` (the guest runs in wall time and stops while the simulation
    answers it) or ``shared`` (the simulation is the guest's calendar: one clock, and a
    run repeats exactly). Under shared time the guest's idle time jumps ahead once the
    fabric has carried no TLP for ``idle_ns`` of simulated time, to the guest's next timer;
    while the fabric is busy it passes as simulated time, until the card's interrupt.
    """

    command: list[str]
    mem_mb: int = 256
    time: str = "free"
    idle_ns: int = 2000
    kernel_args: list[str] = field(default_factory=list)
    kernel: Path = KERNEL

    def __post_init__(self) -> None:
        if not MIN_MEM_MB <= self.mem_mb <= MAX_MEM_MB:
            raise ValueError(
                f"mem_mb {self.mem_mb}: {MIN_MEM_MB}-{MAX_MEM_MB} (the guest's RAM must end"
                " below the root complex's MSI region at 0x80000000)"
            )
        if self.time not in TIME_MODES:
            raise ValueError(f"time {self.time!r}: one of {', '.join(TIME_MODES)}")
        if self.idle_ns <= 0:
            raise ValueError(f"idle_ns {self.idle_ns}: a positive number of nanoseconds")


ADDR_NO_RANDOMIZE = 0x0040000  # personality(2): no address-space layout randomization
PR_SET_PDEATHSIG = 1  # prctl(2): a signal for the child when its parent dies


def _prepare_child() -> None:
    """In the guest's process before it runs: no address-space randomization, so that
    the guest's physical memory (which UML places after its own image) starts at the same
    address on every run, and with it every DMA address the guest hands out; and killed
    with the simulation, however the simulation ends."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.personality(ADDR_NO_RANDOMIZE)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class UmlGuest:
    """One guest process. ``private`` is the run's private directory (the device socket's
    and UML's own files), ``console`` the file its console goes to."""

    def __init__(
        self,
        options: GuestOptions,
        private: Path,
        console: Path,
        socket: Path,
        time_socket: Path | None = None,
    ) -> None:
        self.options = options
        self.private = private
        self.console = console
        self.socket = socket
        # the sockets of further devices on the guest's bus, in slot order
        self.extra_sockets: list[Path] = []
        self.time_socket = time_socket
        self.proc: subprocess.Popen | None = None
        self._log = None

    def argv(self) -> list[str]:
        o = self.options
        args = [
            str(o.kernel),
            f"mem={o.mem_mb}M",
            "root=/dev/root",
            "rootfstype=hostfs",
            "rootflags=/",
            "ro",
            f"uml_dir={self.private}",
            "umid=guest",
            "con=null",
            "con0=null,fd:1",
            "ssl=null",
            # (without it UML appends console=tty0 after "--": to the command's arguments)
            "console=tty0",
            f"virtio_uml.device={self.socket}:{VIRT_PCI_ID}",
            *(f"virtio_uml.device={sock}:{VIRT_PCI_ID}" for sock in self.extra_sockets),
            f"init={TOOLS / 'pevb-init'}",
        ]
        if o.time == "shared":
            if self.time_socket is None:
                raise GuestError("shared time needs the calendar's socket")
            args.append(f"time-travel=ext:{self.time_socket}")
            # the guest's own processes without address-space randomization too: a
            # randomized stack or mmap base changes how many page-table pages a process
            # takes, and with them where the kernel's later allocations land
            args.append("norandmaps")
        hidden = self.hidden_dirs()
        if hidden:
            # an unknown NAME=value of the kernel's command line is in init's environment
            args.append(f"PEVB_HOST_DIRS={':'.join(hidden)}")
        args += o.kernel_args
        return [*args, "--", *o.command]

    def hidden_dirs(self) -> list[str]:
        """The host directories the guest needs that its own /tmp and /run would hide
        (``pevb-init`` mounts those two afresh): the repository, the guest's build, and
        the folder of every absolute path in the command; each is shown again at its own
        path."""
        want = {ROOT, GUEST_DIR}
        for arg in self.options.command:
            if arg.startswith("/"):
                p = Path(arg)
                want.add(p if p.is_dir() else p.parent)
        found: list[Path] = []
        for p in sorted(Path(os.path.realpath(w)) for w in want):
            if not any(p != top and p.is_relative_to(top) for top in HIDDEN):
                continue
            if any(p.is_relative_to(f) for f in found):
                continue
            for ch in (":", " ", "\t", "\n", '"'):
                if ch in str(p):
                    raise GuestError(f"the guest cannot be shown {p}: a {ch!r} in its path")
            found.append(p)
        return [str(p) for p in found]

    def start(self) -> None:
        """Start the guest (the device socket must already listen: UML connects at boot)."""
        if self.proc is not None:
            raise GuestError("the guest is already running")
        why = missing() if self.options.kernel == KERNEL else None
        if why:
            raise GuestError(why)
        env = dict(os.environ, TMPDIR=str(self.private))
        self._log = open(self.console, "wb")
        self.proc = subprocess.Popen(
            self.argv(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=self.private,
            start_new_session=True,
            preexec_fn=_prepare_child,
        )

    def poll(self) -> int | None:
        """The process's exit code once it has ended, else None."""
        return None if self.proc is None else self.proc.poll()

    def wait(self, timeout_s: float) -> int | None:
        """The exit code, waiting up to ``timeout_s`` for the process to end (None: it
        still runs)."""
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace_s: float = 2.0) -> None:
        """End the guest: a polite signal, then a kill; the console log is closed."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(grace_s)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(grace_s)
        if self._log is not None:
            self._log.close()
            self._log = None

    def console_text(self) -> str:
        try:
            return self.console.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def exit_status(self) -> int | None:
        """The guest command's exit status as pevb-init printed it (None: not printed)."""
        m = STATUS.findall(self.console_text())
        return int(m[-1]) if m else None

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.console_text().splitlines()[-lines:])
