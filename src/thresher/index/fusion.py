"""Reciprocal rank fusion: several ranked lists in, one ranked list out.

The one owner of RRF in thresher: every fusion (the stores' ``hybrid_search``,
per-question views, the harness's reranking of a document's chunks, fused
rollouts) goes through :func:`rrf_score`, with the ``k`` the caller was
configured with (``config.retrieval.rrf_k``); no function here has a default ``k``.
A store's hybrid search may weigh its two retrievers (:class:`FusionWeights`: an
index's own fitted weights, :mod:`thresher.index.embedded.fitted`); equal weights of
1 are plain RRF, to the last bit.

Pure: no I/O, no state.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "rrf_score",
    "rrf",
    "Fused",
    "FusionWeights",
    "fuse_retrievers",
    "FusedScore",
    "fuse_scores",
]


def _check_k(k: int) -> None:
    if k <= 0:
        raise ValueError(f"rrf: k must be positive, got {k!r}")


def rrf_score(ranks: Iterable[int | None], k: int) -> float:
    """The fused score of one item from its 1-based rank in each list.

    score = Σ_r 1 / (k + rank_r), over the lists that hold the item (``None``: absent).

    Raises:
        ValueError: ``k`` is not positive or a rank is below 1.
    """
    _check_k(k)
    total = 0.0
    for rank in ranks:
        if rank is None:
            continue
        if rank < 1:
            raise ValueError(f"rrf: ranks are 1-based, got {rank}")
        total += 1.0 / (k + rank)
    return total


def rrf(rankings: Sequence[Sequence[str]], k: int) -> list[tuple[str, float]]:
    """Fuse ranked lists of ids with reciprocal rank fusion (Cormack et al., 2009).

    score(d) = Σ_r 1 / (k + rank_r(d))

    where the sum runs over the lists ``r`` that contain ``d`` and ``rank_r(d)``
    is the 1-based position of ``d`` in ``r``. A list that does not contain ``d``
    contributes nothing.

    Args:
        rankings: ranked lists of ids, best first. An id must not repeat within
            one list.
        k: the smoothing constant (``config.retrieval.rrf_k``; 60 in the original
            paper and the Context-1 report); must be positive.

    Returns:
        ``(id, score)`` pairs ordered by score, highest first; equal scores are
        ordered by id (ascending), so the result is deterministic.

    Raises:
        ValueError: if ``k`` is not positive or an id repeats within one list.
    """
    _check_k(k)
    # the terms are added list by list, in the order :func:`rrf_score` adds an item's
    # ranks, so the sums are the same floats (one pass, no per-item call: this runs on
    # every search)
    scores: dict[str, float] = {}
    get = scores.get
    for r, ranking in enumerate(rankings):
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"rrf: id {_first_repeat(ranking)!r} repeats in ranking {r}")
        for rank, doc in enumerate(ranking, start=k + 1):
            scores[doc] = get(doc, 0.0) + 1.0 / rank
    return [(doc, scores[doc]) for doc in _by_score(scores)]


def _by_score(scores: dict[str, float]) -> list[str]:
    """The ids of ``scores``, highest score first, equal scores by id: sorted by id, then
    stably by score (a sort with ``reverse`` keeps equal items in their order), which is
    the order of sorting ``(-score, id)`` pairs without building them."""
    order = sorted(scores)
    order.sort(key=scores.__getitem__, reverse=True)
    return order


def _first_repeat(ranking: Sequence[str]) -> str:
    seen: set[str] = set()
    for doc in ranking:
        if doc in seen:
            return doc
        seen.add(doc)
    raise AssertionError("no repeat")


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """How a hybrid search fuses BM25 and dense: weighted reciprocal rank fusion.

    score(d) = bm25 / (rrf_k + rank_bm25(d)) + dense / (rrf_k + rank_dense(d))

    Only the ratio of the two weights and ``rrf_k`` change the order; ``bm25 = dense =
    1`` is plain RRF (the default). A weight of 0 orders by the other retriever alone:
    what only the 0-weighted list holds follows, at score 0 (by id).

    Raises:
        ValueError: a negative or non-finite weight, both weights 0, or ``rrf_k`` < 1.
    """

    bm25: float = 1.0
    dense: float = 1.0
    rrf_k: int = 60

    def __post_init__(self) -> None:
        for name in ("bm25", "dense"):
            w = getattr(self, name)
            if isinstance(w, bool) or not isinstance(w, int | float) or not 0 <= w < float("inf"):
                raise ValueError(f"fusion weight {name} must be a finite number >= 0, got {w!r}")
        if self.bm25 == 0 and self.dense == 0:
            raise ValueError("fusion weights: at least one of bm25 and dense must be above 0")
        if isinstance(self.rrf_k, bool) or not isinstance(self.rrf_k, int) or self.rrf_k < 1:
            raise ValueError(f"fusion rrf_k must be a whole number >= 1, got {self.rrf_k!r}")

    @property
    def plain(self) -> bool:
        """Equal weights of 1: plain RRF."""
        return self.bm25 == 1.0 and self.dense == 1.0

    def to_dict(self) -> dict[str, Any]:
        return {"bm25": self.bm25, "dense": self.dense, "rrf_k": self.rrf_k}

    @classmethod
    def from_dict(cls, data: Any) -> FusionWeights:
        """Read :meth:`to_dict`'s form. Raises ``ValueError`` naming what is wrong."""
        if not isinstance(data, dict) or set(data) - {"bm25", "dense", "rrf_k"}:
            raise ValueError(f"fusion weights must be {{bm25, dense, rrf_k}}, got {data!r}")
        return cls(
            float(data.get("bm25", 1.0)), float(data.get("dense", 1.0)), data.get("rrf_k", 60)
        )


