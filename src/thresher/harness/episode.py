"""The episode loop: observe → propose → validate and apply → record, until an exit.

Each turn:

1. *Observe*: render the transcript from the state, count it exactly with the
   notice message included (:mod:`thresher.harness.metering`); if it is over the
   budget the episode ends (``budget``): nothing over budget is ever sent.
2. *Propose*: the policy gets an :class:`Observation`, bounded by the wall time
   (:mod:`thresher.harness.asking`: no reply in time, an exception or an
   endpoint that stayed down end the episode).
3. *Apply* (:mod:`thresher.harness.replies`): garbage is refused and recorded,
   and after ``episode.max_refused_in_a_row`` refusals in a row the episode ends
   (``policy_error``); a final answer is resolved and ends the episode
   (``answered``; an answer naming no document after every retrieval call failed
   in the tool ends ``tools_failed``).
   Tool calls are checked (allow-list, caps, hard cutoff, arguments); the
   retrieval calls run concurrently on daemon threads with a timeout each,
   and their results are applied in call order, each cut to the room left
   (:mod:`thresher.harness.calls`).
4. *Record*: every step is a trace event applied through
   :meth:`EpisodeState.apply`, the same transition replay uses
   (:mod:`thresher.harness.recorder`).

Before the first turn the episode opens (:mod:`thresher.harness.opening`: the
store pinned to one index generation, the policy's session started); every exit
ends it the same way, with a :class:`Result` and the trace so far
(:mod:`thresher.harness.ending`).

The episode is a stream of its events: :func:`iter_episode` returns an
:class:`~thresher.harness.stream.EpisodeStream` that runs the episode as it is
read, one recorded event per ``next``; :func:`run_episode` reads it to the end.
A reader stops the episode by closing the stream (or with ``cancel``, or with a
``should_stop`` it passes: asked before each turn and while the policy is
thinking); the episode then ends with exit reason ``cancelled``, recorded in the
trace like any other exit. That is the one way in from outside: the harness still
owns the loop, and nothing else about the episode changes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import replace
from typing import Any

from thresher.config import Config, EpisodeConfig
from thresher.corpus.sanitize import has_surrogate, scrub
from thresher.harness.asking import NoReply, ask_policy
from thresher.harness.calls import CallRunner
from thresher.harness.ending import CANCELLED_MESSAGE, bare_result, cut_short_calls, end_episode
from thresher.harness.metering import Meter
from thresher.harness.observation import Observation, build_observation, query_state
from thresher.harness.opening import (
    cannot_begin,
    episode_config,
    fit_budget,
    open_policy,
    pin,
    prompt_cost,
)
from thresher.harness.policy import EpisodicPolicy, Policy, SearchReranker
from thresher.harness.recorder import EventRecorder
from thresher.harness.render import render_messages
from thresher.harness.replies import Replies
from thresher.harness.result import ExitReason, Result
from thresher.harness.state import EpisodeState
from thresher.harness.stream import EpisodeStream
from thresher.harness.trace import ProposalEvent, QueryState, Refusal, TraceEvent
from thresher.harness.transcript_counter import TranscriptCounter
from thresher.index.store import Store
from thresher.tokens import TokenCounter, get_counter

__all__ = ["run_episode", "iter_episode", "MAX_REFUSED_PROPOSALS", "MAX_HARD_REFUSALS"]

#: defaults of ``EpisodeConfig.max_refused_in_a_row`` and ``.max_hard_refused_turns``
MAX_REFUSED_PROPOSALS = EpisodeConfig().max_refused_in_a_row
MAX_HARD_REFUSALS = EpisodeConfig().max_hard_refused_turns


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
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.invalid_text = has_surrogate(question)
        self.question = scrub(question)  # what is recorded and searched is valid Unicode
        self.store = pin(store)
        self.given = policy
        self.reranker = reranker  # given by the caller; else the policy's (see :meth:`use`)
        self.should_stop = should_stop
        self.stop = threading.Event()  # set by the stream's reader (cancel, close)
        self.result: Result | None = None  # set once the episode has ended
        cost = prompt_cost(policy)
        self.tc = TranscriptCounter(counter or get_counter(config.chunking.tokenizer), cost=cost)
        self.state = EpisodeState()
        # (the recorder, the meter, the call runner and the replies hold no reference
        # back to the episode: no cycle, see :mod:`thresher.harness.recorder`)
        self.recorder = EventRecorder(self.state, clock)
        self.configure(config)
        if not isinstance(policy, EpisodicPolicy):
            self.use(policy)

    def configure(self, config: Config) -> None:
        """Run with ``config``: the parts that read the settings are built from it
        (at the start, before any turn)."""
        self.config = config
        self.meter = Meter(self.state, self.tc, config.budget, self.recorder.emit)
        self.calls = CallRunner(
            self.state,
            self.store,
            config,
            self.tc,
            self.reranker,
            self.recorder.emit,
            self.recorder.elapsed,
            self.meter.notice_reserve(),
        )
        self.replies = Replies(self.recorder, config, self.meter, self.calls)

    def use(self, policy: Policy) -> None:
        """Drive ``policy`` this episode; it reranks searches when it declares
        :class:`SearchReranker` and the caller gave no reranker."""
        self.policy = policy
        if self.reranker is None:
            self.calls.reranker = policy if isinstance(policy, SearchReranker) else None

    def emit(self, event: TraceEvent) -> TraceEvent:
        return self.recorder.emit(event)

    def flush(self) -> Iterator[TraceEvent]:
        """Hand the recorded events to the reader, in order."""
        return self.recorder.drain()

    def stopped(self) -> bool:
        """Whether the reader asked the episode to stop (the stream's stop, ``should_stop``)."""
        if self.stop.is_set():
            return True
        return self.should_stop is not None and bool(self.should_stop())

    # -- the ends ----------------------------------------------------------------------
    def finish(self, reason: ExitReason, message: str = "") -> Result:
        limit = self.config.episode.final_documents
        models = self.replies.models
        self.result = end_episode(
            self.recorder, self.question, self.meter.usage(), models, limit, reason, message
        )
        return self.result

    def end_early(self) -> None:
        """End an episode its reader left: the calls of a turn cut short are recorded
        refused (so every call has its result), then the end, ``cancelled``."""
        if self.result is not None:
            return
        for cut in cut_short_calls(self.state.trace):
            self.calls.emit_result(cut)
        self.finish(ExitReason.CANCELLED, CANCELLED_MESSAGE)

    def fail(self, exc: Exception) -> Result:
        """The Result of an episode ended by an internal error (``error``)."""
        message = f"internal error: {type(exc).__name__}: {exc}"
        try:
            return self.finish(ExitReason.ERROR, message)
        except Exception:  # recording failed too: a bare Result with what the state holds
            budget, wall = self.config.budget.total, self.recorder.elapsed()
            self.result = bare_result(self.state, self.question, budget, wall, message)
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

    def start(self) -> Result | None:
        """Record the episode's start; a Result when it cannot begin."""
        opened = open_policy(self.given, self.question, self.store)
        ended = cannot_begin(opened, self.question, self.invalid_text)
        if ended is None:  # the budget this episode runs with (recorded in its start)
            driver = opened.session if opened.session is not None else self.given
            fitted, notice = fit_budget(driver, self.config)
            if notice:
                self.configure(fitted)
                if not isinstance(self.given, EpisodicPolicy):
                    self.use(self.given)
        if opened.session is not None:
            self.use(opened.session)
        self.emit(opened.start_event(self.question, self.config, self.tc.counter.name))
        return None if ended is None else self.finish(ended.reason, ended.message)

    def turn(self) -> Generator[TraceEvent, None, Result | None]:
        """One turn: observe, propose, validate and apply; a Result when the episode ends.

        The turn's query state is handed to the reader before the policy is asked."""
        cfg = self.config
        turn = len(self.state.turns)
        if self.stopped():
            return self.finish(ExitReason.CANCELLED, CANCELLED_MESSAGE)
        if self.recorder.elapsed() >= cfg.episode.wall_time_s:
            return self.finish(ExitReason.TIMEOUT, f"wall time {cfg.episode.wall_time_s}s")
        if turn >= cfg.episode.max_turns:
            return self.finish(ExitReason.MAX_TURNS, f"{cfg.episode.max_turns} turns")
        usage, notices = self.meter.settle(self.replies.extra)
        if usage.used > usage.budget:
            return self.finish(
                ExitReason.BUDGET,
                f"the next prompt needs {usage.used} tokens, over the budget of {usage.budget}",
            )
        self.emit(query_state(self.state, turn, usage, notices))
        messages = render_messages(self.state, self.tc.render_memo)
        self.meter.sending(messages)
        observation = replace(
            build_observation(self.state, messages, usage, notices, hop=self.replies.hop),
            wall_time_left_s=max(cfg.episode.wall_time_s - self.recorder.elapsed(), 0.0),
        )
        yield from self.flush()
        asked = self.ask(turn, observation)
        if isinstance(asked, Result):
            return asked
        value, elapsed = asked
        ended = yield from self.replies.take(turn, value, elapsed, usage)
        return None if ended is None else self.finish(ended.reason, ended.message)

    def ask(self, turn: int, observation: Observation) -> tuple[Any, float] | Result:
        """The policy's reply and its time, or the Result ending the episode."""
        asked = ask_policy(
            self.policy,
            observation,
            wall_time_s=self.config.episode.wall_time_s,
            elapsed=self.recorder.elapsed,
            stopped=self.stopped,
        )
        if isinstance(asked, NoReply):
            self.emit(ProposalEvent(turn=turn, valid=False, raw=asked.raw))
            self.emit(Refusal(turn=turn, code=asked.code, message=asked.message))
            return self.finish(asked.end.reason, asked.end.message)
        return asked


def iter_episode(
    question: str,
    store: Store,
    policy: Policy | EpisodicPolicy,
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
        episode_config(policy, config or Config()),
        reranker,
        counter,
        should_stop,
        clock,
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
    clock: Callable[[], float] = time.perf_counter,
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
            (every :data:`~thresher.harness.asking.STOP_POLL_S` s); True ends the episode with exit reason
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
