"""One search episode, read top to bottom: open, then turn by turn observe, ask, take
the reply, until an exit; then end.

*Open* (:meth:`_Episode.open`). The store and the policy may declare optional
protocols, probed here once per episode:

* a store that declares :class:`~thresher.index.store.PinsGeneration` is pinned to
  its live generation (:func:`pin`): the episode reads one index, and an ingest
  committed mid-episode shows in the next one;
* a policy that declares ``budget_ceiling`` (every hook is documented on
  :class:`~thresher.harness.policy.BasePolicy`) has a ``budget.total`` left at its
  default lowered to what its model holds, with a notice (:func:`fit_budget`); a
  given budget is left for the policy to refuse;
* a policy's ``retrieval_mode`` sets the episode's ``retrieval.mode`` and a
  ``fitted_fusion`` of False its ``retrieval.fitted_fusion`` (plain RRF whatever the
  index keeps) (:func:`episode_config`), its ``prompt_cost`` has its prompt template's cost
  counted (:func:`~thresher.harness.policy.prompt_cost_of`);
* a policy that declares ``for_store`` hands the episode to the policy it returns for
  the pinned store (the local policy: itself with the weights kept with that index),
  whose ``info`` the start records (``policy_info``) and whose ``retrieval_mode`` and
  ``fitted_fusion`` then rule the episode's config (the adapted weights' fusion);
* a policy that declares ``start`` starts a session for the episode, and a policy
  (or session) that declares ``use_reader_memo`` gets the store's reader memo when
  it keeps one (:class:`~thresher.index.store.KeepsReaderMemo`) (:func:`open_policy`).

A store that cannot answer (closed, its backend gone) is used as given: the episode's
first call reports that failure as the call's error, not the start. The start is
recorded (``episode_start``) before anything can end the episode.

*Observe* (:meth:`_Episode.observe`). The transcript is rendered from the state and
counted exactly with its notice message
(:meth:`~thresher.harness.budget.Meter.settle`); the turn's ``query_state`` is
recorded and the :class:`~thresher.harness.observation.Observation` built.

*Ask* (:func:`ask_policy`: the driver's job, see below). The policy gets the
observation on a reusable daemon thread (:mod:`thresher.workers`), not a
``ThreadPoolExecutor``: a call that times out cannot be killed, and an executor joins
its workers at interpreter exit, so one hung call would hang the process. The wait is
sliced so a stop (the stream's reader, or the caller's ``should_stop``) is seen within
:data:`STOP_POLL_S`; the policy's thread then finishes on its own, abandoned. A
policy that declares ``in_process`` (:class:`~thresher.harness.policy.BasePolicy`) is
asked on the episode's thread instead. A turn with no reply is a :class:`NoReply`:
the caller stopped, the wall time passed, the policy's endpoint stayed down (a
``BackendUnavailableError``) or the policy raised (a policy bug ends the episode,
never the process); a reply abandoned (stopped, timed out) is cancelled when the
policy declares ``cancel`` (the LLM policy closes the model call's connection).

*Take the reply* (:class:`~thresher.harness.replies.Replies`): checked, then refused
or applied; its tool calls run concurrently and their results are applied in call
order (:class:`~thresher.harness.tools.CallRunner`). Every step is a trace event
applied through :meth:`EpisodeState.apply`, the same transition replay uses.

*Exits* (:data:`EXITS`): every way an episode ends is a named predicate with its
priority, checked after the start and after every reply; the first that holds ends
the episode. Two ends are not predicates: a harness bug ends it ``error`` with the
trace so far, and a reader that leaves ends it ``cancelled``.

*End* (:meth:`_Episode.end`). Every episode ends once, with an exit reason, recorded
in its trace (``episode_end``) like any other step. An answered episode's documents
are its resolved final answer; any other exit is *partial*, and ranks the documents
the episode saw (:func:`~thresher.harness.result.partial_ranking`), so a caller
always gets a :class:`Result` with the trace so far. An episode its reader left
mid-turn first records the calls of that turn cut short as refused
(:func:`cut_short_calls`), so every call has its result; when even recording the end
fails, the Result is the one the state still holds.

*The loop and its driver.* :meth:`_Episode.loop` is the harness: a generator that
yields each trace event as it is recorded and, once a turn, the observation it would
hand a policy, and receives the reply (:data:`Asked`). Asking the policy is its
driver's job: :meth:`_Episode.events` asks a policy object (:func:`ask_policy`) and
yields the events only; :func:`episode_loop` hands the loop to a caller that drives
it itself. :func:`iter_episode` returns those events as an
:class:`~thresher.harness.stream.EpisodeStream`, run as it is read;
:func:`run_episode` reads it to the end. A reader stops the episode by closing the
stream (or with ``cancel``, or with a ``should_stop`` it passes: asked before each
turn and while the policy is thinking); the episode then ends ``cancelled``,
recorded in the trace like any other exit.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from thresher.config import Config, EpisodeConfig
from thresher.corpus.sanitize import has_surrogate, scrub
from thresher.errors import BackendUnavailableError, NoSearchableWordsError, ThresherError
from thresher.harness.actions import ToolCall
from thresher.harness.budget import Meter, TranscriptCounter, UsageState
from thresher.harness.observation import Observation, build_observation, query_state
from thresher.harness.policy import (
    Policy,
    SearchReranker,
    budget_ceiling_of,
    cancel_work,
    fitted_fusion_of,
    hand_reader_memo,
    policy_for_store,
    policy_info_of,
    prompt_cost_of,
    read_ranker_of,
    reranker_of,
    retrieval_mode_of,
    runs_in_process,
    session_for,
    starts_sessions,
)
from thresher.harness.render import render_messages
from thresher.harness.replies import TOOLS_FAILED_MESSAGE, Replies
from thresher.harness.result import (
    ExitReason,
    Result,
    Usage,
    documents_from_final,
    partial_ranking,
)
from thresher.harness.state import EpisodeState
from thresher.harness.stream import EpisodeStream
from thresher.harness.tools import CallRunner, refused_result
from thresher.harness.trace import (
    EpisodeEnd,
    EpisodeStart,
    ProposalEvent,
    QueryState,
    Refusal,
    ToolResult,
    Trace,
    TraceEvent,
)
from thresher.index.reader_memo import ReaderMemo
from thresher.index.store import KeepsReaderMemo, PinsGeneration, Store
from thresher.tokens import TokenCounter, get_counter
from thresher.workers import Job, submit

__all__ = [
    "run_episode",
    "iter_episode",
    "episode_loop",
    "EXITS",
    "Stop",
    "Exit",
    "NoReply",
    "Asked",
    "ask_policy",
    "policy_failed",
    "STOP_POLL_S",
    "CANCELLED_MESSAGE",
    "MAX_REFUSED_PROPOSALS",
    "MAX_HARD_REFUSALS",
    "Opening",
    "pin",
    "episode_config",
    "fit_budget",
    "open_policy",
    "check_searchable",
    "NO_SEARCHABLE_WORDS",
    "cut_short_calls",
]

#: defaults of ``EpisodeConfig.max_refused_in_a_row`` and ``.max_hard_refused_turns``
MAX_REFUSED_PROPOSALS = EpisodeConfig().max_refused_in_a_row
MAX_HARD_REFUSALS = EpisodeConfig().max_hard_refused_turns
#: the exit message of an episode its caller stopped (``should_stop``)
CANCELLED_MESSAGE = "stopped by the caller"


@dataclass(frozen=True, slots=True)
class Exit:
    """How the episode ends: its exit reason and message."""

    reason: ExitReason
    message: str = ""


# -- open ---------------------------------------------------------------------------------

#: a letter or a digit, in any script: what a question needs to be searched at all
_WORD = re.compile(r"[^\W_]")
#: why a question with none is refused
NO_SEARCHABLE_WORDS = "the question has no searchable words (no letter or digit); ask it in words"

_log = logging.getLogger(__name__)
#: notices of fitted budgets already logged (each once per process, not once per episode)
_noticed: set[str] = set()
_noticed_lock = threading.Lock()


def pin(store: Store) -> Store:
    """``store`` fixed on its live index generation for one episode, when it can be
    (:class:`~thresher.index.store.PinsGeneration`): the episode's searches, reads and
    recalls read one index, whatever an ingest commits meanwhile. As given otherwise,
    also when it cannot say (closed, its backend gone): the episode's first call then
    reports that failure as the call's error."""
    if not isinstance(store, PinsGeneration):
        return store
    try:
        return store.pinned()
    except ThresherError:
        return store


