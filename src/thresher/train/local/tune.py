"""Tuning the local policy's controls by reward on (synthetic) tasks.

The scorer's models are fit on labelled rows (:mod:`.train`); the policy's
*controls* (:data:`~thresher.policies.local.policy.DEFAULT_CONTROLS`: when to
stop hopping, how many chunks each follow-up search shows, ...) are not
learnable from rows. They are chosen here the way an RL loop would judge
them: each candidate setting runs every task through the real harness and is
scored with the episode reward of :func:`thresher.train.rewards.reward` (the
report's F-beta + trajectory recall + answer bonus - penalties, at the end of
the curriculum's beta annealing, beta = 2 by default).

Selection (:func:`select`): the best mean reward wins, except that a setting
whose reward is *not worse than the best's by more than ``margin`` paired
standard errors* and that ends with fewer context tokens is preferred -- the
cheapest setting the reward cannot tell from the best. Context tokens are not
in the reward (the harness enforces the budget); this is how the precision
the reward asks for turns into a smaller context.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from thresher.config import Config
from thresher.errors import InputError
from thresher.index.store import Store
from thresher.policies.local.scorer import LocalWeights
from thresher.tasks.task import Task

__all__ = ["DEFAULT_GRID", "ControlScore", "TuneReport", "grid_points", "select", "tune_controls"]

#: the settings tried by default (the cross product)
DEFAULT_GRID: dict[str, tuple[float | int, ...]] = {
    "stop_at": (0.9, 0.8, 0.7),
    "hop_k": (3, 2),
}


@dataclass(frozen=True, slots=True)
class ControlScore:
    """One setting's per-task rewards and context tokens (task order is shared)."""

    controls: dict[str, float | int]
    rewards: tuple[float, ...]
    tokens: tuple[int, ...]
    recall5: tuple[float, ...] = ()

    @property
    def reward(self) -> float:
        """Mean reward."""
        return statistics.fmean(self.rewards)

    @property
    def mean_tokens(self) -> float:
        """Mean context tokens at termination."""
        return statistics.fmean(self.tokens)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary (means only)."""
        out: dict[str, Any] = {
            "controls": self.controls,
            "reward": round(self.reward, 4),
            "tokens": round(self.mean_tokens, 1),
        }
        if self.recall5:
            out["recall@5"] = round(statistics.fmean(self.recall5), 4)
        return out


@dataclass(frozen=True, slots=True)
class TuneReport:
    """The chosen setting, every setting's score, and why the choice was made."""

    chosen: ControlScore
    best: ControlScore
    scores: tuple[ControlScore, ...]
    tasks: int
    beta: float
    margin: float

    def lines(self) -> list[str]:
        """One line per setting (the chosen one marked ``*``), for printing."""
        out = []
        for s in self.scores:
            mark = "*" if s is self.chosen else " "
            line = f"{mark} {s.controls}: reward {s.reward:.3f}, context tokens {s.mean_tokens:.0f}"
            if s.recall5:
                line += f", recall@5 {statistics.fmean(s.recall5):.3f}"
            out.append(line)
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary (goes into the weights' ``meta``)."""
        return {
            "chosen": self.chosen.to_dict(),
            "best_reward": self.best.to_dict(),
            "tasks": self.tasks,
            "beta": self.beta,
            "margin_se": self.margin,
            "grid": [s.to_dict() for s in self.scores],
        }


def grid_points(grid: Mapping[str, Sequence[float | int]]) -> list[dict[str, float | int]]:
    """Every combination of ``grid``'s values, in order (the first value of each first).

    Raises ``InputError`` for an empty grid, an empty value list or an unknown name.
    """
    from thresher.policies.local.policy import DEFAULT_CONTROLS

    if not grid:
        raise InputError("tune: the grid is empty; e.g. {'stop_at': (0.9, 0.8)}")
    for name, values in grid.items():
        if name not in DEFAULT_CONTROLS:
            known = ", ".join(DEFAULT_CONTROLS)
            raise InputError(f"tune: unknown control {name!r}; tunable: {known}")
        if not values:
            raise InputError(f"tune: no values for {name!r}")
    names = list(grid)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*grid.values())]


