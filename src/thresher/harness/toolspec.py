"""What one tool is: a :class:`ToolSpec` (name, arguments, description, checks, executor,
result) that every other view of the tool is derived from.

The five specs themselves are in :mod:`thresher.harness.tools`. From a spec come:

* the JSON Schema a model is sent (:meth:`ToolSpec.schema`, OpenAI function shape,
  its description built from the config, e.g. grep's limit from ``grep.limit``);
* the argument check, the same for the harness and for an LLM policy reading a
  model's reply (:meth:`ToolSpec.check`);
* the executor a retrieval call runs against the Store (``execute``) and the pure
  transition that turns the call into its trace event (``apply``), with the first
  line its result message shows (``header``);
* every text about the tool: the prompts' tool list (:func:`tool_list`), the words a
  system prompt says on when to use it (``guide``), what it does called directly,
  outside an episode (``direct``: the MCP server's description of its raw tool),
  and the docs' tool table (:func:`tool_table`, the README's).

An argument a model is not offered (``Argument.offered`` False: ``prune_chunks``'s
``keep``, the form the local policy uses) is left out of the schema and not
accepted from a model (``check(..., offered_only=True)``); the harness takes it from
a policy that proposes it in process.

Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from thresher.config import Config
from thresher.harness.budget import TranscriptCounter
from thresher.index.store import Hit

if TYPE_CHECKING:
    from thresher.harness.actions import ToolCall
    from thresher.harness.state import EpisodeState
    from thresher.harness.trace import ToolResult
    from thresher.index.store import Store

__all__ = [
    "Argument",
    "ArgumentProblem",
    "CallContext",
    "Fetched",
    "FetchScope",
    "Executor",
    "Transition",
    "ResultView",
    "ToolSpec",
    "tool_list",
    "tool_table",
]

#: what an argument holds: one non-empty string, or a list of chunk id strings
ArgumentKind = Literal["text", "ids"]


@dataclass(frozen=True, slots=True)
class Argument:
    """One argument of a tool.

    name: its key. kind: ``text`` (a non-empty string) or ``ids`` (chunk id strings; a
    single string is read as a one-item list). description: what the schema says of it.
    offered: in the schema a model is sent (and accepted from a model).
    may_be_empty: an ``ids`` list may be empty (``keep=[]``: keep nothing).
    """

    name: str
    kind: ArgumentKind
    description: str
    offered: bool = True
    may_be_empty: bool = False

    def json_schema(self) -> dict[str, Any]:
        """The argument's JSON Schema."""
        if self.kind == "text":
            return {"type": "string", "minLength": 1, "description": self.description}
        out: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
        if not self.may_be_empty:
            out["minItems"] = 1
        out["description"] = self.description
        return out

    def example(self) -> str:
        """A JSON example of its value (``"..."`` or ``["<chunk id>"]``)."""
        return '"..."' if self.kind == "text" else '["<chunk id>"]'


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """Why a call's arguments were not accepted: a reason code and a sentence for the policy.

    Codes: ``arguments_not_object``, ``missing_argument``, ``wrong_argument_type``,
    ``empty_argument``, ``conflicting_arguments``.
    """

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Fetched:
    """Raw output of one retrieval call.

    hits: candidates in the order to show them (after rerank).
    total: for read_document, the document's chunk count; for grep_corpus, how many
        chunks matched (after exclusion) before the cut to the limit.
    capped: grep_corpus only: counting stopped at ``total`` (at least that many matched).
    error_code / error: set when the call failed (then ``hits`` is empty).
    """

    hits: tuple[Hit, ...] = ()
    total: int = 0
    error_code: str = ""
    capped: bool = False
    error: str = ""
    elapsed_s: float = 0.0


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a transition needs besides the state.

    room: the most tokens this tool message may take (content plus overhead).
    per_call: cap for search/grep messages. search_results: how many search hits to keep.
    """

    turn: int
    hop: int | None
    parents: tuple[str, ...]
    room: int
    per_call: int
    search_results: int
    counter: TranscriptCounter


@dataclass(frozen=True, slots=True)
class FetchScope:
    """What a retrieval call needs from the episode besides its arguments.

    seen: chunk ids search and grep exclude (the retrieval cache).
    in_context: chunk ids read_document leaves out (already visible).
    current_query: what read_document ranks a document's chunks against.
    question: the episode's question (grep hits are scored against it).
    """

    seen: Collection[str]
    in_context: Collection[str]
    current_query: str
    question: str = ""


class Executor(Protocol):
    """A retrieval tool's run against the Store (may raise; :func:`~thresher.harness.tools.fetch`
    turns errors into a failed :class:`Fetched`)."""

    def __call__(
        self, arguments: dict[str, Any], store: Store, config: Config, scope: FetchScope
    ) -> Fetched: ...


class Transition(Protocol):
    """A call (and, for a retrieval tool, what it fetched) as its trace event; pure."""

    def __call__(
        self,
        spec: ToolSpec,
        call: ToolCall,
        fetched: Fetched,
        state: EpisodeState,
        ctx: CallContext,
    ) -> ToolResult: ...


#: a retrieval result's first line: ``(argument value, fetched, chunks shown)`` -> text
Header = Callable[[str, Fetched, int], str]


@dataclass(frozen=True, slots=True)
class ResultView:
    """How a retrieval tool's result is shown to the policy.

    header: the message's first line.
    whole_document: the rest of one document (``read_document``): its pruned chunks
        come back into view, its chunks in view count as repeats, and the message is
        cut to the room left (not to ``budget.per_call_tokens``); a call that finds
        nothing new says nothing of exclusion.
    search_results: keep at most ``episode.search_results`` chunks.
    sets_query: the call's argument becomes the episode's current query.
    """

    header: Header
    whole_document: bool = False
    search_results: bool = False
    sets_query: bool = False


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool, everything about it in one place.

    Attributes:
        name: the tool's name (as in the Context-1 report, plus ``recall_chunks``).
        arguments: its arguments; the first is the one the schema requires, the others
            are alternatives to it (given instead of it, never beside it).
        describe: what a model is told the tool does, built from the config.
        behaviour: the docs' one-line account of what the harness does with a call.
        apply: the pure transition to the call's trace event.
        execute: a retrieval tool's run against the Store (None: no I/O, the cache serves it).
        view: how a retrieval result is shown (None for prune and recall, whose
            transitions write their own messages).
        guide: what a system prompt says of when to use it, after its name ("for
            exact names or numbers"); empty: the prompt says nothing of it.
        direct: what it does called directly, outside an episode (no budget, no
            exclusion of seen chunks), built from the config: the MCP server's
            description of its raw tool (None: not offered that way).
    """

    name: str
    arguments: tuple[Argument, ...]
    describe: Callable[[Config], str]
    behaviour: Callable[[Config], str]
    apply: Transition
    execute: Executor | None = None
    view: ResultView | None = None
    guide: str = ""
    direct: Callable[[Config], str] | None = None

    @property
    def retrieval(self) -> bool:
        """Whether it adds corpus text: run concurrently, refused past the hard cutoff."""
        return self.execute is not None

    @property
    def argument(self) -> Argument:
        """The argument the schema requires."""
        return self.arguments[0]

    def schema(self, config: Config) -> dict[str, Any]:
        """The JSON Schema a model is sent (OpenAI function-calling shape; one required
        argument, ``additionalProperties: false`` and ``strict`` for servers that
        support schema-constrained decoding)."""
        offered = [a for a in self.arguments if a.offered]
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.describe(config),
                "strict": True,
                "parameters": {
                    "type": "object",
                    "properties": {a.name: a.json_schema() for a in offered},
                    "required": [a.name for a in offered],
                    "additionalProperties": False,
                },
            },
        }

    @property
    def signature(self) -> str:
        """The tool as prompts and docs name it: ``search_corpus(query)``."""
        return f"{self.name}({', '.join(a.name for a in self.arguments if a.offered)})"

    def example(self) -> str:
        """A one-line example of the argument object (``{"query": "..."}``)."""
        return f'{{"{self.argument.name}": {self.argument.example()}}}'

    def check(
        self, arguments: Any, *, offered_only: bool = False
    ) -> tuple[dict[str, Any], ArgumentProblem | None]:
        """Check and normalize a call's arguments.

        Args:
            arguments: the decoded value the policy sent.
            offered_only: read only the arguments a model is offered (an LLM's reply);
                the others are then ignored like unknown keys.

        Returns:
            ``(normalized, None)``: strings stripped, blank ids dropped, a single id
            string read as a one-item list, unknown keys dropped; or ``({}, problem)``.
        """
        if not isinstance(arguments, dict):
            return {}, ArgumentProblem(
                "arguments_not_object",
                f"the arguments of {self.name} must be a JSON object like {self.example()}, "
                f"not a JSON {json_type(arguments)}",
            )
        allowed = [a for a in self.arguments if a.offered or not offered_only]
        given = [a for a in allowed if a.name in arguments]
        if not given:
            return {}, ArgumentProblem(
                "missing_argument",
                f"{self.name} needs the argument '{self.argument.name}': send {self.example()}",
            )
        if len(given) > 1:
            names = " or ".join(f"'{a.name}'" for a in given)
            return {}, ArgumentProblem(
                "conflicting_arguments", f"give {self.name} either {names}, not both"
            )
        (arg,) = given
        value, problem = _check_value(self.name, arg, arguments[arg.name], self.example())
        return ({}, problem) if problem is not None else ({arg.name: value}, None)