def episode_config(policy: Policy, config: Config) -> Config:
    """The config an episode of ``policy`` runs with: ``config`` plus what the policy declares.

    A policy's ``retrieval_mode`` (:class:`~thresher.harness.policy.BasePolicy`) sets
    ``retrieval.mode``, its ``fitted_fusion`` ``retrieval.fitted_fusion`` when it turns
    them off; the result is recorded in the trace's start event.
    """
    changes: dict[str, Any] = {}
    mode = retrieval_mode_of(policy)
    if mode is not None and mode != config.retrieval.mode:
        changes["retrieval.mode"] = mode
    if fitted_fusion_of(policy) is False and config.retrieval.fitted_fusion:
        changes["retrieval.fitted_fusion"] = False
    return config.override(changes) if changes else config


def fit_budget(policy: Policy, config: Config) -> tuple[Config, str]:
    """``config`` with ``budget.total`` fitted to what ``policy`` holds, and the notice saying so.

    A policy that declares ``budget_ceiling`` (:class:`~thresher.harness.policy.BasePolicy`)
    whose ceiling is below ``budget.total`` gets the ceiling when the budget was not given
    (:meth:`~thresher.config.Config.is_given`); a given budget is kept (the policy
    refuses it, saying what fits), as is every budget when the ceiling is unknown, not
    positive, or its query fails. The notice ("" when nothing changed) is also logged
    as a warning, once per process.
    """
    if config.is_given("budget.total"):
        return config, ""
    try:
        ceiling = budget_ceiling_of(policy)
    except Exception:  # the server cannot say (down, broken): the first turn reports it
        return config, ""
    if ceiling is None or not 0 < ceiling.tokens < config.budget.total:
        return config, ""
    notice = (
        f"budget.total lowered from {config.budget.total} to {ceiling.tokens} tokens to fit "
        f"{ceiling.reason}; set budget.total to choose it"
    )
    with _noticed_lock:
        first = notice not in _noticed
        _noticed.add(notice)
    if first:
        _log.warning("%s", notice)
    return config.fitted({"budget.total": ceiling.tokens}), notice


