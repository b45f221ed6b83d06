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

import time
import uuid
from collections.abc import Iterable
from typing import Any

from thresher import __version__
from thresher.config import Config
from thresher.corpus.document import Document
from thresher.errors import ConfigError, InputError
from thresher.index import ingest_common as common
from thresher.index import layout
from thresher.index import server_layout as sl
from thresher.index.embedder import Embedder, get_embedder
from thresher.index.store import IngestReport

__all__ = ["ingest_server"]

_EMBED_BATCH = common.EMBED_BATCH
_PLACEHOLDER = [0.0]


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
    plan = common.plan_documents(documents, report)
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
    chunking = common.chunking_settings(config)
    resume = header is not None and header.state == "writing"
    rechunk_all = header is not None and header.chunking != chunking
    changed, deleted = common.changed_documents(plan, known, rechunk_all)
    moved = [d for i, d in enumerate(plan) if d in entries and entries[d][1] != i]
    if header is not None and not resume and not changed and not deleted and not moved:
        report.documents_unchanged = len(plan)
        return report

    now = common.utc_now()
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
    common.count_changes(report, plan, known, changed, deleted)

    fresh, new_entries = common.chunk_documents(plan, changed, config, now)
    stale = common.stale_chunk_ids(known, changed + deleted)
    wanted = {c.chunk_id: None for c in fresh}
    reusable = common.stored_vectors(collection, list(dict.fromkeys(stale + list(wanted))), batch)
    common.write_chunks(
        collection,
        fresh,
        emb,
        reusable,
        batch,
        upsert=True,
        progress=progress,
        embed_batch=_EMBED_BATCH,
    )
    common.delete_ids(collection, [c for c in stale if c not in wanted], batch)
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
    common.delete_ids(manifest, deleted, batch)

    final = {d: new_entries.get(d) or known[d] for d in plan}
    if resume:  # leftovers of the stopped run that no document claims
        keep = {c for e in final.values() for c in e.chunk_ids}
        present = {cid for got in sl.pages(collection, []) for cid in got["ids"]}
        common.delete_ids(collection, sorted(present - keep), batch)
    header.state, header.version, header.updated_at = "ready", uuid.uuid4().hex, now
    header.documents = len(final)
    header.chunks = sum(len(e.chunk_ids) for e in final.values())
    collection.modify(metadata=header.to_metadata())
    return report
