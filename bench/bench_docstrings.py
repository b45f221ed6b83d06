"""How much of the source is docstrings: lines inside docstrings over all lines, per folder.

A docstring line is a line of the string literal that opens a module, class or
function body (read with :mod:`ast`, so strings elsewhere and comments do not
count); lines are physical lines of the file, blank ones included. Each path
named is one row (a folder: every ``.py`` file under it), then the total.

Usage::

    .venv/bin/python bench/bench_docstrings.py [PATH ...]   # default: src/thresher, then its packages

Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "thresher"


def docstring_lines(source: str) -> int:
    """Lines of ``source`` inside module, class and function docstrings."""
    lines = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                end = body[0].end_lineno or body[0].lineno
                lines += end - body[0].lineno + 1
    return lines


def share(path: Path) -> tuple[int, int]:
    """(docstring lines, all lines) of a file, or of every ``.py`` file under a folder."""
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))
    doc = total = 0
    for f in files:
        source = f.read_text(encoding="utf-8")
        doc += docstring_lines(source)
        total += len(source.splitlines())
    return doc, total


def shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    resolved = path.resolve()
    return str(resolved.relative_to(REPO)) if resolved.is_relative_to(REPO) else str(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, help="files or folders (default: src/thresher)")
    args = ap.parse_args()
    if args.paths:
        rows, total = list(args.paths), None
    else:
        rows = sorted(p for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists())
        total = SRC
    print(f"| {'path':40s} | docstring lines | all lines | share |")
    print(f"|{'-' * 42}|-----------------|-----------|-------|")
    doc_sum = all_sum = 0
    for p in rows:
        doc, lines = share(p)
        doc_sum, all_sum = doc_sum + doc, all_sum + lines
        print(f"| {shown(p):40s} | {doc:15,} | {lines:9,} | {100 * doc / max(lines, 1):4.1f}% |")
    if total is not None:
        doc_sum, all_sum = share(total)
    label = shown(total) if total is not None else "total"
    print(
        f"| {label:40s} | {doc_sum:15,} | {all_sum:9,} | {100 * doc_sum / max(all_sum, 1):4.1f}% |"
    )


if __name__ == "__main__":
    main()