@dataclass(frozen=True, slots=True)
class Opening:
    """What the policy said of itself at the episode's start.

    policy: the policy of the episode (the one given, or what its ``for_store``
    returned for the episode's store);
    session: the session a policy that declares ``start`` started
    for the episode (None: ``policy`` drives it, or it could not start);
    tool_schemas, system_prompt, name, info: as recorded in the start event;
    broken: why the policy could not start or describe itself ("" if it could).
    """

    policy: Policy
    session: Policy | None
    tool_schemas: list[dict[str, Any]]
    system_prompt: str
    name: str
    broken: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    def start_event(self, question: str, config: Config, tokenizer: str) -> EpisodeStart:
        """The episode's ``episode_start`` event: its question, what the policy said of
        itself, the ``config`` it runs with, the ``tokenizer`` that counts it."""
        return EpisodeStart(
            question=question,
            policy=self.name,
            policy_info=self.info,
            system_prompt=self.system_prompt,
            tool_schemas=self.tool_schemas,
            config=config.to_dict(),
            tokenizer=tokenizer,
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )


def open_policy(given: Policy, question: str, store: Store) -> Opening:
    """Start ``given`` for one episode of ``question`` over ``store`` (already pinned):
    the policy for that store (``for_store``), its session when it is episodic, the
    store's reader memo handed to what drives the episode when that uses one, and
    what it says of itself. A failure is an :class:`Opening` with ``broken`` set,
    never an exception."""
    session: Policy | None = None
    chosen = given
    try:
        chosen = policy_for_store(given, store)
        session = session_for(chosen, question)  # this episode's own session, if any
        policy = chosen if session is None else session
        hand_reader_memo(policy, lambda: _reader_memo(store))
        schemas = list(policy.tool_schemas() or [])
        system_prompt = str(policy.system_prompt)
        name = str(policy.name)
        info = policy_info_of(chosen)
    except Exception as exc:  # a policy that cannot even start or describe itself
        broken = f"{type(exc).__name__}: {exc}"
        return Opening(chosen, session, [], "", type(given).__name__, broken)
    return Opening(chosen, session, schemas, system_prompt, name, info=info)


def check_searchable(question: str) -> None:
    """Refuse a non-empty question with no letter or digit in any script ("?", "…!").

    An empty one is left to the caller, whose message says how to ask.

    Raises:
        NoSearchableWordsError: saying so (:data:`NO_SEARCHABLE_WORDS`).
    """
    if question.strip() and not _WORD.search(question):
        raise NoSearchableWordsError(NO_SEARCHABLE_WORDS)


def _reader_memo(store: Store) -> ReaderMemo | None:
    """The store's per-generation reader memo, if it keeps one; None also when the
    store cannot say (its backend is gone): the episode's first call reports that
    failure, not the policy's start."""
    if not isinstance(store, KeepsReaderMemo):
        return None
    try:
        return store.reader_memo()
    except ThresherError:
        return None


# -- ask (the driver's job) ---------------------------------------------------------------

#: how often a waiting episode asks ``should_stop`` while the policy is thinking (seconds)
STOP_POLL_S = 0.05


class _Stopped(Exception):
    """The caller asked the episode to stop while the policy was thinking."""


@dataclass(frozen=True, slots=True)
class NoReply:
    """A turn the policy gave no reply for: what its trace records and how the episode ends.

    raw: the refused proposal's ``raw`` text; code, message: the refusal's;
    end: the episode's exit.
    """

    raw: str
    code: str
    message: str
    end: Exit


