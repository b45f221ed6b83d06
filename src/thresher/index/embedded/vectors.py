"""A generation's vectors: ``vectors.npy`` and, for large indexes, ``ann.faiss``.

``vectors.npy`` holds every chunk's vector as the embedder gave it (float32), row
``i`` for the chunk at corpus position ``i``; readers map it (``mmap_mode="r"``) and
never write. Dense search is the exact scan of :mod:`thresher.index.exact_dense`
(deterministic) up to ``retrieval.exact_dense_max_chunks`` chunks; above, an ingest
also writes an HNSW graph over the same rows, L2-normalized (``ann.faiss``: faiss's
``IndexHNSWFlat`` on inner product, ids = row numbers), which a reader loads on the
first dense search and asks approximately (one thread per search). A search
restricted to a few chunks (a narrow filter) scores them exactly, whatever the size.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["VECTORS", "ANN", "write_vectors", "Vectors"]

VECTORS = "vectors.npy"
ANN = "ann.faiss"
_LINKS = 32  # HNSW neighbours per node
_BUILD_EF = 200  # candidates kept while the graph is built
_SEARCH_EF = 128  # candidates kept while it is searched (at least twice the results asked)


def _normalized(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def write_vectors(generation: Path, matrix: np.ndarray, *, ann: bool) -> None:
    """Write ``matrix`` (one row per chunk, corpus order) as the generation's vectors,
    and its HNSW graph when ``ann``."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    np.save(generation / VECTORS, matrix, allow_pickle=False)
    if ann and len(matrix):
        import faiss

        index = faiss.IndexHNSWFlat(matrix.shape[1], _LINKS, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = _BUILD_EF
        index.add(_normalized(matrix))
        faiss.write_index(index, str(generation / ANN))


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
                    import faiss

                    self._ann = faiss.read_index(str(self._ann_path))
                ann = self._ann
        return ann

    def nearest(self, vector: np.ndarray, n: int) -> list[tuple[int, float]]:
        """Up to ``n`` ``(row, cosine similarity)`` from the HNSW graph (approximate)."""
        import faiss

        q = _normalized(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        params = faiss.SearchParametersHNSW(efSearch=max(_SEARCH_EF, 2 * n))  # type: ignore[attr-defined]  # not in its stubs
        faiss.omp_set_num_threads(1)  # one query: threads cost more than they save
        scores, rows = self._graph().search(q, n, params=params)
        return [(int(r), float(s)) for r, s in zip(rows[0], scores[0], strict=True) if r >= 0]

    def scores(self, vector: np.ndarray, rows: Sequence[int]) -> list[float]:
        """The exact cosine similarity of ``vector`` to each of ``rows``."""
        block = np.asarray(self.matrix[np.asarray(rows, dtype=np.int64)], dtype=np.float32)
        norms = np.linalg.norm(block, axis=1)
        q = np.asarray(vector, dtype=np.float32)
        q = q / (float(np.sqrt(q.dot(q))) or 1.0)
        sims = np.einsum("ij,j->i", block, q, optimize=False) / np.where(norms == 0, 1.0, norms)
        return [float(s) for s in sims]
