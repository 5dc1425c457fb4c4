"""The PCIe protocol checker and the completion splitter, on hand-made TLPs (no simulator)."""

from __future__ import annotations

import pytest
from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpAttr, TlpType
from cocotbext.pcie.core.utils import PcieId

from tb.env.compiled_checker import CompiledChecker
from tb.env.faults import FaultRule, split_completion
from tb.env.link import DOWN, UP, ProtocolChecker, ProtocolViolation
from tests.unit.tlps import FPGA, HOST, mem_read, mem_write


def cpl(req: Tlp, first: int, nbytes_in_tlp: int, remaining: int) -> Tlp:
    """A completion carrying ``nbytes_in_tlp`` bytes starting at byte address ``first``."""
    c = Tlp.create_completion_data_for_tlp(req, PcieId(0, 0, 0))
    c.lower_address = first & 0x7F
    c.byte_count = remaining
    dws = ((first & 3) + nbytes_in_tlp + 3) // 4
    c.set_data(bytes(range(256)) * (dws * 4 // 256 + 1))
    c.set_data(c.data[: dws * 4])
    return c


@pytest.fixture(params=["python", "compiled"])
def kind(request) -> type[ProtocolChecker]:
    """Each test runs on the Python checker and on the compiled data path's (the same
    rules in tb/dp/checker.cpp)."""
    return ProtocolChecker if request.param == "python" else CompiledChecker


def checker(kind: type[ProtocolChecker]) -> ProtocolChecker:
    return kind(mps=256, mrrs=512, rcb=64, mode="record")


def rules(ch: ProtocolChecker) -> list[str]:
    return [v.rule for v in ch.violations]


def test_good_read_split_at_rcb_is_clean(kind: type[ProtocolChecker]) -> None:
    ch = checker(kind)
    r = mem_read(0x1000 + 2, 300)
    ch.observe("fpga", UP, r)
    ch.observe("fpga", DOWN, cpl(r, 0x1002, 62, 300))  # up to 0x1040
    ch.observe("fpga", DOWN, cpl(r, 0x1040, 238, 238))  # the rest, final
    assert ch.violations == [] and ch.outstanding() == []


@pytest.mark.parametrize(
    "tlp,rule",
    [
        (mem_write(0x1000, bytes(512)), "mps"),
        (mem_read(0x1000, 1024), "mrrs"),
        (mem_read(0x1F00, 512), "4k"),
        (mem_write(0x1FFC, bytes(8)), "4k"),
    ],
)
def test_request_rules(tlp: Tlp, rule: str, kind: type[ProtocolChecker]) -> None:
    ch = checker(kind)
    ch.observe("fpga", UP, tlp)
    assert rule in rules(ch)


def test_byte_enable_rules(kind: type[ProtocolChecker]) -> None:
    ch = checker(kind)
    t = mem_read(0x1000, 16)
    t.last_be = 0
    ch.observe("fpga", UP, t)
    t = mem_read(0x1000, 4, tag=2)
    t.last_be = 0xF
    ch.observe("fpga", UP, t)
    t = mem_read(0x1004, 12, tag=3)  # 3 DW, first BE with a hole
    t.first_be = 0b1011
    ch.observe("fpga", UP, t)
    assert rules(ch) == ["byte-enable"] * 3
    ok = mem_read(0x1000, 8, tag=4)  # QW-aligned 2 DW: holes allowed
    ok.first_be, ok.last_be = 0b0101, 0b1010
    ch.observe("fpga", UP, ok)
    assert len(ch.violations) == 3


def test_tag_reuse_and_unexpected_completion(kind: type[ProtocolChecker]) -> None:
    ch = checker(kind)
    r = mem_read(0x2000, 64, tag=9)
    ch.observe("fpga", UP, r)
    ch.observe("fpga", UP, mem_read(0x3000, 64, tag=9))
    assert rules(ch) == ["tag-in-use"]
    stray = cpl(mem_read(0x4000, 4, tag=20), 0x4000, 4, 4)
    ch.observe("fpga", DOWN, stray)
    assert rules(ch)[-1] == "unexpected-completion"
    # the same tag on another link or in the other direction is independent
    ch2 = checker(kind)
    ch2.observe("fpga", UP, mem_read(0x2000, 64, tag=9))
    ch2.observe("gpu", DOWN, mem_read(0x2000, 64, tag=9))
    assert ch2.violations == []


def test_completion_field_rules(kind: type[ProtocolChecker]) -> None:
    ch = checker(kind)
    r = mem_read(0x1000, 256)
    ch.observe("fpga", UP, r)
    ch.observe("fpga", DOWN, cpl(r, 0x1000, 100, 256))  # ends mid-RCB
    assert "rcb" in rules(ch)
    ch = checker(kind)
    ch.observe("fpga", UP, r)
    ch.observe("fpga", DOWN, cpl(r, 0x1000, 64, 200))  # wrong byte count
    assert "byte-count" in rules(ch)
    ch = checker(kind)
    ch.observe("fpga", UP, r)
    ch.observe("fpga", DOWN, cpl(r, 0x1008, 64, 256))  # wrong lower address
    assert "lower-address" in rules(ch)
    ch = checker(kind)
    ch.observe("fpga", UP, r)
    ch.observe("fpga", DOWN, cpl(r, 0x1000, 512, 256))  # more data than requested
    assert "mps" in rules(ch) or "length" in rules(ch)


def test_error_completion_retires_and_timeout_forgives_late_ones(
    kind: type[ProtocolChecker],
) -> None:
    ch = checker(kind)
    r = mem_read(0x1000, 64, tag=4)
    ch.observe("fpga", UP, r)
    ur = Tlp.create_ur_completion_for_tlp(r, PcieId(0, 0, 0))
    ch.observe("fpga", DOWN, ur)
    assert ch.violations == [] and ch.outstanding() == []
    ch.observe("fpga", UP, r)
    ch.requester_timeout("fpga", UP, int(FPGA), 4)
    ch.observe("fpga", DOWN, cpl(r, 0x1000, 64, 64))
    assert ch.violations == [] and ch.late_completions == 1
    bad = Tlp.create_ur_completion_for_tlp(r, PcieId(0, 0, 0))
    bad.set_data(bytes(4))
    ch.observe("fpga", UP, r)
    ch.observe("fpga", DOWN, bad)
    assert rules(ch) == ["completion-data"]


def test_expected_violations_are_kept_not_raised_and_settle_the_request(
    kind: type[ProtocolChecker],
) -> None:
    """Under expecting(link): a violation on that link is kept (seen, expected), not
    raised, even in raise mode; one on another link still raises. Closing gives up the
    requests the malformed completion left outstanding: their tags are free again and a
    later completion for one is late, not a violation. Without a provoked violation,
    closing leaves the outstanding requests alone."""
    ch = kind(mps=256, mrrs=512, rcb=64)  # raise mode
    r = mem_read(0x1000, 256, tag=3)
    ch.observe("fpga", UP, r)
    with ch.expecting("fpga") as exp:
        ch.observe("fpga", DOWN, cpl(r, 0x1000, 64, 200))  # wrong byte count
        with pytest.raises(ProtocolViolation):
            ch.observe("gpu", UP, mem_write(0x1000, bytes(512)))  # another link
    assert [v.rule for v in exp.seen] == ["byte-count"] and ch.expected == exp.seen
    assert [v.rule for v in ch.violations] == ["mps"]
    assert exp.abandoned and ch.outstanding("fpga") == []
    ch.observe("fpga", DOWN, cpl(r, 0x1040, 64, 192))  # the old request's rest: late
    assert ch.late_completions == 1
    ch.observe("fpga", UP, mem_read(0x2000, 64, tag=3))  # the tag is free again
    assert [v.rule for v in ch.violations] == ["mps"]
    with ch.expecting("fpga") as quiet:
        pass
    assert quiet.abandoned == [] and len(ch.outstanding("fpga")) == 1
    with pytest.raises(ProtocolViolation):  # closed: violations raise again
        ch.observe("fpga", UP, mem_write(0x1000, bytes(512)))


def test_raise_mode_names_link_rule_and_tlp(kind: type[ProtocolChecker]) -> None:
    ch = kind(mps=128, mrrs=512)
    with pytest.raises(ProtocolViolation) as e:
        ch.observe("fpga", UP, mem_write(0x1000, bytes(256)))
    text = str(e.value)
    assert "fpga" in text and "[mps]" in text and "MEM_WRITE" in text and "0x1000" in text


@pytest.mark.parametrize("first,nbytes", [(0x1000, 256), (0x1003, 300), (0x1041, 7), (0x107F, 130)])
def test_split_completion_is_valid_and_lossless(
    first: int, nbytes: int, kind: type[ProtocolChecker]
) -> None:
    r = mem_read(first, nbytes)
    whole = cpl(r, first, nbytes, nbytes)
    whole.set_data(bytes((i * 7) & 0xFF for i in range(len(whole.data))))
    pieces = split_completion(whole, 64)
    ch = checker(kind)
    ch.observe("fpga", UP, r)
    for p in pieces:
        ch.observe("fpga", DOWN, p)
    assert ch.violations == [] and ch.outstanding() == []
    # the bytes carried, in order, are the original ones
    got = b""
    for p in pieces:
        off = p.lower_address & 3
        got += bytes(p.data[off : off + min(p.byte_count, len(p.data) - off)])
    off = first & 3
    assert got == bytes(whole.data[off : off + nbytes])
    assert len(pieces) == len({(a // 64) for a in range(first, first + nbytes)})


def test_fault_rule_skip_and_count() -> None:
    rule = FaultRule("ur", target="gpu", skip=1, count=2)
    hits = [rule.take(t) for t in ("host", "gpu", "gpu", "gpu", "gpu")]
    assert hits == [False, False, True, True, False]
    with pytest.raises(ValueError):
        FaultRule("nonsense")
    assert FaultRule("ur").kind == "ur"


def test_tag_width_follows_the_requester(kind: type[ProtocolChecker]) -> None:
    """A requester without Extended Tag Field Enable has 5-bit tags: tag 32 is a
    violation, tag 31 is not; another requester keeps the 8-bit default."""
    ch = checker(kind)
    ch.tag_bits[int(FPGA)] = 5
    ch.observe("fpga", UP, mem_read(0x1000, 4, tag=31))
    assert ch.violations == []
    ch.observe("fpga", UP, mem_read(0x1000, 4, tag=32))
    assert rules(ch) == ["tag-width"]
    ch.observe("fpga", DOWN, mem_read(0x1000, 4, tag=200, requester=HOST))
    assert rules(ch) == ["tag-width"]
    ch.observe("fpga", DOWN, mem_read(0x1000, 4, tag=256, requester=HOST))
    assert rules(ch) == ["tag-width", "tag-width"]


def test_address_format_follows_the_address(kind: type[ProtocolChecker]) -> None:
    """Below 4 GiB a request uses the 32-bit header; the 64-bit one there is a violation,
    as is a 32-bit header for an address above (the legal neighbours pass)."""
    ch = checker(kind)
    ch.observe("fpga", UP, mem_write(0x8000_0000, bytes(8)))
    ch.observe("fpga", UP, mem_write(0x1_0000_0000, bytes(8)))
    assert ch.violations == []
    low64 = mem_write(0x8000_0000, bytes(8))
    low64.fmt_type = TlpType.MEM_WRITE_64
    ch.observe("fpga", UP, low64)
    assert rules(ch) == ["address-format"]
    high32 = mem_read(0x1_0000_0000, 8, tag=1)
    high32.fmt_type = TlpType.MEM_READ
    ch.observe("fpga", UP, high32)
    assert rules(ch) == ["address-format", "address-format"]


def test_completion_attributes_follow_the_request(kind: type[ProtocolChecker]) -> None:
    """A completion carries its request's TC and its NS/RO attributes (IDO it may set)."""
    for field, value, ok in (
        ("attr", TlpAttr.RO, False),
        ("attr", TlpAttr.IDO, True),
        ("tc", 3, False),
    ):
        ch = checker(kind)
        r = mem_read(0x1000, 64, tag=5)
        ch.observe("fpga", UP, r)
        c = cpl(r, 0x1000, 64, 64)
        setattr(c, field, value)
        ch.observe("fpga", DOWN, c)
        assert rules(ch) == ([] if ok else ["completion-attr"]), (field, value)
    ch = checker(kind)
    r = mem_read(0x1000, 64, tag=5)
    r.attr = TlpAttr.RO
    ch.observe("fpga", UP, r)
    ch.observe("fpga", DOWN, cpl(r, 0x1000, 64, 64))  # copies RO: fine
    assert ch.violations == []


def test_completion_status_legal_for_its_request(kind: type[ProtocolChecker]) -> None:
    """CRS answers configuration requests only; reserved status values never."""
    ch = checker(kind)
    r = mem_read(0x1000, 64, tag=6)
    ch.observe("fpga", UP, r)
    crs = Tlp.create_completion_for_tlp(r, HOST)
    crs.status = CplStatus.CRS
    ch.observe("fpga", DOWN, crs)
    assert rules(ch) == ["completion-status"]
    ch = checker(kind)
    ch.observe("fpga", UP, r)
    bad = Tlp.create_completion_for_tlp(r, HOST)
    bad.status = 5
    ch.observe("fpga", DOWN, bad)
    assert rules(ch) == ["completion-status"]
    ch = checker(kind)
    cfg = Tlp()
    cfg.fmt_type = TlpType.CFG_READ_0
    cfg.requester_id, cfg.tag = HOST, 7
    cfg.length, cfg.first_be = 1, 0xF
    ch.observe("fpga", DOWN, cfg)
    crs = Tlp.create_completion_for_tlp(cfg, FPGA)
    crs.status = CplStatus.CRS
    ch.observe("fpga", UP, crs)
    assert ch.violations == [] and ch.outstanding() == []


def test_messages_and_zero_length_writes(kind: type[ProtocolChecker]) -> None:
    """Messages are checked (a data-less one has length 0; a MsgD's payload matches its
    length and MPS); a zero-length write (1 DW, no byte enabled) is legal."""
    ch = checker(kind)
    msg = Tlp()
    msg.fmt_type = TlpType.MSG_TO_RC
    ch.observe("fpga", UP, msg)
    assert ch.violations == []
    msg.length = 1
    ch.observe("fpga", UP, msg)
    assert rules(ch) == ["message-length"]
    msgd = Tlp()
    msgd.fmt_type = TlpType.MSG_DATA_ID
    msgd.set_data(bytes(8))
    ch.observe("fpga", UP, msgd)
    assert rules(ch) == ["message-length"]
    msgd.set_data(bytes(512))
    ch.observe("fpga", UP, msgd)
    assert rules(ch) == ["message-length", "mps"]
    ch = checker(kind)
    zero = mem_write(0x1000, bytes(4))
    zero.first_be = 0
    ch.observe("fpga", UP, zero)
    assert ch.violations == [], "a zero-length write is legal"
