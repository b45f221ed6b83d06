"""Build or update an index on a Chroma server: incremental and resumable.

Same contract as the embedded :func:`thresher.index.ingest.ingest`: the
documents given are the whole corpus; documents are compared by hash with the
manifest collection (``NAME__manifest``, see :mod:`thresher.index.server_layout`)
and only what changed is added, replaced or deleted; running twice on the same
input writes nothing.

What a server guarantees is weaker than the embedded generations (there is no
atomic switch between two whole indexes), and is this:

1. the header is marked ``state=writing`` first;
2. chunks are written with ``upsert`` (ids are ``doc_id#position``, so writing
   them again is harmless), then chunks no longer wanted are deleted;
3. a document's manifest record is written only after its chunks are;
4. the header's version marker (and ``state=ready``) is written last.

A run killed at any point leaves documents whose manifest record is stale; the
next run sees them as changed and redoes them (reusing any vectors already on
the server, so nothing is embedded twice), and because the header still says
``writing`` it also checks every chunk id against the manifest and deletes
leftovers. Readers (:class:`~thresher.index.server.ServerStore`) never switch
to a state marked ``writing``, but one opened during a run, or holding chunks
that a run deletes, can see a mix of old and new. One ingest at a time per
collection: nothing on the server stops a second writer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from thresher import __version__
from thresher.config import Config
from thresher.corpus.chunking import chunk_document
from thresher.corpus.document import Chunk, Document
from thresher.errors import ConfigError, InputError
from thresher.index import layout
from thresher.index import server_layout as sl
from thresher.index.embedder import Embedder, get_embedder
from thresher.index.ingest import document_hash
from thresher.index.records import chunk_metadata, indexed_text
from thresher.index.store import IngestReport
from thresher.tokens import get_counter

__all__ = ["ingest_server"]

_EMBED_BATCH = 256
_PLACEHOLDER = [0.0]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ingest_server(
    documents: Iterable[Document],
    location: str,
    config: Config | None = None,
    embedder: Embedder | None = None,
    progress: bool = True,
) -> IngestReport:
    """Make the server index at ``location`` hold exactly ``documents``.

    Args:
        documents: the whole corpus (each ``doc_id`` once; an exact repeat is skipped).
        location: ``http(s)://host:port[/collection]`` (collection ``chunks`` by default).
        config: chunking and embedder settings (defaults: ``Config()``).
        embedder: overrides ``config.retrieval.embedder``.
        progress: show a progress bar while embedding (only on a terminal).

    Returns:
        What changed, with sanitization counts summed over the documents seen.

    Raises:
        BackendUnavailableError: no server answers at ``location``.
        InputError: a doc_id repeats with different content, or the collection
            holds records that thresher did not write.
        ConfigError: the index was built with another embedder.
        IndexVersionError: the index was written by a newer thresher.
    """
    started = time.perf_counter()
    config = config or Config()
    where = sl.parse_location(location)
    client = sl.connect(where)
    try:
        report = _ingest(client, where, documents, config, embedder, progress)
    except sl.transport_errors() as exc:
        raise sl.unavailable(where, exc) from exc
    finally:
        client.close()
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _plan(documents: Iterable[Document], report: IngestReport) -> dict[str, tuple[Document, str]]:
    """doc_id -> (document, hash) in input order; repeats checked, sanitization summed."""
    plan: dict[str, tuple[Document, str]] = {}
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


def _ingest(
    client: Any,
    where: sl.ServerLocation,
    documents: Iterable[Document],
    config: Config,
    embedder: Embedder | None,
    progress: bool,
) -> IngestReport:
    from chromadb.errors import NotFoundError

    report = IngestReport()
    plan = _plan(documents, report)
    emb = embedder or get_embedder(config.retrieval.embedder)
    try:
        collection = client.get_collection(where.collection, embedding_function=None)
        header = sl.ServerHeader.from_metadata(collection.metadata, where.url)
    except NotFoundError:
        collection, header = None, None
    if collection is not None and header is None and collection.count() > 0:
        raise InputError(
            f"collection {where.collection!r} at {where.url} holds records thresher did not "
            "write; index into another collection (http://HOST:PORT/NAME)"
        )
    if header is not None and (header.embedder != emb.name or header.dimension != emb.dimension):
        raise ConfigError(
            f"index at {where.url} was built with embedder {header.embedder} "
            f"({header.dimension} dims) but this run uses {emb.name} ({emb.dimension} dims); "
            "use the same embedder or index into another collection"
        )
    manifest = client.get_or_create_collection(
        sl.manifest_name(where.collection), embedding_function=None
    )
    entries = sl.read_entries(manifest)
    known = {d: e for d, (e, _) in entries.items()}
    chunking = {"max_tokens": config.chunking.max_tokens, "tokenizer": config.chunking.tokenizer}
    resume = header is not None and header.state == "writing"
    rechunk_all = header is not None and header.chunking != chunking
    changed = [
        d for d in plan if d not in known or rechunk_all or known[d].content_hash != plan[d][1]
    ]
    deleted = [d for d in known if d not in plan]
    moved = [d for i, d in enumerate(plan) if d in entries and entries[d][1] != i]
    if header is not None and not resume and not changed and not deleted and not moved:
        report.documents_unchanged = len(plan)
        return report

    now = _now()
    if header is None:
        header = sl.ServerHeader(
            layout.FORMAT_VERSION, emb.name, emb.dimension, chunking, created_at=now
        )
    header.state, header.chunking, header.thresher_version = "writing", chunking, __version__
    if collection is None:
        collection = client.create_collection(
            where.collection,
            metadata={"hnsw:space": "cosine", **header.to_metadata()},
            embedding_function=None,
        )
    else:
        collection.modify(metadata=header.to_metadata())
    batch = client.get_max_batch_size()
    if resume:  # an earlier run stopped midway: redo documents whose chunks are not all there
        present = {cid for got in sl.pages(collection, []) for cid in got["ids"]}
        changed += [d for d in plan if d not in changed and not set(known[d].chunk_ids) <= present]
    report.documents_added = sum(1 for d in changed if d not in known)
    report.documents_updated = len(changed) - report.documents_added
    report.documents_deleted = len(deleted)
    report.documents_unchanged = len(plan) - len(changed)

    counter = get_counter(config.chunking.tokenizer)
    new_entries: dict[str, layout.DocEntry] = {}
    fresh: list[Chunk] = []
    for doc_id in changed:
        doc, digest = plan[doc_id]
        chunks = [
            dataclasses.replace(c, ingested_at=now)
            for c in chunk_document(doc, config.chunking.max_tokens, counter)
        ]
        fresh.extend(chunks)
        new_entries[doc_id] = layout.DocEntry(
            digest, [c.chunk_id for c in chunks], now, dict(doc.sanitized)
        )
    stale = [c for d in changed + deleted if d in known for c in known[d].chunk_ids]
    wanted = {c.chunk_id: None for c in fresh}
    reusable = _vectors(collection, list(dict.fromkeys(stale + list(wanted))), batch)
    _upsert_chunks(collection, fresh, reusable, emb, batch, progress)
    _delete(collection, [c for c in stale if c not in wanted], batch)
    report.chunks_added, report.chunks_deleted = len(fresh), len(stale)

    order = {d: i for i, d in enumerate(plan)}
    rewrite = list(dict.fromkeys(changed + moved))
    for start in range(0, len(rewrite), batch):
        part = rewrite[start : start + batch]
        manifest.upsert(
            ids=part,
            embeddings=[_PLACEHOLDER] * len(part),
            metadatas=[sl.entry_metadata(new_entries.get(d) or known[d], order[d]) for d in part],
        )
    _delete(manifest, deleted, batch)

    final = {d: new_entries.get(d) or known[d] for d in plan}
    if resume:  # leftovers of the stopped run that no document claims
        keep = {c for e in final.values() for c in e.chunk_ids}
        present = {cid for got in sl.pages(collection, []) for cid in got["ids"]}
        _delete(collection, sorted(present - keep), batch)
    header.state, header.version, header.updated_at = "ready", uuid.uuid4().hex, now
    header.documents = len(final)
    header.chunks = sum(len(e.chunk_ids) for e in final.values())
    collection.modify(metadata=header.to_metadata())
    return report


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _vectors(collection: Any, ids: Sequence[str], batch: int) -> dict[str, np.ndarray]:
    """Vectors already on the server for these ids, keyed by the hash of their indexed text."""
    out: dict[str, np.ndarray] = {}
    for start in range(0, len(ids), batch):
        got = collection.get(
            ids=list(ids[start : start + batch]), include=["embeddings", "documents", "metadatas"]
        )
        for vector, text, meta in zip(
            got["embeddings"], got["documents"], got["metadatas"], strict=True
        ):
            key = _text_key(indexed_text(str(meta.get("title", "")), text or ""))
            out[key] = np.asarray(vector, dtype=np.float32)
    return out


def _upsert_chunks(
    collection: Any,
    chunks: list[Chunk],
    reusable: dict[str, np.ndarray],
    emb: Embedder,
    batch: int,
    progress: bool,
) -> None:
    """Embed (unless the same text's vector is already known) and upsert ``chunks``."""
    from tqdm import tqdm

    step = min(_EMBED_BATCH, batch)
    show = progress and sys.stderr.isatty()
    with tqdm(total=len(chunks), unit="chunk", desc="indexing", disable=not show) as bar:
        for start in range(0, len(chunks), step):
            part = chunks[start : start + step]
            texts = [indexed_text(c.title, c.text) for c in part]
            keys = [_text_key(t) for t in texts]
            missing = [i for i, k in enumerate(keys) if k not in reusable]
            vectors = np.zeros((len(part), emb.dimension), dtype=np.float32)
            if missing:
                vectors[missing] = emb.embed([texts[i] for i in missing])
            for i, key in enumerate(keys):
                if key in reusable:
                    vectors[i] = reusable[key]
            collection.upsert(
                ids=[c.chunk_id for c in part],
                documents=[c.text for c in part],
                metadatas=[chunk_metadata(c) for c in part],
                embeddings=vectors,
            )
            bar.update(len(part))


def _delete(collection: Any, ids: Sequence[str], batch: int) -> None:
    for start in range(0, len(ids), batch):
        collection.delete(ids=list(ids[start : start + batch]))
