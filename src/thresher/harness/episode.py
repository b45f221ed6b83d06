"""The episode loop: observe → propose → validate and apply → record, until an exit.

Each turn:

1. *Observe*: render the transcript from the state, count it exactly with the
   notice message (usage line, soft/hard notices, refusals) included; if it
   is over the budget the episode ends (``budget``): nothing over budget is
   ever sent.
2. *Propose*: the policy gets an :class:`Observation` (bounded by the wall
   time); an exception ends the episode (``policy_error``; a
   ``BackendUnavailableError``, such as an LLM endpoint that stayed down,
   ``endpoint_unavailable``), garbage is refused and recorded, and after
   ``episode.max_refused_in_a_row`` refusals in a row the episode ends
   (``policy_error``).
3. *Apply*: a final answer is resolved and ends the episode (``answered``; an
   answer naming no document after every retrieval call failed in the tool
   ends ``tools_failed``).
   Tool calls are checked (allow-list, caps, hard cutoff, arguments); the
   retrieval calls run concurrently on daemon threads with a timeout each,
   and their results are applied in call order, each cut to the room left.
4. *Record*: every step is a trace event applied through
   :meth:`EpisodeState.apply`, the same transition replay uses.

The episode is a stream of its events: :func:`iter_episode` returns an
:class:`~thresher.harness.stream.EpisodeStream` that runs the episode as it is
read, one recorded event per ``next``; :func:`run_episode` reads it to the end.
A reader stops the episode by closing the stream (or with ``cancel``, or with a
``should_stop`` it passes: asked before each turn and while the policy is
thinking); the episode then ends with exit reason ``cancelled``, recorded in the
trace like any other exit. That is the one way in from outside: the harness still
owns the loop, and nothing else about the episode changes.

An episode reads one index: a store that declares
:class:`~thresher.index.store.PinsGeneration` is pinned to its live generation at
the start (:func:`pin`), so an ingest committed mid-episode shows in the next one.

Calls run on reusable daemon threads (:mod:`thresher.workers`), not
a ``ThreadPoolExecutor``: a call that times out cannot be killed, and an
executor joins its workers at interpreter exit, so one hung store call would
hang the process.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from thresher.config import Config, EpisodeConfig
from thresher.corpus.sanitize import has_surrogate, scrub
from thresher.errors import BackendUnavailableError, ThresherError
from thresher.harness.actions import MalformedReply, Proposal, ToolCall
from thresher.harness.budget import (
    UsageState,
    notices_for,
    settle_usage,
)
from thresher.harness.calls import CallRunner
from thresher.harness.final import DroppedId
from thresher.harness.observation import Observation, build_observation
from thresher.harness.policy import (
    CancelsCalls,
    ChoosesRetrievalMode,
    DeclaresPromptCost,
    EpisodicPolicy,
    InProcessPolicy,
    Policy,
    SearchReranker,
    UsesReaderMemo,
)
from thresher.harness.recorder import EventRecorder
from thresher.harness.render import (
    TranscriptCounter,
    flagged_in_view,
    one_line,
    render_messages,
)
from thresher.harness.result import (
    ExitReason,
    Result,
    Usage,
    documents_from_final,
    partial_ranking,
)
from thresher.harness.state import EpisodeState
from thresher.harness.stream import EpisodeStream
from thresher.harness.tools import RETRIEVAL_TOOLS
from thresher.harness.trace import (
    EpisodeEnd,
    EpisodeStart,
    FinalEvent,
    ProposalEvent,
    QueryState,
    Refusal,
    ToolResult,
    TraceEvent,
    UsageReport,
)
from thresher.harness.transitions import refused_result
from thresher.harness.validate import ProposalCheck, check_final, check_proposal
from thresher.index.reader_memo import ReaderMemo
from thresher.index.store import KeepsReaderMemo, PinsGeneration, Store
from thresher.tokens import TokenCounter, get_counter
from thresher.workers import Job, submit

__all__ = [
    "run_episode",
    "iter_episode",
    "episode_config",
    "MAX_REFUSED_PROPOSALS",
    "MAX_HARD_REFUSALS",
    "CANCELLED_MESSAGE",
    "STOP_POLL_S",
    "TOOL_FAILURES",
]

#: defaults of ``EpisodeConfig.max_refused_in_a_row`` and ``.max_hard_refused_turns``
MAX_REFUSED_PROPOSALS = EpisodeConfig().max_refused_in_a_row
MAX_HARD_REFUSALS = EpisodeConfig().max_hard_refused_turns
#: the exit message of an episode its caller stopped (``should_stop``)
CANCELLED_MESSAGE = "stopped by the caller"
#: how often a waiting episode asks ``should_stop`` while the policy is thinking (seconds)
STOP_POLL_S = 0.05


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


class _Stopped(Exception):
    """The caller asked the episode to stop while the policy was thinking."""


class _Episode:
    #: what proposes this episode's turns: the policy given, or the session an
    #: :class:`EpisodicPolicy` started for it (set by :meth:`use`)
    policy: Policy

    def __init__(
        self,
        question: str,
        store: Store,
        policy: Policy | EpisodicPolicy,
        config: Config,
        reranker: SearchReranker | None,
        counter: TokenCounter | None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        self.invalid_text = has_surrogate(question)
        self.question = scrub(question)  # what is recorded and searched is valid Unicode
        self.store = pin(store)
        self.given = policy
        self.config = config
        self.reranker = reranker  # given by the caller; else the policy's (see :meth:`use`)
        self.should_stop = should_stop
        self.stop = threading.Event()  # set by the stream's reader (cancel, close)
        self.result: Result | None = None  # set once the episode has ended
        cost = policy.prompt_cost if isinstance(policy, DeclaresPromptCost) else None
        self.tc = TranscriptCounter(counter or get_counter(config.chunking.tokenizer), cost=cost)
        self.sent_text = 0  # unscaled text tokens of the last transcript sent (calibration)
        self.state = EpisodeState()
        self.recorder = EventRecorder(self.state)
        self.hop: int | None = None
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.models: list[str] = []  # models the policy's replies came from (LLM policies)
        self.refused_streak = 0  # refused proposals in a row
        self.hard_streak = 0  # turns in a row whose calls the hard cutoff refused
        self.extra: list[str] = []  # notice lines for the next turn (the last refusal)
        # the largest notice message a turn after tool calls can get (no proposal refusals)
        worst = notices_for(int("9" * len(str(config.budget.total))), config.budget)
        reserve = self.tc.message({"content": "\n".join(worst)}) + 4
        self.calls = CallRunner(
            self.state,
            self.store,
            config,
            self.tc,
            reranker,
            self.recorder.emit,
            self.recorder.elapsed,
            reserve,
        )
        if not isinstance(policy, EpisodicPolicy):
            self.use(policy)

    def use(self, policy: Policy) -> None:
        """Drive ``policy`` this episode; it reranks searches when it declares
        :class:`SearchReranker` and the caller gave no reranker."""
        self.policy = policy
        if self.reranker is None:
            self.calls.reranker = policy if isinstance(policy, SearchReranker) else None

    # -- recording -------------------------------------------------------------------
    # (the recorder is apart from the episode so the call runner holds no cycle back
    # to it: see :mod:`thresher.harness.recorder`)
    def elapsed(self) -> float:
        return self.recorder.elapsed()

    def emit(self, event: TraceEvent) -> TraceEvent:
        return self.recorder.emit(event)

    def flush(self) -> Iterator[TraceEvent]:
        """Hand the recorded events to the reader, in order."""
        return self.recorder.drain()

    def finish(self, reason: ExitReason, message: str = "") -> Result:
        state = self.state
        answered = reason is ExitReason.ANSWERED and state.final is not None
        limit = self.config.episode.final_documents
        resolved = state.final if answered and state.final is not None else []
        if not answered:
            resolved = partial_ranking(state, limit)
        usage = Usage(state.used, state.peak, self.config.budget.total)
        usage = replace(
            usage, prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens
        )
        wall = self.elapsed()
        self.emit(
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
                models=list(self.models),
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

    # -- the loop ----------------------------------------------------------------------
    def events(self) -> Generator[TraceEvent, None, Result]:
        """The episode, one recorded event at a time; returns its Result.

        Closed early (``GeneratorExit``) or interrupted (``KeyboardInterrupt``), it
        records its end (``cancelled``) before it goes; a harness bug (or an error a
        reader throws in) ends it ``error`` with the trace so far.
        """
        try:
            ended = self.start()
            yield from self.flush()
            while ended is None:
                ended = yield from self.turn()
                yield from self.flush()
            return ended
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

    def end_early(self) -> None:
        """End an episode its reader left: the calls of a turn cut short are recorded
        refused (so every call has its result), then the end, ``cancelled``."""
        if self.result is not None:
            return
        trace = self.state.trace
        last = next((e for e in reversed(trace) if isinstance(e, ProposalEvent)), None)
        if last is not None and last.valid and last.proposal:
            done = {e.call_id for e in trace if isinstance(e, ToolResult) and e.turn == last.turn}
            for data in last.proposal.get("tool_calls") or ():
                call = ToolCall.from_dict(data)
                if call.call_id not in done:
                    cut = refused_result(call, last.turn, "cancelled", CANCELLED_MESSAGE)
                    self.calls.emit_result(cut)
        self.finish(ExitReason.CANCELLED, CANCELLED_MESSAGE)

    def fail(self, exc: Exception) -> Result:
        """The Result of an episode ended by an internal error (``error``)."""
        message = f"internal error: {type(exc).__name__}: {exc}"
        try:
            return self.finish(ExitReason.ERROR, message)
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

    def reader_memo(self) -> ReaderMemo | None:
        """The store's per-generation reader memo, if it keeps one; None also when the
        store cannot say (its backend is gone): the episode's first call reports that
        failure, not the policy's start."""
        if not isinstance(self.store, KeepsReaderMemo):
            return None
        try:
            return self.store.reader_memo()
        except ThresherError:
            return None

    def start(self) -> Result | None:
        """Record the episode's start; a Result when it cannot begin."""
        broken = ""
        try:
            if isinstance(self.given, EpisodicPolicy):  # this episode's own session
                self.use(self.given.start(self.question))
            if isinstance(self.policy, UsesReaderMemo):
                memo = self.reader_memo()
                if memo is not None:  # (an empty memo is falsy: it has a length)
                    self.policy.use_reader_memo(memo)
            schemas = list(self.policy.tool_schemas() or [])
            system_prompt = str(self.policy.system_prompt)
            name = str(self.policy.name)
        except Exception as exc:  # a policy that cannot even start or describe itself
            schemas, system_prompt, name = [], "", type(self.given).__name__
            broken = f"{type(exc).__name__}: {exc}"
        self.emit(
            EpisodeStart(
                question=self.question,
                policy=name,
                system_prompt=system_prompt,
                tool_schemas=schemas,
                config=self.config.to_dict(),
                tokenizer=self.tc.counter.name,
                started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            )
        )
        if broken:
            return self.finish(ExitReason.POLICY_ERROR, broken)
        if not self.question.strip():
            return self.finish(ExitReason.INVALID_INPUT, "the question is empty")
        if self.invalid_text:
            return self.finish(
                ExitReason.INVALID_INPUT,
                "the question holds text that is not valid Unicode (a lone surrogate); "
                "send UTF-8 text",
            )
        return None

    def turn(self) -> Generator[TraceEvent, None, Result | None]:
        """One turn: observe, propose, validate and apply; a Result when the episode ends.

        The turn's query state is handed to the reader before the policy is asked."""
        cfg = self.config
        turn = len(self.state.turns)
        if self.stopped():
            return self.finish(ExitReason.CANCELLED, CANCELLED_MESSAGE)
        if self.elapsed() >= cfg.episode.wall_time_s:
            return self.finish(ExitReason.TIMEOUT, f"wall time {cfg.episode.wall_time_s}s")
        if turn >= cfg.episode.max_turns:
            return self.finish(ExitReason.MAX_TURNS, f"{cfg.episode.max_turns} turns")
        usage, notices = self.settle(self.extra)
        if usage.used > usage.budget:
            return self.finish(
                ExitReason.BUDGET,
                f"the next prompt needs {usage.used} tokens, over the budget of {usage.budget}",
            )
        self.emit(self.query_state(turn, usage, notices))
        messages = render_messages(self.state, self.tc.render_memo)
        self.sent_text = self.tc.raw_text(messages, self.state.tool_schemas)
        observation = replace(
            build_observation(self.state, messages, usage, notices, hop=self.hop),
            wall_time_left_s=max(cfg.episode.wall_time_s - self.elapsed(), 0.0),
        )
        yield from self.flush()
        asked = self.ask(turn, observation)
        if isinstance(asked, Result):
            return asked
        value, elapsed = asked
        model = getattr(value, "model", "")
        if isinstance(model, str) and model and model not in self.models:
            self.models.append(model)
        check, docs, dropped = check_final(
            check_proposal(value, turn),
            self.state.cache,
            self.state.context,
            cfg.episode.final_documents,
        )
        if not check.ok:
            return self.refuse(turn, value, check, usage, elapsed)
        assert check.proposal is not None
        return (yield from self.apply(turn, check.proposal, usage, elapsed, docs, dropped))

    def refuse(
        self, turn: int, value: Any, check: ProposalCheck, usage: UsageState, elapsed: float
    ) -> Result | None:
        """Record a refused proposal; end the episode after too many in a row."""
        proposal = check.proposal
        self.emit(
            ProposalEvent(
                turn=turn,
                proposal=proposal.to_dict() if proposal is not None else None,
                valid=False,
                raw=_raw_reply(value)[:2000],
                elapsed_s=elapsed,
            )
        )
        self.emit(Refusal(turn=turn, code=check.code, message=check.message))
        # every reply's usage, refused or not (a proposal's or a malformed reply's)
        reported = value.usage if isinstance(value, Proposal | MalformedReply) else None
        self.reconcile(turn, usage, reported)
        self.refused_streak += 1
        self.extra = [one_line(f"[Refused: {check.message}]")]
        if self.refused_streak >= self.config.episode.max_refused_in_a_row:
            return self.finish(
                ExitReason.POLICY_ERROR,
                f"{self.refused_streak} refused proposals in a row; last: {check.message}",
            )
        return None

    def apply(
        self,
        turn: int,
        proposal: Proposal,
        usage: UsageState,
        elapsed: float,
        docs: list[dict[str, Any]],
        dropped: list[DroppedId],
    ) -> Generator[TraceEvent, None, Result | None]:
        """Record a valid proposal and apply it: the final answer, or the turn's calls
        (each call's result handed to the reader as it is applied)."""
        cfg = self.config
        self.refused_streak, self.extra = 0, []
        self.emit(
            ProposalEvent(turn=turn, proposal=proposal.to_dict(), valid=True, elapsed_s=elapsed)
        )
        self.reconcile(turn, usage, proposal.usage)
        if proposal.hop is not None:
            self.hop = proposal.hop
        if proposal.final is not None:
            if not docs and _retrieval_all_failed(self.state):
                message = (
                    "every retrieval call of the episode failed (errors or timeouts) and the "
                    "answer names no document; check the index and episode.tool_timeout_s"
                )
                self.emit(Refusal(turn=turn, code="tools_failed", message=message))
                return self.finish(ExitReason.TOOLS_FAILED, message)
            for d in dropped:
                self.emit(Refusal(turn=turn, code=d.code, message=f"{d.id}: {d.message}"))
            self.emit(FinalEvent(turn=turn, documents=docs, flagged=flagged_in_view(self.state)))
            return self.finish(ExitReason.ANSWERED)
        outcome = yield from self.run_calls(turn, usage, proposal)
        if outcome == "max_calls":
            return self.finish(ExitReason.MAX_CALLS, f"{cfg.episode.max_calls} tool calls")
        self.hard_streak = self.hard_streak + 1 if outcome == "hard_refused" else 0
        if self.hard_streak >= cfg.episode.max_hard_refused_turns:
            return self.finish(
                ExitReason.BUDGET,
                f"past the hard limit, {self.hard_streak} turns of refused retrieval calls",
            )
        return None

    def run_calls(
        self, turn: int, usage: UsageState, proposal: Proposal
    ) -> Generator[TraceEvent, None, str]:
        """The turn's calls (:meth:`CallRunner.run`), each result read out as it is applied."""
        steps = self.calls.run(turn, usage, proposal)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                yield from self.flush()
                return str(done.value)
            yield from self.flush()

    def ask(self, turn: int, observation: Observation) -> tuple[Any, float] | Result:
        """The policy's reply and its time, or the Result ending the episode."""
        start = time.perf_counter()
        try:
            if isinstance(self.policy, InProcessPolicy) and self.policy.in_process:
                value = self.call_here(observation)
            else:
                value = self.wait(submit(lambda: self.policy.propose(observation)))
        except _Stopped:
            self.cancel_call(observation)
            self.emit(ProposalEvent(turn=turn, valid=False, raw="(cancelled before a reply)"))
            self.emit(Refusal(turn=turn, code="cancelled", message=CANCELLED_MESSAGE))
            return self.finish(ExitReason.CANCELLED, CANCELLED_MESSAGE)
        except TimeoutError:
            self.cancel_call(observation)
            self.emit(ProposalEvent(turn=turn, valid=False, raw="(no reply before wall time)"))
            self.emit(Refusal(turn=turn, code="timeout", message="policy did not reply"))
            return self.finish(ExitReason.TIMEOUT, "the policy did not reply in time")
        except BackendUnavailableError as exc:  # the policy's endpoint stayed down: a typed exit
            self.emit(ProposalEvent(turn=turn, valid=False, raw=str(exc)[:2000]))
            self.emit(Refusal(turn=turn, code="endpoint_unavailable", message=str(exc)[:2000]))
            return self.finish(ExitReason.ENDPOINT_UNAVAILABLE, str(exc))
        except Exception as exc:  # a policy bug ends the episode, never the process
            message = f"{type(exc).__name__}: {exc}"
            self.emit(ProposalEvent(turn=turn, valid=False, raw=message[:2000]))
            self.emit(Refusal(turn=turn, code="policy_exception", message=message[:2000]))
            return self.finish(ExitReason.POLICY_ERROR, message)
        return value, round(time.perf_counter() - start, 6)

    def cancel_call(self, observation: Observation) -> None:
        """Abandoning the policy's reply: a :class:`CancelsCalls` policy (the LLM policy:
        it closes the model call's connection) stops the work it started for it."""
        if isinstance(self.policy, CancelsCalls):
            with contextlib.suppress(Exception):  # a failed cancel must not hide the exit
                self.policy.cancel(observation)

    def call_here(self, observation: Observation) -> Any:
        """An in-process policy's reply, on this thread (see :class:`InProcessPolicy`):
        ``_Stopped`` when the caller stopped before it, ``TimeoutError`` when the
        reply came past the wall time, as :meth:`wait` would."""
        if self.stopped():
            raise _Stopped
        value = self.policy.propose(observation)
        if self.elapsed() > self.config.episode.wall_time_s:
            raise TimeoutError
        return value

    def stopped(self) -> bool:
        """Whether the reader asked the episode to stop (the stream's stop, ``should_stop``)."""
        if self.stop.is_set():
            return True
        return self.should_stop is not None and bool(self.should_stop())

    def wait(self, job: Job) -> Any:
        """The policy's reply, within the wall time; raises ``_Stopped`` once the caller stops.

        The wait is sliced so a stop is seen within :data:`STOP_POLL_S` (the
        policy's thread finishes on its own: a call cannot be killed, only abandoned).
        """
        limit = self.config.episode.wall_time_s
        while True:
            if self.stopped():
                raise _Stopped
            left = limit - self.elapsed()
            try:
                return job.result(min(STOP_POLL_S, left))
            except TimeoutError:
                if left <= STOP_POLL_S:  # that wait ran to the wall time
                    raise

    def settle(self, extra: list[str]) -> tuple[UsageState, list[str]]:
        base = self.tc.transcript(self.state)
        return settle_usage(
            base,
            self.state.correction,
            self.config.budget,
            lambda lines: self.tc.message({"content": "\n".join(lines)}),
            extra,
        )

    def query_state(self, turn: int, usage: UsageState, notices: list[str]) -> QueryState:
        return QueryState(
            turn=turn,
            used=usage.used,
            counted=usage.counted,
            correction=usage.correction,
            budget=usage.budget,
            soft=usage.soft,
            hard=usage.hard,
            notices=notices,
            active=self.state.context.ids(),
            pruned=list(self.state.pruned),
            current_query=self.state.current_query,
        )

    def reconcile(self, turn: int, usage: UsageState, reported: dict[str, int] | None) -> None:
        """Record endpoint-reported usage; its excess over our count corrects later counts."""
        reported = reported or {}
        prompt = reported.get("prompt_tokens")
        completion = reported.get("completion_tokens")
        if not isinstance(prompt, int) and not isinstance(completion, int):
            return
        prompt = prompt if isinstance(prompt, int) else None
        completion = completion if isinstance(completion, int) else None
        self.prompt_tokens += prompt or 0
        self.completion_tokens += completion or 0
        correction = max(0, prompt - usage.counted) if prompt is not None else usage.correction
        fitted = self.tc.calibrate(prompt, usage.counted, self.sent_text) if prompt else None
        if fitted is not None:  # a declared template cost: the ratio is fitted, may be < 0
            correction = fitted
        self.emit(
            UsageReport(
                turn=turn,
                counted=usage.counted,
                prompt_tokens=prompt,
                completion_tokens=completion,
                correction=correction,
            )
        )


