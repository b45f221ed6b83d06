"""ScriptedPolicy: a test double that replays a fixed list of actions.

Each action is a :class:`Proposal`, or a callable ``(Observation) -> Proposal``
for steps that depend on what the harness returned. When the script runs out,
``propose`` raises :class:`ScriptExhaustedError`, so the harness ends the
episode with ``policy_error`` rather than looping.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from thresher.errors import ThresherError
from thresher.harness.actions import Proposal
from thresher.harness.observation import Observation
from thresher.harness.policy import BasePolicy
from thresher.policies.base import DEFAULT_SYSTEM_PROMPT

__all__ = ["ScriptedPolicy", "ScriptExhaustedError", "Action"]

Action = Proposal | Callable[[Observation], Proposal]


class ScriptExhaustedError(ThresherError):
    """A ScriptedPolicy was asked for more turns than its script holds."""


class ScriptedPolicy(BasePolicy):
    """Replays ``actions`` one per turn (a test double, not a search strategy).

    Args:
        actions: proposals, or callables computing one from the observation.
        system_prompt: the system message to render (a short default).
        schemas: tool schemas to declare (none by default).

    Attributes:
        observations: every observation received, in order (for assertions).
    """

    name = "scripted"

    def __init__(
        self,
        actions: Sequence[Action | Any],
        *,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        schemas: Sequence[dict[str, Any]] = (),
    ) -> None:
        self._actions = list(actions)
        self._next = 0
        self.system_prompt = system_prompt
        self._schemas = [dict(s) for s in schemas]
        self.observations: list[Observation] = []

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(s) for s in self._schemas]

    def propose(self, observation: Observation) -> Proposal:
        """The next scripted action (callables are called with ``observation``).

        Raises ``ScriptExhaustedError`` when no action is left.
        """
        self.observations.append(observation)
        if self._next >= len(self._actions):
            raise ScriptExhaustedError(
                f"script of {len(self._actions)} action(s) exhausted at turn {observation.turn}; "
                "end the script with a final answer"
            )
        action = self._actions[self._next]
        self._next += 1
        return action(observation) if callable(action) else action
