"""The tools as an LLM sees them: their schemas and the check of a model's arguments.

Both are derived from the harness's tool specs
(:data:`thresher.harness.tools.TOOLS`): the schemas are what the model is sent
(descriptions built from the config), and a model's arguments are checked by the
same :meth:`~thresher.harness.toolspec.ToolSpec.check` the harness applies,
reading only the arguments the schema offers (``prune_chunks``'s ``keep`` is
not offered to models, so it is not accepted from them). Everything here is pure.
"""

from __future__ import annotations

from typing import Any

from thresher.config import Config
from thresher.harness.tools import TOOL_NAMES, tool_spec
from thresher.harness.tools import tool_schemas as _harness_schemas
from thresher.harness.toolspec import ArgumentProblem

__all__ = [
    "tool_schemas",
    "tool_names",
    "argument_example",
    "ArgumentProblem",
    "check_tool_arguments",
]


def tool_schemas(config: Config | None = None) -> list[dict[str, Any]]:
    """The five tools' JSON Schemas for ``config`` (default settings when None), fresh copies."""
    return _harness_schemas(config)


def tool_names() -> tuple[str, ...]:
    """The tool names, in schema order."""
    return TOOL_NAMES


def argument_example(name: str) -> str:
    """A one-line example of ``name``'s argument object (``{"query": "..."}``)."""
    return tool_spec(name).example()


def check_tool_arguments(
    name: str, arguments: Any
) -> tuple[dict[str, Any], ArgumentProblem | None]:
    """Check decoded arguments a model sent for a call to ``name`` against its schema.

    Args:
        name: a tool name (raises ``KeyError`` for any other).
        arguments: the decoded JSON value the model sent.

    Returns:
        ``(normalized, None)`` with strings stripped and unknown keys dropped (a
        single id string for ``chunk_ids`` becomes a one-item list, as the harness
        allows), or ``({}, problem)`` with code ``arguments_not_object``,
        ``missing_argument``, ``wrong_argument_type`` or ``empty_argument``.
    """
    return tool_spec(name).check(arguments, offered_only=True)
