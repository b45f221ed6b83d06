"""The synthetic task record, its JSONL file, and converters to the formats others read.

One task per JSONL line (documented in ``docs/synth-tasks.md``)::

    {"schema": "thresher.synth-task/1",
     "task_id": "synth-0-00017",
     "question": "...", "answer": "Lathlin", "answer_aliases": [],
     "hops": 3,                                  # number of evidence hops (2-4)
     "difficulty": 0.62,                         # 0 (easy) .. 1 (hard), see difficulty()
     "evidence": [                               # one entry per hop, in hop order
        {"hop": 1, "chunk_ids": ["patents/GO-2021-138181.txt#1"],
         "doc_id": "patents/GO-2021-138181.txt",
         "fact": "Patent GO-2021-138181 names Kilmiv Furwan as its lead inventor.",
         "bridge": "Kilmiv Furwan"},             # the entity that leads to the next hop
        ...,
        {"hop": 3, ..., "bridge": null}],        # the last hop states the answer
     "final_chunk_id": "filings/fallil-filtration-annual-report-2020.md#0",
     "distractor_ids": ["...#2", ...],           # topical chunks without answer or bridges
     "anchor": "GO-2021-138181",                 # the entity the question starts from
     "mode": "offline", "seed": 0,
     "checks": {"quotes_matched": 1.0, "single_shot_found": 1, ...}}

Converters: :func:`to_query_record` / :func:`from_query_record` (the
``{query_id, query, answer, document_ids: [{fact, chunk_ids, is_final_answer}]}``
form that :func:`thresher.tasks.readers.load_tasks` reads), :func:`to_eval_task`
(an evaluation :class:`~thresher.tasks.task.Task` with hop order), and
:func:`to_qrels` / :func:`write_qrels` (TREC qrels at document or chunk level).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from thresher.corpus.ids import doc_of
from thresher.corpus.jsonl import iter_jsonl, write_jsonl
from thresher.errors import InputError
from thresher.tasks.task import Task

__all__ = [
    "SCHEMA",
    "Evidence",
    "SynthTask",
    "is_synth_record",
    "read_synth_tasks",
    "write_synth_tasks",
    "to_query_record",
    "from_query_record",
    "to_eval_task",
    "eval_task_from_record",
    "to_qrels",
    "write_qrels",
]

SCHEMA = "thresher.synth-task/1"


@dataclass(frozen=True, slots=True)
class Evidence:
    """One hop of a task's evidence.

    Attributes:
        hop: 1-based hop number.
        chunk_ids: the chunk(s) stating the fact (the first is the one quoted).
        doc_id: their document.
        fact: the supporting sentence, verbatim in the first chunk.
        bridge: the entity this hop passes to the next one (None on the last hop).
    """

    hop: int
    chunk_ids: tuple[str, ...]
    doc_id: str
    fact: str
    bridge: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "hop": self.hop,
            "chunk_ids": list(self.chunk_ids),
            "doc_id": self.doc_id,
            "fact": self.fact,
            "bridge": self.bridge,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "evidence") -> Evidence:
        chunks = data.get("chunk_ids")
        if (
            not isinstance(chunks, list)
            or not chunks
            or not all(isinstance(c, str) for c in chunks)
        ):
            raise InputError(f"{where}: 'chunk_ids' must be a non-empty list of chunk ids")
        fact = data.get("fact", "")
        if not isinstance(fact, str):
            raise InputError(f"{where}: 'fact' must be a string")
        bridge = data.get("bridge")
        if bridge is not None and not isinstance(bridge, str):
            raise InputError(f"{where}: 'bridge' must be a string or null")
        hop = data.get("hop")
        if isinstance(hop, bool) or not isinstance(hop, int) or hop < 1:
            raise InputError(f"{where}: 'hop' must be a positive integer")
        doc = data.get("doc_id") or doc_of(chunks[0])
        return cls(hop, tuple(chunks), str(doc), fact, bridge)


@dataclass(frozen=True, slots=True)
class SynthTask:
    """A synthesized multi-hop task (see the module docs for the JSON form)."""

    task_id: str
    question: str
    answer: str
    evidence: tuple[Evidence, ...]
    final_chunk_id: str
    answer_aliases: tuple[str, ...] = ()
    distractor_ids: tuple[str, ...] = ()
    difficulty: float = 0.0
    anchor: str = ""
    mode: str = "offline"
    seed: int = 0
    checks: dict[str, Any] = field(default_factory=dict)

    @property
    def hops(self) -> int:
        """Number of hops (evidence entries)."""
        return len(self.evidence)

    @property
    def evidence_chunk_ids(self) -> list[str]:
        """The quoted chunk of every hop, in hop order."""
        return [e.chunk_ids[0] for e in self.evidence]

    @property
    def gold_doc_ids(self) -> list[str]:
        """Evidence documents in hop order (distinct)."""
        return list(dict.fromkeys(e.doc_id for e in self.evidence))

    @property
    def bridges(self) -> list[str]:
        """The bridge entities, in hop order."""
        return [e.bridge for e in self.evidence if e.bridge]

    def to_dict(self) -> dict[str, Any]:
        """The JSONL record (``schema`` first)."""
        return {
            "schema": SCHEMA,
            "task_id": self.task_id,
            "question": self.question,
            "answer": self.answer,
            "answer_aliases": list(self.answer_aliases),
            "hops": self.hops,
            "difficulty": self.difficulty,
            "evidence": [e.to_dict() for e in self.evidence],
            "final_chunk_id": self.final_chunk_id,
            "distractor_ids": list(self.distractor_ids),
            "anchor": self.anchor,
            "mode": self.mode,
            "seed": self.seed,
            "checks": dict(self.checks),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "record") -> SynthTask:
        """Inverse of :meth:`to_dict`.

        Raises:
            InputError: a newer schema, a missing field or a mistyped one (naming ``where``).
        """
        schema = data.get("schema", SCHEMA)
        if schema != SCHEMA:
            raise InputError(f"{where}: schema {schema!r} is not {SCHEMA!r}; upgrade thresher")
        for key in ("task_id", "question", "answer"):
            if not isinstance(data.get(key), str):
                raise InputError(f"{where}: field '{key}' must be a string")
        items = data.get("evidence")
        if not isinstance(items, list) or not items:
            raise InputError(f"{where}: 'evidence' must be a non-empty list of hops")
        evidence = tuple(
            Evidence.from_dict(e, f"{where}: evidence[{i}]")
            if isinstance(e, Mapping)
            else _bad(where, i)
            for i, e in enumerate(items)
        )
        final = data.get("final_chunk_id") or evidence[-1].chunk_ids[0]
        hops = data.get("hops", len(evidence))
        if hops != len(evidence):
            raise InputError(
                f"{where}: 'hops' is {hops} but 'evidence' has {len(evidence)} entries"
            )
        return cls(
            task_id=data["task_id"],
            question=data["question"],
            answer=data["answer"],
            evidence=evidence,
            final_chunk_id=str(final),
            answer_aliases=tuple(str(a) for a in data.get("answer_aliases") or ()),
            **_provenance(data),
        )


def _provenance(data: Mapping[str, Any]) -> dict[str, Any]:
    """The optional fields of a task (distractors, difficulty, anchor, mode, seed, checks)
    from a record (``data``: the task record, or the query form's ``metadata``)."""
    return {
        "distractor_ids": tuple(str(d) for d in data.get("distractor_ids") or ()),
        "difficulty": float(data.get("difficulty", 0.0)),
        "anchor": str(data.get("anchor", "")),
        "mode": str(data.get("mode", "offline")),
        "seed": int(data.get("seed", 0)),
        "checks": dict(data.get("checks") or {}),
    }


def _bad(where: str, i: int) -> Evidence:
    raise InputError(f"{where}: evidence[{i}] must be an object")


def is_synth_record(record: Any) -> bool:
    """Whether a parsed JSON record is a synthetic task record (by its ``schema`` field)."""
    return isinstance(record, Mapping) and str(record.get("schema", "")).startswith(
        "thresher.synth-task/"
    )


def write_synth_tasks(path: str | Path, tasks: Iterable[SynthTask]) -> Path:
    """Write tasks as JSONL (parents created); returns the path."""
    return write_jsonl(path, (task.to_dict() for task in tasks))


def read_synth_tasks(path: str | Path) -> list[SynthTask]:
    """Read a synthetic task JSONL file.

    Raises:
        InputError: the file is unreadable, or a line is not a synthetic task (file:line).
    """
    p = Path(path)
    tasks = []
    for n, data in iter_jsonl(p):
        if not isinstance(data, dict):
            raise InputError(f"{p}:{n}: a task line must be a JSON object")
        tasks.append(SynthTask.from_dict(data, f"{p}:{n}"))
    return tasks


# -- the {query_id, query, answer, document_ids} form ---------------------------------------


def to_query_record(task: SynthTask) -> dict[str, Any]:
    """``{query_id, query, answer, document_ids: [{fact, chunk_ids, is_final_answer}], metadata}``.

    One ``document_ids`` entry per hop, in hop order; the last hop is the final
    answer. Everything else (bridges, distractors, difficulty, ...) goes to
    ``metadata`` so :func:`from_query_record` gives the task back exactly.
    """
    final_hop = task.evidence[-1].hop
    return {
        "query_id": task.task_id,
        "query": task.question,
        "answer": task.answer,
        "answer_aliases": list(task.answer_aliases),
        "document_ids": [
            {
                "fact": e.fact,
                "chunk_ids": list(e.chunk_ids),
                "is_final_answer": e.hop == final_hop,
            }
            for e in task.evidence
        ],
        "dataset": "synth",
        "metadata": {
            "schema": SCHEMA,
            "hops": task.hops,
            "bridges": [e.bridge for e in task.evidence],
            "final_chunk_id": task.final_chunk_id,
            "distractor_ids": list(task.distractor_ids),
            "difficulty": task.difficulty,
            "anchor": task.anchor,
            "mode": task.mode,
            "seed": task.seed,
            "checks": dict(task.checks),
        },
    }


def from_query_record(record: Mapping[str, Any], where: str = "record") -> SynthTask:
    """A task from the query form (inverse of :func:`to_query_record`).

    Records written by others work too: ``document_ids`` objects become hops in
    order (a plain id string becomes a hop with an empty fact), the final hop
    is the one flagged ``is_final_answer`` (else the last).

    Raises:
        InputError: missing fields or no evidence.
    """
    for key in ("query_id", "query"):
        if not isinstance(record.get(key), str):
            raise InputError(f"{where}: field '{key}' must be a string")
    answer = record.get("answer", "")
    aliases = [str(a) for a in record.get("answer_aliases") or ()]
    if isinstance(answer, list):
        answer, aliases = (str(answer[0]) if answer else ""), [str(a) for a in answer[1:]] + aliases
    meta = dict(record.get("metadata") or {})
    items = record.get("document_ids")
    if not isinstance(items, list) or not items:
        raise InputError(f"{where}: 'document_ids' must be a non-empty list")
    bridges = list(meta.get("bridges") or [])
    evidence = []
    final_chunk = ""
    for i, item in enumerate(items):
        if isinstance(item, str):
            chunks, fact, is_final = [item], "", False
        elif (
            isinstance(item, Mapping)
            and isinstance(item.get("chunk_ids"), list)
            and item["chunk_ids"]
        ):
            chunks = [str(c) for c in item["chunk_ids"]]
            fact, is_final = str(item.get("fact", "")), bool(item.get("is_final_answer"))
        else:
            raise InputError(
                f"{where}: document_ids[{i}] must be an id or an object with chunk_ids"
            )
        bridge = bridges[i] if i < len(bridges) else None
        evidence.append(Evidence(i + 1, tuple(chunks), doc_of(chunks[0]), fact, bridge))
        if is_final and not final_chunk:
            final_chunk = chunks[0]
    return SynthTask(
        task_id=record["query_id"],
        question=record["query"],
        answer=str(answer),
        evidence=tuple(evidence),
        final_chunk_id=str(meta.get("final_chunk_id") or final_chunk or evidence[-1].chunk_ids[0]),
        answer_aliases=tuple(aliases),
        **_provenance(meta),
    )


# -- evaluation tasks and qrels ------------------------------------------------------------


def to_eval_task(task: SynthTask) -> Task:
    """An evaluation :class:`Task`: gold docs and per-hop docs in hop order, final doc last.

    ``metadata`` keeps the facts, evidence chunk ids, bridges, distractors and difficulty.
    """
    return Task(
        task_id=task.task_id,
        question=task.question,
        answer=task.answer,
        answer_aliases=list(task.answer_aliases),
        gold_doc_ids=task.gold_doc_ids,
        hops=[list(dict.fromkeys(doc_of(c) for c in e.chunk_ids)) for e in task.evidence],
        final_doc_ids=[doc_of(task.final_chunk_id)],
        dataset="synth",
        metadata={
            "n_hops": task.hops,
            "difficulty": task.difficulty,
            "facts": [e.fact for e in task.evidence],
            "evidence_chunk_ids": [list(e.chunk_ids) for e in task.evidence],
            "bridges": task.bridges,
            "final_chunk_id": task.final_chunk_id,
            "distractor_ids": list(task.distractor_ids),
            "anchor": task.anchor,
        },
    )


def eval_task_from_record(record: Mapping[str, Any], where: str = "record") -> Task:
    """The evaluation task of one synthetic JSONL record (the eval loader's hook)."""
    return to_eval_task(SynthTask.from_dict(record, where))


def to_qrels(
    tasks: Iterable[SynthTask], level: Literal["doc", "chunk"] = "doc"
) -> dict[str, dict[str, int]]:
    """``{task_id: {id: grade}}``: grade 2 for the final-answer document/chunk, 1 for the others."""
    out: dict[str, dict[str, int]] = {}
    for task in tasks:
        grades: dict[str, int] = {}
        final = task.final_chunk_id if level == "chunk" else doc_of(task.final_chunk_id)
        for e in task.evidence:
            for cid in e.chunk_ids:
                key = cid if level == "chunk" else doc_of(cid)
                grades[key] = max(grades.get(key, 0), 2 if key == final else 1)
        out[task.task_id] = grades
    return out


def write_qrels(
    path: str | Path, tasks: Iterable[SynthTask], level: Literal["doc", "chunk"] = "doc"
) -> Path:
    """Write TREC qrels (``qid 0 id grade``) for ``tasks``; returns the path."""
    from thresher.tasks.trec import write_qrels as _write

    return _write(path, to_qrels(tasks, level))
