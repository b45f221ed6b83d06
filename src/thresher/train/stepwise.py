"""Step-wise training rows from an episode's ``sample`` events, and group advantages.

An episode whose replies carried their token ids (``sample`` trace events: a model
server asked with ``llm.return_tokens``, or a trainer's ``SearchEnv.step(...,
sample=...)``) becomes rows a policy-gradient trainer takes, one token sequence each:

* **Merging.** Consecutive turns whose prompt extends the row so far merge into one
  row: the first turn's prompt ids are the row's prompt, then come its completion
  ids, then what the next prompt appends (the tool results, the notices), then that
  turn's completion, and so on. A turn starts a new row when the history was
  rewritten (its ``prefix_preserved`` is False: a prune or a recall in ``edit``
  mode), when its prompt ids do not begin with the row's ids (the chat template
  rendered the history otherwise than it was generated: merging would train on
  tokens the model never saw), or when the turn before it has no sample.
* **Loss mask.** 1 on the model's completion tokens, 0 on every prompt, tool-result
  and notice token; ``logprobs`` line up with ``completion_ids`` (0.0 where the mask
  is 0), or are None when a merged turn reported none.
* **Weights.** Each row weighs ``1 / rows``, so an episode whose pruning cut it into
  many rows counts as much as one that stayed one sequence; every row carries the
  episode's one advantage (the caller's: :func:`group_advantages` computes GRPO's
  from a group's rewards).

:func:`export_steps` (``thresher export-steps``) does it for trace files: it matches
each episode to its task by question, scores it (:func:`~thresher.train.rewards.reward`),
computes each task's group advantages and writes the rows as JSONL.

A trace without any ``sample`` event is refused (:class:`NoSamplesError`): rows
cannot be rebuilt from text without the server's tokenizer and template, and a
guess would drift from what the model generated. A ``sample`` event whose fields are
not token ids (and log-probabilities) of that shape (a hand-edited trace) is refused
too (``InputError``).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from thresher.corpus.jsonl import write_jsonl
from thresher.errors import InputError
from thresher.harness.actions import Sample
from thresher.harness.trace import EpisodeStart, SampleEvent, TraceEvent, read_jsonl
from thresher.train.rewards import RewardConfig, reward
from thresher.train.sft import split_episodes

__all__ = [
    "StepRow",
    "RowStart",
    "NoSamplesError",
    "stepwise_rows",
    "rollout_rows",
    "RolloutLike",
    "group_advantages",
    "StepsExport",
    "export_steps",
]

#: why a row starts: the episode's first sampled turn, a rewritten history, a prompt
#: whose ids do not extend the row, or a turn before it that has no sample
RowStart = Literal["first", "rewrite", "tokens", "gap"]


class NoSamplesError(InputError):
    """The trace holds no ``sample`` event: the replies' token ids were never recorded."""


@dataclass(frozen=True)
class StepRow:
    """One training sequence: ``prompt_ids`` then ``completion_ids``.

    loss_mask: per completion id, 1 on the model's tokens, 0 on the harness's (tool
    results, notices); logprobs: per completion id the sampling log-probability (0.0
    where the mask is 0), or None; weight: 1 / the episode's rows; advantage: the
    episode's; turns: the episode's turns merged into it; starts: why it starts
    (:data:`RowStart`).
    """

    prompt_ids: list[int]
    completion_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float] | None
    weight: float
    advantage: float
    turns: tuple[int, ...]
    starts: RowStart

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (one line of an export)."""
        return {
            "prompt_ids": list(self.prompt_ids),
            "completion_ids": list(self.completion_ids),
            "loss_mask": list(self.loss_mask),
            "logprobs": None if self.logprobs is None else list(self.logprobs),
            "weight": self.weight,
            "advantage": self.advantage,
            "turns": list(self.turns),
            "starts": self.starts,
        }


class _TurnLike(Protocol):
    @property
    def prefix_preserved(self) -> bool: ...


class RolloutLike(Protocol):
    """What :func:`rollout_rows` reads of a rollout (``thresher.env.Rollout``)."""

    @property
    def trace(self) -> Sequence[TraceEvent]: ...

    @property
    def turns(self) -> Sequence[_TurnLike]: ...


@dataclass
class _Open:
    """The row being built."""

    prompt: list[int]
    completion: list[int]
    mask: list[int]
    logprobs: list[float] | None
    turns: list[int]
    starts: RowStart

    def ids(self) -> list[int]:
        return self.prompt + self.completion

    def add(self, turn: int, sample: Sample) -> None:
        """The turn's completion (masked in), after what its prompt appends (masked out)."""
        appended = list(sample.prompt_ids[len(self.prompt) + len(self.completion) :])
        self.completion += appended + list(sample.completion_ids)
        self.mask += [0] * len(appended) + [1] * len(sample.completion_ids)
        if self.logprobs is not None and sample.logprobs is not None:
            self.logprobs += [0.0] * len(appended) + list(sample.logprobs)
        else:
            self.logprobs = None
        self.turns.append(turn)


