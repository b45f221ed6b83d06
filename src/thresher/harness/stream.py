"""An episode as an iterator of its trace events: :class:`EpisodeStream`.

:func:`~thresher.harness.episode.iter_episode` returns one. Iterating it runs
the episode: each ``next`` runs it up to its next recorded event and returns
that event (the first is ``episode_start``, the last ``episode_end``); the
episode's :class:`~thresher.harness.result.Result` is :attr:`EpisodeStream.result`
once it has ended. The reader sets the pace: nothing runs between two ``next``
calls.

Stopping:

* :meth:`EpisodeStream.close` (or leaving a ``with`` block, or dropping the
  stream): the reader is done. The episode ends now, exit ``cancelled``, recorded
  in the trace (the calls of an unfinished turn are recorded refused,
  ``cancelled``); the events of that end are in ``result.trace``, not read.
  Safe from any thread: when another thread is inside ``next`` (a worker reading
  for a server), the stop is seen at once (a policy still thinking is abandoned
  as :meth:`cancel` does it) and that thread ends the episode when its ``next``
  returns. Never blocks.
* :meth:`EpisodeStream.cancel`: ask the episode to stop; it ends ``cancelled``
  at its next check (before a turn, or while the policy is thinking: an LLM
  policy's model call is then closed), and its last events still come.
* :meth:`EpisodeStream.fail`: a reader's own error ends the episode ``error``.

One reader at a time; ``next`` may be called from different threads in turn
(a server reads each event on a worker thread).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Generator, Iterator
from types import TracebackType

from thresher.harness.result import Result
from thresher.harness.state import EpisodeState
from thresher.harness.trace import TraceEvent

__all__ = ["EpisodeStream"]


class EpisodeStream(Iterator[TraceEvent]):
    """The trace events of one episode, as they are applied.

    Args:
        events: the episode's generator (it returns the Result).
        state: the episode's live state (read it between events, never change it).
        stop: the episode's stop flag (set by :meth:`cancel` and :meth:`close`).
        result_of: the episode's Result once it has ended, else None.
    """

    def __init__(
        self,
        events: Generator[TraceEvent, None, Result],
        state: EpisodeState,
        stop: threading.Event,
        result_of: Callable[[], Result | None],
    ) -> None:
        self._events = events
        self.state = state
        self._stop = stop
        self._result_of = result_of
        self._step = threading.Lock()  # held while the episode runs a step
        self._leaving = False

    @property
    def result(self) -> Result | None:
        """The episode's Result once it has ended (read to the end, or closed), else None."""
        return self._result_of()

    def __iter__(self) -> EpisodeStream:
        return self

    def __next__(self) -> TraceEvent:
        """Run the episode to its next event; ``StopIteration`` once it has ended."""
        with self._step:
            if self._leaving:
                self._end_now()
            event = next(self._events)
        if self._leaving:  # closed from another thread while this step ran
            self._close_if_idle()
        return event

    def cancel(self) -> None:
        """Ask the episode to stop (exit ``cancelled``); its remaining events still come."""
        self._stop.set()

    def close(self) -> None:
        """The reader is done: end the episode now (``cancelled``), or, when another thread is
        running a step, as soon as that step returns. Idempotent; never blocks."""
        self._leaving = True
        self._stop.set()
        self._close_if_idle()

    def fail(self, error: Exception) -> None:
        """End the episode with exit ``error`` for ``error`` (a reader's own failure, such as
        a live view that crashed); its remaining events are recorded, not read."""
        with self._step:
            if inspect.getgeneratorstate(self._events) == inspect.GEN_CREATED:
                next(self._events, None)
            if inspect.getgeneratorstate(self._events) == inspect.GEN_CLOSED:
                return
            try:
                self._events.throw(error)
                for _ in self._events:
                    pass
            except StopIteration:
                pass

    def __enter__(self) -> EpisodeStream:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _close_if_idle(self) -> None:
        if self._step.acquire(blocking=False):
            try:
                self._end_now()
            finally:
                self._step.release()

    def _end_now(self) -> None:
        """Close the generator (held under ``_step``): a started episode records its end."""
        if inspect.getgeneratorstate(self._events) == inspect.GEN_CREATED:
            next(self._events, None)  # record the start, so the end has a trace to close
        self._events.close()
