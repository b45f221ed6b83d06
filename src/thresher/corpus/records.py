"""Document records of a JSON/JSONL file, and :func:`make_document` (sanitized title and text).

A record is ``{id, text, title?, metadata?}`` (the id under ``id``, ``_id``,
``doc_id`` or ``docid``). JSON escapes can hold lone surrogates, which are not
text: in a record's text, title or metadata (keys and values) each is replaced
by U+FFFD and counted as ``invalid_unicode``; an id holding one is refused.
Metadata may nest at most :data:`MAX_NESTING` levels.
"""

from __future__ import annotations

import re
from typing import Any

from thresher.corpus.datasets import record_id_key
from thresher.corpus.document import Document
from thresher.corpus.ids import paragraph_doc_id
from thresher.corpus.sanitize import flag_injection, merge_counts, sanitize_text
from thresher.errors import InputError

__all__ = ["MAX_NESTING", "make_document", "record_document", "valid_text"]

#: the deepest nesting of lists and objects a record's metadata may have
MAX_NESTING = 32

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str, where: str = "") -> tuple[str, int]:
    """``text`` with lone surrogates (not valid Unicode) replaced by U+FFFD, and how many."""
    fixed, n = _SURROGATE.subn("\ufffd", text)
    return fixed, n


def _valid_value(value: Any, where: str, depth: int = 0) -> tuple[Any, int]:
    """A JSON value with every string made valid Unicode (see :func:`valid_text`).

    Raises:
        InputError: nested deeper than :data:`MAX_NESTING`.
    """
    if depth > MAX_NESTING:
        raise InputError(f"{where}: metadata nested deeper than {MAX_NESTING} levels; flatten it")
    if isinstance(value, str):
        return valid_text(value, where)
    if isinstance(value, list):
        pairs = [_valid_value(v, where, depth + 1) for v in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        total = 0
        for key, item in value.items():
            k, n1 = valid_text(str(key), where)
            v, n2 = _valid_value(item, where, depth + 1)
            out[k] = v
            total += n1 + n2
        return out, total
    return value, 0


def record_document(record: Any, where: str, rel: str, location: str) -> tuple[Document, bool]:
    """A Document from a ``{id, text, title?, metadata?}`` record, and whether its id is a hash.

    The id is the record's own (the first of ``id``, ``_id``, ``doc_id``, ``docid``
    it has; source ``rel`` + ``location``); a record without one is identified by
    its content, ``paragraph_doc_id(title, text)`` (source ``rel``, since equal
    passages anywhere are one document), and marked ``metadata["dataset"] =
    "paragraph_corpus"``.
    """
    if not isinstance(record, dict):
        raise InputError(
            f"{where}: expected a JSON object with 'text' (and 'id'), found {type(record).__name__}"
        )
    if "text" not in record:
        raise InputError(f"{where}: record has no 'text' field; every record needs a 'text'")
    text, title = record["text"], record.get("title")
    metadata = {} if record.get("metadata") is None else record["metadata"]
    if not isinstance(text, str):
        raise InputError(f"{where}: 'text' must be a string, got {type(text).__name__}")
    if title is not None and not isinstance(title, str):
        raise InputError(f"{where}: 'title' must be a string, got {type(title).__name__}")
    if not isinstance(metadata, dict):
        raise InputError(
            f"{where}: 'metadata' must be a JSON object, got {type(metadata).__name__}"
        )
    text, bad_text = valid_text(text, where)
    title, bad_title = valid_text(title, where) if title is not None else (None, 0)
    metadata, bad_meta = _valid_value(metadata, where)
    invalid = bad_text + bad_title + bad_meta
    key = record_id_key(record)
    if key is None:
        doc_id, source = paragraph_doc_id(title or "", text), rel
        metadata = {**metadata, "dataset": "paragraph_corpus"}
    else:
        raw = record[key]
        if isinstance(raw, bool) or not isinstance(raw, str | int) or str(raw).strip() == "":
            raise InputError(
                f"{where}: '{key}' must be a non-empty string or an integer, got {raw!r}"
            )
        doc_id, source = str(raw), f"{rel}{location}"
        if _SURROGATE.search(doc_id):
            raise InputError(
                f"{where}: '{key}' {doc_id.encode('utf-8', 'backslashreplace').decode()!r} "
                "is not valid Unicode (a lone surrogate escape); fix the record's id"
            )
    extra = {"invalid_unicode": invalid} if invalid else {}
    doc = make_document(doc_id, title or doc_id, text, source, metadata, extra)
    return doc, key is None


def make_document(
    doc_id: str,
    title: str,
    text: str,
    source: str,
    metadata: dict[str, Any],
    extra_counts: dict[str, int] | None = None,
) -> Document:
    """A Document with sanitized title and text, counts, and injection flags.

    Args:
        doc_id, source, metadata: as stored on the Document.
        title, text: raw title and text.
        extra_counts: counts from an earlier stage (``hidden_html``).

    Returns:
        The Document; ``sanitized`` merges removal counts of title and text,
        ``extra_counts`` and ``injection_flagged`` (number of patterns matched), and
        ``metadata["injection_flags"]`` lists the matched pattern names (the
        sanitizer alone writes that key: a record's own value under it is dropped).
    """
    clean_text, text_counts = sanitize_text(text)
    clean_title, title_counts = sanitize_text(title)
    clean_title = " ".join(clean_title.split())
    flags = flag_injection(f"{clean_title}\n{clean_text}")
    # the key is the sanitizer's own: what a record's metadata says under it is dropped
    metadata = {k: v for k, v in metadata.items() if k != "injection_flags"}
    if flags:
        metadata = {**metadata, "injection_flags": ",".join(flags)}
    counts = merge_counts(
        text_counts, title_counts, extra_counts or {}, {"injection_flagged": len(flags)}
    )
    return Document(
        doc_id=doc_id,
        title=clean_title,
        text=clean_text,
        source=source,
        metadata=dict(metadata),
        sanitized=counts,
    )
