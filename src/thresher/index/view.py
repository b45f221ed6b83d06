"""One consistent state of an index, as a store reads it: :class:`IndexView` (its
:class:`ChunkSource`, BM25, the corpus order, the grep side index, the exact dense
scan, the reader memo) and its :class:`ChunkCache` of the chunks read from it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from thresher.corpus.document import Chunk
from thresher.index.bm25 import Bm25Index
from thresher.index.exact_dense import ExactDense, LazyExactDense
from thresher.index.grep.side_index import GrepIndex
from thresher.index.reader_memo import ReaderMemo

__all__ = ["ChunkCache", "ChunkSource", "IndexView"]


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


class ChunkSource(Protocol):
    """Where one index state keeps its chunks and vectors: what a store asks beyond BM25
    and the grep side index (the embedded backend's files, or a Chroma collection).

    Every method is safe to call from several threads.
    """

    #: whether every call reads only memory and local files (no server round trip)
    local: bool

    def chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        """The chunks with these ids (unknown ids are left out)."""
        ...

    def document(self, doc_id: str) -> list[Chunk]:
        """Every chunk of ``doc_id``, any order (empty when it has none)."""
        ...

    def matching(self, where: Mapping[str, Any]) -> set[str]:
        """The ids of the chunks whose metadata satisfies ``where`` (in the form of
        :meth:`thresher.index.filters.DocFilter.chroma_where`).

        Raises:
            InputError: the ``where`` is refused.
        """
        ...

    def nearest(
        self, vector: np.ndarray, n: int, ids: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """Up to ``n`` ``(chunk id, cosine similarity)`` nearest ``vector`` (any order),
        among ``ids`` when given; approximate for large indexes."""
        ...

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vector of each of ``ids`` (unknown ids are left out)."""
        ...

    def regex_ids(self, rust_pattern: str, pattern: str) -> list[str]:
        """Every chunk id whose text matches (``rust_pattern``: the guard's translation of
        the user's ``pattern`` into Rust ``regex`` syntax), any order."""
        ...

    def all_vectors(self) -> ExactDense:
        """Every chunk's vector, for the exact scan."""
        ...


@dataclass(frozen=True, slots=True, weakref_slot=True)
class IndexView:
    """One consistent state of an index: its chunk source, BM25, the corpus order, a cache
    of the chunks read from it, the grep side index when it has one, the exact dense scan
    (read on first use) and ``memo``, what readers derive from its chunks
    (:class:`~thresher.index.reader_memo.ReaderMemo`). Weakly referenceable: a store
    releases an index state once nothing holds its view."""

    source: ChunkSource
    bm25: Bm25Index
    order: Mapping[str, int]
    cache: ChunkCache
    grep_index: GrepIndex | None
    exact: LazyExactDense
    memo: ReaderMemo = field(default_factory=ReaderMemo)

    @classmethod
    def of(
        cls, source: ChunkSource, bm25: Bm25Index, grep_index: GrepIndex | None = None
    ) -> IndexView:
        """The view of ``source`` with its BM25 side index (and grep side index)."""
        exact = LazyExactDense(source.all_vectors)
        cache = ChunkCache(chunks=len(bm25))
        return cls(source, bm25, bm25.positions, cache, grep_index, exact)
