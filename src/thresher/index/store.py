"""The one protocol every index backend implements.

Nothing above this module knows which backend it talks to: the embedded
default (one folder in thresher's own format, :mod:`thresher.index.embedded`)
and a Chroma server (``HttpClient``) expose the same methods with the same
contracts.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from thresher.corpus.document import Chunk
from thresher.index.filters import DocFilter
from thresher.index.reader_memo import ReaderMemo

__all__ = [
    "Hit",
    "GrepResult",
    "IngestReport",
    "StoreStats",
    "DocumentInfo",
    "Store",
    "ManagesDocuments",
    "KeepsReaderMemo",
    "KeepsQueryCaches",
    "SearchesInline",
    "PinsGeneration",
]


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved chunk with the evidence of how it was found.

    Attributes:
        chunk: the chunk.
        score: the score the result list is ordered by (RRF for hybrid).
        method: which retriever produced the list.
        bm25_rank, dense_rank: 1-based rank in each retriever's list, None if absent.
        bm25_score, dense_score: raw scores (BM25; cosine similarity), None if absent.
    """

    chunk: Chunk
    score: float
    method: Literal["hybrid", "bm25", "dense", "grep", "get"]
    bm25_rank: int | None = None
    dense_rank: int | None = None
    bm25_score: float | None = None
    dense_score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (the chunk nested)."""
        return {
            "chunk": self.chunk.to_dict(),
            "score": self.score,
            "method": self.method,
            "bm25_rank": self.bm25_rank,
            "dense_rank": self.dense_rank,
            "bm25_score": self.bm25_score,
            "dense_score": self.dense_score,
        }


@dataclass(frozen=True, slots=True)
class GrepResult:
    """What a grep found: the first ``limit`` matching chunks and how many matched.

    Attributes:
        hits: at most ``limit`` hits (method ``grep``, score 1.0), in corpus order.
        total: chunks that matched, after exclusion (``>= len(hits)``); more than
            ``len(hits)`` when the result was cut to the limit.
        capped: True when counting stopped at ``total`` (``GrepConfig.count_cap``)
            with chunks left unread: at least ``total`` matched. The hits are the
            first in corpus order all the same.
    """

    hits: tuple[Hit, ...]
    total: int
    capped: bool = False

    @property
    def cut(self) -> bool:
        """True when more chunks matched than ``hits`` holds (or may have: ``capped``)."""
        return self.capped or self.total > len(self.hits)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: ``{"total": n, "capped": bool, "hits": [...]}``."""
        return {
            "total": self.total,
            "capped": self.capped,
            "hits": [h.to_dict() for h in self.hits],
        }


