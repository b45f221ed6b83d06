"""Packages follow the data flow: a package imports only packages below it.

{corpus, endpoint} → index → {harness, batch} → tasks → llm → policies → eval → {train, synth}
→ {api, env} → the package facade (``thresher/__init__.py``) → {serve, integrations} → cli.
Every ``thresher`` import in ``src/thresher`` (at module level, inside functions
and under ``TYPE_CHECKING`` alike, the bare package included) is checked against
:data:`LAYERS`; packages on the same layer may not import each other. Inside a package with parts of its own
(:data:`INNER`: ``index``, ``tasks``) the parts are ordered the same way, lower
parts never importing higher ones (:func:`inner_violations`). Within a package,
files import each other without a circle (:func:`circles`): an import inside a
function counts, so a cycle cannot hide behind a late import.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "thresher"
#: the part a ``thresher/__init__.py`` import (``from thresher import __version__``) reaches
FACADE = "__init__"

#: layer index per top-level part of the package, lowest first
LAYERS: dict[str, int] = {
    "_lazy": 0,
    "_version": 0,
    "errors": 0,
    "paths": 0,
    "workers": 0,
    "config": 1,
    "tokens": 1,
    "corpus": 2,
    "endpoint": 2,
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
    # the environment a trainer drives (SearchEnv): above the harness, the LLM policy's
    # reply reader and the rewards; nothing below it imports it
    "env": 10,
    # the package facade (``import thresher``, :data:`FACADE`): lazy re-exports of the
    # public names
    "__init__": 11,
    "serve": 12,
    # adapters for other projects' trainers (thresher.integrations.trl): above the env and
    # the facade, beside serve; nothing below imports them
    "integrations": 12,
    "cli": 13,
}

#: Inside a package: layer per part (a subpackage, or a top-level module by its stem),
#: lowest first; ``"*"`` is the layer of parts not named. A file imports parts of its
#: own package on its layer or below, never above (the circle check keeps the parts of
#: one layer from importing each other in a ring). A part with no layer (and no ``"*"``)
#: is an error: place it.
INNER: dict[str, dict[str, int]] = {
    "index": {
        # shared by every backend: the protocol and its records, filters (and a store seen
        # through one), fusion,
        # the BM25 side index, the per-document manifest entries
        "store": 0,
        "records": 0,
        "filters": 0,
        "filtered": 0,
        "fusion": 0,
        "exact_dense": 0,
        "bm25": 0,
        "id_table": 0,
        "manifest": 0,
        "sqlite_files": 0,
        "reader_memo": 0,
        # what readers share per generation: the document ids by path (in the memo)
        "doc_paths": 0,
        # text to vectors; grep over chunk texts
        "embed": 1,
        "grep": 1,
        # what ingestion into either backend shares; one index state as a store reads
        # it, and the store over it that both backends subclass
        "ingest": 2,
        "view": 2,
        "listing": 2,
        "view_store": 2,
        # the local-folder backend (thresher's own files)
        "embedded": 3,
        # the Chroma server backend
        "server": 4,
        # the registry: which backend a location names, open stores kept for reuse
        "backends": 5,
        "handles": 5,
    },
    # the records and readers of tasks below the pipeline that generates them
    "tasks": {"*": 0, "generate": 1},
}


def _part(module: str) -> str | None:
    """The top-level part of ``thresher`` that ``module`` is in (:data:`FACADE` for the
    bare package); None for a module outside it."""
    parts = module.split(".")
    if parts[0] != "thresher":
        return None
    return parts[1] if len(parts) > 1 else FACADE


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
            # ``from thresher.index import manifest`` names a part of the package
            elif module.count(".") == 1 and _part(module) in INNER:
                out.extend((node.lineno, f"{module}.{a.name}") for a in node.names)
    return out


def violations(root: Path = SRC) -> list[str]:
    """Every import of a higher (or same-layer sibling) package, as ``file:line: a -> b``."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        own = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if own not in LAYERS:
            found.append(f"{rel}: package '{own}' has no layer; add it to LAYERS")
            continue
        for line, module in _imports(path, root):
            target = _part(module)
            if target is None or target == own:
                continue
            if target not in LAYERS:
                found.append(f"{rel}:{line}: imports unknown part '{target}'")
            elif LAYERS[target] >= LAYERS[own]:
                found.append(f"{rel}:{line}: {own} -> {target} ({module}) goes up or sideways")
    return found


