"""Tuning the local policy's constants by a coordinate search on named tasks.

The policy's constants (:mod:`thresher.policies.local.constants`: how a bridge
phrase is scored, how a clue chain picks its documents, ...) are not learned
from feature rows. ``thresher train-policy --tune FILE:DIR`` sets the ones
named in ``--tune-constants`` (default :data:`DEFAULT_TUNED`) here, cheaply:
one pass of coordinate search. For each constant in turn, the current value and
a step below and above it (a float × :data:`STEPS`, an integer ± 1, never below
zero) run every task through the real harness; a step is taken only when its
mean episode reward (:func:`thresher.train.rewards.reward`, as the controls are
tuned: :mod:`.tune`) beats the current value's by more than ``margin`` paired
standard errors, so noise on a few tasks moves nothing. The search's data
(the task file's name and count) is written into the constants' ``tuned_on``
and the search itself into the weights' ``meta["tuned_constants"]``.

The tasks should be ones the policy is not measured on: generated worlds
(``thresher synth tasks``), or a dev pool's training fold.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from thresher.config import Config
from thresher.errors import InputError
from thresher.index.store import Store
from thresher.policies.local.constants import Constants
from thresher.policies.local.scorer import LocalWeights
from thresher.tasks.task import Task

__all__ = ["DEFAULT_TUNED", "STEPS", "Trial", "ConstantsReport", "candidates", "tune_constants"]

#: the constants tuned by default: the weights of a bridge's score and of a clue pick
DEFAULT_TUNED: tuple[str, ...] = (
    "cue_bonus",
    "solved_word_gain",
    "clue_words_weight",
    "link_stated",
)
#: the factors a float constant is tried at (an integer: one less and one more)
STEPS: tuple[float, ...] = (0.5, 1.5)


@dataclass(frozen=True, slots=True)
class Trial:
    """One value of one constant: its per-task rewards (task order shared)."""

    name: str
    value: float | int
    rewards: tuple[float, ...]

    @property
    def reward(self) -> float:
        """Mean reward."""
        return statistics.fmean(self.rewards)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "reward": round(self.reward, 4)}


@dataclass(frozen=True, slots=True)
class ConstantsReport:
    """The tuned constants, every trial, and on what."""

    constants: Constants
    trials: tuple[Trial, ...]
    tasks: int
    source: str
    beta: float
    margin: float

    def lines(self) -> list[str]:
        """One line per trial, the kept values marked ``*``, for printing."""
        kept = self.constants.values()
        return [
            f"{'*' if kept[t.name] == t.value else ' '} {t.name}={t.value}: reward {t.reward:.3f}"
            for t in self.trials
        ]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary (goes into the weights' ``meta``)."""
        changed = {n: v for n, v in self.constants.values().items() if v != getattr(Constants(), n)}
        return {
            "source": self.source,
            "tasks": self.tasks,
            "beta": self.beta,
            "margin_se": self.margin,
            "changed": changed,
            "trials": [t.to_dict() for t in self.trials],
        }


def candidates(value: float | int) -> list[float | int]:
    """The values a coordinate step tries beside ``value`` (never below zero)."""
    if isinstance(value, int):
        return [v for v in (value - 1, value + 1) if v >= 0]
    return [round(value * f, 6) for f in STEPS]


def _better(new: Sequence[float], old: Sequence[float], margin: float) -> bool:
    """Whether ``new`` beats ``old`` by more than ``margin`` paired standard errors."""
    diffs = [a - b for a, b in zip(new, old, strict=True)]
    mean = statistics.fmean(diffs)
    se = statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else 0.0
    return mean > margin * se and mean > 0


def tune_constants(
    tasks: Sequence[Task],
    store: Store,
    weights: LocalWeights,
    *,
    names: Sequence[str] = DEFAULT_TUNED,
    source: str = "",
    config: Config | None = None,
    beta: float = 2.0,
    margin: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> ConstantsReport:
    """One pass of coordinate search over the constants ``names`` (see the module docstring).

    Args:
        tasks: tasks whose gold documents are in ``store``.
        store: their index.
        weights: the policy's weights (its controls and models are used as they are).
        names: the constants to tune, in order.
        source: the tuning data's name (written into ``tuned_on``).
        config: harness settings.
        beta: the reward's F-beta weight.
        margin: paired standard errors of reward a step must win by.
        progress: called with (episodes done, episodes in all).

    Returns:
        A :class:`ConstantsReport`; ``report.constants`` go into the weights.

    Raises:
        InputError: no tasks, or a name that is not a constant.
    """
    from thresher.harness.episode import run_episode
    from thresher.policies.local.options import LocalOptions
    from thresher.policies.local.policy import LocalPolicy
    from thresher.train.rewards import reward

    if not tasks:
        raise InputError("tune: no tasks to tune the constants on")
    known = weights.constants.values()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"tune: unknown constants {unknown}; known: {', '.join(known)}")
    cfg = config or Config()
    total = (1 + sum(len(candidates(known[n])) for n in names)) * len(tasks)
    done = 0

    def rewards_of(constants: Constants) -> tuple[float, ...]:
        nonlocal done
        w = replace(weights, constants=constants)
        out = []
        for task in tasks:
            policy = LocalPolicy(LocalOptions(weights=w), config=cfg)
            result = run_episode(task.question, store, policy, cfg)
            out.append(reward(result, task, beta=beta).total)
            done += 1
            if progress is not None:
                progress(done, total)
        return tuple(out)

    current = weights.constants
    best = rewards_of(current)
    trials: list[Trial] = []
    for name in names:
        value = getattr(current, name)
        trials.append(Trial(name, value, best))
        step: tuple[Constants, tuple[float, ...]] | None = None
        for v in candidates(value):
            change: dict[str, Any] = {name: v}
            trial = replace(current, **change)
            got = rewards_of(trial)
            trials.append(Trial(name, v, got))
            if _better(got, step[1] if step else best, margin):
                step = (trial, got)
        if step is not None:
            current, best = step
    label = f"coordinate search on {source or 'unnamed tasks'} ({len(tasks)} tasks, reward"
    current = replace(current, tuned_on=f"{label} beta={beta}, steps > {margin} paired SE)")
    return ConstantsReport(current, tuple(trials), len(tasks), source, beta, margin)
