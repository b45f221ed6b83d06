"""A store seen through one :class:`~thresher.index.filters.DocFilter`: a restricted view.

Every call passes the filter to the wrapped store (narrowed by the call's own
``where``), so the store's own search, fusion and grep serve the view, and what
the filter leaves out is excluded before any cut. A document or chunk outside
the filter's id lists is unknown, exactly as one the index lacks. The two uses: a
task's per-question corpus (``DocFilter.only``), an attack's control run
(``DocFilter.without``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from thresher.corpus.document import Chunk
from thresher.corpus.ids import doc_of
from thresher.errors import UnknownIdError
from thresher.index.filters import DocFilter
from thresher.index.store import (
    GrepResult,
    Hit,
    KeepsQueryCaches,
    ManagesDocuments,
    Store,
    StoreStats,
)

__all__ = ["FilteredStore"]


class FilteredStore:
    """A store showing only what ``where`` admits: a per-question corpus
    (:meth:`DocFilter.only`), an index without some documents (:meth:`DocFilter.without`).

    Every search, grep and read runs on the wrapped store with ``where`` narrowed by
    the call's own filter (:meth:`DocFilter.narrowed`). A document or chunk the id
    lists leave out is unknown (``UnknownIdError``, worded as for an id the index
    lacks). :meth:`close` leaves the wrapped store open (its owner closes it).
    """

    def __init__(self, store: Store, where: DocFilter) -> None:
        self.store = store
        self.where = where

    def _narrowed(self, where: DocFilter | None) -> DocFilter:
        return self.where.narrowed(where)

    def hybrid_search(
        self,
        query: str,
        k: int = 50,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
        fitted: bool = True,
    ) -> list[Hit]:
        """The wrapped store's hybrid search inside this view."""
        narrowed = self._narrowed(where)
        if fitted:  # a wrapped store written before ``fitted`` still serves
            return self.store.hybrid_search(query, k, exclude, where=narrowed)
        return self.store.hybrid_search(query, k, exclude, where=narrowed, fitted=False)

    def bm25_search(
        self,
        query: str,
        k: int = 50,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
    ) -> list[Hit]:
        """The wrapped store's BM25 search inside this view."""
        return self.store.bm25_search(query, k, exclude, where=self._narrowed(where))

    def dense_search(
        self,
        query: str,
        k: int = 50,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
    ) -> list[Hit]:
        """The wrapped store's dense search inside this view."""
        return self.store.dense_search(query, k, exclude, where=self._narrowed(where))

    def grep(
        self,
        pattern: str,
        limit: int = 5,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
    ) -> GrepResult:
        """The wrapped store's grep inside this view (``total`` counts its matches)."""
        return self.store.grep(pattern, limit, exclude, where=self._narrowed(where))

    def _check_chunks(self, chunk_ids: Sequence[str]) -> None:
        outside = [c for c in chunk_ids if not self.where.admits_doc(doc_of(c))]
        if outside:
            raise UnknownIdError(f"unknown chunk ids: {', '.join(outside)}", outside)

    def get(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Chunks by id; one outside the id lists is unknown."""
        self._check_chunks(chunk_ids)
        return self.store.get(chunk_ids)

    def read_document(self, doc_id: str, *, where: DocFilter | None = None) -> list[Chunk]:
        """A document's chunks; one outside the id lists is unknown."""
        if not self.where.admits_doc(doc_id):
            raise UnknownIdError(f"unknown document id: {doc_id}", [doc_id])
        return self.store.read_document(doc_id, where=self._narrowed(where))

    def similarity(self, query: str, chunk_ids: Sequence[str]) -> list[tuple[float, float]]:
        """The wrapped store's scores; a chunk outside the id lists is unknown."""
        self._check_chunks(chunk_ids)
        return self.store.similarity(query, chunk_ids)

    def stats(self) -> StoreStats:
        """The wrapped store's stats, with this view's document and chunk counts when the
        store lists its documents (:class:`~thresher.index.store.ManagesDocuments`)."""
        base = self.store.stats()
        if not isinstance(self.store, ManagesDocuments):
            return base
        docs = self.store.list_documents(self.where)
        return replace(
            base,
            documents=len(docs),
            chunks=sum(len(d.chunk_ids) for d in docs),
            extra={**base.extra, "filter": self.where.to_dict()},
        )

    def clear_query_caches(self) -> None:
        """Forget the wrapped store's query caches
        (:class:`~thresher.index.store.KeepsQueryCaches`), its filters' among them."""
        if isinstance(self.store, KeepsQueryCaches):
            self.store.clear_query_caches()

    def close(self) -> None:
        """Nothing to release: the wrapped store stays open."""
