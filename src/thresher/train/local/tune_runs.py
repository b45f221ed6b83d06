"""The tuning searches' episodes: every task of several task files, run with given weights.

A tuning search (:mod:`.tune` for the controls, :mod:`.tune_constants` for the
constants) asks one question over and over: *with these weights, what does
each tuning task score?* An :class:`Episodes` answers it, one
:class:`Outcome` per task in a fixed task order, so two settings' outcomes pair
task by task. The tasks may come from several task files, each with the index
of its documents (:class:`TuneSet`: e.g. the tasks of several generated
worlds), so a search is not fitted to one world.

Two runners:

- :class:`LocalEpisodes` runs the episodes in this process on stores the caller
  opened and closes;
- :class:`WorkerEpisodes` spreads each call's tasks over ``workers`` processes
  (spawned, each opening the indexes once, read-only); an episode's outcome
  does not depend on the process it ran in (a fresh policy per episode, exact
  dense search on small indexes), so the outcomes equal :class:`LocalEpisodes`'
  and the search takes the same steps.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from thresher.config import Config
from thresher.errors import InputError
from thresher.index.store import Store
from thresher.policies.local.models import LocalWeights
from thresher.tasks.task import Task

__all__ = [
    "Episodes",
    "LocalEpisodes",
    "Outcome",
    "TuneSet",
    "WorkerEpisodes",
    "describe",
    "run_one",
]

#: a call's tasks go out in this many batches per worker (progress, load balance)
_BATCHES_PER_WORKER = 4


@dataclass(frozen=True, slots=True)
class Outcome:
    """One episode's scores: the reward, context tokens at the end, recall@5."""

    reward: float
    tokens: int
    recall5: float


@dataclass(frozen=True, slots=True)
class TuneSet:
    """The tasks of one task file and the index of their documents."""

    file: Path
    index: Path
    tasks: tuple[Task, ...]

    @property
    def label(self) -> str:
        """The file's last three path parts and its task count, e.g.
        ``worlds/2/tasks.jsonl (40)``: what ``tuned_on`` names."""
        return f"{Path(*self.file.parts[-3:])} ({len(self.tasks)})"


def describe(sets: Sequence[TuneSet]) -> str:
    """Every set's label, comma-separated (the tuning data's name)."""
    return ", ".join(s.label for s in sets)


class Episodes(Protocol):
    """Runs every tuning task with given weights (a fresh local policy per episode)."""

    @property
    def size(self) -> int:
        """How many tasks (outcomes per call)."""
        ...

    def outcomes(
        self, weights: LocalWeights, progress: Callable[[int], None] | None = None
    ) -> list[Outcome]:
        """One outcome per task, in task order; ``progress`` gets episodes done so far."""
        ...


def run_one(
    task: Task, store: Store, weights: LocalWeights, config: Config, beta: float
) -> Outcome:
    """One episode of the local policy with ``weights`` (their controls and constants)."""
    from thresher.eval.metrics import recall_at_k
    from thresher.harness.episode import run_episode
    from thresher.policies.local.options import LocalOptions
    from thresher.policies.local.policy import LocalPolicy
    from thresher.train.rewards import reward

    policy = LocalPolicy(LocalOptions(weights=weights), config=config)
    result = run_episode(task.question, store, policy, config)
    docs = [d.doc_id for d in result.documents]
    return Outcome(
        reward(result, task, beta=beta).total,
        result.usage.used,
        recall_at_k(docs, task.gold_doc_ids, 5),
    )


@dataclass
class LocalEpisodes:
    """The episodes in this process: ``groups`` of (tasks, their open store)."""

    groups: Sequence[tuple[Sequence[Task], Store]]
    config: Config
    beta: float = 2.0

    def __post_init__(self) -> None:
        if not self.size:
            raise InputError("tune: no tasks to tune on; pass a task file with questions")

    @property
    def size(self) -> int:
        return sum(len(tasks) for tasks, _ in self.groups)

    def outcomes(
        self, weights: LocalWeights, progress: Callable[[int], None] | None = None
    ) -> list[Outcome]:
        out = []
        for tasks, store in self.groups:
            for task in tasks:
                out.append(run_one(task, store, weights, self.config, self.beta))
                if progress is not None:
                    progress(len(out))
        return out


# -- worker processes ---------------------------------------------------------------------

#: a worker process's sets, config, beta and open stores (set once by _start_worker)
_WORKER: dict[str, Any] = {}


def _start_worker(sets: Sequence[TuneSet], config: Config, beta: float) -> None:
    from thresher.index.backends import open_store

    _WORKER["sets"] = sets
    _WORKER["config"] = config
    _WORKER["beta"] = beta
    _WORKER["stores"] = [open_store(s.index, config) for s in sets]


def _run_batch(
    weights: LocalWeights, items: Sequence[tuple[int, int, int]]
) -> list[tuple[int, Outcome]]:
    """(position, outcome) of each (position, set, task) item, in a worker."""
    sets, stores = _WORKER["sets"], _WORKER["stores"]
    return [
        (pos, run_one(sets[s].tasks[t], stores[s], weights, _WORKER["config"], _WORKER["beta"]))
        for pos, s, t in items
    ]


class WorkerEpisodes:
    """The episodes spread over ``workers`` spawned processes (see the module docstring).

    Use as a context manager (or call :meth:`close`): the workers live until then.
    """

    def __init__(
        self, sets: Sequence[TuneSet], config: Config, *, beta: float = 2.0, workers: int = 2
    ) -> None:
        if not sum(len(s.tasks) for s in sets):
            raise InputError("tune: no tasks to tune on; pass a task file with questions")
        if workers < 1:
            raise InputError(f"tune: workers must be at least 1, got {workers}")
        self.sets = tuple(sets)
        self.workers = workers
        pairs = [(s, t) for s, one in enumerate(self.sets) for t in range(len(one.tasks))]
        #: (position in the outcomes, set, task in the set)
        self._items = [(pos, s, t) for pos, (s, t) in enumerate(pairs)]
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(self.sets, config, beta),
        )

    @property
    def size(self) -> int:
        return len(self._items)

    def outcomes(
        self, weights: LocalWeights, progress: Callable[[int], None] | None = None
    ) -> list[Outcome]:
        n = max(1, self.workers * _BATCHES_PER_WORKER)
        batches = [self._items[i::n] for i in range(n) if self._items[i::n]]
        found: dict[int, Outcome] = {}
        futures = [self._pool.submit(_run_batch, weights, b) for b in batches]
        for future in as_completed(futures):
            found.update(future.result())
            if progress is not None:
                progress(len(found))
        return [found[pos] for pos in range(len(self._items))]

    def close(self) -> None:
        """Stop the workers."""
        self._pool.shutdown(cancel_futures=True)

    def __enter__(self) -> WorkerEpisodes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
