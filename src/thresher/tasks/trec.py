"""TREC run and qrels files, so standard tools (trec_eval, ranx, ir-measures) can read runs.

Run line: ``qid Q0 docid rank score tag``. Qrels line: ``qid 0 docid rel``.
Fields are separated by whitespace, so ids must not contain any.

``trec_eval`` orders a query's documents by score (descending) and ignores the
rank column; :func:`ranked_lists` follows the same rule (ties: doc id
descending, as ``trec_eval``), and :func:`write_run` writes strictly decreasing
scores when it is given a plain ranked list, so every tool sees the same order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from thresher.errors import InputError

__all__ = ["write_run", "read_run", "write_qrels", "read_qrels", "ranked_lists"]

_WS = re.compile(r"\s")

#: A run: per query, either doc ids best first, or ``{doc_id: score}``.
RunInput = Mapping[str, Sequence[str] | Mapping[str, float]]
#: Qrels: per query, either relevant doc ids (grade 1) or ``{doc_id: grade}``.
QrelsInput = Mapping[str, Collection[str] | Mapping[str, int]]


def _check_id(value: str, what: str) -> None:
    if not isinstance(value, str) or not value or _WS.search(value):
        raise InputError(
            f"{what} {value!r} is empty or contains whitespace; TREC files cannot hold it"
        )


def _scored(docs: Sequence[str] | Mapping[str, float], qid: str) -> list[tuple[str, float]]:
    """``(doc, score)`` best first, from a ranked list or a score mapping."""
    if isinstance(docs, str):
        raise InputError(f"run for query {qid!r} must be a list or mapping, not a string")
    if isinstance(docs, Mapping):
        pairs = [(d, float(s)) for d, s in docs.items()]
        for d, s in pairs:
            if not math.isfinite(s):
                raise InputError(f"score {s!r} of {d!r} in query {qid!r} is not finite")
        return sorted(pairs, key=lambda p: (p[1], p[0]), reverse=True)
    unique = list(dict.fromkeys(docs))  # first occurrence kept: a doc's best rank
    return [(d, float(len(unique) - i)) for i, d in enumerate(unique)]


def write_run(path: str | Path, run: RunInput, tag: str = "thresher") -> Path:
    """Write a TREC run file.

    Args:
        path: the file to write (parent folders are created).
        run: ``{qid: [doc, ...]}`` (best first; repeated docs keep their first
            rank; score = number of docs minus position) or ``{qid: {doc: score}}``
            (ranked by score descending, ties by doc id descending).
        tag: the run name (last column).

    Returns:
        The path written.

    Raises:
        InputError: an id or tag that is empty or contains whitespace, or a
            non-finite score.
    """
    _check_id(tag, "run tag")
    lines: list[str] = []
    for qid, docs in run.items():
        _check_id(qid, "query id")
        for rank, (doc, score) in enumerate(_scored(docs, qid), start=1):
            _check_id(doc, "doc id")
            lines.append(f"{qid} Q0 {doc} {rank} {score!r} {tag}")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return out


def write_qrels(path: str | Path, qrels: QrelsInput) -> Path:
    """Write a TREC qrels file (``qid 0 docid rel``).

    Args:
        path: the file to write (parent folders are created).
        qrels: ``{qid: [doc, ...]}`` (each grade 1) or ``{qid: {doc: grade}}``.

    Returns:
        The path written.

    Raises:
        InputError: an id that is empty or contains whitespace, or a non-integer grade.
    """
    lines: list[str] = []
    for qid, docs in qrels.items():
        _check_id(qid, "query id")
        if isinstance(docs, str):
            raise InputError(f"qrels for query {qid!r} must be a collection, not a string")
        grades = docs if isinstance(docs, Mapping) else dict.fromkeys(docs, 1)
        for doc, rel in grades.items():
            _check_id(doc, "doc id")
            if isinstance(rel, bool) or int(rel) != rel:
                raise InputError(f"grade {rel!r} of {doc!r} in query {qid!r} is not an integer")
            lines.append(f"{qid} 0 {doc} {int(rel)}")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return out


def _rows(path: Path, width: int, kind: str, example: str) -> list[tuple[int, list[str]]]:
    if not path.is_file():
        raise InputError(f"{path}: no such {kind} file; check the path")
    rows = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != width:
                raise InputError(
                    f"{path}:{lineno}: expected {width} fields ({example}), got {len(fields)}"
                )
            rows.append((lineno, fields))
    return rows


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{qid: {doc: score}}``.

    Raises:
        InputError: a missing file, a line without six fields, a non-numeric
            score, or a document listed twice for one query (naming file and line).
    """
    p = Path(path)
    run: dict[str, dict[str, float]] = {}
    for lineno, (qid, _q0, doc, _rank, score, _tag) in _rows(
        p, 6, "run", "qid Q0 docid rank score tag"
    ):
        try:
            value = float(score)
        except ValueError:
            raise InputError(f"{p}:{lineno}: score {score!r} is not a number") from None
        docs = run.setdefault(qid, {})
        if doc in docs:
            raise InputError(f"{p}:{lineno}: doc {doc!r} listed twice for query {qid!r}")
        docs[doc] = value
    return run


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file (``qid 0 docid rel``) into ``{qid: {doc: rel}}``.

    A later line for the same (qid, doc) replaces the earlier grade.

    Raises:
        InputError: a missing file, a line without four fields, or a grade that
            is not an integer (naming file and line).
    """
    p = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    for lineno, (qid, _iter, doc, rel) in _rows(p, 4, "qrels", "qid 0 docid rel"):
        try:
            grade = int(rel)
        except ValueError:
            raise InputError(f"{p}:{lineno}: relevance {rel!r} is not an integer") from None
        qrels.setdefault(qid, {})[doc] = grade
    return qrels


def ranked_lists(run: Mapping[str, Mapping[str, float]]) -> dict[str, list[str]]:
    """``{qid: [doc, ...]}`` best first: score descending, ties by doc id descending.

    This is the order ``trec_eval`` evaluates a run in.
    """
    return {
        qid: [d for d, _ in sorted(docs.items(), key=lambda p: (p[1], p[0]), reverse=True)]
        for qid, docs in run.items()
    }
