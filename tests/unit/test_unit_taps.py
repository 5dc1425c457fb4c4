"""The link taps (tb/env/link.py's LinkTaps): each observer is called for the TLPs it
wants (links, directions, types), in the order observers were added, before the
receiver; the ends it wants nothing of say so (``wanted``)."""

from __future__ import annotations

from cocotbext.pcie.core.tlp import Tlp, TlpType

from tb.env.link import DOWN, MEM_READS, UP, LinkTaps
from tests.unit.tlps import mem_read, mem_write


class _Port:
    """A link end: a receive handler that records what reached the receiver."""

    def __init__(self, got: list) -> None:
        self.other: _Port | None = None
        self.got = got

        async def receive(tlp: Tlp) -> None:
            got.append(("rx", tlp.fmt_type))

        self.rx_handler = receive


def _link(got: list) -> tuple[_Port, _Port]:
    lower, upper = _Port(got), _Port(got)
    lower.other, upper.other = upper, lower
    return lower, upper


def _send(port: _Port, tlp: Tlp) -> None:
    coro = port.rx_handler(tlp)
    try:
        coro.send(None)
    except StopIteration:
        return
    raise AssertionError("the tap waited")


def test_observers_see_what_they_want_in_order() -> None:
    got: list = []
    taps = LinkTaps()
    fpga_lower, fpga_upper = _link(got)
    gpu_lower, gpu_upper = _link(got)
    taps.tap("fpga", fpga_lower)

    def watcher(name: str):
        return lambda link, direction, tlp: got.append((name, link, direction, tlp.fmt_type))

    every, reads_up, gpu_only = watcher("every"), watcher("reads_up"), watcher("gpu_only")
    taps.add_observer(every)
    taps.add_observer(reads_up, directions=(UP,), types=MEM_READS)
    taps.add_observer(gpu_only, links=("gpu",))
    taps.tap("gpu", gpu_lower)  # tapped after the observers came: they see it too

    _send(fpga_upper, mem_read(0x1000, 64))  # the upper end receives what goes up
    assert got == [
        ("every", "fpga", UP, TlpType.MEM_READ),
        ("reads_up", "fpga", UP, TlpType.MEM_READ),
        ("rx", TlpType.MEM_READ),
    ]
    got.clear()
    _send(fpga_lower, mem_read(0x1000, 64))
    _send(fpga_upper, mem_write(0x1000, bytes(8)))
    assert got == [
        ("every", "fpga", DOWN, TlpType.MEM_READ),
        ("rx", TlpType.MEM_READ),
        ("every", "fpga", UP, TlpType.MEM_WRITE),
        ("rx", TlpType.MEM_WRITE),
    ]
    got.clear()
    _send(gpu_upper, mem_read(0x1000, 64))
    assert [g[0] for g in got] == ["every", "reads_up", "gpu_only", "rx"]
    assert taps.wanted("fpga", UP, TlpType.MEM_WRITE)
    taps.remove_observer(every)
    assert not taps.wanted("fpga", UP, TlpType.MEM_WRITE)
    assert taps.wanted("fpga", UP, TlpType.MEM_READ) and not taps.wanted(
        "fpga", DOWN, TlpType.MEM_READ
    )
    got.clear()
    _send(fpga_upper, mem_write(0x1000, bytes(8)))
    assert got == [("rx", TlpType.MEM_WRITE)]
