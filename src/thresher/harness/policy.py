"""What the harness knows about a policy: one base class with every hook, and how it reads them.

A policy author subclasses :class:`BasePolicy` and reads it in one place: it
sets ``name`` and ``system_prompt``, overrides ``propose`` (or ``start``, for a
session per episode), and overrides any of the other hooks it needs; each
hook's docstring says what the harness does with it and what the default does.
A hook a subclass does not override declares nothing: the harness skips it
(it never calls a default ``rerank``, ``rank_read``, ``start``, ``use_reader_memo``,
``cancel`` or ``budget_ceiling``, and reads the attribute defaults as "none").

The harness accepts any :class:`Policy`: an object that is not a ``BasePolicy``
is read by duck typing, as with the optional protocols of earlier versions
(``name``, ``system_prompt``, ``tool_schemas()`` and ``propose(observation)``
suffice; a hook it has is one it declares). The harness reads the hooks only
through the functions at the end of this module (:func:`starts_sessions`,
:func:`reranker_of`, ...), so the rule for what counts as declared lives here.

A policy's state across the turns of an episode belongs in a session: a policy
that overrides ``start(question)`` gets it called once per episode and the
harness drives the :class:`Policy` it returns for every turn. One such policy
object serves any number of episodes, one after another or at once. Which object
a hook is read on: ``retrieval_mode`` and ``fitted_fusion`` on the policy given, then
on the one its ``for_store`` returns; ``prompt_cost`` on the policy given;
``start`` on the policy given; every other hook on what drives the episode (the
session, when there is one, else the policy given).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from thresher.config import RetrievalMode
from thresher.index.reader_memo import ReaderMemo
from thresher.index.store import Hit
from thresher.tokens import PromptCost

if TYPE_CHECKING:
    from thresher.harness.actions import MalformedReply, Proposal
    from thresher.harness.observation import Observation
    from thresher.index.store import Store

__all__ = [
    "BasePolicy",
    "Policy",
    "SearchReranker",
    "RerankRequest",
    "BudgetCeiling",
    "QuestionScorer",
    "starts_sessions",
    "session_for",
    "policy_for_store",
    "policy_info_of",
    "reranker_of",
    "read_ranker_of",
    "retrieval_mode_of",
    "fitted_fusion_of",
    "prompt_cost_of",
    "budget_ceiling_of",
    "runs_in_process",
    "cancel_work",
    "hand_reader_memo",
]

#: ``chunk_ids -> [(bm25, cosine), ...]``: scores of chunks against the episode's question
QuestionScorer = Callable[[Sequence[str]], list[tuple[float, float]]]


@runtime_checkable
class Policy(Protocol):
    """The least the harness drives: what a policy must have, duck typed.

    Every :class:`BasePolicy` is one; so is any object with these four members
    (its other hooks, if it has any, are read as :class:`BasePolicy` documents them).

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
        """The next proposal, or a ``MalformedReply`` the harness refuses with its message."""
        ...


@dataclass(frozen=True, slots=True)
class RerankRequest:
    """The candidates of one ``search_corpus`` call, handed to :meth:`BasePolicy.rerank`
    (or of one ``read_document`` call, handed to :meth:`BasePolicy.rank_read`: ``query``
    is then the document id).

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
    """What reorders the candidates of every ``search_corpus`` call: a policy that
    overrides :meth:`BasePolicy.rerank`, or a reranker a caller gives
    :func:`~thresher.harness.episode.run_episode` (``reranker=``)."""

    def rerank(self, request: RerankRequest) -> Sequence[Hit]:
        """The hits to show, best first (a subset of ``request.hits``; may be shorter)."""
        ...


@dataclass(frozen=True, slots=True)
class BudgetCeiling:
    """The largest ``budget.total`` a policy's model holds, and why (for the notice)."""

    tokens: int
    reason: str


