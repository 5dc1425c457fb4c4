"""The descriptor bypass port's descriptor (tb/env/bypass.py): the ``ctl`` encoding PG195
gives (bit 0 Stop, 1 Completed, 4 EOP) and a named error for what the port cannot carry."""

from __future__ import annotations

import pytest

from tb.env.bypass import MAX_LEN, BypassDesc, BypassError


def test_ctl_bits_are_pg195s() -> None:
    assert BypassDesc(0, 0, 1).ctl == 0
    assert BypassDesc(0, 0, 1, stop=True).ctl == 0b00001
    assert BypassDesc(0, 0, 1, completed=True).ctl == 0b00010
    assert BypassDesc(0, 0, 1, eop=True).ctl == 0b10000
    assert BypassDesc(0, 0, 1, stop=True, completed=True, eop=True).ctl == 0b10011


@pytest.mark.parametrize(
    "kw, what",
    [
        ({"src": 1 << 64, "dst": 0, "length": 1}, "src"),
        ({"src": 0, "dst": -1, "length": 1}, "dst"),
        ({"src": 0, "dst": 0, "length": MAX_LEN + 1}, "length"),
        ({"src": 0, "dst": 0, "length": -1}, "length"),
    ],
)
def test_out_of_range_fields_are_refused(kw: dict, what: str) -> None:
    with pytest.raises(BypassError, match=what):
        BypassDesc(**kw)
    assert BypassDesc(0, (1 << 64) - 1, MAX_LEN).length == MAX_LEN
