"""At most N episodes at once, a bounded queue behind them, and a 429 past that.

An episode holds a slot from the moment it starts until its thread has
finished (not until its client leaves), so a client that hangs up cannot free
room for more work than the machine runs. Requests past the running ones
wait in FIFO order, at most ``max_queued`` of them and at most
``queue_timeout_s`` each; a request that finds the queue full, or waits too
long, gets :class:`Busy` with a ``Retry-After`` estimate from the recent
episode times.

Written here rather than taken from a library: ``asyncio.Semaphore`` has no
queue bound and no wait-time bound, and rate limiters (slowapi and the like)
count requests per time window, not episodes in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque

from thresher.errors import ThresherError

__all__ = ["Busy", "EpisodeGate"]


class Busy(ThresherError):
    """Every slot is taken and the queue is full (or the wait ran out): answer 429.

    Attributes:
        retry_after: seconds a client should wait before trying again (at least 1).
    """

    http_status = 429
    code = "busy"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    def http_headers(self) -> dict[str, str]:
        """``Retry-After``: when to try again."""
        return {"Retry-After": str(self.retry_after)}

    def tool_message(self) -> str:
        """The message and when to try again."""
        return f"{self} (retry in {self.retry_after} s)"


class EpisodeGate:
    """A FIFO admission gate for episodes, used from one event loop.

    Args:
        limit: episodes running at once.
        max_queued: requests that may wait for a slot.
        queue_timeout_s: longest wait for a slot.
    """

    def __init__(self, limit: int, max_queued: int, queue_timeout_s: float) -> None:
        self.limit = limit
        self.max_queued = max_queued
        self.queue_timeout_s = queue_timeout_s
        self.running = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._mean_s = 5.0  # a first guess of an episode's time, refined by every episode

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot now."""
        return sum(1 for w in self._waiters if not w.done())

    def retry_after(self) -> int:
        """Seconds until a slot is likely free: the queue ahead, served at the recent pace."""
        ahead = self.waiting + 1
        return max(1, math.ceil(self._mean_s * ahead / self.limit))

    async def acquire(self) -> None:
        """Take a slot, waiting in line if needed.

        Raises:
            Busy: the queue is full, or no slot came free within ``queue_timeout_s``.
        """
        if self.running < self.limit and not self.waiting:
            self.running += 1
            return
        if self.waiting >= self.max_queued:
            raise Busy(
                f"{self.running} episodes running and {self.waiting} waiting (the limits); "
                "try again later",
                self.retry_after(),
            )
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter), self.queue_timeout_s)
        except TimeoutError:
            self._give_up(waiter)
            raise Busy(
                f"no episode slot came free within {self.queue_timeout_s:g} s; try again later",
                self.retry_after(),
            ) from None
        except asyncio.CancelledError:  # the request went away while it waited
            self._give_up(waiter)
            raise

    def release(self, seconds: float | None = None) -> None:
        """Give a slot back (``seconds``: how long its episode ran) and wake the next waiter."""
        if seconds is not None:
            self._mean_s = 0.8 * self._mean_s + 0.2 * max(seconds, 0.0)
        self.running = max(0, self.running - 1)
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.running += 1
                waiter.set_result(None)
                return

    def _give_up(self, waiter: asyncio.Future[None]) -> None:
        """Leave the line; a slot handed over meanwhile goes to the next waiter."""
        if waiter.done() and not waiter.cancelled():
            self.release()
        else:
            waiter.cancel()
        with contextlib.suppress(ValueError):
            self._waiters.remove(waiter)
