"""BrowseComp-Plus: queries, relevance judgments and corpus as tasks and documents.

BrowseComp-Plus (Chen et al., 2025; ``texttron/BrowseComp-Plus``) ships in two forms:

- the decrypted query file (``browsecomp_plus_decrypted.jsonl``): one record per
  query with ``query_id``, ``query``, ``answer`` and three lists of
  ``{docid, text, url?}`` documents: ``evidence_docs`` (needed to answer),
  ``gold_docs`` (needed and containing the answer) and ``negative_docs`` (mined
  hard negatives);
- ``topics-qrels/queries.tsv`` (``query_id<TAB>query``) with TREC qrels
  ``qrel_evidence.txt`` and ``qrel_golds.txt``; answers then come from a separate
  ``{query_id: answer}`` mapping when available;

and a corpus of ``{docid, text, url?}`` records (``Tevatron/browsecomp-plus-corpus``
exported as JSONL). Doc ids are the dataset's ``docid`` strings, unchanged.

Tasks: ``gold_doc_ids`` = evidence docs, then gold docs not already listed;
``final_doc_ids`` = gold docs; ``hops`` is empty (the dataset gives no order).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from thresher.corpus.document import Document
from thresher.corpus.jsonl import iter_jsonl
from thresher.corpus.records import make_document
from thresher.errors import InputError
from thresher.tasks.task import Task
from thresher.tasks.trec import read_qrels

__all__ = [
    "DATASET",
    "is_browsecomp_query",
    "browsecomp_task",
    "load_browsecomp_tsv",
    "iter_browsecomp_corpus",
    "iter_query_documents",
]

DATASET = "browsecomp-plus"
_DOC_LISTS = ("evidence_docs", "gold_docs", "negative_docs")


def is_browsecomp_query(record: Any) -> bool:
    """Whether a parsed record is a decrypted BrowseComp-Plus query."""
    return (
        isinstance(record, dict)
        and "query_id" in record
        and "query" in record
        and any(isinstance(record.get(k), list) for k in ("evidence_docs", "gold_docs"))
    )


def _docids(record: dict[str, Any], key: str, where: str) -> list[str]:
    items = record.get(key) or []
    if not isinstance(items, list):
        raise InputError(f"{where}: '{key}' must be a list of {{docid, text}} objects")
    out: list[str] = []
    for n, item in enumerate(items):
        docid = item.get("docid") if isinstance(item, dict) else item
        if isinstance(docid, bool) or not isinstance(docid, str | int) or str(docid) == "":
            raise InputError(f"{where}: {key}[{n}] has no 'docid'; expected {{docid, text, url}}")
        out.append(str(docid))
    return out


def browsecomp_task(record: dict[str, Any], where: str) -> Task:
    """A Task from one decrypted BrowseComp-Plus query record.

    Raises:
        InputError: a missing ``query_id``/``query``, or a document without ``docid``.
    """
    for key in ("query_id", "query"):
        value = record.get(key)
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise InputError(f"{where}: field '{key}' must be a string, got {value!r}")
    answer = record.get("answer", "")
    if not isinstance(answer, str):
        raise InputError(f"{where}: 'answer' must be a string, got {type(answer).__name__}")
    evidence = _docids(record, "evidence_docs", where)
    gold = _docids(record, "gold_docs", where)
    meta = {"negative_doc_ids": _docids(record, "negative_docs", where)}
    return Task(
        task_id=str(record["query_id"]),
        question=str(record["query"]),
        answer=answer,
        gold_doc_ids=list(dict.fromkeys(evidence + gold)),
        final_doc_ids=list(dict.fromkeys(gold)),
        dataset=DATASET,
        metadata=meta,
    )


def load_browsecomp_tsv(
    queries: str | Path,
    qrels_evidence: str | Path,
    qrels_gold: str | Path | None = None,
    answers: Mapping[str, str] | None = None,
) -> list[Task]:
    """Tasks from ``queries.tsv`` and the TREC qrels files.

    Args:
        queries: ``query_id<TAB>query`` lines.
        qrels_evidence: qrels of the evidence documents (relevance > 0 is gold).
        qrels_gold: qrels of the answer-holding documents (``final_doc_ids``).
        answers: ``{query_id: answer}``; missing answers are empty strings.

    Returns:
        One task per query line that has at least one judged document, in file order.

    Raises:
        InputError: a missing file or a line without a tab.
    """
    path = Path(queries)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}; check the path") from exc
    evidence = read_qrels(qrels_evidence)
    golds = read_qrels(qrels_gold) if qrels_gold is not None else {}
    tasks: list[Task] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        qid, sep, text = line.partition("\t")
        if not sep:
            raise InputError(f"{path}:{lineno}: expected 'query_id<TAB>query'")
        qid = qid.strip()
        ev = [d for d, rel in evidence.get(qid, {}).items() if rel > 0]
        gd = [d for d, rel in golds.get(qid, {}).items() if rel > 0]
        if not ev and not gd:
            continue
        tasks.append(
            Task(
                task_id=qid,
                question=text.strip(),
                answer=(answers or {}).get(qid, ""),
                gold_doc_ids=list(dict.fromkeys(ev + gd)),
                final_doc_ids=gd,
                dataset=DATASET,
            )
        )
    return tasks


def _document(item: Any, where: str, source: str) -> Document:
    if not isinstance(item, dict):
        raise InputError(f"{where}: expected a {{docid, text, url}} object")
    docid, text = item.get("docid"), item.get("text")
    if isinstance(docid, bool) or not isinstance(docid, str | int) or str(docid) == "":
        raise InputError(f"{where}: document has no 'docid'; expected {{docid, text, url}}")
    if not isinstance(text, str):
        raise InputError(f"{where}: 'text' of document {docid!r} must be a string")
    url = item.get("url") if isinstance(item.get("url"), str) else ""
    title = item.get("title") if isinstance(item.get("title"), str) else ""
    meta = {"dataset": DATASET, **({"url": url} if url else {})}
    return make_document(str(docid), title or url or str(docid), text, source, meta)


def iter_browsecomp_corpus(path: str | Path) -> Iterator[Document]:
    """Documents of a BrowseComp-Plus corpus JSONL (``{docid, text, url?}`` per line).

    Title: the record's ``title``, else its ``url``, else the docid; the url is kept
    in ``metadata["url"]``. A repeated docid is skipped.

    Raises:
        InputError: unreadable file, bad JSON, or a record without ``docid``/``text``.
    """
    p = Path(path)
    seen: set[str] = set()
    for lineno, record in iter_jsonl(p):
        doc = _document(record, f"{p}:{lineno}", f"{p.name}:{lineno}")
        if doc.doc_id not in seen:
            seen.add(doc.doc_id)
            yield doc


def iter_query_documents(path: str | Path) -> Iterator[Document]:
    """The documents embedded in a decrypted query file (evidence, gold, negatives), deduplicated.

    The pooled corpus of the queries alone: every judged and negative document
    of every query, each once.

    Raises:
        InputError: as :func:`iter_browsecomp_corpus`.
    """
    p = Path(path)
    seen: set[str] = set()
    for lineno, record in iter_jsonl(p):
        if not is_browsecomp_query(record):
            raise InputError(f"{p}:{lineno}: not a BrowseComp-Plus query record")
        for key in _DOC_LISTS:
            for n, item in enumerate(record.get(key) or []):
                doc = _document(item, f"{p}:{lineno} {key}[{n}]", f"{p.name}:{lineno}")
                if doc.doc_id not in seen:
                    seen.add(doc.doc_id)
                    yield doc
