"""The records a paired run passes around: one side's configuration and one task's outcome.

Shared by :mod:`thresher.eval.protocol` (which plans the run and tests the
differences) and :mod:`thresher.eval.task_job` (which runs one task), so that
neither imports the other.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from thresher.config import Config
from thresher.eval.attribution import Attribution
from thresher.eval.episode_metrics import EpisodeMetrics
from thresher.tasks.task import Task

__all__ = ["RunConfig", "TaskOutcome", "Answerer", "safe_name"]

#: an answering model: ``(task, ranked ResultDocuments) -> answer``
Answerer = Callable[[Task, list[Any]], str]


@dataclass(frozen=True)
class RunConfig:
    """One side of the comparison: a policy, its options and the settings."""

    label: str
    policy: str
    config: Config = field(default_factory=Config)
    policy_options: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "policy": self.policy,
            "policy_options": dict(self.policy_options),
            "source": self.source,
            "config": self.config.to_dict(),
        }


@dataclass(slots=True)
class TaskOutcome:
    """One task through one configuration: metrics (fused over rollouts), attribution, traces.

    ``error``: set when the task's job failed twice (:func:`~thresher.eval.task_job.failed_outcome`);
    its metrics are then those of an episode that returned nothing.
    """

    task: Task
    metrics: EpisodeMetrics
    attribution: Attribution
    rollouts: list[EpisodeMetrics]
    trace_paths: list[str] = field(default_factory=list)
    prediction: str | None = None
    error: str | None = None


def safe_name(text: str) -> str:
    """A file-name-safe form of an id or label, distinct for distinct inputs.

    Characters outside ``[A-Za-z0-9._-]`` become ``_``; when that changed the text,
    a short hash of the original keeps ``a b`` and ``a_b`` apart.
    """
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"
    if safe == text:
        return safe
    return f"{safe}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"
