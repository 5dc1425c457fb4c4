"""What the TB lets the compiled data path's library move without Python
(docs/performance.md, "Design: the compiled data path"): each bridge link end of the
system's switches and root complex whose handlers the library knows (the bridge's own,
behind the taps and the fault injector the TB puts there), planned again whenever the
taps' observers change. The hops themselves are :mod:`tb.models.native`'s."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cocotbext.pcie.core.device import Device
from cocotbext.pcie.core.function import Function
from cocotbext.pcie.core.port import Port

from cuda_model.gpu import BAR1, Gpu

from ..models.compiled_link import CompiledTlpPort
from ..models.hardip import PevbUspDevice
from ..models.native import (
    FROM_PRIMARY,
    FROM_SECONDARY,
    KINDS,
    CardCpl,
    CardEnd,
    Egress,
    End,
    GpuServe,
    Meter,
    ReadLog,
    RootServe,
    enabled,
    fabric_of,
)
from ..models.timeline import CompiledTimeline, steps, timeline
from ..models.transactors import TransactorRcSource, TransactorRqSink, sink_group
from .compiled_checker import CompiledChecker
from .gpu_endpoint import GpuEndpoint
from .link import UP


def _unwrap(handler: Any, wrappers: dict[Any, Any]) -> Any:
    """The handler under the known wrappers in front of it."""
    while handler in wrappers:
        handler = wrappers[handler]
    return handler


def arm(tb: Any) -> None:
    """Let the library move its TLPs across each bridge of ``tb``'s switches whose link
    end it can take (docs/performance.md): the taps, the protocol checker and the fault
    injectors of ``tb`` are what it knows of in front of a bridge."""
    line = timeline()
    if not isinstance(line, CompiledTimeline) or not enabled():
        return
    fabric = fabric_of(line)
    taps = tb.links
    wrappers = dict(taps.wrappers)
    wrappers.update(tb.intx.wrappers)
    gates: dict[int, list[Any]] = {}
    for injector in (tb.up_faults,):
        wrappers[injector.handler] = injector.inner
        gates.setdefault(id(injector.port), []).append(injector)
    checker = tb.checker if isinstance(tb.checker, CompiledChecker) else None
    # the fault injector's read tracking, which the library does where the injector's
    # tap is (the reads it moves there it records in the injector's log)
    faults = tb.faults
    reads = ReadLog(fabric.lib)
    faults.keep_reads_in(reads)
    reads_at = (faults.link, UP)
    where = {}  # link port -> (link, direction) of its tap
    for name, link in taps.links.items():
        where[id(link.lower)] = (name, "down")
        where[id(link.upper)] = (name, "up")
    ends = []
    for switch in (s for s in (tb.switch, tb.rc) if s is not None):
        for sp in switch.switch_ports:
            if getattr(sp, "dp_index", None) is None:
                continue
            bridge = sp.bridge
            if sp.upstream:
                link_port, side, own = (
                    getattr(bridge, "upstream_port", None),
                    FROM_PRIMARY,
                    getattr(bridge, "upstream_recv", None),
                )
            else:
                link_port, side, own = (
                    getattr(bridge, "downstream_port", None),
                    FROM_SECONDARY,
                    getattr(bridge, "downstream_recv", None),
                )
            if not isinstance(link_port, CompiledTlpPort) or own is None:
                continue
            if type(link_port).classify_tlp_vc is not Port.classify_tlp_vc:
                continue  # virtual channels by the TLP: Python's to choose
            # the switch's side: the bridge hands what it gets from the switch to its link
            tx, holder_name = (
                (bridge.downstream_recv, "upstream_tx_handler")
                if sp.upstream
                else (bridge.upstream_recv, "downstream_tx_handler")
            )
            if (
                _unwrap(sp.tx_handler, wrappers) == tx
                and getattr(bridge, holder_name) == link_port.send
            ):
                Egress(fabric, sp, link_port, bridge, holder_name)
            if _unwrap(link_port.rx_handler, wrappers) != own:
                continue  # a handler the library does not know sits in front
            end = End(fabric, link_port, sp, side)
            end.gates = gates.get(id(link_port), [])
            for gate in end.gates:
                gate.listeners.append(end.refresh)
            end.tap = where.get(id(link_port))
            ends.append(end)

    tags: list[tuple[str, str]] = []  # the trace ring's taps, by number
    show = _show(line, taps, tags)

    def plan() -> None:
        for end in ends:
            if end.tap is None:
                end.set(7, None, None, None)
                continue
            name, direction = end.tap
            here = end.tap == reads_at
            kinds, shown, uses_checker = 0, 0, False
            counted = getattr(end, "meter_observer", None)  # (a meter stands in)
            for bit, types in KINDS:
                takes, looked = True, False
                for t in types:
                    wanted = taps.observers_of(name, direction, t)
                    ours = [o for o in wanted if checker is not None and o == checker.observe]
                    uses_checker = uses_checker or bool(ours)
                    if here:
                        ours += [o for o in wanted if o == faults.observe]
                    ours += [o for o in wanted if counted is not None and o == counted]
                    # the passive observers the trace ring shows the TLP to, after what
                    # the library runs (the checker may stop the test first) as on the
                    # Python path they come after it
                    last = max((k for k, o in enumerate(wanted) if o in ours), default=-1)
                    looks = [o for o in wanted[last + 1 :] if o in taps.passive]
                    takes = takes and len(ours) + len(looks) == len(wanted)
                    looked = looked or bool(looks)
                if takes:  # none, or only what the library runs and shows
                    kinds |= bit
                    shown |= bit if looked else 0
            if end.tap not in tags:
                tags.append(end.tap)
            line.trace_tap(end.port, shown, tags.index(end.tap))
            end.show = show if shown else None
            end.set(  # (last: what the library reads of the end is all known)
                kinds, checker if uses_checker else None, name, direction, reads if here else None
            )

    # the GPU's end of its link: its endpoint's answers to BAR1 requests
    gpu = _gpu_serve(fabric, tb, wrappers)
    if gpu is not None:
        gpu.tap = where.get(id(gpu.port))
        ends.append(gpu)
    # the card's end of its link, receiving: the completions for its reads
    card = _card_cpl(fabric, tb, wrappers, reads)
    if card is not None:
        card.tap = where.get(id(card.port))
        ends.append(card)

    plan()
    taps.listeners.append(plan)
    if checker is not None:  # (whether it stops at its first broken rule, per end)
        checker.listeners.append(lambda: [end.refresh() for end in ends])
    tb.native_ends = {end.tap: end for end in ends if end.tap is not None and isinstance(end, End)}
    tb.native_gpu = gpu
    # the card's end of its link: the hard-IP model's posted writes from RQ
    dev, port = tb.dev, tb.dev.upstream_port
    if (
        isinstance(dev.rq_sink, TransactorRqSink)
        and type(port).send is CompiledTlpPort.send
        and type(port).classify_tlp_vc is Port.classify_tlp_vc
        and type(dev).send is Device.send
        and type(dev).upstream_send is Device.upstream_send
    ):
        dev.card_end = CardEnd(fabric, port)
        dev.card_end.drain(dev, sink_group(dev.rq_sink))
    # the root complex's memory, behind its host bridge's port
    rc = tb.rc
    host = next((sp for sp in rc.switch_ports if sp.upstream), None)
    if host is not None and getattr(host, "dp_index", None) is not None:
        RootServe(fabric, rc, host)


def _show(line: CompiledTimeline, taps: Any, tags: list[tuple[str, str]]) -> Callable[[], None]:
    """What shows the passive observers of ``taps`` the TLPs in the trace ring of
    ``line`` (recorded under the numbers of ``tags``) and empties it: at the step the
    hops took them."""

    def show() -> None:
        now = steps()
        for step, tag, tlp in line.trace_take():
            if step != now:
                raise RuntimeError(f"a trace record of step {step} shown at step {now}")
            name, direction = tags[tag]
            for observe in taps.observers_of(name, direction, tlp.fmt_type):
                if observe in taps.passive:
                    observe(name, direction, tlp)

    return show


def _gpu_serve(fabric: Any, tb: Any, wrappers: dict[Any, Any]) -> GpuServe | None:
    """The library's answers to BAR1 requests at the GPU's port, where what stands
    between the port and VRAM is this project's endpoint as it is (the device's and
    function's own receive and send, the endpoint's memory handlers and BAR1 region,
    the GPU model's own BAR1 accesses): None where anything else is."""
    dev, ep = tb.gpu_dev, tb.gpu_ep
    port = dev.upstream_port
    own = (
        type(port).send is CompiledTlpPort.send
        and "send" not in port.__dict__
        and type(port).classify_tlp_vc is Port.classify_tlp_vc
        and _unwrap(port.rx_handler, wrappers) == dev.upstream_recv
        and dev.functions == [ep]
        and ep.upstream_tx_handler == dev.upstream_send
        and all(
            getattr(type(dev), name) is getattr(Device, name)
            for name in ("upstream_recv", "upstream_send", "send")
        )
        and all(
            getattr(type(ep), name) is getattr(Function, name)
            for name in ("upstream_recv", "handle_tlp", "send", "upstream_send", "match_bar")
        )
        and all(
            getattr(type(ep), name) is getattr(GpuEndpoint, name)
            for name in ("handle_mem_read_tlp", "handle_mem_write_tlp", "_bar1_read", "_bar1_write")
        )
        and ep.regions[BAR1] == (ep._bar1_read, ep._bar1_write)
        and all(
            getattr(type(ep.gpu), name) is getattr(Gpu, name) and name not in vars(ep.gpu)
            for name in ("bar1_read", "bar1_write", "bar1_readable")
        )
    )
    return GpuServe(fabric, dev, ep) if own else None


