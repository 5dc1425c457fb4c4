"""pevb_regs alone: random register reads and writes (any byte enables, any BAR id, the
registers of every block, channels built and not, unmapped offsets) among random status
events, busy levels and data beats of the channels, checked cycle by cycle against a
model of PG195's register semantics written from the register map
(driver_model/regs.py): read values (identifiers, RW, W1S/W1C views, RW1C and
clear-on-read status with events of the same cycle kept, the performance counters,
configuration from the hard IP, the MSI-X table), and every register output the
channels read (control, descriptor address and adjacency, write-back address, halt, the
status bits XDMA exports). The interrupts themselves (pevb_irq_tx inside: MSI, MSI-X,
INTx) are not checked here: the system's interrupt tests cover them.
"""

from __future__ import annotations

import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from driver_model import regs as R
from tb.config import bench_params
from tb.env.rtl_bench import start

CYCLES = 6000
MASK32 = 0xFFFF_FFFF
EVW = R.STAT_EVENT_WIDTH
PERF_MAX = (1 << 42) - 1

INPUTS = (
    "reg_req_valid",
    "reg_req_we",
    "reg_req_bar",
    "reg_req_addr",
    "reg_req_wdata",
    "reg_req_be",
    "ch_event",
    "ch_busy",
    "rq_wr_enter",
    "rq_wr_leave",
    "ch_count",
    "ch_beat",
    "cfg_max_payload",
    "cfg_max_read_req",
    "cfg_bus_number",
    "usr_irq_req",
    "cfg_interrupt_msi_enable",
    "cfg_interrupt_msi_mmenable",
    "cfg_interrupt_msi_sent",
    "cfg_interrupt_msi_fail",
    "cfg_interrupt_msix_enable",
    "cfg_interrupt_msix_mask",
    "cfg_interrupt_msix_sent",
    "cfg_interrupt_msix_fail",
    "cfg_interrupt_sent",
)


def merge(old: int, new: int, mask: int) -> int:
    return (old & ~mask) | (new & mask)


def set_clear(old: int, ofs: int, base: int, data: int, wmask: int, mask: int) -> int:
    """A register at ``base`` with its W1S view at +4 and its W1C view at +8 (PG195), after
    a write of ``data`` (byte enables ``wmask``) at ``ofs``; ``old`` if none of the three."""
    wbits = data & wmask & mask
    return {
        base: merge(old, data, wmask & mask),
        base + 4: old | wbits,
        base + 8: old & ~wbits,
    }.get(ofs, old)


class Channel:
    """One channel's registers."""

    def __init__(self) -> None:
        self.control = self.status = self.intmask = self.wb = 0
        self.perf = 0
        self.cyc = self.data = 0
        self.desc = self.adj = self.credits = 0
        self.run_d = False


