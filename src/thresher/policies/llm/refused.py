"""What a refused reply sent, carried in its refusal line so the model can be shown it.

The harness renders a refused reply only as a notice line, ``[Refused: why]``, at
the next turn; the reply itself is not in the transcript. A model that does not
see its own refused call, nor an answer to it, tends to send it again (at
temperature 0 the transcript it sees is the same but for the notice) or to echo
the notice. So the LLM policy writes what the reply sent at the end of the
refusal message (:func:`attach`), and :func:`~thresher.policies.llm.messages.chat_messages`
reads it back (:func:`detach`) to send the reply as the assistant's turn, each of
its tool calls answered by a tool result ``Refused: …``, or its text answered by a
user message ``Refused: …``.

The mark is JSON after :data:`SENT_MARK`, on the refusal's one line (the
harness escapes nothing JSON writes). Everything here is pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["SENT_MARK", "SentCall", "SentReply", "attach", "detach", "MAX_SENT_TEXT"]

#: between a refusal's reason and the JSON of what the reply sent
SENT_MARK = " | you sent: "
#: characters of a refused reply's text kept
MAX_SENT_TEXT = 300
#: tool calls of a refused reply kept
MAX_SENT_CALLS = 8


@dataclass(frozen=True, slots=True)
class SentCall:
    """One tool call of a refused reply: its name, its arguments as sent (JSON text),
    and why it was refused ("" when the call was fine but another one was not)."""

    name: str
    arguments: str
    refused: str = ""


@dataclass(frozen=True, slots=True)
class SentReply:
    """A refused reply: its tool calls, or (when it had none) its text."""

    calls: tuple[SentCall, ...] = ()
    text: str = ""


def attach(message: str, sent: SentReply) -> str:
    """``message`` with ``sent`` written after :data:`SENT_MARK`."""
    if sent.calls:
        payload: object = {
            "calls": [
                {"name": c.name[:80], "arguments": c.arguments[:500], "refused": c.refused}
                for c in sent.calls[:MAX_SENT_CALLS]
            ]
        }
    else:
        payload = {"text": sent.text[:MAX_SENT_TEXT]}
    return message + SENT_MARK + json.dumps(payload, ensure_ascii=False)


def detach(message: str) -> tuple[str, SentReply | None]:
    """``(reason, sent)`` from a refusal message (``sent`` None when it carries none)."""
    at = message.rfind(SENT_MARK)
    if at < 0:
        return message, None
    try:
        payload = json.loads(message[at + len(SENT_MARK) :])
    except ValueError:
        return message, None
    if not isinstance(payload, dict):
        return message, None
    reason = message[:at]
    calls = payload.get("calls")
    if isinstance(calls, list):
        read = tuple(
            SentCall(str(c.get("name", "")), str(c.get("arguments", "")), str(c.get("refused", "")))
            for c in calls
            if isinstance(c, dict)
        )
        return (reason, SentReply(calls=read)) if read else (message, None)
    text = payload.get("text")
    return (reason, SentReply(text=text)) if isinstance(text, str) else (message, None)