def stepwise_rows(
    trace: Iterable[TraceEvent],
    advantage: float,
    *,
    prefix_preserved: Mapping[int, bool] | Sequence[bool] | None = None,
) -> list[StepRow]:
    """The episode ``trace``'s step-wise rows (see the module docstring).

    Args:
        trace: the episode's events; its ``sample`` events are read, in order.
        advantage: the episode's advantage, carried by every row.
        prefix_preserved: per turn, whether its prompt kept the previous one as a
            prefix, message for message (``SearchEnv``'s ``Turn.prefix_preserved``); a
            turn marked False starts a new row. None: the token ids alone decide.

    Returns:
        The rows, in turn order, each weighing ``1 / len(rows)``.

    Raises:
        NoSamplesError: the trace has no ``sample`` event.
        InputError: a ``sample`` event's fields are not token ids of that shape.
    """
    samples = [(e.turn, _checked(e)) for e in trace if isinstance(e, SampleEvent)]
    if not samples:
        raise NoSamplesError(
            "the trace has no sample events, so it holds no token ids to train on: ask the "
            "model server for them (--set llm.return_tokens=true with vLLM) or pass each "
            "reply's ids to SearchEnv.step(reply, sample=...)"
        )
    preserved = (
        dict(enumerate(prefix_preserved))
        if isinstance(prefix_preserved, Sequence)
        else dict(prefix_preserved or {})
    )
    built: list[_Open] = []
    for turn, sample in samples:
        row = built[-1] if built else None
        starts = _starts(row, turn, sample, preserved)
        if starts is not None:
            lps: list[float] | None = [] if sample.logprobs is not None else None
            row = _Open(list(sample.prompt_ids), [], [], lps, [], starts)
            built.append(row)
        assert row is not None
        row.add(turn, sample)
    weight = 1.0 / len(built)
    return [
        StepRow(
            r.prompt, r.completion, r.mask, r.logprobs, weight, advantage, tuple(r.turns), r.starts
        )
        for r in built
    ]


def _checked(event: SampleEvent) -> Sample:
    """The event's ids as a checked Sample. Raises InputError naming the event."""
    try:
        if isinstance(event.turn, bool) or not isinstance(event.turn, int):
            raise ValueError("turn must be an int")
        return Sample.from_dict(
            {
                "prompt_ids": event.prompt_ids,
                "completion_ids": event.completion_ids,
                "logprobs": event.logprobs,
            }
        )
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"trace event {event.seq} (sample of turn {event.turn!r}): {exc}"
        ) from None


def _starts(
    row: _Open | None, turn: int, sample: Sample, preserved: Mapping[int, bool]
) -> RowStart | None:
    """Why ``sample``'s turn starts a new row after ``row``, or None when it extends it."""
    if row is None:
        return "first"
    if turn != row.turns[-1] + 1:
        return "gap"
    if not preserved.get(turn, True):
        return "rewrite"
    ids = row.ids()
    if list(sample.prompt_ids[: len(ids)]) != ids:
        return "tokens"
    return None


def rollout_rows(rollout: RolloutLike, advantage: float) -> list[StepRow]:
    """:func:`stepwise_rows` of a finished ``SearchEnv`` rollout, its turns' message-level
    ``prefix_preserved`` flags included.

    Raises:
        NoSamplesError: no reply of the rollout carried its token ids.
    """
    flags = [turn.prefix_preserved for turn in rollout.turns]
    return stepwise_rows(rollout.trace, advantage, prefix_preserved=flags)


