"""The compiled data path (docs/performance.md, "Design: the compiled data path"): a
library of the project's own in C++, built here on first use into ``sim_build/dp/``
and loaded into the process with ctypes, and the switch that picks the path.

``$PEVB_DATAPATH`` (:data:`DATAPATH_ENV`): ``compiled`` (the default) or ``python`` (every
TLP in Python, the path the equivalence tests compare against). What the compiled path
covers today: the fabric's calendar
(:class:`Calendar`, ``calendar.cpp``), on which the timed work runs in the same order as
on the Python heap (:class:`tb.models.timeline.Timeline`), and the TLP-level links'
wires, credits and DLLP timing (``link.cpp``, driven by
:class:`tb.models.compiled_link.CompiledTlpPort`) and the switches' queues and
arbitration order (``switch.cpp``, driven by :mod:`tb.models.switch`), and the protocol
checker's request and completion rules (``checker.cpp``, driven by
:mod:`tb.env.compiled_checker`). The links carry memory requests and completions with
data as the library's own bytes, and those cross the switches' bridges and routing in
the library too (``fabric.cpp``, driven by :mod:`tb.models.native`) where no Python
observer wants them. At the ends the library answers the root complex's RAM
(``completer.cpp``, ``memory.cpp``) and the GPU's BAR1 through its page table
(``gpu.cpp``), sends the card's posted writes from RQ (``card.cpp``) and packs and
unpacks the transactors' words (``xact.cpp``, ``vpi.cpp``); everything else is Python
TLPs.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import mmap
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..config.choices import BUILD_ROOT_ENV, COMPILED, DATAPATH_ENV, DATAPATHS, PYTHON
from ..config.choices import check_datapath as check

_NAMES = (
    "dp.h",
    "tlp.h",
    "route.h",
    "xact.h",
    "vpi.h",
    "hip.h",
    "calendar.cpp",
    "link.cpp",
    "switch.cpp",
    "tlp.cpp",
    "completer.cpp",
    "route.cpp",
    "memory.cpp",
    "checker.cpp",
    "fabric.cpp",
    "reads.cpp",
    "card.cpp",
    "vpi.cpp",
    "xact.cpp",
    "hip.cpp",
    "rcloop.cpp",
    "rqdrain.cpp",
    "gpu.cpp",
)
SOURCES = tuple(Path(__file__).with_name(n) for n in _NAMES)
CPP_SOURCES = tuple(p for p in SOURCES if p.suffix == ".cpp")

__all__ = [
    "COMPILED",
    "DATAPATHS",
    "DATAPATH_ENV",
    "PYTHON",
    "Calendar",
    "Memory",
    "check",
    "datapath",
    "library",
]


def datapath() -> str:
    """The data path this run takes: the build configuration's (:func:`tb.config.current`)."""
    from ..config.build import current

    return str(current().datapath)


def _build_root() -> Path:
    """Where the runner's builds go (``$PEVB_BUILD_ROOT``, which the runner gives every
    simulation), else ./sim_build as the runner's own default; the library in ``dp``."""
    return Path(os.environ.get(BUILD_ROOT_ENV) or Path.cwd() / "sim_build").resolve() / "dp"


class Out(ctypes.Structure):
    """What the calendar reports to Python (``dp_out``)."""

    _fields_ = [
        ("kind", ctypes.c_uint32),
        ("port", ctypes.c_uint32),
        ("slot", ctypes.c_uint64),
        ("a", ctypes.c_uint64),
        ("b", ctypes.c_uint64),
    ]


class TlpHeader(ctypes.Structure):
    """A TLP's header fields as the library keeps them (``tlp.h``'s ``TlpHeader``)."""

    _fields_ = [
        ("address", ctypes.c_uint64),
        ("length", ctypes.c_uint32),
        ("tag", ctypes.c_uint16),
        ("requester_id", ctypes.c_uint16),
        ("completer_id", ctypes.c_uint16),
        ("byte_count", ctypes.c_uint16),
        *(
            (name, ctypes.c_uint8)
            for name in (
                "fmt",
                "type",
                "tc",
                "attr",
                "at",
                "ep",
                "td",
                "th",
                "ln",
                "first_be",
                "last_be",
                "ph",
                "status",
                "bcm",
                "lower_address",
            )
        ),
        ("pad", ctypes.c_uint8 * 5),
    ]


class Stream(ctypes.Structure):
    """A transactor stream's layout below 512 bits with one segment (``xact.cpp``'s
    ``dp_stream``): dwords a beat, the tdata, tuser and tkeep widths, the parity's and
    the discontinue bit's offsets in tuser."""

    _fields_ = [
        (name, ctypes.c_uint32)
        for name in ("lanes", "dw", "uw", "kw", "parity_offset", "discontinue_offset")
    ]


class RcFields(ctypes.Structure):
    """A completion's fields as ``Tlp_us.pack_us_rc`` reads them (``xact.cpp``'s
    ``dp_rc_fields``)."""

    _fields_ = [
        (name, ctypes.c_uint32)
        for name in (
            "lower_address",
            "error_code",
            "byte_count",
            "locked",
            "request_completed",
            "length",
            "status",
            "ep",
            "requester_id",
            "tag",
            "completer_id",
            "tc",
            "attr",
            "discontinue",
        )
    ]


