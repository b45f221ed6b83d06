"""Build or update an embedded index from documents: incremental and atomic.

:func:`ingest_embedded` is the embedded backend's ingestion, reached through
:func:`thresher.index.backends.ingest` (which picks the backend from the
location; this module does not import the registry back).

Each document's hash (title, text, source, metadata) is compared with the
manifest of the live generation: new documents are added, changed ones
re-chunked and replaced, unchanged ones left alone (never re-embedded), and
absent ones deleted by the rule of :mod:`thresher.index.ingest.common`: all of
them when the documents given are the whole corpus (``sources=None``), else
only those read from under the ``sources`` named; an input with no document
is refused. Running twice on the same input changes nothing and writes nothing.

One ingest at a time per folder: a second one waits for the first (and says
so, as a warning on the ``thresher.index.embedded.ingest`` logger). Changes go to a copy
of the live generation, which becomes live only once it
is complete and fsynced (see :mod:`thresher.index.embedded.layout`): a process killed at
any point leaves the previous index readable and whole. A long run commits as
it goes (:func:`commit_parts`): killed or interrupted, the next run starts from
its last commit (documents already committed are unchanged, not re-embedded).
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from thresher._version import __version__
from thresher.config import Config, RetrievalConfig
from thresher.corpus.document import Chunk, Document
from thresher.errors import IndexNotFoundError, InputError
from thresher.index.embed.embedder import (
    Embedder,
    check_built_with,
    embedder_for_update,
    get_embedder,
)
from thresher.index.embedded import holds, layout
from thresher.index.embedded.writer import NewChunks, OldGeneration, write_generation
from thresher.index.ingest import common
from thresher.index.ingest import roots as ingest_roots
from thresher.index.ingest.common import document_hash
from thresher.index.ingest.progress import IngestProgress
from thresher.index.manifest import FOLDER_FORMAT, DocEntry
from thresher.index.store import IngestReport

__all__ = ["ingest_embedded", "document_hash"]

_log = logging.getLogger(__name__)
_EMBED_BATCH = common.EMBED_BATCH  # read at each call (a test sets it smaller)
#: most chunks handed to the embedder's writer per call (as chromadb's batch bound was)
_WRITE_BATCH = 5461
COMMIT_CHUNKS = 1000
"""New chunks written between two commits of a long ingest (at least; see :func:`commit_parts`)."""


def ingest_embedded(
    documents: Iterable[Document],
    index_dir: str | Path,
    config: Config | None = None,
    embedder: Embedder | None = None,
    progress: bool = True,
    *,
    sources: Iterable[str | Path] | None = None,
) -> IngestReport:
    """Make the embedded index in the folder ``index_dir`` hold ``documents``.

    Reached through :func:`thresher.index.backends.ingest`, which picks the
    backend from the location.

    Args:
        documents: the whole corpus (each ``doc_id`` once; an exact repeat is skipped).
        index_dir: the index folder (created if missing).
        config: chunking and embedder settings (defaults: ``Config()``).
        embedder: overrides ``config.retrieval.embedder``.
        progress: show a progress bar while embedding (only on a terminal).
        sources: the paths ``documents`` were read from: indexed documents missing
            from the input are deleted only when they came from under one of them.
            None: ``documents`` are the whole corpus (every other document is deleted).

    Returns:
        What changed, with sanitization counts summed over the documents seen.

    Raises:
        InputError: the input holds no document, a doc_id repeats with different
            content, or the folder cannot be created or written (disk full).
        ConfigError: the index was built with another embedder.
        IndexVersionError: the index was written by a newer thresher.
    """
    started = time.perf_counter()
    config = config or Config()
    root = Path(index_dir)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create index folder {root}: {exc.strerror}") from exc
    scope = common.source_scope(sources)

    def waiting() -> None:
        _log.warning(
            "another ingest into %s is running; waiting for it to finish (it holds %s)",
            root,
            root / "ingest.lock",
        )

    with layout.ingest_lock(root, on_wait=waiting):
        try:
            report = _ingest_locked(documents, root, config, embedder, progress, scope)
        except (OSError, sqlite3.Error) as exc:  # disk full, unwritable: the new generation is gone
            lines = str(exc).strip().splitlines() or [type(exc).__name__]
            why = getattr(exc, "strerror", None) or lines[0]
            raise InputError(
                f"cannot write the index at {root} ({why}); free space there or fix its "
                "permissions and run again: the last committed index is unchanged"
            ) from exc
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _ingest_locked(
    documents: Iterable[Document],
    root: Path,
    config: Config,
    embedder: Embedder | None,
    progress: bool,
    scope: common.Scope,
) -> IngestReport:
    try:
        live: Path | None = layout.current_generation(root)
    except IndexNotFoundError:
        live = None
    # a generation of an older format is rebuilt from the input, not read
    old_gen = live if live and layout.read_format(live) >= FOLDER_FORMAT else None
    old = layout.read_manifest(old_gen) if old_gen else None
    emb = embedder or get_embedder(
        embedder_for_update(
            config.retrieval.embedder, RetrievalConfig().embedder, old.embedder if old else None
        )
    )
    if old is not None:
        check_built_with(
            emb, old.embedder, old.dimension, str(root), instead="build into a new index folder"
        )
    name = layout.next_generation_name(root)  # taken before leftovers go: never reused
    holds.remove_stale_generations(root, keep=live)

    report = IngestReport()
    roots = dict(old.roots) if old and old.roots is not None else {}
    if old is not None and old.roots is None:
        roots = ingest_roots.legacy_roots(old.documents, root)
    known_docs = old.documents if old else {}
    labelled = ingest_roots.label_documents(documents, roots, known_docs)
    plan = common.plan_documents(labelled, report)
    common.require_documents(plan, root)
    ingest_roots.check_ids(plan, old.documents if old else {})

    chunking = common.chunking_settings(config)
    known = old.documents if old else {}
    rechunk_all = old is not None and old.chunking != chunking
    changed, deleted = common.changed_documents(plan, known, rechunk_all, scope)
    relocated = common.relocated_documents(plan, known, changed)
    common.count_changes(report, plan, known, changed, deleted)
    if old is not None and not changed and not deleted and not relocated:
        return report

    order = common.final_order(plan, known, deleted, scope)
    now = common.utc_now()
    fresh, entries = common.chunk_documents(plan, changed, config, now)
    parts = commit_parts(
        [len(entries[d].chunk_ids) for d in changed], sum(len(e.chunk_ids) for e in known.values())
    )
    if rechunk_all:  # one commit: a part would record the new chunking over old chunks
        parts = [(0, len(changed))]
    shown = IngestProgress(len(fresh), len(changed), enabled=progress)
    done: set[str] = set()
    first = 0
    with shown:
        for n, (start, stop) in enumerate(parts):
            part = changed[start:stop]
            done.update(part)
            chunks = fresh[first : first + sum(len(entries[d].chunk_ids) for d in part)]
            first += len(chunks)
            name = name if n == 0 else layout.next_generation_name(root)
            generation = layout.new_generation(root, name)
            try:
                manifest = _build_generation(
                    generation, old_gen, old, plan, part, deleted if n == 0 else [],
                    [d for d in order if d in done or d in known],  # order lacks the deleted
                    chunks, {d: entries[d] for d in part}, now, chunking, emb, shown, report,
                    config.retrieval.exact_dense_max_chunks,
                )  # fmt: skip
                manifest.roots = roots
                layout.write_manifest(generation, manifest)
                layout.commit_generation(root, generation)
            except BaseException:
                shutil.rmtree(generation, ignore_errors=True)
                raise
            holds.remove_stale_generations(root, keep=generation)
            old_gen, old = generation, manifest
    report.chunks_added = len(fresh)
    return report


def commit_parts(chunk_counts: list[int], indexed: int = 0) -> list[tuple[int, int]]:
    """Where a long ingest commits: ``(start, stop)`` slices of the changed documents.

    A part closes once it holds :data:`COMMIT_CHUNKS` new chunks and a quarter of
    the chunks already committed (so copies of the index stay a small share of the
    work); a killed or interrupted ingest resumes from its last commit. The
    first part also carries the deletions. No change still makes one part.

    Args:
        chunk_counts: the new chunks of each changed document, in order.
        indexed: the chunks the index holds before the run.
    """
    parts: list[tuple[int, int]] = []
    start, pending, total = 0, 0, indexed
    for i, count in enumerate(chunk_counts):
        pending += count
        if pending >= max(COMMIT_CHUNKS, total // 4) and i + 1 < len(chunk_counts):
            parts.append((start, i + 1))
            start, total, pending = i + 1, total + pending, 0
    parts.append((start, len(chunk_counts)))
    return parts


def _build_generation(
    generation: Path,
    old_gen: Path | None,
    old: layout.Manifest | None,
    plan: common.Plan,
    changed: list[str],
    deleted: list[str],
    order: list[str],
    fresh: list[Chunk],
    entries: dict[str, DocEntry],
    now: str,
    chunking: dict[str, Any],
    emb: Embedder,
    shown: IngestProgress,
    report: IngestReport,
    exact_max: int,
) -> layout.Manifest:
    """Write the new generation's files (:mod:`~thresher.index.embedded.writer`); return
    its manifest.

    ``fresh`` and ``entries``: the chunks and manifest entries of ``changed``;
    ``exact_max``: above this many chunks the generation gets an HNSW graph.
    """
    known = old.documents if old else {}
    previous = OldGeneration(old_gen, old.chunk_ids()) if old_gen and old else None
    stale = common.stale_chunk_ids(known, changed + deleted)
    reusable = previous.reusable(stale) if previous is not None else {}
    report.chunks_deleted += len(stale)
    new = NewChunks()
    common.write_chunks(
        new, fresh, emb, reusable, _WRITE_BATCH, upsert=False, progress=shown,
        embed_batch=_EMBED_BATCH,
    )  # fmt: skip
    documents = common.final_entries(plan, known, entries, order)
    manifest = layout.Manifest(
        format_version=FOLDER_FORMAT,
        thresher_version=__version__,
        embedder=emb.name,
        dimension=emb.dimension,
        chunking=chunking,
        documents=documents,
        sanitized=_sum_sanitized(documents.values()),
        created_at=old.created_at if old else now,
        updated_at=now,
    )
    ids = manifest.chunk_ids()
    write_generation(generation, ids, new, previous, emb.dimension, ann=len(ids) > exact_max)
    return manifest


def _sum_sanitized(entries: Iterable[DocEntry]) -> dict[str, int]:
    total: dict[str, int] = {}
    for entry in entries:
        for kind, count in entry.sanitized.items():
            total[kind] = total.get(kind, 0) + count
    return total
