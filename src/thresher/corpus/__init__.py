"""Corpus: loading sources, sanitizing, chunking, stable ids."""

from thresher.corpus.document import Chunk, Document

__all__ = ["Chunk", "Document"]
