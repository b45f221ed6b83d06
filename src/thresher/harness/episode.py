"""The episode loop: observe → propose → validate and apply → record, until an exit.

Each turn:

1. *Observe*: render the transcript from the state, count it exactly with the
   notice message (usage line, soft/hard notices, refusals) included; if it
   is over the budget the episode ends (``budget``): nothing over budget is
   ever sent.
2. *Propose*: the policy gets an :class:`Observation` (bounded by the wall
   time); an exception ends the episode (``policy_error``), garbage is refused
   and recorded, and after ``MAX_REFUSED_PROPOSALS`` refusals in a row the
   episode ends (``policy_error``).
3. *Apply*: a final answer is resolved and ends the episode (``answered``).
   Tool calls are checked (allow-list, caps, hard cutoff, arguments); the
   retrieval calls run concurrently on daemon threads with a timeout each,
   and their results are applied in call order, each cut to the room left.
4. *Record*: every step is a trace event applied through
   :meth:`EpisodeState.apply`, the same transition replay uses.

Daemon threads rather than a ``ThreadPoolExecutor``: a call that times out
cannot be killed, and an executor joins its workers at interpreter exit, so
one hung store call would hang the process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from thresher.config import Config
from thresher.harness.actions import RETRIEVAL_TOOLS, TOOL_NAMES, Proposal, ToolCall
from thresher.harness.budget import (
    HARD_REFUSAL,
    UsageState,
    notices_for,
    settle_usage,
    tool_room,
)
from thresher.harness.final import resolve_final
from thresher.harness.observation import build_observation
from thresher.harness.render import (
    MESSAGE_OVERHEAD,
    TranscriptCounter,
    render_messages,
    tool_content,
)
from thresher.harness.result import (
    ExitReason,
    Result,
    Usage,
    documents_from_final,
    partial_ranking,
)
from thresher.harness.state import EpisodeState
from thresher.harness.tools import Fetched, Reranker, check_arguments, fetch
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
from thresher.harness.transitions import (
    CallContext,
    prune_result,
    recall_result,
    refused_result,
    retrieval_result,
)
from thresher.harness.validate import check_proposal
from thresher.index.store import Store
from thresher.tokens import TokenCounter, get_counter

if TYPE_CHECKING:
    from thresher.policies.base import Policy

__all__ = ["run_episode", "MAX_REFUSED_PROPOSALS", "MAX_HARD_REFUSALS", "CALL_RESERVE"]

#: refused proposals in a row before the episode ends with policy_error
MAX_REFUSED_PROPOSALS = 3
#: turns in a row whose calls were all refused by the hard cutoff before it ends with budget
MAX_HARD_REFUSALS = 3
#: tokens kept per not-yet-applied call of the turn (its header or error line)
CALL_RESERVE = 64


class _Job:
    """Run ``fn`` on a daemon thread; ``result(timeout)`` raises TimeoutError if unfinished."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._fn = fn
        self._done = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name="thresher-job", daemon=True).start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as exc:  # handed to the caller of result()
            self._error = exc
        finally:
            self._done.set()

    def result(self, timeout: float) -> Any:
        if not self._done.wait(max(timeout, 0.0)):
            raise TimeoutError
        if self._error is not None:
            raise self._error
        return self._value


