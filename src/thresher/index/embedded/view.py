"""One consistent state of an index, as a store reads it: :class:`IndexView` (the
collection, BM25, the corpus order, the side indexes, the saved vectors and records,
the reader memo) and its :class:`ChunkCache` of the chunks read from it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.corpus.document import Chunk
from thresher.index.bm25 import Bm25Index
from thresher.index.embedded.exact_dense import LazyExactDense
from thresher.index.embedded.lazy_collection import LazyCollection
from thresher.index.embedded.saved_records import SavedRecords
from thresher.index.grep.side_index import GrepIndex
from thresher.index.reader_memo import ReaderMemo

__all__ = ["ChunkCache", "IndexView"]


class ChunkCache:
    """A thread-safe LRU of chunks read from one index state (chunks never change there).

    ``chunks``: how many chunks that index holds, when known. When they all fit
    (``chunks <= maxsize``) nothing is ever evicted, so the cache keeps no recency
    order and :meth:`all_of` reads without the lock (a dict's reads are atomic; writes
    still take it).
    """

    def __init__(self, maxsize: int = 20_000, chunks: int | None = None) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[str, Chunk] = OrderedDict()
        self._lock = threading.Lock()
        self._evicts = chunks is None or chunks > maxsize

    def all_of(self, ids: Sequence[str]) -> list[Chunk] | None:
        """The chunks of ``ids`` in order when every one is held and the cache never
        evicts (no recency to update), else None: then ask :meth:`lookup`."""
        if self._evicts:
            return None
        try:
            return list(map(self._items.__getitem__, ids))
        except KeyError:
            return None

    def lookup(self, ids: Sequence[str]) -> dict[str, Chunk]:
        with self._lock:
            found = {c: self._items[c] for c in ids if c in self._items}
            if self._evicts:
                for c in found:
                    self._items.move_to_end(c)
            return found

    def store(self, chunks: Collection[Chunk]) -> None:
        with self._lock:
            for chunk in chunks:
                self._items[chunk.chunk_id] = chunk
                self._items.move_to_end(chunk.chunk_id)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)


@dataclass(frozen=True, slots=True, weakref_slot=True)
class IndexView:
    """One consistent state of an index: the collection (opened when first needed), BM25,
    the corpus order, a cache of the chunks read from it and, when the index has them,
    the grep side index and the saved chunk records; ``memo``: what readers derive from
    its chunks (:class:`~thresher.index.reader_memo.ReaderMemo`). Weakly referenceable:
    a store releases an index state once nothing holds its view."""

    source: LazyCollection
    bm25: Bm25Index
    order: Mapping[str, int]
    cache: ChunkCache
    grep_index: GrepIndex | None = None
    exact: LazyExactDense | None = None
    records: SavedRecords | None = None
    memo: ReaderMemo = field(default_factory=ReaderMemo)

    @property
    def collection(self) -> Any:
        """The chromadb collection (opened now if it was not yet)."""
        return self.source.get()

    @classmethod
    def of(
        cls,
        collection: Any,
        bm25: Bm25Index,
        grep_index: GrepIndex | None = None,
        vectors: Path | None = None,
        records: SavedRecords | None = None,
    ) -> IndexView:
        """The view of ``collection`` (a :class:`LazyCollection`, or one already open);
        ``vectors``: a folder holding its saved vectors
        (:func:`~thresher.index.embedded.exact_dense.save_vectors`), for exact dense
        search; ``records``: its saved chunk records, read instead of the collection."""
        source = (
            collection
            if isinstance(collection, LazyCollection)
            else LazyCollection.ready(collection)
        )
        exact = LazyExactDense(source.get, vectors)
        cache = ChunkCache(chunks=len(bm25))
        return cls(source, bm25, bm25.positions, cache, grep_index, exact, records)
