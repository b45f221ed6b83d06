"""BEIR datasets as evaluation tasks: ``queries.jsonl`` and ``qrels/<split>.tsv``.

A BEIR dataset folder (its layout: :mod:`thresher.corpus.beir`) gives its
tasks from ``queries.jsonl`` and one ``qrels/<split>.tsv``. :func:`beir_source`
recognizes these paths (what :func:`thresher.tasks.readers.load_tasks` accepts):

- ``DATASET`` (the folder): the ``test`` split;
- ``DATASET::SPLIT`` (``scifact::dev``): that split;
- ``DATASET/qrels/SPLIT.tsv``: that split;
- ``DATASET/queries.jsonl``: the ``test`` split of the ``qrels/`` next to it.

Tasks: one per query with at least one qrels row of score > 0, in
``queries.jsonl`` order; ``gold_doc_ids`` are those documents (highest score
first, then qrels order), ids exactly as ``corpus.jsonl`` gives them, which is
the id ``thresher index corpus.jsonl`` keeps. Queries without a positive
judgment are skipped and counted (``no_gold``). BEIR has no answers and no hop
order: ``answer`` is empty (answer metrics do not apply), ``hops`` and
``final_doc_ids`` are empty. ``metadata`` holds ``split``, the graded judgments
``relevance`` (``{doc_id: score}``, positives only) and the query's own metadata
under ``query_metadata``; ``dataset`` is ``beir/<folder name>``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.corpus.beir import CORPUS_FILE, QRELS_DIR, QUERIES_FILE, is_beir_folder
from thresher.corpus.jsonl import iter_jsonl
from thresher.errors import InputError
from thresher.tasks.task import Task

__all__ = [
    "DEFAULT_SPLIT",
    "SPLIT_SEPARATOR",
    "BeirSource",
    "BeirTasks",
    "beir_source",
    "read_beir_qrels",
    "read_beir_tasks",
]

DEFAULT_SPLIT = "test"
SPLIT_SEPARATOR = "::"
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BeirSource:
    """One split of a BEIR dataset folder.

    Attributes:
        root: the dataset folder.
        split: the qrels split (``test``, ``dev``, ``train``, ...).
    """

    root: Path
    split: str

    @property
    def name(self) -> str:
        """The dataset's name: its folder's name (``scifact``)."""
        return self.root.resolve().name

    @property
    def queries(self) -> Path:
        """``root/queries.jsonl``."""
        return self.root / QUERIES_FILE

    @property
    def qrels(self) -> Path:
        """``root/qrels/<split>.tsv``."""
        return self.root / QRELS_DIR / f"{self.split}.tsv"

    @property
    def corpus(self) -> Path:
        """``root/corpus.jsonl`` (what to index)."""
        return self.root / CORPUS_FILE


@dataclass(slots=True)
class BeirTasks:
    """What :func:`read_beir_tasks` read.

    Attributes:
        tasks: the tasks, in ``queries.jsonl`` order.
        records: queries read (tasks plus skipped).
        skipped: counts by reason: ``no_gold`` (no qrels row with score > 0).
    """

    tasks: list[Task] = field(default_factory=list)
    records: int = 0
    skipped: dict[str, int] = field(default_factory=dict)


def _splits(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / QRELS_DIR).glob("*.tsv"))


def _checked(root: Path, split: str, named: str) -> BeirSource:
    source = BeirSource(root, split)
    if not source.qrels.is_file():
        available = ", ".join(_splits(root)) or "none"
        raise InputError(
            f"{named}: BEIR dataset {root} has no qrels/{split}.tsv (splits: {available}); "
            f"name one as {root}{SPLIT_SEPARATOR}SPLIT"
        )
    return source


def beir_source(path: str | Path) -> BeirSource | None:
    """The BEIR split a path names (see the module docstring), or None if it names none.

    Args:
        path: a dataset folder, ``folder::split``, ``folder/qrels/split.tsv`` or
            ``folder/queries.jsonl``.

    Returns:
        The :class:`BeirSource`, or None when ``path`` is not a BEIR path.

    Raises:
        InputError: a ``::split`` suffix on a path that is not a BEIR folder, or a
            split without a qrels file (the message lists the splits there are).
    """
    text = str(path)
    p = Path(path)
    if not p.exists() and SPLIT_SEPARATOR in text:
        folder, _, split = text.rpartition(SPLIT_SEPARATOR)
        if not is_beir_folder(folder):
            raise InputError(
                f"{text}: {folder} is not a BEIR dataset folder (queries.jsonl and qrels/); "
                "FOLDER::SPLIT names a split of one"
            )
        if not split or "/" in split:
            raise InputError(f"{text}: name a split after '{SPLIT_SEPARATOR}' (test, dev, ...)")
        return _checked(Path(folder), split, text)
    if p.is_dir():
        return _checked(p, DEFAULT_SPLIT, text) if is_beir_folder(p) else None
    if p.suffix == ".tsv" and p.parent.name == QRELS_DIR and is_beir_folder(p.parent.parent):
        return _checked(p.parent.parent, p.stem, text)
    if p.name == QUERIES_FILE and is_beir_folder(p.parent):
        return _checked(p.parent, DEFAULT_SPLIT, text)
    return None


def read_beir_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """A BEIR qrels file as ``{query_id: {doc_id: score}}``, rows in file order.

    The first line is skipped when it is the ``query-id corpus-id score`` header
    (its score is not an integer). Fields are tab-separated (any whitespace is
    accepted when a line has no tab). A later row for the same pair replaces the
    earlier score.

    Raises:
        InputError: a missing file, or a row without three fields or with a
            score that is not an integer (naming file and line).
    """
    p = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    try:
        lines = p.read_text(encoding="utf-8-sig").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror}; check the path") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: invalid UTF-8 at byte offset {exc.start}; re-save it") from exc
    header_possible = True
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        first, header_possible = header_possible, False
        fields = [f.strip() for f in line.split("\t")] if "\t" in line else line.split()
        if len(fields) != 3:
            raise InputError(
                f"{p}:{number}: expected 3 fields (query-id, corpus-id, score), got {len(fields)}"
            )
        qid, doc, score = fields
        try:
            grade = int(score)
        except ValueError:
            if first:
                continue  # the header line
            raise InputError(f"{p}:{number}: score {score!r} is not an integer") from None
        qrels.setdefault(qid, {})[doc] = grade
    return qrels


def _query(record: Any, where: str) -> tuple[str, str, dict[str, Any]]:
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a BEIR query object {{_id, text}}")
    qid = record.get("_id", record.get("id"))
    if isinstance(qid, bool) or not isinstance(qid, str | int) or str(qid) == "":
        raise InputError(f"{where}: BEIR query has no '_id'; expected {{_id, text, metadata}}")
    text = record.get("text")
    if not isinstance(text, str):
        raise InputError(f"{where}: BEIR query {qid!r} needs a string 'text'")
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InputError(f"{where}: 'metadata' of BEIR query {qid!r} must be an object")
    return str(qid), text, metadata


def read_beir_tasks(source: BeirSource) -> BeirTasks:
    """The tasks of one BEIR split (see the module docstring).

    Args:
        source: from :func:`beir_source`.

    Returns:
        A :class:`BeirTasks`; qrels rows naming no query in ``queries.jsonl`` are
        logged as a warning.

    Raises:
        InputError: unreadable files, bad JSON, a query without ``_id``/``text``,
            a query id given twice, or a malformed qrels row (naming file:line).
    """
    qrels = read_beir_qrels(source.qrels)
    result = BeirTasks()
    seen: dict[str, str] = {}
    for number, record in iter_jsonl(source.queries):
        where = f"{source.queries}:{number}"
        qid, text, query_meta = _query(record, where)
        if qid in seen:
            raise InputError(
                f"{where}: query id {qid!r} repeats {seen[qid]}; BEIR query ids must be unique"
            )
        seen[qid] = where
        result.records += 1
        judged = qrels.get(qid, {})
        order = {d: i for i, d in enumerate(judged)}
        gold = sorted((d for d, s in judged.items() if s > 0), key=lambda d: (-judged[d], order[d]))
        if not gold:
            result.skipped["no_gold"] = result.skipped.get("no_gold", 0) + 1
            continue
        meta: dict[str, Any] = {"split": source.split, "relevance": {d: judged[d] for d in gold}}
        if query_meta:
            meta["query_metadata"] = dict(query_meta)
        result.tasks.append(
            Task(qid, text, "", gold_doc_ids=gold, dataset=f"beir/{source.name}", metadata=meta)
        )
    unknown = sorted(set(qrels) - set(seen))
    if unknown:
        _log.warning(
            "%s: %d judged query id(s) are not in %s (first: %s)",
            source.qrels,
            len(unknown),
            source.queries,
            unknown[0],
        )
    return result
