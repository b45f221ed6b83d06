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
from thresher.index.id_table import IdTable
from thresher.index.store import DocumentInfo
from thresher.index.view import ChunkSource

__all__ = ["admitted_by_id", "left_out", "list_documents"]


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


def admitted_by_id(source: ChunkSource, ids: Sequence[str], where: DocFilter) -> np.ndarray | None:
    """The positions in ``ids`` of the chunks ``where`` admits (ascending), found from
    its ``allow`` list without reading every id: the chunks of an allowed document are
    the ids ``doc#N`` (:func:`~thresher.corpus.ids.chunk_id`), and the document id
    itself. None when ``where`` has no ``allow`` list or ``ids`` is not an
    :class:`~thresher.index.id_table.IdTable` (then :func:`left_out` reads them all).
    The complement of :func:`left_out`'s positions. Raises ``InputError`` when the
    ``where`` is refused.
    """
    if where.allow is None or not isinstance(ids, IdTable):
        return None
    found: list[int] = []
    for doc in where.allow:
        if not where.admits_doc(doc):
            continue
        own = ids.find(doc)
        if own is not None and doc_of(doc) == doc:
            found.append(own)
        found.extend(i for i in ids.starting_with(doc + "#") if doc_of(ids[i]) == doc)
    translated = where.chroma_where()
    if translated is not None:
        matching = source.matching(translated)
        found = [i for i in found if ids[i] in matching]
    return np.asarray(sorted(set(found)), dtype=np.int64)


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