class HipRequest(ctypes.Structure):
    """An active request of the hard IP as a completion's checks read it (``hip.cpp``'s
    ``dp_hip_request``): active, its requester ID, attributes, traffic class, whether
    it is a memory read, its first enabled byte's offset and byte count, its address."""

    _fields_ = [
        ("active", ctypes.c_uint32),
        ("requester_id", ctypes.c_uint32),
        ("attr", ctypes.c_uint32),
        ("tc", ctypes.c_uint32),
        ("mem_read", ctypes.c_uint32),
        ("first_be_offset", ctypes.c_uint32),
        ("be_byte_count", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
        ("address", ctypes.c_uint64),
    ]


class Hip(ctypes.Structure):
    """The hard IP's requester side (``hip.cpp``'s ``dp_hip``): its 256 request slots by
    tag, the completion data credits each has received, the completion credit count,
    the receive buffer's counts and limits, the tags available, function 0's Extended
    Tag Field Enable, and its functions' IDs; why the RC loop's turn is Python's, the
    requests the library ended, whether the RC loop is the library's; why RQ's frames
    are Python's, the functions whose bus mastering is on, the bus number the core
    captured, the RQ TLPs received and of those the memory writes; the completion
    credits reads may hold; the memory reads the library issued (each one's RQ
    descriptor, byte enables and sequence number; the tags Python has not looked at, a
    bit each, and how many were issued in all); the RQ frames the library holds, waiting
    for the link, and Python's tasks that wait for RQ's frames to pass."""

    _fields_ = [
        ("request", HipRequest * 256),
        ("credits_in", ctypes.c_int64 * 256),
        ("cpld_credit_count", ctypes.c_int64),
        ("rx_buf_cplh_fc_count", ctypes.c_int64),
        ("rx_buf_cpld_fc_count", ctypes.c_int64),
        ("rx_buf_cplh_fc_limit", ctypes.c_int64),
        ("rx_buf_cpld_fc_limit", ctypes.c_int64),
        ("tag_available_count", ctypes.c_int64),
        ("extended_tags", ctypes.c_uint32),
        ("functions", ctypes.c_uint32),
        ("function_id", ctypes.c_uint32 * 8),
        ("rc_blocks", ctypes.c_uint32),
        ("ended", ctypes.c_uint32),
        ("rc_owned", ctypes.c_uint32),
        ("rq_blocks", ctypes.c_uint32),
        ("rq_bme", ctypes.c_uint32),
        ("bus", ctypes.c_uint32),
        ("rq_seen", ctypes.c_uint64),
        ("rq_posted", ctypes.c_uint64),
        ("cpld_credit_limit", ctypes.c_int64),
        ("rq_desc", (ctypes.c_uint32 * 4) * 256),
        ("rq_be", ctypes.c_uint32 * 256),
        ("issued", ctypes.c_uint64 * 4),
        ("issued_count", ctypes.c_uint32),
        ("rq_held", ctypes.c_uint32),
        ("rq_waiters", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
    ]


# why the model's moving on by a completion the card's end took is Python's (``hip.cpp``):
# its RC loop is not idle on an empty queue, its RQ logic waits for completion credit,
# the RC source is not one the library writes into, a timer callback's write is deferred
RC_BUSY, RC_WAITER, RC_SOURCE, RC_DEFERRED = 1, 2, 4, 8


class RcSrc(ctypes.Structure):
    """A transactor RC source's state, where the library's RC loop (``rcloop.cpp``'s
    ``dp_rc_src``) writes completions into it too: beats written in all; the buffer's
    depth, its pointers' modulus, dwords a beat, a word's bytes; cocotbext-pcie's idle
    event set, cocotb trusting the simulator's writes; the queue occupancy limit in
    frames, the wake requests made (mod 256); the ring of the frames' first beats the
    per-beat packer would hold (its size, a power of two, first and count, and where it
    is); the buffer's words, the stream's layout, the transactor's signals."""

    _fields_ = [
        ("pushed", ctypes.c_uint64),
        ("depth", ctypes.c_uint32),
        ("ptr_mod", ctypes.c_uint32),
        ("lanes", ctypes.c_uint32),
        ("stride", ctypes.c_uint32),
        ("idle", ctypes.c_uint32),
        ("trust", ctypes.c_uint32),
        ("limit", ctypes.c_int32),
        ("wake_req", ctypes.c_uint32),
        ("starts_cap", ctypes.c_uint32),
        ("starts_head", ctypes.c_uint32),
        ("starts_len", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
        ("starts", ctypes.c_void_p),
        ("words", ctypes.c_void_p),
        ("stream", ctypes.c_void_p),
        ("rd_ptr", ctypes.c_void_p),
        ("wr_ptr", ctypes.c_void_p),
        ("wake_ptr", ctypes.c_void_p),
        ("wake_req_sig", ctypes.c_void_p),
        ("wake_ack", ctypes.c_void_p),
    ]


class RqSnk(ctypes.Structure):
    """A transactor RQ sink's state, where the library drains it too (``rqdrain.cpp``'s
    ``dp_rq_sink``): the words read in all; the buffer's depth, its pointers' modulus, a
    word's bytes; cocotbext-pcie's queue occupancy limit in frames; the buffer's words
    and the unpacker; the RQ transactor's read and write pointers and TLP count, and the
    CC transactor's; the RQ transactor's hold and the value last written to it; the
    queue occupancy limit in bytes."""

    _fields_ = [
        ("read", ctypes.c_uint64),
        ("depth", ctypes.c_uint32),
        ("ptr_mod", ctypes.c_uint32),
        ("stride", ctypes.c_uint32),
        ("limit", ctypes.c_int32),
        ("words", ctypes.c_void_p),
        ("u", ctypes.c_void_p),
        ("rd_ptr", ctypes.c_void_p),
        ("wr_ptr", ctypes.c_void_p),
        ("frames", ctypes.c_void_p),
        ("cc_rd_ptr", ctypes.c_void_p),
        ("cc_wr_ptr", ctypes.c_void_p),
        ("cc_frames", ctypes.c_void_p),
        ("hold", ctypes.c_void_p),
        ("held", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
        ("limit_bytes", ctypes.c_int64),
    ]


# why RQ's frames are Python's (``rqdrain.cpp``): its RQ logic holds frames, the model
# would not send a write at once for reasons of its own, the link's flow control is down
RQ_BUSY, RQ_MODEL, RQ_FC = 1, 2, 4
# and its non-posted requests are Python's: queued or issued there, or core-managed tags
RQ_NP = 8


class HipCpl(ctypes.Structure):
    """What becomes of a completion (``dp_hip_cpl``): outcome (0 not the card's, 1 for
    RC, 2 dropped for want of buffer room), its error code, whether it ends its request,
    its lower address, its tag."""

    _fields_ = [
        (name, ctypes.c_uint32)
        for name in ("outcome", "error_code", "request_completed", "lower_address", "tag")
    ]


class FunctionView(ctypes.Structure):
    """What the library's routing reads of a function's configuration (``route.cpp``):
    its BAR registers and masks, its ID, its device and function numbers."""

    _fields_ = [
        ("bar", ctypes.c_uint64 * 6),
        ("bar_mask", ctypes.c_uint64 * 6),
        ("bars", ctypes.c_uint32),
        ("pcie_id", ctypes.c_uint16),
        ("device_num", ctypes.c_uint8),
        ("function_num", ctypes.c_uint8),
    ]

    @classmethod
    def of(cls, f: Any) -> FunctionView:
        """The view of cocotbext-pcie function ``f`` now."""
        view = cls()
        view.bars = len(f.bar)
        for k, (val, mask) in enumerate(zip(f.bar, f.bar_mask, strict=True)):
            view.bar[k], view.bar_mask[k] = val, mask
        bus, device, function = f.pcie_id
        view.pcie_id = bus << 8 | device << 3 | function
        view.device_num, view.function_num = f.device_num, f.function_num
        return view


class BridgeView(ctypes.Structure):
    """What the library's routing reads of a bridge's configuration (``route.cpp``): its
    memory, prefetchable and I/O windows and its bus range."""

    _fields_ = [
        ("mem_base", ctypes.c_uint64),
        ("mem_limit", ctypes.c_uint64),
        ("prefetchable_mem_base", ctypes.c_uint64),
        ("prefetchable_mem_limit", ctypes.c_uint64),
        ("io_base", ctypes.c_uint64),
        ("io_limit", ctypes.c_uint64),
        ("sec_bus_num", ctypes.c_uint32),
        ("sub_bus_num", ctypes.c_uint32),
    ]

    @classmethod
    def of(cls, b: Any) -> BridgeView:
        """The view of cocotbext-pcie bridge ``b`` now."""
        return cls(**{name: getattr(b, name) for name, _ in cls._fields_})


# the kinds of report (dp.h's Kind): nothing due; Python's work; and a link's: a TLP
# received, the wire's next place free for a waiting sender, credit a sender waits for;
# the fabric's: a crossing the checker has records for, an egress arbitration handed
# to Python, a sender of the library's own to resume from cocotb's event loop; an
# answer at a port's end whose completions wait in its receive lane; a completion the
# card's end took; the card's RQ frames the library holds to resume from cocotb's event
# loop, and what they tell Python (a frame passed, or those left handed to Python)
NONE, PY, RX, WAKE, CREDIT, CHECKED, ARBITRATE, RESUME, REST, TOOK, RQ_RESUME, RQ = range(12)
NOT_SCHEDULED = (1 << 64) - 1
NATIVE = 1 << 62  # the bit of a handle that names a TLP of the library's own (dp.h)

_lib: list[ctypes.CDLL] = []


def library() -> ctypes.CDLL:
    """The library, built from :data:`SOURCES` if this version of them has not been
    (``sim_build/dp/libpevb_dp-<hash>.so``, under a lock), and loaded once."""
    if _lib:
        return _lib[0]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in SOURCES)).hexdigest()[:12]
    out = _build_root() / f"libpevb_dp-{digest}.so"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
        if cxx is None:
            raise RuntimeError("the compiled data path needs a C++ compiler (apt-get install g++)")
        with open(out.parent / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not out.exists():
                tmp = out.with_suffix(f".{os.getpid()}.tmp")
                cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-Wall", "-Wextra"]
                done = subprocess.run(
                    [*cmd, "-o", str(tmp), *map(str, CPP_SOURCES)], capture_output=True, text=True
                )
                if done.returncode != 0:
                    raise RuntimeError(f"building {out.name} failed:\n{done.stderr[-4000:]}")
                tmp.replace(out)
    lib = ctypes.CDLL(str(out))
    u32, u64, p, i = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_int
    u16, i64 = ctypes.c_uint16, ctypes.c_int64
    pu64 = ctypes.POINTER(u64)
    pu32 = ctypes.POINTER(u32)
    for name, res, args in (
        ("dp_cal_new", p, []),
        ("dp_cal_free", None, [p]),
        ("dp_cal_slot", u64, [p]),
        ("dp_cal_push", None, [p, u64, u64, u64]),
        ("dp_cal_pushed", u64, [p]),
        ("dp_cal_size", u64, [p]),
        ("dp_cal_first", i, [p, pu64, pu64]),
        ("dp_cal_pop_due", u32, [p, u64, ctypes.POINTER(Out)]),
        ("dp_cal_report", u32, [p, ctypes.POINTER(Out)]),
        ("dp_cal_settle", None, [p]),
        ("dp_cal_passed", i, [p, u64, u64, u64]),
        ("dp_cal_clear", None, [p]),
        ("dp_tlp_new", u64, [p, ctypes.c_char_p, u64]),
        ("dp_tlp_size", u64, [p, u64]),
        ("dp_tlp_take", None, [p, u64, ctypes.c_char_p]),
        ("dp_tlp_copy", None, [p, u64, ctypes.c_char_p]),
        ("dp_tlp_free", None, [p, u64]),
        ("dp_tlp_meta", u32, [p, u64, pu64, ctypes.POINTER(ctypes.c_int32)]),
        ("dp_cal_log", i, [p, ctypes.c_char_p]),
        ("dp_trace_tap", None, [p, u32, u32, u32]),
        ("dp_alarm_new", p, [p, p, p, p, p, p]),
        ("dp_alarm_at", None, [p, u64, u64]),
        ("dp_alarm_stop", None, [p]),
        ("dp_alarm_armed", i, [p]),
        ("dp_alarm_counts", None, [p, pu64, pu64]),
        ("dp_alarm_free", None, [p]),
        ("dp_alarm_now", u64, [p]),
        ("dp_alarm_poke", None, [p, u64]),
        ("dp_rq_drain_new", p, [p, p, p, p, p, p]),
        ("dp_rq_drain_stop", None, [p]),
        ("dp_rq_drain_free", None, [p]),
        ("dp_rq_left", None, [p, ctypes.POINTER(pu32), pu32]),
        ("dp_rq_drain_counts", u64, [p, pu64, pu64, pu64, pu64, pu64]),
        ("dp_rq_adopt", i, [p, pu32, u32, u64]),
        ("dp_rq_adopt_more", None, [p, pu32, u32]),
        ("dp_rq_resume_at", None, [p, u32, u64]),
        ("dp_rq_drop", None, [p]),
        ("dp_rq_read_tlp", i, [p, u32, u32, u32, u32, ctypes.POINTER(TlpHeader), pu64]),
        ("dp_trace_size", u64, [p]),
        ("dp_trace_take", None, [p, ctypes.c_char_p]),
        ("dp_fab_new", p, []),
        ("dp_fab_free", None, [p]),
        ("dp_fab_bridge", p, [p]),
        ("dp_fab_port", u32, [p, p, p, u32, i]),
        ("dp_fab_route", None, [p, u32, u32, u32]),
        ("dp_fab_ro_passing", None, [p, u32, i]),
        ("dp_fab_end", p, [p, u32, u32]),
        ("dp_fab_end_set", None, [p, u32, p, u32, u32]),
        ("dp_fab_end_flags", p, [p]),
        ("dp_fab_egress_flags", p, [p, u32]),
        ("dp_fab_egress_link", None, [p, u32, p]),
        ("dp_fab_crossings", u64, [p]),
        ("dp_fab_serve", p, [p, u32, p]),
        ("dp_port_end", None, [p, p, p]),
        ("dp_fab_cross", i, [p, p, p, u64, u32, u64, i, u64, ctypes.POINTER(u32)]),
        ("dp_fab_egress", i, [p, p, u32, u64]),
        ("dp_fab_arbitrate", i, [p, p, p, u32, u32, p, i, u64, pu64, pu64, i]),
        ("dp_fab_resume_at", None, [p, p, u32, u64, u32, u64]),
        ("dp_fab_resumes", u64, [p, pu64]),
        ("dp_rc_serve", i, [p, p, p, u32, u64, u32, u32, u32, u64]),
        ("dp_rc_next", i, [p, p, ctypes.POINTER(u32)]),
        ("dp_tlp_release", i, [p, u64, u64]),
        ("dp_tlp_fc", u32, [p, u64, pu64, pu64]),
        ("dp_fab_finish", None, [p, p, p, u64, u32, u64, u64, ctypes.POINTER(u32)]),
        ("dp_fab_end_reads", None, [p, p]),
        ("dp_fab_end_meter", None, [p, p]),
        ("dp_meter_new", p, []),
        ("dp_meter_free", None, [p]),
        ("dp_meter_reset", None, [p, u64, u64]),
        ("dp_meter_figures_of", None, [p, p]),
        ("dp_meter_tagged", i, [p, u32]),
        ("dp_meter_untag", None, [p, u32]),
        ("dp_meter_tag", None, [p, u32]),
        ("dp_meter_cpl", None, [p, ctypes.POINTER(TlpHeader), u64, u64]),
        ("dp_rq_write_tlp", i, [p, u32, u32, u32, u32, ctypes.POINTER(TlpHeader), pu64]),
        ("dp_rq_write", i, [p, p, p, u32, u32, u32, u32, i, i, u64, pu64]),
        ("dp_vpi_present", i, []),
        ("dp_vpi_words", p, [ctypes.c_char_p, u32]),
        ("dp_vpi_words_free", None, [p]),
        ("dp_vpi_width", u32, [p]),
        ("dp_vpi_read", None, [p, u32, ctypes.POINTER(u32)]),
        ("dp_vpi_write", None, [p, u32, ctypes.POINTER(u32)]),
        ("dp_vpi_write_run", None, [p, u32, u32, ctypes.c_char_p, u32]),
        ("dp_vpi_read_run", None, [p, u32, u32, ctypes.c_char_p, u32]),
        ("dp_vpi_signal", p, [ctypes.c_char_p]),
        ("dp_vpi_get", u32, [p]),
        ("dp_vpi_put", None, [p, u32]),
        (
            "dp_rc_pack",
            u32,
            [ctypes.POINTER(RcFields), ctypes.c_char_p, u32, ctypes.POINTER(Stream), p, u32],
        ),
        (
            "dp_rc_push",
            u32,
            [p, u32, ctypes.POINTER(RcFields), ctypes.c_char_p, u32, ctypes.POINTER(Stream), u32],
        ),
        ("dp_unpacker_new", p, [ctypes.POINTER(Stream), i, i]),
        ("dp_unpacker_free", None, [p]),
        ("dp_unpacker_reset", None, [p]),
        ("dp_unpacker_active", i, [p]),
        (
            "dp_unpack",
            u32,
            [
                p,
                ctypes.c_char_p,
                u32,
                u32,
                ctypes.POINTER(ctypes.POINTER(u32)),
                ctypes.POINTER(u32),
            ],
        ),
        (
            "dp_unpack_run",
            u32,
            [p, p, u32, u32, u32, ctypes.POINTER(pu32), pu32],
        ),
        (
            "dp_hip_completion",
            i,
            [ctypes.POINTER(Hip), ctypes.POINTER(TlpHeader), u64, ctypes.POINTER(HipCpl)],
        ),
        ("dp_gpu_new", p, [u64, u32]),
        ("dp_gpu_free", None, [p]),
        ("dp_gpu_fn", p, [p]),
        ("dp_gpu_map", None, [p, u64, i64]),
        ("dp_gpu_backing", None, [p, u64, p]),
        ("dp_gpu_counts_take", u32, [p, p, u32]),
        ("dp_gpu_request", i, [p, ctypes.c_char_p, u64, u32, p, u64, pu32]),
        ("dp_gpu_set", None, [p, u32, p, u32, u32]),
        ("dp_gpu_flags", p, [p]),
        ("dp_gpu_answered", u64, [p]),
        ("dp_port_gpu", None, [p, p]),
        ("dp_port_card", None, [p, p]),
        ("dp_card_end_new", p, [p, p]),
        ("dp_card_end_free", None, [p]),
        ("dp_card_end_flags", p, [p]),
        ("dp_card_end_set", None, [p, p, u32, u32, p, p]),
        ("dp_card_end_loop", p, [p]),
        ("dp_card_end_turns", u64, [p]),
        ("dp_rc_loop_source", None, [p, p]),
        ("dp_rc_loop_owned", i, [p]),
        ("dp_rc_loop_stop", None, [p]),
        ("dp_rc_adopt", i64, [p, pu64, pu32, pu32]),
        ("dp_rc_loop_turns", u64, [p, pu64, pu64]),
        ("dp_gpu_serve", i, [p, p, p, u64, u64, u32, i, i, u64]),
        ("dp_gpu_finish", i, [p, p, p, u64, u64, u32, i, u64]),
        ("dp_gpu_next", u64, [p]),
        (
            "dp_hip_receive",
            i,
            [p, ctypes.POINTER(Hip), p, p, u64, u64, p, u32, u32, i, p, p, u64, p],
        ),
        (
            "dp_hip_receive_finish",
            i,
            [p, ctypes.POINTER(Hip), p, p, u64, u64, p, p, u64, ctypes.POINTER(HipCpl)],
        ),
        (
            "dp_hip_rc_fields",
            None,
            [ctypes.POINTER(TlpHeader), ctypes.POINTER(HipCpl), ctypes.POINTER(RcFields)],
        ),
        ("dp_rcq_new", p, []),
        ("dp_rcq_free", None, [p]),
        ("dp_rcq_size", u32, [p]),
        ("dp_rcq_clear", None, [p]),
        ("dp_rcq_take", u32, [p]),
        ("dp_rcq_push", u32, [p, p, u32, ctypes.POINTER(Stream), u32, pu64]),
        ("dp_reads_new", p, []),
        ("dp_reads_free", None, [p]),
        ("dp_reads_put", u64, [p, u32, u64, u32]),
        ("dp_reads_put_tlp", u64, [p, ctypes.POINTER(TlpHeader)]),
        ("dp_reads_get", u64, [p, u32, pu64, pu32, pu32]),
        ("dp_reads_cpl", None, [p, u32, i]),
        ("dp_reads_drop", None, [p, u32]),
        ("dp_reads_next", u32, [p, u32]),
        ("dp_port_new", p, [p]),
        ("dp_port_id", u32, [p]),
        ("dp_port_channels", p, [p]),
        ("dp_port_connect", None, [p, p, ctypes.c_double, ctypes.c_double, u64, u64, u64]),
        ("dp_port_occupy", None, [p, u64, u64]),
        ("dp_port_take_credit", i, [p, u32, u32, u64]),
        ("dp_port_wait_credit", None, [p, u32, u32]),
        ("dp_port_must_wait", i, [p, u64]),
        ("dp_port_add_sender", None, [p]),
        ("dp_port_has_next", i, [p]),
        ("dp_port_send", None, [p, u64, u64, u64, u32, u32, u64]),
        ("dp_port_release", None, [p, u64, u64]),
        ("dp_sw_new", p, []),
        ("dp_sw_free", None, [p]),
        ("dp_sw_add_port", u32, [p]),
        ("dp_sw_add_queue", u32, [p, u32]),
        ("dp_sw_enqueue", None, [p, u32, u64, i, i, i]),
        ("dp_sw_len", u64, [p, u32]),
        ("dp_sw_next", u64, [p, u32]),
        ("dp_tlp_unpack", i, [p, ctypes.POINTER(TlpHeader)]),
        ("dp_tlp_pack", u64, [ctypes.POINTER(TlpHeader), p]),
        ("dp_tlp_check", i, [ctypes.POINTER(TlpHeader), u64]),
        (
            "dp_rc_read_completions",
            u32,
            [ctypes.POINTER(TlpHeader), u32, u32, u32, p, ctypes.POINTER(u32), u32],
        ),
        ("dp_mem_write_runs", u32, [ctypes.POINTER(TlpHeader), ctypes.POINTER(u32)]),
        ("dp_mem_new", p, []),
        ("dp_mem_free", None, [p]),
        ("dp_mem_clear", None, [p]),
        ("dp_mem_add", None, [p, u64, u64, p]),
        (
            "dp_rc_memory_request",
            u64,
            [p, ctypes.POINTER(TlpHeader), ctypes.c_char_p, u32, u32, u32, p, u64],
        ),
        ("dp_match_function", i, [ctypes.POINTER(FunctionView), ctypes.POINTER(TlpHeader)]),
        ("dp_match_secondary", i, [ctypes.POINTER(BridgeView), ctypes.POINTER(TlpHeader)]),
        ("dp_ck_new", p, [i64, i64, i64]),
        ("dp_ck_free", None, [p]),
        ("dp_ck_set_sizes", None, [p, i64, i64, i64]),
        ("dp_ck_set_tag_bits", None, [p, ctypes.c_int32, u32]),
        ("dp_ck_observe", u32, [p, u32, u32, ctypes.POINTER(TlpHeader), u64, i]),
        ("dp_ck_count", None, [p]),
        ("dp_ck_records", u32, [p]),
        ("dp_ck_record_at", p, [p, u32]),
        ("dp_ck_tlps", u64, [p]),
        ("dp_ck_late", u64, [p]),
        ("dp_ck_outstanding", u32, [p, i64, ctypes.POINTER(TlpHeader), u32]),
        ("dp_ck_timeout", None, [p, u32, u32, u16, u16]),
        ("dp_ck_gave_up", None, [p, u16, u16]),
        ("dp_ck_abandon", u32, [p, i64, ctypes.POINTER(TlpHeader), u32]),
    ):
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    _lib.append(lib)
    return lib


def _plain_ram() -> tuple[type, ...]:
    from cocotbext.axi.address_space import MemoryRegion

    return (MemoryRegion,)


# the regions the library reads and writes in place: cocotbext-axi's RAM exactly (a
# subclass may do more on an access than its mmap shows)
_PLAIN_RAM = _plain_ram()


class Memory:
    """The RAM regions of a cocotbext-axi address space as the library sees them (each
    MemoryRegion's mmap by bus address, in place), and the root complex's answers to
    memory requests against them (``memory.cpp``)."""

    def __init__(self) -> None:
        self.lib = library()
        self.mem = self.lib.dp_mem_new()
        self._out = ctypes.create_string_buffer(8192 + 16 * 64)
        self._hdr = TlpHeader()

    def __del__(self) -> None:
        mem, self.mem = getattr(self, "mem", None), None
        if mem is not None:
            self.lib.dp_mem_free(mem)

    def mirror(self, space: Any) -> int:
        """Take the RAM regions of ``space`` (nested spaces and pools included) and
        forget any before: their number. Regions of any other kind stay Python's."""
        self.lib.dp_mem_clear(self.mem)
        return self._walk(space, 0)

    def _walk(self, space: Any, at: int) -> int:
        count = 0
        for base, size, offset, region in space.regions:
            if hasattr(region, "regions"):  # a nested space or pool
                count += self._walk(region, at + base)
            elif (
                offset is not None
                and type(region) in _PLAIN_RAM
                and isinstance(getattr(region, "mem", None), mmap.mmap)
            ):
                ptr = ctypes.addressof(ctypes.c_char.from_buffer(region.mem)) + offset
                self.lib.dp_mem_add(self.mem, at + base, size, ptr)
                count += 1
        return count

    def request(self, raw: bytes, mps: int, rcb_128: bool, split_on_all_rcb: bool) -> bytes | None:
        """The root complex's answer to the memory request ``raw`` (its bytes on the
        wire): a read's completions one after another as bytes on the wire, b"" for a
        write (made), or None when the request is Python's to answer."""
        buf = ctypes.create_string_buffer(bytes(raw), max(len(raw), 16))
        if not self.lib.dp_tlp_unpack(buf, ctypes.byref(self._hdr)):
            return None
        data = raw[16 if self._hdr.fmt & 1 else 12 :]  # (4-DW headers: Fmt bit 0)
        got = self.lib.dp_rc_memory_request(
            self.mem,
            ctypes.byref(self._hdr),
            bytes(data),
            mps,
            int(rcb_128),
            int(split_on_all_rcb),
            self._out,
            len(self._out),
        )
        return None if got == NOT_SCHEDULED else self._out.raw[:got]


class Words:
    """A simulator array's words (a transactor's beat buffer) read and written by the
    library through the simulator's VPI (``vpi.cpp``), a run of words in one call:
    each word a Python int, as cocotb reads it (x and z bits read 0). Made by
    :meth:`of`, which says None where the library cannot reach the array."""

    def __init__(self, lib: ctypes.CDLL, words: int, depth: int) -> None:
        self.lib, self.words, self.depth = lib, words, depth
        self.width = lib.dp_vpi_width(words)
        self.stride = 4 * ((self.width + 31) // 32)  # a word's bytes, in whole limbs
        self._buf = ctypes.create_string_buffer(self.stride * depth)

    @classmethod
    def of(cls, handle: Any) -> Words | None:
        """The words of cocotb array ``handle``, or None."""
        lib = library()
        words = lib.dp_vpi_words(handle._path.encode(), len(handle))
        return cls(lib, words, len(handle)) if words else None

    def __del__(self) -> None:
        words, self.words = getattr(self, "words", None), None
        if words:
            self.lib.dp_vpi_words_free(words)

    def write(self, start: int, values: list[int]) -> None:
        """Words ``start`` on (wrapping at the depth) set to ``values``, at once."""
        n = self.stride
        raw = b"".join(v.to_bytes(n, "little") for v in values)
        self.lib.dp_vpi_write_run(self.words, start, len(values), raw, n)

    def read(self, start: int, count: int) -> list[int]:
        """``count`` words from ``start`` on (wrapping at the depth)."""
        n, buf = self.stride, self._buf
        self.lib.dp_vpi_read_run(self.words, start, count, buf, n)
        raw = ctypes.string_at(buf, count * n)
        return [int.from_bytes(raw[k : k + n], "little") for k in range(0, count * n, n)]


class Unpacker:
    """An RQ or CC sink's unpacker in the library (``xact.cpp``): frames from runs of
    beat words, as ``_TransactorSink._unpack`` makes them (``rq``: RQ's first-beat
    fields; ``seq_hi``: a 62-bit RQ tuser's two high sequence number bits), the frame a
    run leaves open kept for the next."""

    def __init__(self, stream: Stream, rq: bool, seq_hi: bool) -> None:
        from cocotbext.pcie.xilinx.us.interface import UsPcieFrame

        self._frame = UsPcieFrame
        self.lib = library()
        self.stream = stream
        self.u = self.lib.dp_unpacker_new(ctypes.byref(stream), int(rq), int(seq_hi))
        self._out = ctypes.POINTER(ctypes.c_uint32)()
        self._len = ctypes.c_uint32()
        self._refs = (ctypes.byref(self._out), ctypes.byref(self._len))

    def __del__(self) -> None:
        u, self.u = getattr(self, "u", None), None
        if u:
            self.lib.dp_unpacker_free(u)

    def reset(self) -> None:
        """Forget the frame left open."""
        self.lib.dp_unpacker_reset(self.u)

    @property
    def active(self) -> bool:
        """Whether the last beat unpacked left its frame open."""
        return bool(self.lib.dp_unpacker_active(self.u))

    def run(self, words: Words, start: int, count: int) -> list:
        """The frames ``count`` words of ``words`` from ``start`` on end (read through
        the simulator)."""
        n = self.lib.dp_unpack_run(self.u, words.words, start, count, words.stride, *self._refs)
        return self._frames(n)

    def left(self, drain: int, n: int) -> list:
        """The ``n`` frames the library's drain ``drain`` left for Python
        (``rqdrain.cpp``'s ``dp_rq_left``)."""
        self.lib.dp_rq_left(drain, *self._refs)
        return self._frames(n)

    def unpack(self, raw: bytes, count: int, stride: int) -> list:
        """The frames ``count`` words in ``raw`` (``stride`` bytes each) end."""
        return self._frames(self.lib.dp_unpack(self.u, raw, count, stride, *self._refs))

    def _frames(self, n: int) -> list:
        flat = self._out[: self._len.value]
        frames, i = [], 0
        for _ in range(n):
            ndw = flat[i]
            f = self._frame()
            f.first_be, f.last_be, f.seq_num = flat[i + 1], flat[i + 2], flat[i + 3]
            f.discontinue = bool(flat[i + 4])
            i += 5
            f.data = flat[i : i + ndw]
            f.parity = flat[i + ndw : i + 2 * ndw]
            i += 2 * ndw
            frames.append(f)
        return frames


class Calendar:
    """Work at (step, slot) in the library's calendar: Python's work kept here by
    handle, the links' own in the library, the order the library's."""

    def __init__(self) -> None:
        self.lib = library()
        self.cal = self.lib.dp_cal_new()
        self._work: dict[int, tuple[Callable[[Any], None], Any]] = {}
        self._next = 0
        self._step = ctypes.c_uint64()
        self._slot = ctypes.c_uint64()
        self.out = Out()
        self._out = ctypes.byref(self.out)

    def __del__(self) -> None:
        cal, self.cal = getattr(self, "cal", None), None
        if cal is not None:
            self.lib.dp_cal_free(cal)

    @property
    def library_name(self) -> str:
        """The file of the library this calendar is in."""
        return Path(self.lib._name).name

    def __len__(self) -> int:
        return int(self.lib.dp_cal_size(self.cal))

    def slot(self) -> int:
        """A place in the order of work (the one counter Python and the links share)."""
        return self.lib.dp_cal_slot(self.cal)

    def push(self, step: int, slot: int, work: Callable[[Any], None], arg: Any) -> None:
        """Schedule ``work(arg)`` at ``step``, in place ``slot`` among that step's work."""
        handle = self._next
        self._next += 1
        self._work[handle] = (work, arg)
        self.lib.dp_cal_push(self.cal, step, slot, handle)

    def pushed(self) -> int | None:
        """The earliest step scheduled since the last call, or None."""
        step = self.lib.dp_cal_pushed(self.cal)
        return None if step == NOT_SCHEDULED else step

    def first(self) -> tuple[int, int] | None:
        """The (step, slot) of the earliest work, or None."""
        if not self.lib.dp_cal_first(self.cal, self._step, self._slot):
            return None
        return self._step.value, self._slot.value

    def take(self, now: int) -> int:
        """Run the links' work due by step ``now`` until an entry has something for
        Python: its kind (:data:`PY`: Python's work, :meth:`work` of ``out.a``; the
        others a link's report, in :attr:`out`), or :data:`NONE` when nothing is due."""
        return self.lib.dp_cal_pop_due(self.cal, now, self._out)

    def work(self, handle: int) -> tuple[Callable[[Any], None], Any]:
        """Python's work by its handle, taken off the calendar."""
        return self._work.pop(handle)

    def settle(self) -> None:
        """The work of a time step is done (or failed): the calendar stops firing."""
        self.lib.dp_cal_settle(self.cal)

    def passed(self, step: int, slot: int, now: int) -> bool:
        """Whether work at (``step``, ``slot``) would have run by step ``now``."""
        return bool(self.lib.dp_cal_passed(self.cal, step, slot, now))

    def due(self, now: int) -> Iterator[tuple[int, Callable[[Any], None], Any]]:
        """Take Python's work due by step ``now``, in order, one at a time (work
        scheduled meanwhile for ``now`` comes in its place): (slot, work, arg). For a
        calendar with no links."""
        try:
            while (kind := self.take(now)) != NONE:
                if kind != PY:
                    raise RuntimeError(f"a link's report ({kind}) where only Python's work is")
                work, arg = self.work(self.out.a)
                yield self.out.slot, work, arg
        finally:
            self.settle()

    def clear(self) -> None:
        self.lib.dp_cal_clear(self.cal)
        self._work.clear()
