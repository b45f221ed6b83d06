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
| ``over_long`` | ``finish_reason == "length"`` (unless the text holds complete tool calls: those run, once each, marked ``reply_cut_off``), or content longer than the cap |
| ``malformed_tool_call`` | a tool call without a function name |
| ``unknown_tool`` | a name outside the five tools |
| ``invalid_json_arguments`` | arguments that are not JSON |
| ``arguments_not_object`` / ``missing_argument`` / ``wrong_argument_type`` / ``empty_argument`` | arguments that do not fit the tool's schema |
| ``repeated_search`` | a search query already issued this episode (or twice in the reply); the refusal names what to do instead (documents in view to read, the searches so far) |
| ``answer_and_tool_calls`` | tool calls and a final answer in the same reply |
| ``empty_reply`` | no content and no tool calls |
| ``no_action`` | text that is neither a tool call nor a final answer |
| ``empty_final_answer`` | a final answer naming no document |
| ``placeholder_id`` | a final answer naming an example's stand-in (``...``, ``doc id``) |

Tool calls written as text (Hermes ``<tool_call>`` tags, fenced or bare
``{"name", "arguments"}`` JSON; see :mod:`~thresher.policies.llm.textcalls`;
a name that is no tool is refused ``unknown_tool``) are read
when the reply has no native ones, and marked in the usage the trace records
(``tool_calls_parsed_from_text``). ``<think>`` text and ``reasoning_content``
are kept out of parsing and of the length check.

