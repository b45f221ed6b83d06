"""Packages follow the data flow: a package imports only packages below it.

corpus → index → {harness, batch} → tasks → llm → policies → eval → {train, synth} → api → cli.
Every ``thresher.*`` import in ``src/thresher`` (at module level, inside functions
and under ``TYPE_CHECKING`` alike) is checked against :data:`LAYERS`; packages on
the same layer may not import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "thresher"

#: layer index per top-level part of the package, lowest first
LAYERS: dict[str, int] = {
    "_lazy": 0,
    "errors": 0,
    "config": 1,
    "tokens": 1,
    "corpus": 2,
    "index": 3,
    "harness": 4,
    "batch": 4,
    "tasks": 5,
    "llm": 6,
    "policies": 7,
    "eval": 8,
    "train": 9,
    "synth": 9,
    "testing": 9,
    "api": 10,
    "serve": 11,
    "cli": 12,
}
#: modules allowed to reach anything (lazy re-exports of the public names)
EXEMPT = {"__init__"}


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "thresher" else None


def _imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every thresher import in ``path`` (``root``: the package)."""
    rel = path.relative_to(root.parent).with_suffix("").parts
    package = rel[:-1] if path.name != "__init__.py" else rel
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            # ``from thresher import eval`` names a package in the alias
            if module == "thresher":
                out.extend(
                    (node.lineno, f"thresher.{a.name}") for a in node.names if a.name in LAYERS
                )
    return out


def violations(root: Path = SRC) -> list[str]:
    """Every import of a higher (or same-layer sibling) package, as ``file:line: a -> b``."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        own = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if own in EXEMPT:
            continue
        if own not in LAYERS:
            found.append(f"{rel}: package '{own}' has no layer; add it to LAYERS")
            continue
        for line, module in _imports(path, root):
            target = _part(module)
            if target is None or target == own or target in EXEMPT:
                continue
            if target not in LAYERS:
                found.append(f"{rel}:{line}: imports unknown part '{target}'")
            elif LAYERS[target] >= LAYERS[own]:
                found.append(f"{rel}:{line}: {own} -> {target} ({module}) goes up or sideways")
    return found


def test_no_package_imports_a_higher_one() -> None:
    assert violations() == []


def test_a_reintroduced_upward_import_is_caught(tmp_path: Path) -> None:
    """The check itself: a policies -> eval import (the cycle this test exists for) fails."""
    pkg = tmp_path / "thresher" / "policies"
    pkg.mkdir(parents=True)
    (pkg / "bad.py").write_text(
        "from thresher.eval.metrics import recall_at_k\n"
        "def f():\n    from thresher.train.local import fit\n",
        encoding="utf-8",
    )
    found = violations(tmp_path / "thresher")
    assert any("policies -> eval" in v for v in found)
    assert any("policies -> train" in v for v in found)


@pytest.mark.parametrize("part", sorted(p.name for p in SRC.iterdir() if p.is_dir()))
def test_every_package_has_a_layer(part: str) -> None:
    if part == "__pycache__":
        return
    assert part in LAYERS, f"add '{part}' to LAYERS in {__file__}"