@dataclass(slots=True)
class IngestReport:
    """What one ingestion run changed.

    ``documents_kept``: indexed documents outside the input's scope (read from
    paths not named this time), left as they were. ``files``: the account of
    the files the documents were read from (:meth:`thresher.corpus.LoadStats.to_dict`:
    files read, and skipped counts by reason with the first paths), when the
    caller passed the load's stats to :func:`thresher.index.backends.ingest`;
    empty otherwise.
    """

    documents_seen: int = 0
    documents_added: int = 0
    documents_updated: int = 0
    documents_deleted: int = 0
    documents_unchanged: int = 0
    documents_kept: int = 0
    chunks_added: int = 0
    chunks_deleted: int = 0
    sanitized: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    files: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Every count as a plain dict."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class StoreStats:
    """A summary of what an index holds."""

    backend: str
    location: str
    documents: int
    chunks: int
    embedder: str
    dimension: int
    format_version: int
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Every field as a plain dict (``extra`` as the backend gave it)."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """One indexed document, as ``thresher docs list`` shows it.

    Attributes:
        doc_id: its id.
        title: its title.
        source: where it was read from (a path, a dataset name).
        chunk_ids: its chunks, in position order.
        metadata: its own metadata (a JSONL record's ``metadata``, ``injection_flags``...).
    """

    doc_id: str
    title: str
    source: str
    chunk_ids: tuple[str, ...]
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "source": self.source,
            "chunks": len(self.chunk_ids),
            "chunk_ids": list(self.chunk_ids),
            "metadata": dict(self.metadata),
        }


@runtime_checkable
class KeepsReaderMemo(Protocol):
    """A store that keeps, per live index generation, what readers derive from its chunks
    (:class:`~thresher.index.reader_memo.ReaderMemo`): the harness hands it to a policy
    session that declares ``use_reader_memo`` (:class:`~thresher.harness.policy.BasePolicy`)."""

    def reader_memo(self) -> ReaderMemo:
        """The live generation's reader memo (a new generation starts an empty one)."""
        ...


@runtime_checkable
class KeepsQueryCaches(Protocol):
    """A store that remembers what it computed for earlier queries (their vectors, the
    chunks a filter leaves out, its readers' memo): answers never change with them,
    only their time. A measurement that must time every query alike clears them first."""

    def clear_query_caches(self) -> None:
        """Forget what earlier queries left behind (the next query computes it again)."""
        ...


@runtime_checkable
class SearchesInline(Protocol):
    """A store whose searches may run on the caller's thread: in this process, from
    memory and local files, ending in about a millisecond (no network, no lock another
    process holds), so handing one to a worker thread costs more than it saves (two
    thread wake-ups, each a wait for a core on a loaded machine)."""

    def searches_inline(self) -> bool:
        """Whether a search on the live generation now is such a search."""
        ...


@runtime_checkable
class PinsGeneration(Protocol):
    """A store whose index changes by whole generations (an ingest or a delete commits a
    new one) that can hand out one generation to read throughout.

    Every read through the pinned store (searches, grep, reads, similarity) sees the
    generation live when :meth:`pinned` was called, whatever commits meanwhile; the
    store it came from keeps owning it (closing that store closes the pinned one;
    closing the pinned one does nothing). The harness pins one per episode: an
    episode's calls and recalls read one index, and the store looks for a newer
    generation once per episode instead of on every call.
    """

    def pinned(self) -> Store:
        """A read view of the live generation, fixed (see the class)."""
        ...


@runtime_checkable
class Store(Protocol):
    """Read and write access to an indexed corpus.

    Every search excludes the chunk ids in ``exclude`` *before* cutting to
    ``k``, so a caller that excludes what it has seen still gets ``k`` fresh
    results when the corpus has them. Ties are broken by chunk id, so results
    are deterministic.

    Searches, grep and reads take ``where`` (a :class:`DocFilter`: a Chroma-style
    ``where`` on document metadata and a glob on document ids): a chunk of a
    document it does not admit counts as excluded, before any cut.
    """

    def hybrid_search(
        self,
        query: str,
        k: int = 50,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
        fitted: bool = True,
    ) -> list[Hit]:
        """BM25 and dense retrieval run concurrently, fused by RRF (``config.retrieval.rrf_k``).

        Returns at most ``k`` hits ordered by fused score, each carrying its
        1-based rank and raw score in each retriever's own list (``None`` where
        that list, ``config.retrieval.per_retriever`` deep, lacks it), the score
        being ``Σ 1/(rrf_k + rank)``; or ``Σ w/(rrf_k + rank)`` with the rrf_k and
        per-retriever weights fitted to the index, where a backend keeps them
        (:class:`~thresher.index.fusion.FusionWeights`; the embedded index's
        ``fusion.json``) unless ``fitted`` is False (a caller whose learned scorer
        expects plain RRF). Raises ``InputError`` on an empty query.
        """
        ...

    def bm25_search(
        self,
        query: str,
        k: int = 50,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
    ) -> list[Hit]:
        """Lexical retrieval alone (BM25 scores, highest first).

        Hits carry ``bm25_rank`` (1-based) and ``bm25_score`` (equal to ``score``);
        the dense fields are ``None``.
        """
        ...

    def dense_search(
        self,
        query: str,
        k: int = 50,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
    ) -> list[Hit]:
        """Dense retrieval alone (cosine similarity, highest first).

        Hits carry ``dense_rank`` (1-based) and ``dense_score`` (equal to ``score``);
        the BM25 fields are ``None``.
        """
        ...

    def grep(
        self,
        pattern: str,
        limit: int = 5,
        exclude: Collection[str] = (),
        *,
        where: DocFilter | None = None,
    ) -> GrepResult:
        """Chunks whose text matches the regular expression, in corpus order.

        The pattern is checked first (size, refused constructs) and the run is
        bounded in time. Returns the first ``limit`` matching chunks not in
        ``exclude`` (score 1.0, no ranks) and how many matched in all. Raises
        ``PatternRejectedError`` naming the problem.
        """
        ...

    def get(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked.

        Raises ``UnknownIdError`` listing every id the index does not hold.
        """
        ...

    def read_document(self, doc_id: str, *, where: DocFilter | None = None) -> list[Chunk]:
        """Every chunk of one document in position order.

        Raises ``UnknownIdError`` when the document is not in the index (or ``where``
        does not admit it).
        """
        ...

    def similarity(self, query: str, chunk_ids: Sequence[str]) -> list[tuple[float, float]]:
        """(BM25 score, dense cosine) of ``query`` against each given chunk, in order.

        Lets rerankers and policies score arbitrary chunks against a new
        subquery without another search.
        """
        ...

    def stats(self) -> StoreStats:
        """What the index holds."""
        ...

    def close(self) -> None:
        """Release clients and files. Idempotent."""
        ...


@runtime_checkable
class ManagesDocuments(Protocol):
    """What a store offers beyond searching: listing and deleting whole documents.

    Both backends (embedded, Chroma server) implement it; a store wrapper (a
    restricted view of an index) need not, so it is a protocol of its own.
    """

    def doc_ids(self) -> list[str]:
        """Every document id, in corpus order (cheaper than :meth:`list_documents`)."""
        ...

    def list_documents(self, where: DocFilter | None = None) -> list[DocumentInfo]:
        """The documents ``where`` admits (every one without it), in corpus order."""
        ...

    def delete_documents(self, doc_ids: Sequence[str]) -> IngestReport:
        """Remove these documents from every part of the index, as one commit.

        Raises ``UnknownIdError`` (deleting nothing) when any id is not indexed.
        """
        ...
