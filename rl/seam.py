"""The seam of the smoke: what it trains on, given as one value.

The smoke (``smoke.py``) builds the tokenizer, the model and the trainer, runs it and checks it; a
:class:`SmokeSetup` brings everything that depends on the environment: thresher's ``SearchEnv``
through its TRL adapter (``searchenv.searchenv_setup``, the default) or the stand-in
(``standin.stand_in_setup``). A setup may bring checks of its own, run on every rollout and on
the trainer's tools.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scripted import Script


@dataclass(frozen=True, slots=True)
class SmokeSetup:
    """What the smoke trains on.

    Attributes:
        name: shown in the closing line.
        environment_factory: TRL's ``environment_factory`` (no arguments; one instance per rollout,
            pooled and ``reset(**row)`` for each).
        reward_funcs: TRL reward functions (``completions, environments=..., **row columns``).
        rows: the dataset, one dict per task: the keyword arguments of ``reset``.
        script_for: the scripts of a row's group, from the text of its first prompt (one per
            generation; the row's position in its group picks one).
        corpus: text the tokenizer is trained on.
        check_rollout: run on each rollout's environment once its batch is scored, with the
            reward TRL logged for it (None: unscorable); raises ``AssertionError`` on a failure.
        check_tools: run on the trainer's tools (the environment's bound methods); raises
            ``AssertionError`` on a failure.
        max_completion_length: TRL's cap on a rollout's completion (replies and tool results).
    """

    name: str
    environment_factory: Callable[[], Any]
    reward_funcs: list[Callable[..., list[float | None]]]
    rows: list[dict[str, Any]]
    script_for: Callable[[str], list[Script]]
    corpus: list[str]
    check_rollout: Callable[[Any, float | None], None] | None = None
    check_tools: Callable[[Sequence[Any]], None] | None = None
    max_completion_length: int = 2048
