"""Retrievers for the frameworks users already build in: LangChain and LlamaIndex.

``ThresherRetriever`` (``thresher[langchain]``) is a LangChain ``BaseRetriever``;
``ThresherLlamaRetriever`` (``thresher[llamaindex]``) a LlamaIndex one. Each runs
a whole search episode per query, in-process over an index (``index=``) or
through a running ``thresher serve`` (``url=``), and returns the ranked
documents with their justification in the metadata.
"""

from __future__ import annotations

from thresher._lazy import lazy_dir, lazy_getattr

__all__ = ["Searcher", "ThresherRetriever", "ThresherLlamaRetriever"]

_WHERE = {
    "Searcher": ".searcher",
    "ThresherRetriever": ".langchain",
    "ThresherLlamaRetriever": ".llamaindex",
}

__getattr__ = lazy_getattr(__name__, _WHERE)
__dir__ = lazy_dir(__all__)
