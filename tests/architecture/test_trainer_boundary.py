"""The trainer stack (torch, TRL, transformers) stays out of the main environment.

It lives in ``rl/`` with its own virtualenv (``make rl-smoke``): no test imports it, so ``make
test`` runs without torch; no module of ``src/thresher`` imports it at module level, so importing
thresher never loads it (an optional adapter may import it inside a function); and the smoke's
requirements pin it exactly, since an unpinned torch resolves to a multi-GB CUDA build.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRAINER_STACK = {"torch", "trl", "transformers", "accelerate", "datasets", "peft", "vllm"}


def _nodes(node: ast.AST, skip_functions: bool) -> list[ast.AST]:
    out = [node]
    for child in ast.iter_child_nodes(node):
        if not (skip_functions and isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)):
            out += _nodes(child, skip_functions)
    return out


def _imports(path: Path, module_level_only: bool) -> list[tuple[int, str]]:
    """Imports of the trainer stack in ``path`` (outside functions when ``module_level_only``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in _nodes(tree, skip_functions=module_level_only):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name.split(".")[0] in TRAINER_STACK]


def test_no_test_imports_the_trainer_stack() -> None:
    hits = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for line, name in _imports(path, module_level_only=False)
    ]
    assert not hits, "tests must run without torch; move these to rl/:\n" + "\n".join(hits)


def test_thresher_does_not_load_the_trainer_stack_on_import() -> None:
    hits = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / "src" / "thresher").rglob("*.py"))
        for line, name in _imports(path, module_level_only=True)
    ]
    assert not hits, "import these inside the function that needs them:\n" + "\n".join(hits)


def test_the_smoke_pins_the_trainer_stack() -> None:
    pins = {}
    for raw in (ROOT / "rl" / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = raw.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip()] = version.strip()
    assert all(pins.get(name) for name in ("torch", "trl", "transformers")), pins
