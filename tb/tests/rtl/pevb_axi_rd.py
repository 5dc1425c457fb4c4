"""pevb_axi_rd alone: C2H write-TLP commands (PCIe address, length, card address, owner)
read from an AXI4 slave model with random ready, read data with random gaps and 4 KiB
windows that answer SLVERR or DECERR, and the buffered payloads read out as the
requester reads them (a TLP taken, then its beats with pay_rd_en, data a cycle later).
Checked against a byte model of the card's memory and AXI's rules:

- every TLP comes out once, in command order, with its PCIe address, length and owner,
  and its payload beats hold the card's bytes from the TLP's first payload lane (16
  header bytes and the PCIe address's low bits in), whole before it is offered;
- every burst is INCR, full width, word-aligned, at most 256 beats, within a 4 KiB page,
  with no more than BURSTS outstanding;
- a TLP whose read got SLVERR or DECERR is dropped with the XDMA read_error bits, and so
  is every TLP after it until restart, after which TLPs flow again.
"""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from driver_model.regs import AxiErr
from tb.config import bench_params
from tb.env.rtl_bench import PayloadReader, start

MEM_SIZE = 1 << 18
OKAY, SLVERR, DECERR = 0, 2, 3
ERR_BITS = {OKAY: 0, SLVERR: int(AxiErr.SLAVE), DECERR: int(AxiErr.DECODE)}
INPUTS = ("restart", "s_cmd_valid", "s_cmd_pcie_addr", "s_cmd_len", "s_cmd_card_addr")
INPUTS += ("s_cmd_slot", "m_tlp_ready", "pay_rd_en", "m_axi_arready", "m_axi_rid")
INPUTS += ("m_axi_rdata", "m_axi_rresp", "m_axi_rlast", "m_axi_rvalid")


class Bench:
    def __init__(self, dut, rng: random.Random) -> None:
        self.dut, self.rng = dut, rng
        p = bench_params()
        self.nbytes = p.get("DATA_WIDTH", 64) // 8
        self.bursts = p.get("BURSTS", 16)
        self.mem = rng.randbytes(MEM_SIZE)
        self.windows: dict[int, int] = {}
        self.out: list = []  # ("tlp", addr, len, slot, bytes) or ("drop", slot, err)

    def command(self) -> tuple[int, int, int, int]:
        rng = self.rng
        length = rng.choice([1, 3, 4, 8, 64, 128, 256, 512, rng.randrange(1, 4097)])
        card = rng.randrange(MEM_SIZE - length)
        pcie = rng.getrandbits(64)
        return pcie, length, card, rng.randrange(4)

    def error_of(self, card: int, length: int) -> int:
        err = 0
        for page in range(card >> 12, ((card + length - 1) >> 12) + 1):
            err |= ERR_BITS[self.windows.get(page, OKAY)]
        return err

    async def run(self, cmds: list, limit: int = 200000) -> None:
        """Issue ``cmds``, play the slave and the requester until each is out."""
        dut, rng, nbytes = self.dut, self.rng, self.nbytes
        reader = PayloadReader(dut, nbytes, rng, self.out)
        pending = deque(cmds)
        r_beats: deque = deque()  # (data, resp, last) to return, in order
        outstanding = 0
        total = len(self.out) + len(cmds)
        shown = None
        for _ in range(limit):
            cmd = pending[0] if pending and rng.random() < 0.7 else None
            dut.s_cmd_valid.value = int(cmd is not None)
            if cmd is not None:
                pcie, length, card, slot = cmd
                dut.s_cmd_pcie_addr.value, dut.s_cmd_len.value = pcie, length
                dut.s_cmd_card_addr.value, dut.s_cmd_slot.value = card, slot
            dut.m_axi_arready.value = arready = int(rng.random() < 0.6)
            if shown is None and r_beats and rng.random() < 0.7:
                shown = r_beats.popleft()
            dut.m_axi_rvalid.value = int(shown is not None)
            if shown is not None:
                dut.m_axi_rdata.value, dut.m_axi_rresp.value, dut.m_axi_rlast.value = shown
            reader.drive()
            await ReadOnly()
            if cmd is not None and int(dut.s_cmd_ready.value):
                pending.popleft()
            if int(dut.m_axi_arvalid.value) and arready:
                a, n = int(dut.m_axi_araddr.value), int(dut.m_axi_arlen.value) + 1
                assert int(dut.m_axi_arburst.value) == 1, "not an INCR burst"
                assert 1 << int(dut.m_axi_arsize.value) == nbytes, "not a full-width burst"
                assert a % nbytes == 0, f"burst at {a:#x} not word-aligned"
                assert a >> 12 == (a + n * nbytes - 1) >> 12, f"burst {a:#x}+{n} crosses 4 KiB"
                outstanding += 1
                assert outstanding <= self.bursts, f"{outstanding} bursts outstanding"
                resp = self.windows.get(a >> 12, OKAY)
                for k in range(n):
                    word = self.mem[a + k * nbytes : a + (k + 1) * nbytes]
                    r_beats.append((int.from_bytes(word, "little"), resp, int(k == n - 1)))
            if shown is not None and int(dut.m_axi_rready.value):
                outstanding -= shown[2]
                shown = None
            reader.sample()
            await RisingEdge(dut.clk)
            if len(self.out) == total and reader.idle:
                return
        raise AssertionError(f"{len(self.out)} of {total} TLPs out")

    def expected(self, cmds: list, dropping: bool = False) -> list:
        """What ``cmds`` should give: TLPs, or drops from the first failed read on."""
        out = []
        for pcie, length, card, slot in cmds:
            err = self.error_of(card, length)
            dropping = dropping or err != 0
            if dropping:
                out.append(("drop", slot, err))
            else:
                out.append(("tlp", pcie, length, slot, self.mem[card : card + length]))
        return out


@cocotb.test()
async def test_tlps_from_card_memory(dut):
    rng = random.Random(cocotb.RANDOM_SEED)
    bench = Bench(dut, rng)
    await start(dut, INPUTS)
    cmds = [bench.command() for _ in range(150)]
    await bench.run(cmds)
    assert bench.out == bench.expected(cmds), "TLPs differ from the card's memory"


@cocotb.test()
async def test_a_failed_read_drops_until_restart(dut):
    rng = random.Random(cocotb.RANDOM_SEED + 1)
    bench = Bench(dut, rng)
    await start(dut, INPUTS)
    for page in rng.sample(range(MEM_SIZE >> 12), 6):
        bench.windows[page] = rng.choice([SLVERR, DECERR])
    for _ in range(4):
        cmds = [bench.command() for _ in range(rng.randrange(5, 30))]
        before = len(bench.out)
        await bench.run(cmds)
        got, want = bench.out[before:], bench.expected(cmds)
        # (in brief: a TLP's length, a drop's error bits)
        brief = [o[:3:2] for o in got]
        assert got == want, (
            f"TLPs or drops differ:\n  got  {brief}\n  want {[o[:3:2] for o in want]}"
        )
        # a restart: TLPs flow again
        dut.restart.value = 1
        await RisingEdge(dut.clk)
        dut.restart.value = 0
    assert any(o[0] == "drop" and o[2] for o in bench.out), "no read failed"
    assert any(o[0] == "tlp" for o in bench.out)
