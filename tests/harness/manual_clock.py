"""A monotonic clock that moves only when a test moves it (the episode's ``clock``)."""

from __future__ import annotations


class ManualClock:
    """``clock()`` reads the time in seconds; ``advance(seconds)`` moves it forward.

    Passed as ``run_episode(..., clock=clock)``, it lets a test reach the wall time or
    a tool's timeout at a point it chooses, without waiting for it.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the time forward by ``seconds`` (from any thread)."""
        self.now += seconds