def ask_policy(
    policy: Policy,
    observation: Observation,
    *,
    wall_time_s: float,
    elapsed: Callable[[], float],
    stopped: Callable[[], bool],
) -> tuple[Any, float] | NoReply:
    """The policy's reply to ``observation`` and the seconds it took, or why none came.

    Args:
        policy: the policy (or session) driving the episode.
        observation: what it is given this turn.
        wall_time_s: the episode's wall time; ``elapsed`` says how much has gone.
        elapsed: seconds since the episode started.
        stopped: whether the episode's reader or caller asked it to stop.

    Returns:
        ``(reply, seconds)``, the reply as the policy gave it (not yet checked), or a
        :class:`NoReply` ending the episode.
    """
    start = time.perf_counter()
    try:
        if runs_in_process(policy):
            value = _call_here(policy, observation, wall_time_s, elapsed, stopped)
        else:
            job = submit(lambda: policy.propose(observation))
            value = _wait(job, wall_time_s, elapsed, stopped)
    except _Stopped:
        _cancel_call(policy, observation)
        return NoReply(
            "(cancelled before a reply)",
            "cancelled",
            CANCELLED_MESSAGE,
            Exit(ExitReason.CANCELLED, CANCELLED_MESSAGE),
        )
    except TimeoutError:
        _cancel_call(policy, observation)
        return NoReply(
            "(no reply before wall time)",
            "timeout",
            "policy did not reply",
            Exit(ExitReason.TIMEOUT, "the policy did not reply in time"),
        )
    except Exception as exc:  # a policy bug ends the episode, never the process
        return policy_failed(exc)
    return value, round(time.perf_counter() - start, 6)


def policy_failed(exc: Exception) -> NoReply:
    """The turn a policy raised ``exc`` for: ``endpoint_unavailable`` when its endpoint
    stayed down (a ``BackendUnavailableError``), else ``policy_error``."""
    if isinstance(exc, BackendUnavailableError):  # a typed exit
        return NoReply(
            str(exc)[:2000],
            "endpoint_unavailable",
            str(exc)[:2000],
            Exit(ExitReason.ENDPOINT_UNAVAILABLE, str(exc)),
        )
    message = f"{type(exc).__name__}: {exc}"
    end = Exit(ExitReason.POLICY_ERROR, message)
    return NoReply(message[:2000], "policy_exception", message[:2000], end)


def _cancel_call(policy: Policy, observation: Observation) -> None:
    """Abandoning the policy's reply: a policy that declares ``cancel`` (the LLM policy:
    it closes the model call's connection) stops the work it started for it."""
    with contextlib.suppress(Exception):  # a failed cancel must not hide the exit
        cancel_work(policy, observation)


def _call_here(
    policy: Policy,
    observation: Observation,
    wall_time_s: float,
    elapsed: Callable[[], float],
    stopped: Callable[[], bool],
) -> Any:
    """An in-process policy's reply, on this thread (``in_process``, see
    :class:`~thresher.harness.policy.BasePolicy`): ``_Stopped`` when the caller stopped before it, ``TimeoutError`` when the
    reply came past the wall time, as :func:`_wait` would."""
    if stopped():
        raise _Stopped
    value = policy.propose(observation)
    if elapsed() > wall_time_s:
        raise TimeoutError
    return value


def _wait(
    job: Job, wall_time_s: float, elapsed: Callable[[], float], stopped: Callable[[], bool]
) -> Any:
    """The policy's reply, within the wall time; raises ``_Stopped`` once the caller stops.

    The wait is sliced so a stop is seen within :data:`STOP_POLL_S` (the
    policy's thread finishes on its own: a call cannot be killed, only abandoned).
    """
    while True:
        if stopped():
            raise _Stopped
        left = wall_time_s - elapsed()
        try:
            return job.result(min(STOP_POLL_S, left))
        except TimeoutError:
            if left <= STOP_POLL_S:  # that wait ran to the wall time
                raise


#: a turn's reply as the driver hands it to the loop: ``(reply, seconds)`` as the policy
#: gave it (not yet checked), or why none came
Asked = tuple[Any, float] | NoReply


# -- the exits ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stop:
    """One way an episode ends.

    name: what it is called. priority: the lower is checked first. when: the step
    after which it can first hold (``start``: the episode's start; ``reply``: a reply
    just taken; ``turn``: before any turn). holds: the predicate over the episode,
    the :class:`Exit` when it holds, else None.
    """

    name: str
    priority: int
    when: Literal["start", "reply", "turn"]
    holds: Callable[[_Episode], Exit | None]


def _policy_broken(ep: _Episode) -> Exit | None:
    """The policy could not start or describe itself."""
    broken = ep.opening.broken if ep.opening is not None else ""
    return Exit(ExitReason.POLICY_ERROR, broken) if broken else None


def _empty_question(ep: _Episode) -> Exit | None:
    if not ep.question.strip():
        return Exit(ExitReason.INVALID_INPUT, "the question is empty")
    return None


def _no_searchable_words(ep: _Episode) -> Exit | None:
    """No letter or digit in any script ("?"): nothing to search for."""
    return (
        None if _WORD.search(ep.question) else Exit(ExitReason.INVALID_INPUT, NO_SEARCHABLE_WORDS)
    )


def _invalid_text(ep: _Episode) -> Exit | None:
    """The question held a lone surrogate (it is searched with U+FFFD in its place)."""
    if not ep.invalid_text:
        return None
    return Exit(
        ExitReason.INVALID_INPUT,
        "the question holds text that is not valid Unicode (a lone surrogate); send UTF-8 text",
    )


def _no_reply(ep: _Episode) -> Exit | None:
    """The policy gave no reply (stopped, timed out, its endpoint down, or it raised)."""
    return ep.no_reply.end if ep.no_reply is not None else None