def _check_value(
    tool: str, arg: Argument, value: Any, example: str
) -> tuple[Any, ArgumentProblem | None]:
    key = arg.name
    if arg.kind == "text":
        if not isinstance(value, str):
            return None, ArgumentProblem(
                "wrong_argument_type",
                f"'{key}' of {tool} must be a string, not a JSON {json_type(value)}: "
                f"send {example}",
            )
        if not value.strip():
            return None, ArgumentProblem("empty_argument", f"'{key}' of {tool} must not be empty")
        return value.strip(), None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None, ArgumentProblem(
            "wrong_argument_type",
            f"'{key}' of {tool} must be a list of chunk id strings: send {example}",
        )
    ids = [v.strip() for v in value if v.strip()]
    if not ids and not (arg.may_be_empty and not value):
        return None, ArgumentProblem(
            "empty_argument", f"'{key}' of {tool} must name at least one chunk id"
        )
    return ids, None


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value."""
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


def tool_list(specs: Sequence[ToolSpec]) -> str:
    """The prompts' list of tools: ``search_corpus(query), grep_corpus(pattern), ...``."""
    return ", ".join(spec.signature for spec in specs)


def tool_table(specs: Sequence[ToolSpec], config: Config) -> str:
    """The docs' tool table (Markdown): each tool, its arguments, and what the harness does."""
    rows = ["| tool | behaviour |", "|---|---|"]
    rows.extend(f"| `{spec.signature}` | {spec.behaviour(config)} |" for spec in specs)
    return "\n".join(rows)
