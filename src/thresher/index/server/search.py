"""Server-side hybrid search on Chroma: the capability probe, the request, reading the answer.

Chroma's ``Collection.search`` runs ranking expressions on the server, among them
``Rrf`` over a dense ``Knn`` and a ``Knn`` on a sparse BM25 key. Only distributed
and hosted Chroma (Chroma Cloud) run it: local embedded Chroma and ``chroma run``
refuse it ("Search operation is not implemented for local executor"), and refuse
to create a sparse index ("Sparse vector indexing is not enabled in local").

The fused ranking contract is the same as the client-side one
(:func:`thresher.index.fusion.fuse_retrievers`): score = Σ 1/(rrf_k + rank),
ranks 1-based, each retriever cut at ``max(per_retriever, k)``, a retriever that
misses a chunk contributing nothing. Chroma's ranks are 0-based
(``return_rank=True`` gives 0, 1, 2, ...) and Chroma orders by ascending score, so
the request asks for ``Rrf(k=rrf_k + 1)`` (1/(rrf_k + 1 + rank0) = 1/(rrf_k + rank1))
and the score is negated back. A chunk one retriever missed gets the rank
:data:`ABSENT_RANK`, which adds about 10⁻⁹ (Chroma would otherwise drop it).

One request carries three searches, so every hit keeps both retrievers' evidence
as on the client-side path: the fused ranking, then the dense list (cosine
distances) and the sparse list alone, each with the same filter.

The sparse key (:data:`SPARSE_KEY`) is Chroma's own BM25 (``ChromaBm25EmbeddingFunction``
over the chunk text, computed by the chromadb client at write and query time; it
needs the ``snowballstemmer`` package). An ingest that creates a collection on a
server writes it when the server accepts a sparse index (:func:`sparse_schema`);
its scores differ from the BM25 side index's (title + text), its ranks play the
same part in the fusion.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from thresher.index.fusion import Fused

__all__ = [
    "ABSENT_RANK",
    "TIE_SLACK",
    "SPARSE_KEY",
    "sparse_unavailable",
    "sparse_schema",
    "hybrid_rank",
    "hybrid_searches",
    "read_hybrid",
    "probe_search",
]

#: the rank of a chunk one retriever did not return: 1/(k + 10⁹) ≈ 0
ABSENT_RANK = 1e9
#: fused results fetched past ``k`` so that ties at the cut are ordered by id, as here
TIE_SLACK = 10
#: the metadata key of the sparse BM25 vectors an ingest writes (header ``sparse_key``)
SPARSE_KEY = "thresher_bm25"


def sparse_unavailable() -> str | None:
    """Why this machine cannot compute Chroma's BM25 sparse vectors, or None when it can."""
    import importlib.util

    if importlib.util.find_spec("snowballstemmer") is None:
        return (
            "Chroma's BM25 sparse vectors need the snowballstemmer package here "
            "(pip install snowballstemmer)"
        )
    return None


def sparse_schema() -> Any:
    """The chunk collection's schema on a server with sparse indexes: dense vectors in
    cosine space, and :data:`SPARSE_KEY` filled by Chroma's BM25 from the chunk text."""
    from chromadb import K, Schema, SparseVectorIndexConfig, VectorIndexConfig
    from chromadb.utils.embedding_functions import ChromaBm25EmbeddingFunction

    schema = Schema()
    schema.create_index(config=VectorIndexConfig(space="cosine"))
    schema.create_index(
        config=SparseVectorIndexConfig(
            source_key=K.DOCUMENT.name,
            embedding_function=ChromaBm25EmbeddingFunction(),
            bm25=True,
        ),
        key=SPARSE_KEY,
    )
    return schema


