"""Multi-hop QA dataset records as paragraphs: format detection and extraction.

Pure functions over parsed JSON values; :mod:`thresher.corpus.loaders` reads the
files. A question record yields its context paragraphs as ``(title, text)``
pairs with the text exactly as the dataset gives it (sentences joined by
:func:`thresher.corpus.ids.join_sentences`), so :func:`~thresher.corpus.ids.paragraph_doc_id` of a
pair is the id evaluation code computes for the same gold paragraph.

Formats (detected from a record's keys, not the file name):

- ``hotpotqa``: Hugging Face schema ``context: {title: [...], sentences: [[...]]}``,
  or the original JSON ``context: [[title, [sentences]]]`` with ``level``/``_id``.
- ``2wikimultihopqa``: ``context: [[title, [sentences]]]`` with ``_id`` and 2Wiki
  fields (``evidences``, ``entity_ids``) or 2Wiki question types.
- ``musique``: ``paragraphs: [{idx, title, paragraph_text, is_supporting}]``.
- ``paragraph_corpus``: a bare ``{title, text}`` passage without an id (HippoRAG
  corpus files), identified by its content.

A record with an id of its own (:data:`DOC_ID_KEYS`) and a ``text`` is a plain
document record (``detect_format`` gives None), whatever else it holds: a BEIR
``corpus.jsonl`` line ``{_id, title, text, metadata}`` keeps its ``_id``.
"""

from __future__ import annotations

from typing import Any

from thresher.corpus.ids import join_sentences

__all__ = ["detect_format", "record_paragraphs", "record_id_key", "DATASET_FORMATS", "DOC_ID_KEYS"]

#: keys holding a document record's own id, in the order they are looked up
#: (``id``; BEIR's ``_id``; ``doc_id``; ``docid`` as in Pyserini and BrowseComp-Plus)
DOC_ID_KEYS = ("id", "_id", "doc_id", "docid")
DATASET_FORMATS = ("hotpotqa", "2wikimultihopqa", "musique", "paragraph_corpus")
_TWOWIKI_KEYS = frozenset({"evidences", "entity_ids", "evidences_id", "answer_id"})
_TWOWIKI_TYPES = frozenset({"compositional", "bridge_comparison", "inference"})


def detect_format(record: Any) -> str | None:
    """The dataset format of one parsed record, or None for a plain document record.

    Args:
        record: one parsed JSON value (a line of a ``.jsonl``, an element of a ``.json`` array).

    Returns:
        One of :data:`DATASET_FORMATS`, or None when the record is not a dataset record.
    """
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("paragraphs"), list) and "question" in record:
        return "musique"
    context = record.get("context")
    if isinstance(context, dict) and "title" in context and "sentences" in context:
        return "hotpotqa"
    if "question" in record and ("context" in record or "_id" in record):
        if _TWOWIKI_KEYS & record.keys() or record.get("type") in _TWOWIKI_TYPES:
            return "2wikimultihopqa"
        return "hotpotqa"
    if "title" in record and "text" in record and record_id_key(record) is None:
        return "paragraph_corpus"
    return None


def record_id_key(record: Any) -> str | None:
    """The key of a document record's own id: the first of :data:`DOC_ID_KEYS` it has.

    Args:
        record: one parsed JSON value.

    Returns:
        The key, or None when the record has none (or is not an object): such a
        record is identified by its content.
    """
    if not isinstance(record, dict):
        return None
    return next((k for k in DOC_ID_KEYS if record.get(k) is not None), None)


def record_paragraphs(fmt: str, record: Any) -> list[tuple[str, str]] | None:
    """The ``(title, text)`` paragraphs of one dataset record.

    Args:
        fmt: the file's format, from :func:`detect_format` on its first record.
        record: the parsed record.

    Returns:
        The paragraphs in record order, or None when a question record has no
        context at all (some 2WikiMultihopQA copies drop it; callers count them).

    Raises:
        ValueError: the record does not have the shape of ``fmt``; the message says
            which key is wrong (callers add the file and line).
    """
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object for a {fmt} record")
    if fmt == "musique":
        return _musique(record)
    if fmt == "paragraph_corpus":
        title, text = record.get("title"), record.get("text")
        if not isinstance(title, str) or not isinstance(text, str):
            raise ValueError("expected string 'title' and 'text' in a corpus passage")
        return [(title, text)]
    if fmt in ("hotpotqa", "2wikimultihopqa"):
        return _context(record)
    raise ValueError(f"unknown dataset format {fmt!r}")


def _musique(record: dict[str, Any]) -> list[tuple[str, str]]:
    paragraphs = record.get("paragraphs")
    if not isinstance(paragraphs, list):
        raise ValueError("expected a 'paragraphs' list in a MuSiQue record")
    out: list[tuple[str, str]] = []
    for i, p in enumerate(paragraphs):
        if not isinstance(p, dict):
            raise ValueError(f"paragraphs[{i}] is not an object")
        title, text = p.get("title"), p.get("paragraph_text")
        if not isinstance(title, str) or not isinstance(text, str):
            raise ValueError(f"paragraphs[{i}] needs string 'title' and 'paragraph_text'")
        out.append((title, text))
    return out


def _context(record: dict[str, Any]) -> list[tuple[str, str]] | None:
    context = record.get("context")
    if context is None or context == [] or context == {}:
        return None
    if isinstance(context, dict):  # Hugging Face: {title: [...], sentences: [[...]]}
        titles, sentences = context.get("title"), context.get("sentences")
        if not isinstance(titles, list) or not isinstance(sentences, list):
            raise ValueError("expected 'context.title' and 'context.sentences' lists")
        if len(titles) != len(sentences):
            raise ValueError("'context.title' and 'context.sentences' differ in length")
        pairs = list(zip(titles, sentences, strict=True))
    elif isinstance(context, list):  # original: [[title, [sentences]], ...]
        pairs = []
        for i, item in enumerate(context):
            if not isinstance(item, list) or len(item) != 2:
                raise ValueError(f"context[{i}] is not a [title, sentences] pair")
            pairs.append((item[0], item[1]))
    else:
        raise ValueError("expected 'context' to be an object or a list")
    out: list[tuple[str, str]] = []
    for i, (title, sents) in enumerate(pairs):
        if not isinstance(title, str) or not isinstance(sents, list):
            raise ValueError(f"context paragraph {i} needs a string title and a sentence list")
        if not all(isinstance(s, str) for s in sents):
            raise ValueError(f"context paragraph {i} has a sentence that is not a string")
        out.append((title, join_sentences(sents)))
    return out
