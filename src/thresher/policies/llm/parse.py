"""Read a chat completion into a Proposal, or a MalformedReply that says how to fix it.

Everything here is pure: the input is the completion's JSON (a dict) and what
the transcript already shows; the output is a
:class:`~thresher.harness.actions.Proposal` or a
:class:`~thresher.harness.actions.MalformedReply` (code + corrective message),
which the harness records as a refusal and shows the model at the next turn.

Reply codes (a whole reply is refused on the first problem; up to three
problems are listed in the message):

| code | when |
|---|---|
| ``over_long`` | ``finish_reason == "length"``, or content longer than the cap |
| ``malformed_tool_call`` | a tool call without a function name |
| ``unknown_tool`` | a name outside the five tools |
| ``invalid_json_arguments`` | arguments that are not JSON |
| ``arguments_not_object`` / ``missing_argument`` / ``wrong_argument_type`` / ``empty_argument`` | arguments that do not fit the tool's schema |
| ``repeated_search`` | a search query already issued this episode (or twice in the reply) |
| ``answer_and_tool_calls`` | tool calls and a final answer in the same reply |
| ``empty_reply`` | no content and no tool calls |
| ``no_action`` | text that is neither a tool call nor a final answer |
| ``empty_final_answer`` | a final answer naming no document |

Prose next to tool calls is accepted (it is kept as the turn's text); a
final answer next to tool calls is not. Ids the model invents (prune, recall,
read, final answer) are the harness's to check: it knows what was retrieved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

from thresher.harness.actions import MalformedReply, Proposal, ToolCall
from thresher.harness.final import parse_final
from thresher.policies.llm.schemas import argument_example, check_tool_arguments, tool_names

__all__ = [
    "parse_completion",
    "completion_usage",
    "message_text",
    "normalize_query",
    "searched_queries",
    "refused_replies",
    "MAX_LISTED_PROBLEMS",
]

#: problems listed in one corrective message
MAX_LISTED_PROBLEMS = 3
_RAW_CHARS = 1500
_WS = re.compile(r"\s+")
_TOOLS_LINE = ", ".join(tool_names())
_FINAL_FORM = '<Document id="..."><Justification>...</Justification></Document>'


def normalize_query(query: str) -> str:
    """A query as compared for repeats: case-folded, whitespace collapsed."""
    return _WS.sub(" ", query).strip().casefold()


def message_text(content: Any) -> str:
    """The text of a message's ``content`` (a string, or a list of text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def completion_usage(body: dict[str, Any]) -> dict[str, int] | None:
    """The integer fields of the completion's ``usage`` (None when it reports none)."""
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return None
    out = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
    return out or None


def searched_queries(messages: Sequence[dict[str, Any]]) -> set[str]:
    """Normalized queries of every ``search_corpus`` call the transcript shows."""
    found: set[str] = set()
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or ():
            fn = call.get("function") or {}
            if fn.get("name") != "search_corpus":
                continue
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                continue
            if isinstance(args, dict) and isinstance(args.get("query"), str):
                found.add(normalize_query(args["query"]))
    return found


def refused_replies(messages: Sequence[dict[str, Any]]) -> int:
    """How many of the policy's replies the transcript reports as refused (``[Refused: …]``)."""
    return sum(
        1
        for m in messages
        if m.get("role") == "user"
        for line in message_text(m.get("content")).splitlines()
        if line.startswith("[Refused:")
    )


def _raw(message: dict[str, Any], finish_reason: Any) -> str:
    text = json.dumps({"message": message, "finish_reason": finish_reason}, ensure_ascii=False)
    return text if len(text) <= _RAW_CHARS else text[: _RAW_CHARS - 1] + "…"


