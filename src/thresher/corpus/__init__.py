"""Corpus: loading sources, sanitizing, chunking, stable ids.

The names below are imported lazily (:mod:`thresher._lazy`): a module that needs
only :class:`Document` or :class:`Chunk` (every search, through the index) does not
load the file loaders (PDF, HTML, charset detection, gitignore rules) with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thresher._lazy import lazy_dir, lazy_getattr

#: lazily imported names -> their module
_LAZY = {
    "chunk_document": "thresher.corpus.chunking",
    "Chunk": "thresher.corpus.document",
    "Document": "thresher.corpus.document",
    "chunk_id": "thresher.corpus.ids",
    "content_hash": "thresher.corpus.ids",
    "file_doc_id": "thresher.corpus.ids",
    "paragraph_doc_id": "thresher.corpus.ids",
    "LoadStats": "thresher.corpus.load_stats",
    "iter_documents": "thresher.corpus.loaders",
    "flag_injection": "thresher.corpus.sanitize",
    "sanitize_text": "thresher.corpus.sanitize",
}

__all__ = [
    "Chunk",
    "Document",
    "LoadStats",
    "chunk_document",
    "chunk_id",
    "content_hash",
    "file_doc_id",
    "flag_injection",
    "iter_documents",
    "paragraph_doc_id",
    "sanitize_text",
]

if TYPE_CHECKING:
    from thresher.corpus.chunking import chunk_document
    from thresher.corpus.document import Chunk, Document
    from thresher.corpus.ids import chunk_id, content_hash, file_doc_id, paragraph_doc_id
    from thresher.corpus.load_stats import LoadStats
    from thresher.corpus.loaders import iter_documents
    from thresher.corpus.sanitize import flag_injection, sanitize_text

__getattr__ = lazy_getattr(__name__, _LAZY)
__dir__ = lazy_dir(__all__)
