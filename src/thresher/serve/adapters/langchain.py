"""A LangChain retriever that runs a thresher search episode per query (``thresher[langchain]``).

Each returned ``Document`` is one ranked supporting document: its text is the
supporting chunks' text, and its metadata holds ``doc_id``, ``title``,
``rank``, ``justification``, ``chunk_ids``, ``score`` and the episode's
``exit_reason`` (and ``trace_id`` over HTTP)::

    from thresher.serve.adapters.langchain import ThresherRetriever
    docs = ThresherRetriever(index="./idx", k=5).invoke("Which town hosts ...?")
    docs = retriever.invoke("...", k=3)   # this call's number of documents
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import PrivateAttr

from thresher.serve.adapters.searcher import Searcher

__all__ = ["ThresherRetriever", "to_documents"]


def to_documents(result: dict[str, Any]) -> list[Document]:
    """LangChain documents for a thresher Result dict, best first."""
    out = []
    for d in result.get("documents") or []:
        metadata = {k: d.get(k) for k in ("doc_id", "title", "rank", "justification", "score")}
        metadata["chunk_ids"] = list(d.get("chunk_ids") or [])
        metadata["exit_reason"] = result.get("exit_reason")
        if result.get("trace_id"):
            metadata["trace_id"] = result["trace_id"]
        out.append(
            Document(page_content=d.get("text") or "", metadata=metadata, id=d.get("doc_id"))
        )
    return out


class ThresherRetriever(BaseRetriever):
    """Multi-hop retrieval by a thresher episode, as a LangChain ``BaseRetriever``.

    Attributes:
        index: an index folder or Chroma server URL (the episode runs in-process).
        url: a running ``thresher serve`` to ask instead.
        policy: the policy (default: ``local`` in-process, the server's over HTTP).
        config: settings overrides (``{"budget.total": 16384}``).
        collection_name: the server's collection (HTTP only).
        api_key: the server's key (HTTP only).
        k: how many documents each query returns (``invoke(query, k=3)`` sets one call's);
            None: the policy's own number.
    """

    index: str | None = None
    url: str | None = None
    policy: str | None = None
    config: dict[str, Any] | None = None
    collection_name: str | None = None
    api_key: str | None = None
    k: int | None = None
    _searcher: Searcher | None = PrivateAttr(default=None)

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[Document]:
        if self._searcher is None:
            self._searcher = Searcher(
                self.index, self.url, self.policy, self.config, self.collection_name, self.api_key
            )
        return to_documents(self._searcher(query, self.k if k is None else k))
