"""The tools as an LLM sees them: their schemas and the check of a model's arguments.

Both are derived from the harness's tool specs
(:data:`thresher.harness.tools.TOOLS`): the schemas are what the model is sent
(descriptions built from the config), and a model's arguments are checked by the
same :meth:`~thresher.harness.toolspec.ToolSpec.check` the harness applies,
reading only the arguments the schema offers (``prune_chunks``'s ``keep`` is
not offered to models, so it is not accepted from them). :func:`call_response_format`
is the ``response_format`` that constrains a reply to one call of a tool that needs
nothing shown (sent while nothing has been shown). Everything here is pure.
"""

from __future__ import annotations

from typing import Any

from thresher.config import Config
from thresher.harness.tools import TOOL_NAMES, TOOLS, tool_spec
from thresher.harness.tools import tool_schemas as _harness_schemas
from thresher.harness.toolspec import ArgumentProblem

__all__ = [
    "tool_schemas",
    "tool_names",
    "argument_example",
    "check_tool_arguments",
    "call_response_format",
    "RESPONSE_FORMAT_NAME",
    "MAX_CONSTRAINED_CHARS",
]

#: the name of the JSON Schema sent as ``response_format`` (servers echo it in errors)
RESPONSE_FORMAT_NAME = "tool_call"
#: the longest string a constrained call may hold: room for a focused query, a pattern
#: or an id; without a bound the grammar lets a small model write one string to the
#: token limit (Qwen2.5-0.5B wrote a doc_id of digits until cut off, three turns running)
MAX_CONSTRAINED_CHARS = 160


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


def call_response_format(config: Config | None = None) -> dict[str, Any]:
    """A ``response_format`` (type ``json_schema``) admitting exactly one tool call.

    The schema's ``oneOf`` has one object per tool that needs nothing shown: the
    retrieval tools but read_document (it reads a document named by a shown chunk;
    prune_chunks and recall_chunks act on chunks in view),
    ``{"name": <the tool's name>, "arguments": <its parameters' schema>}``: the form
    the text-call reader takes as a bare call
    (:mod:`~thresher.policies.llm.textcalls`). Every string holds at most
    :data:`MAX_CONSTRAINED_CHARS` characters. A server that honours it (llama.cpp
    turns it into a grammar) can only write such a call.
    """
    by_name = {s["function"]["name"]: s["function"] for s in tool_schemas(config)}
    calls = [
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "const": spec.name},
                "arguments": _bounded(by_name[spec.name]["parameters"]),
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for spec in TOOLS
        if spec.view is not None and not spec.view.whole_document
    ]
    return {
        "type": "json_schema",
        "json_schema": {"name": RESPONSE_FORMAT_NAME, "schema": {"oneOf": calls}},
    }


def _bounded(schema: Any) -> Any:
    """``schema`` with ``maxLength`` :data:`MAX_CONSTRAINED_CHARS` on every string."""
    if isinstance(schema, list):
        return [_bounded(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _bounded(v) for k, v in schema.items()}
    if out.get("type") == "string":
        out["maxLength"] = MAX_CONSTRAINED_CHARS
    return out
