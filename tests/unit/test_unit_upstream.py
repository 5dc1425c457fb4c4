"""The upstream code the extensions rest on (tb/models/upstream.py): on the versions the
extensions were verified with, every class, function and private name they replace,
override or read is what it was when they were checked. A new cocotb or cocotbext-pcie
that changes any of it fails here, naming each, until it is verified again
(docs/extensions.md)."""

from __future__ import annotations

import pytest

from tb import models
from tb.models import upstream


def test_the_table_covers_every_spec_once() -> None:
    assert len(set(upstream.SPECS)) == len(upstream.SPECS)
    assert set(upstream.FINGERPRINTS) == set(upstream.SPECS)
    assert all(v for v in upstream.FINGERPRINTS.values())


def test_the_upstream_code_is_what_the_extensions_were_checked_against() -> None:
    installed = models.installed_versions()
    assert installed == models.VERIFIED, (
        f"installed {installed}, the extensions were verified with {models.VERIFIED}"
    )
    changed = upstream.changed()
    assert not changed, (
        "upstream code the extensions rest on changed (verify it as docs/extensions.md "
        "says, then record it with python -m tb.models.upstream):\n"
        + "\n".join(
            f"  {spec}: {'gone' if got is None else 'changed'}"
            for spec, (_, got) in changed.items()
        )
    )


# a module of another package: a definition made one way or another, a method, a name
FAKE = """import sys
if sys.platform:
    def f():
        return 1
else:
    def f():
        return {other}
class C:
    def m(self):
        return 3
X = 4
"""


def test_a_changed_definition_is_found(tmp_path, monkeypatch) -> None:
    """A definition whose text differs, one made in an if/else, a method, an assignment
    and a name that is gone: each found as such."""
    fake = tmp_path / "fake_upstream.py"
    fake.write_text(FAKE.format(other=2))
    monkeypatch.syspath_prepend(str(tmp_path))
    specs = ["fake_upstream:f", "fake_upstream:C.m", "fake_upstream:X"]
    before = {s: upstream.fingerprint(s) for s in specs}
    assert all(before.values())
    assert upstream.fingerprint("fake_upstream:C.gone") is None
    assert upstream.fingerprint("no_such_module:f") is None
    fake.write_text(FAKE.format(other=5))  # the other branch changed
    import sys

    del sys.modules["fake_upstream"]
    after = {s: upstream.fingerprint(s) for s in specs}
    assert after["fake_upstream:f"] != before["fake_upstream:f"]
    assert after["fake_upstream:C.m"] == before["fake_upstream:C.m"]
    monkeypatch.setattr(upstream, "FINGERPRINTS", dict(before))
    assert set(upstream.changed()) == {"fake_upstream:f"}


@pytest.mark.parametrize("spec", ["cocotbext.pcie.core.tlp:Tlp.check", "cocotb.task:_current_task"])
def test_a_replacement_installed_at_run_time_does_not_hide_the_upstream_code(spec) -> None:
    """The fingerprint is of the module's file: the fast paths replace Tlp.check in its
    class, and the fingerprint stays the recorded one."""
    models.install()
    assert upstream.fingerprint(spec) == upstream.FINGERPRINTS[spec]