class BasePolicy:
    """The class a policy subclasses: every hook the harness reads, each with its default.

    Required: ``name``, ``system_prompt`` and :meth:`propose` (a policy that
    overrides :meth:`start` leaves ``propose`` to its sessions). Everything else is
    optional; a hook left as it is here declares nothing and the harness behaves as
    for a policy without it. ``in_process`` and :meth:`use_reader_memo` exist only
    for speed: they never change what an episode does.

    Attributes:
        name: a short identifier recorded in the trace (``episode_start.policy``).
        system_prompt: the first message of the transcript, counted in the budget
            (a policy without a model may use
            ``thresher.policies.base.DEFAULT_SYSTEM_PROMPT``).
        retrieval_mode: ``bm25`` or ``dense`` runs every ``search_corpus`` of the
            episode with that one retriever, ``hybrid`` with both; the harness sets
            the episode's ``retrieval.mode`` to it whoever runs the episode (API, CLI,
            eval, benches), and records it in ``episode_start.config``. Default None:
            the config's mode. Read on the policy given, then on the one its
            ``for_store`` returns (which rules when it differs).
        fitted_fusion: False fuses every hybrid ``search_corpus`` of the episode by
            plain RRF, whatever fusion weights the index keeps (a policy whose learned
            scorer reads the fused ranks it was trained on); the harness then sets
            the episode's ``retrieval.fitted_fusion`` to False and records it.
            Default None: as the config says. Read as ``retrieval_mode`` is.
        prompt_cost: the tokens the policy's model's chat template adds
            (:class:`~thresher.tokens.PromptCost`: per message, per tool call, per
            tool result, the tools preamble); the harness counts the transcript with
            them and fits the ratio of the model's vocabulary to its own from every
            ``usage.prompt_tokens`` a proposal reports, so the budget follows the
            server. Default None: the harness's own count. Read on the policy given.
        in_process: (speed only) True when :meth:`propose` is bounded work in this
            process (no model call, no I/O): the harness calls it on the episode's
            own thread instead of handing each turn to a worker and waiting, which
            for a turn of a few milliseconds costs more than the turn. Its time
            still counts toward the wall time, but the call is not cut short, and a
            stop request is seen between turns. Default False: a worker thread.
        info: what the harness records of the policy beyond its name in the
            episode's start (``episode_start.policy_info``, JSON-safe), e.g. which
            weights it runs. Read on the episode's policy (the one :meth:`for_store`
            returned, not its session). Default None: nothing recorded.
    """

    name: str
    system_prompt: str
    retrieval_mode: RetrievalMode | None = None
    fitted_fusion: bool | None = None
    prompt_cost: PromptCost | None = None
    in_process: bool = False
    info: dict[str, Any] | None = None

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tool schemas the policy sends its model: the harness counts them in the
        budget and records them in ``episode_start``. Default: none (a policy without a
        model sends no tools)."""
        return []

    def propose(self, observation: Observation) -> Proposal | MalformedReply:
        """The next turn: tool calls, a prune, or the final answer.

        The harness validates the proposal against its own rules and applies it; a
        :class:`~thresher.harness.actions.MalformedReply` is refused with its message
        (shown at the next turn). It may raise: the episode then ends with
        ``policy_error`` (``endpoint_unavailable`` for a ``BackendUnavailableError``).
        Called on a worker thread (the episode's own with ``in_process``), within the
        episode's wall time. Default: raises ``NotImplementedError`` (override it, or
        :meth:`start`).
        """
        raise NotImplementedError(
            f"{type(self).__name__} overrides neither propose(observation) nor "
            "start(question): override propose to answer each turn"
        )

    def for_store(self, store: Store) -> Policy:
        """The policy to run one episode over ``store`` (the episode's store, pinned on its
        generation): e.g. this policy with weights kept with that index.

        When overridden, the harness calls it once per episode, before :meth:`start`,
        and the policy it returns (this one, or another) is the episode's: its
        ``start``, hooks and ``info`` are the ones used, while ``retrieval_mode`` and
        ``prompt_cost`` stay this policy's. It may raise: the episode then ends with
        ``policy_error``. Default (not called): this policy.
        """
        return self

    def start(self, question: str) -> Policy:
        """A fresh session for one episode of ``question``, owning that episode's state.

        When overridden, the harness calls it once per episode, before the first turn,
        and drives the :class:`Policy` it returns for every turn: the session's name,
        system prompt and tool schemas are the ones recorded, and its hooks (all but
        ``retrieval_mode`` and ``prompt_cost``) are the episode's. It may raise: the
        episode then ends with ``policy_error``. Default (not called by the harness):
        this policy itself drives every episode, so it must keep no episode's state.
        """
        return self

    def rerank(self, request: RerankRequest) -> Sequence[Hit]:
        """The candidates of one ``search_corpus`` call to show, best first: a subset of
        ``request.hits``, may be shorter; the harness then cuts them to the call's
        token budget.

        When overridden, the harness calls it on the episode's own thread, in the
        order the turn proposed its searches, each once its fetch is in (the fetches
        run concurrently, the reranks do not: no lock needed). A rerank that raises
        fails its call only (``tool_error`` for a typed error, else ``tool_failed``).
        A caller's ``reranker=`` takes its place. Default (not called): the fused
        order.
        """
        return request.hits

    def rank_read(self, request: RerankRequest) -> Sequence[Hit]:
        """The chunks of one ``read_document`` call to show, best first: a subset of
        ``request.hits`` (the document's chunks not in view, ranked against the
        current query), may be shorter; ``request.query`` is the document id. The
        harness then cuts them to the room left, as any read.

        When overridden, the harness calls it as it calls :meth:`rerank` (on the
        episode's own thread, in call order; a raise fails its call only), whatever
        reranker a caller gave for searches. Default (not called): every chunk, in
        the harness's order.
        """
        return request.hits

    def budget_ceiling(self) -> BudgetCeiling | None:
        """The largest ``budget.total`` the policy's model holds (an LLM served with a
        fixed context: the context less the reply), or None when unknown.

        When overridden, the harness calls it on the episode's thread before the first
        turn and lowers a ``budget.total`` left at its default to the ceiling, with a
        notice; a given budget is kept, for the policy to refuse. It may ask a server
        (once per policy object is enough); an error it raises leaves the budget as it
        is. Default (not called): no ceiling.
        """
        return None

    def cancel(self, observation: Observation) -> None:
        """Stop the work started for ``observation`` (no-op when there is none).

        When overridden, the harness calls it when it abandons a reply (the wall time
        ran out, or the caller stopped the episode); an error it raises is ignored.
        The LLM policy closes the model call's connection, so the server stops
        generating. Default (not called): the abandoned call runs to its end on its
        worker thread, and its reply is dropped.
        """

    def use_reader_memo(self, memo: ReaderMemo) -> None:
        """(Speed only.) Keep this episode's derivations of chunk text in ``memo``.

        When overridden, the harness calls it once, before the first turn, when the
        store keeps a per-generation memo (:class:`~thresher.index.store.KeepsReaderMemo`):
        what the policy derives from chunk text alone, keyed by that text, is then there
        for the next episode on the same index generation. The memo is shared: never
        change a value read from it. Default (not called): the policy derives what it
        needs each episode.
        """


def _declares(policy: object, hook: str) -> bool:
    """Whether ``policy`` declares the method ``hook``: a :class:`BasePolicy` overrides
    it (on its class or the instance); any other object has it (duck typing)."""
    found = getattr(policy, hook, None)
    if found is None:
        return False
    if isinstance(policy, BasePolicy):
        return getattr(found, "__func__", found) is not getattr(BasePolicy, hook)
    return True


def starts_sessions(policy: object) -> bool:
    """Whether ``policy`` starts a session per episode (it declares ``start``)."""
    return _declares(policy, "start")


def policy_for_store(policy: Policy, store: Store) -> Policy:
    """The policy that runs an episode over ``store``: what ``policy``'s ``for_store``
    returns when it declares one, else ``policy``. Raises what ``for_store`` raises."""
    if not _declares(policy, "for_store"):
        return policy
    return cast(BasePolicy, policy).for_store(store)


def policy_info_of(policy: object) -> dict[str, Any]:
    """What ``policy`` declares of itself for the trace (``info``; empty when none)."""
    info = getattr(policy, "info", None)
    return dict(info) if isinstance(info, dict) else {}


def session_for(policy: object, question: str) -> Policy | None:
    """The session ``policy`` starts for an episode of ``question``; None when it declares
    no ``start`` (it drives its episodes itself). Raises what ``start`` raises."""
    if not starts_sessions(policy):
        return None
    return cast(BasePolicy, policy).start(question)


def reranker_of(policy: object) -> SearchReranker | None:
    """``policy`` as the reranker of its episode's searches, when it declares ``rerank``."""
    return cast(SearchReranker, policy) if _declares(policy, "rerank") else None


