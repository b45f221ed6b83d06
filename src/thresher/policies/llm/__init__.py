"""The LLM policy: chat completions with tools over an OpenAI-compatible endpoint.

Serve ``chromadb/context-1`` or ``openai/gpt-oss-20b`` with vLLM or Ollama
(``docs/serving.md``), then ``thresher search "..." --policy llm``.
"""

from __future__ import annotations

from thresher.policies.llm.policy import (
    CONTEXT1_MODEL,
    ContextTooSmallError,
    LLMPolicy,
    MalformedReplyLimitError,
    context1_policy,
)
from thresher.policies.llm.prompt import SYSTEM_PROMPT
from thresher.policies.llm.schemas import tool_schemas

__all__ = [
    "LLMPolicy",
    "context1_policy",
    "CONTEXT1_MODEL",
    "MalformedReplyLimitError",
    "ContextTooSmallError",
    "SYSTEM_PROMPT",
    "tool_schemas",
]
