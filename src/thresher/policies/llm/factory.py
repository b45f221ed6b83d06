"""How the names ``llm`` and ``context-1`` build the LLM policy
(:class:`~thresher.policies.factory.PolicyFactory` objects).

The endpoint, model and sampling come from ``config.llm`` (``--set llm.model=...``);
the policy's own option is its system prompt.
"""

from __future__ import annotations

from dataclasses import dataclass

from thresher.config import Config
from thresher.policies.factory import Factory
from thresher.policies.llm.policy import LLMPolicy, context1_policy

__all__ = ["LLMOptions", "llm", "context1"]


@dataclass(frozen=True, slots=True)
class LLMOptions:
    """The LLM policy's options.

    Attributes:
        system_prompt: replaces :data:`~thresher.policies.llm.prompt.SYSTEM_PROMPT`.
    """

    system_prompt: str | None = None


def _llm(config: Config, seed: int | None, options: LLMOptions) -> LLMPolicy:
    return LLMPolicy(config, system_prompt=options.system_prompt)


def _context1(config: Config, seed: int | None, options: LLMOptions) -> LLMPolicy:
    return context1_policy(config, system_prompt=options.system_prompt)


#: the factories the names ``llm`` and ``context-1`` stand for
llm = Factory(_llm, LLMOptions())
context1 = Factory(_context1, LLMOptions())
