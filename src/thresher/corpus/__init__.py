"""Corpus: loading sources, sanitizing, chunking, stable ids."""

from thresher.corpus.chunking import chunk_document
from thresher.corpus.document import Chunk, Document
from thresher.corpus.ids import chunk_id, content_hash, file_doc_id, paragraph_doc_id
from thresher.corpus.loaders import LoadStats, iter_documents
from thresher.corpus.sanitize import flag_injection, sanitize_text

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
