"""Every pointer the docs and the modules' docstrings and comments give to a file or
module of the project leads somewhere: a path (``tb/models/link.py``,
``guest/tests/rdma.sh``) names a file or folder of the checkout, and a dotted name
(``tb.models.choice.models``) a module of the project and, past it, a name that module
has. Placeholders (``<module>``,
``*``) and what the builds make (``sim_build/``) are not pointers."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("tb", "hdl", "guest", "driver_model", "cuda_model", "tests", "docs", ".ci")
PATH = re.compile(
    r"(?<![\w./-])((?:" + "|".join(re.escape(t) for t in TOPS) + r")/[\w./<>*{}-]*[\w/<>*}])"
)
DOTTED = re.compile(r"(?<![\w./-])((?:tb|driver_model|cuda_model)(?:\.\w+)+)")
# pointers into other projects, or into a user's own: not this checkout's
ELSEWHERE = {
    "docs/interop/vhost-user.rst": "QEMU's documentation of vhost-user",
    "tb/test_mine.py": "a user's own test module, in the drop-in's walk-through",
    "tb.test_mine": "the same, as a module",
}


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _docstrings() -> list[tuple[Path, str]]:
    out = []
    for top in ("tb", "driver_model", "cuda_model", "tests"):
        for path in sorted((ROOT / top).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(
                    node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
                ):
                    doc = ast.get_docstring(node, clean=False)
                    if doc:
                        out.append((path, doc))
    return out


def _comments() -> list[tuple[Path, str]]:
    out = []
    for top in ("tb", "driver_model", "cuda_model", "tests", "docs"):
        for path in sorted((ROOT / top).rglob("*.py")):
            tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
            text = "\n".join(t.string for t in tokens if t.type == tokenize.COMMENT)
            if text:
                out.append((path, text))
    return out


def _path_ok(token: str) -> bool:
    token = token.rstrip(".")
    if any(c in token for c in "<>*{}") or token in ELSEWHERE:
        return True
    return (ROOT / token).exists()


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT / parts[0]
    for part in parts[1:]:
        base = base / part
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _dotted_ok(token: str) -> bool:
    """The longest prefix of ``token`` that is a module of the project, and the next
    name defined in it (a name past that is an attribute: not checked)."""
    if token in ELSEWHERE:
        return True
    parts = token.split(".")
    if (
        parts[0] == "tb"
        and _module_file(parts[:2]) is None
        and not (ROOT / "tb" / parts[1]).is_dir()
    ):
        return True  # tb.<attribute>: the testbench object (tb.gpu, tb.init), not a module
    for k in range(len(parts), 0, -1):
        found = _module_file(parts[:k])
        if found is None:
            continue
        if k == len(parts):
            return True
        name = parts[k]
        text = found.read_text()
        return bool(
            re.search(
                rf"(?m)^\s*(?:def|class|async def)\s+{name}\b|^\s*{name}\b\s*[:=]|\b{name}\b", text
            )
        )
    return False


def _stale(text: str) -> list[str]:
    bad = [t for t in PATH.findall(text) if not _path_ok(t)]
    bad += [t for t in DOTTED.findall(text) if not _dotted_ok(t)]
    return bad


@pytest.mark.parametrize("page", _docs(), ids=lambda p: p.name)
def test_the_docs_point_at_what_is_there(page: Path) -> None:
    bad = _stale(page.read_text())
    assert not bad, f"{page.relative_to(ROOT)} points at what is not there: {sorted(set(bad))}"


def test_the_docstrings_and_comments_point_at_what_is_there() -> None:
    bad = {}
    for path, doc in _docstrings() + _comments():
        stale = _stale(doc)
        if stale:
            bad.setdefault(str(path.relative_to(ROOT)), set()).update(stale)
    assert not bad, "docstrings and comments point at what is not there:\n" + "\n".join(
        f"  {k}: {sorted(v)}" for k, v in sorted(bad.items())
    )


def test_a_stale_pointer_is_found() -> None:
    assert _stale("see tb/ext/xact.py and tb.models.nothing_here") == [
        "tb/ext/xact.py",
        "tb.models.nothing_here",
    ]
    assert not _stale(
        "tb/models/link.py, tb.models.choice.models, sim_build/x, tb/tests/rtl/<module>.py"
    )
