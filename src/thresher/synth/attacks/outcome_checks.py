"""Two checks of the harness-level judge: ids resolve to what was shown, and no failed
episode passes as answered.

:func:`id_breaches`: a document read or ranked is the one the transcript showed
under the name the policy used. :func:`outcome_breaches`: an episode that ends
``answered`` has documents, and not every retrieval call of it failed.
Both read only the trace; :func:`~thresher.synth.attacks.judge.harness_breaches`
adds their lines to its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from thresher.harness.render import escape_id
from thresher.harness.replies import TOOL_FAILURES
from thresher.harness.result import ExitReason
from thresher.harness.tools import RETRIEVAL_TOOLS
from thresher.harness.trace import EpisodeEnd, FinalEvent, ToolResult, TraceEvent

__all__ = ["id_breaches", "outcome_breaches"]


def _chunks(events: Sequence[TraceEvent]) -> dict[str, dict[str, Any]]:
    return {c["chunk_id"]: c for e in events if isinstance(e, ToolResult) for c in e.new_chunks}


def id_breaches(events: Sequence[TraceEvent]) -> list[str]:
    """Ids that resolved to another document than the transcript showed under them.

    ``read_document`` is called with a name as the transcript showed it (the id
    escaped, :func:`escape_id`): when some document was shown under exactly that
    name, what is read must be that document, never a twin (an id that *is* the
    escaped text, or that imitates a chunk id). A final answer ranks only
    documents that were shown, and each chunk it cites for a document is one of
    that document's chunks.
    """
    chunks = _chunks(events)
    names: dict[str, set[str]] = {}  # shown name -> the documents shown under it
    out: list[str] = []
    for e in events:
        if isinstance(e, ToolResult):
            if e.tool == "read_document" and e.status == "ok" and e.shown:
                written = str(e.arguments.get("doc_id", ""))
                read = {str(chunks.get(cid, {}).get("doc_id")) for cid in e.shown}
                under = names.get(written)
                if under and not read <= under:
                    out.append(
                        f"ids: read_document({written!r}) read {sorted(read)}, "
                        f"but the transcript showed {sorted(under)} under that name"
                    )
            for cid in e.shown:
                doc = str(chunks.get(cid, {}).get("doc_id", ""))
                names.setdefault(escape_id(doc), set()).add(doc)
        elif isinstance(e, FinalEvent):
            shown = set().union(*names.values()) if names else set()
            for d in e.documents:
                doc = str(d.get("doc_id", ""))
                if doc not in shown:
                    out.append(f"ids: the answer ranks {doc!r}, never shown to the policy")
                for cid in d.get("chunk_ids") or []:
                    if str(chunks.get(cid, {}).get("doc_id")) != doc:
                        out.append(f"ids: the answer gives {doc!r} the chunk {cid!r} of another")
    return out


def outcome_breaches(events: Sequence[TraceEvent]) -> list[str]:
    """An answer with no documents, or after every retrieval call failed, is no success."""
    end = next((e for e in events if isinstance(e, EpisodeEnd)), None)
    if end is None or end.exit_reason != ExitReason.ANSWERED.value:
        return []
    out = []
    if not end.documents:
        out.append("termination: answered with no documents")
    ran = [
        e
        for e in events
        if isinstance(e, ToolResult) and e.tool in RETRIEVAL_TOOLS and e.status != "refused"
    ]
    if ran and all(e.status == "error" and e.code in TOOL_FAILURES for e in ran):
        out.append("termination: answered although every retrieval call failed")
    return out
