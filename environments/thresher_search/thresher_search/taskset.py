"""The data half of the environment: thresher tasks as verifiers tasks, scored with
thresher's reward and metrics.

Each task carries the thresher task (question, gold documents, answer) and the index it is
asked on. The harness (:mod:`thresher_search.harness`) runs the episode and leaves
thresher's trace in ``trace.info["thresher"]["trace"]``; scoring reads only that trace:

- the reward ``thresher_reward`` is ``thresher.train.rewards.reward(trace, task, beta)``'s
  total (F-beta of the final documents, trajectory recall, the answer bonus, less the
  prune-streak and turn penalties), so the rollout's reward is thresher's;
- the metrics are thresher's episode metrics on the same trace (``recall``: of the gold
  documents in the final answer; ``precision``; ``trajectory_recall``; ``prune_accuracy``,
  absent when the episode pruned nothing; ``context_tokens``: the context's tokens at the
  end; ``peak_tokens``; ``turns``; ``answered``) and the reward's parts (``fbeta``,
  ``answer_retrieved``, ``prune_penalty``, ``turn_penalty``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from thresher.eval.episode_metrics import episode_metrics
from thresher.harness.trace import TraceEvent, event_from_dict
from thresher.tasks.task import Task
from thresher.train.rewards import RewardBreakdown, reward

from thresher_search.world import load_thresher_tasks, world_source

__all__ = [
    "ThresherSearchConfig",
    "ThresherSearchData",
    "ThresherSearchTask",
    "ThresherSearchTaskset",
    "thresher_events",
]


class ThresherSearchData(vf.TaskData):
    """One task: the thresher task (``Task.to_dict()``), the index folder it is asked on
    and the reward's F-beta weight."""

    task: dict[str, Any]
    index: str
    beta: float = 4.0


def thresher_events(trace: vf.Trace) -> list[TraceEvent]:
    """thresher's trace of the episode the harness ran for ``trace``.

    Raises:
        vf.TaskError: the rollout carries no thresher trace (its harness is not
            ``thresher-search``, or it failed before the episode ended).
    """
    record = trace.info.get("thresher")
    if not isinstance(record, dict) or not isinstance(record.get("trace"), list):
        raise vf.TaskError(
            "the rollout has no thresher trace in trace.info['thresher']: run the task with "
            "the thresher-search harness (--env.agent.harness.id thresher-search)"
        )
    return [event_from_dict(e) for e in record["trace"]]


class ThresherSearchTask(vf.Task[ThresherSearchData]):
    """A thresher task: the reward and metrics are thresher's, computed on its trace."""

    @property
    def key(self) -> str:
        return str(self.data.task["task_id"])

    def thresher_task(self) -> Task:
        return Task.from_dict(self.data.task)

    def breakdown(self, trace: vf.Trace) -> RewardBreakdown:
        return reward(thresher_events(trace), self.thresher_task(), self.data.beta)

    @vf.reward(weight=1.0)
    async def thresher_reward(self, trace: vf.Trace) -> float:
        """thresher's reward (``train.rewards.reward``) on the episode's trace."""
        return self.breakdown(trace).total

    @vf.metric
    async def thresher_metrics(self, trace: vf.Trace) -> dict[str, float]:
        """thresher's episode metrics and the reward's parts (see the module docstring)."""
        events = thresher_events(trace)
        m = episode_metrics(events, self.thresher_task())
        parts = self.breakdown(trace)
        out = {
            "recall": m.output_recall,
            "precision": m.output_precision,
            "trajectory_recall": m.trajectory_recall,
            "context_tokens": float(m.context_tokens),
            "peak_tokens": float(m.peak_tokens),
            "turns": float(m.turns),
            "answered": float(m.exit_reason == "answered"),
            "fbeta": parts.f_beta,
            "answer_retrieved": float(parts.answer_retrieved),
            "prune_penalty": parts.prune_penalty,
            "turn_penalty": parts.turn_penalty,
        }
        if m.prune_accuracy is not None:
            out["prune_accuracy"] = m.prune_accuracy
        return out


class ThresherSearchConfig(vf.TasksetConfig):
    """Where the tasks and the index come from (``--env.taskset.*``)."""

    index: str | None = None
    """A thresher index folder (``thresher index``); needs ``tasks``. Unset: a seeded world."""
    tasks: Path | None = None
    """A tasks file thresher reads (``thresher synth tasks`` output, a world's chains.jsonl,
    HotpotQA/MuSiQue/BEIR); unset with a seeded world: its planted chains."""
    seed: int = 7
    """The seeded world's seed (``thresher synth world --seed``) when no index is given."""
    size: str = "small"
    """The seeded world's size (``small``, ``medium``, ... or a document count)."""
    world_dir: Path | None = None
    """Where to build the seeded world (default: thresher's cache folder)."""
    num_tasks: int | None = None
    """Keep the first N tasks (all by default)."""
    beta: float = 4.0
    """The reward's F-beta weight (thresher's curriculum starts at 4: recall first)."""


class ThresherSearchTaskset(vf.Taskset[ThresherSearchTask, ThresherSearchConfig]):
    """thresher tasks on one index: a given index and tasks file, or a seeded world."""

    def sources(self) -> tuple[Path, Path]:
        """The index folder and the tasks file (building the seeded world if needed)."""
        cfg = self.config
        if cfg.index is not None:
            if cfg.tasks is None:
                raise ValueError(
                    "--env.taskset.index needs --env.taskset.tasks (a tasks file for that index)"
                )
            return Path(cfg.index), cfg.tasks
        index, chains = world_source(cfg.seed, cfg.size, cfg.world_dir)
        return index, cfg.tasks if cfg.tasks is not None else chains

    def load(self) -> list[ThresherSearchTask]:
        index, tasks_file = self.sources()
        return [
            ThresherSearchTask(
                ThresherSearchData(
                    id=t.task_id,
                    name=t.task_id,
                    prompt=t.question,
                    task=t.to_dict(),
                    index=str(index),
                    beta=self.config.beta,
                ),
                self.config.task,
            )
            for t in load_thresher_tasks(tasks_file, self.config.num_tasks)
        ]
