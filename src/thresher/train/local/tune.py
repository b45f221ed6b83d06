"""Tuning the local policy's controls by reward on (synthetic) tasks.

The scorer's models are fit on labelled rows (:mod:`.trainer`); the policy's
*controls* (:data:`~thresher.policies.local.policy.DEFAULT_CONTROLS`: when to
stop hopping, how many chunks each follow-up search shows, ...) are not
learnable from rows. They are chosen here the way an RL loop would judge
them: each candidate setting runs every task through the real harness
(:class:`~thresher.train.local.tune_runs.Episodes`) and is scored with the
episode reward of :func:`thresher.train.rewards.reward` (the report's F-beta +
trajectory recall + answer bonus - penalties, at the end of the curriculum's
beta annealing, beta = 2 by default). A setting overrides the weights' own
controls name by name (a control the grid does not name keeps the weights'
value, e.g. ``max_hops=4`` set with ``--controls``).

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

from thresher.errors import InputError
from thresher.policies.local.models import LocalWeights
from thresher.train.local.tune_runs import Episodes

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
    episodes: Episodes,
    weights: LocalWeights,
    *,
    grid: Mapping[str, Sequence[float | int]] | None = None,
    beta: float = 2.0,
    margin: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> TuneReport:
    """Run the local policy with each grid setting on the tuning tasks; score by reward; select.

    Args:
        episodes: runs the tuning tasks (e.g. ``thresher synth tasks`` of a few worlds).
        weights: the fitted scorer; a setting overrides its controls name by name.
        grid: control name -> values (default :data:`DEFAULT_GRID`).
        beta: the reward's F-beta weight ``episodes`` uses (recorded).
        margin: paired standard errors of reward a cheaper setting may lose.
        progress: called with (episodes done, episodes in all).

    Returns:
        A :class:`TuneReport`; ``report.chosen.controls`` go into the weights' controls.

    Raises:
        InputError: no tasks, a bad grid.
    """
    if not episodes.size:
        raise InputError("tune: no tasks to tune on; pass a task file with questions")
    points = grid_points(grid or DEFAULT_GRID)
    total, done = len(points) * episodes.size, 0
    scores = []
    for controls in points:
        start = done

        def advance(n: int, start: int = start) -> None:
            if progress is not None:
                progress(start + n, total)

        setting = replace(weights, controls={**weights.controls, **controls})
        got = episodes.outcomes(setting, advance)
        done = start + len(got)
        scores.append(
            ControlScore(
                controls,
                tuple(o.reward for o in got),
                tuple(o.tokens for o in got),
                tuple(o.recall5 for o in got),
            )
        )
    chosen, best = select(scores, margin)
    return TuneReport(chosen, best, tuple(scores), episodes.size, beta, margin)
