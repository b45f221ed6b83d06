"""The five tools as JSON Schemas for chat completions, and a checker for their arguments.

The schemas are what the model is sent (OpenAI function-calling shape, one
required argument each, ``additionalProperties: false`` and ``strict`` so
servers that support schema-constrained decoding can use it). The checker is
the same contract applied to what comes back: it reads a call's argument
object and says precisely what is wrong, so the policy can tell the model
how to fix it. Everything here is pure.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

__all__ = [
    "TOOL_SCHEMAS",
    "tool_schemas",
    "tool_names",
    "argument_example",
    "ArgumentProblem",
    "check_tool_arguments",
]


def _tool(name: str, description: str, argument: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {argument: spec},
                "required": [argument],
                "additionalProperties": False,
            },
        },
    }


_CHUNK_IDS = {
    "type": "array",
    "items": {"type": "string"},
    "minItems": 1,
    "description": "ids exactly as written in the id attribute of <chunk> blocks",
}

TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    _tool(
        "search_corpus",
        "Search the corpus by keywords and meaning (BM25 and dense retrieval, fused). "
        "Chunks you have already been shown are never returned again, so repeating a "
        "query only yields weaker matches: rephrase instead.",
        "query",
        {"type": "string", "minLength": 1, "description": "one focused sub-query"},
    ),
    _tool(
        "grep_corpus",
        "Find chunks whose text matches a regular expression (at most 5, unseen chunks "
        "only). Use it for exact names, numbers and phrases.",
        "pattern",
        {"type": "string", "minLength": 1, "description": "a regular expression"},
    ),
    _tool(
        "read_document",
        "Read the rest of one document: its chunks you have not seen, most relevant to "
        "your current query first, cut to the remaining budget.",
        "doc_id",
        {"type": "string", "minLength": 1, "description": "a doc attribute of a <chunk> block"},
    ),
    _tool(
        "prune_chunks",
        "Remove chunks you no longer need from your context to free token budget. "
        "Pruned chunks can be brought back with recall_chunks.",
        "chunk_ids",
        _CHUNK_IDS,
    ),
    _tool(
        "recall_chunks",
        "Bring previously pruned chunks back into your context by id (no new search).",
        "chunk_ids",
        _CHUNK_IDS,
    ),
)


def tool_schemas() -> list[dict[str, Any]]:
    """A fresh (deep) copy of the five tool schemas, in a stable order."""
    return copy.deepcopy(list(TOOL_SCHEMAS))


def tool_names() -> tuple[str, ...]:
    """The tool names, in schema order."""
    return tuple(s["function"]["name"] for s in TOOL_SCHEMAS)


_BY_NAME: dict[str, dict[str, Any]] = {s["function"]["name"]: s for s in TOOL_SCHEMAS}


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """Why a call's arguments were not accepted: a reason code and a sentence for the model."""

    code: str
    message: str


def argument_example(name: str) -> str:
    """A one-line example of ``name``'s argument object (``{"query": "..."}``)."""
    params = _BY_NAME[name]["function"]["parameters"]
    (key,) = params["required"]
    value = '["<chunk id>"]' if params["properties"][key]["type"] == "array" else '"..."'
    return f'{{"{key}": {value}}}'


def check_tool_arguments(
    name: str, arguments: Any
) -> tuple[dict[str, Any], ArgumentProblem | None]:
    """Check decoded arguments of a call to ``name`` against its schema.

    Args:
        name: a tool name from :data:`TOOL_SCHEMAS` (raises ``KeyError`` otherwise).
        arguments: the decoded JSON value the model sent.

    Returns:
        ``(normalized, None)`` with strings stripped and unknown keys dropped (a
        single id string for ``chunk_ids`` becomes a one-item list, as the harness
        allows), or ``({}, problem)`` with code ``arguments_not_object``,
        ``missing_argument``, ``wrong_argument_type`` or ``empty_argument``.
    """
    params = _BY_NAME[name]["function"]["parameters"]
    (key,) = params["required"]
    kind = params["properties"][key]["type"]
    example = argument_example(name)
    if not isinstance(arguments, dict):
        return {}, ArgumentProblem(
            "arguments_not_object",
            f"the arguments of {name} must be a JSON object like {example}, "
            f"not a JSON {_json_type(arguments)}",
        )
    if key not in arguments:
        return {}, ArgumentProblem(
            "missing_argument", f"{name} needs the argument '{key}': send {example}"
        )
    value = arguments[key]
    if kind == "array" and isinstance(value, str):
        value = [value]
    if kind == "string":
        if not isinstance(value, str):
            return {}, ArgumentProblem(
                "wrong_argument_type",
                f"'{key}' of {name} must be a string, not a JSON {_json_type(value)}: "
                f"send {example}",
            )
        if not value.strip():
            return {}, ArgumentProblem("empty_argument", f"'{key}' of {name} must not be empty")
        return {key: value.strip()}, None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return {}, ArgumentProblem(
            "wrong_argument_type",
            f"'{key}' of {name} must be a list of chunk id strings: send {example}",
        )
    ids = [v.strip() for v in value if v.strip()]
    if not ids:
        return {}, ArgumentProblem(
            "empty_argument", f"'{key}' of {name} must name at least one chunk id"
        )
    return {key: ids}, None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
