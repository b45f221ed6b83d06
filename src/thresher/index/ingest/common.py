"""What embedded and server ingestion share: planning, hashing, chunking and writing chunks
(and deletion: checking the ids, the report).

Both :func:`thresher.index.embedded.ingest.ingest_embedded` (embedded generations) and
:func:`thresher.index.server.ingest.ingest_server` (a Chroma server) compare
each document's hash with what the index records, and (re)write only the
chunks of documents that changed, reusing the vector of any indexed text
already stored. The steps that do not depend on the backend live here; each
backend module keeps only how it stores and commits.

What an ingest may delete (the deletion rule, one place for both backends):

* the input must hold at least one document: an input that yields nothing
  (an empty file, a folder of empty files) is an error and changes nothing,
  so it can never empty an index;
* with a *scope* (the paths the user named, :func:`source_scope`), an indexed
  document is deleted only when the input lacks it and the file it was read
  from (its recorded origin) lies under one of those paths: re-indexing one
  file or folder never touches documents that came from elsewhere;
* without a scope (``None``) the documents given are the whole corpus: every
  indexed document not among them is deleted (``thresher index --sync``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from thresher.config import Config
from thresher.corpus.chunking import chunk_document
from thresher.corpus.document import Chunk, Document
from thresher.errors import InputError, UnknownIdError
from thresher.index.embed.embedder import Embedder, batch_size_of
from thresher.index.ingest.progress import IngestProgress
from thresher.index.manifest import DocEntry
from thresher.index.records import chunk_metadata, indexed_text
from thresher.index.store import IngestReport
from thresher.tokens import get_counter

__all__ = [
    "EMBED_BATCH",
    "Plan",
    "Scope",
    "changed_documents",
    "final_entries",
    "final_order",
    "in_scope",
    "relocated_documents",
    "require_documents",
    "source_scope",
    "chunk_documents",
    "chunking_settings",
    "count_changes",
    "delete_ids",
    "checked_deletion",
    "deletion_report",
    "document_hash",
    "plan_documents",
    "stale_chunk_ids",
    "stored_vectors",
    "text_key",
    "utc_now",
    "write_chunks",
]

EMBED_BATCH = 256
"""Most chunks embedded (and written) in one call, unless a caller says otherwise."""

Plan = dict[str, tuple[Document, str]]
"""doc_id -> (document, :func:`document_hash`), in input order."""

Scope = tuple[str, ...] | None
"""Absolute paths whose documents an ingest may delete; None: the input is the whole corpus."""


def source_scope(sources: Iterable[str | os.PathLike[str]] | None) -> Scope:
    """The deletion scope of an ingest that read ``sources`` (None: the whole corpus).

    A folder is its real path (links resolved), a file its name in its folder's
    real path, as the loaders record each document's origin: any spelling of a
    path scopes the same documents.
    """
    if sources is None:
        return None
    return tuple(_scope_path(os.fspath(s)) for s in sources)


def _scope_path(source: str) -> str:
    if os.path.isdir(source) or not os.path.lexists(source):
        return os.path.realpath(source)
    folder, name = os.path.split(os.path.abspath(source))
    return os.path.join(os.path.realpath(folder), name)


def in_scope(origin: str, scope: tuple[str, ...]) -> bool:
    """Whether a document read from ``origin`` lies under one of the ``scope`` paths."""
    if not origin:
        return False
    return any(origin == s or origin.startswith(s.rstrip(os.sep) + os.sep) for s in scope)


def require_documents(plan: Plan, location: object) -> None:
    """Refuse an input that holds no document: it must never empty (or create) an index.

    Raises:
        InputError: ``plan`` is empty.
    """
    if not plan:
        raise InputError(
            f"the input holds no documents (every file was empty or skipped); the index at "
            f"{location} was left unchanged. Name files or records with text"
        )


def document_hash(doc: Document) -> str:
    """sha256 (32 hex digits) of a document's title, text, source and metadata."""
    payload = json.dumps(
        [doc.title, doc.text, doc.source, doc.metadata],
        sort_keys=True, ensure_ascii=False, default=str,
    )  # fmt: skip
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def utc_now() -> str:
    """The current UTC time to the second, as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def text_key(text: str) -> str:
    """sha256 (hex) of an indexed text: the key under which its vector can be reused."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chunking_settings(config: Config) -> dict[str, Any]:
    """The chunking settings an index records (a change re-chunks every document)."""
    return {"max_tokens": config.chunking.max_tokens, "tokenizer": config.chunking.tokenizer}


