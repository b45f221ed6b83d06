"""Run one turn's tool calls: plan, fetch concurrently, apply in call order.

Retrieval calls are submitted to daemon workers together (a turn costs about
its slowest call), each with the turn's deadline; their results are turned
into events and applied strictly in call order, each cut to the room the
calls before it left. A store that searches inline
(:class:`~thresher.index.store.SearchesInline`: about a millisecond from memory)
runs the turn's searches and reads on the episode's thread instead, each when
its turn to be applied comes (handing one to a worker costs more than it takes;
on a loaded machine, workers beside the episode's thread fight it for the
interpreter); a grep still goes to a worker. Prune and recall need no I/O. A search's rerank by the policy (a declared
:class:`~thresher.harness.policy.SearchReranker`) runs in that loop, on the
episode's thread: the policy is never called from two threads at once. Each call's event is
recorded before the next is waited for, so the episode's reader sees it then.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import replace

from thresher.config import Config
from thresher.errors import ThresherError
from thresher.harness.actions import Proposal, ToolCall
from thresher.harness.budget import UsageState, tool_room
from thresher.harness.policy import SearchReranker
from thresher.harness.render import MESSAGE_OVERHEAD, tool_content
from thresher.harness.state import EpisodeState
from thresher.harness.tools import (
    INLINE_TOOLS,
    RETRIEVAL_TOOLS,
    Fetched,
    fetch,
    rerank_search,
    tool_spec,
)
from thresher.harness.trace import ToolResult, TraceEvent
from thresher.harness.transcript_counter import TranscriptCounter
from thresher.harness.transitions import CallContext, refused_result
from thresher.harness.validate import plan_calls
from thresher.index.store import SearchesInline, Store
from thresher.workers import Job, submit

__all__ = ["CALL_RESERVE", "CallRunner"]

#: tokens kept per not-yet-applied call of the turn (its header or error line)
CALL_RESERVE = 64


class CallRunner:
    """Executes a proposal's tool calls against one episode's state.

    Args:
        state: the episode state (read; changed only through ``emit``).
        store: the index.
        config: the episode's settings.
        counter: the episode's transcript counter.
        reranker: the policy, when it declares :class:`SearchReranker`.
        emit: records an event and applies it to ``state``.
        elapsed: seconds since the episode started.
        notice_reserve: tokens kept for the next turn's notice message.
    """

    def __init__(
        self,
        state: EpisodeState,
        store: Store,
        config: Config,
        counter: TranscriptCounter,
        reranker: SearchReranker | None,
        emit: Callable[[TraceEvent], TraceEvent],
        elapsed: Callable[[], float],
        notice_reserve: int,
    ) -> None:
        self.state = state
        self.store = store
        self.config = config
        self.tc = counter
        self.reranker = reranker
        self.emit = emit
        self.elapsed = elapsed
        self.notice_reserve = notice_reserve

    def run(self, turn: int, usage: UsageState, proposal: Proposal) -> Generator[None, None, str]:
        """Check, run concurrently, apply in order. Returns 'max_calls', 'hard_refused' or ''.

        A generator: it pauses before each call is applied, so the episode can hand the
        results applied so far to its reader (a closed run leaves the rest unapplied)."""
        cfg = self.config
        state = self.state
        plan, hit_cap = plan_calls(proposal.tool_calls, state.calls_made(), cfg.episode, usage)
        query = state.current_query
        jobs: dict[int, Job] = {}
        here: dict[int, Callable[[], Fetched]] = {}  # run on this thread when applied
        inline = self._searches_inline()
        for i, planned in enumerate(plan):
            call = planned.call
            if not planned.code and call.name in RETRIEVAL_TOOLS:
                if inline and call.name in INLINE_TOOLS:
                    here[i] = self.fetcher(call, query)
                else:
                    jobs[i] = submit(self.fetcher(call, query), self.elapsed)
                spec = tool_spec(call.name)
                if spec.view is not None and spec.view.sets_query:  # search_corpus
                    query = call.arguments[spec.argument.name]
        wall_left = max(cfg.episode.wall_time_s - self.elapsed(), 0.0)
        window = min(cfg.episode.tool_timeout_s, wall_left)
        deadline = self.elapsed() + window  # on the episode's clock, as the jobs' ends
        for i, planned in enumerate(plan):
            yield  # the calls before this one are applied
            call = planned.call
            if planned.code:
                self.emit_result(refused_result(call, turn, planned.code, planned.message))
                continue
            ctx = self.call_context(turn, proposal, len(plan) - i - 1, call.call_id)
            spec = tool_spec(call.name)
            fetched = Fetched()  # prune and recall fetch nothing: the cache serves them
            if spec.retrieval:
                try:
                    if i in here:
                        fetched = here[i]()
                        if self.elapsed() > deadline:
                            raise TimeoutError
                    else:
                        fetched = jobs[i].result(deadline - self.elapsed())
                        if jobs[i].ended > deadline:  # ended late, read only now
                            raise TimeoutError
                except TimeoutError:
                    fetched = Fetched(error_code="timeout", error=_timeout_text(cfg, window))
                if spec.view is not None and spec.view.sets_query and self.reranker is not None:
                    # on this thread, in call order: the policy never reranks concurrently
                    searched = call.arguments[spec.argument.name]
                    fetched = rerank_search(
                        fetched, searched, state.question, self.store, self.reranker
                    )
            event = spec.apply(spec, call, fetched, state, ctx)
            if event.tokens:  # counted where its chunks were fitted
                self.emit(event)
            else:
                self.emit_result(event)
        if hit_cap:
            return "max_calls"
        codes = [p.code for p in plan]
        if codes and all(c == "hard_cutoff" for c in codes):
            return "hard_refused"
        return ""

    def emit_result(self, event: ToolResult) -> None:
        """Record a result not yet counted (no chunks fitted), with its message's token count."""
        content = tool_content(event.header, [], event.footer)
        self.emit(replace(event, tokens=MESSAGE_OVERHEAD + self.tc.text(content)))

    def _searches_inline(self) -> bool:
        """Whether the store runs the turn's searches and reads on this thread (a store
        that cannot say, e.g. its backend is gone, keeps them on workers, where the
        fetch reports that failure as the call's error)."""
        if not isinstance(self.store, SearchesInline):
            return False
        try:
            return self.store.searches_inline()
        except ThresherError:
            return False

    def fetcher(self, call: ToolCall, query: str) -> Callable[[], Fetched]:
        """The call's fetch against the state as it is now (the turn's snapshot)."""
        state = self.state
        seen = frozenset(state.cache.ids())
        in_context = frozenset(state.context.ids())
        return lambda: fetch(
            call.name,
            call.arguments,
            self.store,
            self.config,
            seen=seen,
            in_context=in_context,
            current_query=query,
            question=state.question,
        )

    def call_context(
        self, turn: int, proposal: Proposal, remaining_calls: int, call_id: str = ""
    ) -> CallContext:
        reserve = self.notice_reserve + CALL_RESERVE * remaining_calls
        room = tool_room(
            self.tc.transcript(self.state), self.state.correction, self.config.budget, reserve
        )
        return CallContext(
            turn=turn,
            hop=proposal.hop,
            parents=proposal.parents_of(call_id),
            room=room,
            per_call=self.config.budget.per_call_tokens,
            search_results=self.config.episode.search_results,
            counter=self.tc,
        )


def _timeout_text(cfg: Config, window: float) -> str:
    """What a timed-out call says: the limit that actually cut it (the tool timeout, or
    the episode's wall time when less of it was left)."""
    if window < cfg.episode.tool_timeout_s:
        return (
            f"timed out after {window:.3g}s (the episode's wall time of "
            f"{cfg.episode.wall_time_s:g}s ran out)"
        )
    return f"timed out after {cfg.episode.tool_timeout_s:g}s (episode.tool_timeout_s)"
