"""Dataset records to :class:`~thresher.tasks.readers.Task`: one pure converter per format.

Gold document ids are :func:`~thresher.corpus.ids.paragraph_doc_id` of the
paragraphs that :func:`thresher.corpus.datasets.record_paragraphs` extracts, the
very ``(title, text)`` pairs the corpus loader indexes, so every gold id of a
question is a document id of the index built from the same file.

Hop conventions (``Task.hops``: the doc ids needed at each hop, in order):

- MuSiQue: one hop per ``question_decomposition`` step, its
  ``paragraph_support_idx``; the answer document is the last step's.
- HotpotQA bridge: one hop per supporting title, in the order
  ``supporting_facts`` first lists them, except that when exactly one gold
  paragraph contains the answer (as normalized tokens) it is moved last
  (``metadata["hop_order"] = "answer_last"``): the listed order is not the
  reasoning order (how often it moves: ``docs/eval.md``, "Task formats"). The
  answer documents are the gold paragraphs that contain the answer; when none
  does, the last hop's.
- HotpotQA comparison: both entities are looked up independently, so both
  documents form one hop, and both hold the answer (it compares them).
- 2WikiMultihopQA: hops follow the ``evidences`` triples: a gold paragraph whose
  subject is the object of another gold paragraph's triple comes one hop later
  (``bridge_comparison``: both films, then both directors). When the titles do
  not match the triples, comparisons are one hop and other types follow the
  ``supporting_facts`` order. The answer documents are the last hop's.
- ``{query_id, query, answer, document_ids}``: no hop order is given, so
  ``hops`` is empty; facts flagged ``is_final_answer`` give the answer documents.
"""

from __future__ import annotations

import re
from typing import Any

from thresher.corpus.datasets import record_paragraphs
from thresher.corpus.ids import doc_of, paragraph_doc_id
from thresher.errors import InputError
from thresher.tasks.answers import answer_found, normalize_answer
from thresher.tasks.task import Task

__all__ = [
    "SkipRecord",
    "hotpotqa_task",
    "musique_task",
    "twowiki_task",
    "query_task",
    "thresher_task",
]

_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


