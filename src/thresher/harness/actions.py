"""What a policy proposes: tool calls, or a final answer.

A :class:`Proposal` is the only thing a policy hands back to the harness. It
never mutates state; the harness validates it and applies (or refuses) it.
Everything here is a plain dataclass with ``to_dict``/``from_dict`` so the
trace can carry proposals verbatim. A reply may carry the tokens it was sampled
as (:class:`Sample`: prompt and completion token ids, log-probabilities), which
the harness records beside the proposal (a ``sample`` trace event), not in it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ToolCall",
    "RankedDocument",
    "FinalAnswer",
    "Proposal",
    "MalformedReply",
    "Sample",
    "call",
    "answer",
]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool invocation.

    Attributes:
        name: a name from :data:`thresher.harness.tools.TOOL_NAMES` (others are refused).
        arguments: JSON-safe keyword arguments (``{"query": "..."}``).
        call_id: the policy's id for the call ('' lets the harness assign one).
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": dict(self.arguments), "call_id": self.call_id}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(
            str(data["name"]), dict(data.get("arguments") or {}), str(data.get("call_id", ""))
        )


@dataclass(frozen=True, slots=True)
class RankedDocument:
    """One entry of a final answer, best first.

    ``doc_id`` may name a document or a chunk (the harness maps chunk ids to
    their document); ``chunk_ids`` optionally names the supporting chunks.
    ``justification`` is 1-3 sentences of evidence (text, never numbers about the
    ranking); ``score`` is the policy's own score for the document, if it has one.
    """

    doc_id: str
    justification: str = ""
    chunk_ids: tuple[str, ...] = ()
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "justification": self.justification,
            "chunk_ids": list(self.chunk_ids),
            "score": self.score,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RankedDocument:
        score = data.get("score")
        return cls(
            str(data["doc_id"]),
            str(data.get("justification", "")),
            tuple(str(c) for c in data.get("chunk_ids") or ()),
            float(score) if isinstance(score, int | float) else None,
        )


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    """A ranked list of supporting documents, best first."""

    documents: tuple[RankedDocument, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"documents": [d.to_dict() for d in self.documents]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FinalAnswer:
        return cls(tuple(RankedDocument.from_dict(d) for d in data.get("documents") or ()))


@dataclass(frozen=True, slots=True)
class Sample:
    """The tokens of one reply as the model server sampled them.

    Attributes:
        prompt_ids: the token ids of the whole prompt the server rendered (its chat
            template applied: system prompt, tools, history, generation prompt).
        completion_ids: the token ids the model generated for the reply.
        logprobs: the log-probability of each completion token under the sampling
            policy (one per ``completion_ids`` entry), or None when not reported.

    Build one with :meth:`of`, which checks the shapes; the harness records it as a
    ``sample`` trace event (:class:`~thresher.harness.trace.SampleEvent`).
    """

    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    logprobs: tuple[float, ...] | None = None

    @classmethod
    def of(
        cls,
        prompt_ids: Sequence[int],
        completion_ids: Sequence[int],
        logprobs: Sequence[float] | None = None,
    ) -> Sample:
        """A checked sample: ids are non-negative ints (not booleans); ``logprobs``, when
        given, are finite numbers, one per completion id.

        Raises:
            ValueError: saying which part is not of that shape.
        """

        def ids(values: Sequence[int], what: str) -> tuple[int, ...]:
            if isinstance(values, str | bytes) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values
            ):
                raise ValueError(f"{what} must be a list of non-negative token ids (ints)")
            return tuple(values)

        prompt, completion = ids(prompt_ids, "prompt_ids"), ids(completion_ids, "completion_ids")
        if logprobs is None:
            return cls(prompt, completion, None)
        if isinstance(logprobs, str | bytes) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            for v in logprobs
        ):
            raise ValueError("logprobs must be a list of finite numbers")
        if len(logprobs) != len(completion):
            raise ValueError(
                f"logprobs has {len(logprobs)} entries for {len(completion)} completion ids; "
                "give one log-probability per completion token"
            )
        return cls(prompt, completion, tuple(float(v) for v in logprobs))

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_ids": list(self.prompt_ids),
            "completion_ids": list(self.completion_ids),
            "logprobs": None if self.logprobs is None else list(self.logprobs),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sample:
        """Inverse of :meth:`to_dict` (checked as :meth:`of`). Raises ``ValueError``."""
        return cls.of(
            list(data.get("prompt_ids") or ()),
            list(data.get("completion_ids") or ()),
            None if data.get("logprobs") is None else list(data["logprobs"]),
        )


@dataclass(frozen=True, slots=True)
class Proposal:
    """A policy's reply for one turn: tool calls *or* a final answer.

    Attributes:
        tool_calls: calls to run concurrently this turn.
        final: the final answer (ends the episode).
        text: free text the policy wrote (reasoning, or an unparsed final answer).
        usage: token usage an LLM endpoint reported for this reply
            (``prompt_tokens``, ``completion_tokens``), reconciled in the trace.
        hop: the policy's own hop counter (recorded in lineage), if it keeps one.
        parents: chunk ids the calls were derived from (lineage parent links).
        call_parents: per call id, the chunk ids that call was derived from (a
            follow-up's bridge source), recorded in its lineage instead of ``parents``.
        model: the model an LLM endpoint was asked for this reply ('' for policies
            without one); the episode's end event lists them, to price the tokens.
        sample: the reply's tokens, when the model server reported them (recorded as
            a ``sample`` event after the proposal; never part of :meth:`to_dict`).

    A proposal with both tool calls and a final answer, or neither, is refused.
    When neither is set but ``text`` holds a parsable final answer, the harness
    reads the final answer from ``text``.
    """

    tool_calls: tuple[ToolCall, ...] = ()
    final: FinalAnswer | None = None
    text: str = ""
    usage: dict[str, int] | None = None
    hop: int | None = None
    parents: tuple[str, ...] = ()
    model: str = ""
    call_parents: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    sample: Sample | None = None

    def parents_of(self, call_id: str) -> tuple[str, ...]:
        """The lineage parents of one call: its own when set, else the proposal's."""
        return tuple(self.call_parents.get(call_id, self.parents))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``model`` and ``call_parents`` only when set, so other policies'
        traces are unchanged)."""
        out: dict[str, Any] = {
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "final": self.final.to_dict() if self.final is not None else None,
            "text": self.text,
            "usage": dict(self.usage) if self.usage is not None else None,
            "hop": self.hop,
            "parents": list(self.parents),
        }
        if self.model:
            out["model"] = self.model
        if self.call_parents:
            out["call_parents"] = {k: list(v) for k, v in self.call_parents.items()}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Proposal:
        final = data.get("final")
        return cls(
            tuple(ToolCall.from_dict(c) for c in data.get("tool_calls") or ()),
            FinalAnswer.from_dict(final) if final is not None else None,
            str(data.get("text", "")),
            dict(data["usage"]) if data.get("usage") is not None else None,
            data.get("hop"),
            tuple(str(p) for p in data.get("parents") or ()),
            str(data.get("model") or ""),
            {str(k): tuple(str(p) for p in v) for k, v in (data.get("call_parents") or {}).items()},
        )


@dataclass(frozen=True, slots=True)
class MalformedReply:
    """A reply a policy could not turn into a :class:`Proposal` (say, an LLM's broken tool call).

    The harness refuses it like an invalid proposal: a refusal with ``code`` is
    recorded, and ``message`` (what was wrong and how to fix it) is shown to the
    policy at the next turn. ``raw`` keeps the reply as received, ``usage`` the
    endpoint's report for it; both go to the trace. ``model``, ``sample``: as on
    :class:`Proposal` (a refused reply's tokens are recorded too: a trainer learns from them).
    """

    code: str
    message: str
    raw: str = ""
    usage: dict[str, int] | None = None
    model: str = ""
    sample: Sample | None = None


def call(name: str, call_id: str = "", /, **arguments: Any) -> ToolCall:
    """Shorthand: ``call("search_corpus", query="x")`` -> a :class:`ToolCall`."""
    return ToolCall(name, dict(arguments), call_id)


def answer(*documents: str | tuple[str, str] | RankedDocument, text: str = "") -> Proposal:
    """Shorthand for a final-answer proposal.

    Each document is a doc/chunk id, a ``(id, justification)`` pair, or a
    :class:`RankedDocument`; order is rank order.
    """
    docs: list[RankedDocument] = []
    for d in documents:
        if isinstance(d, RankedDocument):
            docs.append(d)
        elif isinstance(d, tuple):
            docs.append(RankedDocument(d[0], d[1]))
        else:
            docs.append(RankedDocument(d))
    return Proposal(final=FinalAnswer(tuple(docs)), text=text)
