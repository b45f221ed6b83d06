"""Reciprocal rank fusion: several ranked lists in, one ranked list out.

Pure: no I/O, no state. Used by every backend's ``hybrid_search``.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["rrf"]


def rrf(rankings: Sequence[Sequence[str]], k: int = 60) -> list[tuple[str, float]]:
    """Fuse ranked lists of ids with reciprocal rank fusion (Cormack et al., 2009).

    score(d) = Σ_r 1 / (k + rank_r(d))

    where the sum runs over the lists ``r`` that contain ``d`` and ``rank_r(d)``
    is the 1-based position of ``d`` in ``r``. A list that does not contain ``d``
    contributes nothing.

    Args:
        rankings: ranked lists of ids, best first. An id must not repeat within
            one list.
        k: the smoothing constant (60 in the original paper and the Context-1
            report); must be positive.

    Returns:
        ``(id, score)`` pairs ordered by score, highest first; equal scores are
        ordered by id (ascending), so the result is deterministic.

    Raises:
        ValueError: if ``k`` is not positive or an id repeats within one list.
    """
    if k <= 0:
        raise ValueError(f"rrf: k must be positive, got {k}")
    scores: dict[str, float] = {}
    for r, ranking in enumerate(rankings):
        seen: set[str] = set()
        for rank, doc in enumerate(ranking, start=1):
            if doc in seen:
                raise ValueError(f"rrf: id {doc!r} repeats in ranking {r}")
            seen.add(doc)
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
