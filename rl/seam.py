"""The seam of the smoke: what it trains on, given as one value.

The smoke (``smoke.py``) builds the tokenizer, the model and the trainer, runs it and checks it; a
:class:`SmokeSetup` brings everything that depends on the environment. Today's is the stand-in
(``standin.stand_in_setup``); thresher's ``SearchEnv`` will bring its own (its TRL environment
factory, ``thresher_reward``, rows from synthetic tasks, and scripts of search/prune/final replies),
and the smoke's checks stay as they are.
"""

from __future__ import annotations

from collections.abc import Callable
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
    """

    name: str
    environment_factory: Callable[[], Any]
    reward_funcs: list[Callable[..., list[float | None]]]
    rows: list[dict[str, Any]]
    script_for: Callable[[str], list[Script]]
    corpus: list[str]