def _answered(ep: _Episode) -> Exit | None:
    return Exit(ExitReason.ANSWERED) if ep.state.final is not None else None


def _tools_failed(ep: _Episode) -> Exit | None:
    """An answer naming no document after every retrieval call failed in the tool."""
    return Exit(ExitReason.TOOLS_FAILED, TOOLS_FAILED_MESSAGE) if ep.replies.tools_failed else None


def _refused_in_a_row(ep: _Episode) -> Exit | None:
    """``episode.max_refused_in_a_row`` proposals refused in a row."""
    streak = ep.replies.refused_streak
    if streak and streak >= ep.config.episode.max_refused_in_a_row:
        message = f"{streak} refused proposals in a row; last: {ep.replies.last_refusal}"
        return Exit(ExitReason.POLICY_ERROR, message)
    return None


def _max_calls(ep: _Episode) -> Exit | None:
    """A call of the last reply was refused: the episode's ``episode.max_calls`` are used."""
    if ep.replies.ran_calls and ep.replies.hit_call_cap:
        return Exit(ExitReason.MAX_CALLS, f"{ep.config.episode.max_calls} tool calls")
    return None


def _hard_refused_turns(ep: _Episode) -> Exit | None:
    """``episode.max_hard_refused_turns`` turns in a row whose calls the hard cutoff refused."""
    streak = ep.replies.hard_streak
    if ep.replies.ran_calls and streak >= ep.config.episode.max_hard_refused_turns:
        message = f"past the hard limit, {streak} turns of refused retrieval calls"
        return Exit(ExitReason.BUDGET, message)
    return None


def _cancelled(ep: _Episode) -> Exit | None:
    """The reader or the caller asked the episode to stop."""
    return Exit(ExitReason.CANCELLED, CANCELLED_MESSAGE) if ep.stopped() else None


def _timeout(ep: _Episode) -> Exit | None:
    wall = ep.config.episode.wall_time_s
    return Exit(ExitReason.TIMEOUT, f"wall time {wall}s") if ep.elapsed() >= wall else None


def _max_turns(ep: _Episode) -> Exit | None:
    most = ep.config.episode.max_turns
    return Exit(ExitReason.MAX_TURNS, f"{most} turns") if len(ep.state.turns) >= most else None


def _over_budget(ep: _Episode) -> Exit | None:
    """The next prompt, counted with its notices, is over the budget: it is never sent."""
    usage, _ = ep.next_prompt()
    if usage.used > usage.budget:
        message = f"the next prompt needs {usage.used} tokens, over the budget of {usage.budget}"
        return Exit(ExitReason.BUDGET, message)
    return None


#: every way an episode ends (besides a harness bug, ``error``, and a reader that
#: leaves, ``cancelled``), checked in this order after the start and after every reply
EXITS: tuple[Stop, ...] = (
    Stop("policy_broken", 10, "start", _policy_broken),
    Stop("empty_question", 11, "start", _empty_question),
    Stop("no_searchable_words", 12, "start", _no_searchable_words),
    Stop("invalid_text", 13, "start", _invalid_text),
    Stop("no_reply", 20, "reply", _no_reply),
    Stop("answered", 21, "reply", _answered),
    Stop("tools_failed", 22, "reply", _tools_failed),
    Stop("refused_in_a_row", 23, "reply", _refused_in_a_row),
    Stop("max_calls", 24, "reply", _max_calls),
    Stop("hard_refused_turns", 25, "reply", _hard_refused_turns),
    Stop("cancelled", 30, "turn", _cancelled),
    Stop("timeout", 31, "turn", _timeout),
    Stop("max_turns", 32, "turn", _max_turns),
    Stop("over_budget", 33, "turn", _over_budget),
)


# -- the episode --------------------------------------------------------------------------


