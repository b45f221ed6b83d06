"""SingleShotPolicy: one hybrid search on the question, then answer (a baseline).

The simplest policy the paired protocol compares against: turn 0 searches the
question as is; while fewer than ``top_k`` documents are in view (several chunks
of one document make one answered document), it searches the question again
for the next-ranked chunks (:func:`~thresher.policies.fill.fill_search`); then it
answers with the documents of the active context in the order the searches
ranked them.
"""

from __future__ import annotations

from dataclasses import dataclass

from thresher.config import Config
from thresher.harness.actions import FinalAnswer, Proposal, RankedDocument, ToolCall
from thresher.harness.observation import Observation
from thresher.harness.policy import BasePolicy
from thresher.harness.result import rank_by_retrieval
from thresher.policies.base import DEFAULT_SYSTEM_PROMPT
from thresher.policies.factory import Factory
from thresher.policies.fill import fill_search

__all__ = ["SingleShotPolicy", "SingleShotOptions", "single_shot", "rank_active_documents"]


def rank_active_documents(observation: Observation, limit: int) -> list[RankedDocument]:
    """Documents in view, best first, by their best retrieval rank (the harness's order),
    earlier turns first: a repeated search's chunks continue the first one's list.

    Each document is justified by how it was found.
    """
    active = ((a.chunk, a.lineage) for a in observation.active)
    ranked = rank_by_retrieval(active, limit, turn_first=True)
    return [
        RankedDocument(doc, f"Rank {rank} of the search for the question.", tuple(chunk_ids))
        for doc, chunk_ids, rank in ranked
    ]


class SingleShotPolicy(BasePolicy):
    """Search once with the question, then return the top documents.

    Args:
        top_k: how many documents to return (default 10).
    """

    name = "single-shot"
    system_prompt = DEFAULT_SYSTEM_PROMPT

    def __init__(self, top_k: int = 10) -> None:
        self.top_k = top_k

    def propose(self, observation: Observation) -> Proposal:
        """Turn 0: ``search_corpus(question)``; then the same search again while fewer
        than ``top_k`` documents are in view (see :func:`~thresher.policies.fill.fill_search`);
        then the final answer."""
        if observation.turn == 0:
            call = ToolCall("search_corpus", {"query": observation.question}, "search")
            return Proposal(tool_calls=(call,), hop=0)
        more = fill_search(observation, self.top_k, f"fill{observation.turn}")
        if more is not None:
            return Proposal(tool_calls=(more,), hop=0)
        return Proposal(final=FinalAnswer(tuple(rank_active_documents(observation, self.top_k))))


@dataclass(frozen=True, slots=True)
class SingleShotOptions:
    """A single-shot policy's options.

    Attributes:
        top_k: how many documents to return.
    """

    top_k: int = 10


def _single_shot(config: Config, seed: int | None, options: SingleShotOptions) -> SingleShotPolicy:
    return SingleShotPolicy(options.top_k)


#: the factory the name ``single-shot`` stands for
single_shot = Factory(_single_shot, SingleShotOptions())