def plan_documents(documents: Iterable[Document], report: IngestReport) -> Plan:
    """Hash ``documents`` into a plan, checking repeats and summing sanitization.

    Args:
        documents: the whole corpus; an exact repeat of a ``doc_id`` is skipped.
        report: gets ``documents_seen`` and the sanitization counts summed over the plan.

    Returns:
        doc_id -> (document, hash), in input order.

    Raises:
        InputError: a doc_id repeats with different content.
    """
    plan: Plan = {}
    for doc in documents:
        digest = document_hash(doc)
        if doc.doc_id in plan:
            if plan[doc.doc_id][1] != digest:
                raise InputError(
                    f"document id {doc.doc_id!r} appears twice with different content "
                    f"({plan[doc.doc_id][0].source} and {doc.source}); ids must be unique"
                )
            continue
        plan[doc.doc_id] = (doc, digest)
        for kind, count in doc.sanitized.items():
            report.sanitized[kind] = report.sanitized.get(kind, 0) + count
    report.documents_seen = len(plan)
    return plan


def changed_documents(
    plan: Plan, known: Mapping[str, DocEntry], rechunk_all: bool, scope: Scope = None
) -> tuple[list[str], list[str]]:
    """Which documents to (re)write and which to delete (see the module's deletion rule).

    Args:
        plan: the input from :func:`plan_documents`.
        known: the documents the index records.
        rechunk_all: the chunking settings changed, so every document is rewritten.
        scope: paths whose missing documents are deleted; None: every known document
            not in ``plan`` is deleted.

    Returns:
        (changed: new or different documents in plan order, deleted: known ids not in
        plan, within the scope).

    Raises:
        InputError: the chunking settings changed but the input leaves indexed
            documents out (they could not be re-chunked: the index would mix two
            chunkings).
    """
    changed = [
        d for d in plan if d not in known or rechunk_all or known[d].content_hash != plan[d][1]
    ]
    deleted = [
        d for d in known if d not in plan and (scope is None or in_scope(known[d].origin, scope))
    ]
    kept = len(known) - len(deleted) - sum(1 for d in plan if d in known)
    if rechunk_all and kept:
        raise InputError(
            f"the chunking settings differ from the index's, and {kept} indexed documents "
            "are not in this input, so they could not be re-chunked; name every input "
            "(with --sync), keep the index's chunking settings, or build a new index"
        )
    return changed, deleted


def relocated_documents(
    plan: Plan, known: Mapping[str, DocEntry], changed: Sequence[str]
) -> list[str]:
    """Unchanged documents now read from another file than the index records (origin only)."""
    skip = set(changed)
    return [
        d
        for d, (doc, _) in plan.items()
        if d in known and d not in skip and doc.origin and doc.origin != known[d].origin
    ]


def final_order(
    plan: Plan, known: Mapping[str, DocEntry], deleted: Sequence[str], scope: Scope
) -> list[str]:
    """The documents the index holds after the run, in corpus order.

    Without a scope the input is the corpus, in input order. With one, documents
    keep their place and new ones follow in input order.
    """
    if scope is None:
        return list(plan)
    gone = set(deleted)
    return [d for d in known if d not in gone] + [d for d in plan if d not in known]