Prose next to tool calls is accepted (it is kept as the turn's text); a
final answer next to tool calls is not. Ids the model invents (prune, recall,
read, final answer) are the harness's to check: it knows what was retrieved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from thresher.harness.actions import FinalAnswer, MalformedReply, Proposal, ToolCall
from thresher.harness.replies import parse_final
from thresher.policies.llm.refused import SentCall, SentReply, attach
from thresher.policies.llm.schemas import argument_example, check_tool_arguments, tool_names
from thresher.policies.llm.textcalls import TEXT_FORMS, split_thinking, text_tool_calls

__all__ = [
    "parse_completion",
    "completion_usage",
    "message_text",
    "normalize_query",
    "searched_queries",
    "refused_replies",
    "MAX_LISTED_PROBLEMS",
    "MAX_NAMED_IDS",
]

#: problems listed in one corrective message
MAX_LISTED_PROBLEMS = 3
_RAW_CHARS = 1500
_WS = re.compile(r"\s+")
_TOOLS_LINE = ", ".join(tool_names())
_FINAL_FORM = (
    "Document elements, best first, each with the doc attribute of a retrieved chunk "
    "block as its id attribute, copied exactly, holding a Justification element of one "
    "to three sentences"
)
#: ids a model copies from an example instead of the transcript (compared case-folded)
PLACEHOLDER_IDS = frozenset(
    {
        "...", "…", "doc id", "doc_id", "docid", "id", "chunk id", "chunk_id", "<chunk id>",
        "document id", "document_id", "xxx",
    }
)  # fmt: skip


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


def searched_queries(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Normalized queries of every ``search_corpus`` call the transcript shows, each once,
    in the order they were issued."""
    found: dict[str, None] = {}
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
                found[normalize_query(args["query"])] = None
    return list(found)


def refused_replies(messages: Sequence[dict[str, Any]]) -> int:
    """How many of the policy's replies the transcript reports as refused (``[Refused: …]``)."""
    return sum(
        1
        for m in messages
        if m.get("role") == "user"
        for line in message_text(m.get("content")).splitlines()
        if line.startswith("[Refused:")
    )


#: a reply problem: (reason code, sentence for the model)
Problem = tuple[str, str]

_CUT_OFF = (
    "over_long",
    "your reply was cut off at the output token limit; keep replies short: "
    "tool calls, or the final answer with one to three sentences per document",
)
_NOT_A_LIST = ("malformed_tool_call", "tool_calls must be a list of function calls")
_BOTH = (
    "answer_and_tool_calls",
    "your reply has tool calls and a final answer together; send the tool "
    "calls now and the final answer alone, without tool calls, when done",
)
_EMPTY = (
    "empty_reply",
    f"your reply was empty; call a tool, or give the final answer as {_FINAL_FORM}",
)
_NO_ACTION = (
    "no_action",
    "your reply has neither a tool call nor a final answer (read as a native tool call, "
    f"as {', as '.join(TEXT_FORMS)} naming one of {_TOOLS_LINE}, and as a final answer); "
    f"call a tool, or list the supporting documents as {_FINAL_FORM}. (For the operator: "
    "serve the model with tool calling on, llama.cpp --jinja or vLLM --tool-call-parser; "
    "see docs/serving.md)",
)
#: document ids named in a placeholder refusal, at most
MAX_NAMED_IDS = 8
#: documents a repeated search's refusal suggests reading, and earlier queries it lists
MAX_READ_SUGGESTIONS = 3
MAX_NAMED_QUERIES = 5


def _placeholder_problem(named: str, in_view: Sequence[str]) -> Problem:
    """``placeholder_id``, naming the ids the model can copy instead (none: search first)."""
    said = json.dumps(named[:40], ensure_ascii=False)
    if not in_view:
        return (
            "placeholder_id",
            f"your final answer names {said}, a stand-in, not a document id, and no "
            "document has been shown to you yet: call search_corpus or grep_corpus first, "
            "then answer with the doc attribute of a chunk block you were shown",
        )
    shown = list(dict.fromkeys(in_view))
    listed = ", ".join(shown[:MAX_NAMED_IDS]) + (" and more" if len(shown) > MAX_NAMED_IDS else "")
    return (
        "placeholder_id",
        f"your final answer names {said}, a stand-in, not a document id; the documents "
        f"in view are {listed}: copy the ids of those that support the answer exactly, "
        "or keep searching",
    )


_NO_DOCUMENTS = (
    "empty_final_answer",
    "your final answer names no document; list the retrieved documents that "
    "support the answer, best first, or keep searching",
)


def parse_completion(
    body: dict[str, Any],
    *,
    searched: Collection[str] = (),
    max_content_tokens: int = 0,
    count_tokens: Callable[[str], int] | None = None,
    id_salt: str = "",
    in_view: Sequence[str] = (),
    tool_choice: str = "auto",
    response_format: str = "",
) -> Proposal | MalformedReply:
    """Turn a chat completion into what the policy hands the harness.

    The checks run in order and the first that fails refuses the reply: length,
    then every tool call, then whether the reply is an action at all.

    Args:
        body: the completion JSON (``choices[0].message``, ``finish_reason``, ``usage``).
        searched: normalized queries already searched this episode (see
            :func:`searched_queries`).
        max_content_tokens: the most tokens of text a reply may hold (0: no cap).
        count_tokens: counts tokens of text (default: characters / 4, rounded up).
        id_salt: makes the ids of calls read from text unique per turn (see
            :func:`~thresher.policies.llm.textcalls.text_tool_calls`).
        in_view: ids of the documents in view, in the order they entered (as the
            transcript shows them), named by a ``placeholder_id`` or ``repeated_search``
            refusal.
        tool_choice: the ``tool_choice`` the request was sent with; any other than
            ``auto`` is recorded (``usage.tool_choice_required`` on a proposal, a
            ``tool_choice`` member of a refused reply's raw JSON).
        response_format: the type of the request's ``response_format`` ("" for none);
            recorded the same way (``usage.response_format_json_schema``, a
            ``response_format`` member of the raw JSON).

    Returns:
        A :class:`Proposal` (tool calls, or a final answer) or a
        :class:`MalformedReply`; either carries the reported usage.
    """
    message, finish = _first_choice(body)
    usage = completion_usage(body)
    raw = _raw(message, finish, tool_choice, response_format)
    text, thinking = split_thinking(message_text(message.get("content")))
    raw_calls = message.get("tool_calls")
    parsed = None if raw_calls else text_tool_calls(text, id_salt)
    cut_off = 0
    if parsed is not None and finish == "length":
        # a small model that repeats its call until the token limit: the complete
        # calls before the cut are run, the cut-off rest is dropped
        parsed, cut_off = replace(parsed, rest=""), 1
    else:
        problem = _length_problem(text, finish, max_content_tokens, count_tokens)
        if problem is not None:
            return _refuse([problem], raw, usage, SentReply(text=text))
    if parsed is not None:
        raw_calls, text = _distinct(parsed.calls), parsed.rest
    calls, problems, sent = _read_calls(raw_calls, _Searches(tuple(searched), in_view))
    if problems:
        return _refuse(problems, raw, usage, sent)
    final = _final(text) if parsed is None else None
    problem = _action_problem(text, calls, final, in_view)
    if problem is not None:
        both = SentReply(calls=tuple(_sent_call(c, problem[1]) for c in calls))
        sent = both if calls else SentReply(text=text)
        return _refuse([problem], raw, usage, sent)
    marks = _marks(usage, thinking, message, len(calls) if parsed is not None else 0)
    if cut_off:
        marks = {**(marks or {}), "reply_cut_off": 1}
    if tool_choice == "required":
        marks = {**(marks or {}), "tool_choice_required": 1}
    if response_format:
        marks = {**(marks or {}), f"response_format_{response_format}": 1}
    if calls:
        return Proposal(tool_calls=tuple(calls), text=text, usage=marks)
    return Proposal(final=final, text=text, usage=marks)


def _distinct(calls: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Calls read from text, each (name, arguments) once: a model that writes the same
    call again and again means it once."""
    seen: set[tuple[str, str]] = set()
    out = []
    for c in calls:
        key = (c["function"]["name"], c["function"]["arguments"])
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _final(text: str) -> FinalAnswer | None:
    """The final answer written in ``text`` (None for none, or for unreadable nesting)."""
    try:
        return parse_final(text)
    except RecursionError:  # '[' * 5000: deeper than json can read; not an answer
        return None


def _marks(
    usage: dict[str, int] | None, thinking: str, message: dict[str, Any], from_text: int
) -> dict[str, int] | None:
    """The usage the trace records, with what was read around the reply.

    ``tool_calls_parsed_from_text``: calls read from the text (the trace's mark of
    "parsed from text"); ``thinking_chars``: characters of ``<think>`` text and of
    ``reasoning_content``, kept out of parsing and of the length check.
    """
    out = dict(usage or {})
    if from_text:
        out["tool_calls_parsed_from_text"] = from_text
    reasoning = message_text(message.get("reasoning_content"))
    if thinking or reasoning:
        out["thinking_chars"] = len(thinking) + len(reasoning)
    return out or None


def _first_choice(body: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The first choice's message ({} when missing or garbled) and its ``finish_reason``."""
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(choice, dict):
        return {}, None
    message = choice.get("message")
    return (message if isinstance(message, dict) else {}), choice.get("finish_reason")


def _length_problem(
    text: str, finish: Any, max_tokens: int, count_tokens: Callable[[str], int] | None
) -> Problem | None:
    """``over_long`` when the reply was cut off or its text is over ``max_tokens`` (0: no cap)."""
    if finish == "length":
        return _CUT_OFF
    if max_tokens <= 0:
        return None
    n = count_tokens(text) if count_tokens is not None else -(-len(text) // 4)
    if n <= max_tokens:
        return None
    return (
        "over_long",
        f"your reply holds {n} tokens of text, over the limit of {max_tokens}; keep "
        "replies short: tool calls, or the final answer with one to three sentences "
        "per document",
    )


@dataclass(frozen=True, slots=True)
class _Searches:
    """What a repeated search's refusal draws on: the queries searched before this reply
    (normalized, in order) and the ids of the documents in view."""

    before: tuple[str, ...]
    in_view: Sequence[str]


def _read_calls(
    raw_calls: Any, searches: _Searches
) -> tuple[list[ToolCall], list[Problem], SentReply]:
    """Every tool call of a reply, the problems of those that cannot be run, and the
    calls as sent, each with its own problem (for the refusal, see :mod:`.refused`)."""
    if not raw_calls:
        return [], [], SentReply()
    if not isinstance(raw_calls, list):
        return [], [_NOT_A_LIST], SentReply(text=json.dumps(raw_calls, default=str)[:300])
    seen = set(searches.before)
    calls: list[ToolCall] = []
    problems: list[Problem] = []
    sent: list[SentCall] = []
    for i, item in enumerate(raw_calls):
        read = _read_call(i, item, seen, searches)
        if isinstance(read, ToolCall):
            calls.append(read)
            sent.append(_sent_call(read, ""))
        else:
            problems.append(read)
            sent.append(_sent_raw(item, read[1]))
    return calls, problems, SentReply(calls=tuple(sent))


def _sent_call(call: ToolCall, refused: str) -> SentCall:
    return SentCall(call.name, json.dumps(call.arguments, ensure_ascii=False), refused)


def _sent_raw(call: Any, refused: str) -> SentCall:
    """A call that could not be read, as it was sent."""
    fn = call.get("function") if isinstance(call, dict) else None
    fn = fn if isinstance(fn, dict) else {}
    name, args = fn.get("name"), fn.get("arguments")
    if not isinstance(args, str):
        args = json.dumps(args if args is not None else {}, ensure_ascii=False, default=str)
    return SentCall(name if isinstance(name, str) else "", args, refused)


def _read_call(
    index: int, call: Any, searched: set[str], searches: _Searches
) -> ToolCall | Problem:
    """One tool call, or why it cannot be run; adds a new search query to ``searched``."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict):
        fn = {}
    name = _tool_name(index, fn, bool(searches.in_view))
    if isinstance(name, tuple):
        return name
    decoded = _decode_arguments(name, fn.get("arguments"))
    if isinstance(decoded, tuple):
        return decoded
    arguments, problem = check_tool_arguments(name, decoded.value)
    if problem is not None:
        return (problem.code, problem.message)
    if name == "search_corpus":
        repeat = _repeat_problem(arguments["query"], searched, searches)
        if repeat is not None:
            return repeat
    call_id = call.get("id") if isinstance(call, dict) else None
    return ToolCall(name, arguments, call_id if isinstance(call_id, str) else "")


def _tool_name(index: int, fn: dict[str, Any], shown: bool = True) -> str | Problem:
    """The called tool's name, or ``malformed_tool_call`` / ``unknown_tool`` (whose
    advice on finishing depends on whether any document is in view: ``shown``)."""
    name = fn.get("name")
    if not isinstance(name, str) or not name.strip():
        return ("malformed_tool_call", f"tool call {index + 1} has no function name")
    name = name.strip()
    if name not in tool_names():
        then = (
            "to finish, reply with the final answer as text and no tool call"
            if shown
            else "no document is in view yet: call search_corpus first"
        )
        return (
            "unknown_tool",
            f"there is no tool '{name[:80]}'; the tools are {_TOOLS_LINE}. "
            f"{_call_form(fn.get('arguments'))} ({then})",
        )
    return name


def _call_form(raw_args: Any) -> str:
    """How to write the call: the model's own arguments under the tool they fit, when
    they fit exactly one tool's arguments (``{"query": ...}`` is search_corpus's), else
    the form with search_corpus's argument named."""
    decoded = _decode_json(raw_args)
    args = decoded.value if isinstance(decoded, _Decoded) else None
    if isinstance(args, dict) and args:
        fits = [n for n in tool_names() if check_tool_arguments(n, args) == (args, None)]
        if len(fits) == 1:
            call = json.dumps({"name": fits[0], "arguments": args}, ensure_ascii=False)
            return f"Your arguments are those of {fits[0]}: send {call[:300]}"
    example = '{"name": "search_corpus", "arguments": {"query": "<the words to search for>"}}'
    return f"A call names one of them with its arguments, e.g. {example}"


@dataclass(frozen=True, slots=True)
class _Decoded:
    """Decoded call arguments (any JSON value; the schema check comes next)."""

    value: Any


def _decode_json(raw_args: Any) -> _Decoded | str:
    """Call arguments decoded from their JSON string (objects pass as they are), or
    why they are not JSON."""
    if not isinstance(raw_args, str):
        return _Decoded({} if raw_args is None else raw_args)
    if not raw_args.strip():
        return _Decoded({})
    try:
        return _Decoded(json.loads(raw_args))
    except (ValueError, RecursionError) as exc:
        return str(getattr(exc, "msg", "nested too deeply"))


def _decode_arguments(name: str, raw_args: Any) -> _Decoded | Problem:
    """The arguments of a call of the known tool ``name``, or ``invalid_json_arguments``."""
    decoded = _decode_json(raw_args)
    if isinstance(decoded, _Decoded):
        return decoded
    return (
        "invalid_json_arguments",
        f"the arguments of {name} are not valid JSON ({decoded}); send one JSON "
        f"object, e.g. {argument_example(name)}",
    )


def _repeat_problem(query: str, searched: set[str], searches: _Searches) -> Problem | None:
    """``repeated_search`` when ``query`` was already searched; else records it.

    The refusal says what to do instead, with what the model can copy: a small model
    told only "rephrase it" sent the same query again, turn after turn (wire exchanges
    43-45). It names the documents in view to read (most recent first), the searches
    made so far, and grep for exact terms.
    """
    key = normalize_query(query)
    if key not in searched:
        searched.add(key)
        return None
    before = list(searches.before[-MAX_NAMED_QUERIES:])
    so_far = "; ".join(f"'{q[:80]}'" for q in before)
    recent = list(dict.fromkeys(reversed(searches.in_view)))[:MAX_READ_SUGGESTIONS]
    if recent:
        reads = ", ".join(f'{{"doc_id": "{d}"}}' for d in recent)
        read = f"read_document on a document in view ({reads}), "
    else:
        read = ""
    return (
        "repeated_search",
        f"you already searched for '{query[:120]}'; results exclude what you were "
        "shown, so the same query again returns only weaker matches: do not send it "
        f"again. Instead: {read}grep_corpus for an exact name or number from the chunks "
        "you were shown, or search_corpus for another fact the question depends on, in "
        "new words" + (f" (your searches so far: {so_far})" if so_far else ""),
    )


def _action_problem(
    text: str, calls: Sequence[ToolCall], final: FinalAnswer | None, in_view: Sequence[str] = ()
) -> Problem | None:
    """Why a reply is not one action (tool calls, or a final answer naming documents)."""
    if calls:
        return _BOTH if final is not None and final.documents else None
    if not text.strip():
        return _EMPTY
    if final is None:
        return _NO_ACTION
    if not final.documents:
        return _NO_DOCUMENTS
    placeholders = [d.doc_id for d in final.documents if _is_placeholder(d.doc_id)]
    if placeholders:
        return _placeholder_problem(placeholders[0], in_view)
    return None


def _is_placeholder(doc_id: str) -> bool:
    """Whether ``doc_id`` is an example's stand-in ('...', 'doc id') rather than an id."""
    key = doc_id.strip().casefold()
    return key in PLACEHOLDER_IDS or not key.strip(".…_- ")


def _raw(
    message: dict[str, Any],
    finish_reason: Any,
    tool_choice: str = "auto",
    response_format: str = "",
) -> str:
    """The reply as kept in the trace: its message and finish reason as JSON, capped,
    after the request's ``tool_choice`` when it was not ``auto`` and its
    ``response_format`` type when one was sent."""
    head: dict[str, str] = {} if tool_choice == "auto" else {"tool_choice": tool_choice}
    if response_format:
        head["response_format"] = response_format
    whole = {**head, "message": message, "finish_reason": finish_reason}
    text = json.dumps(whole, ensure_ascii=False)
    return text if len(text) <= _RAW_CHARS else text[: _RAW_CHARS - 1] + "…"


def _refuse(
    problems: list[Problem], raw: str, usage: dict[str, int] | None, sent: SentReply
) -> MalformedReply:
    """A refusal with the first problem's code, listing up to :data:`MAX_LISTED_PROBLEMS`,
    ending with what the reply sent (:func:`~thresher.policies.llm.refused.attach`)."""
    listed = problems[:MAX_LISTED_PROBLEMS]
    more = len(problems) - len(listed)
    message = "; ".join(m for _, m in listed) + (f" (and {more} more)" if more else "")
    return MalformedReply(problems[0][0], attach(message, sent), raw, usage)
