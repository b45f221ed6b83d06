"""Lowercased copies of dataset files, for the lowercase-robustness rows of bench_policies.

Every string value of every record is lowercased (questions, titles, passages,
supporting-fact titles, answers), keys are kept, so the gold references still
match their paragraphs; the copy keeps the file's name and layout (a JSON array
stays an array, JSONL stays JSONL). Two titles that differ only by case become
one document: :func:`lowercased_copies` returns how many such merges each file
has so the bench can print them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["lower_values", "lowercased_copies"]


def lower_values(value: Any) -> Any:
    """``value`` with every string inside it lowercased (dict keys kept)."""
    if isinstance(value, str):
        return value.lower()
    if isinstance(value, list):
        return [lower_values(v) for v in value]
    if isinstance(value, dict):
        return {k: lower_values(v) for k, v in value.items()}
    return value


def _lower_file(src: Path, dst: Path) -> None:
    text = src.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        dst.write_text(json.dumps(lower_values(json.loads(text)), ensure_ascii=False), "utf-8")
        return
    lines = (
        json.dumps(lower_values(json.loads(ln)), ensure_ascii=False)
        for ln in text.splitlines()
        if ln.strip()
    )
    dst.write_text("\n".join(lines) + "\n", encoding="utf-8")


def lowercased_copies(files: Sequence[Path], out_dir: Path) -> list[Path]:
    """Lowercased copies of ``files`` in ``out_dir`` (same names), written once.

    A copy is rewritten when it is older than its source.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for src in files:
        dst = out_dir / src.name
        if not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime:
            tmp = dst.with_suffix(dst.suffix + ".tmp")
            _lower_file(src, tmp)
            tmp.replace(dst)
        out.append(dst)
    return out
