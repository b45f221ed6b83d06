"""Rebuild an episode's state from its trace alone.

The trace carries every chunk's content the first time it enters the cache,
every lineage record and every context change, so applying the events in
order with :meth:`EpisodeState.apply` (the live loop's own transition)
reproduces the live state exactly: cache, lineage, active context, the
rendered transcript and the trace itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from thresher.errors import InputError
from thresher.harness.state import EpisodeState
from thresher.harness.trace import EpisodeStart, QueryState, TraceEvent

__all__ = ["replay", "turn_count"]


def replay(events: Iterable[TraceEvent], turn: int | None = None) -> EpisodeState:
    """The state at the start of ``turn`` (or at the end of the episode).

    Args:
        events: a trace, in order (for example from :func:`read_jsonl`).
        turn: 0-based turn; the state is the one the policy saw at that turn,
            i.e. right after the turn's ``query_state`` event. None: every event.

    Returns:
        A fresh :class:`EpisodeState`.

    Raises:
        InputError: the trace does not start with ``episode_start``, or the
            turn was never reached.
    """
    events = list(events)
    if not events or not isinstance(events[0], EpisodeStart):
        raise InputError("a trace must start with an episode_start event; is this a trace file?")
    state = EpisodeState()
    if turn is None:
        for event in events:
            state.apply(event)
        return state
    reached = False
    for event in events:
        state.apply(event)
        if isinstance(event, QueryState) and event.turn == turn:
            reached = True
            break
    if not reached:
        raise InputError(
            f"turn {turn} is not in the trace; it has turns 0..{turn_count(events) - 1}"
        )
    return state


def turn_count(events: Iterable[TraceEvent]) -> int:
    """How many turns the trace observed."""
    return sum(1 for e in events if isinstance(e, QueryState))
