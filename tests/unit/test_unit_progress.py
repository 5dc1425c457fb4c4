"""make sim's live progress: the status file, the progress line, and the log follower on
a terminal and off one (no simulator here)."""

from __future__ import annotations

import io

import pytest

from tb.apps import progress
from tb.apps.programs import expected_bytes
from tb.apps.progress import Status, Watcher, render


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_status_round_trip_and_torn_file(tmp_path):
    p = tmp_path / "progress.json"
    assert Status.read(p) is None  # not written yet
    Status(bytes=5, descriptors=1, sim_ns=2e3, wall_s=1.0, total_bytes=10).write(p)
    assert Status.read(p) == Status(5, 1, 2e3, 1.0, 10, False)
    p.write_text('{"bytes": 1')  # a half-written file (a writer without the rename)
    assert Status.read(p) is None
    assert not list(tmp_path.glob("*.tmp"))


def test_render_with_and_without_a_total():
    st = Status(bytes=1 << 20, descriptors=32, sim_ns=3_000_000, wall_s=30.0, total_bytes=4 << 20)
    line = render(st, wall_s=40.0)
    assert line.startswith("[######..................]  25% 1.0 MiB of 4.0 MiB, 32 descriptors")
    assert "3,000 us simulated" in line and "0:40 wall" in line
    assert line.endswith("about 1:30 left")  # 3 MiB more at 1 MiB per 30 s
    line = render(Status(bytes=3000, descriptors=2, sim_ns=5e3, wall_s=1), wall_s=3725)
    assert line == "2.9 KiB moved, 2 descriptors, 5 us simulated, 1:02:05 wall"


def test_expected_bytes_per_demo():
    assert expected_bytes("rdma-cuda", ["256x256"], 65536) == 2 * 4 * 256 * 256
    assert expected_bytes("rdma-malloc", [], 65536) == 2 * 4 << 20
    assert expected_bytes("rdma-cuda-h2c-perf", [], 65536) == 65536
    assert expected_bytes("rdma-malloc-c2h-perf", ["4096"], 65536) == 4096
    assert expected_bytes("set-leds", ["2"], 65536) == 0


def _keep(line: str) -> str | None:
    return "  " + line.removeprefix("tb ") if line.startswith("tb ") else None


def test_watcher_off_a_terminal_prints_plain_lines(tmp_path):
    log, status = tmp_path / "sim.log", tmp_path / "progress.json"
    out = io.StringIO()
    w = Watcher(log, status, _keep, out=out, every_s=3600)
    w.poll()  # nothing yet: no log, no status
    assert out.getvalue() == ""
    log.write_text("tb running\nother\ntb app: hel")
    Status(bytes=10, total_bytes=100, wall_s=1).write(status)
    w.poll()
    w.poll()  # the next progress line is not due for an hour
    assert out.getvalue().splitlines() == [
        "  running",
        "  [##......................]  10% 10 B of 100 B, 0 descriptors, 0 us simulated, "
        "0:00 wall, about 0:09 left",
    ]
    with open(log, "a") as f:
        f.write("lo\ntb done")  # the rest of a line, then one with no newline yet
    Status(bytes=100, total_bytes=100, done=True).write(status)
    w.poll()
    w.finish()
    assert out.getvalue().splitlines()[2:] == ["  app: hello", "  done"]


@pytest.mark.parametrize("uptime_s", [0.5, 30.0, 86_400.0])
def test_watcher_off_a_terminal_whatever_the_uptime(tmp_path, monkeypatch, uptime_s):
    """time.monotonic() counts from boot: on a machine booted half a minute ago the first
    plain progress line comes at once all the same, and the next one every_s later."""
    clock = [uptime_s]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    log, status = tmp_path / "sim.log", tmp_path / "progress.json"
    out = io.StringIO()
    w = Watcher(log, status, _keep, out=out, every_s=10.0)
    Status(bytes=10, total_bytes=100, wall_s=1).write(status)
    w.poll()
    assert len(out.getvalue().splitlines()) == 1  # the first line at once
    clock[0] += 9.9
    w.poll()
    assert len(out.getvalue().splitlines()) == 1  # the next one not yet due
    clock[0] += 0.1
    w.poll()
    assert len(out.getvalue().splitlines()) == 2
    assert out.getvalue().splitlines()[1].endswith("0:10 wall, about 0:09 left")


def test_watcher_on_a_terminal_redraws_in_place(tmp_path):
    log, status = tmp_path / "sim.log", tmp_path / "progress.json"
    out = Tty()
    w = Watcher(log, status, _keep, out=out)
    Status(bytes=1, total_bytes=4, wall_s=1).write(status)
    w.poll()
    drawn = out.getvalue()
    assert drawn.startswith("  [######") and "\n" not in drawn  # no newline: redrawn next
    log.write_text("tb app: line\n")
    w.poll()
    text = out.getvalue()[len(drawn) :]
    # the progress line is wiped, the log line printed, the progress line drawn again
    assert text.startswith("\r" + " " * len(drawn) + "\r  app: line\n")
    w.finish()
    assert out.getvalue().endswith("\r" + " " * len(drawn) + "\r")  # nothing left on screen


def test_watcher_follows_a_log_started_again(tmp_path):
    """A run that rewrites the log (the same run directory used again) is followed from
    its start, not from where the old log ended."""
    log, status = tmp_path / "sim.log", tmp_path / "progress.json"
    out = io.StringIO()
    w = Watcher(log, status, _keep, out=out)
    log.write_text("tb an old run's long line\n")
    w.poll()
    log.write_text("tb new\n")
    w.poll()
    w.finish()
    assert out.getvalue().splitlines() == ["  an old run's long line", "  new"]
