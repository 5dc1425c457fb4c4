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


# what a repository path in backticks starts with: a top-level folder or file
_REPO_TOPS = ("hdl/", "tb/", "tests/", "docs/", "driver_model/", "cuda_model/", ".ci/")
_REPO_FILES = ("Makefile", "pyproject.toml", "README.md", "LICENSE")


def repository_paths(text: str) -> list[str]:
    """The repository paths ``text`` writes in inline code, outside fenced blocks: a span
    without spaces that starts with a top-level folder or is a top-level file; a line
    number (``:12``), a heading (``#part``) or a pytest item (``::test_x``) after it is
    dropped, and a ``<part>`` placeholder stands for any name."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    out = []
    for span in re.findall(r"`([^`\n]+)`", text):
        path = re.sub(r"(::\S*|:\d+(-\d+)?|#\S*)$", "", span.strip())
        if " " not in path and (path.startswith(_REPO_TOPS) or path in _REPO_FILES):
            out.append(path)
    return out


def path_exists(path: str, root: Path = ROOT) -> bool:
    """Whether ``path`` names something in the repository: a file or folder, a glob that
    matches one (``<part>`` is ``*``), or each of a ``{a,b}`` choice."""
    choice = re.search(r"\{([^}]*)\}", path)
    if choice:
        return all(
            path_exists(path[: choice.start()] + alt + path[choice.end() :], root)
            for alt in choice.group(1).split(",")
        )
    pattern = re.sub(r"<[^>]+>", "*", path.rstrip("/"))
    if re.search(r"[*?\[]", pattern):
        return any(root.glob(pattern))
    return (root / pattern).exists()


@pytest.mark.parametrize(
    "page", [README, *sorted(DOCS.glob("*.md"))], ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_every_repository_path_in_backticks_exists(page: Path):
    missing = [p for p in repository_paths(page.read_text()) if not path_exists(p)]
    assert not missing, f"{page.name} names paths that do not exist: {missing}"


def test_path_checker_sees_what_is_missing(tmp_path: Path):
    (tmp_path / "tb" / "env").mkdir(parents=True)
    (tmp_path / "tb" / "env" / "system.py").write_text("")
    (tmp_path / "tb" / "env" / "link.py").write_text("")
    text = (
        "`tb/env/system.py` `tb/env/system.py:12` `tb/env/{system,link}.py` "
        "`tb/env/<part>.py` `tb/env/` `tb.env.system` `make test` "
        "`tb/env/farm.py` `tb/env/{system,gone}.py` `tb/regress/` `tb/env/x.py::test_a`\n"
        "```\n`tb/in_a_block.py`\n```\n"
    )
    found = repository_paths(text)
    assert "tb.env.system" not in found and "make test" not in found
    missing = [p for p in found if not path_exists(p, tmp_path)]
    assert missing == ["tb/env/farm.py", "tb/env/{system,gone}.py", "tb/regress/", "tb/env/x.py"]


def test_diagrams_are_plain_text_blocks() -> None:
    """A fenced block that draws (boxes, arrows, columns) says ``text``: a block with no
    language is highlighted as code, and words such as ``in`` and ``for`` come out
    coloured inside a diagram."""
    drawing = re.compile(r"[+|]-{2,}|-{2,}[+>|]|\|\s{2,}")
    bad = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lang, body, start = None, [], 0
        for n, line in enumerate(page.read_text().splitlines(), 1):
            if line.startswith("```"):
                if lang is None:
                    lang, body, start = line[3:].strip(), [], n
                    continue
                if not lang and drawing.search("\n".join(body)):
                    bad.append(f"{page.name}:{start}")
                lang = None
            elif lang is not None:
                body.append(line)
    assert not bad, f"diagrams in blocks with no language (make them ```text): {bad}"