def read_ranker_of(policy: object) -> Callable[[RerankRequest], Sequence[Hit]] | None:
    """What picks the chunks of ``policy``'s document reads, when it declares ``rank_read``."""
    return cast(BasePolicy, policy).rank_read if _declares(policy, "rank_read") else None


def retrieval_mode_of(policy: object) -> RetrievalMode | None:
    """The retrieval mode ``policy`` sets for its episodes; None: the config's."""
    mode: RetrievalMode | None = getattr(policy, "retrieval_mode", None)
    return mode


def fitted_fusion_of(policy: object) -> bool | None:
    """Whether ``policy``'s episodes use the index's fitted fusion weights; None: as the
    config says."""
    fitted: bool | None = getattr(policy, "fitted_fusion", None)
    return fitted


def prompt_cost_of(policy: object) -> PromptCost | None:
    """The chat-template cost ``policy`` declares; None: the harness's own count."""
    cost: PromptCost | None = getattr(policy, "prompt_cost", None)
    return cost


def budget_ceiling_of(policy: object) -> BudgetCeiling | None:
    """The budget ceiling ``policy`` declares (None: none, or unknown); raises what
    ``budget_ceiling`` raises."""
    if not _declares(policy, "budget_ceiling"):
        return None
    return cast(BasePolicy, policy).budget_ceiling()


def runs_in_process(policy: object) -> bool:
    """Whether ``policy`` asks to be called on the episode's thread (``in_process``)."""
    return bool(getattr(policy, "in_process", False))


def cancel_work(policy: object, observation: Observation) -> None:
    """Stop what ``policy`` started for ``observation``, when it declares ``cancel``;
    raises what ``cancel`` raises."""
    if _declares(policy, "cancel"):
        cast(BasePolicy, policy).cancel(observation)


def hand_reader_memo(policy: object, memo: Callable[[], ReaderMemo | None]) -> None:
    """Give ``policy`` the store's reader memo when it declares ``use_reader_memo`` and
    ``memo()`` has one (``memo`` is asked only then); raises what the hook raises."""
    if not _declares(policy, "use_reader_memo"):
        return
    kept = memo()
    if kept is not None:  # (an empty memo is falsy: it has a length)
        cast(BasePolicy, policy).use_reader_memo(kept)
