"""Scripted generation: a model's ``generate`` that answers from scripts, not from its weights.

A :class:`Script` is the list of assistant replies one rollout will produce, each written as the
text the model would emit (ending with ``<|im_end|>``) and declaring how many tool calls TRL should
count in it and how many of those should fail. :class:`ScriptedGenerator` replaces
``model.generate`` (the pattern of TRL's own tests): TRL still templates the prompts, parses the
replies, runs the tools, builds the sequences and masks, scores and trains; only the sampling is
fixed, so the run is deterministic on CPU and every token's origin is known.

Which rollout a generate call serves: the first call of a batch hands out scripts by row (``script_for``
on the prompt's text, the row's position in its group choosing among them); later calls of the same
batch (after tool results) continue the rollout whose tokens so far are a prefix of the row, in batch
order (TRL keeps it), so rollouts with identical histories are told apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass(frozen=True, slots=True)
class Reply:
    """One assistant turn: the text emitted, and the tool calls TRL must count in it.

    Attributes:
        text: what the model emits after the generation prompt, ``<|im_end|>`` included.
        calls: the tool calls ``parse_response`` finds in it (0 for a final answer or an
            unparseable call, which TRL takes for plain content).
        failures: how many of ``calls`` raise in the environment (bad arguments, unknown tool).
    """

    text: str
    calls: int = 0
    failures: int = 0


@dataclass(frozen=True, slots=True)
class Script:
    """The replies of one rollout, in order; the last one calls no tool (it ends the rollout).

    Attributes:
        name: what the rollout does (``solver``, ``guesser``...).
        replies: the turns.
        reward: the reward the environment must give the rollout (the smoke checks it); None
            for a rollout that cannot be scored (an infrastructure failure, never a 0).
    """

    name: str
    replies: tuple[Reply, ...]
    reward: float | None

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.replies)

    @property
    def failures(self) -> int:
        return sum(r.failures for r in self.replies)


@dataclass(slots=True)
class Turn:
    """One generate call for one rollout: the ids it was given (unpadded) and the ids it returned."""

    input_ids: list[int]
    reply_ids: list[int]


@dataclass(slots=True)
class Rollout:
    """A scripted rollout as generated: its script and each turn's ids."""

    script: Script
    turns: list[Turn] = field(default_factory=list)

    @property
    def prompt_ids(self) -> list[int]:
        return self.turns[0].input_ids

    def reply_spans(self) -> list[tuple[int, int]]:
        """``(start, end)`` of each reply in the completion (the sequence after the prompt)."""
        base = len(self.prompt_ids)
        return [
            (len(t.input_ids) - base, len(t.input_ids) - base + len(t.reply_ids))
            for t in self.turns
        ]

    def consumed(self) -> list[int]:
        """The ids of the rollout so far: the last turn's input and reply."""
        last = self.turns[-1]
        return last.input_ids + last.reply_ids


class ScriptExhausted(RuntimeError):
    """TRL asked a rollout for a turn its script does not have (its last reply called a tool)."""


class ScriptedGenerator:
    """A drop-in for ``model.generate``: left-padded prompts in, prompts plus scripted replies out.

    Args:
        tokenizer: encodes the replies (no special tokens added) and gives the pad id.
        script_for: the scripts for a row, from its first prompt's text; the row's position in
            its group (``index % group_size``) picks one.
        group_size: TRL's ``num_generations``.
    """

    def __init__(
        self, tokenizer: Any, script_for: Callable[[str], list[Script]], group_size: int
    ) -> None:
        self.tokenizer = tokenizer
        self.script_for = script_for
        self.group_size = group_size
        self.rollouts: list[Rollout] = []

    def begin_batch(self) -> None:
        """Forget the previous batch: the next call starts new rollouts."""
        self.rollouts = []

    def __call__(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        **_: Any,
    ) -> torch.Tensor:
        rows = [
            ids[mask.bool()].tolist() for ids, mask in zip(input_ids, attention_mask, strict=True)
        ]
        targets = self._continue(rows) if self.rollouts else self._start(rows)
        replies: list[list[int]] = []
        for row, rollout in zip(rows, targets, strict=True):
            index = len(rollout.turns)
            if index >= len(rollout.script.replies):
                raise ScriptExhausted(
                    f"script {rollout.script.name!r} has {index} replies and TRL asked for one more; "
                    "end every script with a reply that calls no tool"
                )
            ids = self.tokenizer.encode(
                rollout.script.replies[index].text, add_special_tokens=False
            )
            rollout.turns.append(Turn(row, ids))
            replies.append(ids)
        width = max(len(r) for r in replies)
        pad = self.tokenizer.pad_token_id
        completion = torch.tensor([r + [pad] * (width - len(r)) for r in replies], dtype=torch.long)
        return torch.cat([input_ids, completion.to(input_ids.device)], dim=1)

    def _start(self, rows: list[list[int]]) -> list[Rollout]:
        for i, row in enumerate(rows):
            scripts = self.script_for(self.tokenizer.decode(row))
            self.rollouts.append(Rollout(scripts[(i % self.group_size) % len(scripts)]))
        return self.rollouts

    def _continue(self, rows: list[list[int]]) -> list[Rollout]:
        targets: list[Rollout] = []
        for row in rows:
            candidates = [
                r
                for r in self.rollouts
                if all(r is not t for t in targets) and row[: len(r.consumed())] == r.consumed()
            ]
            if not candidates:
                raise RuntimeError("a generate call continues no scripted rollout of this batch")
            targets.append(candidates[0])
        return targets
