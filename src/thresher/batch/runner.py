"""The runner abstraction: map a function over items, results in input order.

Every batch command (``thresher eval``, ``thresher synth tasks``,
``thresher export-sft``) runs its independent jobs through a :class:`Runner`:

- :class:`LocalRunner`: threads of this process (``--workers N``; one worker
  runs the jobs inline, in order);
- :class:`~thresher.batch.ray_runner.RayRunner`: Ray tasks on a local Ray
  instance or a cluster (``--ray [ADDRESS]``).

:func:`thresher.batch.factory.make_runner` picks one from a command's options
(the runners do not import each other).

Both keep one contract, so a command's output does not depend on the runner:

- ``map(fn, items)`` returns one :class:`JobResult` per item, in the items' order;
- a job that raises is run once more; if it raises again its result holds the
  error (``ok`` False) and the caller records it: a job is never dropped;
- an error of :data:`FATAL_ERRORS` (bad input or settings, a missing index or
  model: every job would fail the same way) is not retried: ``map`` stops and
  raises it;
- ``on_done(index, result)`` is called on the calling thread as each job
  finishes (progress bars, incremental writes), in completion order.

A function sent to another process must be picklable (a module-level function,
or an instance of a module-level class holding its context), and reach the
index through a :class:`~thresher.batch.stores.StoreRef`, never an open store.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, TypeVar

from thresher.errors import (
    ConfigError,
    IndexNotFoundError,
    IndexVersionError,
    InputError,
    ModelMissingError,
)

__all__ = [
    "FATAL_ERRORS",
    "JobResult",
    "OnDone",
    "Runner",
    "LocalRunner",
    "describe_error",
]

T = TypeVar("T")
R = TypeVar("R")
logger = logging.getLogger("thresher.batch")

#: errors no retry can fix and every job would meet: the run stops and raises them
FATAL_ERRORS: tuple[type[Exception], ...] = (
    ConfigError,
    InputError,
    IndexNotFoundError,
    IndexVersionError,
    ModelMissingError,
)


@dataclass(frozen=True, slots=True)
class JobResult(Generic[R]):
    """What one job gave: its value, or (``ok`` False) the error of its last attempt.

    Attributes:
        value: the function's return value (None when the job failed).
        error: ``"ErrorType: message"`` of the second failed attempt; None on success.
    """

    value: R | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


#: ``on_done(index, result)``: called on the calling thread as each job finishes
OnDone = Callable[[int, JobResult[Any]], None]


def describe_error(exc: BaseException) -> str:
    """``"ErrorType: message"`` of an exception (a Ray task error shows its cause)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        exc = cause
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def run_job(fn: Callable[[T], R], item: T, index: int = 0) -> JobResult[R]:
    """``fn(item)`` with one retry; a :data:`FATAL_ERRORS` error is raised, not retried."""
    for attempt in (1, 2):
        try:
            return JobResult(fn(item))
        except FATAL_ERRORS:
            raise
        except Exception as exc:  # a job's failure is recorded, never the batch's end
            error = describe_error(exc)
            if attempt == 1:
                logger.warning("job %d failed (%s); retrying once", index, error)
    return JobResult(error=error)


class Runner(ABC):
    """Runs independent jobs; see the module docstring for the contract.

    Attributes:
        name: ``local`` or ``ray`` (recorded in reports).
        workers: how many jobs run at once.
        remote: whether jobs run in other processes (functions must pickle,
            stores must be given as a ``StoreRef``).
    """

    name: str = "local"
    workers: int = 1
    remote: bool = False

    @abstractmethod
    def map(
        self, fn: Callable[[T], R], items: Sequence[T], on_done: OnDone | None = None
    ) -> list[JobResult[R]]:
        """One :class:`JobResult` per item, in input order.

        Raises:
            one of :data:`FATAL_ERRORS`: a job met it (the others are cancelled).
        """

    @abstractmethod
    def close(self) -> None:
        """Release what the runner holds: the stores its jobs opened in this process
        (not those open before it started), its Ray actors and instance."""

    def __enter__(self) -> Runner:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class LocalRunner(Runner):
    """Jobs on ``workers`` threads of this process (inline and in order with one).

    Raises:
        ConfigError: ``workers`` below 1.
    """

    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise ConfigError(f"workers must be >= 1, got {workers}")
        from thresher.batch.stores import open_keys

        self.workers = workers
        self._kept = open_keys()  # stores open before this runner: not its to close

    def map(
        self, fn: Callable[[T], R], items: Sequence[T], on_done: OnDone | None = None
    ) -> list[JobResult[R]]:
        items = list(items)
        results: list[JobResult[R] | None] = [None] * len(items)

        def finish(i: int, result: JobResult[R]) -> None:
            results[i] = result
            if on_done is not None:
                on_done(i, result)

        if self.workers == 1 or len(items) <= 1:
            for i, item in enumerate(items):
                finish(i, run_job(fn, item, i))
        else:
            pool = ThreadPoolExecutor(self.workers, thread_name_prefix="thresher-batch")
            try:
                futures: dict[Future[JobResult[R]], int] = {
                    pool.submit(run_job, fn, item, i): i for i, item in enumerate(items)
                }
                pending = set(futures)
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in sorted(done, key=futures.__getitem__):
                        finish(futures[future], future.result())
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
        return [r for r in results if r is not None]

    def close(self) -> None:
        from thresher.batch.stores import close_stores

        close_stores(keep=self._kept)
