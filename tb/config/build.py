"""The build configuration: one frozen object for what a build and a run of the RTL are.

The flow makes a :class:`BuildConfig` from make variables (:meth:`BuildConfig.from_make`),
command-line flags or :func:`tb.flow.runner.run`'s arguments; making one checks it, whole,
once (a bad simulator, profile, toplevel, option, model or data path is one
``ValueError`` line, before anything is built), and it cannot change afterwards. The
runner writes it into the simulation once (:meth:`BuildConfig.to_env`), and the
testbench reads it there once (:func:`current`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from . import options as opt
from . import sources
from .choices import (
    BEAT_MODEL,
    BENCH_PARAMS_ENV,
    CONFIG_ENV,
    DATAPATH_ENV,
    DEFAULT_PROFILE,
    DEFAULT_SIM,
    MODEL_ENV,
    TRANSACTOR_MODEL,
    check_datapath,
    check_model,
    check_sim,
    default_model,
)
from .profiles import Profile, get_profile


@dataclasses.dataclass(frozen=True)
class BuildConfig:
    """What a build and a run are: the simulator, the profile, the toplevel and its
    options, the model of the fabric and hard IP, the data path, waves and the TLP
    trace. Every field is checked when it is made, and given back normalized: the
    profile as a :class:`Profile`, the options by key (:func:`tb.config.options.check`),
    the model by name (None: the build's own choice, the default's build), the data
    path by name."""

    sim: str = DEFAULT_SIM
    profile: Profile | str = DEFAULT_PROFILE
    toplevel: str = sources.TOPLEVEL
    options: Mapping[str, object] = dataclasses.field(default_factory=dict)
    model: str | None = None
    datapath: str | None = None
    waves: bool = False
    trace: bool = False
    user_sources: Sequence[Path | str] = ()

    def __post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)
        check_sim(self.sim)
        profile = get_profile(self.profile) if isinstance(self.profile, str) else self.profile
        set_("profile", profile)
        set_("user_sources", tuple(Path(f).resolve() for f in self.user_sources))
        sources.check_toplevel(self.toplevel, self.user_sources)
        set_("options", MappingProxyType(opt.check(self.toplevel, profile, self.options)))
        if self.model is not None:
            set_("model", check_model(self.model, runnable=True))
        set_("datapath", check_datapath(self.datapath))
        set_("waves", bool(self.waves))
        set_("trace", bool(self.trace))

    @classmethod
    def from_make(cls, environ: Mapping[str, str] | None = None, **given: object) -> BuildConfig:
        """The configuration make's variables give (``SIM``, ``PROFILE``, ``WAVES``,
        ``TRACE``, ``PEVB_MODEL``, ``PEVB_DATAPATH``, ``XDMA``; ``environ``, default this
        process's environment), with ``given`` fields on top.

        ``XDMA`` holds drop-in options as ``NAME=VALUE`` words (``make test XDMA=...``):
        they go on top of the options of every build around the drop-in (the drop-in
        itself or a design that instantiates it), its ``MODULE`` only where the drop-in
        is the toplevel (a design instantiates ``xdma_0`` by that name); a build of the
        card takes none of them."""
        env = os.environ if environ is None else environ
        fields: dict[str, object] = {
            "sim": env.get("SIM") or DEFAULT_SIM,
            "profile": env.get("PROFILE") or DEFAULT_PROFILE,
            "waves": env.get("WAVES", "0") == "1",
            "trace": env.get("TRACE", "0") == "1",
            "model": check_model(env[MODEL_ENV]) if env.get(MODEL_ENV) else None,
            "datapath": env.get(DATAPATH_ENV) or None,
            **given,
        }
        toplevel = fields.get("toplevel", sources.TOPLEVEL)
        words = env.get("XDMA", "").split()
        if words and toplevel != sources.TOPLEVEL:
            xdma = opt.normalize(opt.parse_options(words))
            if toplevel != sources.DROPIN_TOPLEVEL:
                xdma.pop("MODULE", None)
            own = opt.normalize(fields.get("options"))  # type: ignore[arg-type]
            fields["options"] = {**own, **xdma}
        return cls(**fields)  # type: ignore[arg-type]

    def __hash__(self) -> int:  # (the options' mapping has none of its own)
        return hash(self.to_env()[CONFIG_ENV])

    def replace(self, **changes: object) -> BuildConfig:
        """This configuration with ``changes``, checked again as a new one."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    # --- what follows from it -----------------------------------------------------------
    @property
    def base_profile(self) -> Profile:
        """The profile as named, without the options (typed for the checker)."""
        assert isinstance(self.profile, Profile)
        return self.profile

    @property
    def hw(self) -> Profile:
        """The profile with the build's options on top: what the RTL is built with."""
        return self.base_profile.with_overrides(dict(self.options))  # type: ignore[arg-type]

    @property
    def build_model(self) -> str:
        """The model the build is made for: the named one, else the default."""
        return self.model or default_model()

    @property
    def named_model(self) -> str | None:
        """The model the testbench is told to run (None: the build's own choice, as for
        the beat-level model, which a build without the transactors runs by itself)."""
        return None if self.model in (None, BEAT_MODEL) else self.model

    @property
    def transactors(self) -> bool:
        """Whether the build has the hard IP's stream transactors."""
        return self.build_model == TRANSACTOR_MODEL

    @property
    def hdl_toplevel(self) -> str:
        """The Verilog module the build elaborates."""
        return sources.hdl_toplevel(self.toplevel, self.build_model, self.options)

    @property
    def parameters(self) -> dict[str, int]:
        """The build's Verilog parameters."""
        return sources.hdl_parameters(self.base_profile, self.options, self.toplevel)

    @property
    def defines(self) -> dict[str, object]:
        """The build's defines for its options (the transactors' not included)."""
        return sources.toplevel_defines(self.toplevel, self.base_profile, self.options)

    @property
    def ids(self) -> tuple[int, int, int, int, int, int]:
        """The function's IDs the hard-IP model presents on a drop-in build (vendor,
        device, revision, subsystem vendor, subsystem, class code): the IP's defaults,
        each replaced by the ID option that gives one."""
        return opt.xdma_ids(self.hw)

    # --- into the simulation and out again ------------------------------------------------
    def to_env(self) -> dict[str, str]:
        """The configuration as the simulation's environment holds it (one variable)."""
        profile = dataclasses.asdict(self.base_profile)
        data = {
            "sim": self.sim,
            "profile": profile,
            "toplevel": self.toplevel,
            "options": dict(self.options),
            "model": self.model,
            "datapath": self.datapath,
            "waves": self.waves,
            "trace": self.trace,
            "user_sources": [str(f) for f in self.user_sources],
        }
        return {CONFIG_ENV: json.dumps(data, sort_keys=True)}

    @classmethod
    def from_env(cls, value: str) -> BuildConfig:
        """The configuration :meth:`to_env` wrote, as it was when it was made and checked
        (it is not checked again)."""
        data = json.loads(value)
        data["profile"] = Profile(**data["profile"])
        data["options"] = MappingProxyType(data["options"])
        data["user_sources"] = tuple(Path(f) for f in data["user_sources"])
        config = object.__new__(cls)
        for field in dataclasses.fields(cls):
            object.__setattr__(config, field.name, data[field.name])
        return config


@functools.cache
def current() -> BuildConfig:
    """The running simulation's configuration, read once: the one the runner wrote, or
    where the simulation was started some other way (cocotb's own runner or Makefile
    flow, on a build of the card's default parameters) the default, with the model and
    data path ``$PEVB_MODEL`` and ``$PEVB_DATAPATH`` name."""
    value = os.environ.get(CONFIG_ENV)
    if value:
        return BuildConfig.from_env(value)
    return BuildConfig.from_make({k: os.environ.get(k, "") for k in (MODEL_ENV, DATAPATH_ENV)})


def bench_params() -> dict[str, int]:
    """In an RTL module's bench: the module's parameters of this build, as the flow wrote
    them (the bench fills in its defaults)."""
    return json.loads(os.environ.get(BENCH_PARAMS_ENV, "{}"))


def current_profile() -> Profile:
    """The profile of the running simulation's build, its options included
    (:attr:`BuildConfig.hw` of :func:`current`)."""
    return current().hw
