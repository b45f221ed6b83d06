"""Tool calls a model wrote as text, and the thinking it wrote beside its reply.

Small models served without a tool-call parser (llama.cpp without ``--jinja``,
vLLM without ``--tool-call-parser``), or that ignore it, write their calls into
the message text. Three forms are read, in this order:

* Hermes tags: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
  (the form Qwen's and Hermes' chat templates ask for);
* code fences: ```` ```json {"name": ..., "arguments": ...} ``` ````;
* bare JSON: an object (or a list of objects) starting a line, or following
  Mistral's ``[TOOL_CALLS]`` marker (the form Mistral's templates ask for).

An object is taken as a call when it has the shape of one: a string ``name``
and an ``arguments`` (or ``parameters``) member; anything else is left alone,
so prose that merely mentions JSON is not turned into an action. A call whose
name is not a tool is still a call (the model meant to act, and the parser
refuses it ``unknown_tool``, naming the tools), where reading it as prose would
refuse it as "neither a tool call nor a final answer". Everything here is pure.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["TEXT_FORMS", "TextCalls", "text_tool_calls", "split_thinking"]

#: the text forms tried, as named in the refusal of a reply that is none of them
TEXT_FORMS = (
    '<tool_call>{"name": ..., "arguments": {...}}</tool_call> tags',
    "a ```json fenced object",
    'a bare {"name": ..., "arguments": {...}} object',
    '[TOOL_CALLS][{"name": ..., "arguments": {...}}]',
)
_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.DOTALL)
_START = re.compile(r"(?m)(?:\[TOOL_CALLS\]\s*|^[ \t]*)[\[{]")
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class TextCalls:
    """Calls read from text: ``calls`` in the OpenAI ``tool_calls`` shape, the form used,
    and the text left once the calls are cut out."""

    calls: tuple[dict[str, Any], ...]
    form: str
    rest: str


def split_thinking(text: str) -> tuple[str, str]:
    """``(text without <think>…</think>, the thinking)``; an unclosed tag runs to the end."""
    if "<think" not in text.lower():
        return text, ""
    thoughts = [m.group(1).strip() for m in _THINK.finditer(text)]
    return _THINK.sub("", text).strip(), "\n".join(t for t in thoughts if t)


def _decode(text: str, at: int) -> tuple[Any, int] | None:
    """The JSON value starting at ``text[at]`` and where it ends, or None.

    Deep nesting (``"[" * 5000``) raises RecursionError in ``json``; it is read as
    "not JSON", like any other garbage.
    """
    try:
        return _DECODER.raw_decode(text, at)
    except (ValueError, RecursionError):
        return None


def _as_call(value: Any) -> dict[str, Any] | None:
    """One ``{"name", "arguments"}`` object as an OpenAI tool call (None if it is not one);
    the name is not checked here (an unknown one is refused by the parser)."""
    if not isinstance(value, dict):
        return None
    inner = value.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else value
    name = fn.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    args = fn.get("arguments", fn.get("parameters"))
    if args is None:
        return None
    encoded = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return {"type": "function", "function": {"name": name.strip(), "arguments": encoded}}


def _calls_of(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    return [c for c in (_as_call(v) for v in items) if c is not None]


def _scan(text: str) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """Every call in JSON values that start a line of ``text``, and their spans."""
    calls: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        m = _START.search(text, pos)
        if m is None:
            return calls, spans
        at = m.end() - 1
        decoded = _decode(text, at)
        if decoded is None:
            pos = m.end()
            continue
        value, end = decoded
        found = _calls_of(value)
        if found:
            calls += found
            spans.append((m.start(), end))  # a [TOOL_CALLS] marker goes with its calls
        pos = end


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    out, last = [], 0
    for start, end in spans:
        out.append(text[last:start])
        last = end
    out.append(text[last:])
    return "".join(out).strip()


def text_tool_calls(text: str, salt: str = "") -> TextCalls | None:
    """The tool calls written in ``text`` (see the module docstring), or None when none.

    Args:
        text: the reply's content (thinking already removed).
        salt: mixed into the call ids (the policy passes the transcript's length, so the
            same text written at two turns gets two ids).

    Returns:
        The calls (ids ``text_<digest of the text>_<n>``, unique across replies that
        differ), the form they were written in, and the rest of the text; None when
        object has the shape of a call.
    """
    if not text or "name" not in text:
        return None
    for form, pattern in (("hermes", _HERMES), ("fenced", _FENCE)):
        calls: list[dict[str, Any]] = []
        spans: list[tuple[int, int]] = []
        for m in pattern.finditer(text):
            inner, _ = _scan(m.group(1))
            if inner:
                calls += inner
                spans.append(m.span())
        if calls:
            return TextCalls(_numbered(calls, salt + text), form, _cut(text, spans))
    calls, spans = _scan(text)
    if calls:
        return TextCalls(_numbered(calls, salt + text), "bare", _cut(text, spans))
    return None


def _numbered(calls: list[dict[str, Any]], text: str) -> tuple[dict[str, Any], ...]:
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    return tuple({"id": f"text_{digest}_{i}", **c} for i, c in enumerate(calls))