class SkipRecord(Exception):
    """A well-formed record that yields no task; ``reason`` is counted by the reader."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _str(record: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = record.get(key)
    if value is None and not required:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"{where}: field '{key}' must be a string, got {value!r}")
    return str(value)


def _aliases(record: dict[str, Any], where: str) -> list[str]:
    aliases = record.get("answer_aliases") or []
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise InputError(f"{where}: 'answer_aliases' must be a list of strings")
    return list(aliases)


def _paragraphs(fmt: str, record: dict[str, Any], where: str) -> list[tuple[str, str]]:
    try:
        paragraphs = record_paragraphs(fmt, record)
    except ValueError as exc:
        raise InputError(f"{where}: not a {fmt} record ({exc}); one format per file") from exc
    if paragraphs is None:
        raise SkipRecord("no_context")
    return paragraphs


def _supporting_titles(record: dict[str, Any], where: str) -> list[str]:
    """Distinct supporting titles in first-listed order (HF dict or ``[[title, sent]]``)."""
    facts = record.get("supporting_facts")
    if isinstance(facts, dict) and isinstance(facts.get("title"), list):
        titles = facts["title"]
    elif isinstance(facts, list) and all(isinstance(f, list) and len(f) == 2 for f in facts):
        titles = [f[0] for f in facts]
    else:
        raise InputError(
            f"{where}: 'supporting_facts' must be {{title: [...], sent_id: [...]}} "
            "or [[title, sent_id], ...]"
        )
    if not titles or not all(isinstance(t, str) for t in titles):
        raise InputError(f"{where}: 'supporting_facts' has no titles or a non-string title")
    return list(dict.fromkeys(titles))


def _gold_by_title(
    titles: list[str], paragraphs: list[tuple[str, str]]
) -> tuple[dict[str, str], dict[str, str]]:
    """``{title: doc_id}`` and ``{title: text}`` of the first paragraph with each title."""
    ids: dict[str, str] = {}
    texts: dict[str, str] = {}
    for title, text in paragraphs:
        if title in titles and title not in ids:
            ids[title] = paragraph_doc_id(title, text)
            texts[title] = text
    if len(ids) < len(titles):
        raise SkipRecord("gold_not_in_context")
    return ids, texts


def hotpotqa_task(record: dict[str, Any], where: str) -> Task:
    """A Task from a HotpotQA record (Hugging Face or original JSON schema).

    Raises:
        InputError: missing or mistyped fields, naming ``where``.
        SkipRecord: ``no_context`` or ``gold_not_in_context``.
    """
    task_id = _str(record, "id" if "id" in record else "_id", where)
    question, answer = _str(record, "question", where), _str(record, "answer", where)
    paragraphs = _paragraphs("hotpotqa", record, where)
    titles = _supporting_titles(record, where)
    ids, texts = _gold_by_title(titles, paragraphs)
    meta: dict[str, Any] = {k: record[k] for k in ("type", "level") if k in record}
    if record.get("type") == "comparison":
        gold = [ids[t] for t in titles]
        return Task(task_id, question, answer, [], gold, [list(gold)], list(gold), "hotpotqa", meta)
    holders = [t for t in titles if answer_found(texts[t], answer)]
    if len(holders) == 1 and holders[0] != titles[-1]:
        titles = [t for t in titles if t != holders[0]] + holders
        meta["hop_order"] = "answer_last"
    gold = [ids[t] for t in titles]
    hops = [[d] for d in gold]
    final = [ids[t] for t in holders] or [gold[-1]]
    return Task(task_id, question, answer, [], gold, hops, final, "hotpotqa", meta)


def musique_task(record: dict[str, Any], where: str) -> Task:
    """A Task from a MuSiQue record (``paragraphs``, ``question_decomposition``).

    Raises:
        InputError: missing or mistyped fields, or a ``paragraph_support_idx`` that
            names no paragraph.
        SkipRecord: ``unanswerable`` (``answerable`` false) or ``no_supporting``.
    """
    task_id, question = _str(record, "id", where), _str(record, "question", where)
    answer = _str(record, "answer", where)
    if record.get("answerable") is False:
        raise SkipRecord("unanswerable")
    paragraphs = _paragraphs("musique", record, where)
    by_idx: dict[int, str] = {}
    supporting: list[str] = []
    for i, (raw, (title, text)) in enumerate(zip(record["paragraphs"], paragraphs, strict=True)):
        doc = paragraph_doc_id(title, text)
        by_idx[raw.get("idx", i)] = doc
        if raw.get("is_supporting"):
            supporting.append(doc)
    steps = record.get("question_decomposition") or []
    if not isinstance(steps, list):
        raise InputError(f"{where}: 'question_decomposition' must be a list")
    hops: list[list[str]] = []
    for n, step in enumerate(steps):
        idx = step.get("paragraph_support_idx") if isinstance(step, dict) else None
        if idx is None:
            hops = []  # an unsupported step: the hop order is unknown
            break
        if idx not in by_idx:
            raise InputError(
                f"{where}: question_decomposition[{n}].paragraph_support_idx {idx!r} "
                "names no paragraph idx"
            )
        hops.append([by_idx[idx]])
    gold = list(dict.fromkeys([d for hop in hops for d in hop] + supporting))
    if not gold:
        raise SkipRecord("no_supporting")
    final = list(hops[-1]) if hops else []
    meta: dict[str, Any] = {"n_hops": len(steps)}
    return Task(
        task_id, question, answer, _aliases(record, where), gold, hops, final, "musique", meta
    )


def _entity_key(name: str) -> str:
    return normalize_answer(_DISAMBIGUATION.sub("", name))


def _evidence_hops(titles: list[str], evidences: Any) -> list[list[str]] | None:
    """Titles grouped by hop from 2Wiki ``[subject, relation, object]`` triples, or None."""
    if not isinstance(evidences, list) or not evidences:
        return None
    triples = [e for e in evidences if isinstance(e, list) and len(e) == 3]
    if len(triples) != len(evidences) or not all(isinstance(x, str) for e in triples for x in e):
        return None
    subjects = {_entity_key(s) for s, _, _ in triples}
    keys = {t: _entity_key(t) for t in titles}
    if not all(k in subjects for k in keys.values()):
        return None
    # parent[t]: a gold title whose triple points at t's entity
    parent: dict[str, str] = {}
    for t, key in keys.items():
        for s, _, o in triples:
            src = next((u for u, k in keys.items() if k == _entity_key(s) and u != t), None)
            if src is not None and _entity_key(o) == key:
                parent[t] = src
                break
    level: dict[str, int] = {}
    for t in titles:
        depth, cur, seen = 0, t, {t}
        while cur in parent and parent[cur] not in seen:
            cur = parent[cur]
            seen.add(cur)
            depth += 1
        level[t] = depth
    return [[t for t in titles if level[t] == d] for d in range(max(level.values()) + 1)]


def twowiki_task(record: dict[str, Any], where: str) -> Task:
    """A Task from a 2WikiMultihopQA record (original schema).

    Raises:
        InputError: missing or mistyped fields.
        SkipRecord: ``no_context`` (some copies drop it) or ``gold_not_in_context``.
    """
    task_id, question = _str(record, "_id", where), _str(record, "question", where)
    answer = _str(record, "answer", where)
    paragraphs = _paragraphs("2wikimultihopqa", record, where)
    titles = _supporting_titles(record, where)
    ids, _ = _gold_by_title(titles, paragraphs)
    qtype = record.get("type") or ""
    title_hops = _evidence_hops(titles, record.get("evidences"))
    if title_hops is None:
        title_hops = [titles] if "comparison" in qtype else [[t] for t in titles]
    hops = [[ids[t] for t in hop] for hop in title_hops]
    meta: dict[str, Any] = {"type": qtype} if qtype else {}
    return Task(
        task_id,
        question,
        answer,
        _aliases(record, where),
        [ids[t] for t in titles],
        hops,
        list(hops[-1]),
        "2wikimultihopqa",
        meta,
    )


def query_task(record: dict[str, Any], where: str) -> Task:
    """A Task from ``{query_id, query, answer, document_ids}``.

    ``document_ids`` lists doc ids, or ``{fact, chunk_ids, is_final_answer}``
    objects whose chunk ids (``doc#N``) are mapped to their documents. ``answer``
    may be a string or a list (first = answer, rest = aliases).

    Raises:
        InputError: missing or mistyped fields.
        SkipRecord: ``no_gold`` (an empty ``document_ids``).
    """
    task_id, question = _str(record, "query_id", where), _str(record, "query", where)
    answer_value = record.get("answer", "")
    aliases = _aliases(record, where)
    if isinstance(answer_value, list) and all(isinstance(a, str) for a in answer_value):
        answer, aliases = (answer_value[0] if answer_value else ""), answer_value[1:] + aliases
    elif isinstance(answer_value, str):
        answer = answer_value
    else:
        raise InputError(f"{where}: 'answer' must be a string or a list of strings")
    items = record.get("document_ids")
    if not isinstance(items, list):
        raise InputError(f"{where}: 'document_ids' must be a list")
    gold: list[str] = []
    final: list[str] = []
    facts: list[dict[str, Any]] = []
    for n, item in enumerate(items):
        if isinstance(item, str | int) and not isinstance(item, bool):
            gold.append(str(item))
            continue
        chunks = item.get("chunk_ids") if isinstance(item, dict) else None
        if not isinstance(chunks, list) or not all(isinstance(c, str) for c in chunks):
            raise InputError(
                f"{where}: document_ids[{n}] must be an id or an object with a 'chunk_ids' list"
            )
        docs = list(dict.fromkeys(doc_of(c) for c in chunks))
        gold.extend(docs)
        if item.get("is_final_answer"):
            final.extend(docs)
        facts.append({k: item[k] for k in ("fact", "chunk_ids", "is_final_answer") if k in item})
    gold = list(dict.fromkeys(gold))
    if not gold:
        raise SkipRecord("no_gold")
    meta = dict(record.get("metadata") or {})
    if facts:
        meta["facts"] = facts
    dataset = str(record["dataset"]) if isinstance(record.get("dataset"), str) else "custom"
    return Task(
        task_id, question, answer, aliases, gold, [], list(dict.fromkeys(final)), dataset, meta
    )


def thresher_task(record: dict[str, Any], where: str) -> Task:
    """A Task from its own ``Task.to_dict()`` form (what :func:`~thresher.tasks.readers.write_tasks` writes).

    Raises:
        InputError: missing or mistyped fields.
    """
    try:
        return Task.from_dict(record)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: not a thresher task record ({exc})") from exc
