"""The system under test: a cocotbext-pcie root complex and the FPGA (hard-IP model + DUT).

``TB`` owns every clock, reset, BFM and monitor; tests never start clocks themselves. All
waits have timeouts.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import logging
import os
import random
import warnings
from collections.abc import Awaitable, Callable, Iterator

import cocotb
from cocotb.triggers import RisingEdge, Timer, with_timeout
from cocotb.utils import get_sim_time
from cocotbext.axi import AxiStreamBus
from cocotbext.pcie.core import RootComplex, Switch
from cocotbext.pcie.core.caps import PciCapId

from cuda_model import CudaRuntime, Gpu, NvidiaP2P
from driver_model.dmabuf import DmaBufCore
from driver_model.regs import (
    BAR_DMA_SIZE,
    BAR_USER_SIZE,
    MSIX_PBA_OFFSET,
    MSIX_VECTORS,
    Target,
    block_base,
)

from .. import models as sim_models
from ..config.build import current, current_profile
from ..config.choices import PLUGINS_ENV
from ..config.options import PICOEVB_IDS, xdma_ids
from ..config.profiles import Profile, get_profile
from ..models.cfg_ext import SIGNALS as CFG_EXT_SIGNALS
from ..models.cfg_ext import CfgExt
from ..models.choice import MODEL_ENV, TRANSACTOR_MODEL, check, model_for_build, models
from ..models.hardip import DEFAULT_CPL_TIMEOUT_NS, PevbUspDevice
from ..models.intx import INTX_MESSAGES, IntxFabric, intx_of
from ..models.pcie_id import SIGNALS as PCIE_ID_SIGNALS
from ..models.pcie_id import ids_from_ports
from ..models.rc import fix_zero_length_reads
from ..models.switch import set_ro_passing
from ..models.transactors import TRANSACTORS, TransactorError
from .backdoor import card
from .compiled_checker import make_checker
from .faults import FaultInjector, UpstreamFaultInjector
from .gpu_endpoint import make_gpu_device
from .gpu_requester import CocotbTime, GpuRequester
from .link import DOWN, MEM_READS, MEM_WRITES, UP, LinkTaps, describe
from .native import arm as arm_native
from .user_cfg import UserConfigSpace

# PCIe Device Control register (PCIe capability + 0x08)
DEVCTL = 0x08
DEVCTL_MPS_SHIFT = 5
DEVCTL_EXT_TAG = 1 << 8
DEVCTL_MRRS_SHIFT = 12

MSI_VECTORS = 32
# the card's legacy interrupt: how long after its handlers a line still asserted is
# looked at again (an interrupt controller's resample after EOI), and how many rounds
# that leave it asserted disable it
INTX_RESAMPLE_NS = 200
INTX_STORM = 1000

# cocotbext-pcie logs every TLP and frame at INFO/DEBUG
_NOISY_LOGGERS = ("cocotb.pcie", "cocotb.pevb_dma_top", "cuda_model")


def is_picoevb(dut) -> bool:
    """Whether ``dut`` is the picoevb card (its GPIO block is there) rather than the
    drop-in or a design around it."""
    core = card(dut)
    return hasattr(core, "gpio_inst") and hasattr(core, "card_ram_inst")


class _DropEnumerationNoise(logging.Filter):
    """Enumeration probes every device number of every bus; the root complex and switch
    log each unanswered probe as a warning. They are expected: drop them."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to route config type 0")


_ENUM_FILTER = _DropEnumerationNoise()