def final_entries(
    plan: Plan,
    known: Mapping[str, DocEntry],
    fresh: Mapping[str, DocEntry],
    order: Sequence[str],
) -> dict[str, DocEntry]:
    """Every document's manifest entry after the run, in ``order``.

    ``fresh`` holds the entries of documents (re)chunked now; the others keep
    their entry, with the origin updated when the input read them from elsewhere.
    """
    out: dict[str, DocEntry] = {}
    for d in order:
        if d in fresh:
            out[d] = fresh[d]
            continue
        entry = known[d]
        origin = plan[d][0].origin if d in plan else ""
        out[d] = dataclasses.replace(entry, origin=origin) if origin else entry
    return out


def count_changes(
    report: IngestReport,
    plan: Plan,
    known: Mapping[str, DocEntry],
    changed: Sequence[str],
    deleted: Sequence[str],
) -> None:
    """Set the report's added / updated / deleted / unchanged / kept document counts."""
    report.documents_added = sum(1 for d in changed if d not in known)
    report.documents_updated = len(changed) - report.documents_added
    report.documents_deleted = len(deleted)
    report.documents_unchanged = len(plan) - len(changed)
    gone = set(deleted)
    report.documents_kept = sum(1 for d in known if d not in plan and d not in gone)


def stale_chunk_ids(known: Mapping[str, DocEntry], doc_ids: Iterable[str]) -> list[str]:
    """The recorded chunk ids of those ``doc_ids`` the index knows, in order."""
    return [c for d in doc_ids if d in known for c in known[d].chunk_ids]


def chunk_documents(
    plan: Plan, doc_ids: Iterable[str], config: Config, now: str
) -> tuple[list[Chunk], dict[str, DocEntry]]:
    """Chunk the planned documents ``doc_ids``, stamping each chunk ingested at ``now``.

    Returns:
        (every chunk in order, doc_id -> its new manifest entry).
    """
    counter = get_counter(config.chunking.tokenizer)
    entries: dict[str, DocEntry] = {}
    fresh: list[Chunk] = []
    for doc_id in doc_ids:
        doc, digest = plan[doc_id]
        chunks = [
            dataclasses.replace(c, ingested_at=now)
            for c in chunk_document(doc, config.chunking.max_tokens, counter)
        ]
        fresh.extend(chunks)
        entries[doc_id] = DocEntry(
            digest, [c.chunk_id for c in chunks], now, dict(doc.sanitized), doc.origin
        )
    return fresh, entries


def stored_vectors(collection: Any, ids: Sequence[str], batch: int) -> dict[str, np.ndarray]:
    """Vectors stored for these chunk ids, keyed by :func:`text_key` of their indexed text.

    Args:
        collection: a chromadb collection of chunks; ids it lacks are ignored.
        ids: chunk ids to read.
        batch: most ids per read.
    """
    out: dict[str, np.ndarray] = {}
    for start in range(0, len(ids), batch):
        got = collection.get(
            ids=list(ids[start : start + batch]), include=["embeddings", "documents", "metadatas"]
        )
        for vector, text, meta in zip(
            got["embeddings"], got["documents"], got["metadatas"], strict=True
        ):
            key = text_key(indexed_text(str(meta.get("title", "")), text or ""))
            out[key] = np.asarray(vector, dtype=np.float32)
    return out