def hybrid_rank(
    vector: Iterable[float], query: str, sparse_key: str, rrf_k: int, depth: int
) -> Any:
    """The ``Rrf`` expression: dense ``Knn`` and sparse ``Knn`` (by ``query`` text), 0-based ranks.

    Args:
        vector: the query's dense embedding (the index's embedder).
        query: the query text (Chroma embeds it with the sparse key's BM25 function).
        sparse_key: the collection's sparse BM25 key.
        rrf_k: ``config.retrieval.rrf_k`` (sent as ``rrf_k + 1``; module docstring).
        depth: how many results each retriever contributes.
    """
    from chromadb import Knn, Rrf

    dense = Knn(query=[float(x) for x in vector], return_rank=True, limit=depth,
                default=ABSENT_RANK)  # fmt: skip
    sparse = Knn(query=query, key=sparse_key, return_rank=True, limit=depth, default=ABSENT_RANK)
    return Rrf([dense, sparse], k=rrf_k + 1)


def hybrid_searches(
    vector: Iterable[float],
    query: str,
    sparse_key: str,
    rrf_k: int,
    depth: int,
    k: int,
    exclude: Collection[str] = (),
) -> list[Any]:
    """The three searches of one server-side hybrid request: fused, dense alone, sparse alone.

    Args:
        vector, query, sparse_key, rrf_k, depth: as :func:`hybrid_rank`.
        k: fused results wanted (``k + TIE_SLACK`` are fetched).
        exclude: chunk ids filtered out before any ranking (``#id`` not in).
    """
    from chromadb import K, Knn, Search

    where = K.ID.not_in(sorted(set(exclude))) if exclude else None
    dense_vector = [float(x) for x in vector]
    dense = Knn(query=dense_vector, limit=depth)
    sparse = Knn(query=query, key=sparse_key, limit=depth)
    return [
        Search(where=where, rank=hybrid_rank(dense_vector, query, sparse_key, rrf_k, depth),
               limit=k + TIE_SLACK, select=[K.SCORE.name]),
        Search(where=where, rank=dense, limit=depth, select=[K.SCORE.name]),
        Search(where=where, rank=sparse, limit=depth, select=[K.SCORE.name]),
    ]  # fmt: skip


def _column(result: Any, name: str, i: int) -> list[Any]:
    values = result[name][i] if result.get(name) and len(result[name]) > i else None
    return list(values or [])


def read_hybrid(result: Any, k: int) -> list[Fused]:
    """The fused hits of a :func:`hybrid_searches` answer, best first, ties by id, at most ``k``.

    Each carries the 1-based rank and score it had in the dense and the sparse list
    (dense: ``1 - cosine distance``; sparse: Chroma's score negated, higher is
    better), None where that list did not hold it.
    """
    fused = sorted(
        ((cid, -float(s)) for cid, s in zip(_column(result, "ids", 0),
                                            _column(result, "scores", 0), strict=True)),
        key=lambda p: (-p[1], p[0]),
    )[:k]  # fmt: skip
    lists = []
    for i, score_of in ((1, lambda s: 1.0 - s), (2, lambda s: -s)):
        ids, scores = _column(result, "ids", i), _column(result, "scores", i)
        lists.append({c: (r, score_of(float(s))) for r, (c, s) in
                      enumerate(zip(ids, scores, strict=True), start=1)})  # fmt: skip
    dense, sparse = lists
    out = []
    for cid, score in fused:
        d_rank, d_score = dense.get(cid, (None, None))
        b_rank, b_score = sparse.get(cid, (None, None))
        out.append(Fused(cid, score, b_rank, d_rank, b_score, d_score))
    return out


def probe_search(collection: Any, dimension: int, rrf_k: int) -> str | None:
    """Run a minimal ``search`` (``Rrf`` over one dense ``Knn``, limit 1); None when the
    server runs it, else the server's refusal, word for word (the first line).

    Transport failures are not a refusal: they propagate (``BackendUnavailableError``
    from a guarded collection).
    """
    from chromadb import Knn, Rrf, Search
    from chromadb.errors import ChromaError

    unit = [1.0] + [0.0] * (max(dimension, 1) - 1)
    probe = Search(rank=Rrf([Knn(query=unit, return_rank=True, limit=1)], k=rrf_k + 1), limit=1)
    try:
        collection.search(probe)
    except (ChromaError, ValueError, NotImplementedError, AttributeError) as exc:
        text = str(exc).strip()
        return text.splitlines()[0] if text else type(exc).__name__
    return None
