"""How an episode ends: its ``episode_end`` event and its :class:`Result`.

Every episode ends once, with an exit reason, recorded in its trace like any
other step. An answered episode's documents are its resolved final answer; any
other exit is *partial*, and ranks the documents the episode saw
(:func:`~thresher.harness.result.partial_ranking`), so a caller always gets a
:class:`Result` with the trace so far.

An episode its reader left mid-turn (a closed stream, an interrupt) ends
``cancelled``: first the turn's calls cut short are recorded refused
(:func:`cut_short_calls`), so every call has its result. When even recording
the end fails (``error``), :func:`bare_result` is the Result the state still holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from thresher.harness.actions import ToolCall
from thresher.harness.recorder import EventRecorder
from thresher.harness.result import (
    ExitReason,
    Result,
    Usage,
    documents_from_final,
    partial_ranking,
)
from thresher.harness.state import EpisodeState
from thresher.harness.trace import EpisodeEnd, ProposalEvent, ToolResult, Trace
from thresher.harness.transitions import refused_result

__all__ = ["CANCELLED_MESSAGE", "Exit", "end_episode", "bare_result", "cut_short_calls"]

#: the exit message of an episode its caller stopped (``should_stop``)
CANCELLED_MESSAGE = "stopped by the caller"


@dataclass(frozen=True, slots=True)
class Exit:
    """How a step of the episode says the episode ends: its exit reason and message."""

    reason: ExitReason
    message: str = ""


def end_episode(
    recorder: EventRecorder,
    question: str,
    usage: Usage,
    models: list[str],
    limit: int,
    reason: ExitReason,
    message: str = "",
) -> Result:
    """Record the episode's end and return its Result.

    Args:
        recorder: the episode's recorder (its state is the episode's).
        question: the question as recorded.
        usage: the episode's token usage, with what the endpoint reported.
        models: the models the policy's replies came from.
        limit: the most documents a Result names (``episode.final_documents``).
        reason, message: the exit reason and its message.
    """
    state = recorder.state
    answered = reason is ExitReason.ANSWERED and state.final is not None
    resolved = state.final if answered and state.final is not None else []
    if not answered:
        resolved = partial_ranking(state, limit)
    wall = recorder.elapsed()
    recorder.emit(
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
            models=list(models),
        )
    )
    return Result(
        question=question,
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


def bare_result(
    state: EpisodeState, question: str, budget: int, wall: float, message: str
) -> Result:
    """The Result of an episode whose end could not be recorded (``error``): no
    documents, the usage and trace the state holds."""
    return Result(
        question=question,
        documents=(),
        exit_reason=ExitReason.ERROR,
        partial=True,
        usage=Usage(state.used, state.peak, budget),
        turns=len(state.turns),
        tool_calls=dict(state.tool_calls),
        wall_s=wall,
        trace=tuple(state.trace),
        message=message,
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