class _Episode:
    def __init__(
        self,
        question: str,
        store: Store,
        policy: Policy,
        config: Config,
        reranker: Reranker | None,
        on_event: Callable[[TraceEvent], None] | None,
        on_turn: Callable[[EpisodeState], None] | None,
        counter: TokenCounter | None,
    ) -> None:
        self.question = question
        self.store = store
        self.policy = policy
        self.config = config
        self.reranker = reranker or getattr(policy, "rerank", None)
        self.on_event = on_event
        self.on_turn = on_turn
        self.tc = TranscriptCounter(counter or get_counter(config.chunking.tokenizer))
        self.state = EpisodeState()
        self.t0 = time.perf_counter()
        self.hop: int | None = None
        self.prompt_tokens = 0
        self.completion_tokens = 0
        # the largest notice message a turn after tool calls can get (no proposal refusals)
        worst = notices_for(int("9" * len(str(config.budget.total))), config.budget)
        self.notice_reserve = self.tc.message({"content": "\n".join(worst)}) + 4

    # -- recording -------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def emit(self, event: TraceEvent) -> TraceEvent:
        stored = self.state.apply(replace(event, t=round(self.elapsed(), 6)))
        if self.on_event is not None:
            self.on_event(stored)
        return stored

    def finish(self, reason: ExitReason, message: str = "") -> Result:
        state = self.state
        answered = reason is ExitReason.ANSWERED and state.final is not None
        limit = self.config.episode.max_final_documents
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
            )
        )
        return Result(
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

    # -- the loop ----------------------------------------------------------------------
    def run(self) -> Result:
        cfg = self.config
        schemas = list(self.policy.tool_schemas() or [])
        self.emit(
            EpisodeStart(
                question=self.question,
                policy=str(getattr(self.policy, "name", type(self.policy).__name__)),
                system_prompt=str(self.policy.system_prompt),
                tool_schemas=schemas,
                config=cfg.to_dict(),
                tokenizer=self.tc.counter.name,
                started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            )
        )
        if not self.question.strip():
            return self.finish(ExitReason.INVALID_INPUT, "the question is empty")
        refused_streak = hard_streak = 0
        extra: list[str] = []
        while True:
            turn = len(self.state.turns)
            if self.elapsed() >= cfg.episode.wall_time_s:
                return self.finish(ExitReason.TIMEOUT, f"wall time {cfg.episode.wall_time_s}s")
            if turn >= cfg.episode.max_turns:
                return self.finish(ExitReason.MAX_TURNS, f"{cfg.episode.max_turns} turns")
            usage, notices = self.settle(extra)
            if usage.used > usage.budget:
                return self.finish(
                    ExitReason.BUDGET,
                    f"the next prompt needs {usage.used} tokens, over the budget of {usage.budget}",
                )
            self.emit(self.query_state(turn, usage, notices))
            messages = render_messages(self.state)
            observation = build_observation(self.state, messages, usage, notices, hop=self.hop)
            if self.on_turn is not None:
                self.on_turn(self.state)
            start = time.perf_counter()
            try:
                job = _Job(lambda obs=observation: self.policy.propose(obs))
                value = job.result(cfg.episode.wall_time_s - self.elapsed())
            except TimeoutError:
                self.emit(ProposalEvent(turn=turn, valid=False, raw="(no reply before wall time)"))
                self.emit(Refusal(turn=turn, code="timeout", message="policy did not reply"))
                return self.finish(ExitReason.TIMEOUT, "the policy did not reply in time")
            except Exception as exc:  # a policy bug ends the episode, never the process
                message = f"{type(exc).__name__}: {exc}"
                self.emit(ProposalEvent(turn=turn, valid=False, raw=message[:2000]))
                self.emit(Refusal(turn=turn, code="policy_exception", message=message[:2000]))
                return self.finish(ExitReason.POLICY_ERROR, message)
            elapsed = round(time.perf_counter() - start, 6)
            check = check_proposal(value, turn)
            proposal = check.proposal
            if check.ok and proposal is not None and proposal.final is not None:
                docs, dropped = resolve_final(
                    proposal.final,
                    self.state.cache,
                    self.state.context,
                    cfg.episode.max_final_documents,
                )
                if proposal.final.documents and not docs:
                    check = replace(
                        check,
                        code="no_known_documents",
                        message="the final answer names no document retrieved in this episode: "
                        + ", ".join(d.doc_id for d in proposal.final.documents[:5]),
                    )
            if not check.ok:
                self.emit(
                    ProposalEvent(
                        turn=turn,
                        proposal=proposal.to_dict() if proposal is not None else None,
                        valid=False,
                        raw=repr(value)[:2000],
                        elapsed_s=elapsed,
                    )
                )
                self.emit(Refusal(turn=turn, code=check.code, message=check.message))
                refused_streak += 1
                extra = [f"[Refused: {check.message}]"]
                if refused_streak >= MAX_REFUSED_PROPOSALS:
                    return self.finish(
                        ExitReason.POLICY_ERROR,
                        f"{refused_streak} refused proposals in a row; last: {check.message}",
                    )
                continue
            assert proposal is not None
            refused_streak, extra = 0, []
            self.emit(
                ProposalEvent(turn=turn, proposal=proposal.to_dict(), valid=True, elapsed_s=elapsed)
            )
            self.reconcile(turn, usage, proposal)
            if proposal.hop is not None:
                self.hop = proposal.hop
            if proposal.final is not None:
                for d in dropped:
                    self.emit(
                        Refusal(
                            turn=turn, call_id=None, code=d.code, message=f"{d.id}: {d.message}"
                        )
                    )
                self.emit(FinalEvent(turn=turn, documents=docs))
                return self.finish(ExitReason.ANSWERED)
            outcome = self.run_calls(turn, usage, proposal)
            if outcome == "max_calls":
                return self.finish(ExitReason.MAX_CALLS, f"{cfg.episode.max_calls} tool calls")
            hard_streak = hard_streak + 1 if outcome == "hard_refused" else 0
            if hard_streak >= MAX_HARD_REFUSALS:
                return self.finish(
                    ExitReason.BUDGET,
                    f"past the hard limit, {hard_streak} turns of refused retrieval calls",
                )

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

    def reconcile(self, turn: int, usage: UsageState, proposal: Proposal) -> None:
        reported = proposal.usage or {}
        prompt = reported.get("prompt_tokens")
        completion = reported.get("completion_tokens")
        if not isinstance(prompt, int) and not isinstance(completion, int):
            return
        prompt = prompt if isinstance(prompt, int) else None
        completion = completion if isinstance(completion, int) else None
        self.prompt_tokens += prompt or 0
        self.completion_tokens += completion or 0
        correction = max(0, prompt - usage.counted) if prompt is not None else usage.correction
        self.emit(
            UsageReport(
                turn=turn,
                counted=usage.counted,
                prompt_tokens=prompt,
                completion_tokens=completion,
                correction=correction,
            )
        )

    def run_calls(self, turn: int, usage: UsageState, proposal: Proposal) -> str:
        """Check, run concurrently, apply in order. Returns 'max_calls', 'hard_refused' or ''."""
        cfg = self.config
        state = self.state
        plan: list[tuple[ToolCall, str, str]] = []  # (call, refusal code, message)
        accepted = 0
        query = state.current_query
        jobs: dict[int, _Job] = {}
        hit_cap = False
        for i, call in enumerate(proposal.tool_calls):
            code, message = "", ""
            if call.name not in TOOL_NAMES:
                code, message = (
                    "unknown_tool",
                    f"unknown tool '{call.name}'; use one of " + ", ".join(TOOL_NAMES),
                )
            elif i >= cfg.episode.max_calls_per_turn:
                code, message = (
                    "max_calls_per_turn",
                    f"at most {cfg.episode.max_calls_per_turn} calls per turn",
                )
            elif state.calls_made() + accepted >= cfg.episode.max_calls:
                code, message = (
                    "max_calls",
                    f"the episode's {cfg.episode.max_calls} tool calls are used",
                )
                hit_cap = True
            elif usage.hard and call.name in RETRIEVAL_TOOLS:
                code = "hard_cutoff"
                message = HARD_REFUSAL.format(used=usage.used, budget=usage.budget)
            else:
                args, why = check_arguments(call.name, call.arguments)
                if why:
                    code, message = "bad_arguments", f"bad arguments for {call.name}: {why}"
                else:
                    call = replace(call, arguments=args)
                    accepted += 1
            plan.append((call, code, message))
            if not code and call.name in RETRIEVAL_TOOLS:
                jobs[i] = self.start_fetch(call, query)
                if call.name == "search_corpus":
                    query = call.arguments["query"]
        deadline = time.perf_counter() + min(
            cfg.episode.tool_timeout_s, max(cfg.episode.wall_time_s - self.elapsed(), 0.0)
        )
        for i, (call, code, message) in enumerate(plan):
            if code:
                self.emit_result(refused_result(call, turn, code, message))
                continue
            ctx = self.call_context(turn, proposal, len(plan) - i - 1)
            if call.name == "prune_chunks":
                self.emit_result(prune_result(call, state, turn))
            elif call.name == "recall_chunks":
                self.emit(recall_result(call, state, ctx))
            else:
                try:
                    fetched = jobs[i].result(deadline - time.perf_counter())
                except TimeoutError:
                    limit = cfg.episode.tool_timeout_s
                    fetched = Fetched(error_code="timeout", error=f"timed out after {limit}s")
                event = retrieval_result(call, fetched, state, ctx)
                if event.shown:
                    self.emit(event)
                else:
                    self.emit_result(event)
        if hit_cap:
            return "max_calls"
        codes = [code for _, code, _ in plan]
        if codes and all(c == "hard_cutoff" for c in codes):
            return "hard_refused"
        return ""

    def emit_result(self, event: ToolResult) -> None:
        """Record a result that shows no chunks, with its message's token count."""
        content = tool_content(event.header, [], event.footer)
        self.emit(replace(event, tokens=MESSAGE_OVERHEAD + self.tc.text(content)))

    def start_fetch(self, call: ToolCall, query: str) -> _Job:
        state = self.state
        seen = frozenset(state.cache.ids())
        in_context = frozenset(state.context.ids())
        return _Job(
            lambda: fetch(
                call.name,
                call.arguments,
                self.store,
                self.config,
                seen=seen,
                in_context=in_context,
                current_query=query,
                reranker=self.reranker,
            )
        )

    def call_context(self, turn: int, proposal: Proposal, remaining_calls: int) -> CallContext:
        reserve = self.notice_reserve + CALL_RESERVE * remaining_calls
        room = tool_room(
            self.tc.transcript(self.state), self.state.correction, self.config.budget, reserve
        )
        return CallContext(
            turn=turn,
            hop=proposal.hop,
            parents=tuple(proposal.parents),
            room=room,
            per_call=self.config.budget.per_call_tokens,
            search_results=self.config.episode.search_results,
            counter=self.tc,
        )


def run_episode(
    question: str,
    store: Store,
    policy: Policy,
    config: Config | None = None,
    *,
    reranker: Reranker | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
    on_turn: Callable[[EpisodeState], None] | None = None,
    counter: TokenCounter | None = None,
) -> Result:
    """Run one search episode to its end.

    Args:
        question: the user's question (empty: exit ``invalid_input``).
        store: the index, through the Store protocol.
        policy: proposes tool calls or the final answer each turn.
        config: settings (defaults from the Context-1 report).
        reranker: reorders search candidates (default: the policy's ``rerank``, if any).
        on_event: called with every trace event as it is recorded (live views).
        on_turn: called with the live state right after each turn's query state
            (tests snapshot it to compare with replay).
        counter: token counter (default: ``config.chunking.tokenizer``).

    Returns:
        A :class:`Result`, always: partial on caps and errors, with the trace.
    """
    episode = _Episode(
        question, store, policy, config or Config(), reranker, on_event, on_turn, counter
    )
    try:
        return episode.run()
    except Exception as exc:  # the harness's own bug: still a Result, with the trace so far
        message = f"internal error: {type(exc).__name__}: {exc}"
        try:
            return episode.finish(ExitReason.ERROR, message)
        except Exception:  # recording failed too: a bare Result with what the state holds
            state = episode.state
            return Result(
                question=question,
                documents=(),
                exit_reason=ExitReason.ERROR,
                partial=True,
                usage=Usage(state.used, state.peak, episode.config.budget.total),
                turns=len(state.turns),
                tool_calls=dict(state.tool_calls),
                wall_s=episode.elapsed(),
                trace=tuple(state.trace),
                message=message,
            )
