"""Evaluation tasks from dataset files: one reader, the format detected from content.

Formats (JSONL, or a JSON array; the file name does not matter):

- ``hotpotqa``: Hugging Face schema (``context{title[], sentences[][]}``,
  ``supporting_facts{title[], sent_id[]}``) or the original JSON
  (``context [[title, sents]]``, ``supporting_facts [[title, sent_id]]``);
- ``musique``: ``paragraphs[{idx, title, paragraph_text, is_supporting}]``,
  ``question_decomposition``, ``answer_aliases``;
- ``2wikimultihopqa``: original schema (``_id``, ``context``, ``supporting_facts``,
  ``evidences``); records without context are skipped and counted;
- ``query``: ``{query_id, query, answer, document_ids}``, ids or
  ``{fact, chunk_ids, is_final_answer}`` objects;
- ``thresher``: :meth:`Task.to_dict` records, as :func:`write_tasks` writes them;
- ``browsecomp``: decrypted BrowseComp-Plus queries (``query_id``, ``query``,
  ``answer``, ``evidence_docs``/``gold_docs``), see :mod:`thresher.tasks.browsecomp`;
- ``world_chains``: a generated world's ``.world/chains.jsonl``, see
  :mod:`thresher.tasks.world`;
- ``synth``: the synthesis pipeline's tasks JSONL (``"schema": "thresher.synth-task/1"``),
  read by :mod:`thresher.tasks.synthetic`.

More formats plug in with :func:`register_task_format`; detectors registered
there are tried first.

Paths that name a dataset laid out in several files are read by *path readers*
(tried before the content is looked at): ``beir``, a BEIR dataset folder
(``scifact``, ``scifact::dev``, ``scifact/qrels/dev.tsv`` or
``scifact/queries.jsonl``), see :mod:`thresher.tasks.beir`.

Relevance judgments in TREC qrels form (``qid 0 docid rel``) are read by
:func:`load_qrels`. How gold ids and hops are derived for each format is
described in :mod:`thresher.tasks.formats`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.corpus.datasets import detect_format, record_id_key
from thresher.corpus.jsonl import iter_json_records, write_jsonl
from thresher.errors import InputError
from thresher.tasks import beir
from thresher.tasks import browsecomp as bc
from thresher.tasks import formats as tf
from thresher.tasks import world as st
from thresher.tasks.task import Task
from thresher.tasks.trec import read_qrels

__all__ = [
    "TaskFile",
    "TASK_FORMATS",
    "detect_task_format",
    "register_task_format",
    "read_tasks",
    "iter_task_records",
    "load_tasks",
    "write_tasks",
    "load_qrels",
    "tasks_to_qrels",
]

_log = logging.getLogger(__name__)

_CONVERTERS: dict[str, Callable[[dict[str, Any], str], Task]] = {
    "hotpotqa": tf.hotpotqa_task,
    "musique": tf.musique_task,
    "2wikimultihopqa": tf.twowiki_task,
    "query": tf.query_task,
    "thresher": tf.thresher_task,
    "browsecomp": bc.browsecomp_task,
    "world_chains": st.world_chain_task,
    "synth": lambda record, where: _synth_task(record, where),
}
#: (format name, detector) pairs tried before the built-in rules, in order.
_DETECTORS: list[tuple[str, Callable[[Any], bool]]] = [
    ("browsecomp", bc.is_browsecomp_query),
    ("world_chains", st.is_world_chain),
    ("synth", lambda r: isinstance(r, dict) and str(r.get("schema", "")).startswith(_SYNTH)),
]
_SYNTH = "thresher.synth-task/"


def _synth_task(record: dict[str, Any], where: str) -> Task:
    """A synthesis pipeline record (``docs/synth-tasks.md``), read by its own schema module."""
    from thresher.tasks.synthetic import eval_task_from_record

    return eval_task_from_record(record, where)


TASK_FORMATS = tuple(_CONVERTERS)


def register_task_format(
    name: str,
    detect: Callable[[Any], bool],
    convert: Callable[[dict[str, Any], str], Task],
) -> None:
    """Teach :func:`read_tasks` a new record format.

    Args:
        name: the format's name (reported in :attr:`TaskFile.format`).
        detect: ``record -> bool``: whether a parsed first record has this format.
        convert: ``(record, where) -> Task``; raise ``InputError`` naming ``where``
            for a bad record, ``task_formats.SkipRecord(reason)`` to skip one.
    """
    global TASK_FORMATS
    _CONVERTERS[name] = convert
    _DETECTORS[:] = [(n, d) for n, d in _DETECTORS if n != name]
    _DETECTORS.insert(0, (name, detect))
    TASK_FORMATS = tuple(_CONVERTERS)


@dataclass(slots=True)
class TaskFile:
    """What :func:`read_tasks` found in one file.

    Attributes:
        path: the file read.
        format: one of :data:`TASK_FORMATS`.
        tasks: the tasks, in file order.
        records: question records read (tasks plus skipped).
        skipped: counts of records that gave no task, by reason (``no_context``,
            ``gold_not_in_context``, ``unanswerable``, ``no_supporting``, ``no_gold``).
    """

    path: Path
    format: str
    tasks: list[Task] = field(default_factory=list)
    records: int = 0
    skipped: dict[str, int] = field(default_factory=dict)


def detect_task_format(record: Any) -> str | None:
    """The task format of one parsed record, or None if it is not a task record."""
    for name, detect in _DETECTORS:
        if detect(record):
            return name
    if isinstance(record, dict):
        if {"task_id", "question", "gold_doc_ids"} <= record.keys():
            return "thresher"
        if "query_id" in record and "query" in record:
            return "query"
    fmt = detect_format(record)
    return fmt if fmt in _CONVERTERS else None


def _check_file(path: Path) -> None:
    source = beir.beir_source(path)
    if source is not None:  # read_tasks reads these first: a caller wants one file of records
        raise InputError(
            f"{path}: a BEIR dataset, not one task file: it has no per-question documents "
            f"(use the pooled corpus); its corpus is {source.corpus} (index it, pass --index)"
        )
    if path.is_dir():
        raise InputError(
            f"{path}: a folder, not a task file; name a task file, or a BEIR dataset folder "
            "(corpus.jsonl, queries.jsonl, qrels/)"
        )
    if not path.is_file():
        raise InputError(f"{path}: no such task file; check the path")


def _not_json_hint(path: Path, first_line: str) -> str:
    fields = first_line.split()
    if len(fields) == 4 and fields[3].lstrip("-").isdigit():
        return (
            f"{path}: looks like a TREC qrels file; read it with load_qrels(), "
            "tasks need a JSON/JSONL file with questions"
        )
    if len(fields) == 6 and fields[1] == "Q0":
        return f"{path}: looks like a TREC run file, not tasks; read it with trec.read_run()"
    return f"{path}:1: not JSON; expected a JSONL file or a JSON array of task records"


def iter_task_records(path: str | Path) -> Iterator[tuple[str, Any]]:
    """``(location, parsed record)`` of a task file: ``file:LINE`` for JSONL, ``file[i]`` for an array.

    A JSON array, one JSON object, or JSON Lines, decided by the content
    (:func:`thresher.corpus.jsonl.iter_json_records`).

    Raises:
        InputError: a missing file or folder, a file that is not JSON (TREC qrels
            and run files are recognized and named), or invalid JSON (naming the line).
    """
    p = Path(path)
    _check_file(p)
    try:
        with p.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror}; check that it is readable") from exc
    if head and head[0] not in "[{":
        raise InputError(_not_json_hint(p, head.splitlines()[0]))
    for location, record in iter_json_records(p):
        yield f"{p}{location}", record


def _not_task_hint(record: Any) -> str:
    if detect_format(record) == "paragraph_corpus":
        return "it is a corpus of passages; index it instead"
    if isinstance(record, dict) and "text" in record and record_id_key(record) is not None:
        return (
            "it looks like a corpus of documents or BEIR queries: index a corpus with "
            "'thresher index'; for BEIR, name the dataset folder (corpus.jsonl, "
            "queries.jsonl, qrels/)"
        )
    return f"expected one of {', '.join(TASK_FORMATS)}"


def _read_beir(path: str | Path) -> TaskFile | None:
    source = beir.beir_source(path)
    if source is None:
        return None
    read = beir.read_beir_tasks(source)
    return TaskFile(Path(path), "beir", read.tasks, read.records, read.skipped)


#: (name, reader) pairs tried on the path before its content: ``path -> TaskFile | None``
_PATH_READERS: list[tuple[str, Callable[[str | Path], TaskFile | None]]] = [("beir", _read_beir)]


def read_tasks(path: str | Path) -> TaskFile:
    """Read every task of a file, with counts of the records that gave none.

    A path that a path reader recognizes (a BEIR dataset) is read by it;
    otherwise the format is detected from the first record and every record must
    have it.

    Args:
        path: a JSONL file or a JSON array file, or a BEIR dataset path (see the
            module docstring).

    Returns:
        A :class:`TaskFile`.

    Raises:
        InputError: a missing or unreadable file, bad JSON, an unknown format, a
            record that does not fit the detected format, or a repeated task id;
            the message names the file and line (JSONL) or element index (array).
            BEIR paths: as :func:`thresher.tasks.beir.read_beir_tasks`.
    """
    for _name, read in _PATH_READERS:
        found = read(path)
        if found is not None:
            return found
    p = Path(path)
    result: TaskFile | None = None
    first_seen: dict[str, str] = {}
    for where, record in iter_task_records(p):
        if result is None:
            fmt = detect_task_format(record)
            if fmt is None:
                raise InputError(f"{where}: not a task record ({_not_task_hint(record)})")
            result = TaskFile(path=p, format=fmt)
        if not isinstance(record, dict):
            raise InputError(f"{where}: expected a JSON object, found {type(record).__name__}")
        result.records += 1
        try:
            task = _CONVERTERS[result.format](record, where)
        except tf.SkipRecord as skip:
            result.skipped[skip.reason] = result.skipped.get(skip.reason, 0) + 1
            continue
        if task.task_id in first_seen:
            raise InputError(
                f"{where}: task id {task.task_id!r} repeats {first_seen[task.task_id]}; "
                "task ids must be unique within a file"
            )
        first_seen[task.task_id] = where
        result.tasks.append(task)
    if result is None:
        raise InputError(f"{p}: no records; the task file is empty")
    return result


def load_tasks(path: str | Path) -> list[Task]:
    """The tasks of a file (see :func:`read_tasks`); skipped records are logged.

    Raises:
        InputError: as :func:`read_tasks`.
    """
    result = read_tasks(path)
    if result.skipped:
        _log.warning("%s: skipped %s of %d records", path, result.skipped, result.records)
    return result.tasks


def write_tasks(path: str | Path, tasks: Iterable[Task]) -> Path:
    """Write tasks as JSONL (one :meth:`Task.to_dict` per line); :func:`load_tasks` reads it.

    Returns:
        The path written (parent folders are created).
    """
    return write_jsonl(path, (task.to_dict() for task in tasks))


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read TREC qrels (``qid 0 docid rel``) into ``{qid: {doc_id: rel}}``.

    Raises:
        InputError: a missing file or a malformed line (naming file and line).
    """
    return read_qrels(path)


def tasks_to_qrels(tasks: Iterable[Task]) -> dict[str, dict[str, int]]:
    """``{task_id: {gold_doc_id: 1}}``, for TREC tools and :func:`~thresher.tasks.trec.write_qrels`."""
    return {t.task_id: dict.fromkeys(t.gold_doc_ids, 1) for t in tasks}