def _inner_part(package: Path, module: str) -> str | None:
    """The part of ``package`` a ``thresher.<package>.<part>...`` module is in (None: the
    package's ``__init__``, or a name it re-exports)."""
    parts = module.split(".")
    if len(parts) < 3 or parts[1] != package.name:
        return None
    name = parts[2]
    return name if (package / name).is_dir() or (package / f"{name}.py").is_file() else None


def inner_violations(root: Path = SRC) -> list[str]:
    """Every import of a higher part inside a package of :data:`INNER`, as
    ``file:line: a -> b``, and every part with no layer."""
    found: list[str] = []
    for package_name, order in INNER.items():
        package = root / package_name
        for path in sorted(package.rglob("*.py")):
            rel = path.relative_to(package)
            own = rel.parts[0] if len(rel.parts) > 1 else rel.stem
            if own == "__init__":  # the package's own lazy re-exports
                continue
            if own not in order and "*" not in order:
                found.append(f"{package_name}/{rel}: part '{own}' has no layer; add it to INNER")
                continue
            mine = order.get(own, order.get("*", 0))
            for line, module in _imports(path, root):
                target = _inner_part(package, module)
                if target is None or target == own:
                    continue
                theirs = order.get(target, order.get("*"))
                if theirs is not None and theirs > mine:
                    found.append(
                        f"{package_name}/{rel}:{line}: {own} -> {target} ({module}) goes up"
                    )
    return found


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(rel[:-1] if path.name == "__init__.py" else rel)


