"""A store that declares its searches quick and local (``SearchesInline``) has the turn's
searches and reads run on the episode's thread, with the same results and the same
timeout as on a worker; a grep still runs on a worker."""

from __future__ import annotations

import threading
import time
from typing import Any

from thresher.harness.actions import Proposal, answer, call
from thresher.harness.episode import run_episode
from thresher.harness.trace import ToolResult
from thresher.index.store import SearchesInline
from thresher.policies.scripted import ScriptedPolicy

Q = "In which province is the town where the Halvard Glassworks was founded?"


class NotingStore:
    """The real store, noting the thread of each search; declares inline searches when
    ``inline`` (``delay``: seconds each search sleeps first)."""

    def __init__(
        self, store: Any, inline: bool, delay: float = 0.0, grep_delay: float = 0.0
    ) -> None:
        self._store = store
        self.inline = inline
        self.delay = delay
        self.grep_delay = grep_delay
        self.threads: list[int] = []
        self.grep_threads: list[int] = []

    def searches_inline(self) -> bool:
        return self.inline

    def pinned(self) -> Any:
        return self  # an episode reads through this wrapper (not the store's pinned view)

    def grep(self, *args: Any, **kwargs: Any) -> Any:
        self.grep_threads.append(threading.get_ident())
        if self.grep_delay:
            time.sleep(self.grep_delay)
        return self._store.grep(*args, **kwargs)

    def hybrid_search(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.append(threading.get_ident())
        if self.delay:
            time.sleep(self.delay)
        return self._store.hybrid_search(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _two_searches() -> ScriptedPolicy:
    searches = Proposal(
        tool_calls=(
            call("search_corpus", query="Halvard Glassworks founded"),
            call("search_corpus", query="Marrowick province"),
        )
    )
    return ScriptedPolicy([searches, answer()])


def _searches_and_a_grep() -> ScriptedPolicy:
    calls = Proposal(
        tool_calls=(
            call("search_corpus", query="Halvard Glassworks founded"),
            call("grep_corpus", pattern="Marrowick"),
            call("search_corpus", query="Marrowick province"),
        )
    )
    return ScriptedPolicy([calls, answer()])


def _shown(result: Any) -> list[tuple[str, tuple[str, ...], str]]:
    return [(e.tool, tuple(e.shown), e.status) for e in result.trace if isinstance(e, ToolResult)]


def test_the_searches_of_a_turn_run_on_the_episodes_thread(store, config) -> None:
    inline = NotingStore(store, inline=True)
    threaded = NotingStore(store, inline=False)
    assert isinstance(inline, SearchesInline)
    here = run_episode(Q, inline, _two_searches(), config)
    there = run_episode(Q, threaded, _two_searches(), config)
    me = threading.get_ident()
    assert inline.threads == [me, me]
    assert me not in threaded.threads
    assert _shown(here) == _shown(there)
    assert [e.status for e in here.trace if isinstance(e, ToolResult)] == ["ok", "ok"]


def test_a_grep_runs_on_a_worker_beside_the_inline_searches(store, config) -> None:
    inline = NotingStore(store, inline=True)
    threaded = NotingStore(store, inline=False)
    here = run_episode(Q, inline, _searches_and_a_grep(), config)
    there = run_episode(Q, threaded, _searches_and_a_grep(), config)
    me = threading.get_ident()
    assert inline.threads == [me, me] and len(inline.grep_threads) == 1
    assert inline.grep_threads[0] != me
    assert _shown(here) == _shown(there)


def test_an_inline_search_past_the_deadline_is_a_timeout(store, config) -> None:
    quick = config.override({"episode.tool_timeout_s": 0.05})
    slow = NotingStore(store, inline=True, delay=0.2)
    r = run_episode(Q, slow, _two_searches(), quick)
    results = [e for e in r.trace if isinstance(e, ToolResult)]
    assert results[0].status == "error" and results[0].code == "timeout"
    assert "timed out" in results[0].header + results[0].footer


def test_the_embedded_store_declares_whether_its_searches_run_inline(store) -> None:
    """The protocol is declared; the test index (its chunks read through chromadb, no
    saved records) keeps its searches on workers."""
    assert isinstance(store, SearchesInline)
    assert isinstance(store.searches_inline(), bool)


def test_a_worker_result_that_ended_past_the_deadline_is_a_timeout(store, config) -> None:
    """The grep ends past the turn's deadline (0.05 s) while the inline search before it
    runs (0.3 s); read after that, it is still late: a timeout, not a result."""
    quick = config.override({"episode.tool_timeout_s": 0.05})
    slow = NotingStore(store, inline=True, delay=0.3, grep_delay=0.1)
    policy = ScriptedPolicy(
        [
            Proposal(
                tool_calls=(
                    call("search_corpus", query="Halvard Glassworks founded"),
                    call("grep_corpus", pattern="Marrowick"),
                )
            ),
            answer(),
        ]
    )
    r = run_episode(Q, slow, policy, quick)
    results = [e for e in r.trace if isinstance(e, ToolResult)]
    assert [(e.tool, e.status, e.code) for e in results] == [
        ("search_corpus", "error", "timeout"),
        ("grep_corpus", "error", "timeout"),
    ]
