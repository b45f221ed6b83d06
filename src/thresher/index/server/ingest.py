"""Build or update an index on a Chroma server: incremental and resumable.

Same contract as the embedded :func:`thresher.index.embedded.ingest.ingest_embedded`: documents
are compared by hash with the manifest collection (``NAME__manifest``, see
:mod:`thresher.index.server.layout`) and only what changed is added, replaced
or deleted, by the deletion rule of :mod:`thresher.index.ingest.common` (all
documents missing from the input, or only those read from under the
``sources`` named; an empty input is refused); running twice on the same input
writes nothing.

What a server guarantees is weaker than the embedded generations (there is no
atomic switch between two whole indexes), and is this:

1. the header is marked ``state=writing`` first;
2. chunks are written with ``upsert`` (ids are ``doc_id#position``, so writing
   them again is harmless), then chunks no longer wanted are deleted;
3. a document's manifest record is written only after its chunks are;
4. the header's version marker (and ``state=ready``) is written last.

A new chunk collection gets a sparse BM25 key (:data:`~thresher.index.server.search.SPARSE_KEY`,
for server-side hybrid search) when the server accepts a sparse index (distributed
Chroma, Chroma Cloud) and this machine can compute the vectors; ``chroma run``
refuses one ("Sparse vector indexing is not enabled in local"), and the collection
is made without: hybrid search is then fused client-side.

A long run commits as it goes: the changed documents are written in parts of
about :data:`COMMIT_CHUNKS` new chunks, each part's manifest records right after
its chunks. A run killed or interrupted at any point (a first ingest too)
leaves the documents of its committed parts recorded, and the next run starts
from there: those are unchanged, the others are redone (reusing any vectors
already on the server, so nothing is embedded twice). Because the header still
says ``writing`` it also checks every chunk id against the manifest and deletes
leftovers. The header keeps the index's chunking settings until the run ends,
so a stopped re-chunking is redone whole by the next run.

Readers (:class:`~thresher.index.server.store.ServerStore`) never switch to a state
marked ``writing``, but one opened during a run, or holding chunks that a run
deletes, can see a mix of old and new. One ingest at a time per
collection: nothing on the server stops a second writer.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from thresher._version import __version__
from thresher.config import Config, RetrievalConfig
from thresher.corpus.document import Chunk, Document
from thresher.errors import InputError
from thresher.index.embed.embedder import (
    Embedder,
    check_built_with,
    embedder_for_update,
    get_embedder,
)
from thresher.index.ingest import common
from thresher.index.ingest import roots as ingest_roots
from thresher.index.ingest.progress import IngestProgress
from thresher.index.manifest import SERVER_FORMAT, DocEntry
from thresher.index.server import layout as sl
from thresher.index.server.search import SPARSE_KEY, sparse_schema, sparse_unavailable
from thresher.index.store import IngestReport

__all__ = ["ingest_server"]

_EMBED_BATCH = common.EMBED_BATCH
_PLACEHOLDER = [0.0]
COMMIT_CHUNKS = 512
"""New chunks written between two manifest commits of a long ingest (at least one document)."""


def ingest_server(
    documents: Iterable[Document],
    location: str,
    config: Config | None = None,
    embedder: Embedder | None = None,
    progress: bool = True,
    *,
    sources: Iterable[str] | None = None,
) -> IngestReport:
    """Make the server index at ``location`` hold ``documents``.

    Args:
        documents: the whole corpus (each ``doc_id`` once; an exact repeat is skipped).
        location: ``http(s)://host:port[/collection]`` (collection ``chunks`` by default).
        config: chunking and embedder settings (defaults: ``Config()``).
        embedder: overrides ``config.retrieval.embedder``.
        progress: show a progress bar while embedding (only on a terminal).
        sources: the paths ``documents`` were read from, scoping deletion; None:
            ``documents`` are the whole corpus.

    Returns:
        What changed, with sanitization counts summed over the documents seen.

    Raises:
        BackendUnavailableError: no server answers at ``location``.
        InputError: the input holds no document, a doc_id repeats with different
            content, or the collection holds records that thresher did not write.
        ConfigError: the index was built with another embedder.
        IndexVersionError: the index was written by a newer thresher.
    """
    started = time.perf_counter()
    config = config or Config()
    where = sl.parse_location(location)
    client = sl.connect(where)
    scope = common.source_scope(sources)
    try:
        report = _ingest(client, where, documents, config, embedder, progress, scope)
    except sl.transport_errors() as exc:
        raise sl.unavailable(where, exc) from exc
    finally:
        client.close()
    report.seconds = round(time.perf_counter() - started, 3)
    return report


@dataclass(slots=True)
class _Changes:
    """What a run has to do: documents to (re)write, delete and re-record (moved in the
    corpus order, or read from another file), the corpus order after the run, and
    whether it completes a stopped run (header still ``writing``)."""

    changed: list[str]
    deleted: list[str]
    moved: list[str]
    order: list[str]
    resume: bool

    def nothing(self) -> bool:
        """True when the index already holds the corpus, in order, and is not mid-run."""
        return not (self.resume or self.changed or self.deleted or self.moved)


def _ingest(
    client: Any,
    where: sl.ServerLocation,
    documents: Iterable[Document],
    config: Config,
    embedder: Embedder | None,
    progress: bool,
    scope: common.Scope,
) -> IngestReport:
    """One ingest run, in the order the module docstring guarantees."""
    report = IngestReport()
    collection, header = _existing_index(client, where)
    emb = embedder or get_embedder(
        embedder_for_update(
            config.retrieval.embedder,
            RetrievalConfig().embedder,
            header.embedder if header is not None else None,
        )
    )
    if header is not None:
        check_built_with(
            emb,
            header.embedder,
            header.dimension,
            where.url,
            instead="index into another collection",
        )
    manifest = _manifest(client, where)
    entries = sl.read_entries(manifest) if manifest is not None else {}
    known = {d: e for d, (e, _) in entries.items()}
    roots: ingest_roots.Roots = {}
    if header is not None:
        roots = dict(header.roots) if header.roots is not None else {}
        if header.roots is None:
            roots = ingest_roots.legacy_roots(known, where.url)
    plan = common.plan_documents(ingest_roots.label_documents(documents, roots, known), report)
    common.require_documents(plan, where.url)  # before anything is created on the server
    ingest_roots.check_ids(plan, known)
    if manifest is None:
        manifest = client.get_or_create_collection(
            sl.manifest_name(where.collection), embedding_function=None
        )
    chunking = common.chunking_settings(config)
    todo = _changes(plan, entries, header, chunking, scope)
    if header is not None and todo.nothing():
        common.count_changes(report, plan, known, [], [])
        return report

    now = common.utc_now()
    header = _writing_header(header, emb, chunking, now)
    header.roots = roots
    collection = _mark_writing(client, where, collection, header)
    batch = client.get_max_batch_size()
    if todo.resume:  # an earlier run stopped midway: redo documents whose chunks are not all there
        todo.changed += _incomplete(collection, plan, known, todo.changed)
    common.count_changes(report, plan, known, todo.changed, todo.deleted)
    fresh, new_entries = common.chunk_documents(plan, todo.changed, config, now)
    _write_parts(collection, manifest, known, todo, fresh, new_entries, emb, batch, progress)
    report.chunks_added = len(fresh)
    report.chunks_deleted = len(common.stale_chunk_ids(known, todo.changed + todo.deleted))
    final = _write_manifest(manifest, plan, known, new_entries, todo, batch)
    if todo.resume:
        _delete_leftovers(collection, final, batch)
    _mark_ready(collection, header, final, now, chunking)
    return report


def _manifest(client: Any, where: sl.ServerLocation) -> Any | None:
    """The manifest collection, if there is one (none is created here)."""
    from chromadb.errors import NotFoundError

    try:
        return client.get_collection(sl.manifest_name(where.collection), embedding_function=None)
    except NotFoundError:
        return None


def _existing_index(
    client: Any, where: sl.ServerLocation
) -> tuple[Any | None, sl.ServerHeader | None]:
    """The chunk collection and its header, if any; checks they are thresher's.

    Raises:
        InputError: the collection holds records thresher did not write.
    """
    from chromadb.errors import NotFoundError

    try:
        collection = client.get_collection(where.collection, embedding_function=None)
        header = sl.ServerHeader.from_metadata(collection.metadata, where.url)
    except NotFoundError:
        return None, None
    if header is None and collection.count() > 0:
        raise InputError(
            f"collection {where.collection!r} at {where.url} holds records thresher did not "
            "write; index into another collection (http://HOST:PORT/NAME)"
        )
    return collection, header


def _changes(
    plan: common.Plan,
    entries: dict[str, tuple[DocEntry, int]],
    header: sl.ServerHeader | None,
    chunking: dict[str, Any],
    scope: common.Scope,
) -> _Changes:
    """Compare the input with the manifest (and the header's chunking and state)."""
    known = {d: e for d, (e, _) in entries.items()}
    rechunk_all = header is not None and header.chunking != chunking
    changed, deleted = common.changed_documents(plan, known, rechunk_all, scope)
    order = common.final_order(plan, known, deleted, scope)
    moved = [d for i, d in enumerate(order) if d in entries and entries[d][1] != i]
    moved += [d for d in common.relocated_documents(plan, known, changed) if d not in moved]
    resume = header is not None and header.state == "writing"
    return _Changes(changed, deleted, moved, order, resume)


def _writing_header(
    header: sl.ServerHeader | None, emb: Embedder, chunking: dict[str, Any], now: str
) -> sl.ServerHeader:
    """The header for this run, marked ``writing`` (a new one for a new index).

    An existing index keeps its chunking settings until :func:`_mark_ready`: were a
    re-chunking stopped midway, the next run sees it as one still to do.
    """
    if header is None:
        header = sl.ServerHeader(SERVER_FORMAT, emb.name, emb.dimension, chunking, created_at=now)
    header.state, header.thresher_version = "writing", __version__
    return header


def _mark_writing(
    client: Any, where: sl.ServerLocation, collection: Any | None, header: sl.ServerHeader
) -> Any:
    """Write the ``writing`` header first (creating the chunk collection if needed)."""
    if collection is None:
        return _create_chunks(client, where, header)
    collection.modify(metadata=header.to_metadata())
    return collection


def _create_chunks(client: Any, where: sl.ServerLocation, header: sl.ServerHeader) -> Any:
    """The chunk collection in cosine space, with the sparse BM25 key when the server
    takes a sparse index (``header.sparse_key`` says whether it has one)."""
    from chromadb.errors import ChromaError

    if sparse_unavailable() is None:
        header.sparse_key = SPARSE_KEY
        try:
            return client.create_collection(
                where.collection,
                schema=sparse_schema(),
                metadata=header.to_metadata(),
                embedding_function=None,
            )
        except ChromaError:  # chroma run: "Sparse vector indexing is not enabled in local"
            pass
    header.sparse_key = ""
    return client.create_collection(
        where.collection,
        metadata={"hnsw:space": "cosine", **header.to_metadata()},
        embedding_function=None,
    )


def _present_ids(collection: Any) -> set[str]:
    """Every chunk id the collection holds."""
    return {cid for got in sl.pages(collection, []) for cid in got["ids"]}


def _incomplete(
    collection: Any,
    plan: common.Plan,
    known: dict[str, DocEntry],
    changed: list[str],
) -> list[str]:
    """Documents not yet in ``changed`` whose recorded chunks are not all on the server."""
    present = _present_ids(collection)
    return [d for d in plan if d not in changed and not set(known[d].chunk_ids) <= present]


def commit_parts(chunk_counts: list[int]) -> list[tuple[int, int]]:
    """Where a long server ingest commits: ``(start, stop)`` slices of the changed
    documents, each closing once it holds :data:`COMMIT_CHUNKS` new chunks (no change
    still makes one part)."""
    parts: list[tuple[int, int]] = []
    start, pending = 0, 0
    for i, count in enumerate(chunk_counts):
        pending += count
        if pending >= COMMIT_CHUNKS and i + 1 < len(chunk_counts):
            parts.append((start, i + 1))
            start, pending = i + 1, 0
    parts.append((start, len(chunk_counts)))
    return parts


def _write_parts(
    collection: Any,
    manifest: Any,
    known: dict[str, DocEntry],
    todo: _Changes,
    fresh: list[Chunk],
    new_entries: dict[str, DocEntry],
    emb: Embedder,
    batch: int,
    progress: bool,
) -> None:
    """Write the changed documents part by part (:func:`commit_parts`): each part's
    chunks are upserted (reusing stored vectors), its chunks no longer wanted deleted,
    then its manifest records written; the chunks of deleted documents go last."""
    order = {d: i for i, d in enumerate(todo.order)}
    gone = common.stale_chunk_ids(known, todo.deleted)
    reuse_gone = common.stored_vectors(collection, gone, batch)  # a renamed file keeps its vectors
    counts = [len(new_entries[d].chunk_ids) for d in todo.changed]
    first = 0
    with IngestProgress(len(fresh), len(todo.changed), enabled=progress) as shown:
        for start, stop in commit_parts(counts):
            part = todo.changed[start:stop]
            chunks = fresh[first : first + sum(counts[start:stop])]
            first += len(chunks)
            stale = common.stale_chunk_ids(known, part)
            wanted = {c.chunk_id: None for c in chunks}
            reusable = reuse_gone | common.stored_vectors(
                collection, list(dict.fromkeys(stale + list(wanted))), batch
            )
            common.write_chunks(
                collection,
                chunks,
                emb,
                reusable,
                batch,
                upsert=True,
                progress=shown,
                embed_batch=_EMBED_BATCH,
            )
            common.delete_ids(collection, [c for c in stale if c not in wanted], batch)
            _record(manifest, {d: new_entries[d] for d in part}, order, batch)
    common.delete_ids(collection, gone, batch)


def _record(manifest: Any, entries: dict[str, DocEntry], order: dict[str, int], batch: int) -> None:
    """Upsert the manifest records of ``entries`` with their place in the corpus order."""
    ids = list(entries)
    for start in range(0, len(ids), batch):
        part = ids[start : start + batch]
        manifest.upsert(
            ids=part,
            embeddings=[_PLACEHOLDER] * len(part),
            metadatas=[sl.entry_metadata(entries[d], order[d]) for d in part],
        )


def _write_manifest(
    manifest: Any,
    plan: common.Plan,
    known: dict[str, DocEntry],
    new_entries: dict[str, DocEntry],
    todo: _Changes,
    batch: int,
) -> dict[str, DocEntry]:
    """Record moved documents (changed ones are recorded with their chunks, by
    :func:`_write_parts`), drop deleted ones; returns every document's entry in
    corpus order."""
    final = common.final_entries(plan, known, new_entries, todo.order)
    order = {d: i for i, d in enumerate(todo.order)}
    changed = set(todo.changed)
    _record(manifest, {d: final[d] for d in todo.moved if d not in changed}, order, batch)
    common.delete_ids(manifest, todo.deleted, batch)
    return final


def _delete_leftovers(collection: Any, final: dict[str, DocEntry], batch: int) -> None:
    """Delete chunks of a stopped run that no document claims."""
    keep = {c for e in final.values() for c in e.chunk_ids}
    common.delete_ids(collection, sorted(_present_ids(collection) - keep), batch)


def _mark_ready(
    collection: Any,
    header: sl.ServerHeader,
    final: dict[str, DocEntry],
    now: str,
    chunking: dict[str, Any] | None = None,
) -> None:
    """Write the header last: ``ready``, a new version marker, the counts (and the
    chunking settings the chunks now follow, when given)."""
    header.state, header.version, header.updated_at = "ready", uuid.uuid4().hex, now
    if chunking is not None:
        header.chunking = chunking
    header.documents = len(final)
    header.chunks = sum(len(e.chunk_ids) for e in final.values())
    collection.modify(metadata=header.to_metadata())
