"""The README and the documentation site: the site builds in Sphinx's strict mode (a broken
link, heading anchor or reference fails it, as ``make docs`` does), the README stays short,
and every link in the README and every link from a page to a file resolves."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 400

_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")


def links(text: str) -> list[str]:
    """The targets of the Markdown links and images of ``text``, outside code."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # fenced blocks
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code
    return _LINK.findall(text)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and MyST make it: lower case, punctuation dropped
    (``-`` and ``_`` kept), spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.M | re.S)
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def broken_links(page: Path) -> list[str]:
    """Each link of ``page`` that leads nowhere: a missing file, or a missing heading in
    this page or another Markdown page. Web addresses must be well-formed https ones."""
    bad = []
    for target in links(page.read_text()):
        if re.match(r"^[a-z]+:", target):
            if not re.match(r"^https://[\w.-]+\.[a-z]{2,}(/\S*)?$", target):
                bad.append(target)
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(target)
        elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
            bad.append(target)
    return bad


def test_readme_is_short():
    n = len(README.read_text().splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines: reference goes to docs/"


def test_every_readme_link_resolves():
    found = links(README.read_text())
    assert any(t.startswith("docs/") for t in found), "the README links into the docs"
    assert not broken_links(README), broken_links(README)


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_every_docs_link_to_a_file_resolves(page: Path):
    assert not broken_links(page), broken_links(page)


def test_link_checker_sees_what_is_broken(tmp_path: Path):
    (tmp_path / "other.md").write_text("# A page\n\n## Its `part` (two)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Here\n[ok](other.md#its-part-two) [ok](#here) [ok](other.md) "
        "[web](https://example.org/x)\n"
        "[gone](missing.md) [no anchor](other.md#nope) [bad](#nowhere) [web](http:/x)\n"
        "`[in code](missing2.md)`\n```\n[in a block](missing3.md)\n```\n"
    )
    assert broken_links(page) == ["missing.md", "other.md#nope", "#nowhere", "http:/x"]


def test_docs_site_builds_in_strict_mode(tmp_path: Path):
    """``make docs``'s build, from scratch: any warning (a broken cross-reference, a
    missing anchor, a page in no table of contents) fails it."""
    out = tmp_path / "html"
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-n", "-q"),
            *("-b", "html", "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for page in DOCS.glob("*.md"):
        assert (out / f"{page.stem}.html").is_file(), page.name
    assert (out / "search.html").is_file() and (out / "searchindex.js").is_file()
