"""The index: the Store protocol, the backend registry (folder | http(s)://),
the embedded and Chroma server backends, ingestion, and the parts every backend
shares.

Layout, lowest first (a lower part never imports a higher one; checked by
``tests/architecture/test_layering.py``):

- top-level modules shared by every backend: ``store`` (the protocol and its
  records), ``records``, ``filters``, ``fusion``, ``bm25`` and ``id_table`` (the
  BM25 index), ``exact_dense``, ``manifest`` (what an index records per document);
- ``embed/`` (embedders, the MiniLM graph) and ``grep/`` (guard, syntax, plan,
  side index, matched lines);
- ``ingest/``: what ingestion into either backend shares; ``view`` (one index
  state and its chunk source), ``listing`` and ``view_store`` (the store over a
  view that both backends subclass);
- ``embedded/``: the local-folder backend, thresher's own files (generations,
  records, vectors, ingest, delete);
- ``server/``: the Chroma server backend (the only user of chromadb);
- top-level ``backends`` (the registry: ``open_store``, ``ingest``), and ``handles`` (open stores kept for reuse).

Names are imported lazily, so ``import thresher.index`` loads no backend.
Stores are opened with :func:`open_store` and built with
``thresher.index.backends.ingest`` (also ``thresher.ingest``; not re-exported
here: the name would clash with the subpackage ``ingest``).
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
    "EmbeddedStore": ".embedded.store",
    "open_store": ".backends",
    "Backend": ".backends",
    "backend_for": ".backends",
    "register_backend": ".backends",
    "Bm25Index": ".bm25",
    "rrf": ".fusion",
    "fuse_retrievers": ".fusion",
    "fuse_scores": ".fusion",
    "check_pattern": ".grep.guard",
    "Embedder": ".embed.embedder",
    "MiniLMEmbedder": ".embed.embedder",
    "OpenAIEmbedder": ".embed.embedder",
    "SentenceTransformerEmbedder": ".embed.embedder",
    "get_embedder": ".embed.embedder",
}


__getattr__ = lazy_getattr(__name__, _WHERE)
__dir__ = lazy_dir(__all__)