def _lazy_names(path: Path) -> dict[str, str]:
    """``{name: module}`` a package's ``__init__`` re-exports lazily (its ``_WHERE``/``_LAZY``
    dict given to ``lazy_getattr``), modules made absolute."""
    out: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Dict)
            and any(isinstance(t, ast.Name) and t.id in ("_WHERE", "_LAZY") for t in node.targets)
        ):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                    out[str(key.value)] = str(value.value)
    return out


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Module -> the thresher modules it imports (at any depth: in functions too).

    Nodes are the files of ``root`` other than packages' ``__init__`` (lazy
    re-exports); ``from pkg import name`` points at the module
    ``pkg.name`` when there is one, else at the module ``pkg``'s lazy table names.
    """
    files = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    lazy: dict[str, dict[str, str]] = {}
    for name, path in files.items():
        if path.name == "__init__.py":
            table = _lazy_names(path)
            lazy[name] = {k: (name + v if v.startswith(".") else v) for k, v in table.items()}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        if path.name == "__init__.py":
            continue
        edges = graph.setdefault(name, set())
        package = name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                for alias in node.names:
                    sub = f"{module}.{alias.name}"
                    targets.append(
                        sub if sub in files else lazy.get(module, {}).get(alias.name, module)
                    )
            for target in targets:
                while target not in files and "." in target:
                    target = target.rsplit(".", 1)[0]
                path_of = files.get(target)
                if path_of is not None and path_of.name != "__init__.py" and target != name:
                    edges.add(target)
    return graph


def circles(root: Path = SRC) -> list[list[str]]:
    """Import circles between the files of ``root``: each as ``[a, b, ..., a]`` (empty: none).

    One circle is reported per round; its first edge is then dropped and the
    graph checked again, so every independent circle shows up.
    """
    graph = import_graph(root)
    found: list[list[str]] = []
    while True:
        try:
            graphlib.TopologicalSorter(graph).prepare()
        except graphlib.CycleError as exc:
            cycle = list(reversed(exc.args[1]))  # a -> b -> ... -> a, in import direction
            found.append(cycle)
            graph[cycle[0]].discard(cycle[1])
            continue
        return found


def test_no_package_imports_a_higher_one() -> None:
    assert violations() == []


def test_a_reintroduced_upward_import_is_caught(tmp_path: Path) -> None:
    """The check itself: a policies -> eval import (the cycle this test exists for) fails,
    and so does reaching the package facade from below (``from thresher import ...``)."""
    pkg = tmp_path / "thresher" / "policies"
    pkg.mkdir(parents=True)
    (pkg / "bad.py").write_text(
        "from thresher.eval.metrics import recall_at_k\n"
        "def f():\n    from thresher.train.local import fit\n"
        "from thresher import __version__\n",
        encoding="utf-8",
    )
    (tmp_path / "thresher" / "__init__.py").write_text(
        "from thresher.serve.app import make_app\n", encoding="utf-8"
    )
    found = violations(tmp_path / "thresher")
    assert any("policies -> eval" in v for v in found)
    assert any("policies -> train" in v for v in found)
    assert any("bad.py:4: policies -> __init__" in v for v in found)
    assert any("__init__.py:1: __init__ -> serve" in v for v in found)


def test_no_part_of_a_package_imports_a_higher_one() -> None:
    assert inner_violations() == []


def test_a_reintroduced_upward_import_inside_a_package_is_caught(tmp_path: Path) -> None:
    """The check itself: grep -> server (a module-level import) and the shared
    protocol -> the embedded backend (inside a function, through the package's
    name) fail; server -> embedded (downward) and an unplaced part are reported
    as such."""
    index = tmp_path / "thresher" / "index"
    for sub in ("grep", "server", "embedded", "stray"):
        (index / sub).mkdir(parents=True)
    (index / "grep" / "plan.py").write_text(
        "from thresher.index.server.store import ServerStore\n", encoding="utf-8"
    )
    (index / "store.py").write_text(
        "def f():\n    from thresher.index import embedded\n", encoding="utf-8"
    )
    (index / "server" / "store.py").write_text(
        "from thresher.index.embedded.layout import CURRENT\n", encoding="utf-8"
    )
    (index / "embedded" / "layout.py").write_text("", encoding="utf-8")
    (index / "stray" / "x.py").write_text("", encoding="utf-8")
    (tmp_path / "thresher" / "tasks").mkdir()
    found = inner_violations(tmp_path / "thresher")
    assert any("index/grep/plan.py:1: grep -> server" in v for v in found)
    assert any("index/store.py:2: store -> embedded" in v for v in found)
    assert not any("server -> embedded" in v for v in found)
    assert any("part 'stray' has no layer" in v for v in found)


@pytest.mark.parametrize(
    "part",
    sorted(
        p.stem
        for p in (SRC / "index").iterdir()
        if (p.is_dir() and p.name != "__pycache__") or (p.suffix == ".py" and p.stem != "__init__")
    ),
)
def test_every_part_of_the_index_has_a_layer(part: str) -> None:
    assert part in INNER["index"], f"add '{part}' to INNER['index'] in {__file__}"


@pytest.mark.parametrize("part", sorted(p.name for p in SRC.iterdir() if p.is_dir()))
def test_every_package_has_a_layer(part: str) -> None:
    if part == "__pycache__":
        return
    assert part in LAYERS, f"add '{part}' to LAYERS in {__file__}"


def test_no_import_circle_between_files() -> None:
    """A file never imports (even inside a function) one that imports it back."""
    assert [" -> ".join(c) for c in circles()] == []


def test_an_import_circle_inside_a_function_is_caught(tmp_path: Path) -> None:
    """The check itself: a circle closed by a function-level import, through a lazy
    re-export of the package, fails; the same files without it pass."""
    pkg = tmp_path / "thresher" / "eval"
    pkg.mkdir(parents=True)
    (tmp_path / "thresher" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "__init__.py").write_text('_WHERE = {"run": ".protocol"}\n', encoding="utf-8")
    (pkg / "protocol.py").write_text(
        "from thresher.eval.task_job import TaskJob\ndef run():\n    return TaskJob\n",
        encoding="utf-8",
    )
    job = pkg / "task_job.py"
    job.write_text("class TaskJob:\n    pass\n", encoding="utf-8")
    assert circles(tmp_path / "thresher") == []
    job.write_text(
        "class TaskJob:\n    def __call__(self):\n        from thresher.eval import run\n",
        encoding="utf-8",
    )
    assert [" -> ".join(c) for c in circles(tmp_path / "thresher")] in (
        ["thresher.eval.protocol -> thresher.eval.task_job -> thresher.eval.protocol"],
        ["thresher.eval.task_job -> thresher.eval.protocol -> thresher.eval.task_job"],
    )
