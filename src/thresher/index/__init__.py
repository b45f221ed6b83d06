"""The index: the Store protocol, the backend registry (folder | http(s)://),
the embedded and Chroma server backends, ingestion, and the parts every backend
shares (BM25 side index, RRF fusion, grep guard, embedders).

Names are imported lazily, so ``import thresher.index`` does not load chromadb.
Stores are opened with :func:`open_store` and built with
``thresher.index.backends.ingest`` (also ``thresher.ingest``; not re-exported
here: the name would clash with the module ``thresher.index.ingest``).
"""

from __future__ import annotations

from thresher._lazy import lazy_dir, lazy_getattr

__all__ = [
    "Store",
    "Hit",
    "GrepResult",
    "IngestReport",
    "StoreStats",
    "EmbeddedStore",
    "open_store",
    "Backend",
    "backend_for",
    "register_backend",
    "Bm25Index",
    "rrf",
    "fuse_retrievers",
    "fuse_scores",
    "check_pattern",
    "Embedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "get_embedder",
]

_WHERE = {
    "Store": ".store",
    "Hit": ".store",
    "GrepResult": ".store",
    "IngestReport": ".store",
    "StoreStats": ".store",
    "EmbeddedStore": ".embedded",
    "open_store": ".backends",
    "Backend": ".backends",
    "backend_for": ".backends",
    "register_backend": ".backends",
    "Bm25Index": ".bm25",
    "rrf": ".fusion",
    "fuse_retrievers": ".fusion",
    "fuse_scores": ".fusion",
    "check_pattern": ".grep",
    "Embedder": ".embedder",
    "MiniLMEmbedder": ".embedder",
    "OpenAIEmbedder": ".embedder",
    "SentenceTransformerEmbedder": ".embedder",
    "get_embedder": ".embedder",
}


__getattr__ = lazy_getattr(__name__, _WHERE)
__dir__ = lazy_dir(__all__)