def group_advantages(
    rewards: Sequence[float | None], *, scale: bool = True, eps: float = 1e-4
) -> list[float]:
    """GRPO's group-relative advantage of each rollout of one group (one task).

    ``(r - mean) / (std + eps)`` over the scorable rewards (``std`` the sample standard
    deviation; ``scale=False``: ``r - mean``). A None reward (an unscorable rollout: the
    infrastructure failed it) is left out of the mean and gets 0, as does every rollout
    of a group with fewer than two scorable ones or whose rewards are all equal (such a
    group carries no learning signal).

    Raises:
        InputError: a reward that is not a finite number or None.
    """
    for r in rewards:
        if r is not None and (
            isinstance(r, bool) or not isinstance(r, int | float) or not math.isfinite(r)
        ):
            raise InputError(f"a reward must be a finite number or None, got {r!r}")
    scored = [float(r) for r in rewards if r is not None]
    if len(scored) < 2 or max(scored) == min(scored):
        return [0.0] * len(rewards)
    mean = statistics.fmean(scored)
    spread = statistics.stdev(scored) + eps if scale else 1.0
    return [0.0 if r is None else (float(r) - mean) / spread for r in rewards]


@dataclass(slots=True)
class StepsExport:
    """What :func:`export_steps` did.

    episodes: episodes read; groups: tasks with at least one episode; rows: rows
    written; unscorable: episodes scored None (the ``unscorable`` predicate's); skipped:
    episodes that gave no rows, by reason (``unreadable``, ``no_matching_task``,
    ``no_samples``).
    """

    episodes: int = 0
    groups: int = 0
    rows: int = 0
    unscorable: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "groups": self.groups,
            "rows": self.rows,
            "unscorable": self.unscorable,
            "skipped": dict(self.skipped),
        }


@dataclass(slots=True)
class _Episode:
    source: str
    index: int
    task: Any
    events: list[TraceEvent]
    reward: float | None = None


def export_steps(
    paths: Sequence[str | Path],
    tasks: Iterable[Any],
    out: str | Path,
    *,
    beta: float = 4.0,
    reward_config: RewardConfig | None = None,
    unscorable: Callable[[Sequence[TraceEvent]], str | None] | None = None,
) -> StepsExport:
    """Write the step-wise rows of the episodes in trace files ``paths`` to ``out`` (JSONL).

    Each episode is matched to its task by question (whitespace folded, as
    ``export-sft`` matches), scored with :func:`~thresher.train.rewards.reward` at
    ``beta`` (None when ``unscorable(events)`` gives a reason), and the episodes of one
    task form a group whose :func:`group_advantages` set each episode's advantage. A
    row is :meth:`StepRow.to_dict` plus ``task_id``, ``source`` (the trace file),
    ``episode`` (its index in the file) and ``reward``. Episodes without samples still
    count in their group's advantages; they give no rows.

    Raises:
        NoSamplesError: no episode of any file had a ``sample`` event.
        InputError: a task without gold documents, or a malformed ``sample`` event.
    """
    by_question = {" ".join(str(t.question).split()): t for t in tasks}
    report = StepsExport()
    groups: dict[int, list[_Episode]] = {}
    for path in paths:
        try:
            episodes = split_episodes(read_jsonl(path))
        except InputError:
            report.episodes += 1
            report.skipped["unreadable"] += 1
            continue
        for i, events in enumerate(episodes):
            report.episodes += 1
            start = events[0]
            question = start.question if isinstance(start, EpisodeStart) else None
            task = by_question.get(" ".join(question.split())) if question is not None else None
            if task is None:
                report.skipped["no_matching_task"] += 1
                continue
            groups.setdefault(id(task), []).append(_Episode(str(path), i, task, events))
    report.groups = len(groups)
    lines: list[dict[str, Any]] = []
    for group in groups.values():
        for episode in group:
            why = unscorable(episode.events) if unscorable is not None else None
            if why is None:
                episode.reward = reward(episode.events, episode.task, beta, reward_config).total
            else:
                report.unscorable += 1
        advantages = group_advantages([e.reward for e in group])
        for episode, advantage in zip(group, advantages, strict=True):
            try:
                rows = stepwise_rows(episode.events, advantage)
            except NoSamplesError:
                report.skipped["no_samples"] += 1
                continue
            extra = {
                "task_id": str(getattr(episode.task, "task_id", "")),
                "source": episode.source,
                "episode": episode.index,
                "reward": episode.reward,
            }
            lines += [{**row.to_dict(), **extra} for row in rows]
    if not lines:
        raise NoSamplesError(
            f"none of the {report.episodes} episode(s) read has sample events (token ids) to train "
            "on: record them with --set llm.return_tokens=true (vLLM) or "
            "SearchEnv.step(reply, sample=...)"
        )
    write_jsonl(out, lines)
    report.rows = len(lines)
    return report