class Fused(NamedTuple):
    """One result of :func:`fuse_retrievers`: the id, its RRF score, and the
    1-based rank and raw score it had in each retriever's list (None if absent)."""

    key: str
    score: float
    bm25_rank: int | None
    dense_rank: int | None
    bm25_score: float | None
    dense_score: float | None


def fuse_retrievers(
    bm25: Sequence[tuple[str, float]],
    dense: Sequence[tuple[str, float]],
    k: int,
    limit: int | None = None,
    weights: tuple[float, float] = (1.0, 1.0),
) -> list[Fused]:
    """Fuse a BM25 and a dense result list by RRF, keeping each retriever's evidence.

    score(d) = w_bm25 / (k + rank_bm25(d)) + w_dense / (k + rank_dense(d)), a missing
    term contributing nothing (see :func:`rrf`); with the default weights ``(1, 1)``
    the same floats as :func:`rrf` (``1.0 / x`` either way).

    Args:
        bm25: ``(id, BM25 score)`` pairs, best first (ranks are positions, from 1).
        dense: ``(id, cosine)`` pairs, best first.
        k: the RRF constant (``config.retrieval.rrf_k``, or :attr:`FusionWeights.rrf_k`).
        limit: keep at most this many (default: all).
        weights: ``(w_bm25, w_dense)`` (:class:`FusionWeights`), each at least 0.

    Returns:
        Fused results, highest score first, equal scores ordered by id.

    Raises:
        ValueError: as :func:`rrf`.
    """
    _check_k(k)
    # :func:`rrf` on the two id lists, inlined (this runs on every search): the same
    # sums in the same order (``0.0 + x`` is ``x``), the same order of results
    b_at = {c: (rank, s) for rank, (c, s) in enumerate(bm25, start=1)}
    d_at = {c: (rank, s) for rank, (c, s) in enumerate(dense, start=1)}
    for r, (ranked, at) in enumerate(((bm25, b_at), (dense, d_at))):
        if len(at) != len(ranked):
            raise ValueError(
                f"rrf: id {_first_repeat([c for c, _ in ranked])!r} repeats in ranking {r}"
            )
    w_bm25, w_dense = weights
    scores = {c: w_bm25 / rank for rank, (c, _) in enumerate(bm25, start=k + 1)}
    get = scores.get
    for rank, (c, _) in enumerate(dense, start=k + 1):
        scores[c] = get(c, 0.0) + w_dense / rank
    order = _by_score(scores)
    if limit is not None:
        order = order[: max(limit, 0)]
    absent = (None, None)
    new = tuple.__new__  # a NamedTuple's own constructor is a Python function
    out: list[Fused] = []
    for key in order:
        b_rank, b_score = b_at.get(key, absent)
        d_rank, d_score = d_at.get(key, absent)
        out.append(new(Fused, (key, scores[key], b_rank, d_rank, b_score, d_score)))
    return out


class FusedScore(NamedTuple):
    """One result of :func:`fuse_scores`: the item (its index in the input lists),
    its RRF score, and its 1-based rank by BM25 and by dense score."""

    item: int
    score: float
    bm25_rank: int
    dense_rank: int


def fuse_scores(
    bm25_scores: Sequence[float], dense_scores: Sequence[float], k: int
) -> list[FusedScore]:
    """Rank items scored by both retrievers, fused by RRF.

    Each list is ranked by score (highest first, equal scores by index), then
    score(i) = 1 / (k + rank_bm25(i)) + 1 / (k + rank_dense(i)).

    Args:
        bm25_scores: the BM25 score of each item.
        dense_scores: the dense score of each item (same length, same items).
        k: the RRF constant (``config.retrieval.rrf_k``).

    Returns:
        One entry per item, highest fused score first, equal scores by index.

    Raises:
        ValueError: the lists differ in length, or ``k`` is not positive.
    """
    _check_k(k)
    n = len(bm25_scores)
    if len(dense_scores) != n:
        raise ValueError(f"fuse_scores: {n} BM25 scores but {len(dense_scores)} dense scores")
    by_bm25 = sorted(range(n), key=lambda i: (-bm25_scores[i], i))
    by_dense = sorted(range(n), key=lambda i: (-dense_scores[i], i))
    b_rank = {i: r for r, i in enumerate(by_bm25, start=1)}
    d_rank = {i: r for r, i in enumerate(by_dense, start=1)}
    out = [
        FusedScore(i, rrf_score((b_rank[i], d_rank[i]), k), b_rank[i], d_rank[i]) for i in range(n)
    ]
    return sorted(out, key=lambda f: (-f.score, f.item))
