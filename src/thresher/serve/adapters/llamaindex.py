"""A LlamaIndex retriever that runs a thresher search episode per query (``thresher[llamaindex]``).

Each returned node is one ranked supporting document (``TextNode`` with the
supporting chunks' text, ``id_`` the doc id, metadata as the LangChain
adapter's); its score is the policy's score when it gives one, else ``1/rank``::

    from thresher.serve.adapters.llamaindex import ThresherLlamaRetriever
    nodes = ThresherLlamaRetriever(index="./idx").retrieve("Which town hosts ...?")
"""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from thresher.serve.adapters.searcher import Searcher

__all__ = ["ThresherLlamaRetriever", "to_nodes"]


def to_nodes(result: dict[str, Any]) -> list[NodeWithScore]:
    """LlamaIndex nodes for a thresher Result dict, best first."""
    out: list[NodeWithScore] = []
    for d in result.get("documents") or []:
        metadata = {k: d.get(k) for k in ("doc_id", "title", "rank", "justification")}
        metadata["chunk_ids"] = list(d.get("chunk_ids") or [])
        metadata["exit_reason"] = result.get("exit_reason")
        if result.get("trace_id"):
            metadata["trace_id"] = result["trace_id"]
        node = TextNode(text=d.get("text") or "", id_=str(d.get("doc_id")), metadata=metadata)
        score = d.get("score")
        rank = int(d.get("rank") or len(out) + 1)
        out.append(NodeWithScore(node=node, score=float(score) if score is not None else 1 / rank))
    return out


class ThresherLlamaRetriever(BaseRetriever):
    """Multi-hop retrieval by a thresher episode, as a LlamaIndex ``BaseRetriever``.

    Args:
        index: an index folder or Chroma server URL (the episode runs in-process).
        url: a running ``thresher serve`` to ask instead.
        policy: the policy (default: ``local`` in-process, the server's over HTTP).
        config: settings overrides (``{"budget.total": 16384}``).
        collection_name: the server's collection (HTTP only).
        api_key: the server's key (HTTP only).
        k: how many documents each query returns (None: the policy's own number).
        **kwargs: passed to LlamaIndex's ``BaseRetriever`` (callback manager, ...).
    """

    def __init__(
        self,
        index: str | None = None,
        url: str | None = None,
        policy: str | None = None,
        config: dict[str, Any] | None = None,
        collection_name: str | None = None,
        api_key: str | None = None,
        k: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._searcher = Searcher(index, url, policy, config, collection_name, api_key, k)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return to_nodes(self._searcher(query_bundle.query_str))