def write_chunks(
    collection: Any,
    chunks: Sequence[Chunk],
    embedder: Embedder,
    reuse: Mapping[str, np.ndarray],
    batch: int,
    *,
    upsert: bool,
    progress: bool | IngestProgress,
    embed_batch: int = EMBED_BATCH,
) -> int:
    """Embed ``chunks`` (unless an identical text's vector is in ``reuse``) and write them.

    Args:
        collection: the chromadb collection of chunks.
        chunks: the chunks to write.
        embedder: embeds the indexed texts with no reusable vector.
        reuse: :func:`text_key` -> vector already known.
        batch: the collection's most records per write.
        upsert: ``collection.upsert`` (True) or ``collection.add`` (False).
        progress: show progress (:class:`~thresher.index.ingest.progress.IngestProgress`:
            a bar on a terminal, a line every few seconds otherwise), or the caller's
            progress to advance (left open: it spans several calls).
        embed_batch: most chunks written per call (and at most ``batch``).

    Returns:
        How many texts were embedded.
    """
    step = min(embed_batch, batch)
    write = collection.upsert if upsert else collection.add
    embedded = 0
    if isinstance(progress, IngestProgress):
        own: contextlib.AbstractContextManager[IngestProgress] = contextlib.nullcontext(progress)
    else:
        own = IngestProgress(len(chunks), len({c.doc_id for c in chunks}), enabled=progress)
    with own as shown:
        for start in range(0, len(chunks), step):
            part = chunks[start : start + step]
            texts = [indexed_text(c.title, c.text) for c in part]
            keys = [text_key(t) for t in texts]
            missing = [i for i, k in enumerate(keys) if k not in reuse]
            vectors = np.zeros((len(part), embedder.dimension), dtype=np.float32)
            for group in _length_groups(missing, texts, batch_size_of(embedder)):
                vectors[group] = embedder.embed([texts[i] for i in group])
                shown.advance(len(group))
            embedded += len(missing)
            for i, key in enumerate(keys):
                if key in reuse:
                    vectors[i] = reuse[key]
            write(
                ids=[c.chunk_id for c in part],
                documents=[c.text for c in part],
                metadatas=[chunk_metadata(c) for c in part],
                embeddings=vectors,
            )
            ends = sum(1 for i, c in enumerate(part) if _last_of_document(chunks, start + i))
            shown.advance(len(part) - len(missing), ends)
    return embedded


def _length_groups(rows: Sequence[int], texts: Sequence[str], size: int) -> list[list[int]]:
    """``rows`` sorted by text length, cut in groups of ``size``: one embedding call each
    (little padding, and progress moves after each)."""
    ordered = sorted(rows, key=lambda i: len(texts[i]))
    size = max(1, size)
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def _last_of_document(chunks: Sequence[Chunk], i: int) -> bool:
    return i + 1 == len(chunks) or chunks[i + 1].doc_id != chunks[i].doc_id


def delete_ids(collection: Any, ids: Sequence[str], batch: int) -> None:
    """Delete ``ids`` from ``collection``, at most ``batch`` per call."""
    for start in range(0, len(ids), batch):
        collection.delete(ids=list(ids[start : start + batch]))


def checked_deletion(doc_ids: Sequence[str], known: Any, location: object) -> list[str]:
    """Documents to delete: ``doc_ids`` without repeats (either backend).

    Raises:
        UnknownIdError: an id is not among ``known`` (nothing is deleted).
        InputError: no id given, or every document named.
    """
    wanted = list(dict.fromkeys(doc_ids))
    if not wanted:
        raise InputError("name at least one document id to delete")
    unknown = [d for d in wanted if d not in known]
    if unknown:
        shown = ", ".join(repr(d) for d in unknown[:10])
        raise UnknownIdError(
            f"not in the index at {location}: {shown}; nothing was deleted "
            "(`thresher docs list` shows the ids)",
            unknown,
        )
    if len(wanted) >= len(known):
        raise InputError(
            f"deleting {len(wanted)} documents would leave the index at {location} empty; "
            "remove the index itself instead"
        )
    return wanted


def deletion_report(known: Any, gone: Sequence[str], seconds: float = 0.0) -> IngestReport:
    """What a deletion of ``gone`` from the documents ``known`` reports."""
    report = IngestReport(documents_deleted=len(gone), documents_kept=len(known) - len(gone))
    report.chunks_deleted = len(stale_chunk_ids(known, gone))
    report.seconds = seconds
    return report
