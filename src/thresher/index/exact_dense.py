"""Exact dense search: one matrix product over every chunk's vector instead of a graph.

Scores are cosine similarities (rows and query L2-normalized), ties broken by chunk
id, so a ranking never depends on how the vectors were stored or on an approximate
graph's build: the same query over the same vectors gives the same list in every
process. The matrix is read once, on the first dense query (:class:`LazyExactDense`),
from wherever the backend keeps its vectors, and held in memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from typing import cast

import numpy as np

__all__ = ["ExactDense", "LazyExactDense"]

_SAMPLE_STEP = 4  # every 4th score bounds the cut of a search from below


class ExactDense:
    """Cosine search over every chunk's vector (rows L2-normalized)."""

    def __init__(self, ids: list[str], matrix: np.ndarray) -> None:
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} ids for a matrix of shape {matrix.shape}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self.ids = ids
        self.matrix = (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)
        self.row = {cid: i for i, cid in enumerate(ids)}
        # each row's place in id order: numpy then orders candidates by (score, id)
        # without building a Python pair per candidate (see :meth:`search`)
        self._id_rank = np.empty(len(ids), dtype=np.int64)
        self._id_rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
        self._follows: tuple[Sequence[str], bool] | None = None

    def follows(self, order: Sequence[str]) -> bool:
        """Whether row ``i`` holds the vector of ``order[i]`` for every ``i`` (so a corpus
        position is a row); checked once for the last ``order`` asked about."""
        held = self._follows
        if held is None or held[0] is not order:
            same = len(order) == len(self.ids) and all(
                a == b for a, b in zip(order, self.ids, strict=True)
            )
            held = self._follows = (order, same)
        return held[1]

    def vectors(self, ids: Collection[str]) -> dict[str, np.ndarray]:
        """The (normalized) vectors of the ``ids`` held here; unknown ids are left out."""
        return {c: self.matrix[self.row[c]] for c in ids if c in self.row}

    def rows(self, ids: Sequence[str]) -> np.ndarray | None:
        """The (normalized) vectors of ``ids``, one row each in the order given (repeats
        allowed; a copy); None when one of them is not held here."""
        found = list(map(self.row.get, ids))
        if None in found:
            return None
        return self.matrix[cast("list[int]", found)]

    def search(
        self,
        vector: np.ndarray,
        n: int,
        exclude: Collection[str] = (),
        rows: np.ndarray | None = None,
    ) -> list[tuple[str, float]]:
        """The ``n`` most similar chunks not in ``exclude``, ``(id, cosine)``, best first.

        Ties are broken by id, so the order never depends on the matrix's row order
        (at the cut too: every chunk tied with the last one kept is a candidate).
        ``rows``: the only rows that may be returned (a narrow filter): only they are
        scored, and the list is the one excluding every other row would give.
        """
        if n <= 0 or not self.ids:
            return []
        q = np.asarray(vector, dtype=np.float32)
        # np.linalg.norm of a vector is np.sqrt(q.dot(q)): the same float, without its
        # Python wrapper's checks
        q = q / (float(np.sqrt(q.dot(q))) or 1.0)
        if rows is not None:
            return self._search_rows(q, n, exclude, rows)
        # numpy's own loop, not BLAS: BLAS's thread pool, called from the harness's
        # concurrent searches, oversubscribes the cores (3 concurrent searches over 6k
        # chunks: 6.9 ms vs 1.1 ms on 2 cores), and this sum's order never depends on
        # how many threads BLAS would use
        scores = np.einsum("ij,j->i", self.matrix, q, optimize=False)
        want = min(len(self.ids), n + len(exclude))
        if want < len(self.ids):  # every chunk scoring at least the want-th best: ties kept
            top = np.flatnonzero(scores >= _kth_largest(scores, want))
        else:
            top = np.arange(len(self.ids))
        # the candidates by (score descending, id), sorted by numpy: the id's rank in id
        # order sorts as the id does, and float32 to float is exact, so this is the order
        # of sorting ``(-score, id)`` pairs; only the kept ones become Python pairs
        order = top[np.lexsort((self._id_rank[top], -scores[top]))]
        ids = self.ids
        out: list[tuple[str, float]] = []
        for i, score in zip(order.tolist(), scores[order].tolist(), strict=True):
            cid = ids[i]
            if cid in exclude:
                continue
            out.append((cid, score))
            if len(out) >= n:
                break
        return out

    def _search_rows(
        self, q: np.ndarray, n: int, exclude: Collection[str], rows: np.ndarray
    ) -> list[tuple[str, float]]:
        """:meth:`search` over ``rows`` alone: each row's cosine is the same dot product
        (the same loop over one row's floats), ordered by (score descending, id)."""
        scores = np.einsum("ij,j->i", self.matrix[rows], q, optimize=False)
        order = np.lexsort((self._id_rank[rows], -scores))
        ids = self.ids
        out: list[tuple[str, float]] = []
        for i, score in zip(rows[order].tolist(), scores[order].tolist(), strict=True):
            cid = ids[i]
            if cid in exclude:
                continue
            out.append((cid, score))
            if len(out) >= n:
                break
        return out


def _kth_largest(scores: np.ndarray, k: int) -> float:
    """The ``k``-th largest of ``scores`` (``0 < k < len(scores)``), NaN counted smallest.

    The ``k``-th largest of every 4th score is at most it, so the scores at least that
    large hold the ``k`` largest: partitioning those few (about ``4 k``) gives the same
    value as partitioning them all, in about half the time on 6k scores. (Fewer than
    ``k`` of them only when NaN scores fill the sample: then all are partitioned.)
    """
    sample = scores[::_SAMPLE_STEP]
    if len(sample) > k:
        low = np.partition(sample, len(sample) - k)[len(sample) - k]
        near = scores[scores >= low]
        if len(near) >= k:
            return float(np.partition(near, len(near) - k)[len(near) - k])
    return float(-np.partition(-scores, k - 1)[k - 1])


class LazyExactDense:
    """An :class:`ExactDense` read by ``load()`` on first use (thread-safe)."""

    def __init__(self, load: Callable[[], ExactDense]) -> None:
        self._load = load
        self._lock = threading.Lock()
        self._loaded: ExactDense | None = None

    def get(self) -> ExactDense:
        """The matrix, read on the first call.

        Once read it is published in one attribute assignment and never replaced, so
        later calls return it without taking the lock (a search's hot path, called from
        the episode's thread and from workers at once); only a call that finds nothing
        published yet locks, and checks again under the lock, so concurrent first calls
        read the vectors once.
        """
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                self._loaded = self._load()
            return self._loaded
