"""What the harness knows about a policy: one required protocol and its declared capabilities.

The harness drives a policy, so the harness owns the contract. A policy is
anything with a ``name``, a ``system_prompt``, ``tool_schemas()`` and
``propose(observation)``: :class:`Policy`. A policy may also *declare* optional
capabilities, each a protocol of its own that the harness checks with
``isinstance`` and calls itself (never a hidden hook found by attribute lookup).

A policy that keeps state across the turns of an episode is an
:class:`EpisodicPolicy` instead: the harness calls ``start(question)`` once per
episode and drives the :class:`Policy` it returns (a *session*, owning that
episode's state) for every turn, and as the episode's reranker when the session
declares :class:`SearchReranker`. One such policy object serves any number of
episodes, one after another or at once, since no episode's state lives on it.

The capabilities:

* :class:`SearchReranker`: reorders (and may cut) the candidates of every
  ``search_corpus`` call before the harness cuts them to the budget. It gets a
  :class:`RerankRequest`, whose ``score_against_question`` scores chunks
  against the episode's question *through the harness* (the policy never
  holds the Store).
* :class:`DeclaresPromptCost`: the tokens its model's chat template adds
  (:class:`~thresher.tokens.PromptCost`); the harness counts the transcript with
  them and calibrates the text ratio from each reported usage.
* :class:`UsesReaderMemo`: a session that keeps what it derives from chunk text
  in the store's per-generation :class:`~thresher.index.reader_memo.ReaderMemo`
  (when the store keeps one: :class:`~thresher.index.store.KeepsReaderMemo`), so
  the next episode on that index does not derive it again.
* :class:`BoundsBudget`: a policy whose model holds at most so many tokens (an
  LLM server's context less the reply); before the first turn the harness lowers
  a ``budget.total`` left at its default to that ceiling, with a notice, and
  leaves a given one for the policy to refuse
  (:func:`~thresher.harness.opening.fit_budget`).
* :class:`ChoosesRetrievalMode`: the single-retriever baselines (``bm25``,
  ``dense``) set ``retrieval_mode``; :func:`~thresher.harness.episode.run_episode`
  applies it to the episode's config, so every caller (API, CLI, eval,
  tuning, benches) runs the same episode for the same policy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from thresher.config import RetrievalMode
from thresher.index.reader_memo import ReaderMemo
from thresher.index.store import Hit
from thresher.tokens import PromptCost

if TYPE_CHECKING:
    from thresher.harness.actions import MalformedReply, Proposal
    from thresher.harness.observation import Observation

__all__ = [
    "Policy",
    "EpisodicPolicy",
    "SearchReranker",
    "RerankRequest",
    "ChoosesRetrievalMode",
    "InProcessPolicy",
    "CancelsCalls",
    "DeclaresPromptCost",
    "BoundsBudget",
    "BudgetCeiling",
    "QuestionScorer",
    "UsesReaderMemo",
]

#: ``chunk_ids -> [(bm25, cosine), ...]``: scores of chunks against the episode's question
QuestionScorer = Callable[[Sequence[str]], list[tuple[float, float]]]


@runtime_checkable
class Policy(Protocol):
    """Proposes each turn's tool calls, a prune, or the final answer.

    Attributes:
        name: a short identifier recorded in the trace.
        system_prompt: the first message of the transcript (counted in the budget).
    """

    name: str
    system_prompt: str

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tool schemas the policy sends its model (counted in the budget); may be empty."""
        ...

    def propose(self, observation: Observation) -> Proposal | MalformedReply:
        """The next proposal, or a ``MalformedReply`` the harness refuses with its message.

        May raise; the harness then ends with ``policy_error`` (``endpoint_unavailable``
        for a ``BackendUnavailableError``).
        """
        ...


@runtime_checkable
class EpisodicPolicy(Protocol):
    """A policy whose episodes each get a session of their own.

    ``run_episode`` calls ``start(question)`` once, before the first turn, and the
    returned :class:`Policy` proposes every turn of that episode (its name, system
    prompt and tool schemas are the ones recorded); the capabilities it declares
    (:class:`SearchReranker`, :class:`InProcessPolicy`, ...) are the episode's.

    Attributes:
        name: a short identifier (its sessions' name).
    """

    name: str

    def start(self, question: str) -> Policy:
        """A fresh session for one episode of ``question``; may raise (the episode then
        ends with ``policy_error``)."""
        ...


