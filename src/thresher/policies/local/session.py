"""One episode of the local policy: a session owning that episode's state.

:meth:`LocalPolicy.start <thresher.policies.local.policy.LocalPolicy.start>`
returns a :class:`LocalSession`; the harness drives it for one episode, on
that episode's thread: ``propose`` each turn, ``rerank`` for each search in
call order. Its turns:

0. the planner's first calls (the question's search, a clue chain's first clue,
   greps for the question's names and codes);
1. hops: the planner's follow-ups, until it has none, ``max_hops`` is reached,
   the soft budget threshold is near, or the stop model says the evidence is in
   hand;
2. fill (the baselines only, ``fill=True``): the question searched again while
   fewer than the answer's ``final_k`` documents are in view
   (:func:`~thresher.policies.fill.fill_search`);
3. prune: what the answer ranker would not keep (skipped with ``prune=False``);
4. final: the answer ranker's documents, justified and scored.

Everything the episode learns lives in its :class:`~.memory.EpisodeMemory`
(what it derives from chunk text alone, in the index generation's reader memo
when the harness hands it one);
the parts it calls hold only their settings, so sessions of one policy run
side by side without sharing anything but read-only models.
"""

from __future__ import annotations

from typing import Any

from thresher.harness.actions import FinalAnswer, Proposal, ToolCall
from thresher.harness.observation import Observation
from thresher.harness.policy import BasePolicy, RerankRequest
from thresher.index.reader_memo import ReaderMemo
from thresher.index.store import Hit
from thresher.policies.fill import fill_search
from thresher.policies.local.answer import AnswerRanker
from thresher.policies.local.candidate import QuestionContext
from thresher.policies.local.constants import DEFAULT_CONSTANTS, Constants
from thresher.policies.local.memory import EpisodeMemory
from thresher.policies.local.planner import Planner
from thresher.policies.local.scoring import CandidateScorer

__all__ = ["LocalSession"]


class LocalSession(BasePolicy):
    """The local policy's session for one episode (a harness
    :class:`~thresher.harness.policy.BasePolicy` that proposes, reranks, runs in
    process and keeps its derivations in the reader memo).

    Args:
        question: the episode's question.
        name: the policy's name (recorded in the trace).
        system_prompt: recorded in the trace (the local policy sends no prompt).
        scorer: the candidate scorer.
        planner: the planner of follow-ups (and its stop model).
        answer: the answer ranker.
        prune: prune before answering (False: the no-prune baseline).
        fill: search the question again until the answer's ``final_k`` documents are
            in view (the baselines: ``k`` documents whenever the corpus has them).
        constants: the policy's constants (the episode's memory reads them).
    """

    #: no model call and no I/O: the harness calls ``propose`` on the episode's thread
    in_process = True

    def __init__(
        self,
        question: str,
        *,
        name: str,
        system_prompt: str,
        scorer: CandidateScorer,
        planner: Planner,
        answer: AnswerRanker,
        prune: bool,
        fill: bool = False,
        constants: Constants = DEFAULT_CONSTANTS,
    ) -> None:
        self.name = name
        self.system_prompt = system_prompt
        self.memory = EpisodeMemory(QuestionContext.of(question), constants=constants)
        self.scorer = scorer
        self.planner = planner
        self.answer = answer
        self.prune = prune
        self.fill = fill

    def tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def use_reader_memo(self, memo: ReaderMemo) -> None:
        """Keep what this episode derives from chunk text alone in the index
        generation's ``memo`` (the harness's ``use_reader_memo`` hook;
        see :mod:`~thresher.policies.local.memo`)."""
        self.memory.text.shared = memo

    def propose(self, observation: Observation) -> Proposal:
        """The next turn's calls, prune or final answer (see the module docstring)."""
        memory = self.memory
        if observation.turn == 0:
            return self.planner.first_turn(memory)
        self.scorer.adopt(memory, observation)
        ranked = self.scorer.rank_cached(memory, observation)
        if memory.phase == "search":
            proposal = self.planner.next_hop(memory, observation, ranked)
            if proposal is not None:
                return proposal
            memory.phase = "fill" if self.fill else "prune" if self.prune else "final"
        if memory.phase == "fill":
            more = fill_search(observation, self.answer.final_k, f"f{observation.turn}")
            if more is not None:
                return Proposal(tool_calls=(more,), hop=memory.hop)
            memory.phase = "prune" if self.prune else "final"
        if memory.phase == "prune":
            memory.phase = "final"
            prune = set(self.answer.prune_ids(memory, observation, ranked))
            if prune:
                # named by what stays (a few ids, not every dropped one): this policy
                # never recalls, so its transcript need not list what it let go
                keep = [a.chunk_id for a in observation.active if a.chunk_id not in prune]
                call = ToolCall("prune_chunks", {"keep": keep}, "prune")
                return Proposal(tool_calls=(call,), hop=memory.hop)
        self.scorer.record_final(memory, ranked)
        documents = self.answer.final(memory, observation, ranked)
        return Proposal(final=FinalAnswer(tuple(documents)))

    def rerank(self, request: RerankRequest) -> list[Hit]:
        """Score a ``search_corpus`` call's candidates; the best few, best first."""
        return self.scorer.rerank(self.memory, request)

    def rank_read(self, request: RerankRequest) -> list[Hit]:
        """The chunks to show of a read of a page a link names: its few nearest the
        question (:meth:`~.scoring.CandidateScorer.rank_read`)."""
        return self.scorer.rank_read(self.memory, request)