def _size_code(nbytes: int) -> int:
    code = (nbytes // 128).bit_length() - 1
    if nbytes not in (128, 256, 512, 1024, 2048, 4096):
        raise ValueError(f"{nbytes} is not a PCIe payload/read request size")
    return code


def pause_pattern(seed: int, duty: float = 0.3) -> Iterator[int]:
    """An endless, seeded pause generator (1 = pause this cycle)."""
    rng = random.Random(seed)
    while True:
        yield int(rng.random() < duty)


class TB:
    """Root complex, the FPGA (UltraScale+ hard-IP model bound to ``pevb_dma_top``) and the
    GPU (``cuda_model`` endpoint), under one switch or on two root ports.

    ``tb.gpu`` / ``tb.cuda`` / ``tb.p2p`` are the GPU model, its CUDA runtime and its nv-p2p
    API. ``topology`` defaults to ``$PEVB_TOPOLOGY`` or ``switch``; ``model`` (the links'
    and hard-IP interfaces', :mod:`tb.models.choice`) to ``$PEVB_MODEL`` or, unnamed, the
    fastest the build runs (:func:`tb.models.choice.model_for_build`).

    Every link is tapped (``tb.links``, links ``fpga``, ``gpu`` and, under a switch,
    ``switch``); ``tb.checker`` checks the PCIe rules on all of them and fails the test on a
    violation (``checker_mode="record"`` collects instead). ``tb.faults`` injects faults
    into the completions the FPGA receives, ``tb.up_faults`` into the writes and register
    completions it sends; the hard IP times requests out after ``cpl_timeout_ns`` (Device
    Control 2's default range). ``profile`` defaults to the build's (:func:`current_profile`).

    Debug sinks (the TLP trace, the waveform's text tracks) are not built in: the modules
    named in ``$PEVB_PLUGINS`` attach them (``attach(tb)``), or a test does
    (:func:`tb.debug.trace.enable_trace`). ``tb.trace`` is the trace once one is attached;
    ``tb.buffer_names`` names host memory ranges for it.
    """

    def __init__(
        self,
        dut,
        profile: Profile | str | None = None,
        topology: str | None = None,
        gpu_vram: int = 16 << 30,
        gpu_bar1: int = 256 << 20,
        checker_mode: str = "raise",
        cpl_timeout_ns: float = DEFAULT_CPL_TIMEOUT_NS,
        fault_seed: int = 1,
        hip=None,
        model: str | None = None,
    ) -> None:
        self.dut = dut
        hip = self.hip_of(dut) if hip is None else hip
        # transactors, the default (tb/models/transactors.py: the streams through
        # RTL-side transactors, on a build that has them), exact (cocotbext-pcie's own:
        # every DLLP, two coroutines per interface and beat), or unnamed on a build
        # without the transactors the beat-level streams (tb/models/streams.py); the
        # extensions first (the fast paths; on an unverified cocotbext-pcie, exact, which
        # a transactor build cannot run)
        built_xact = hasattr(hip, TRANSACTORS["s_axis_cq"])
        # a model named here may be any a system runs; else the build configuration's
        if model is None:
            model = current().named_model
        if model is not None:
            self.model = check(model, runnable=True)
        else:
            self.model = model_for_build(built_xact)
            if not built_xact:
                logging.getLogger("cocotb.tb").info(
                    "model %s: the build has no hard-IP transactors (the %s model needs "
                    "a build with them)",
                    self.model,
                    TRANSACTOR_MODEL,
                )
        if built_xact != (self.model == TRANSACTOR_MODEL):
            raise TransactorError(
                f"model {self.model!r} on a build {'with' if built_xact else 'without'} "
                f"the hard-IP transactors: build with {MODEL_ENV}={self.model}"
            )
        if not sim_models.install() and self.model != "exact":
            if built_xact:
                raise TransactorError("the transactor model needs a verified cocotbext-pcie")
            self.model = "exact"
        with models(self.model):
            self._build(dut, profile, topology, gpu_vram, gpu_bar1, cpl_timeout_ns, hip)
        self._attach(checker_mode, fault_seed)

    def engine_busy(self) -> bool:
        """Whether a DMA channel of the card's engine runs: its ``ch_busy`` (each
        channel's status Busy bit) read from the RTL, the picoevb card's
        (``xdma_0.xdma_inst``) or the drop-in's (``ip.xdma_inst``); False for a design
        without the engine."""
        if not hasattr(self, "_ch_busy"):
            top = card(self.dut)
            self._ch_busy = None
            for path in (("xdma_0", "xdma_inst", "ch_busy"), ("ip", "xdma_inst", "ch_busy")):
                h = top
                try:
                    for name in path:
                        h = getattr(h, name)
                except AttributeError:
                    continue
                self._ch_busy = h
                logging.getLogger("cocotb.tb").info("engine busy: %s", ".".join(path))
                break
        return self._ch_busy is not None and "1" in str(self._ch_busy.value)

    @staticmethod
    def hip_of(dut):
        """The hard IP's user interface of a card toplevel: its own ports, or in the
        transactor model's wrapper its ``hip`` (a drop-in's is ``<instance>.hip``)."""
        return dut if card(dut) is dut else dut.hip

    def _build(self, dut, profile, topology, gpu_vram, gpu_bar1, cpl_timeout_ns, hip) -> None:
        """The cocotbext-pcie objects: root complex, FPGA hard IP, GPU, switch."""
        self.hip = hip
        if profile is None:
            self.profile = current_profile()
        else:
            self.profile = get_profile(profile) if isinstance(profile, str) else profile
        self.log = logging.getLogger("cocotb.tb")
        self.log.setLevel(logging.INFO)
        level = os.environ.get("PCIE_LOG_LEVEL", "WARNING").upper()
        for name in _NOISY_LOGGERS:
            logging.getLogger(name).setLevel(level)
        # the loggers are per instance (named with an id), so filter at the handlers
        for handler in logging.getLogger().handlers:
            handler.addFilter(_ENUM_FILTER)
        # cocotbext-pcie still uses cocotb 1.x calls; their deprecation notes are not ours
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"cocotbext\.")

        width = len(hip.m_axis_rq_tdata)
        assert width == self.profile.width, (
            f"DUT built with {width}-bit streams but profile {self.profile.name} wants "
            f"{self.profile.width}"
        )

        self.rc = RootComplex()
        fix_zero_length_reads(self.rc)
        self.rc.max_payload_size = _size_code(self.profile.mps)
        self.rc.max_read_request_size = _size_code(self.profile.mrrs)

        p = self.profile
        self.bars = bars = p.bars
        self.dev = PevbUspDevice(
            cpl_timeout_ns=cpl_timeout_ns,
            pcie_generation=p.gen,
            pcie_link_width=p.lanes,
            user_clk_frequency=p.user_clk_hz,
            alignment="dword",
            cq_straddle=False,
            cc_straddle=False,
            rq_straddle=False,
            rc_straddle=False,
            rc_4tlp_straddle=False,
            pf_count=1,
            max_payload_size=p.mps,
            enable_client_tag=True,
            enable_extended_tag=False,
            enable_parity=False,
            enable_rx_msg_interface=False,
            enable_sriov=False,
            enable_extended_configuration=False,
            pf0_msi_enable=True,
            pf0_msi_count=MSI_VECTORS,
            # the engine's MSI-X table and PBA in the DMA BAR (PG195), when built with them
            pf0_msix_enable=bool(p.msix),
            pf0_msix_table_size=MSIX_VECTORS - 1,
            pf0_msix_table_bir=bars.dma,
            pf0_msix_table_offset=block_base(Target.MSIX),
            pf0_msix_pba_bir=bars.dma,
            pf0_msix_pba_offset=MSIX_PBA_OFFSET,
            user_clk=hip.user_clk,
            user_reset=hip.user_reset,
            user_lnk_up=getattr(hip, "user_lnk_up", None),
            rq_bus=AxiStreamBus.from_prefix(hip, "m_axis_rq"),
            rc_bus=AxiStreamBus.from_prefix(hip, "s_axis_rc"),
            cq_bus=AxiStreamBus.from_prefix(hip, "s_axis_cq"),
            pcie_cq_np_req=hip.pcie_cq_np_req,
            cc_bus=AxiStreamBus.from_prefix(hip, "m_axis_cc"),
            cfg_max_payload=hip.cfg_max_payload,
            cfg_max_read_req=hip.cfg_max_read_req,
            cfg_bus_number=hip.cfg_bus_number,
            cfg_function_status=getattr(hip, "cfg_function_status", None),
            cfg_config_space_enable=hip.cfg_config_space_enable,
            cfg_interrupt_msi_enable=hip.cfg_interrupt_msi_enable,
            cfg_interrupt_msi_mmenable=hip.cfg_interrupt_msi_mmenable,
            cfg_interrupt_msi_int=hip.cfg_interrupt_msi_int,
            cfg_interrupt_msi_sent=hip.cfg_interrupt_msi_sent,
            cfg_interrupt_msi_fail=hip.cfg_interrupt_msi_fail,
            cfg_interrupt_msi_function_number=hip.cfg_interrupt_msi_function_number,
            cfg_interrupt_msix_enable=hip.cfg_interrupt_msix_enable,
            cfg_interrupt_msix_mask=hip.cfg_interrupt_msix_mask,
            cfg_interrupt_msix_address=hip.cfg_interrupt_msix_address,
            cfg_interrupt_msix_data=hip.cfg_interrupt_msix_data,
            cfg_interrupt_msix_int=hip.cfg_interrupt_msix_int,
            cfg_interrupt_msix_sent=hip.cfg_interrupt_msix_sent,
            cfg_interrupt_msix_fail=hip.cfg_interrupt_msix_fail,
            # legacy interrupts, when the design has the interface (the card and the
            # drop-in do: their Interrupt Pin is then INTA)
            cfg_interrupt_int=getattr(hip, "cfg_interrupt_int", None),
            cfg_interrupt_sent=getattr(hip, "cfg_interrupt_sent", None),
            cfg_interrupt_pending=getattr(hip, "cfg_interrupt_pending", None),
            # a user's design without the FLR ports gets no FLR capability
            cfg_flr_in_process=getattr(hip, "cfg_flr_in_process", None),
            cfg_flr_done=getattr(hip, "cfg_flr_done", None),
            # the drop-in's configuration management interface, when built with it
            # (Vivado's cfg_mgmt_if): the model only watches it then
            **self._cfg_mgmt_signals(hip, p),
        )
        # the drop-in's configuration extend interface, when built with it (cfg_ext_if)
        self.cfg_ext: CfgExt | None = None
        if p.extra.get("CFG_EXT") and hasattr(hip, "cfg_ext_read_received"):
            self.cfg_ext = CfgExt(
                self.dev,
                {n: getattr(hip, f"cfg_ext_{n}") for n in CFG_EXT_SIGNALS},
                legacy=bool(p.extra.get("CFG_EXT_LEGACY")),
                extended=bool(p.extra.get("CFG_EXT_EXTENDED")),
            )
        self.dev.log.setLevel(level)
        for bus in (self.dev.rq_sink, self.dev.rc_source, self.dev.cq_source, self.dev.cc_sink):
            bus.log.setLevel(level)

        # the user-side inputs of the card or of the drop-in as toplevel (in a user's own
        # design, its logic drives them): user interrupt requests idle until a test raises
        # one, stream ports idle until a test attaches a source or a sink; the drop-in's
        # options idle too (Verilator reads an open input as 0): the soft reset released,
        # the AXI4-Lite slave and configuration management idle until a test drives them
        self.user_cfg: UserConfigSpace | None = None
        if hip is dut or hasattr(dut, "hip"):
            dut.usr_irq_req.value = 0
            for n in range(4):
                getattr(dut, f"s_axis_c2h_tvalid_{n}").value = 0
                getattr(dut, f"m_axis_h2c_tready_{n}").value = 0
            if hasattr(dut, "dma_bridge_resetn"):
                dut.dma_bridge_resetn.value = 1
                for sig in ("awvalid", "wvalid", "arvalid", "bready", "rready"):
                    getattr(dut, f"s_axil_{sig}").value = 0
                dut.cfg_mgmt_read.value = 0
                dut.cfg_mgmt_write.value = 0
            # configuration extend: the user's registers answered as a design would
            # (a vendor-specific capability in each range the build enables)
            if self.cfg_ext is not None:
                ext_ = self.cfg_ext
                self.user_cfg = UserConfigSpace(dut, hip.user_clk, ext_.legacy, ext_.extended)

        # the picoevb card has the real card's IDs; the drop-in (alone or in a design)
        # the Vivado IP's defaults, or the ID options of its build
        ids = PICOEVB_IDS if is_picoevb(dut) else xdma_ids(p)
        f0 = self.dev.functions[0]
        f0.vendor_id, f0.device_id, f0.revision_id = ids[0], ids[1], ids[2]
        f0.subsystem_vendor_id, f0.subsystem_id, f0.class_code = ids[3], ids[4], ids[5]
        # the BARs: the AXI4-Lite master's (the user BAR), the DMA's, and the drop-in's
        # PCIe-to-DMA bypass BAR when built with it (Vivado's axist_bypass_en), each
        # 32- or 64-bit and prefetchable or not as the build's options say
        sizes = {
            bars.user: BAR_USER_SIZE,
            bars.dma: BAR_DMA_SIZE,
            bars.axib: 1 << p.extra.get("AXIB_BAR_ADDR_WIDTH", 20),
        }
        for bar, size in sizes.items():
            if bar is not None:
                self.dev.functions[0].configure_bar(
                    bar, size, ext=bar in bars.wide, prefetch=bar in bars.prefetchable
                )
        # the drop-in's PCIe ID interface, when built with it (Vivado's pcie_id_if): the
        # IDs come from its ports, which a drop-in under test drives with the TB's own
        if p.extra.get("PCIE_ID_IF") and hasattr(hip, "cfg_vend_id"):
            f0 = self.dev.functions[0]
            ids_from_ports(f0, {n: getattr(hip, f"cfg_{n}") for n in PCIE_ID_SIGNALS}, self.log)
            if hip is dut or hasattr(dut, "hip"):
                dut.cfg_vend_id.value = f0.vendor_id
                dut.cfg_dev_id_pf0.value = f0.device_id
                dut.cfg_rev_id_pf0.value = f0.revision_id
                dut.cfg_subsys_vend_id.value = f0.subsystem_vendor_id
                dut.cfg_subsys_id_pf0.value = f0.subsystem_id

        # the GPU peer and the topology: one switch above both (default), or each on its
        # own root port of the root complex
        self.gpu = Gpu(vram_size=gpu_vram, bar1_size=gpu_bar1)
        self.cuda = CudaRuntime(self.gpu)
        self.p2p = NvidiaP2P(self.gpu)
        # the kernel's dma-buf core: nvidia.ko exports through it, drivers import
        self.dmabuf = DmaBufCore()
        self.gpu_dev, self.gpu_ep = make_gpu_device(self.gpu)
        # the GPU's own work runs on the simulator's clock, its requests go out as TLPs
        self.gpu_requester = GpuRequester(self.gpu_ep)
        self.gpu.device_time = CocotbTime()
        self.gpu.bus = self.gpu_requester
        self.topology = topology or os.environ.get("PEVB_TOPOLOGY", "switch")
        if self.topology == "switch":
            self.switch = Switch()
            self.rc.make_port().connect(self.switch)
            self.switch.make_port().connect(self.dev)
            self.switch.make_port().connect(self.gpu_dev)
        elif self.topology == "root_ports":
            self.switch = None
            self.rc.make_port().connect(self.dev)
            self.rc.make_port().connect(self.gpu_dev)
        else:
            raise ValueError(f"unknown topology {self.topology!r}: switch or root_ports")
        # the INTx virtual wires of every port, up to the root complex's lines
        self.intx = IntxFabric(self.rc, [self.switch] if self.switch is not None else [])
        self.gpu_pci = None

    @staticmethod
    def _cfg_mgmt_signals(hip, p: Profile) -> dict[str, object]:
        if not p.extra.get("CFG_MGMT") or not hasattr(hip, "cfg_mgmt_addr"):
            return {}
        names = ("addr", "function_number", "write", "write_data", "byte_enable", "read")
        names += ("read_data", "read_write_done", "debug_access")
        return {f"cfg_mgmt_{n}": getattr(hip, f"cfg_mgmt_{n}") for n in names}

    def set_relaxed_passing(self, on: bool = True) -> None:
        """Let a posted write with relaxed ordering (RO) pass posted writes waiting at a
        switch or root port's egress, as PCIe allows (off: all in order). The TLP-level
        fabric only: ``ValueError`` on the exact model's cocotbext-pcie switches."""
        switches = [s for s in (self.switch, self.rc) if s is not None]
        ports = [p for s in switches for p in s.switch_ports]
        if not ports or not all(hasattr(p, "ro_passing") for p in ports):
            raise ValueError("relaxed-ordering passing needs the TLP-level fabric models")
        for p in ports:
            set_ro_passing(p, on)

    def _register_width(self, link: str, direction: str, tlp) -> None:
        """The rule "xdma-register-width": PG195 allows only 32-bit accesses of the DMA
        register space, and the engine drops a longer write and completes a longer read
        with Completer Abort, as the IP does. Legal PCIe, so the checker names it: a
        GPU's 64-bit store, a coalesced warp store or a widened load to a register is a
        bug of the design that issued it (a test that does it on purpose expects it)."""
        if link != "fpga" or direction != DOWN or tlp.fmt_type not in MEM_READS | MEM_WRITES:
            return
        if tlp.length <= 1:
            return
        hit = self.dev.functions[0].match_bar(tlp.address)
        if hit is None or hit[0] != self.bars.dma:
            return
        what = "write is dropped" if tlp.fmt_type in MEM_WRITES else "read completes with CA"
        self.checker.report(
            link,
            direction,
            "xdma-register-width",
            f"a {tlp.length}-DW access of DMA register {hit[1]:#x}: the XDMA register space "
            f"takes 32-bit accesses only (PG195); this {what}",
            describe(tlp),
        )

    def _intx_rules(self, link: str, direction: str, tlp) -> None:
        """The rules "intx-with-msi", "intx-disabled" and "intx-pin": the card asserts
        INTx only with MSI and MSI-X both off and its Interrupt Disable clear, and only
        on its Interrupt Pin (PCIe Base 6.1.4.3, 7.5.1.1.3)."""
        intx = intx_of(tlp) if link == "fpga" and direction == UP else None
        if intx is None or not intx[1]:
            return
        f = self.dev.functions[0]
        msi, msix = getattr(f, "msi_cap", None), getattr(f, "msix_cap", None)
        broken = []
        if (msi is not None and msi.msi_enable) or (msix is not None and msix.msix_enable):
            broken.append(("intx-with-msi", "INTx asserted while MSI or MSI-X is enabled"))
        if f.interrupt_disable:
            broken.append(("intx-disabled", "INTx asserted with Interrupt Disable set"))
        if intx[0] + 1 != f.interrupt_pin:
            broken.append(
                ("intx-pin", f"INTx pin {intx[0]} asserted; Interrupt Pin {f.interrupt_pin}")
            )
        for rule, message in broken:
            self.checker.report(link, direction, rule, message, describe(tlp))

    def _attach(self, checker_mode: str, fault_seed: int) -> None:
        """Taps, the protocol checker, fault injectors and the TB's own state."""
        p = self.profile
        # taps on every link, the protocol checker, and the fault injector in front of the
        # FPGA (so the checker sees what the FPGA receives)
        self.links = LinkTaps()
        self.links.tap("fpga", self.dev.upstream_port)
        self.links.tap("gpu", self.gpu_dev.upstream_port)
        if self.switch is not None:
            self.links.tap("switch", self.switch.upstream_bridge.upstream_port)
        self.checker = make_checker(p.mps, p.mrrs, rcb=64, mode=checker_mode)
        self.checker.clock = lambda: get_sim_time("ns")
        self.links.add_observer(self.checker.observe)
        # requests the RTL hands the hard IP that it cannot send: the checker names them
        self.dev.on_violation = lambda rule, message, what: self.checker.report(
            "fpga", "rq", rule, message, what
        )
        # the XDMA register BAR takes 32-bit accesses only: a wider one is named
        self.links.add_observer(
            self._register_width, links=("fpga",), directions=(DOWN,), types=MEM_READS | MEM_WRITES
        )
        # and INTx only as the function's configuration allows
        self.links.add_observer(
            self._intx_rules, links=("fpga",), directions=(UP,), types=INTX_MESSAGES
        )
        self.faults = FaultInjector(self.dev.upstream_port, "fpga", seed=fault_seed)
        self.links.add_observer(self.faults.observe, **self.faults.wants)
        # the bridge above the FPGA: its Secondary Bus Reset is a hot reset of the card
        self._watch_bus_reset(self.links.links["fpga"].upper.parent)
        # and behind the FPGA's link, on what it sends (before the checker sees it)
        self.up_faults = UpstreamFaultInjector(self.links.links["fpga"].upper, self.faults)
        msi = self.rc.msi_region
        self.faults.name_range(msi.get_absolute_address(0), msi.size, "msi")
        self.dev.timeout_listeners.append(
            lambda rid, tag: self.checker.requester_timeout("fpga", UP, rid, tag)
        )
        self.dev.timeout_listeners.append(self.faults.forget)
        self.gpu_requester.timeout_listeners.append(self.checker.requester_gave_up)
        # on the compiled data path, the library's TLPs cross the switches without Python
        # where nothing above wants them there
        arm_native(self)
        self.log.info(
            "topology: %s (FPGA and GPU %s)",
            self.topology,
            "under one switch" if self.switch else "on two root ports",
        )

        self.pci = None
        self.user_bar = None
        self.dma_bar = None
        self.msi_count = [0] * MSI_VECTORS
        self.msi_masked: set[int] = set()
        self.msi_lost = [0] * MSI_VECTORS
        self.irq_handlers: list[list[Callable[[], None]]] = [[] for _ in range(MSI_VECTORS)]
        self._irq_requested: set[int] = set()
        # the card's legacy interrupt: its line at the root complex (its INTA after the
        # switch's swizzle), the handlers run while it is asserted, how often they ran
        fpga_port = self.links.links["fpga"].upper.parent
        self.intx_line = self.intx.line_of(fpga_port, 0)
        self.intx_handlers: list[Callable[[], Awaitable[None] | None]] = []
        self.intx_count = 0
        self.intx_enabled = False
        self.intx_storms = 0
        self._intx_serving = False
        self.intx.watch(self.intx_line, self._intx_changed)
        self.dev.link_down_listeners.append(lambda: self.intx.link_down(fpga_port))
        self._mem_regions: list = []
        # (base, size, name) of named host memory, newest first (the TLP trace reads it)
        self.buffer_names: list[tuple[int, int, str]] = []
        self.trace = None  # a tb.debug.trace.TlpTrace once one is attached
        for name in filter(None, os.environ.get(PLUGINS_ENV, "").split(",")):
            importlib.import_module(name.strip()).attach(self)

    def _watch_bus_reset(self, bridge) -> None:
        write = bridge.write_config_register

        async def write_config_register(reg: int, data: int, mask: int) -> None:
            await write(reg, data, mask)
            self.dev.set_hot_reset(bool(bridge.secondary_bus_reset))

        bridge.write_config_register = write_config_register

    @property
    def clock_period_ns(self) -> float:
        """User clock period in ns."""
        return 1e9 / self.profile.user_clk_hz

    async def cycle_reset(self) -> None:
        """Wait for the hard IP's user reset to come out (it starts in reset)."""

        async def _wait() -> None:
            await RisingEdge(self.hip.user_clk)
            while True:
                await RisingEdge(self.hip.user_clk)
                if self.hip.user_reset.value.is_resolvable and not int(self.hip.user_reset.value):
                    break
            for _ in range(4):
                await RisingEdge(self.hip.user_clk)

        await with_timeout(_wait(), 100, "us")

    async def init(self, bind: bool = True, irq: str = "msi") -> None:
        """Reset, enumerate, program MPS/MRRS; with ``bind`` also enable the function, bus
        mastering and its interrupts, ``irq`` "msi", "msix" or "intx" (the legacy
        interrupt, its handlers in ``intx_handlers``; a driver model does that itself:
        ``bind=False``)."""
        await self.cycle_reset()
        await with_timeout(self.rc.enumerate(), 2, "ms")
        self.pci = self.rc.find_device(self.dev.functions[0].pcie_id)
        assert self.pci is not None, "FPGA function not found by enumeration"
        await self.program_device_control(self.profile.mps, self.profile.mrrs)
        # the FPGA's tags are as wide as its Device Control allows (the checker's rule)
        f0 = self.dev.functions[0]
        self.checker.tag_bits[int(f0.pcie_id)] = 8 if f0.pcie_cap.extended_tag_field_enable else 5
        if bind:
            await self.pci.enable_device()
            await self.pci.set_master()
            if irq == "intx":
                self.enable_intx()
            else:
                nvec = await self.enable_msi(1, MSI_VECTORS, msix=irq == "msix")
                assert nvec >= 1, f"{irq.upper()} vector allocation failed"
        self.gpu_pci = self.rc.find_device(self.gpu_ep.pcie_id)
        assert self.gpu_pci is not None, "GPU function not found by enumeration"
        await self.gpu_pci.enable_device()
        await self.gpu_pci.set_master()  # (nvidia.ko does: the GPU is a requester too)
        self.gpu_ep.pcie_cap.max_payload_size = _size_code(self.profile.mps)
        self.gpu_ep.pcie_cap.max_read_request_size = _size_code(self.profile.mrrs)
        self.faults.name_range(self.gpu_ep.bar1_bus_address(), self.gpu.bar1_size, "gpu")
        self.user_bar = None if self.bars.user is None else self.pci.bar_window[self.bars.user]
        self.dma_bar = self.pci.bar_window[self.bars.dma]
        # let the config status reach the DUT
        for _ in range(8):
            await RisingEdge(self.hip.user_clk)

    async def enable_msi(self, min_vecs: int, max_vecs: int, msix: bool = False) -> int:
        """Enable MSI (or with ``msix`` MSI-X, which programs the engine's table) on the
        FPGA function; the vectors granted (< 1: failure), each counted by the TB and
        dispatched to ``irq_handlers[vector]``."""
        if msix and not self.profile.msix:
            raise ValueError(f"the DUT is built without MSI-X (profile {self.profile.name})")
        enable = self.pci.enable_msix_range if msix else self.pci.enable_msi_range
        args = (min_vecs, max_vecs, 0) if msix else (min_vecs, max_vecs)
        nvec = await with_timeout(enable(*args), 1, "ms")
        for i in range(max(nvec, 0)):
            if i not in self._irq_requested:
                self.pci.request_irq(i, self._make_msi_handler(i))
                self._irq_requested.add(i)
        return nvec

    def enable_intx(self, on: bool = True) -> None:
        """Take the card's legacy interrupt (its line at the root complex; the function's
        Interrupt Disable stays as the host left it, clear after reset): while the line
        is asserted, ``intx_handlers`` run, with the line masked until they return, as a
        Linux handler requested with IRQF_ONESHOT. A line still asserted after them runs
        them again :data:`INTX_RESAMPLE_NS` later; after :data:`INTX_STORM` rounds that
        leave it asserted the line is disabled (``intx_storms`` counts it), as Linux's
        "nobody cared" does, so a handler that never clears its source cannot hang the
        simulation."""
        self.intx_enabled = on
        if on:
            self._intx_changed(self.intx.level(self.intx_line))

    def _intx_changed(self, asserted: bool) -> None:
        if asserted and self.intx_enabled and not self._intx_serving:
            self._intx_serving = True
            cocotb.start_soon(self._serve_intx())

    async def _serve_intx(self) -> None:
        try:
            rounds = 0
            while self.intx_enabled and self.intx.level(self.intx_line):
                if rounds:
                    await Timer(INTX_RESAMPLE_NS, "ns")
                    if not self.intx.level(self.intx_line):
                        break
                if rounds == INTX_STORM:
                    self.intx_storms += 1
                    self.intx_enabled = False
                    self.log.error(
                        "INTx: the card's line stayed asserted through %d rounds of its "
                        "handlers: disabled (nobody cared)",
                        rounds,
                    )
                    break
                rounds += 1
                self.intx_count += 1
                for isr in list(self.intx_handlers):
                    done = isr()
                    if inspect.isawaitable(done):
                        await done
        finally:
            self._intx_serving = False

    async def program_device_control(self, mps: int, mrrs: int) -> None:
        """Write MPS and MRRS into the function's PCIe Device Control register."""
        val = await self.pci.capability_read_word(PciCapId.EXP, DEVCTL)
        val &= ~((7 << DEVCTL_MPS_SHIFT) | (7 << DEVCTL_MRRS_SHIFT) | DEVCTL_EXT_TAG)
        val |= _size_code(mps) << DEVCTL_MPS_SHIFT
        val |= _size_code(mrrs) << DEVCTL_MRRS_SHIFT
        await self.pci.capability_write_word(PciCapId.EXP, DEVCTL, val)

    def _make_msi_handler(self, vector: int) -> Callable:
        async def handler() -> None:
            if vector in self.msi_masked:
                self.msi_lost[vector] += 1
                return
            self.msi_count[vector] += 1
            for isr in self.irq_handlers[vector]:
                isr()

        return handler

    def mask_msi(self, vector: int, masked: bool = True) -> None:
        """Host-side interrupt masking: MSIs on ``vector`` are dropped (counted in
        ``msi_lost``) until unmasked, as an interrupt lost between device and CPU."""
        if masked:
            self.msi_masked.add(vector)
        else:
            self.msi_masked.discard(vector)

    def clear_msi(self) -> None:
        """Forget the MSIs counted so far."""
        self.msi_count = [0] * MSI_VECTORS

    # --- memory -----------------------------------------------------------------------
    def alloc_host(self, size: int, name: str | None = None):
        """Host memory from the root complex's pool (a cocotbext-axi MemoryRegion), named
        ``name`` in the TLP trace."""
        region = self.rc.mem_pool.alloc_region(size)
        self._mem_regions.append(region)
        self.name_host(
            region.get_absolute_address(0), size, name or f"buffer{len(self._mem_regions)}"
        )
        return region

    def peek_host(self, addr: int, size: int) -> bytes | None:
        """Host memory ``[addr, addr+size)`` read directly (no TLPs), or None when it is
        not all in one region allocated here."""
        for region in self._mem_regions:
            base = region.get_absolute_address(0)
            if base <= addr and addr + size <= base + region.size:
                return bytes(region[addr - base : addr - base + size])
        return None

    def name_host(self, base: int, size: int, name: str) -> None:
        """Name a host memory range (the TLP trace labels accesses with it)."""
        self.buffer_names.insert(0, (base, size, name))

    # --- MMIO (every access has a timeout) ----------------------------------------------
    async def dma_read32(self, offset: int) -> int:
        """Read a 32-bit register of the DMA BAR."""
        return await with_timeout(self.dma_bar.read_dword(offset), 100, "us")

    async def dma_write32(self, offset: int, value: int) -> None:
        """Write a 32-bit register of the DMA BAR (posted; a read flushes it)."""
        await with_timeout(self.dma_bar.write_dword(offset, value & 0xFFFFFFFF), 100, "us")

    async def user_read32(self, offset: int) -> int:
        """Read a 32-bit register of the user BAR."""
        return await with_timeout(self.user_bar.read_dword(offset), 100, "us")

    async def user_write32(self, offset: int, value: int) -> None:
        """Write a 32-bit register of the user BAR."""
        await with_timeout(self.user_bar.write_dword(offset, value & 0xFFFFFFFF), 100, "us")

    async def wait_cycles(self, n: int) -> None:
        """Wait ``n`` user clock cycles."""
        await Timer(n * self.clock_period_ns, "ns")

    # --- stimulus shaping ---------------------------------------------------------------
    def set_idle_backpressure(self, seed: int | None = None, duty: float = 0.3) -> None:
        """Insert idle cycles on CQ/RC and back-pressure on RQ/CC; ``None`` turns it off."""
        streams = (self.dev.rq_sink, self.dev.cc_sink, self.dev.rc_source, self.dev.cq_source)
        for i, s in zip(itertools.count(), streams):
            if seed is None:
                s.clear_pause_generator()
            else:
                s.set_pause_generator(pause_pattern(seed * 7 + i, duty))
