"""The ``Store`` protocol over an :class:`~thresher.index.view.IndexView`: searches,
fusion, filters, grep and reads, the same for every backend.

The embedded store (its generation's files) and the Chroma server store (a
collection on the server) subclass :class:`ViewStore` and only say which view is
live (:meth:`ViewStore._view`); what differs between them is the view's
:class:`~thresher.index.view.ChunkSource`. Dense similarity is cosine.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Collection, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Self

import numpy as np

from thresher.config import Config
from thresher.corpus.document import Chunk
from thresher.corpus.ids import doc_of
from thresher.errors import BackendUnavailableError, InputError, UnknownIdError
from thresher.index.embed.embedder import Embedder, QueryEmbeddingCache
from thresher.index.exact_dense import LazyExactDense
from thresher.index.filters import DocFilter
from thresher.index.fusion import FusionWeights, fuse_retrievers
from thresher.index.grep.guard import grep_ids
from thresher.index.grep.side_index import grep_indexed
from thresher.index.id_table import names_at, positions_of
from thresher.index.listing import admitted_by_id, left_out, list_documents
from thresher.index.reader_memo import ReaderMemo
from thresher.index.store import DocumentInfo, GrepResult, Hit
from thresher.index.view import IndexView
from thresher.workers import submit

__all__ = ["ViewStore", "check_query"]

#: a dense search that excludes most of an index names the chunks it may return when
#: they are at most this many (a narrow filter), instead of asking HNSW for the rest
_ASK_BY_ID = 50_000
#: filters whose excluded chunks a store keeps (an episode asks with one; each costs
#: about 50 bytes per excluded chunk)
_FILTERS_KEPT = 4


def _unknown(kind: str, ids: Sequence[str]) -> UnknownIdError:
    shown = ", ".join(ids[:10]) + (f" (+{len(ids) - 10} more)" if len(ids) > 10 else "")
    return UnknownIdError(f"unknown {kind}: {shown}", list(ids))


def check_query(query: str, k: int | None = None) -> None:
    """Raise ``InputError`` for an empty query or a ``k`` that is not a positive number."""
    if not query or not query.strip():
        raise InputError("empty query; give at least one word to search for")
    if k is not None and k <= 0:
        raise InputError(f"k must be a positive number of results, got {k}")


class Excluded(AbstractSet[str]):
    """The chunk ids one search leaves out: the caller's ``exclude`` (``extra``) and what
    a filter does not admit (``left``, with its corpus positions ``blocked`` for the BM25
    side index), the filter's part held once for every call instead of copied.

    ``admitted``: for a narrow filter (it admits fewer chunks than it leaves out), the
    corpus positions it admits, ascending; a search then ranks only these chunks
    instead of every chunk with the rest excluded (the same hits, order and scores).
    """

    def __init__(
        self,
        extra: Collection[str] = (),
        left: AbstractSet[str] = frozenset(),
        blocked: np.ndarray | None = None,
        admitted: np.ndarray | None = None,
    ) -> None:
        self.left = left
        self.blocked = blocked
        self.admitted = admitted
        self.extra = {c for c in extra if c not in left} if left else set(extra)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.extra or chunk_id in self.left

    def __len__(self) -> int:
        return len(self.extra) + len(self.left)

    def __iter__(self) -> Iterator[str]:
        return itertools.chain(self.extra, self.left)

    def in_index(self, order: Mapping[str, int]) -> int:
        """How many of these ids are chunks of the index whose ``order`` is given."""
        return len(self.left) + len(self.extra) - positions_of(order, self.extra).count(None)

    def plain(self) -> AbstractSet[str]:
        """These ids as a plain set when no filter adds any (``extra``: a membership test
        without a Python call), else this object."""
        return self if self.left else self.extra


class _Outside(AbstractSet[str]):
    """The chunk ids of an index outside the positions ``admitted``: a narrow filter's
    left-out chunks held as the few it admits (``order``: chunk id -> position)."""

    def __init__(self, ids: Sequence[str], order: Mapping[str, int], admitted: np.ndarray) -> None:
        self._ids = ids
        self._order = order
        self._admitted = frozenset(names_at(ids, admitted.tolist()))
        self._count = len(ids) - len(self._admitted)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id not in self._admitted and chunk_id in self._order

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        return (c for c in self._ids if c not in self._admitted)


class ViewStore:
    """Hybrid, lexical, dense and grep search, and reads, over an :class:`IndexView`.

    Subclasses implement :meth:`_view`, :meth:`stats` and :meth:`_release` (what
    :meth:`close` frees). Safe to call from several threads.

    Attributes:
        index_dir: the index folder the views are read from, for what is kept beside its
            generations (fitted fusion weights, adapted policy weights); None for a
            store with no folder of its own.
    """

    index_dir: Path | None = None

    def __init__(self, config: Config, embedder: Embedder) -> None:
        self.config = config
        self.embedder = embedder
        self._queries = QueryEmbeddingCache(embedder)
        self._lock = threading.Lock()
        self._closed = False
        #: (index state, filter key) -> the chunk ids a filter leaves out, newest last; the
        #: view is held weakly, so a retired index state is not kept for its filters
        self._filtered: OrderedDict[tuple[int, str], tuple[weakref.ref[IndexView], Excluded]] = (
            OrderedDict()
        )

    def _view(self) -> IndexView:
        raise NotImplementedError

    def _live(self) -> tuple[IndexView, FusionWeights | None]:
        """The live view and the fusion weights fitted to it (None: plain RRF with
        ``config.retrieval.rrf_k``); a backend that keeps fitted weights overrides it."""
        return self._view(), None

    def fusion_weights(self) -> FusionWeights:
        """The weights :meth:`hybrid_search` fuses with now: the index's fitted ones, or
        plain RRF with ``config.retrieval.rrf_k``."""
        fitted = self._live()[1]
        return fitted if fitted is not None else FusionWeights(rrf_k=self.config.retrieval.rrf_k)

    def reader_memo(self) -> ReaderMemo:
        """The live generation's memo of what readers derive from its chunks
        (:class:`~thresher.index.store.KeepsReaderMemo`)."""
        return self._view().memo

    def clear_query_caches(self) -> None:
        """Forget the query vectors, the filters' excluded chunks and the live generation's
        reader memo (:class:`~thresher.index.store.KeepsQueryCaches`)."""
        self._queries.clear()
        with self._lock:
            self._filtered.clear()
        self.reader_memo().clear()

    def searches_inline(self) -> bool:
        """A search reads only memory and local files when dense search is the exact scan
        and chunks come from local files (:class:`~thresher.index.store.SearchesInline`)."""
        view = self._view()
        return self._exact(view) is not None and view.source.local

    def _release(self) -> None:
        """Close the backend's clients (called once, from :meth:`close`, under the lock)."""
        raise NotImplementedError

    def _check_open(self, location: object) -> None:
        """Raise ``BackendUnavailableError`` once the store is closed (``location`` names it)."""
        if self._closed:
            raise BackendUnavailableError(f"the store on {location} is closed; open it again")

    def close(self) -> None:
        """Release the backend's clients. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- searches ---------------------------------------------------------------------------

    def _left_out(self, view: IndexView, where: DocFilter | None) -> Excluded:
        """The chunk ids of ``view`` that ``where`` does not admit (empty: no filter);
        kept for the last few filters of each index state, since an episode asks with
        the same filter on every call."""
        if where is None:
            return Excluded()
        key = (id(view), where.key)
        with self._lock:
            held = self._filtered.get(key)
            if held is not None and held[0]() is view:
                self._filtered.move_to_end(key)
                return held[1]
        ids = view.bm25.id_list
        admitted = admitted_by_id(view.source, ids, where)
        if admitted is not None and 2 * len(admitted) < len(ids):
            out = Excluded((), _Outside(ids, view.order, admitted), None, admitted)
        else:
            left, blocked = left_out(view.source, ids, where)
            admitted = None
            if len(ids) - len(left) < len(left):  # narrow: rank only what it admits
                keep = np.ones(len(ids), dtype=bool)
                keep[blocked] = False
                admitted = np.flatnonzero(keep)
            out = Excluded((), left, blocked, admitted)
        with self._lock:
            for gone in [k for k, (ref, _) in self._filtered.items() if ref() is None]:
                del self._filtered[gone]  # of an index state released since
            self._filtered[key] = (weakref.ref(view), out)
            while len(self._filtered) > _FILTERS_KEPT:
                self._filtered.popitem(last=False)
        return out

    def _excluded(
        self, view: IndexView, exclude: Collection[str], where: DocFilter | None
    ) -> Excluded:
        """``exclude`` plus every chunk ``where`` leaves out."""
        held = self._left_out(view, where)
        return Excluded(exclude, held.left, held.blocked, held.admitted)

    def hybrid_search(
        self,
        query: str,
        k: int = 50,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
        fitted: bool = True,
    ) -> list[Hit]:
        """BM25 and dense concurrently, fused by RRF; see ``Store.hybrid_search``. The
        fusion is weighted when the index has fitted weights (:meth:`fusion_weights`)
        and ``fitted`` is True."""
        check_query(query, k)
        view, weights = self._live()
        excluded = self._excluded(view, exclude, where)
        depth = max(self.config.retrieval.per_retriever, k)
        if self._exact(view) is not None:  # a millisecond's scan: not worth a thread hand-off
            lexical = view.bm25.search(
                query, depth, excluded.extra, excluded.blocked, excluded.admitted
            )
            dense = self._dense(view, query, depth, excluded)
        else:
            dense_future = submit(lambda: self._dense(view, query, depth, excluded))
            lexical = view.bm25.search(
                query, depth, excluded.extra, excluded.blocked, excluded.admitted
            )
            dense = dense_future.result()
        if weights is None or not fitted:
            fused = fuse_retrievers(lexical, dense, self.config.retrieval.rrf_k, limit=k)
        else:
            pair = (weights.bm25, weights.dense)
            fused = fuse_retrievers(lexical, dense, weights.rrf_k, limit=k, weights=pair)
        chunks = self._chunks(view, [f.key for f in fused])
        return [
            Hit(chunk, f.score, "hybrid", f.bm25_rank, f.dense_rank, f.bm25_score, f.dense_score)
            for f, chunk in zip(fused, chunks, strict=True)
        ]

    def bm25_search(
        self,
        query: str,
        k: int = 50,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
    ) -> list[Hit]:
        """Lexical retrieval alone (BM25 scores, highest first, ties by chunk id)."""
        check_query(query, k)
        view = self._view()
        excluded = self._excluded(view, exclude, where)
        found = view.bm25.search(query, k, excluded.extra, excluded.blocked, excluded.admitted)
        chunks = self._chunks(view, [c for c, _ in found])
        return [
            Hit(chunk, s, "bm25", bm25_rank=r, bm25_score=s)
            for r, ((_, s), chunk) in enumerate(zip(found, chunks, strict=True), start=1)
        ]

    def dense_search(
        self,
        query: str,
        k: int = 50,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
    ) -> list[Hit]:
        """Dense retrieval alone (cosine similarity, highest first, ties by chunk id)."""
        check_query(query, k)
        view = self._view()
        found = self._dense(view, query, k, self._excluded(view, exclude, where))
        chunks = self._chunks(view, [c for c, _ in found])
        return [
            Hit(chunk, s, "dense", dense_rank=r, dense_score=s)
            for r, ((_, s), chunk) in enumerate(zip(found, chunks, strict=True), start=1)
        ]

    def _dense(
        self, view: IndexView, query: str, depth: int, exclude: Excluded
    ) -> list[tuple[str, float]]:
        """The ``depth`` nearest chunks by cosine, excluded ids removed before the cut
        (none, and the query not embedded, when every chunk is excluded)."""
        total = len(view.bm25)
        excluded = exclude.in_index(view.order)
        if excluded >= total:
            return []
        n = min(total, depth + excluded)
        vector = self._queries.embed_query(query)
        exact = self._exact(view)
        if exact is not None:  # deterministic, as fast
            matrix = exact.get()
            if exclude.admitted is None:
                return matrix.search(vector, depth, exclude.plain())
            if matrix.follows(view.bm25.id_list):  # a corpus position is a row
                rows = exclude.admitted
            else:
                admitted = names_at(view.bm25.id_list, exclude.admitted.tolist())
                at = [matrix.row.get(c) for c in admitted]
                rows = np.asarray([r for r in at if r is not None], dtype=np.int64)
            return matrix.search(vector, depth, exclude.extra, rows)
        kept = total - (n - depth)
        if (
            n - depth > kept and kept <= _ASK_BY_ID
        ):  # most excluded (a narrow filter): name the rest
            if exclude.admitted is not None:
                named = names_at(view.bm25.id_list, exclude.admitted.tolist())
                ids = [c for c in named if c not in exclude.extra]
            else:
                ids = [c for c in view.bm25.id_list if c not in exclude]
            if not ids:
                return []
            found = view.source.nearest(vector, min(depth, len(ids)), ids)
        else:
            found = view.source.nearest(vector, n)
        pairs = [(cid, sim) for cid, sim in found if cid not in exclude]
        pairs.sort(key=lambda p: (-p[1], p[0]))
        return pairs[:depth]

    def _exact(self, view: IndexView) -> LazyExactDense | None:
        """The exact scan dense search over ``view`` uses (small indexes), else None."""
        if len(view.bm25) > self.config.retrieval.exact_dense_max_chunks:
            return None
        return view.exact

    def grep(
        self,
        pattern: str,
        limit: int = 5,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
    ) -> GrepResult:
        """Chunks whose text matches ``pattern`` (Python syntax), in corpus order.

        With a grep side index (:mod:`thresher.index.grep.side_index`): candidates by
        trigram, checked as Rust's ``regex`` crate would, counting stopped at
        ``config.grep.count_cap`` (``GrepResult.capped``). Without one, or when
        the side index cannot answer: the source's scan of every chunk
        (:meth:`~thresher.index.view.ChunkSource.regex_ids`), with an exact total.
        Raises ``PatternRejectedError`` naming a refused construct or a timeout.
        """
        view = self._view()
        exclude = self._excluded(view, exclude, where) if where is not None else exclude

        def matching(rust_pattern: str) -> list[str]:
            return view.source.regex_ids(rust_pattern, pattern)

        def scan() -> tuple[list[str], int]:
            return grep_ids(matching, pattern, self.config.grep, view.order, limit, exclude)

        capped = False
        if view.grep_index is None:
            ids, total = scan()
        else:
            ids, total, capped = grep_indexed(
                view.grep_index, view.bm25.id_list, pattern, self.config.grep, limit, exclude, scan
            )
        hits = tuple(Hit(c, 1.0, "grep") for c in self._chunks(view, ids))
        return GrepResult(hits, total, capped)

    # -- reads ------------------------------------------------------------------------------

    def get(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked; ``UnknownIdError`` lists misses."""
        return self._chunks(self._view(), list(chunk_ids))

    def read_document(self, doc_id: str, *, where: DocFilter | None = None) -> list[Chunk]:
        """Every chunk of ``doc_id`` in position order; ``UnknownIdError`` if none, or
        if ``where`` does not admit the document."""
        view = self._view()
        chunks = view.source.document(doc_id)
        if not chunks:
            raise _unknown("document id", [doc_id])
        if where is not None and chunks[0].chunk_id in self._left_out(view, where).left:
            raise UnknownIdError(
                f"document {doc_id!r} is outside the filter ({where.key}); "
                "search without it to read this document",
                [doc_id],
            )
        return sorted(chunks, key=lambda c: c.position)

    def doc_ids(self) -> list[str]:
        """Every document id, in corpus order (from the side index: no store read)."""
        return list(dict.fromkeys(doc_of(c) for c in self._view().bm25.id_list))

    def list_documents(self, where: DocFilter | None = None) -> list[DocumentInfo]:
        """The documents ``where`` admits, in corpus order (see
        :func:`thresher.index.listing.list_documents`)."""
        view = self._view()
        held = self._left_out(view, where)
        if held.admitted is not None:
            ids = names_at(view.bm25.id_list, held.admitted.tolist())
        else:
            ids = [c for c in view.bm25.id_list if c not in held.left]
        return list_documents(view.source, ids)

    def similarity(self, query: str, chunk_ids: Sequence[str]) -> list[tuple[float, float]]:
        """(BM25 score, cosine similarity) of ``query`` against each chunk, in order."""
        check_query(query)
        if not chunk_ids:
            return []
        view = self._view()
        positions = view.bm25.positions_for(chunk_ids)  # raises UnknownIdError
        lexical = view.bm25.scores_at(query, positions)
        exact = self._exact(view)
        matrix = exact.get() if exact is not None else None
        if matrix is not None and matrix.follows(view.bm25.id_list):  # rows in corpus order
            vectors = matrix.matrix[positions]
        else:
            vectors = self._embeddings(view, chunk_ids)
        q = self._queries.embed_query(query)
        # one dot product per row, as ``vectors[i] @ q`` computes it: numpy's vecdot runs
        # the same dot loop (``FLOAT_dot``) on each row that ``@`` runs on two vectors,
        # so these are the same floats, without a Python step per chunk
        dense: list[float] = np.vecdot(vectors, q).tolist()
        return list(zip(lexical, dense, strict=True))

    def _chunks(self, view: IndexView, ids: list[str]) -> list[Chunk]:
        """Chunks for ``ids`` (order kept, repeats allowed); ``UnknownIdError`` on misses."""
        held = view.cache.all_of(ids)
        if held is not None:
            return held
        unique = list(dict.fromkeys(ids))
        by_id = view.cache.lookup(unique)
        wanted = [c for c in unique if c not in by_id]
        read = list(view.source.chunks(wanted).values()) if wanted else []
        view.cache.store(read)
        by_id.update((c.chunk_id, c) for c in read)
        missing = [c for c in unique if c not in by_id]
        if missing:
            raise _unknown("chunk ids", missing)
        return [by_id[c] for c in ids]

    def _embeddings(self, view: IndexView, chunk_ids: Sequence[str]) -> np.ndarray:
        """The vector of each of ``chunk_ids``, one row each in order (repeats allowed);
        ``UnknownIdError`` lists the ids without one."""
        exact = self._exact(view)
        if exact is not None:
            rows = exact.get().rows(chunk_ids)  # in memory: no store read
            if rows is not None:
                return rows
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, np.ndarray] = {}
        if exact is not None:
            out = exact.get().vectors(ids)
            ids = [c for c in ids if c not in out]
        if ids:
            out.update(view.source.embeddings(ids))
        missing = [c for c in ids if c not in out]
        if missing:
            raise _unknown("chunk ids", missing)
        return np.stack([out[c] for c in chunk_ids])
