"""Filling an answer to ``k`` documents: the baselines' rule.

A search shows chunks, and several chunks of one document merge into one
answered document: ten chunks may be two documents. A baseline asked for ``k``
documents therefore searches the question again (the harness never shows a chunk
twice, so each repeat yields the next-ranked chunks of the same candidates) until
``k`` documents are in view, the question's search finds nothing new (its
candidates are exhausted), or the budget's hard cutoff is reached.

The local policy does not use this rule: it answers with the documents its
evidence supports, at most ``k``.
"""

from __future__ import annotations

from thresher.harness.actions import ToolCall
from thresher.harness.observation import Observation

__all__ = ["documents_in_view", "fill_search"]


def documents_in_view(observation: Observation) -> int:
    """How many distinct documents the chunks in view belong to."""
    return len({a.chunk.doc_id for a in observation.active})


def fill_search(observation: Observation, k: int, call_id: str) -> ToolCall | None:
    """``search_corpus(question)`` again when fewer than ``k`` documents are in view,
    or None: ``k`` reached, the last turn's search of the question showed no new chunk
    (or failed), or the budget's hard cutoff is reached. Pure."""
    if documents_in_view(observation) >= k or observation.usage.hard:
        return None
    question = observation.question
    for result in observation.last_results:
        asked = result.tool == "search_corpus" and result.arguments.get("query") == question
        if asked and (result.status != "ok" or not result.chunks):
            return None
    return ToolCall("search_corpus", {"query": question}, call_id)