def _paired_gap(best: Sequence[float], other: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of ``best - other`` over paired tasks."""
    diffs = [b - o for b, o in zip(best, other, strict=True)]
    mean = statistics.fmean(diffs)
    se = statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else 0.0
    return mean, se


def select(
    scores: Sequence[ControlScore], margin: float = 1.0
) -> tuple[ControlScore, ControlScore]:
    """(chosen, best by reward): the fewest-token setting not worse than the best by
    more than ``margin`` paired standard errors (ties: higher reward, then order).

    Raises ``InputError`` when ``scores`` is empty.
    """
    if not scores:
        raise InputError("tune: nothing to select from")
    best = max(scores, key=lambda s: s.reward)  # first of equals

    def close_to_best(s: ControlScore) -> bool:
        gap, se = _paired_gap(best.rewards, s.rewards)
        return gap <= margin * se

    fine = [s for s in scores if s is best or close_to_best(s)]
    chosen = min(fine, key=lambda s: (s.mean_tokens, -s.reward))
    return chosen, best


def tune_controls(
    tasks: Sequence[Task],
    store: Store,
    weights: LocalWeights,
    *,
    grid: Mapping[str, Sequence[float | int]] | None = None,
    config: Config | None = None,
    beta: float = 2.0,
    margin: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> TuneReport:
    """Run the local policy with each grid setting on ``tasks``; score by reward; select.

    Args:
        tasks: tasks whose gold documents are in ``store`` (e.g. ``thresher synth tasks``).
        store: their index.
        weights: the fitted scorer (its own ``controls`` are ignored here).
        grid: control name -> values (default :data:`DEFAULT_GRID`).
        config: harness settings.
        beta: the reward's F-beta weight.
        margin: paired standard errors of reward a cheaper setting may lose.
        progress: called with (episodes done, episodes in all).

    Returns:
        A :class:`TuneReport`; ``report.chosen.controls`` go into the weights' controls.

    Raises:
        InputError: no tasks, a bad grid.
    """
    from thresher.eval.metrics import recall_at_k
    from thresher.harness.episode import run_episode
    from thresher.policies.local.options import LocalOptions
    from thresher.policies.local.policy import DEFAULT_CONTROLS, LocalPolicy
    from thresher.train.rewards import reward

    if not tasks:
        raise InputError("tune: no tasks to tune on; pass a task file with questions")
    cfg = config or Config()
    points = grid_points(grid or DEFAULT_GRID)
    bare = replace(weights, controls={})
    total, done = len(points) * len(tasks), 0
    scores = []
    for controls in points:
        rewards, tokens, recalls = [], [], []
        for task in tasks:
            options = LocalOptions(
                weights=bare,
                max_hops=int(controls.get("max_hops", DEFAULT_CONTROLS["max_hops"])),
                hop_k=int(controls.get("hop_k", DEFAULT_CONTROLS["hop_k"])),
                bridges_per_hop=int(
                    controls.get("bridges_per_hop", DEFAULT_CONTROLS["bridges_per_hop"])
                ),
                stop_at=float(controls.get("stop_at", DEFAULT_CONTROLS["stop_at"])),
                rerank_depth=int(controls.get("rerank_depth", DEFAULT_CONTROLS["rerank_depth"])),
            )
            policy = LocalPolicy(options, config=cfg)
            result = run_episode(task.question, store, policy, cfg)
            rewards.append(reward(result, task, beta=beta).total)
            tokens.append(result.usage.used)
            docs = [d.doc_id for d in result.documents]
            recalls.append(recall_at_k(docs, task.gold_doc_ids, 5))
            done += 1
            if progress is not None:
                progress(done, total)
        scores.append(ControlScore(controls, tuple(rewards), tuple(tokens), tuple(recalls)))
    chosen, best = select(scores, margin)
    return TuneReport(chosen, best, tuple(scores), len(tasks), beta, margin)