#: codes of a retrieval call the tool itself failed (not the policy's arguments)
TOOL_FAILURES = frozenset({"timeout", "tool_error", "tool_failed"})


def _retrieval_all_failed(state: EpisodeState) -> bool:
    """Whether the episode ran retrieval calls and every one failed in the tool itself
    (a timeout, a store error), as with an index that is down."""
    ran = [
        e.code if e.status == "error" else e.status
        for e in state.trace
        if isinstance(e, ToolResult) and e.tool in RETRIEVAL_TOOLS and e.status != "refused"
    ]
    return bool(ran) and all(code in TOOL_FAILURES for code in ran)


def _raw_reply(value: Any) -> str:
    """A refused reply as the policy received it (a MalformedReply's ``raw``), else its repr."""
    if isinstance(value, MalformedReply) and value.raw:
        return value.raw
    return repr(value)


def episode_config(policy: Policy | EpisodicPolicy, config: Config) -> Config:
    """The config an episode of ``policy`` runs with: ``config`` plus what the policy declares.

    A :class:`~thresher.harness.policy.ChoosesRetrievalMode` policy sets
    ``retrieval.mode``; the result is recorded in the trace's start event.
    """
    if isinstance(policy, ChoosesRetrievalMode) and policy.retrieval_mode != config.retrieval.mode:
        return config.override({"retrieval.mode": policy.retrieval_mode})
    return config


