"""TREC run and qrels files, so standard tools (trec_eval, ranx, ir-measures) can read runs.

Run line: ``qid Q0 docid rank score tag``. Qrels line: ``qid 0 docid rel``.
Fields are separated by whitespace, so ids must not contain any: writing one
that does is an error, unless the writer is asked to encode ids
(``encode_ids=True``), which percent-encodes ``%`` and every whitespace
character (``my notes.md`` becomes ``my%20notes.md``) in every id it writes,
so a run and a qrels file written that way still match each other, and
``read_run``/``read_qrels`` with ``decode_ids=True`` give the ids back
exactly (:func:`encode_id`, :func:`decode_id`).

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

__all__ = [
    "write_run",
    "read_run",
    "write_qrels",
    "read_qrels",
    "ranked_lists",
    "encode_id",
    "decode_id",
]

_WS = re.compile(r"\s")
_ENCODE = re.compile(r"[%\s]")
_DECODE = re.compile(r"(?:%[0-9A-F]{2})+")

#: A run: per query, either doc ids best first, or ``{doc_id: score}``.
RunInput = Mapping[str, Sequence[str] | Mapping[str, float]]
#: Qrels: per query, either relevant doc ids (grade 1) or ``{doc_id: grade}``.
QrelsInput = Mapping[str, Collection[str] | Mapping[str, int]]


def encode_id(value: str) -> str:
    """``value`` with ``%`` and every whitespace character percent-encoded (UTF-8 bytes)."""
    return _ENCODE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), value)


def decode_id(value: str) -> str:
    """Inverse of :func:`encode_id`."""
    return _DECODE.sub(lambda m: bytes.fromhex(m.group().replace("%", "")).decode(), value)


def _check_id(value: str, what: str) -> None:
    if not isinstance(value, str) or not value or _WS.search(value):
        raise InputError(
            f"{what} {value!r} is empty or contains whitespace; TREC files cannot hold it "
            "(write with encode_ids=True to percent-encode ids)"
        )


def _written(value: str, what: str, encode: bool) -> str:
    """The form of an id that goes into a TREC file (checked, encoded when asked)."""
    if encode and isinstance(value, str) and value:
        value = encode_id(value)
    _check_id(value, what)
    return value


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


def write_run(
    path: str | Path, run: RunInput, tag: str = "thresher", *, encode_ids: bool = False
) -> Path:
    """Write a TREC run file.

    Args:
        path: the file to write (parent folders are created).
        run: ``{qid: [doc, ...]}`` (best first; repeated docs keep their first
            rank; score = number of docs minus position) or ``{qid: {doc: score}}``
            (ranked by score descending, ties by doc id descending).
        tag: the run name (last column).
        encode_ids: percent-encode ``%`` and whitespace in query and doc ids
            (:func:`encode_id`) instead of refusing ids with whitespace.

    Returns:
        The path written.

    Raises:
        InputError: an id (unless encoded) or tag that is empty or contains
            whitespace, or a non-finite score.
    """
    _check_id(tag, "run tag")
    lines: list[str] = []
    for qid, docs in run.items():
        q = _written(qid, "query id", encode_ids)
        for rank, (doc, score) in enumerate(_scored(docs, qid), start=1):
            d = _written(doc, "doc id", encode_ids)
            lines.append(f"{q} Q0 {d} {rank} {score!r} {tag}")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return out


def write_qrels(path: str | Path, qrels: QrelsInput, *, encode_ids: bool = False) -> Path:
    """Write a TREC qrels file (``qid 0 docid rel``).

    Args:
        path: the file to write (parent folders are created).
        qrels: ``{qid: [doc, ...]}`` (each grade 1) or ``{qid: {doc: grade}}``.
        encode_ids: percent-encode ``%`` and whitespace in ids (as :func:`write_run`).

    Returns:
        The path written.

    Raises:
        InputError: an id (unless encoded) that is empty or contains whitespace, or a
            non-integer grade.
    """
    lines: list[str] = []
    for qid, docs in qrels.items():
        q = _written(qid, "query id", encode_ids)
        if isinstance(docs, str):
            raise InputError(f"qrels for query {qid!r} must be a collection, not a string")
        grades = docs if isinstance(docs, Mapping) else dict.fromkeys(docs, 1)
        for doc, rel in grades.items():
            d = _written(doc, "doc id", encode_ids)
            if isinstance(rel, bool) or int(rel) != rel:
                raise InputError(f"grade {rel!r} of {doc!r} in query {qid!r} is not an integer")
            lines.append(f"{q} 0 {d} {int(rel)}")
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


def read_run(path: str | Path, *, decode_ids: bool = False) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{qid: {doc: score}}`` (``decode_ids``: ids written
    with ``encode_ids=True``).

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
        if decode_ids:
            qid, doc = decode_id(qid), decode_id(doc)
        docs = run.setdefault(qid, {})
        if doc in docs:
            raise InputError(f"{p}:{lineno}: doc {doc!r} listed twice for query {qid!r}")
        docs[doc] = value
    return run


def read_qrels(path: str | Path, *, decode_ids: bool = False) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file (``qid 0 docid rel``) into ``{qid: {doc: rel}}``
    (``decode_ids``: ids written with ``encode_ids=True``).

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
        if decode_ids:
            qid, doc = decode_id(qid), decode_id(doc)
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
