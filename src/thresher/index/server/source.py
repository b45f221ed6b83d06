"""A Chroma server collection as the chunk source of an index state.

:class:`ChromaSource` answers what a store asks beyond BM25
(:class:`~thresher.index.view.ChunkSource`) with ``Collection.get`` and
``Collection.query``: records by id or by ``where``, the HNSW graph's nearest
neighbours (cosine space: similarity is ``1 - distance``), stored vectors, and
``$regex`` over every chunk's text (Rust's engine, linear time). Chunks are
rebuilt by :func:`thresher.index.records.chunk_from_record`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from thresher.corpus.document import Chunk
from thresher.errors import InputError
from thresher.index.exact_dense import ExactDense
from thresher.index.records import chunk_from_record

__all__ = ["ChromaSource"]

_BATCH = 5000  # ids per get
_PAGE = 5000  # records per page when every vector is read


class ChromaSource:
    """The :class:`~thresher.index.view.ChunkSource` over one chromadb collection."""

    local = False

    def __init__(self, collection: Any) -> None:
        self.collection = collection

    def chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        out: dict[str, Chunk] = {}
        for start in range(0, len(ids), _BATCH):
            found = self.collection.get(
                ids=list(ids[start : start + _BATCH]), include=["documents", "metadatas"]
            )
            for cid, text, meta in zip(
                found["ids"], found["documents"], found["metadatas"], strict=True
            ):
                out[cid] = chunk_from_record(cid, text, meta)
        return out

    def document(self, doc_id: str) -> list[Chunk]:
        found = self.collection.get(where={"doc_id": doc_id}, include=["documents", "metadatas"])
        return [
            chunk_from_record(cid, text, meta)
            for cid, text, meta in zip(
                found["ids"], found["documents"], found["metadatas"], strict=True
            )
        ]

    def matching(self, where: Mapping[str, Any]) -> set[str]:
        try:
            found = self.collection.get(where=dict(where), include=[])
        except ValueError as exc:  # chromadb's own refusal of the where
            raise InputError(f"where refused by chromadb: {exc}") from exc
        return set(found["ids"])

    def nearest(
        self, vector: np.ndarray, n: int, ids: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        if ids is not None:
            found = self.collection.query(
                query_embeddings=[vector], ids=list(ids), n_results=n, include=["distances"]
            )
        else:
            found = self.collection.query(
                query_embeddings=[vector], n_results=n, include=["distances"]
            )
        return [
            (cid, 1.0 - float(dist))
            for cid, dist in zip(found["ids"][0], found["distances"][0], strict=True)
        ]

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), _BATCH):
            found = self.collection.get(
                ids=list(ids[start : start + _BATCH]), include=["embeddings"]
            )
            for cid, vector in zip(found["ids"], found["embeddings"], strict=True):
                out[cid] = np.asarray(vector, dtype=np.float32)
        return out

    def regex_ids(self, rust_pattern: str, pattern: str) -> list[str]:
        found = self.collection.get(where_document={"$regex": rust_pattern}, include=[])
        return list(found["ids"])

    def all_vectors(self) -> ExactDense:
        """Every id and vector of the collection, page by page."""
        ids: list[str] = []
        blocks: list[np.ndarray] = []
        offset = 0
        while True:
            page = self.collection.get(include=["embeddings"], limit=_PAGE, offset=offset)
            if not page["ids"]:
                break
            ids.extend(page["ids"])
            blocks.append(np.asarray(page["embeddings"], dtype=np.float32))
            offset += len(page["ids"])
        dim = blocks[0].shape[1] if blocks else 0
        return ExactDense(ids, np.vstack(blocks) if blocks else np.zeros((0, dim), np.float32))
