"""The trainer stack (torch, TRL, transformers) and verifiers stay out of the main environment.

The trainer stack lives in ``rl/`` with its own virtualenv (``make rl-smoke``): no test imports it,
so ``make test`` runs without torch; no module of ``src/thresher`` imports it at module level, so
importing thresher never loads it (an optional adapter may import it inside a function); and the
smoke's requirements pin it exactly, since an unpinned torch resolves to a multi-GB CUDA build.

verifiers lives in its own package, ``environments/thresher_search`` (``make verifiers-check``
builds its virtualenv): no module of ``src/thresher`` and no test imports it, even inside a
function; thresher's own dependencies and extras never name it; the package pins it exactly.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRAINER_STACK = {"torch", "trl", "transformers", "accelerate", "datasets", "peft", "vllm"}


def _nodes(node: ast.AST, skip_functions: bool) -> list[ast.AST]:
    out = [node]
    for child in ast.iter_child_nodes(node):
        if not (skip_functions and isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)):
            out += _nodes(child, skip_functions)
    return out


def _imports(
    path: Path, module_level_only: bool, stack: set[str] = TRAINER_STACK
) -> list[tuple[int, str]]:
    """Imports of ``stack`` in ``path`` (outside functions when ``module_level_only``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in _nodes(tree, skip_functions=module_level_only):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name.split(".")[0] in stack]


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


VERIFIERS = {"verifiers"}
ENV_PACKAGE = ROOT / "environments" / "thresher_search"


def _requirement_names(requirements: list[str]) -> list[str]:
    return [re.split(r"[\s\[<>=!~;@]", r.strip(), maxsplit=1)[0].lower() for r in requirements]


def test_no_thresher_module_and_no_test_imports_verifiers() -> None:
    hits = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for folder in (ROOT / "src" / "thresher", ROOT / "tests")
        for path in sorted(folder.rglob("*.py"))
        for line, name in _imports(path, module_level_only=False, stack=VERIFIERS)
    ]
    assert not hits, "verifiers belongs to environments/thresher_search only:\n" + "\n".join(hits)


def test_thresher_never_depends_on_verifiers() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = {"dependencies": project["dependencies"], **project["optional-dependencies"]}
    named = {group: _requirement_names(reqs) for group, reqs in groups.items()}
    assert not [g for g, names in named.items() if "verifiers" in names], named


def test_the_verifiers_environment_pins_verifiers_and_depends_on_thresher() -> None:
    project = tomllib.loads((ENV_PACKAGE / "pyproject.toml").read_text(encoding="utf-8"))
    deps = project["project"]["dependencies"]
    pinned = [d for d in deps if re.fullmatch(r"verifiers==\d+(\.\d+)*", d.replace(" ", ""))]
    assert len(pinned) == 1, deps
    assert "thresher" in _requirement_names(deps), deps
    # the virtualenv's requirements pin the same version
    reqs = (ENV_PACKAGE / "requirements.txt").read_text(encoding="utf-8").splitlines()
    lines = [r.split("#")[0].strip() for r in reqs if r.split("#")[0].strip()]
    assert pinned[0].replace(" ", "") in lines, lines
    # the package verifiers loads (`vf-eval thresher-search` imports `thresher_search`)
    assert (ENV_PACKAGE / "thresher_search" / "__init__.py").is_file()
