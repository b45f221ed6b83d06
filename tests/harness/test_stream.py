"""Episodes as streams of their events (``iter_episode``): read as applied, closed cleanly.

Each event comes out as it is recorded (a turn's query state before the policy
is asked; a call's result before the next call's fetch is waited for); closing
the stream ends the episode ``cancelled`` with every call answered in the trace,
from the reading thread or from another one while a step runs.
"""

from __future__ import annotations

import threading

from thresher.harness.actions import Proposal, answer, call
from thresher.harness.episode import CANCELLED_MESSAGE, iter_episode, run_episode
from thresher.harness.result import ExitReason
from thresher.harness.state import replay
from thresher.harness.trace import (
    EpisodeEnd,
    EpisodeStart,
    ProposalEvent,
    QueryState,
    Refusal,
    ToolResult,
)
from thresher.index.store import GrepResult
from thresher.policies.scripted import ScriptedPolicy

Q = "In which province is the town where the Halvard Glassworks was founded?"


def turn(*calls):
    return Proposal(tool_calls=tuple(calls))


def _script():
    return [
        turn(
            call("search_corpus", query="Halvard Glassworks"), call("grep_corpus", pattern="salt")
        ),
        answer("glassworks"),
    ]


def test_the_stream_yields_the_trace_as_run_episode_records_it(store, config):
    stream = iter_episode(Q, store, ScriptedPolicy(_script()), config)
    read = list(stream)
    assert stream.result is not None and stream.result.exit_reason is ExitReason.ANSWERED
    assert read == list(stream.result.trace)
    assert isinstance(read[0], EpisodeStart) and isinstance(read[-1], EpisodeEnd)
    again = run_episode(Q, store, ScriptedPolicy(_script()), config)
    assert [type(e) for e in again.trace] == [type(e) for e in read]


def test_a_turns_query_state_is_read_before_the_policy_is_asked(store, config):
    policy = ScriptedPolicy(_script())
    stream = iter_episode(Q, store, policy, config)
    assert isinstance(next(stream), EpisodeStart) and not policy.observations
    assert isinstance(next(stream), QueryState) and not policy.observations
    assert stream.state.turn == 0
    stream.close()


class _HeldGrep:
    """The real store, whose grep waits until the test releases it."""

    def __init__(self, store) -> None:
        self._store = store
        self.release = threading.Event()
        self.started = threading.Event()

    def __getattr__(self, name):
        return getattr(self._store, name)

    def pinned(self):
        return self  # an episode reads through the hold (not the store's pinned view)

    def grep(self, pattern, **kw) -> GrepResult:
        self.started.set()
        self.release.wait(30)
        return self._store.grep(pattern, **kw)


def test_a_calls_result_is_read_before_the_next_calls_fetch_is_done(store, config):
    held = _HeldGrep(store)
    stream = iter_episode(Q, held, ScriptedPolicy(_script()), config)
    try:
        first = next(e for e in stream if isinstance(e, ToolResult))
        assert first.tool == "search_corpus" and first.shown
        # the grep started on its worker (the search may have run inline) and is held
        assert held.started.wait(10) and not held.release.is_set()
    finally:
        held.release.set()
    rest = list(stream)
    assert [e.tool for e in rest if isinstance(e, ToolResult)] == ["grep_corpus"]
    assert stream.result is not None and stream.result.exit_reason is ExitReason.ANSWERED


def test_closing_mid_turn_ends_cancelled_with_every_call_answered(store, config, tmp_path):
    held = _HeldGrep(store)
    stream = iter_episode(Q, held, ScriptedPolicy(_script()), config)
    try:
        next(e for e in stream if isinstance(e, ToolResult))  # the search; grep in flight
        stream.close()
    finally:
        held.release.set()
    assert list(stream) == []  # nothing more to read
    result = stream.result
    assert result is not None and result.exit_reason is ExitReason.CANCELLED and result.partial
    assert result.message == CANCELLED_MESSAGE
    cut = [e for e in result.trace if isinstance(e, ToolResult) and e.tool == "grep_corpus"]
    assert [(e.status, e.code) for e in cut] == [("refused", "cancelled")]
    end = result.trace[-1]
    assert isinstance(end, EpisodeEnd) and end.exit_reason == "cancelled"
    assert replay(result.trace).exit_reason == "cancelled"


def test_closing_an_unread_stream_records_a_start_and_a_cancelled_end(store, config):
    policy = ScriptedPolicy(_script())
    stream = iter_episode(Q, store, policy, config)
    stream.close()
    assert stream.result is not None and stream.result.exit_reason is ExitReason.CANCELLED
    assert [type(e) for e in stream.result.trace] == [EpisodeStart, EpisodeEnd]
    assert not policy.observations


def test_a_with_block_closes_the_stream(store, config):
    with iter_episode(Q, store, ScriptedPolicy(_script()), config) as stream:
        next(stream)
    assert stream.result is not None and stream.result.exit_reason is ExitReason.CANCELLED


def test_closing_from_another_thread_while_the_policy_thinks(store, config):
    release = threading.Event()
    asked = threading.Event()

    def slow(observation):
        asked.set()
        release.wait(30)  # a model that would take long to answer
        return answer("glassworks")

    stream = iter_episode(Q, store, ScriptedPolicy([slow]), config)
    read: list = []
    reader = threading.Thread(target=lambda: read.extend(stream), daemon=True)
    reader.start()
    try:
        assert asked.wait(30)
        stream.close()  # never blocks; the reader's step ends the episode
        reader.join(30)
        assert not reader.is_alive()
    finally:
        release.set()
    result = stream.result
    assert result is not None and result.exit_reason is ExitReason.CANCELLED
    proposal, refusal = (e for e in result.trace if isinstance(e, ProposalEvent | Refusal))
    assert not proposal.valid and refusal.code == "cancelled"
    assert isinstance(result.trace[-1], EpisodeEnd)


def test_cancel_lets_the_reader_read_the_cancelled_end(store, config):
    stream = iter_episode(Q, store, ScriptedPolicy(_script()), config)
    for event in stream:
        if isinstance(event, ToolResult):
            stream.cancel()
    assert isinstance(event, EpisodeEnd) and event.exit_reason == "cancelled"
    assert stream.result is not None and stream.result.turns == 1