class _Episode:
    """One episode's life; see the module docstring.

    It owns its state, its recorder (each event stamped with its time and trace
    position, applied to the state, queued for the reader), its meter, its call runner
    and its replies; none of them holds a reference back to it, so an ended episode
    (its trace, the chunks it held, the policy session) is freed by reference
    counting as soon as its result is read.
    """

    #: what proposes this episode's turns: the policy given, or the session it
    #: started for it when it declares ``start`` (set by :meth:`use`)
    policy: Policy

    def __init__(
        self,
        question: str,
        store: Store,
        policy: Policy,
        config: Config,
        reranker: SearchReranker | None,
        counter: TokenCounter | None,
        should_stop: Callable[[], bool] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.invalid_text = has_surrogate(question)
        self.question = scrub(question)  # what is recorded and searched is valid Unicode
        self.store = pin(store)
        self.given = policy
        self.reranker = reranker  # given by the caller; else the policy's (see :meth:`use`)
        self.should_stop = should_stop
        self.stop = threading.Event()  # set by the stream's reader (cancel, close)
        self.clock = clock  # the episode's monotonic clock: event times, wall time, deadlines
        self.t0 = clock()
        self.pending: deque[TraceEvent] = deque()  # recorded, not yet read
        self.state = EpisodeState()
        self.tc = TranscriptCounter(
            counter or get_counter(config.chunking.tokenizer), cost=prompt_cost_of(policy)
        )
        self.opening: Opening | None = None  # set by :meth:`open`
        self.no_reply: NoReply | None = None  # the turn the policy gave no reply for
        self.usage: UsageState | None = None  # the usage of the prompt last sent
        self._next: tuple[int, tuple[UsageState, list[str]]] | None = None
        self.result: Result | None = None  # set once the episode has ended
        self.asked = config  # the caller's settings, before any policy's declarations
        self.configure(episode_config(policy, config))
        if not starts_sessions(policy):
            self.use(policy)

    def configure(self, config: Config) -> None:
        """Run with ``config``: the parts that read the settings are built from it
        (at the start, before any turn)."""
        self.config = config
        self.meter = Meter(self.state, self.tc, config.budget)
        self.calls = CallRunner(
            self.state,
            self.store,
            config,
            self.tc,
            self.reranker,
            self.meter.notice_reserve(),
            self.t0,
            self.clock,
        )
        self.replies = Replies(self.state, config, self.meter, self.calls)

    def use(self, policy: Policy) -> None:
        """Drive ``policy`` this episode; it reranks searches when it declares ``rerank``
        and the caller gave no reranker, and picks its reads' chunks when it declares
        ``rank_read``."""
        self.policy = policy
        if self.reranker is None:
            self.calls.reranker = reranker_of(policy)
        self.calls.read_ranker = read_ranker_of(policy)

    # -- recording ---------------------------------------------------------------------
    def elapsed(self) -> float:
        """Seconds since the episode started, on the episode's clock."""
        return self.clock() - self.t0

    def record(self, event: TraceEvent) -> TraceEvent:
        """Record ``event``: its time and its place in the trace set in one copy (the
        trace then keeps it as is), applied through :meth:`EpisodeState.apply`, queued
        for the reader. Returns the event as stored."""
        timed = replace(event, t=round(self.elapsed(), 6), seq=len(self.state.trace))
        stored = self.state.apply(timed)
        self.pending.append(stored)
        return stored

    def flush(self) -> Iterator[TraceEvent]:
        """Hand the recorded events to the reader, in order."""
        pending = self.pending
        while pending:
            yield pending.popleft()

    def stopped(self) -> bool:
        """Whether the reader asked the episode to stop (the stream's stop, ``should_stop``)."""
        if self.stop.is_set():
            return True
        return self.should_stop is not None and bool(self.should_stop())

    # -- the loop ----------------------------------------------------------------------
    def loop(self) -> Generator[TraceEvent | Observation, Asked | None, Result]:
        """The harness: open, then each turn observe, hand the observation out and take
        the reply sent back, until an exit; returns the Result.

        Yields each event as it is recorded and, once a turn, the
        :class:`Observation` a policy is to answer; the driver sends the reply back
        (:data:`Asked`) and None after an event."""
        self.open()
        yield from self.flush()
        while (ended := self.exit()) is None:
            observation = self.observe()
            yield from self.flush()
            asked = yield observation
            if asked is None:
                raise TypeError("the episode's driver must send the reply to an observation")
            yield from self.take(asked)
        result = self.end(ended.reason, ended.message)
        yield from self.flush()
        return result

    def open(self) -> None:
        """Start the policy (its session), fit the budget when the episode can begin,
        and record the start."""
        opened = self.opening = open_policy(self.given, self.question, self.store)
        if opened.policy is not self.given:  # its declarations rule (e.g. its weights' fusion)
            declared = episode_config(opened.policy, self.asked)
            if declared != self.config:
                self.configure(declared)
                if not starts_sessions(opened.policy):
                    self.use(opened.policy)
        if all(stop.holds(self) is None for stop in EXITS if stop.when == "start"):
            driver = opened.session if opened.session is not None else opened.policy
            fitted, notice = fit_budget(driver, self.config)
            if notice:  # the budget this episode runs with (recorded in its start)
                self.configure(fitted)
                if not starts_sessions(opened.policy):
                    self.use(opened.policy)
        if opened.session is not None:
            self.use(opened.session)
        elif opened.policy is not self.given:  # its for_store gave another policy
            self.use(opened.policy)
        self.record(opened.start_event(self.question, self.config, self.tc.counter.name))

    def exit(self) -> Exit | None:
        """How the episode ends now: the first of :data:`EXITS` that holds, else None."""
        for stop in EXITS:
            ended = stop.holds(self)
            if ended is not None:
                return ended
        return None

    def next_prompt(self) -> tuple[UsageState, list[str]]:
        """The next prompt's usage and notice lines (counted once per trace position)."""
        at = len(self.state.trace)
        if self._next is None or self._next[0] != at:
            self._next = (at, self.meter.settle(self.replies.extra))
        return self._next[1]

    def observe(self) -> Observation:
        """Record the turn's query state; the observation the policy is to answer."""
        turn = len(self.state.turns)
        usage, notices = self.next_prompt()
        self.record(query_state(self.state, turn, usage, notices))
        messages = render_messages(self.state, self.tc.render_memo)
        self.meter.sending(messages)
        self.usage = usage
        return replace(
            build_observation(self.state, messages, usage, notices, hop=self.replies.hop),
            wall_time_left_s=max(self.config.episode.wall_time_s - self.elapsed(), 0.0),
        )

    def take(self, asked: Asked) -> Iterator[TraceEvent]:
        """Record the turn's reply, refused or applied (each event read out as it is
        recorded), or the turn the policy gave none for."""
        turn = self.state.turn
        if isinstance(asked, NoReply):
            self.no_reply = asked
            self.record(ProposalEvent(turn=turn, valid=False, raw=asked.raw))
            self.record(Refusal(turn=turn, code=asked.code, message=asked.message))
            yield from self.flush()
            return
        assert self.usage is not None  # set by observe
        value, elapsed = asked
        for event in self.replies.take(turn, value, elapsed, self.usage):
            self.record(event)
            yield from self.flush()

    # -- the end -----------------------------------------------------------------------
    def end(self, reason: ExitReason, message: str = "") -> Result:
        """Record the episode's end (``episode_end``) and return its Result."""
        state = self.state
        answered = reason is ExitReason.ANSWERED and state.final is not None
        resolved = state.final if answered and state.final is not None else []
        if not answered:
            resolved = partial_ranking(state, self.config.episode.final_documents)
        usage = self.meter.usage()
        wall = self.elapsed()
        self.record(
            EpisodeEnd(
                turn=max(state.turn, 0),
                exit_reason=reason.value,
                partial=not answered,
                message=message,
                turns=len(state.turns),
                tool_calls=dict(state.tool_calls),
                usage=usage.to_dict(),
                wall_s=round(wall, 6),
                documents=list(resolved),
                models=list(self.replies.models),
            )
        )
        self.result = Result(
            question=self.question,
            documents=documents_from_final(state, resolved),
            exit_reason=reason,
            partial=not answered,
            usage=usage,
            turns=len(state.turns),
            tool_calls=dict(state.tool_calls),
            wall_s=wall,
            trace=tuple(state.trace),
            message=message,
        )
        return self.result

    def end_early(self) -> None:
        """End an episode its reader left: the calls of a turn cut short are recorded
        refused (so every call has its result), then the end, ``cancelled``."""
        if self.result is not None:
            return
        for cut in cut_short_calls(self.state.trace):
            self.record(self.calls.counted(cut))
        self.end(ExitReason.CANCELLED, CANCELLED_MESSAGE)

    def fail(self, exc: Exception) -> Result:
        """The Result of an episode ended by an internal error (``error``)."""
        message = f"internal error: {type(exc).__name__}: {exc}"
        try:
            return self.end(ExitReason.ERROR, message)
        except Exception:  # recording failed too: a bare Result with what the state holds
            state = self.state
            self.result = Result(
                question=self.question,
                documents=(),
                exit_reason=ExitReason.ERROR,
                partial=True,
                usage=Usage(state.used, state.peak, self.config.budget.total),
                turns=len(state.turns),
                tool_calls=dict(state.tool_calls),
                wall_s=self.elapsed(),
                trace=tuple(state.trace),
                message=message,
            )
            return self.result

    # -- the driver of a policy object -------------------------------------------------
    def events(self) -> Generator[TraceEvent, None, Result]:
        """The episode driven by its policy, one recorded event at a time; returns its Result.

        Runs :meth:`loop`, asking the policy (:func:`ask_policy`) for each observation.
        Closed early (``GeneratorExit``) or interrupted (``KeyboardInterrupt``), it
        records its end (``cancelled``) before it goes; a harness bug (or an error a
        reader throws in) ends it ``error`` with the trace so far.
        """
        try:
            loop = self.loop()
            asked: Asked | None = None
            while True:
                try:
                    item = loop.send(asked)
                except StopIteration as done:
                    result: Result = done.value
                    return result
                asked = None
                if isinstance(item, Observation):
                    asked = self.ask(item)
                else:
                    yield item
        except Exception as exc:  # the harness's own bug: still a Result, with the trace so far
            result = self.fail(exc)
            yield from self.flush()
            return result
        except BaseException:  # closed by its reader (GeneratorExit), or interrupted
            try:
                self.end_early()
            except Exception as exc:  # recording the end failed: still a Result
                self.fail(exc)
            raise

    def ask(self, observation: Observation) -> Asked:
        """The policy's reply to ``observation`` and its time, or why none came."""
        return ask_policy(
            self.policy,
            observation,
            wall_time_s=self.config.episode.wall_time_s,
            elapsed=self.elapsed,
            stopped=self.stopped,
        )


def cut_short_calls(trace: Trace) -> Iterator[ToolResult]:
    """The calls of the last valid proposal that have no result yet, each as a refused
    ``cancelled`` result, in call order (made one at a time, as they are recorded)."""
    last = next((e for e in reversed(trace) if isinstance(e, ProposalEvent)), None)
    if last is None or not last.valid or not last.proposal:
        return
    done = {e.call_id for e in trace if isinstance(e, ToolResult) and e.turn == last.turn}
    for data in last.proposal.get("tool_calls") or ():
        call = ToolCall.from_dict(data)
        if call.call_id not in done:
            yield refused_result(call, last.turn, "cancelled", CANCELLED_MESSAGE)


# -- the drivers -------------------------------------------------------------------------


def episode_loop(
    question: str,
    store: Store,
    policy: Policy,
    config: Config | None = None,
    *,
    reranker: SearchReranker | None = None,
    counter: TokenCounter | None = None,
    should_stop: Callable[[], bool] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Generator[TraceEvent | Observation, Asked | None, Result]:
    """One search episode driven from outside: the harness's loop, asking no one.

    The caller is the driver. Each item the generator yields is a trace event as it is
    recorded (send None to go on) or, once a turn, the :class:`Observation` a policy
    would be handed (send the reply back: ``(reply, seconds)``, the reply as a policy
    returns it, or a :class:`NoReply`). Its return value (``StopIteration.value``) is
    the :class:`Result`. A harness error propagates to the driver (:func:`iter_episode`
    ends such an episode ``error``); a loop closed early records nothing more.

    Args:
        question, store, config, reranker, counter, should_stop, clock: as for
            :func:`run_episode`.
        policy: what the episode says proposes (its name, system prompt and tool
            schemas are recorded; its optional protocols apply as for
            :func:`run_episode`); it is never asked to propose.
    """
    episode = _Episode(
        question,
        store,
        policy,
        config or Config(),
        reranker,
        counter,
        should_stop,
        clock,
    )
    return episode.loop()


def iter_episode(
    question: str,
    store: Store,
    policy: Policy,
    config: Config | None = None,
    *,
    reranker: SearchReranker | None = None,
    counter: TokenCounter | None = None,
    should_stop: Callable[[], bool] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> EpisodeStream:
    """One search episode as a stream of its trace events, run as it is read.

    Args:
        question, store, policy, config, reranker, counter, should_stop, clock: as
            for :func:`run_episode`.

    Returns:
        An :class:`~thresher.harness.stream.EpisodeStream`: iterate it for each event
        as it is applied (``episode_start`` first, ``episode_end`` last); its
        ``result`` is the :class:`Result` once the episode has ended; ``close()`` (or
        leaving a ``with`` block) ends the episode ``cancelled``, ``cancel()`` asks it
        to stop. Nothing runs until the first event is read.
    """
    episode = _Episode(
        question,
        store,
        policy,
        config or Config(),
        reranker,
        counter,
        should_stop,
        clock,
    )
    return EpisodeStream(episode.events(), episode.state, episode.stop, lambda: episode.result)


def run_episode(
    question: str,
    store: Store,
    policy: Policy,
    config: Config | None = None,
    *,
    reranker: SearchReranker | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
    on_turn: Callable[[EpisodeState], None] | None = None,
    counter: TokenCounter | None = None,
    should_stop: Callable[[], bool] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Result:
    """Run one search episode to its end (reads :func:`iter_episode` to the end).

    Args:
        question: the user's question (empty: exit ``invalid_input``).
        store: the index, through the Store protocol.
        policy: proposes tool calls or the final answer each turn (its hooks:
            :class:`~thresher.harness.policy.BasePolicy`); one that declares
            ``start(question)`` is asked for a session that does so for this episode.
        config: settings (defaults from the Context-1 report).
        reranker: reorders search candidates (default: the policy, or its session,
            when it declares ``rerank``).
        on_event: called with every trace event as it is recorded (live views); an
            error it raises ends the episode with exit reason ``error``.
        on_turn: called with the live state right after each turn's query state
            (tests snapshot it to compare with replay).
        counter: token counter (default: ``config.chunking.tokenizer``).
        should_stop: asked before each turn and while the policy is thinking
            (every :data:`STOP_POLL_S` s); True ends the episode with exit reason
            ``cancelled`` (a ``threading.Event``'s ``is_set`` fits).
        clock: the monotonic clock (seconds) the wall time, the tool timeout and the
            events' times are read from.

    Returns:
        A :class:`Result`, always: partial on caps and errors, with the trace.
    """
    stream = iter_episode(
        question,
        store,
        policy,
        config,
        reranker=reranker,
        counter=counter,
        should_stop=should_stop,
        clock=clock,
    )
    with stream:
        for event in stream:
            try:
                if on_event is not None:
                    on_event(event)
                if on_turn is not None and isinstance(event, QueryState):
                    on_turn(stream.state)
            except Exception as exc:  # a reader's failure ends the episode, never the caller
                stream.fail(exc)
                break
    assert stream.result is not None  # read to its end, or ended by fail()
    return stream.result
