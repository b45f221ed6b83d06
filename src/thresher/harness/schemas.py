"""JSON schemas of the tool surface, in the OpenAI function-calling shape.

A tool-calling policy declares these (``Policy.tool_schemas()``); the harness
counts their tokens as part of what is sent. Names and semantics follow the
Context-1 report, plus ``recall_chunks``.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["TOOL_SCHEMAS", "tool_schemas"]


def _fn(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_IDS = {"type": "array", "items": {"type": "string"}, "description": "chunk ids"}

TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    _fn(
        "search_corpus",
        "Hybrid (BM25 + dense) search over the corpus. Chunks already seen this episode "
        "are excluded; results are cut to a per-call token budget.",
        {"query": {"type": "string", "description": "the search query"}},
        ["query"],
    ),
    _fn(
        "grep_corpus",
        "Regular-expression search over the corpus; at most 5 chunks, seen chunks excluded.",
        {"pattern": {"type": "string", "description": "a regular expression"}},
        ["pattern"],
    ),
    _fn(
        "read_document",
        "All chunks of one document not already in context, most relevant to the current "
        "query first, cut to the remaining budget.",
        {"doc_id": {"type": "string", "description": "a document id"}},
        ["doc_id"],
    ),
    _fn(
        "prune_chunks",
        "Remove chunks from your context. They stay recallable by id.",
        {"chunk_ids": _IDS},
        ["chunk_ids"],
    ),
    _fn(
        "recall_chunks",
        "Bring pruned chunks back into your context by id (no new search).",
        {"chunk_ids": _IDS},
        ["chunk_ids"],
    ),
)


def tool_schemas(names: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """A fresh copy of the schemas (all, or those whose name is in ``names``)."""
    return [
        copy.deepcopy(s) for s in TOOL_SCHEMAS if names is None or s["function"]["name"] in names
    ]
