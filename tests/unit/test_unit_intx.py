"""Legacy interrupts without a simulator: the Assert_INTx/Deassert_INTx message encoding,
the bridge swizzle, the checker's INTx rules and the guest's virt-pci INT message."""

from __future__ import annotations

import asyncio
import struct

import pytest
from cocotbext.pcie.core.tlp import Tlp, TlpTc, TlpType
from cocotbext.pcie.core.utils import PcieId

from tb.env.link import DOWN, UP, ProtocolChecker, describe
from tb.guest import bridge as bridge_module
from tb.guest.bridge import INTX_RESAMPLE_NS, IRQ_QUEUE, GuestBridge
from tb.guest.frontend import RAM_BASE, FrontEnd
from tb.guest.uml import GuestOptions
from tb.guest.vhost_user import Kick
from tb.guest.virtpci import MSG, Op, int_message
from tb.models.intx import intx_message, intx_of, message_code, message_name, swizzle

from .guestfakes import Device, RootComplex


@pytest.mark.parametrize("pin", range(4))
@pytest.mark.parametrize("asserted", [True, False])
def test_message_code_round_trip(pin: int, asserted: bool) -> None:
    """The code sits in header byte 7 (PCIe Base 2.2.8.1: Assert_INTA 0x20 ... Deassert_INTD
    0x27), carried in the byte-enable fields every copy of a TLP keeps; routed local,
    no data."""
    msg = intx_message(PcieId(1, 0, 0), pin, asserted)
    assert msg.fmt_type == TlpType.MSG_LOCAL and msg.length == 0 and not msg.data
    assert message_code(msg) == (0x20 if asserted else 0x24) + pin
    copy = Tlp(msg)
    assert intx_of(copy) == (pin, asserted)
    name = message_name(copy)
    assert name == f"{'ASSERT' if asserted else 'DEASSERT'}_INT{'ABCD'[pin]}"
    assert name in describe(copy)


def test_other_messages_are_not_intx() -> None:
    pme = Tlp()
    pme.fmt_type = TlpType.MSG_TO_RC
    pme.first_be, pme.last_be = 0x8, 0x1  # PM_PME (0x18)
    assert intx_of(pme) is None and message_name(pme) == "PM_PME"
    local = Tlp()
    local.fmt_type = TlpType.MSG_LOCAL
    local.first_be, local.last_be = 0x0, 0x3  # ERR_COR (0x30), not an INTx
    assert intx_of(local) is None
    with pytest.raises(ValueError, match="0-3"):
        intx_message(PcieId(0, 0, 0), 4, True)


def test_swizzle_is_the_bridge_rule() -> None:
    """INTx of device D reaches the bridge's INT[(x + D) mod 4]."""
    assert swizzle(0b0001, 0) == 0b0001
    assert swizzle(0b0001, 1) == 0b0010
    assert swizzle(0b0001, 3) == 0b1000
    assert swizzle(0b1000, 1) == 0b0001  # INTD of device 1: INTA
    assert swizzle(0b0101, 6) == 0b0101  # device 6 = 2 mod 4: A->C, C->A
    assert swizzle(0b1111, 5) == 0b1111


def test_checker_intx_rules() -> None:
    """An INTx message travels upstream only, with TC0 and no attributes; a duplicate is
    legal."""
    ch = ProtocolChecker(mps=256, mrrs=512, rcb=64, mode="record")
    up = intx_message(PcieId(1, 0, 0), 0, True)
    ch.observe("fpga", UP, up)
    ch.observe("fpga", UP, intx_message(PcieId(1, 0, 0), 0, True))
    assert ch.violations == []
    ch.observe("fpga", DOWN, intx_message(PcieId(0, 0, 0), 0, True))
    bad = intx_message(PcieId(1, 0, 0), 0, False)
    bad.tc = TlpTc.TC1
    ch.observe("fpga", UP, bad)
    assert [v.rule for v in ch.violations] == ["intx-direction", "intx-tc"]
    assert "DEASSERT_INTA" in ch.violations[1].tlp


@pytest.mark.parametrize("pin", [1, 2, 3, 4])
def test_virtpci_int_message(pin: int) -> None:
    """VIRTIO_PCIDEV_OP_INT (6): no data, the pin (1-4) in the address field, as
    include/uapi/linux/virtio_pcidev.h says."""
    msg = int_message(pin)
    assert len(msg) == MSG.size
    op, bar, _, size, addr = MSG.unpack(msg)
    assert (op, bar, size, addr) == (Op.INT, 0, 0, pin)
    assert struct.unpack_from("<B", msg)[0] == 6


def test_virtpci_int_message_pin_range() -> None:
    for pin in (0, 5):
        with pytest.raises(ValueError, match="1-4"):
            int_message(pin)


# --- the guest bridge: the line as a level ---------------------------------------------


class _Line:
    """An IntxFabric's line as the bridge sees it."""

    def __init__(self) -> None:
        self.up = False
        self.watchers = []

    def level(self, line) -> bool:
        return self.up

    def watch(self, line, callback) -> None:
        self.watchers.append(callback)

    def set(self, up: bool) -> None:
        self.up = up
        for w in self.watchers:
            w(up)


def test_bridge_sends_int_per_rise_and_again_while_the_line_stays_up(tmp_path, monkeypatch):
    """A rise sends one INT; a rise while one is owed or in service sends none; once the
    guest recycled the buffer (its handlers ran), the line is looked at again
    INTX_RESAMPLE_NS later: still up, another INT; down, none."""
    now = [0]
    monkeypatch.setattr(bridge_module, "get_sim_time", lambda unit="ns": now[0])
    b = GuestBridge(RootComplex(), Device(), GuestOptions(["/bin/true"]), tmp_path)
    try:
        f = FrontEnd(str(b.socket))
        f.handshake(b.backend)
        b._poll_guest()
        line = _Line()
        b.attach_intx(line, None, 1)
        for k in range(4):
            f.post(IRQ_QUEUE, [(RAM_BASE + 0x30000 + 0x40 * k, 20, True)], head=k)
        line.set(True)
        assert f.used(IRQ_QUEUE)[0] == 1 and b.stats["int"] == 1
        got = f.peek(RAM_BASE + 0x30000, MSG.size)
        assert MSG.unpack(got)[0] == Op.INT and MSG.unpack(got)[4] == 1
        line.set(False)
        line.set(True)  # the first still in service: nothing new
        assert b.stats["int"] == 1
        asyncio.run(b._serve([Kick(IRQ_QUEUE, False)]))  # the guest handled it
        now[0] = INTX_RESAMPLE_NS - 1
        b._resample()
        assert b.stats["int"] == 1, "looked again too early"
        assert not b.fabric_quiet(), "quiet before the line was looked at again"
        now[0] = INTX_RESAMPLE_NS
        b._resample()
        assert b.stats["int"] == 2, "the line stayed up: a level fires again"
        asyncio.run(b._serve([Kick(IRQ_QUEUE, False)]))
        line.set(False)
        now[0] += 2 * INTX_RESAMPLE_NS
        b._resample()
        assert b.stats["int"] == 2 and f.used(IRQ_QUEUE)[0] == 2
        assert [w for _, w in b.journal if "INT" in w][:3] == [
            "INTx assert",
            "INT 1",
            "INTx deassert",
        ]
        f.close()
    finally:
        b.close()
