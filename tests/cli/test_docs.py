"""The docs the commands point to: the README's layout, and no documents from elsewhere.

Commands and reports send readers to the README and ``docs/``; those must
describe the package as it is (every part under ``src/thresher/`` listed in the
README's Layout, in the layering test's order) and must only cite documents
that ship in this repository.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "thresher"
#: citations of design notes kept outside the repository ("DESIGN §5", "STYLE.md")
OUTSIDE = re.compile(r"\bDESIGN\b|\bSTYLE\.md\b|§")


def _block_lines() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1].splitlines()


def _layout_block() -> list[str]:
    """The lines naming a top-level part (indented two spaces)."""
    return [line for line in _block_lines() if re.match(r"  \S", line)]


def _nested() -> dict[str, list[str]]:
    """Subpackages listed under a part (indented four spaces, ``name/``), per part."""
    out: dict[str, list[str]] = {}
    part = ""
    for line in _block_lines():
        if re.match(r"  \S", line):
            part = line.split()[0].rstrip("/")
        elif (m := re.match(r"    (\w+)/ ", line)) is not None:
            out.setdefault(part, []).append(m.group(1))
    return out


def _parts() -> set[str]:
    """Top-level packages and modules of ``src/thresher`` (``__init__``: the package facade)."""
    out = set()
    for p in SRC.iterdir():
        if p.is_dir() and (p / "__init__.py").is_file():
            out.add(p.name)
        elif p.suffix == ".py":
            out.add(p.stem)
    return out


def test_readme_layout_lists_every_part_once_with_a_line() -> None:
    listed = [line.split()[0].rstrip("/").removesuffix(".py") for line in _layout_block()]
    assert sorted(listed) == sorted(_parts())
    assert all(len(line.split()) > 2 for line in _layout_block())  # each has a description


def test_readme_layout_lists_the_subpackages_of_index_and_tasks() -> None:
    """A part whose subpackages the README lists lists each of them once."""
    nested = _nested()
    assert {"index", "tasks"} <= set(nested)
    for part, listed in nested.items():
        subpackages = {p.name for p in (SRC / part).iterdir() if (p / "__init__.py").is_file()}
        assert sorted(listed) == sorted(subpackages), part


def _layers() -> dict[str, int]:
    """``LAYERS`` of the layering test, read from its source (tests are not a package)."""
    tree = ast.parse((REPO / "tests" / "architecture" / "test_layering.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "LAYERS":
            return ast.literal_eval(node.value)
    raise AssertionError("LAYERS not found in tests/architecture/test_layering.py")


def test_readme_layout_follows_the_layering() -> None:
    listed = [line.split()[0].rstrip("/").removesuffix(".py") for line in _layout_block()]
    layers = [_layers()[p] for p in listed]
    assert layers == sorted(layers), list(zip(listed, layers, strict=True))
    assert "tests/architecture/test_layering.py" in (REPO / "README.md").read_text("utf-8")


def test_no_citation_of_documents_outside_the_repository() -> None:
    files = [REPO / "README.md", *(REPO / "docs").rglob("*.md"), *SRC.rglob("*.py")]
    found = [
        f"{f.relative_to(REPO)}:{n}: {line.strip()}"
        for f in files
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert found == []


def test_the_embedders_language_is_stated_where_a_user_looks_first():
    """The shipped embedder reads English only: the README and docs/embedding.md say so,
    and the README's link lands on the section that explains it."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    embedding = (REPO / "docs" / "embedding.md").read_text(encoding="utf-8")
    assert "English-only" in readme
    assert "docs/embedding.md#languages-english" in readme
    assert "\n## Languages: English\n" in embedding