def _read_call(
    index: int, call: Any, searched: set[str]
) -> tuple[ToolCall | None, tuple[str, str] | None]:
    """One tool call -> (ToolCall, None) or (None, (code, problem))."""
    fn = call.get("function") if isinstance(call, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str) or not name.strip():
        return None, ("malformed_tool_call", f"tool call {index + 1} has no function name")
    name = name.strip()
    if name not in tool_names():
        return None, (
            "unknown_tool",
            f"there is no tool '{name[:80]}'; the tools are {_TOOLS_LINE} "
            "(to finish, reply with the final answer as text and no tool call)",
        )
    raw_args = fn.get("arguments")
    if isinstance(raw_args, str):
        try:
            decoded = json.loads(raw_args) if raw_args.strip() else {}
        except ValueError as exc:
            reason = getattr(exc, "msg", str(exc))
            return None, (
                "invalid_json_arguments",
                f"the arguments of {name} are not valid JSON ({reason}); send one JSON "
                f"object, e.g. {argument_example(name)}",
            )
    else:
        decoded = {} if raw_args is None else raw_args
    arguments, problem = check_tool_arguments(name, decoded)
    if problem is not None:
        return None, (problem.code, problem.message)
    if name == "search_corpus":
        key = normalize_query(arguments["query"])
        if key in searched:
            return None, (
                "repeated_search",
                f"you already searched for '{arguments['query'][:120]}'; results exclude what "
                "you have seen, so a repeat only returns weaker matches: rephrase it, use "
                "grep_corpus for exact terms, or read_document",
            )
        searched.add(key)
    call_id = call.get("id") if isinstance(call.get("id"), str) else ""
    return ToolCall(name, arguments, call_id), None


def _refuse(codes: list[tuple[str, str]], raw: str) -> MalformedReply:
    listed = codes[:MAX_LISTED_PROBLEMS]
    more = len(codes) - len(listed)
    message = "; ".join(m for _, m in listed) + (f" (and {more} more)" if more else "")
    return MalformedReply(codes[0][0], message, raw)


def parse_completion(
    body: dict[str, Any],
    *,
    searched: Collection[str] = (),
    max_content_tokens: int = 0,
    count_tokens: Callable[[str], int] | None = None,
) -> Proposal | MalformedReply:
    """Turn a chat completion into what the policy hands the harness.

    Args:
        body: the completion JSON (``choices[0].message``, ``finish_reason``, ``usage``).
        searched: normalized queries already searched this episode (see
            :func:`searched_queries`).
        max_content_tokens: the most tokens of text a reply may hold (0: no cap).
        count_tokens: counts tokens of text (default: characters / 4, rounded up).

    Returns:
        A :class:`Proposal` (tool calls, or a final answer) or a
        :class:`MalformedReply`; either carries the reported usage.
    """
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else {}
    choice = choice if isinstance(choice, dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    finish = choice.get("finish_reason")
    usage = completion_usage(body)
    raw = _raw(message, finish)

    def refuse(codes: list[tuple[str, str]]) -> MalformedReply:
        reply = _refuse(codes, raw)
        return MalformedReply(reply.code, reply.message, reply.raw, usage)

    text = message_text(message.get("content"))
    if finish == "length":
        return refuse(
            [
                (
                    "over_long",
                    "your reply was cut off at the output token limit; keep replies short: "
                    "tool calls, or the final answer with one to three sentences per document",
                )
            ]
        )
    if max_content_tokens > 0:
        n = count_tokens(text) if count_tokens is not None else -(-len(text) // 4)
        if n > max_content_tokens:
            return refuse(
                [
                    (
                        "over_long",
                        f"your reply holds {n} tokens of text, over the limit of "
                        f"{max_content_tokens}; keep replies short: tool calls, or the final "
                        "answer with one to three sentences per document",
                    )
                ]
            )
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        return refuse([("malformed_tool_call", "tool_calls must be a list of function calls")])
    seen = set(searched)
    calls: list[ToolCall] = []
    problems: list[tuple[str, str]] = []
    for i, item in enumerate(raw_calls):
        call, problem = _read_call(i, item, seen)
        if problem is not None:
            problems.append(problem)
        elif call is not None:
            calls.append(call)
    if problems:
        return refuse(problems)
    final = parse_final(text)
    if calls:
        if final is not None and final.documents:
            return refuse(
                [
                    (
                        "answer_and_tool_calls",
                        "your reply has tool calls and a final answer together; send the tool "
                        "calls now and the final answer alone, without tool calls, when done",
                    )
                ]
            )
        return Proposal(tool_calls=tuple(calls), text=text, usage=usage)
    if not text.strip():
        return refuse(
            [
                (
                    "empty_reply",
                    f"your reply was empty; call a tool, or give the final answer as {_FINAL_FORM}",
                )
            ]
        )
    if final is None:
        return refuse(
            [
                (
                    "no_action",
                    "your reply has neither a tool call nor a final answer; call a tool, or "
                    f"list the supporting documents as {_FINAL_FORM}",
                )
            ]
        )
    if not final.documents:
        return refuse(
            [
                (
                    "empty_final_answer",
                    "your final answer names no document; list the retrieved documents that "
                    "support the answer, best first, or keep searching",
                )
            ]
        )
    return Proposal(final=final, text=text, usage=usage)
