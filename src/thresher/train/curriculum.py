"""Curriculum schedules for reinforcement learning: hop counts rise, beta falls.

A :class:`Curriculum` maps a training step (or epoch: any counter with a
known end) to *progress* ``p = clamp((step - warmup) / (total - warmup), 0, 1)``
and from it to

- ``beta(step)``: the F-beta weight of the reward, from ``beta_start`` (4:
  recall first) to ``beta_end`` (2: more weight on precision), linearly or
  along a half cosine;
- ``hop_weights(step)``: sampling weights over hop counts, a Gaussian bump
  centred at ``hops_start + p * (hops_end - hops_start)`` (2 -> 4) with
  width ``spread``, so early steps draw mostly 2-hop tasks and late ones
  mostly 4-hop tasks, never dropping any hop count entirely (``floor``).

:class:`CurriculumSampler` draws tasks by those weights (seeded,
reproducible), falling back to the nearest available hop count when a bucket
is empty. Everything here is pure apart from the sampler's own RNG.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from thresher.errors import InputError

__all__ = ["Curriculum", "CurriculumSampler", "task_hops"]


@dataclass(frozen=True, slots=True)
class Curriculum:
    """Schedules over hops and beta by step (see the module docs).

    Attributes:
        total_steps: the step at which the schedules reach their end values.
        warmup_steps: steps held at the start values.
        beta_start, beta_end: F-beta weight at the start and the end.
        hops_start, hops_end: centre of the hop distribution at the start and the end.
        hops: the hop counts that exist.
        spread: standard deviation of the hop bump (in hops).
        floor: the least weight any hop count keeps (before normalization).
        shape: ``linear`` or ``cosine`` (slow start and end).
    """

    total_steps: int
    warmup_steps: int = 0
    beta_start: float = 4.0
    beta_end: float = 2.0
    hops_start: float = 2.0
    hops_end: float = 4.0
    hops: tuple[int, ...] = (2, 3, 4)
    spread: float = 0.6
    floor: float = 0.02
    shape: Literal["linear", "cosine"] = "linear"

    def __post_init__(self) -> None:
        if self.total_steps <= self.warmup_steps or self.warmup_steps < 0:
            raise InputError(
                f"total_steps ({self.total_steps}) must exceed warmup_steps "
                f"({self.warmup_steps}) >= 0"
            )
        if min(self.beta_start, self.beta_end) <= 0:
            raise InputError("beta_start and beta_end must be positive")
        if not self.hops or self.spread <= 0 or not 0 <= self.floor < 1:
            raise InputError("hops must be non-empty, spread > 0 and 0 <= floor < 1")
        if self.shape not in ("linear", "cosine"):
            raise InputError(f"shape must be 'linear' or 'cosine', got {self.shape!r}")

    def progress(self, step: float) -> float:
        """Progress in [0, 1] at ``step`` (after the shape is applied)."""
        p = (step - self.warmup_steps) / (self.total_steps - self.warmup_steps)
        p = min(1.0, max(0.0, p))
        if self.shape == "cosine":
            p = 0.5 - 0.5 * math.cos(math.pi * p)
        return p

    def beta(self, step: float) -> float:
        """The F-beta weight at ``step``: ``beta_start + p * (beta_end - beta_start)``."""
        return self.beta_start + self.progress(step) * (self.beta_end - self.beta_start)

    def hop_centre(self, step: float) -> float:
        """The centre of the hop distribution at ``step``."""
        return self.hops_start + self.progress(step) * (self.hops_end - self.hops_start)

    def hop_weights(self, step: float) -> dict[int, float]:
        """Normalized sampling weights over :attr:`hops` at ``step`` (they sum to 1).

        ``w(h) ∝ max(floor, exp(-(h - centre)^2 / (2 spread^2)))``.
        """
        centre = self.hop_centre(step)
        raw = {
            h: max(self.floor, math.exp(-((h - centre) ** 2) / (2 * self.spread**2)))
            for h in self.hops
        }
        total = sum(raw.values())
        return {h: w / total for h, w in raw.items()}


def task_hops(task: Any) -> int:
    """The hop count of a task: ``SynthTask.hops`` (an int), or an eval ``Task``'s
    ``len(hops)``, else ``metadata['n_hops']``, else its number of gold documents."""
    hops = getattr(task, "hops", None)
    if isinstance(hops, int):
        return hops
    if hops:
        return len(hops)
    meta = getattr(task, "metadata", None) or {}
    if isinstance(meta.get("n_hops"), int):
        return int(meta["n_hops"])
    return max(1, len(getattr(task, "gold_doc_ids", ()) or ()))


class CurriculumSampler:
    """Draw tasks following a curriculum's hop weights.

    Args:
        tasks: the pool (``SynthTask`` or eval ``Task`` objects).
        curriculum: the schedule.
        seed: the sampler's RNG seed (equal seeds, equal draws).

    Raises:
        InputError: an empty pool.
    """

    def __init__(self, tasks: Sequence[Any], curriculum: Curriculum, seed: int = 0) -> None:
        if not tasks:
            raise InputError("the curriculum sampler needs at least one task")
        self.curriculum = curriculum
        self.rng = random.Random(seed)
        self.buckets: dict[int, list[Any]] = {}
        for task in tasks:
            self.buckets.setdefault(task_hops(task), []).append(task)

    def _bucket(self, hops: int) -> list[Any]:
        if hops in self.buckets:
            return self.buckets[hops]
        nearest = min(self.buckets, key=lambda h: (abs(h - hops), h))
        return self.buckets[nearest]

    def sample(self, step: float, n: int = 1) -> list[Any]:
        """``n`` tasks for ``step``: a hop count by the step's weights, then a task
        uniformly from that bucket (the nearest non-empty one when it is empty)."""
        weights = self.curriculum.hop_weights(step)
        hops = sorted(weights)
        out = []
        for _ in range(n):
            h = self.rng.choices(hops, weights=[weights[x] for x in hops])[0]
            out.append(self.rng.choice(self._bucket(h)))
        return out
