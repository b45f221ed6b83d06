"""The transcript as sent to a chat endpoint: one every mainstream chat template accepts.

The harness renders a turn's notices (the usage line, soft/hard notices,
refusals) as a user message of their own, so the transcript it counts may
hold ``system, user (question), user (notices)``, or ``tool, user``. Several
chat templates refuse that: Mistral's and Gemma's raise "roles must
alternate" (HTTP 400) unless user and plain assistant messages alternate
(assistant messages with tool calls and tool results are skipped in that
check), and Mistral's also wants every tool call id to be 9 alphanumeric
characters. :func:`chat_messages` rewrites the transcript, without losing a
line of it:

* notices that follow tool results are appended to the last tool result
  (the harness's word on the calls it answers), so a tool turn needs no user
  message of its own;
* any other run of user messages becomes one user message;
* a refused reply that the refusal line carries (:mod:`~thresher.policies.llm.refused`)
  is sent as the assistant's turn it was: its tool calls each answered by a tool
  result ``Refused: why`` for that call id (a call that was fine but refused with
  its reply: "Not run: …"), or its text followed by a user message ``Refused: why``;
  the turn's other notices follow that answer. The model sees what it sent and
  the answer to it, where a bare notice after an unchanged transcript was sent
  again or echoed back;
* any other refusal line ``[Refused: why]`` is written out as what it is, "Your
  previous reply was not accepted: why", so the model does not take the
  harness's bracketed notice for text to repeat;
* every tool call id becomes a stable 9-character alphanumeric id (the same
  id in the assistant's call and in its result).

Merging never adds tokens (one message overhead fewer per merge); a refused reply
sent back adds a message or two of overhead to the notice line the harness
counted, which the count's calibration on reported usage takes in. Everything
here is pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from thresher.policies.llm.refused import SentReply, detach

__all__ = [
    "chat_messages",
    "short_call_id",
    "REFUSED_PREFIX",
    "NOTICE_SEPARATOR",
    "REPEATED_REFUSED",
]

#: how the harness writes a refusal line, and how it is sent
REFUSED_PREFIX = "[Refused: "
_REFUSED_SENT = "Your previous reply was not accepted: "
#: how the refusal of a reply identical to one already sent back is written
REPEATED_REFUSED = "Your previous reply repeated one already refused: "
#: between a tool result (or the question) and the notices appended to it
NOTICE_SEPARATOR = "\n\n"


def short_call_id(call_id: str) -> str:
    """A stable 9-character alphanumeric id for ``call_id`` (Mistral's templates require it)."""
    if len(call_id) == 9 and call_id.isascii() and call_id.isalnum():
        return call_id
    return hashlib.sha1(call_id.encode("utf-8")).hexdigest()[:9]


def _notice_text(content: str) -> str:
    lines = []
    for line in content.splitlines():
        if line.startswith(REFUSED_PREFIX) and line.endswith("]"):
            line = _REFUSED_SENT + line[len(REFUSED_PREFIX) : -1]
        lines.append(line)
    return "\n".join(lines)


def _with_ids(message: dict[str, Any]) -> dict[str, Any]:
    out = dict(message)
    if out.get("role") == "tool" and isinstance(out.get("tool_call_id"), str):
        out["tool_call_id"] = short_call_id(out["tool_call_id"])
    if out.get("tool_calls"):
        out["tool_calls"] = [
            {**c, "id": short_call_id(str(c.get("id") or ""))} for c in out["tool_calls"]
        ]
    return out


#: the answer to a call that was fine, refused with the rest of its reply
NOT_RUN = (
    "Not run: another call of the same reply was refused, so none of its calls ran; "
    "send this call again if you still need it"
)


def _sent_back(content: str) -> tuple[str, SentReply, str] | None:
    """``(reason, sent, other notices)`` of a notice message whose refusal line carries
    the refused reply (the last such line), else None."""
    lines = content.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if not (line.startswith(REFUSED_PREFIX) and line.endswith("]")):
            continue
        reason, sent = detach(line[len(REFUSED_PREFIX) : -1])
        if sent is None:
            return None
        rest = _notice_text("\n".join(lines[:i] + lines[i + 1 :]))
        return reason, sent, rest
    return None


def _replay_refused(at: int, reason: str, sent: SentReply, notices: str) -> list[dict[str, Any]]:
    """The refused reply as the assistant's turn and the answer to it (see the module
    docstring); ``at`` makes the calls' ids unique in the transcript."""
    answer = f"Refused: {reason}"
    if not sent.calls:
        return [
            {"role": "assistant", "content": sent.text},
            {"role": "user", "content": _joined(answer, notices)},
        ]
    ids = [short_call_id(f"refused:{at}:{i}") for i in range(len(sent.calls))]
    out: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for cid, c in zip(ids, sent.calls, strict=True)
            ],
        }
    ]
    for cid, c in zip(ids, sent.calls, strict=True):
        text = f"Refused: {c.refused}" if c.refused else NOT_RUN
        out.append({"role": "tool", "tool_call_id": cid, "content": text})
    out[-1]["content"] = _joined(out[-1]["content"], notices)
    return out


def _what_was_sent(sent: SentReply) -> tuple[object, ...]:
    """A refused reply as compared for repeats: its calls (names, arguments) or its text,
    not the reasons (which name what changed since, such as the documents in view)."""
    return (tuple((c.name, c.arguments) for c in sent.calls), sent.text)


def _joined(text: str, notices: str) -> str:
    return text + NOTICE_SEPARATOR + notices if notices else text


def chat_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with no two user messages in a row and no user message after a tool result.

    Args:
        messages: the harness's rendered transcript (OpenAI chat shape).

    Returns:
        New message dicts (the input is not changed); see the module docstring.
    """
    out: list[dict[str, Any]] = []
    replayed: set[tuple[object, ...]] = set()
    for message in messages:
        role = message.get("role")
        if role != "user":
            out.append(_with_ids(message))
            continue
        content = str(message.get("content") or "")
        back = _sent_back(content)
        if back is not None and _what_was_sent(back[1]) not in replayed:
            replayed.add(_what_was_sent(back[1]))
            out.extend(_replay_refused(len(out), *back))
            continue
        if back is not None:
            reason, _, notices = back
            text = _joined(REPEATED_REFUSED + reason, notices)
        else:
            text = _notice_text(content)
        last = out[-1] if out else None
        if last is not None and last.get("role") in ("user", "tool"):
            joined = str(last.get("content") or "") + NOTICE_SEPARATOR + text
            out[-1] = {**last, "content": joined}
        else:
            out.append({**message, "content": text})
    return out
