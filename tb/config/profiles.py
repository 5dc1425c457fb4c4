"""Link/engine profiles: the HDL parameters and hard-IP configuration of each build."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from driver_model.regs import BarLayout

from .choices import PROFILE_NAMES

# Verilog parameter -> Profile field
_FIELDS = {
    "AXIS_PCIE_DATA_WIDTH": "width",
    "RAM_SIZE": "ram_size",
    "H2C_CHANNELS": "h2c_channels",
    "C2H_CHANNELS": "c2h_channels",
    "H2C_STREAM": "h2c_stream",
    "C2H_STREAM": "c2h_stream",
    "DESC_DEPTH": "desc_depth",
    "DESC_FETCHES": "desc_fetches",
    "CPL_TIMEOUT_CYCLES": "cpl_timeout_cycles",
    "MSIX": "msix",
}


@dataclass(frozen=True)
class Profile:
    """One FPGA configuration: PCIe link, AXI-stream width, user clock and card RAM."""

    name: str
    gen: int
    lanes: int
    width: int
    user_clk_hz: float
    ram_size: int = 65536
    # max payload size supported by the hard IP, and what the host programs (bytes)
    mps: int = 128
    mrrs: int = 512
    # DMA channels each way (1 to 4)
    h2c_channels: int = 1
    c2h_channels: int = 1
    # stream channels (bit n: channel n is an AXI4-Stream channel)
    h2c_stream: int = 0
    c2h_stream: int = 0
    desc_depth: int = 8
    desc_fetches: int = 2
    cpl_timeout_cycles: int = 131072
    # the MSI-X table and PBA (PG195) built into the engine, and the capability offered
    msix: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def hdl_parameters(self) -> dict[str, int]:
        """Verilog parameters of ``pevb_dma_top`` (mirrors its parameter list)."""
        return {name: getattr(self, attr) for name, attr in _FIELDS.items()} | self.extra

    @property
    def bars(self) -> BarLayout:
        """The function's BARs: the picoevb's fixed pair, or what the drop-in's PCIe
        BARs options (its parameters ``AXIL_MASTER``, ``AXIL_MASTER_64BIT``,
        ``PCIE_64BIT``, ``AXIB``, ``AXIB_64BIT`` and the ``_PREFETCHABLE`` ones) make."""
        x = self.extra
        return BarLayout.vivado(
            axil_master=bool(x.get("AXIL_MASTER", 1)),
            axil_master_64bit=bool(x.get("AXIL_MASTER_64BIT", 0)),
            axil_master_prefetchable=bool(x.get("AXIL_MASTER_PREFETCHABLE", 0)),
            dma_64bit=bool(x.get("PCIE_64BIT", 0)),
            dma_prefetchable=bool(x.get("PCIE_PREFETCHABLE", 0)),
            axib=bool(x.get("AXIB", 0)),
            axib_64bit=bool(x.get("AXIB_64BIT", 0)),
            axib_prefetchable=bool(x.get("AXIB_PREFETCHABLE", 0)),
        )

    def with_overrides(self, overrides: dict[str, int] | None) -> Profile:
        """This profile with some Verilog parameters of the build changed."""
        if not overrides:
            return self
        known = {_FIELDS[k]: v for k, v in overrides.items() if k in _FIELDS}
        if "LANES" in overrides:  # the link's width (a parameter of the drop-in only)
            known["lanes"] = overrides["LANES"]
        extra = {**self.extra, **{k: v for k, v in overrides.items() if k not in _FIELDS}}
        return replace(self, **known, extra=extra)


PROFILES: dict[str, Profile] = {
    # PicoEVB: Artix-7 XDMA, Gen2 x1, 64-bit AXI at 125 MHz, 64 KiB BRAM
    "picoevb": Profile("picoevb", gen=2, lanes=1, width=64, user_clk_hz=125e6),
    # HTG-K800-like: Gen3 x8, 256-bit AXI at 250 MHz
    "gen3x8": Profile("gen3x8", gen=3, lanes=8, width=256, user_clk_hz=250e6, mps=256),
    # the other AXI-stream widths the engine supports (regression coverage of the datapath)
    "gen3x4": Profile("gen3x4", gen=3, lanes=4, width=128, user_clk_hz=250e6, mps=256),
    "gen3x16": Profile("gen3x16", gen=3, lanes=16, width=512, user_clk_hz=250e6, mps=256),
}


assert tuple(PROFILES) == PROFILE_NAMES, "tb.config.choices lists every profile, in order"


def get_profile(name: str) -> Profile:
    """Look a profile up by name, with a clear error for unknown names."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}") from None
