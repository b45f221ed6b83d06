"""Final answers: parse them from model text, resolve their ids against the episode.

Two written forms are accepted, with prose around them:

* the report's XML-ish form, tolerant of attribute quoting (``id="x"``,
  ``id='x'``, ``id=x``, curly quotes), tag case, and missing closing tags::

      <Document id="p-1a2b"><Justification>Names the founder.</Justification></Document>

* JSON, bare or in a code fence: ``{"documents": [{"doc_id": "p-1a2b",
  "justification": "..."}]}`` (``id`` is accepted for ``doc_id``; a bare
  list of such objects too).

Resolution maps chunk ids to their document, merges repeated documents, and
drops ids the episode never saw; each dropped id comes back with a reason.
Everything here is pure.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from thresher.harness.actions import FinalAnswer, RankedDocument
from thresher.harness.state import ActiveContext, RetrievalCache

__all__ = ["parse_final", "DroppedId", "resolve_final", "cited_pruned", "rank_scores"]

_DOC_OPEN = re.compile(r"<\s*document\b([^>]*)>", re.IGNORECASE)
_DOC_CLOSE = re.compile(r"<\s*/\s*document\s*>", re.IGNORECASE)
_ID_ATTR = re.compile(
    r"""\b(?:doc_?)?id\s*=\s*(?:"([^"]*)"|'([^']*)'|“([^”]*)”|‘([^’]*)’|([^\s"'>/]+))""",
    re.IGNORECASE,
)
_JUST_OPEN = re.compile(r"<\s*justification\s*>", re.IGNORECASE)
_JUST_CLOSE = re.compile(r"<\s*/\s*justification\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_WS = re.compile(r"\s+")
_ID_KEYS = ("doc_id", "id", "document_id", "document", "chunk_id")
_WHY_KEYS = ("justification", "reason", "why", "explanation")


def _clean(text: str) -> str:
    return _WS.sub(" ", _TAG.sub(" ", text)).strip()


def _parse_xml(text: str) -> list[RankedDocument]:
    opens = list(_DOC_OPEN.finditer(text))
    docs: list[RankedDocument] = []
    for i, m in enumerate(opens):
        attr = _ID_ATTR.search(m.group(1))
        if attr is None:
            continue
        doc_id = next(g for g in attr.groups() if g is not None).strip()
        if not doc_id:
            continue
        end = opens[i + 1].start() if i + 1 < len(opens) else len(text)
        body = text[m.end() : end]
        close = _DOC_CLOSE.search(body)
        if close is not None:
            body = body[: close.start()]
        just = _JUST_OPEN.search(body)
        if just is not None:
            body = body[just.end() :]
            jclose = _JUST_CLOSE.search(body)
            if jclose is not None:
                body = body[: jclose.start()]
        docs.append(RankedDocument(doc_id, _clean(body)))
    return docs


def _json_candidates(text: str) -> list[Any]:
    found: list[Any] = []
    pieces = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for piece in pieces:
        piece = piece.strip()
        try:
            found.append(json.loads(piece))
            continue
        except ValueError:
            pass
        for start in (i for i, ch in enumerate(piece) if ch in "{["):
            try:
                value, _ = decoder.raw_decode(piece, start)
            except ValueError:
                continue
            found.append(value)
            break
    return found


def _from_json_value(value: Any) -> list[RankedDocument] | None:
    items = value.get("documents") if isinstance(value, dict) else value
    if not isinstance(items, list):
        return None
    docs: list[RankedDocument] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            docs.append(RankedDocument(item.strip()))
            continue
        if not isinstance(item, dict):
            continue
        doc_id = next((item[k] for k in _ID_KEYS if isinstance(item.get(k), str | int)), None)
        if doc_id is None or not str(doc_id).strip():
            continue
        why = next((item[k] for k in _WHY_KEYS if isinstance(item.get(k), str)), "")
        chunks = item.get("chunk_ids")
        chunk_ids = tuple(str(c) for c in chunks) if isinstance(chunks, list) else ()
        docs.append(RankedDocument(str(doc_id).strip(), _clean(why), chunk_ids))
    return docs


def parse_final(text: str) -> FinalAnswer | None:
    """Read a final answer from free text.

    Args:
        text: a model's reply, possibly with prose around the answer.

    Returns:
        The documents in the order written, or None when ``text`` holds no
        recognizable final answer (an explicit empty JSON list is an empty answer).
    """
    if not text or not text.strip():
        return None
    docs = _parse_xml(text)
    if docs:
        return FinalAnswer(tuple(docs))
    for value in _json_candidates(text):
        parsed = _from_json_value(value)
        if parsed is not None:
            return FinalAnswer(tuple(parsed))
    return None


@dataclass(frozen=True, slots=True)
class DroppedId:
    """An id a final answer named that could not be used, with a reason code."""

    id: str
    code: str
    message: str


def _pruned(entry: RankedDocument, cache: RetrievalCache, context: ActiveContext) -> list[str]:
    """The ids an answer entry cites that are out of view (pruned): chunk ids, or the doc id
    when none of its chunks is in the active context."""
    named = cache.get(entry.doc_id)
    out = [c for c in entry.chunk_ids if c in cache and c not in context]
    if named is not None:
        return ([named.chunk_id] if named.chunk_id not in context else []) + out
    docs = [c for c in cache.chunks() if c.doc_id == entry.doc_id]
    if docs and not any(c.chunk_id in context for c in docs):
        return [entry.doc_id, *out]
    return out


def cited_pruned(final: FinalAnswer, cache: RetrievalCache, context: ActiveContext) -> list[str]:
    """Every id a final answer cites whose evidence was pruned (in the cache, out of view).

    The answer handed on must come from evidence in view: the harness refuses a
    final answer that cites any of these, and tells the policy to recall them
    (``recall_chunks``) or leave them out.
    """
    out: list[str] = []
    for entry in final.documents:
        out += [i for i in _pruned(entry, cache, context) if i not in out]
    return out


def resolve_final(
    final: FinalAnswer,
    cache: RetrievalCache,
    context: ActiveContext,
    max_documents: int,
) -> tuple[list[dict[str, Any]], list[DroppedId]]:
    """Map a final answer onto documents the episode has seen.

    Args:
        final: the parsed answer (ids may be document or chunk ids).
        cache: the episode's retrieval cache (what counts as seen).
        context: the active context (preferred supporting chunks of a named document).
        max_documents: keep at most this many documents.

    Returns:
        ``(documents, dropped)``: documents as dicts ``{doc_id, title, chunk_ids,
        justification, score, rank}`` in rank order (1-based), and every id left out
        with its reason (``unknown_id``, ``unknown_chunk``, ``too_many_documents``).
        Scores never rise with rank (see :func:`rank_scores`).
    """
    by_doc: dict[str, list[str]] = {}
    for chunk in cache.chunks():
        by_doc.setdefault(chunk.doc_id, []).append(chunk.chunk_id)
    order: list[str] = []
    merged: dict[str, dict[str, Any]] = {}
    dropped: list[DroppedId] = []
    for entry in final.documents:
        named = cache.get(entry.doc_id)
        if named is not None:
            doc_id, chunk_ids = named.doc_id, [named.chunk_id]
        elif entry.doc_id in by_doc:
            doc_id, chunk_ids = entry.doc_id, []
        else:
            dropped.append(
                DroppedId(entry.doc_id, "unknown_id", f"'{entry.doc_id}' was never retrieved")
            )
            continue
        for cid in entry.chunk_ids:
            cited = cache.get(cid)
            if cited is None or cited.doc_id != doc_id:
                dropped.append(
                    DroppedId(cid, "unknown_chunk", f"'{cid}' is not a seen chunk of {doc_id}")
                )
            elif cid not in chunk_ids:
                chunk_ids.append(cid)
        if doc_id not in merged:
            if len(order) >= max_documents:
                dropped.append(
                    DroppedId(
                        entry.doc_id,
                        "too_many_documents",
                        f"only {max_documents} documents are kept",
                    )
                )
                continue
            order.append(doc_id)
            merged[doc_id] = {
                "chunk_ids": [],
                "justification": entry.justification,
                "score": entry.score,
            }
        slot = merged[doc_id]
        slot["chunk_ids"] += [c for c in chunk_ids if c not in slot["chunk_ids"]]
        if not slot["justification"]:
            slot["justification"] = entry.justification
    documents: list[dict[str, Any]] = []
    scores = rank_scores([merged[d]["score"] for d in order])
    for rank, doc_id in enumerate(order, 1):
        slot = merged[doc_id]
        chunk_ids = slot["chunk_ids"] or (
            [c for c in by_doc[doc_id] if c in context] or list(by_doc[doc_id])
        )
        first = cache.get(chunk_ids[0])
        documents.append(
            {
                "doc_id": doc_id,
                "title": first.title if first is not None else "",
                "chunk_ids": chunk_ids,
                "justification": slot["justification"],
                "score": scores[rank - 1],
                "rank": rank,
            }
        )
    return documents, dropped


def rank_scores(given: list[float | None]) -> list[float]:
    """Scores for documents in answer order (best first) that never rise with rank.

    The order is the answer's; a score only describes it. When the policy scored
    every document (the local policy: its ranker's probability that a document is
    evidence), the scores are the isotonic regression of those probabilities onto
    the answer order (non-increasing; :func:`isotonic_non_increasing`): the
    closest scores, in least squares, that agree with the order; two neighbours
    the policy ordered against their probabilities share their mean. Otherwise
    each document gets ``1 / rank``. Either way scores compare documents within one
    result, not across results, and a score cutoff never drops a document while
    keeping one ranked below it.

    Args:
        given: the policy's score per document, best first (None: none given).

    Returns:
        One score per document, rounded to 4 places, non-increasing.
    """
    if not given:
        return []
    if any(s is None or not math.isfinite(s) for s in given):
        return [round(1.0 / rank, 4) for rank in range(1, len(given) + 1)]
    fitted = isotonic_non_increasing([float(s) for s in given if s is not None])
    out = [round(s, 4) for s in fitted]
    for i in range(1, len(out)):  # rounding may not undo the order
        out[i] = min(out[i], out[i - 1])
    return out


def isotonic_non_increasing(values: list[float]) -> list[float]:
    """The non-increasing sequence closest to ``values`` in least squares (unit weights).

    Pool adjacent violators: walk the values, merging each new one into the block
    before it while that block's mean is below it; each block is then its mean.
    What ``scipy.optimize.isotonic_regression(values, increasing=False).x`` gives,
    written here because importing ``scipy.optimize`` costs ~0.45 CPU s in every
    process that ranks an answer (a CLI search), for a few dozen values.
    """
    sums: list[float] = []
    counts: list[int] = []
    for value in values:
        total, count = value, 1
        while sums and sums[-1] / counts[-1] < total / count:
            total += sums.pop()
            count += counts.pop()
        sums.append(total)
        counts.append(count)
    out: list[float] = []
    for total, count in zip(sums, counts, strict=True):
        out.extend([total / count] * count)
    return out
