"""Run work on reusable daemon threads, waiting with a timeout.

:func:`submit` runs a call on an idle worker thread (a new one when none is
idle) and returns a :class:`Job` whose ``result(timeout)`` gives its value or
re-raises its error. The harness runs tool calls and policy calls here, and the
stores their dense searches (beside BM25), so it sits below both.

Why not ``concurrent.futures.ThreadPoolExecutor``: a call that times out
cannot be killed, and an executor joins its (non-daemon) workers at
interpreter exit, so one hung store or policy call would hang the process.
Here workers are daemon threads, reused while idle (what a start costs:
``docs/startup.md``), so a hung call only ever occupies its own thread.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Job", "submit"]


class Job:
    """A submitted call; ``result(timeout)`` returns its value or re-raises its error.

    ``ended`` is the ``clock()`` at which the call ended (inf until then), so a caller
    holding a deadline on that clock can tell a result that came late from one in time
    even when it reads it afterwards."""

    def __init__(
        self, fn: Callable[[], Any], clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.fn = fn
        self.clock = clock
        self._done = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None
        self.ended = float("inf")

    def run(self) -> None:
        try:
            self._value = self.fn()
        except BaseException as exc:  # handed to whoever calls result()
            self._error = exc
        finally:
            self.ended = self.clock()
            self._done.set()

    def result(self, timeout: float | None = None) -> Any:
        """The call's value (None: wait until it ends). Raises ``TimeoutError`` if it
        has not finished in time."""
        if not self._done.wait(None if timeout is None else max(timeout, 0.0)):
            raise TimeoutError
        if self._error is not None:
            raise self._error
        return self._value


_queue: queue.SimpleQueue[Job] = queue.SimpleQueue()
_lock = threading.Lock()
#: workers waiting for a job that no submitted job has claimed yet
_idle = 0


def _worker() -> None:
    global _idle
    while True:
        _queue.get().run()
        with _lock:
            _idle += 1


def submit(fn: Callable[[], Any], clock: Callable[[], float] = time.perf_counter) -> Job:
    """Run ``fn`` on a daemon worker thread; returns its :class:`Job` (its ``ended`` read
    from ``clock``, a monotonic clock in seconds).

    Each job claims an idle worker or starts a new one, so jobs submitted
    together always run concurrently.
    """
    global _idle
    job = Job(fn, clock)
    with _lock:
        start = _idle == 0
        if not start:
            _idle -= 1
    if start:
        threading.Thread(target=_worker, name="thresher-worker", daemon=True).start()
    _queue.put(job)
    return job
