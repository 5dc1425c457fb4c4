"""The TLP trace: every TLP on every link as one JSON object per line, decoded (host
buffer, GPU BAR1 pin and VA, register names, MSI vectors, numbered descriptor fetches),
with data TLPs linked to their descriptors. See docs/internals.md for the record format.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from cocotbext.pcie.core.tlp import Tlp, TlpType

from cuda_model.gpu import BAR0, BAR1, BAR_NAMES, NV_PMC_BOOT_0
from driver_model import codegen, regs
from driver_model.desc import DESC_MAGIC, DESC_SIZE, DescFlag, Descriptor

from ..env.link import (
    COMPLETIONS,
    MEM_READS,
    MEM_WRITES,
    MESSAGES,
    UP,
    ends_request,
    request_key,
    status_name,
)
from ..models.intx import PINS, intx_of, message_name

TYPE_NAMES = {
    TlpType.MEM_READ: "MRd",
    TlpType.MEM_READ_64: "MRd",
    TlpType.MEM_WRITE: "MWr",
    TlpType.MEM_WRITE_64: "MWr",
    TlpType.CPL: "Cpl",
    TlpType.CPL_DATA: "CplD",
    TlpType.CFG_READ_0: "CfgRd0",
    TlpType.CFG_WRITE_0: "CfgWr0",
    TlpType.CFG_READ_1: "CfgRd1",
    TlpType.CFG_WRITE_1: "CfgWr1",
    TlpType.IO_READ: "IORd",
    TlpType.IO_WRITE: "IOWr",
}
MSI_BASE, MSI_SIZE = 0x8000_0000, 16  # cocotbext-pcie's root complex MSI region
USER_REGS = {regs.USER_LED: "LED", regs.USER_RAM_SIZE: "card RAM size"}
GPU_REGS = {NV_PMC_BOOT_0: "NV_PMC_BOOT_0"}
WALK_LIMIT = 1 << 16  # descriptors walked to count a chain (a ring that loops has no end)


def _dma_register_names() -> dict[int, str]:
    return {r.offset: r.name for r in codegen.register_table()}


class TlpTrace:
    """Decode and record TLPs; each of ``sinks`` receives each record (a dict)."""

    def __init__(
        self,
        tb,
        sink: Callable[[dict], None],
        clock: Callable[[], float],
        peek_host: Callable[[int, int], bytes | None] | None = None,
        buffers: list[tuple[int, int, str]] | None = None,
    ) -> None:
        self.tb = tb
        self.peek_host = peek_host
        self.sinks = [sink]
        self.clock = clock
        # named host memory, newest first (a TB's ``buffer_names``, shared)
        self.buffers = buffers if buffers is not None else []
        self.dma_names = _dma_register_names()
        # descriptor numbering: address -> (channel, chain number, index)
        self.desc_index: dict[int, tuple[str, int, int]] = {}
        self.chain_count = 0
        self._sg_lo: dict[str, int] = {}
        self._chain_first: dict[tuple[str, int], int] = {}
        self._chain_total: dict[tuple[str, int], int | None] = {}
        # fetched descriptors whose data is still moving, per channel, in chain order
        self._moving: dict[str, deque[dict]] = {"H2C": deque(), "C2H": deque()}
        self._outstanding: dict[tuple[str, str, int, int], dict] = {}
        self.records = 0
        # what the GPU was doing when it sent a request (tb.gpu_requester.name_of)
        requester = getattr(tb, "gpu_requester", None)
        self.gpu_names = requester.name_of if requester is not None else None

    # --- naming host memory -------------------------------------------------------------
    def name_buffer(self, base: int, size: int, name: str) -> None:
        """Host memory ``[base, base+size)`` is ``name`` in the trace."""
        self.buffers.insert(0, (base, size, name))

    # --- decoding -----------------------------------------------------------------------
    def decode(self, addr: int, nbytes: int, write: bool) -> dict:
        """What the address means: a dict with ``kind`` and ``label`` and details."""
        if addr in self.desc_index and not write:
            return self._desc_target(addr, nbytes)
        fpga = self.tb.dev.functions[0].match_bar(addr)
        if fpga is not None:
            bar, off = fpga
            if bar == self.tb.bars.user:
                name = USER_REGS.get(off, f"user+{off:#x}")
            else:
                name = self.dma_names.get(off, f"dma+{off:#x}")
            return {"kind": "fpga_reg", "bar": bar, "offset": off, "label": f"FPGA {name}"}
        gpu = self.tb.gpu_ep.match_bar(addr)
        if gpu is not None:
            bar, off = gpu
            if bar == BAR1:
                return self._bar1_target(off)
            name = GPU_REGS.get(off, f"+{off:#x}") if bar == BAR0 else f"+{off:#x}"
            label = f"GPU {BAR_NAMES.get(bar, f'slot {bar}')} {name}"
            return {"kind": "gpu_reg", "bar": bar, "offset": off, "label": label}
        if MSI_BASE <= addr < MSI_BASE + MSI_SIZE:
            return {"kind": "msi", "label": "MSI"}
        for base, size, name in self.buffers:
            if base <= addr < base + size:
                return {
                    "kind": "host",
                    "buffer": name,
                    "offset": addr - base,
                    "label": f"host {name}+{addr - base:#x}",
                }
        return {"kind": "host", "label": f"host {addr:#x}"}

    def _bar1_target(self, off: int) -> dict:
        gpu = self.tb.gpu
        page = off >> 16
        found = gpu.bar1_lookup(off)
        out: dict = {"kind": "gpu_bar1", "bar1_offset": off, "bar1_page": page}
        if found is None:
            out["label"] = f"GPU BAR1 page {page} (unmapped)"
            return out
        out["vram"] = found[0]
        live = gpu.bar1_page_pins(page)
        if live:
            pin = live[-1]
            va = pin.va + pin.bar1_pages.index(page) * 0x10000 + (off & 0xFFFF)
            out.update(pin=pin.pin_id, surface=pin.label, va=va, va_offset=va - pin.va)
            out["label"] = f"GPU BAR1 {pin.label} va+{va - pin.va:#x}"
        else:
            out["label"] = f"GPU BAR1 page {page} vram {found[0]:#x}"
        return out

    def _desc_target(self, addr: int, nbytes: int) -> dict:
        channel, chain, index = self.desc_index[addr]
        count = max(1, nbytes // DESC_SIZE)
        # adjacent descriptors of this chain (a ring reused by an older chain is renamed)
        for k in range(1, count):
            self.desc_index[addr + k * DESC_SIZE] = (channel, chain, index + k)
        last = index + count - 1
        span = f"{index}" if count == 1 else f"{index}-{last}"
        return {
            "kind": "desc",
            "channel": channel,
            "chain": chain,
            "first": index,
            "count": count,
            "label": f"desc {span} {channel} chain#{chain}",
        }

    # --- descriptor chains ----------------------------------------------------------------
    def _note_register_write(self, off: int, value: int) -> None:
        for d in (regs.Target.H2C, regs.Target.C2H):
            if off == regs.sg_reg(d, regs.SG_DESC_LO):
                self._sg_lo[d.name] = value
            elif off == regs.sg_reg(d, regs.SG_DESC_HI) and d.name in self._sg_lo:
                first = (value << 32) | self._sg_lo.pop(d.name)
                self.chain_count += 1
                self.desc_index[first] = (d.name, self.chain_count, 0)
                self._moving[d.name].clear()  # one chain at a time per channel
                self._chain_first[(d.name, self.chain_count)] = first

    def _note_descriptors(self, target: dict, data: bytes, first_addr: int) -> None:
        """Completion data of a descriptor fetch: number the descriptors that follow."""
        channel, chain = target["channel"], target["chain"]
        for k in range(len(data) // DESC_SIZE):
            addr = first_addr + k * DESC_SIZE
            known = self.desc_index.get(addr)
            if known is None:
                continue
            desc = Descriptor.decode(data[k * DESC_SIZE : (k + 1) * DESC_SIZE])
            if desc.magic != DESC_MAGIC:
                continue
            lo = desc.src if channel == "H2C" else desc.dst
            self._moving[channel].append(
                {
                    "chain": chain,
                    "index": known[2],
                    "lo": lo,
                    "hi": lo + desc.length,
                    "len": desc.length,
                    "src": desc.src,
                    "dst": desc.dst,
                    "done": 0,
                    "started": False,
                }
            )
            if desc.flags & DescFlag.STOP:
                self._emit(
                    {
                        "t": self.clock(),
                        "event": "chain",
                        "channel": channel,
                        "chain": chain,
                        "descriptors": known[2] + 1,
                    }
                )
            elif desc.next:
                self.desc_index[desc.next] = (channel, chain, known[2] + 1)

    def chain_length(self, channel: str, chain: int) -> int | None:
        """The number of descriptors of a chain, counted in host memory (None: unknown)."""
        key = (channel, chain)
        if key not in self._chain_total:
            self._chain_total[key] = self._walk(self._chain_first.get(key))
        return self._chain_total[key]

    def _walk(self, addr: int | None) -> int | None:
        if addr is None or self.peek_host is None:
            return None
        seen = set()
        while len(seen) < WALK_LIMIT and addr not in seen:
            seen.add(addr)
            raw = self.peek_host(addr, DESC_SIZE)
            if raw is None:
                return None
            desc = Descriptor.decode(raw)
            if desc.magic != DESC_MAGIC:
                return None
            if desc.flags & DescFlag.STOP:
                return len(seen)
            addr = desc.next
        return None

    def _data_descriptor(self, channel: str, addr: int, nbytes: int, label: str) -> dict | None:
        """The descriptor a data TLP of ``channel`` moves bytes for (the first one, in chain
        order, not yet fully requested that holds ``addr``); emits its ``desc`` event when
        this is its first TLP."""
        moving = self._moving[channel]
        while moving and moving[0]["done"] >= moving[0]["len"]:
            moving.popleft()
        for d in moving:
            if d["done"] < d["len"] and d["lo"] <= addr < d["hi"]:
                if not d["started"]:
                    d["started"] = True
                    self._emit(
                        {
                            "t": self.clock(),
                            "event": "desc",
                            "channel": channel,
                            "chain": d["chain"],
                            "index": d["index"],
                            "total": self.chain_length(channel, d["chain"]),
                            "len": d["len"],
                            "src": d["src"],
                            "dst": d["dst"],
                            "pcie": label,
                        }
                    )
                d["done"] += nbytes
                return d
        return None

    # --- the observer ---------------------------------------------------------------------
    def observe(self, link: str, direction: str, tlp: Tlp) -> None:
        ft = tlp.fmt_type
        rec: dict = {
            "t": self.clock(),
            "link": link,
            "dir": direction,
            "type": TYPE_NAMES.get(ft, getattr(ft, "name", str(ft))),
            "req": str(tlp.requester_id),
            "tag": tlp.tag,
        }
        key = request_key(link, direction, tlp)
        if ft in COMPLETIONS:
            pending = self._outstanding.get(key)
            rec.update(
                cpl=str(tlp.completer_id),
                status=status_name(tlp.status),
                len=len(tlp.data),
                bc=tlp.byte_count,
                la=tlp.lower_address,
            )
            if tlp.ep:
                rec["ep"] = True
            if pending is not None:
                rec["target"] = pending["target"]
                rec["off"] = pending["done"]
                if pending.get("by"):
                    rec["by"] = pending["by"]
                if (
                    pending["target"]["kind"] == "desc"
                    and ft == TlpType.CPL_DATA
                    and link == "fpga"
                ):  # once, where the FPGA receives it
                    offset = pending["addr"] + pending["done"]
                    body = bytes(tlp.data[tlp.lower_address & 3 :])
                    self._note_descriptors(pending["target"], body, offset)
                pending["done"] += max(0, len(tlp.data) - (tlp.lower_address & 3))
                if ends_request(tlp):
                    del self._outstanding[key]
        elif ft in MEM_READS or ft in MEM_WRITES:
            addr = tlp.address + tlp.get_first_be_offset()
            nbytes = tlp.get_be_byte_count()
            write = ft in MEM_WRITES
            if not write and tlp.length == 1 and tlp.first_be == 0:
                addr, nbytes = tlp.address, 0  # a zero-length read (a flush)
            target = self.decode(addr, nbytes, write)
            rec.update(addr=addr, len=nbytes, target=target)
            by = self.gpu_names(tlp) if self.gpu_names is not None else None
            if by is not None:  # a request of the GPU: what it was doing, which range
                rec["by"] = by.who
                if by.range:
                    rec["range"] = by.range
                if tlp.attr & 0x2:
                    rec["ro"] = True
            if link == "fpga" and direction == UP and target["kind"] in ("host", "gpu_bar1"):
                d = self._data_descriptor("C2H" if write else "H2C", addr, nbytes, target["label"])
                if d is not None:
                    rec["desc"] = ["C2H" if write else "H2C", d["chain"], d["index"]]
            if write and target["kind"] == "fpga_reg" and target["bar"] == 1 and nbytes == 4:
                self._note_register_write(target["offset"], int.from_bytes(tlp.data[:4], "little"))
            if write and target["kind"] == "msi":
                target["vector"] = int.from_bytes(tlp.data[:2], "little")
                target["label"] = f"MSI vector {target['vector']}"
            if not write:
                self._outstanding[key] = {"target": target, "addr": addr, "done": 0}
                if by is not None:
                    self._outstanding[key]["by"] = by.who
        elif ft in MESSAGES:  # a message: by its code (Assert_INTA, Deassert_INTA)
            intx = intx_of(tlp)
            if intx is None:
                rec["type"] = message_name(tlp)
                rec["target"] = {"kind": "message", "label": "message"}
            else:
                pin, asserted = intx
                rec["type"] = f"{'Assert' if asserted else 'Deassert'}_INT{PINS[pin]}"
                label = f"INT{PINS[pin]} {'asserted' if asserted else 'deasserted'}"
                rec["target"] = {"kind": "intx", "label": label}
        else:  # configuration (and I/O) requests: the function and register
            target = {"kind": "config", "label": f"config {tlp.completer_id} +{tlp.address:#x}"}
            if tlp.is_nonposted():
                self._outstanding[key] = {"target": target, "addr": 0, "done": 0}
            rec["target"] = target
        self._emit(rec)

    def _emit(self, rec: dict) -> None:
        self.records += 1
        for sink in self.sinks:
            sink(rec)

    def event(self, rec: dict) -> None:
        """Send a record of something other than a TLP (``rec["event"]`` names what: a
        ``gpu`` command of the guest's GPU) to the sinks, in order with the TLPs'."""
        self._emit(rec)


def enable_trace(tb, sink: Callable[[dict], None]) -> TlpTrace:
    """Send a decoded record of every TLP on every link of ``tb`` (a
    :class:`tb.env.system.TB`) to ``sink``, as well as to the sinks already there."""
    if tb.trace is not None:
        tb.trace.sinks.append(sink)
        return tb.trace
    from cocotb.utils import get_sim_time

    tb.trace = TlpTrace(tb, sink, lambda: get_sim_time("ns"), tb.peek_host, tb.buffer_names)
    tb.links.add_observer(tb.trace.observe, passive=True)
    return tb.trace


class JsonLinesSink:
    """Writes records to a file, one JSON object per line (flushed as it goes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f: TextIO = open(path, "w", buffering=1 << 16)

    def __call__(self, rec: dict) -> None:
        self._f.write(json.dumps(rec, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self._f.close()
