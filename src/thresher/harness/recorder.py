"""What records an episode's events: each stamped with its time and trace position,
applied to the state, and queued for the stream's reader.

It is its own object, not a method of the episode, because the call runner
records events too: holding the recorder's methods instead of the episode's
keeps the episode out of a reference cycle (episode → call runner → episode's
bound methods → episode). With no cycle, an ended episode's state (its trace,
the chunks and candidates it held, the policy session) is freed by reference
counting as soon as its result is read, instead of surviving into the cyclic
collector's older generations; measured on 100 HotpotQA dev episodes of the
local policy, that cycle left about 3,200 objects per episode for the collector
(``bench/bench_episode.py`` prints the collector's time per episode).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import replace

from thresher.harness.state import EpisodeState
from thresher.harness.trace import TraceEvent

__all__ = ["EventRecorder"]


class EventRecorder:
    """Stamps, applies and queues one episode's events (see the module docstring).

    ``clock`` is the episode's monotonic clock in seconds: the events' times and the
    episode's limits (its wall time, the tool timeout) are read from it through
    :meth:`elapsed` (a test passes one it moves by hand instead of waiting)."""

    __slots__ = ("state", "clock", "t0", "pending")

    def __init__(self, state: EpisodeState, clock: Callable[[], float] = time.perf_counter) -> None:
        self.state = state
        self.clock = clock
        self.t0 = clock()
        self.pending: deque[TraceEvent] = deque()  # recorded, not yet read

    def elapsed(self) -> float:
        """Seconds since the episode started."""
        return self.clock() - self.t0

    def emit(self, event: TraceEvent) -> TraceEvent:
        """Record ``event``: its time and its place in the trace set in one copy (the
        trace then keeps it as is), applied through :meth:`EpisodeState.apply`, queued
        for the reader. Returns the event as stored."""
        timed = replace(event, t=round(self.elapsed(), 6), seq=len(self.state.trace))
        stored = self.state.apply(timed)
        self.pending.append(stored)
        return stored

    def drain(self) -> Iterator[TraceEvent]:
        """Hand the recorded events to the reader, in order."""
        pending = self.pending
        while pending:
            yield pending.popleft()
