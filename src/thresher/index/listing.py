"""Reading an index by document: which chunks a filter admits, and the document listing.

Shared by every backend: ``source`` is the index state's
:class:`~thresher.index.view.ChunkSource`, ``ids`` every chunk id in corpus order
(the BM25 side index's list).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thresher.corpus.ids import doc_of
from thresher.index.filters import DocFilter
from thresher.index.store import DocumentInfo
from thresher.index.view import ChunkSource

__all__ = ["left_out", "list_documents"]


def left_out(
    source: ChunkSource, ids: Sequence[str], where: DocFilter
) -> tuple[frozenset[str], np.ndarray]:
    """The chunk ids of ``ids`` that ``where`` does not admit, and their positions in
    ``ids``.

    The source evaluates the ``where`` on each chunk's metadata
    (:meth:`~thresher.index.view.ChunkSource.matching`); the path glob is matched
    against each chunk's document id. Raises ``InputError`` when the ``where`` is refused.
    """
    translated = where.chroma_where()
    matching = source.matching(translated) if translated is not None else None
    dropped: list[str] = []
    positions: list[int] = []
    for i, cid in enumerate(ids):
        admitted = (matching is None or cid in matching) and where.admits_doc(doc_of(cid))
        if not admitted:
            dropped.append(cid)
            positions.append(i)
    return frozenset(dropped), np.asarray(positions, dtype=np.int64)


def list_documents(source: ChunkSource, ids: Sequence[str]) -> list[DocumentInfo]:
    """The documents of the chunks ``ids`` (corpus order), each described by its first
    chunk's metadata (title, source, the document's own metadata)."""
    chunk_ids: dict[str, list[str]] = {}
    for cid in ids:
        chunk_ids.setdefault(doc_of(cid), []).append(cid)
    metas = source.chunks([chunks[0] for chunks in chunk_ids.values()])
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