class Model:
    """The register file as PG195 and the register map describe it."""

    def __init__(self, p: dict[str, int]) -> None:
        self.nh, self.nc = p.get("H2C_CHANNELS", 1), p.get("C2H_CHANNELS", 1)
        self.nu = p.get("USER_IRQS", 1)
        self.msix = p.get("MSIX", 0)
        self.width = p.get("AXIS_PCIE_DATA_WIDTH", 64)
        self.stream = p.get("H2C_STREAM", 0) | p.get("C2H_STREAM", 0) << 4
        self.built = [c for c in range(8) if (c < self.nh) or (4 <= c < 4 + self.nc)]
        self.ch = {c: Channel() for c in self.built}
        self.halt = self.credit_mode = 0
        self.user_en = self.chan_en = 0
        self.user_vec = [0] * 4
        self.chan_vec = [0] * 2
        self.ro = 1  # relaxed ordering on out of reset
        self.flush = 0
        self.msix_lo = [0] * R.MSIX_VECTORS
        self.msix_hi = [0] * R.MSIX_VECTORS
        self.msix_data = [0] * R.MSIX_VECTORS
        self.msix_masked = [1] * R.MSIX_VECTORS

    # --- addressing ---------------------------------------------------------------------
    def channel_of(self, addr: int) -> int | None:
        tgt, chn = R.ADDR_TARGET.get(addr), R.ADDR_CHANNEL.get(addr)
        if tgt not in (R.Target.H2C, R.Target.C2H, R.Target.H2C_SGDMA, R.Target.C2H_SGDMA):
            return None
        if chn > 3:
            return None
        c = (tgt & 1) * 4 + chn
        return c if c in self.ch else None

    def irq_src(self) -> int:
        """Interrupt bits: H2C channels, then C2H (status & mask, logged bits)."""
        bits = 0
        for k, c in enumerate(self.built):
            ch = self.ch[c]
            if ch.status & ch.intmask & R.STAT_LOGGED_MASK:
                bits |= 1 << k
        return bits

    def read(self, bar: int, addr: int, inputs: dict[str, int]) -> int:
        if bar != R.BAR_DMA:
            return 0
        tgt, chn, ofs = R.ADDR_TARGET.get(addr), R.ADDR_CHANNEL.get(addr), addr & 0xFC
        c = self.channel_of(addr)
        if c is not None:
            ch = self.ch[c]
            stream = bool(self.stream >> c & 1)
            if tgt in (R.Target.H2C, R.Target.C2H):
                if ofs == R.CH_IDENTIFIER:
                    return R.identifier(R.Target(tgt), chn, stream)
                if ofs in (R.CH_CONTROL, R.CH_CONTROL + 4, R.CH_CONTROL + 8):
                    return ch.control
                if ofs in (R.CH_STATUS, R.CH_STATUS_RC):
                    return (ch.status & ~1) | (inputs["busy"] >> c & 1)
                if ofs == R.CH_COMPLETED_COUNT:
                    return inputs["count"] >> (32 * c) & MASK32
                if ofs == R.CH_ALIGNMENTS:
                    return R.ALIGNMENTS_VALUE
                if ofs == R.CH_POLL_WB_LO:
                    return ch.wb & MASK32
                if ofs == R.CH_POLL_WB_HI:
                    return ch.wb >> 32
                if ofs in (R.CH_INT_MASK, R.CH_INT_MASK + 4, R.CH_INT_MASK + 8):
                    return ch.intmask
                if ofs == R.CH_PERF_CTRL:
                    return ch.perf
                for lo, value in ((R.CH_PERF_CYC_LO, ch.cyc), (R.CH_PERF_DATA_LO, ch.data)):
                    if ofs == lo:
                        return value & MASK32
                    if ofs == lo + 4:
                        return (value >> 32 & 0x3FF) | (value > PERF_MAX) << 16
                return 0
            if ofs == R.SG_IDENTIFIER:
                return R.identifier(R.Target(tgt), chn, stream)
            if ofs == R.SG_DESC_LO:
                return ch.desc & MASK32
            if ofs == R.SG_DESC_HI:
                return ch.desc >> 32
            if ofs == R.SG_DESC_ADJ:
                return ch.adj
            if ofs == R.SG_CREDITS:
                return ch.credits
            return 0
        if chn != 0:
            return 0
        if tgt == R.Target.SGDMA_COMMON:
            if ofs == R.SGC_IDENTIFIER:
                return R.identifier(R.Target.SGDMA_COMMON)
            if ofs in (R.SGC_CONTROL, R.SGC_CONTROL_W1S, R.SGC_CONTROL_W1C):
                return self.halt
            if ofs in (R.SGC_CREDIT_MODE, R.SGC_CREDIT_MODE_W1S, R.SGC_CREDIT_MODE_W1C):
                return self.credit_mode
            return 0
        if tgt == R.Target.IRQ:
            src = self.irq_src()
            values = {
                R.IRQ_IDENTIFIER: R.identifier(R.Target.IRQ),
                R.IRQ_USER_INT_EN: self.user_en,
                R.IRQ_USER_INT_EN_W1S: self.user_en,
                R.IRQ_USER_INT_EN_W1C: self.user_en,
                R.IRQ_CHAN_INT_EN: self.chan_en,
                R.IRQ_CHAN_INT_EN_W1S: self.chan_en,
                R.IRQ_CHAN_INT_EN_W1C: self.chan_en,
                R.IRQ_USER_INT_REQ: inputs["usr"],
                R.IRQ_CHAN_INT_REQ: src,
                R.IRQ_USER_INT_PEND: inputs["usr"] & self.user_en,
                R.IRQ_CHAN_INT_PEND: src & self.chan_en,
            }
            values.update(zip(R.IRQ_USER_VECTOR, self.user_vec, strict=True))
            values.update(zip(R.IRQ_CHAN_VECTOR, self.chan_vec, strict=True))
            return values.get(ofs, 0)
        if tgt == R.Target.CONFIG:
            values = {
                R.CFG_IDENTIFIER: R.identifier(R.Target.CONFIG),
                R.CFG_BUSDEV: R.CFG_BUS_FIELD.put(inputs["bus"]),
                R.CFG_MPS: inputs["mps"],
                R.CFG_AXI_MPS: inputs["mps"],
                R.CFG_MRRS: inputs["mrrs"],
                R.CFG_AXI_MRRS: inputs["mrrs"],
                R.CFG_SYSTEM_ID: R.SYSTEM_ID_VALUE,
                R.CFG_MSI_ENABLE: inputs["msi"] & 1,
                R.CFG_DATA_WIDTH: R.DATA_WIDTH_ENCODING[self.width],
                R.CFG_PCIE_CONTROL: self.ro,
                R.CFG_WR_FLUSH_TIMEOUT: self.flush,
            }
            return values.get(ofs, 0)
        return 0

    def read_msix(self, bar: int, addr: int) -> int | None:
        """An MSI-X table entry's DWORD (None: not the table)."""
        if not self.msix or bar != R.BAR_DMA or R.ADDR_TARGET.get(addr) != R.Target.MSIX:
            return None
        if addr >> 9 & 7:
            return None
        e, w = addr >> 4 & 31, addr & 0xC
        return (self.msix_lo[e], self.msix_hi[e], self.msix_data[e], self.msix_masked[e])[w // 4]

    # --- a clock edge ---------------------------------------------------------------------
    def edge(self, req: tuple | None, inputs: dict[str, int], events: dict[int, int]) -> None:
        """The registers after the edge: the channels' own updates, then the access."""
        logs, rises = {}, {}
        for c, ch in self.ch.items():
            run = bool(ch.control & 1)
            rises[c] = run and not ch.run_d
            logs[c] = events.get(c, 0) & ch.control & R.STAT_LOGGED_MASK
            # the performance counters, from the state before the edge
            if ch.perf & R.Perf.CLEAR:
                ch.cyc = ch.data = 0
            elif ch.perf & R.Perf.RUN and (not ch.perf & R.Perf.AUTO or inputs["busy"] >> c & 1):
                ch.cyc = ch.cyc + 1 if ch.cyc < PERF_MAX else ch.cyc | 1 << 42
                if inputs["beat"] >> c & 1:
                    ch.data = ch.data + 1 if ch.data < PERF_MAX else ch.data | 1 << 42
            ch.run_d = run
            ch.status = 0 if rises[c] else ch.status | logs[c]
            ch.perf &= ~R.Perf.CLEAR
        if req is None:
            return
        we, bar, addr, data, be = req
        if bar != R.BAR_DMA:
            return
        wmask = sum(0xFF << 8 * k for k in range(4) if be >> k & 1)
        wbits = data & wmask
        tgt, chn, ofs = R.ADDR_TARGET.get(addr), R.ADDR_CHANNEL.get(addr), addr & 0xFC
        c = self.channel_of(addr)
        if c is not None:
            ch = self.ch[c]
            if tgt in (R.Target.H2C, R.Target.C2H):
                if not we:
                    if ofs == R.CH_STATUS_RC:
                        ch.status = 0 if rises[c] else logs[c]
                    return
                sm = R.STAT_LOGGED_MASK
                ch.control = set_clear(ch.control, ofs, R.CH_CONTROL, data, wmask, R.CTRL_WRITABLE)
                ch.intmask = set_clear(ch.intmask, ofs, R.CH_INT_MASK, data, wmask, sm)
                if ofs == R.CH_STATUS:
                    ch.status = 0 if rises[c] else (ch.status & ~(wbits & sm)) | logs[c]
                elif ofs == R.CH_POLL_WB_LO:
                    ch.wb = ch.wb & ~MASK32 | merge(ch.wb & MASK32, data, wmask)
                elif ofs == R.CH_POLL_WB_HI:
                    ch.wb = merge(ch.wb >> 32, data, wmask) << 32 | ch.wb & MASK32
                elif ofs == R.CH_PERF_CTRL:
                    ch.perf = (ch.perf & ~(wmask & 7) & ~R.Perf.CLEAR) | (data & wmask & 7)
                return
            if not we:
                return
            if ofs == R.SG_DESC_LO:
                ch.desc = ch.desc & ~MASK32 | merge(ch.desc & MASK32, data, wmask)
            elif ofs == R.SG_DESC_HI:
                ch.desc = merge(ch.desc >> 32, data, wmask) << 32 | ch.desc & MASK32
            elif ofs == R.SG_DESC_ADJ:
                ch.adj = merge(ch.adj, data, wmask & R.SG_DESC_ADJ_FIELD.mask)
            elif ofs == R.SG_CREDITS:
                ch.credits = merge(ch.credits, data, wmask & R.SG_CREDITS_FIELD.mask)
            return
        if not we:
            return
        if self.msix and tgt == R.Target.MSIX and not addr >> 9 & 7:
            e, w = addr >> 4 & 31, addr & 0xC
            if w == 0:
                self.msix_lo[e] = merge(self.msix_lo[e], data, wmask & ~3)
            elif w == 4:
                self.msix_hi[e] = merge(self.msix_hi[e], data, wmask)
            elif w == 8:
                self.msix_data[e] = merge(self.msix_data[e], data, wmask)
            elif be & 1:
                self.msix_masked[e] = data & 1
            return
        if chn != 0:
            return
        if tgt == R.Target.SGDMA_COMMON:
            m = R.SGC_CHANNELS_MASK
            self.halt = set_clear(self.halt, ofs, R.SGC_CONTROL, data, wmask, m)
            self.credit_mode = set_clear(self.credit_mode, ofs, R.SGC_CREDIT_MODE, data, wmask, m)
        elif tgt == R.Target.IRQ:
            user, chan = (1 << self.nu) - 1, (1 << len(self.built)) - 1
            self.user_en = set_clear(self.user_en, ofs, R.IRQ_USER_INT_EN, data, wmask, user)
            self.chan_en = set_clear(self.chan_en, ofs, R.IRQ_CHAN_INT_EN, data, wmask, chan)
            for regs_, vec in (
                (R.IRQ_USER_VECTOR, self.user_vec),
                (R.IRQ_CHAN_VECTOR, self.chan_vec),
            ):
                if ofs in regs_:
                    k = regs_.index(ofs)
                    vec[k] = merge(vec[k], data, wmask & R.IRQ_VECTOR_MASK)
        elif tgt == R.Target.CONFIG:
            if ofs == R.CFG_PCIE_CONTROL and be & 1:
                self.ro = data & 1
            elif ofs == R.CFG_WR_FLUSH_TIMEOUT:
                self.flush = merge(self.flush, data, wmask & R.CFG_WR_FLUSH_TIMEOUT_FIELD.mask)


CHANNEL_REGS = (0x00, 0x04, 0x08, 0x0C, 0x40, 0x44, 0x48, 0x4C, 0x88, 0x8C, 0x90, 0x94, 0x98)
CHANNEL_REGS += (0xC0, 0xC4, 0xC8, 0xCC, 0xD0)  # the performance monitor
SGDMA_REGS = (0x00, 0x80, 0x84, 0x88, 0x8C)


def _address(rng: random.Random, model: Model) -> int:
    """A register address: mostly mapped registers of built channels and blocks."""
    pick = rng.random()
    if pick < 0.55:
        c = rng.choice(model.built)
        tgt = rng.choice([c >> 2, 4 + (c >> 2)])  # the channel block or its SGDMA block
        ofs = rng.choice(CHANNEL_REGS if tgt < 4 else SGDMA_REGS)
        return tgt << 12 | (c & 3) << 8 | ofs
    if pick < 0.85:
        tgt = rng.choice([R.Target.IRQ, R.Target.CONFIG, R.Target.SGDMA_COMMON, R.Target.MSIX])
        if tgt == R.Target.MSIX:
            return tgt << 12 | rng.randrange(32) << 4 | rng.randrange(4) << 2
        return tgt << 12 | rng.choice(range(0, 0xA8, 4))
    return rng.randrange(1 << 16) & ~3  # anywhere: unbuilt channels, unmapped offsets


@cocotb.test()
async def test_random_accesses_against_the_register_map(dut):
    p = bench_params()
    rng = random.Random(cocotb.RANDOM_SEED)
    model = Model(p)
    await start(dut, INPUTS)
    for cycle in range(CYCLES):
        busy = rng.getrandbits(8)
        beat = rng.getrandbits(8)
        count = rng.getrandbits(256)
        events = {c: rng.getrandbits(EVW) for c in model.built if rng.random() < 0.08}
        inputs = {
            "busy": busy,
            "beat": beat,
            "count": count,
            "usr": rng.getrandbits(model.nu),
            "bus": rng.randrange(256),
            "mps": rng.randrange(8),
            "mrrs": rng.randrange(8),
            "msi": rng.randrange(16),
        }
        ev_bus = 0
        for c, ev in events.items():
            ev_bus |= ev << (c * EVW)
        dut.ch_event.value = ev_bus
        dut.ch_busy.value = busy
        dut.ch_beat.value = beat
        dut.ch_count.value = count
        dut.usr_irq_req.value = inputs["usr"]
        dut.cfg_bus_number.value = inputs["bus"]
        dut.cfg_max_payload.value = inputs["mps"]
        dut.cfg_max_read_req.value = inputs["mrrs"]
        dut.cfg_interrupt_msi_enable.value = inputs["msi"]
        req = None
        if rng.random() < 0.6:
            we = rng.random() < 0.5
            bar = R.BAR_DMA if rng.random() < 0.9 else rng.choice([0, 2, 3])
            # (the low two bits name no register: a register is a DWORD)
            addr = _address(rng, model) | (rng.randrange(4) if rng.random() < 0.2 else 0)
            data = rng.getrandbits(32)
            be = rng.choice([0xF, 0xF, rng.randrange(16)])
            req = (we, bar, addr, data, be)
            dut.reg_req_valid.value = 1
            dut.reg_req_we.value = int(we)
            dut.reg_req_bar.value = bar
            dut.reg_req_addr.value = addr
            dut.reg_req_wdata.value = data
            dut.reg_req_be.value = be
        else:
            dut.reg_req_valid.value = 0
        await ReadOnly()
        if req is not None and not req[0]:
            _, bar, addr, _, _ = req
            got = int(dut.reg_rd_data.value)
            table = model.read_msix(bar, addr)
            want = table if table is not None else model.read(bar, addr, inputs)
            assert got == want, (
                f"cycle {cycle}: read {addr:#06x} (BAR {bar}): {got:#x}, not {want:#x}"
            )
        # what the channels see
        for c, ch in model.ch.items():
            control = int(dut.ch_control.value) >> (32 * c) & MASK32
            assert control == ch.control, f"cycle {cycle}: channel {c} control {control:#x}"
            assert int(dut.ch_desc_addr.value) >> (64 * c) & (1 << 64) - 1 == ch.desc
            assert int(dut.ch_desc_adj.value) >> (6 * c) & 0x3F == ch.adj
            assert int(dut.ch_wb_addr.value) >> (64 * c) & (1 << 64) - 1 == ch.wb
            halt_bit = (16 if c >= 4 else 0) + c % 4
            assert int(dut.ch_halt.value) >> c & 1 == model.halt >> halt_bit & 1
            src = bool(ch.status & ch.intmask & R.STAT_LOGGED_MASK)
            sts = (ch.control & 1) << 3 | src << 2 | (ch.status >> 1 & 1) << 1 | ch.status >> 2 & 1
            assert int(dut.ch_sts.value) >> (4 * c) & 0xF == sts, f"cycle {cycle}: ch_sts {c}"
        model.edge(None if req is None else req, inputs, events)
        await RisingEdge(dut.clk)