@dataclass(frozen=True, slots=True)
class RerankRequest:
    """The candidates of one ``search_corpus`` call, handed to a :class:`SearchReranker`.

    Attributes:
        query: the call's query.
        question: the episode's question.
        hits: fused candidates, best first, chunks seen this episode already excluded;
            each carries its BM25 and dense ranks and scores for ``query``.
        score_against_question: BM25 and cosine scores of chunk ids against
            ``question`` (one Store read through the harness per call; use it for
            the few candidates that need it).
    """

    query: str
    question: str
    hits: tuple[Hit, ...]
    score_against_question: QuestionScorer


@runtime_checkable
class SearchReranker(Protocol):
    """A policy that reorders the candidates of every ``search_corpus`` call.

    The harness calls ``rerank`` on the episode's own thread, in the order the
    turn proposed its searches, each once its fetch is in (the fetches run
    concurrently, the reranks do not): a reranker needs no lock.
    """

    def rerank(self, request: RerankRequest) -> Sequence[Hit]:
        """The hits to show, best first (a subset of ``request.hits``; may be shorter)."""
        ...


@runtime_checkable
class UsesReaderMemo(Protocol):
    """A policy (or session) that keeps what it derives from chunks in the store's
    per-generation memo: the harness calls ``use_reader_memo`` once, before the first
    turn, when the store keeps one (:class:`~thresher.index.store.KeepsReaderMemo`)."""

    def use_reader_memo(self, memo: ReaderMemo) -> None:
        """Keep this episode's derivations of chunk text in ``memo`` (shared with other
        episodes on the same index generation: never change a value read from it)."""
        ...


@runtime_checkable
class InProcessPolicy(Protocol):
    """A policy whose ``propose`` is bounded work in this process (no model call, no
    I/O), when ``in_process`` is true.

    The harness calls it on the episode's own thread rather than handing each turn
    to a worker and waiting: for a policy whose turn takes a few milliseconds the
    two thread switches cost more than the turn (a local-policy episode of 6.5
    turns ran 10-15% faster). Its time still counts toward the wall time, but a
    call is not cut short, and a stop request is seen between turns.
    """

    in_process: bool


@runtime_checkable
class CancelsCalls(Protocol):
    """A policy that can stop the work it started for an observation (the LLM policy:
    it closes the model call's connection, so the server stops generating).

    The harness calls ``cancel(observation)`` when it abandons a reply: the wall
    time ran out, or the caller stopped the episode.
    """

    def cancel(self, observation: Observation) -> None:
        """Stop the work started for ``observation`` (no-op when there is none)."""
        ...


@runtime_checkable
class ChoosesRetrievalMode(Protocol):
    """A policy whose ``search_corpus`` runs one retriever (``bm25``, ``dense``) or ``hybrid``."""

    retrieval_mode: RetrievalMode


@runtime_checkable
class DeclaresPromptCost(Protocol):
    """A policy that knows what its model's chat template adds to the transcript.

    The harness counts the transcript with ``prompt_cost`` (per message, per tool
    call, per tool result, the tools preamble) and fits the ratio of the model's
    vocabulary to its own from every ``usage.prompt_tokens`` the policy reports, so
    the count before the first reply is close and later counts follow the server.
    """

    prompt_cost: PromptCost


@dataclass(frozen=True, slots=True)
class BudgetCeiling:
    """The largest ``budget.total`` a policy's model holds, and why (for the notice)."""

    tokens: int
    reason: str


@runtime_checkable
class BoundsBudget(Protocol):
    """A policy whose model can be sent at most so many tokens (an LLM served with a
    fixed context: the context less the reply it asks room for)."""

    def budget_ceiling(self) -> BudgetCeiling | None:
        """The ceiling, or None when unknown (a server that reports no context size).

        Called on the episode's thread before its first turn; it may ask a server
        (once per policy object is enough: the answer does not change). An error it
        raises leaves the budget as it is (the first turn reports the failure)."""
        ...