def _card_cpl(fabric: Any, tb: Any, wrappers: dict[Any, Any], reads: ReadLog) -> CardCpl | None:
    """The library's taking of the card's completions at its link port, where what
    stands between the port and the hard-IP model is the TB's fault injector and the
    taps, and the model and its RC source are this project's own (the transactors' RC
    source packs completions in the library): None where anything else is."""
    dev, faults = tb.dev, tb.faults
    port = dev.upstream_port
    own = (
        isinstance(port, CompiledTlpPort)
        and type(port).classify_tlp_vc is Port.classify_tlp_vc
        and port.rx_handler == faults.stall.push
        and _unwrap(faults._deliver, wrappers) == dev.upstream_recv
        and all(
            getattr(type(dev), name) is getattr(PevbUspDevice, name)
            for name in ("upstream_recv", "_run_rc_logic", "set_hot_reset")
        )
        and isinstance(dev.rc_source, TransactorRcSource)
    )
    return CardCpl(fabric, dev, faults, reads) if own else None


def meter(tb: Any, link: str, direction: str, observer: Any = None) -> Meter | None:
    """A meter of the data crossing ``link`` going ``direction`` in the library
    (:class:`tb.models.native.Meter`), where the library takes that link end, standing in
    for ``observer`` (a Python observer of those TLPs there: add it after this; it sees
    those Python moves), and of the completions the library takes for the card: None
    where the library does not take that end (the observer sees every TLP)."""
    end = getattr(tb, "native_ends", {}).get((link, direction))
    if end is None:
        return None
    made = Meter(end, observer)
    card = getattr(tb.dev, "card_cpl", None)
    if card is not None:
        card.count_in(made, observer)
    return made
