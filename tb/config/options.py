"""The options of a build: the one table of what each toplevel can be configured with.

A build's options (``overrides`` of :func:`tb.flow.runner.run` and :func:`tb.flow.runner.build`,
``make test XDMA=...``) are checked here, before anything is built: a name no build
takes, a value out of range, a link the hard-IP model has no configuration for, each is
one :class:`OptionError` naming the option and what it accepts.

Three kinds of toplevel take options in three ways:
- the picoevb card (``pevb_dma_top``) takes its Verilog parameters;
- the drop-in as the toplevel (``xdma_0``) takes its Verilog parameters, and the options
  that have only a define (``MODULE``, ``STREAM``, ``7SERIES``) as defines;
- a user's design that instantiates the Vivado IP takes every drop-in option as a define
  (``PEVB_XDMA_*``, docs/dropin.md's table): the generated IP has no parameters.

An option is named by its key here (the drop-in's Verilog parameter where it has one:
``H2C_BYPASS``, ``USER_IRQS``) or by its define (``PEVB_XDMA_DSC_BYPASS_RD``,
``PEVB_XDMA_USR_IRQ``); :func:`normalize` gives every name its key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .profiles import Profile

# the toplevels of this project (the user designs are any other)
CARD = "pevb_dma_top"
DROPIN = "xdma_0"
DEFINE_PREFIX = "PEVB_XDMA_"


class OptionError(ValueError):
    """A build option that no build of this toplevel takes, or a value it does not."""


@dataclass(frozen=True)
class Option:
    """One build option: its key, its define on the drop-in (None: a parameter of the
    card only), whether the drop-in has a Verilog parameter of that name, whether the
    card has one, what it accepts (in words) and the check of a value."""

    key: str
    define: str | None
    accepts: str
    check: Callable[[object], bool]
    dropin_parameter: bool = True
    card_parameter: bool = False


def _ints(lo: int, hi: int) -> Callable[[object], bool]:
    return lambda v: _is_int(v) and lo <= int(v) <= hi  # type: ignore[call-overload]


def _one_of(*values: int) -> Callable[[object], bool]:
    return lambda v: _is_int(v) and int(v) in values  # type: ignore[call-overload]


def _pow2(lo: int, hi: int) -> Callable[[object], bool]:
    return lambda v: _is_int(v) and lo <= int(v) <= hi and int(v) & (int(v) - 1) == 0  # type: ignore[call-overload]


def _is_int(v: object) -> bool:
    return isinstance(v, int)  # bool is an int: True and False read as 1 and 0


_FLAG = ("0 or 1", _one_of(0, 1))
_U16 = ("0 to 0xFFFF", _ints(0, 0xFFFF))
_MASK = ("a mask of the channels", _ints(0, 15))
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


def _opt(key, define, accepts_check, dropin_parameter=True, card_parameter=False) -> Option:
    accepts, check = accepts_check
    full = f"{DEFINE_PREFIX}{define}" if define else None
    return Option(key, full, accepts, check, dropin_parameter, card_parameter)


# Every option, in docs/dropin.md's order (tests/unit/test_unit_runner.py checks the table
# there against this one); the last ones are the engine's own, not Vivado options
OPTIONS: dict[str, Option] = {
    o.key: o
    for o in (
        _opt(
            "MODULE",
            "MODULE",
            ("a Verilog module name", lambda v: isinstance(v, str) and bool(_IDENT.match(v))),
            dropin_parameter=False,
        ),
        _opt(
            "AXIS_PCIE_DATA_WIDTH",
            "DATA_WIDTH",
            ("64, 128, 256 or 512", _one_of(64, 128, 256, 512)),
            card_parameter=True,
        ),
        _opt("LANES", "LANES", ("1, 2, 4, 8 or 16", _one_of(1, 2, 4, 8, 16))),
        _opt("H2C_CHANNELS", "H2C_CHANNELS", ("1 to 4", _ints(1, 4)), card_parameter=True),
        _opt("C2H_CHANNELS", "C2H_CHANNELS", ("1 to 4", _ints(1, 4)), card_parameter=True),
        _opt("STREAM", "STREAM", _FLAG, dropin_parameter=False),
        _opt("H2C_STREAM", "H2C_STREAM", _MASK, card_parameter=True),
        _opt("C2H_STREAM", "C2H_STREAM", _MASK, card_parameter=True),
        _opt("USER_IRQS", "USR_IRQ", ("1 to 16", _ints(1, 16)), card_parameter=True),
        _opt("MSIX", "MSIX", _FLAG, card_parameter=True),
        _opt("AXI_ID_WIDTH", "AXI_ID_WIDTH", ("2 to 8", _ints(2, 8))),
        _opt("H2C_BYPASS", "DSC_BYPASS_RD", _MASK),
        _opt("C2H_BYPASS", "DSC_BYPASS_WR", _MASK),
        _opt("AXIL_SLAVE", "AXILITE_SLAVE", _FLAG),
        _opt("SOFT_RESET_EN", "SOFT_RESET_EN", _FLAG),
        _opt("CFG_MGMT", "CFG_MGMT", _FLAG),
        _opt("AXIB", "AXIST_BYPASS", _FLAG),
        _opt("AXIB_BAR_ADDR_WIDTH", "AXIST_BYPASS_ADDR_WIDTH", ("12 to 31", _ints(12, 31))),
        _opt(
            "AXIB_AXI_BASE",
            "AXIST_BYPASS_AXI_BASE",
            (
                "a 64-bit address aligned to 4 KiB",
                lambda v: _is_int(v) and 0 <= int(v) < 1 << 64 and int(v) % 4096 == 0,  # type: ignore[call-overload]
            ),
        ),
        _opt("CFG_EXT", "CFG_EXT", _FLAG),
        _opt("CFG_EXT_LEGACY", "CFG_EXT_LEGACY", _FLAG),
        _opt("CFG_EXT_EXTENDED", "CFG_EXT_EXTENDED", _FLAG),
        _opt("PCIE_ID_IF", "PCIE_ID_IF", _FLAG),
        # the function's IDs (Vivado's PCIe ID tab): the hard-IP model's configuration
        # space holds them, no Verilog reads them
        _opt("VENDOR_ID", None, _U16, dropin_parameter=False),
        _opt("PF0_DEVICE_ID", None, _U16, dropin_parameter=False),
        _opt("PF0_REVISION_ID", None, ("0 to 0xFF", _ints(0, 0xFF)), dropin_parameter=False),
        _opt("PF0_SUBSYSTEM_VENDOR_ID", None, _U16, dropin_parameter=False),
        _opt("PF0_SUBSYSTEM_ID", None, _U16, dropin_parameter=False),
        _opt("PF0_CLASS_CODE", None, ("0 to 0xFFFFFF", _ints(0, 0xFFFFFF)), dropin_parameter=False),
        _opt("7SERIES", "7SERIES", _FLAG, dropin_parameter=False),
        _opt("AXIL_MASTER", "AXILITE_MASTER", _FLAG),
        _opt("AXIL_MASTER_64BIT", "AXIL_MASTER_64BIT", _FLAG),
        _opt("AXIL_MASTER_PREFETCHABLE", "AXIL_MASTER_PREFETCHABLE", _FLAG),
        _opt("PCIE_64BIT", "PCIE_64BIT", _FLAG),
        _opt("PCIE_PREFETCHABLE", "PCIE_PREFETCHABLE", _FLAG),
        _opt("AXIB_64BIT", "AXI_BYPASS_64BIT", _FLAG),
        _opt("AXIB_PREFETCHABLE", "AXI_BYPASS_PREFETCHABLE", _FLAG),
        # the engine's own: the descriptor buffer, fetches in flight, completion timeout
        _opt(
            "DESC_DEPTH",
            "DESC_DEPTH",
            ("a power of two from 2 to 64", _pow2(2, 64)),
            card_parameter=True,
        ),
        _opt("DESC_FETCHES", "DESC_FETCHES", ("1 to 7", _ints(1, 7)), card_parameter=True),
        _opt(
            "CPL_TIMEOUT_CYCLES",
            "CPL_TIMEOUT_CYCLES",
            ("1 to 2**30 user clock cycles", _ints(1, 1 << 30)),
            card_parameter=True,
        ),
        _opt("H2C_READ_TAGS", "H2C_READ_TAGS", ("1 to 32", _ints(1, 32))),
        # the card's RAM: the drop-in has none
        _opt(
            "RAM_SIZE",
            None,
            ("a power of two from 8 KiB to 256 MiB", _pow2(8 << 10, 256 << 20)),
            dropin_parameter=False,
            card_parameter=True,
        ),
    )
}
_BY_DEFINE = {o.define: o.key for o in OPTIONS.values() if o.define}
# the options the card takes though it has no parameter of that name: the hard-IP
# model's link width (the card has no serial lanes)
_CARD_TESTBENCH_ONLY = ("LANES",)
# the options the drop-in (and a design around it) takes though no define reaches its
# Verilog: the function's IDs, which the hard-IP model presents (the picoevb card keeps
# the real card's)
ID_OPTIONS = (
    "VENDOR_ID",
    "PF0_DEVICE_ID",
    "PF0_REVISION_ID",
    "PF0_SUBSYSTEM_VENDOR_ID",
    "PF0_SUBSYSTEM_ID",
    "PF0_CLASS_CODE",
)


# vendor, device, revision, subsystem vendor, subsystem, class code
PICOEVB_IDS = (0x10DE, 0x0001, 0x00, 0x10DE, 0x0001, 0x058000)


def xdma_ids(p: Profile) -> tuple[int, int, int, int, int, int]:
    """The drop-in's IDs: Vivado's defaults for the IP (Xilinx's vendor ID, a device ID
    of family, generation and lanes: 0x9038 for an UltraScale+ Gen3 x8, 0x7021 for a
    7 series Gen2 x1; subsystem 10EE:0007; class 0x070001), each replaced by the build's
    ID option where it gives one."""
    family = 0x7 if p.extra.get("7SERIES") else 0x9
    lanes = 0xF if p.lanes == 16 else p.lanes
    x = p.extra
    return (
        int(x.get("VENDOR_ID", 0x10EE)),
        int(x.get("PF0_DEVICE_ID", family << 12 | p.gen << 4 | lanes)),
        int(x.get("PF0_REVISION_ID", 0x00)),
        int(x.get("PF0_SUBSYSTEM_VENDOR_ID", 0x10EE)),
        int(x.get("PF0_SUBSYSTEM_ID", 0x0007)),
        int(x.get("PF0_CLASS_CODE", 0x070001)),
    )


def toplevel_kind(toplevel: str) -> str:
    """``card``, ``dropin`` or ``design`` (a user's design around the drop-in)."""
    return {CARD: "card", DROPIN: "dropin"}.get(toplevel, "design")


def accepted(toplevel: str) -> list[str]:
    """The keys of the options a build of ``toplevel`` takes."""
    kind = toplevel_kind(toplevel)
    if kind == "card":
        return [k for k, o in OPTIONS.items() if o.card_parameter or k in _CARD_TESTBENCH_ONLY]
    return [k for k, o in OPTIONS.items() if o.define or k in ID_OPTIONS]


def normalize(overrides: Mapping[str, object] | None) -> dict[str, object]:
    """The options with every name as its key (a define's name given for one); raises
    :class:`OptionError` for a name that is neither, or an option given twice."""
    out: dict[str, object] = {}
    for name, value in (overrides or {}).items():
        key = name if name in OPTIONS else _BY_DEFINE.get(name)
        if key is None:
            raise OptionError(f"unknown build option {name!r}: {_known_line()}")
        if key in out:
            raise OptionError(f"build option {key} given twice (as {name} too)")
        out[key] = value
    return out


def parse_option(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` of a build option: the value an integer (``0x`` hexadecimal too),
    or the name for ``MODULE``."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise ValueError(f"build option {text!r}: write NAME=VALUE")
    key = next(iter(normalize({name: 0})))  # (an unknown name: OptionError)
    if key == "MODULE":
        return name, value
    try:
        return name, int(value, 0)
    except ValueError:
        raise ValueError(f"build option {name}={value!r}: the value must be a number") from None


def parse_options(texts: Sequence[str]) -> dict[str, object]:
    """Build options from ``NAME=VALUE`` words (:func:`parse_option`)."""
    return dict(parse_option(t) for t in texts)


def resolve(profile: Profile, overrides: Mapping[str, object] | None) -> dict[str, object]:
    """:func:`normalize`, with ``STREAM`` (every channel streams) spelled out as the
    channel masks it means, where no mask is given."""
    opts = normalize(overrides)
    if opts.get("STREAM"):
        p = profile.with_overrides({k: v for k, v in opts.items() if isinstance(v, int)})
        for way, chans in (("H2C", p.h2c_channels), ("C2H", p.c2h_channels)):
            opts.setdefault(f"{way}_STREAM", (1 << chans) - 1)
    return opts


def _known_line() -> str:
    return "one of " + ", ".join(OPTIONS) + f" (or a {DEFINE_PREFIX}* define of docs/dropin.md)"


def check(toplevel: str, profile: Profile, overrides: Mapping[str, object] | None) -> dict:
    """The options of a build of ``toplevel`` on ``profile``, normalized and checked
    (:class:`OptionError`, one line, on the first bad one): each a known option this
    toplevel takes, each value in range, the stream and bypass masks within the
    channels, and the link (generation, lanes, width, user clock) one the hard-IP model
    has."""
    opts = resolve(profile, overrides)
    takes = accepted(toplevel)
    for key, value in opts.items():
        opt = OPTIONS[key]
        if key not in takes:
            where = {"card": f"the card ({CARD})", "dropin": "the drop-in"}.get(
                toplevel_kind(toplevel), "a design around the drop-in"
            )
            raise OptionError(
                f"build option {key} is not one {where} takes: it takes {', '.join(takes)}"
            )
        if not opt.check(value):
            raise OptionError(f"build option {key}={value!r}: it accepts {opt.accepts}")
    p = profile.with_overrides({k: v for k, v in opts.items() if isinstance(v, int)})
    for way, chans in (("H2C", p.h2c_channels), ("C2H", p.c2h_channels)):
        for what in ("STREAM", "BYPASS"):
            key = f"{way}_{what}"
            mask = opts.get(key, 0)
            if isinstance(mask, int) and mask >> chans:
                raise OptionError(
                    f"build option {key}={mask}: a mask of {way} channels 0 to {chans - 1} "
                    f"({way}_CHANNELS={chans}), so at most {(1 << chans) - 1}"
                )
    check_link(p)
    return opts


# The links the UltraScale+ hard-IP model has a configuration for (cocotbext-pcie's
# ``usp_model.valid_configs``, here so that the flow checks a build without importing
# the simulator's side; tests/unit/test_unit_runner.py checks the two are the same): by
# PCIe generation and lanes, each stream width with its user clock in MHz
HARD_IP_LINKS: dict[tuple[int, int], tuple[tuple[int, float], ...]] = {
    (1, 1): ((64, 62.5), (64, 125), (64, 250)),
    (1, 2): ((64, 62.5), (64, 125), (64, 250)),
    (1, 4): ((64, 125), (64, 250)),
    (1, 8): ((64, 250), (128, 125)),
    (1, 16): ((128, 250),),
    (2, 1): ((64, 62.5), (64, 125), (64, 250)),
    (2, 2): ((64, 125), (64, 250)),
    (2, 4): ((64, 250), (128, 125)),
    (2, 8): ((128, 250), (256, 125)),
    (2, 16): ((256, 250),),
    (3, 1): ((64, 125), (64, 250)),
    (3, 2): ((64, 250), (128, 125)),
    (3, 4): ((128, 250), (256, 125)),
    (3, 8): ((256, 250),),
    (3, 16): ((512, 250),),
    (4, 1): ((64, 250), (128, 125)),
    (4, 2): ((128, 250), (256, 125)),
    (4, 4): ((256, 250),),
    (4, 8): ((512, 250),),
}


def hard_ip_links() -> set[tuple[int, int, int, float]]:
    """:data:`HARD_IP_LINKS` as (generation, lanes, width, user clock in Hz) tuples, the
    form of cocotbext-pcie's ``valid_configs``."""
    return {
        (gen, lanes, width, mhz * 1e6)
        for (gen, lanes), links in HARD_IP_LINKS.items()
        for width, mhz in links
    }


def check_link(p: Profile) -> None:
    """Raise :class:`OptionError` unless the hard-IP model has the profile's link:
    PCIe generation, lanes, stream width and user clock (its ``valid_configs``)."""
    valid_configs = hard_ip_links()
    if (p.gen, p.lanes, p.width, p.user_clk_hz) in valid_configs:
        return
    others = (p.gen, p.width, p.user_clk_hz)
    lanes = sorted({c[1] for c in valid_configs if (c[0], c[2], c[3]) == others})
    mhz = f"{p.user_clk_hz / 1e6:g} MHz"
    also = (
        f"; with these the lanes can be {', '.join(map(str, lanes))}"
        if lanes
        else "; choose another profile"
    )
    raise OptionError(
        f"build options: the hard-IP model has no Gen{p.gen} x{p.lanes} link with a "
        f"{p.width}-bit stream at {mhz} (profile {p.name}){also}"
    )
