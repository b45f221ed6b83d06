"""Fusion weights fitted to one index, from tasks synthesized on that index.

:func:`fit_fusion` picks the weighted RRF (:class:`~thresher.index.fusion.FusionWeights`:
a weight per retriever and ``rrf_k``) under which a hybrid search's top ``k`` documents
hold most of the tasks' gold documents. Each task's question is searched once by each
retriever (``bm25_search`` and ``dense_search``, as deep as ``hybrid_search`` asks
them); every point of a small grid then fuses the same two lists
(:func:`~thresher.index.fusion.fuse_retrievers`: what the store's hybrid search
computes), the documents are taken in the order of their first chunk (as a
single-shot answer lists them), and a task scores the share of its hops with a
gold document in the top ``k``.

The tasks are split, by a seeded shuffle, into a part the grid is scored on and a
held-out part that only reports before (plain RRF, the configured ``rrf_k``) and
after (the chosen point). The best point on the fit part wins; among equal scores the
one nearest plain RRF (weights, then ``rrf_k``), so the default stays unless a point
does better. :attr:`FusionFit.holds` says whether the choice did not lose on the held-out
part: what ``thresher fit-fusion`` requires before it keeps the weights with the index.

The grid moves ``rrf_k`` freely but holds the two weights within 1.5 of each other
(:data:`WEIGHT_PAIRS`). A synthetic question is made of its evidence's own sentences, so
BM25 finds it far more easily than it finds a user's question in the user's own
words: fitted freely on such tasks the BM25 weight runs up to 3 or 4, which real
questions that need dense retrieval pay for, while the ``rrf_k`` chosen on them
carries over (docs/fusion.md has the figures).

Synthetic tasks kept by ``thresher synth tasks`` exclude those one hybrid search
already solves under today's fusion (``single_shot_solvable``), which would favour any
other fusion: synthesize with the single-shot cut at 1 (``k=1``: no multi-hop task can
be solved by one chunk), as the command does.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from thresher.corpus.ids import doc_of
from thresher.errors import InputError
from thresher.index.fusion import FusionWeights, fuse_retrievers
from thresher.index.store import Store
from thresher.tasks.synthetic import SynthTask, to_eval_task
from thresher.tasks.task import Task

__all__ = [
    "WEIGHT_PAIRS",
    "RRF_KS",
    "MIN_TASKS",
    "default_grid",
    "FusionFit",
    "fit_fusion",
    "task_recall",
]

#: the (BM25, dense) weights on the default grid: equal, or one retriever 1.5 times the
#: other (the module docstring says why no further)
WEIGHT_PAIRS: tuple[tuple[float, float], ...] = ((1.0, 1.5), (1.0, 1.0), (1.5, 1.0))
#: the RRF constants on the default grid (small: the top ranks count most)
RRF_KS: tuple[int, ...] = (1, 2, 5, 10, 20, 30, 60, 120)
#: the fewest tasks a fit takes (each part needs some)
MIN_TASKS = 10


def default_grid() -> list[FusionWeights]:
    """Every point of :data:`WEIGHT_PAIRS` × :data:`RRF_KS`."""
    return [FusionWeights(b, d, k) for k in RRF_KS for b, d in WEIGHT_PAIRS]


@dataclass(frozen=True, slots=True)
class FusionFit:
    """What :func:`fit_fusion` chose and measured (recall in [0, 1], at ``k`` documents).

    Attributes:
        weights: the chosen point (``default`` when none did better on the fit part).
        default: plain RRF with the configured ``rrf_k`` (today's fusion).
        k: the documents counted per task.
        fit_tasks, held_out_tasks: how many tasks each part holds.
        fit_before, fit_after: mean recall on the fit part, default and chosen.
        held_out_before, held_out_after: the same on the held-out part.
        bm25_alone, dense_alone: the held-out recall of each retriever alone.
        grid: every point scored on the fit part, as ``(weights, recall)``.
    """

    weights: FusionWeights
    default: FusionWeights
    k: int
    fit_tasks: int
    held_out_tasks: int
    fit_before: float
    fit_after: float
    held_out_before: float
    held_out_after: float
    bm25_alone: float
    dense_alone: float
    grid: tuple[tuple[FusionWeights, float], ...] = field(default=(), repr=False)

    @property
    def changed(self) -> bool:
        """The chosen point is not the default."""
        return self.weights != self.default

    @property
    def holds(self) -> bool:
        """The chosen point does at least as well as the default on the held-out part
        (always, when nothing was held out)."""
        return self.held_out_tasks == 0 or self.held_out_after >= self.held_out_before

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary (the grid left out)."""
        return {
            "weights": self.weights.to_dict(),
            "default": self.default.to_dict(),
            "k": self.k,
            "fit_tasks": self.fit_tasks,
            "held_out_tasks": self.held_out_tasks,
            "fit_recall": {"before": self.fit_before, "after": self.fit_after},
            "held_out_recall": {"before": self.held_out_before, "after": self.held_out_after},
            "held_out_single": {"bm25": self.bm25_alone, "dense": self.dense_alone},
        }


@dataclass(frozen=True, slots=True)
class _Searched:
    """One task's two retriever lists and its hops (sets of gold documents)."""

    bm25: list[tuple[str, float]]
    dense: list[tuple[str, float]]
    hops: tuple[frozenset[str], ...]


def task_recall(chunk_ids: Sequence[str], hops: Sequence[frozenset[str]], k: int) -> float:
    """The share of ``hops`` with a document among the first ``k`` documents of
    ``chunk_ids`` (a ranked list of chunks; a document ranked by its first chunk)."""
    top: list[str] = []
    for chunk_id in chunk_ids:
        doc = doc_of(chunk_id)
        if doc not in top:
            top.append(doc)
            if len(top) == k:
                break
    found = set(top)
    return sum(1 for hop in hops if hop & found) / len(hops)


def _hops(task: Task) -> tuple[frozenset[str], ...]:
    if task.hops:
        return tuple(frozenset(h) for h in task.hops if h)
    return tuple(frozenset([d]) for d in dict.fromkeys(task.gold_doc_ids))


def _search(store: Store, tasks: Sequence[Task], depth: int, progress: bool) -> list[_Searched]:
    from tqdm import tqdm

    out = []
    bar = tqdm(tasks, desc="searching tasks", unit="task", disable=None if progress else True)
    for task in bar:
        hops = _hops(task)
        if not hops or not task.question.strip():
            continue
        bm25 = [(h.chunk.chunk_id, h.score) for h in store.bm25_search(task.question, k=depth)]
        dense = [(h.chunk.chunk_id, h.score) for h in store.dense_search(task.question, k=depth)]
        out.append(_Searched(bm25, dense, hops))
    return out


def _recall(searched: Sequence[_Searched], w: FusionWeights, k: int) -> float:
    if not searched:
        return 0.0
    weights = (w.bm25, w.dense)
    return statistics.fmean(
        task_recall(
            [f.key for f in fuse_retrievers(s.bm25, s.dense, w.rrf_k, weights=weights)], s.hops, k
        )  # fmt: skip
        for s in searched
    )


def _distance(w: FusionWeights, default: FusionWeights) -> tuple[float, float]:
    """How far ``w`` is from ``default``: its weight ratio, then its ``rrf_k`` (log scale)."""
    ratio = abs(math.log(w.bm25 / w.dense)) if w.bm25 and w.dense else math.inf
    return ratio, abs(math.log(w.rrf_k / default.rrf_k))


def fit_fusion(
    store: Store,
    tasks: Sequence[Task | SynthTask],
    *,
    k: int = 5,
    held_out: float = 0.3,
    seed: int = 0,
    grid: Sequence[FusionWeights] | None = None,
    depth: int | None = None,
    progress: bool = False,
) -> FusionFit:
    """Choose the fusion weights of ``store``'s hybrid search on ``tasks`` (module docstring).

    Args:
        store: the index the tasks were synthesized on (any ``Store``).
        tasks: evaluation tasks or synthetic tasks (their hops' documents are the gold).
        k: documents counted per task (recall@k).
        held_out: the share of tasks held out to report on, in [0, 1).
        seed: seeds the split.
        grid: the points tried (default :func:`default_grid`); the default is always tried.
        depth: each retriever's list length (default: as ``hybrid_search`` asks,
            ``retrieval.per_retriever`` and at least ``retrieval.candidates``).
        progress: show a tqdm bar over the tasks' searches (on a terminal only).

    Returns:
        A :class:`FusionFit`.

    Raises:
        InputError: fewer than :data:`MIN_TASKS` usable tasks, ``k`` < 1, or ``held_out``
            outside [0, 1).
    """
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if not 0 <= held_out < 1:
        raise InputError(f"held_out must be a share in [0, 1), got {held_out}")
    config = getattr(store, "config", None)
    retrieval = config.retrieval if config is not None else None
    default = FusionWeights(rrf_k=retrieval.rrf_k if retrieval is not None else 60)
    if depth is None:
        depth = max(retrieval.per_retriever, retrieval.candidates) if retrieval else 100
    plain = [t if isinstance(t, Task) else to_eval_task(t) for t in tasks]
    searched = _search(store, plain, depth, progress)
    if len(searched) < MIN_TASKS:
        raise InputError(
            f"fitting fusion weights takes at least {MIN_TASKS} tasks with a question and gold "
            f"documents, got {len(searched)}; synthesize more (thresher synth tasks --n)"
        )
    order = list(range(len(searched)))
    random.Random(seed).shuffle(order)
    n_held = round(held_out * len(searched))
    held = [searched[i] for i in sorted(order[:n_held])]
    fit = [searched[i] for i in sorted(order[n_held:])]

    points = list(dict.fromkeys([default, *(grid if grid is not None else default_grid())]))
    scored = [(w, _recall(fit, w, k)) for w in points]
    best = min(scored, key=lambda ws: (-ws[1], _distance(ws[0], default)))[0]
    fit_before = next(r for w, r in scored if w == default)
    return FusionFit(
        weights=best,
        default=default,
        k=k,
        fit_tasks=len(fit),
        held_out_tasks=len(held),
        fit_before=fit_before,
        fit_after=next(r for w, r in scored if w == best),
        held_out_before=_recall(held, default, k),
        held_out_after=_recall(held, best, k),
        bm25_alone=_recall(held, FusionWeights(1.0, 0.0, default.rrf_k), k),
        dense_alone=_recall(held, FusionWeights(0.0, 1.0, default.rrf_k), k),
        grid=tuple(scored),
    )
