"""Tuning the local policy's constants by a coordinate search on named tasks.

The policy's constants (:mod:`thresher.policies.local.constants`: how a bridge
phrase is scored, how a clue chain picks its documents, ...) are not learned
from feature rows. ``thresher train-policy --tune FILE:DIR`` (repeatable) sets the
ones named in ``--tune-constants`` (default :data:`DEFAULT_TUNED`) here,
cheaply: one pass of coordinate search. For each constant in turn, the current
value and a step below and above it (a float × :data:`STEPS`, an integer ± 1,
never below zero) run every task through the real harness
(:class:`~thresher.train.local.tune_runs.Episodes`: the tasks of several task
files, in one process or several); a step is taken only when its mean episode
reward (:func:`thresher.train.rewards.reward`, as the controls are tuned:
:mod:`.tune`) beats the current value's by more than ``margin`` paired standard
errors, so noise on a few tasks moves nothing. The search's data (every task
file's name and count) is written into the constants' ``tuned_on`` and the
search itself into the weights' ``meta["tuned_constants"]``.

The tasks should be ones the policy is not measured on: generated worlds
(``thresher synth tasks``), never the dev pools the benchmark scores.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from thresher.errors import InputError
from thresher.policies.local.constants import Constants
from thresher.policies.local.models import LocalWeights
from thresher.train.local.tune_runs import Episodes

__all__ = ["DEFAULT_TUNED", "STEPS", "Trial", "ConstantsReport", "candidates", "tune_constants"]

#: the constants tuned by default: every weight, gain, bonus, threshold and window of
#: a bridge phrase's score and of a clue chain's pick, then the planner's and the
#: candidate scorer's counts (the order the coordinate search visits them)
DEFAULT_TUNED: tuple[str, ...] = (
    # a bridge phrase's score (bridges.bridge_queries)
    "question_word_gain",
    "solved_word_gain",
    "beside_via_gain",
    "cue_bonus",
    "cue_before",
    "cue_after",
    "title_head_gain",
    "repeat_gain",
    "name_word_gain",
    # a clue chain's pick (chain.clue_docs)
    "clue_words_weight",
    "clue_min_score",
    "clue_state_share",
    "link_stated",
    "link_parent",
    "link_shared",
    "link_about",
    # counts: anchors a hop reads, a follow-up hit's head
    "hop_anchors",
    "edge_bridges",
    "retriever_head",
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
    episodes: Episodes,
    weights: LocalWeights,
    *,
    names: Sequence[str] = DEFAULT_TUNED,
    source: str = "",
    beta: float = 2.0,
    margin: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> ConstantsReport:
    """One pass of coordinate search over the constants ``names`` (see the module docstring).

    Args:
        episodes: runs the tuning tasks (their rewards use ``beta``).
        weights: the policy's weights (its controls and models are used as they are).
        names: the constants to tune, in order.
        source: the tuning data's name, every file and count (written into ``tuned_on``).
        beta: the reward's F-beta weight ``episodes`` uses (recorded).
        margin: paired standard errors of reward a step must win by.
        progress: called with (episodes done, episodes in all).

    Returns:
        A :class:`ConstantsReport`; ``report.constants`` go into the weights.

    Raises:
        InputError: no tasks, or a name that is not a constant.
    """
    if not episodes.size:
        raise InputError("tune: no tasks to tune the constants on")
    known = weights.constants.values()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"tune: unknown constants {unknown}; known: {', '.join(known)}")
    total = (1 + sum(len(candidates(known[n])) for n in names)) * episodes.size
    done = 0

    def rewards_of(constants: Constants) -> tuple[float, ...]:
        nonlocal done
        start = done

        def advance(n: int) -> None:
            if progress is not None:
                progress(start + n, total)

        got = episodes.outcomes(replace(weights, constants=constants), advance)
        done = start + len(got)
        return tuple(o.reward for o in got)

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
    tasks = episodes.size
    label = f"coordinate search on {source or 'unnamed tasks'} ({tasks} tasks, reward"
    current = replace(current, tuned_on=f"{label} beta={beta}, steps > {margin} paired SE)")
    return ConstantsReport(current, tuple(trials), tasks, source, beta, margin)
