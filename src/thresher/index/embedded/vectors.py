"""A generation's vectors: ``vectors.npy`` and, for large indexes, ``ann.usearch``.

``vectors.npy`` holds every chunk's vector as the embedder gave it (float32), row
``i`` for the chunk at corpus position ``i``; readers map it (``mmap_mode="r"``) and
never write. Dense search is the exact scan of :mod:`thresher.index.exact_dense`
(deterministic) up to ``retrieval.exact_dense_max_chunks`` chunks; above, an ingest
also writes an HNSW graph over the same rows (``ann.usearch``, the ``usearch``
library, cosine metric, keys = row numbers) that a reader opens as a view of the
file and searches approximately. A search restricted to a few chunks (a narrow
filter) scores them exactly, whatever the size.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["VECTORS", "ANN", "write_vectors", "Vectors"]

VECTORS = "vectors.npy"
ANN = "ann.usearch"


def write_vectors(generation: Path, matrix: np.ndarray, *, ann: bool) -> None:
    """Write ``matrix`` (one row per chunk, corpus order) as the generation's vectors,
    and its HNSW graph when ``ann``."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    np.save(generation / VECTORS, matrix, allow_pickle=False)
    if ann and len(matrix):
        from usearch.index import Index

        index = Index(ndim=matrix.shape[1], metric="cos", dtype="f32")
        index.add(np.arange(len(matrix), dtype=np.uint64), matrix)
        index.save(str(generation / ANN))


class Vectors:
    """A read-only handle on one generation's vectors (thread-safe)."""

    def __init__(self, generation: Path) -> None:
        self.matrix: np.ndarray = np.load(generation / VECTORS, mmap_mode="r", allow_pickle=False)
        self._ann_path = generation / ANN
        self._ann: Any = None
        self._lock = threading.Lock()

    @property
    def has_ann(self) -> bool:
        """Whether the generation has an HNSW graph."""
        return self._ann_path.is_file()

    def _graph(self) -> Any:
        ann = self._ann
        if ann is None:
            with self._lock:
                if self._ann is None:
                    from usearch.index import Index

                    self._ann = Index.restore(str(self._ann_path), view=True)
                ann = self._ann
        return ann

    def nearest(self, vector: np.ndarray, n: int) -> list[tuple[int, float]]:
        """Up to ``n`` ``(row, cosine similarity)`` from the HNSW graph (approximate)."""
        found = self._graph().search(np.asarray(vector, dtype=np.float32), n, threads=1)
        return [(int(k), 1.0 - float(d)) for k, d in zip(found.keys, found.distances, strict=True)]

    def scores(self, vector: np.ndarray, rows: Sequence[int]) -> list[float]:
        """The exact cosine similarity of ``vector`` to each of ``rows``."""
        block = np.asarray(self.matrix[np.asarray(rows, dtype=np.int64)], dtype=np.float32)
        norms = np.linalg.norm(block, axis=1)
        q = np.asarray(vector, dtype=np.float32)
        q = q / (float(np.sqrt(q.dot(q))) or 1.0)
        sims = np.einsum("ij,j->i", block, q, optimize=False) / np.where(norms == 0, 1.0, norms)
        return [float(s) for s in sims]