def iter_episode(
    question: str,
    store: Store,
    policy: Policy | EpisodicPolicy,
    config: Config | None = None,
    *,
    reranker: SearchReranker | None = None,
    counter: TokenCounter | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> EpisodeStream:
    """One search episode as a stream of its trace events, run as it is read.

    Args:
        question, store, policy, config, reranker, counter, should_stop: as for
            :func:`run_episode`.

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
        episode_config(policy, config or Config()),
        reranker,
        counter,
        should_stop,
    )
    return EpisodeStream(episode.events(), episode.state, episode.stop, lambda: episode.result)


def run_episode(
    question: str,
    store: Store,
    policy: Policy | EpisodicPolicy,
    config: Config | None = None,
    *,
    reranker: SearchReranker | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
    on_turn: Callable[[EpisodeState], None] | None = None,
    counter: TokenCounter | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Result:
    """Run one search episode to its end (reads :func:`iter_episode` to the end).

    Args:
        question: the user's question (empty: exit ``invalid_input``).
        store: the index, through the Store protocol.
        policy: proposes tool calls or the final answer each turn; an
            :class:`~thresher.harness.policy.EpisodicPolicy` is asked for a session
            (``start(question)``) that does so for this episode.
        config: settings (defaults from the Context-1 report).
        reranker: reorders search candidates (default: the policy, or its session,
            when it declares :class:`~thresher.harness.policy.SearchReranker`).
        on_event: called with every trace event as it is recorded (live views); an
            error it raises ends the episode with exit reason ``error``.
        on_turn: called with the live state right after each turn's query state
            (tests snapshot it to compare with replay).
        counter: token counter (default: ``config.chunking.tokenizer``).
        should_stop: asked before each turn and while the policy is thinking
            (every :data:`STOP_POLL_S` s); True ends the episode with exit reason
            ``cancelled`` (a ``threading.Event``'s ``is_set`` fits).

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
