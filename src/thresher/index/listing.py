"""Reading an index by document: which chunks a filter admits, and the document listing.

Shared by every chromadb-backed store (embedded and server): ``collection`` is
the chunk collection, ``ids`` every chunk id in corpus order (the BM25 side
index's list).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from thresher.corpus.document import Chunk
from thresher.corpus.ids import doc_of
from thresher.errors import InputError
from thresher.index.filters import DocFilter
from thresher.index.records import chunk_from_record
from thresher.index.store import DocumentInfo

__all__ = ["left_out", "list_documents"]


def left_out(
    collection: Any, ids: Sequence[str], where: DocFilter
) -> tuple[frozenset[str], np.ndarray]:
    """The chunk ids of ``ids`` that ``where`` does not admit, and their positions in
    ``ids``.

    chromadb evaluates the ``where`` (``Collection.get(where=...)``, on the
    collection's own metadata); the path glob is matched against each chunk's
    document id. Raises ``InputError`` when chromadb refuses the ``where``.
    """
    matching: set[str] | None = None
    translated = where.chroma_where()
    if translated is not None:
        try:
            found = collection.get(where=translated, include=[])
        except ValueError as exc:  # chromadb's own refusal of the where
            raise InputError(f"where refused by chromadb: {exc}") from exc
        matching = set(found["ids"])
    dropped: list[str] = []
    positions: list[int] = []
    for i, cid in enumerate(ids):
        admitted = (matching is None or cid in matching) and where.admits_doc(doc_of(cid))
        if not admitted:
            dropped.append(cid)
            positions.append(i)
    return frozenset(dropped), np.asarray(positions, dtype=np.int64)


def list_documents(collection: Any, ids: Sequence[str], batch: int) -> list[DocumentInfo]:
    """The documents of the chunks ``ids`` (corpus order), each described by its first
    chunk's metadata (title, source, the document's own metadata), read in batches."""
    chunk_ids: dict[str, list[str]] = {}
    for cid in ids:
        chunk_ids.setdefault(doc_of(cid), []).append(cid)
    firsts = [chunks[0] for chunks in chunk_ids.values()]
    metas: dict[str, Chunk] = {}
    for start in range(0, len(firsts), batch):
        found = collection.get(ids=firsts[start : start + batch], include=["metadatas"])
        for cid, meta in zip(found["ids"], found["metadatas"], strict=True):
            metas[cid] = chunk_from_record(cid, "", meta)
    out = []
    for chunks in chunk_ids.values():
        first = metas.get(chunks[0])
        if first is not None:
            out.append(
                DocumentInfo(
                    first.doc_id, first.title, first.source, tuple(chunks), dict(first.metadata)
                )
            )
    return out
