"""Stable ids: the same input gives the same id on any machine.

Dataset paragraphs are identified by their content (title and whitespace-
normalized text), so evaluation code can map a question's gold paragraphs to
document ids with :func:`paragraph_doc_id` alone. Files are identified by their
path relative to the folder they were read under, which ingestion prefixes with
that folder's label in the index (:mod:`thresher.index.ingest.roots`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "paragraph_doc_id",
    "file_doc_id",
    "chunk_id",
    "doc_of",
    "is_chunk_form",
    "unescaped_id",
    "content_hash",
    "normalize_whitespace",
    "join_sentences",
]


def normalize_whitespace(text: str) -> str:
    """``text`` with every whitespace run collapsed to one space, stripped."""
    return " ".join(text.split())  # str.split() splits on exactly the characters of re's \s


def join_sentences(sentences: Sequence[str]) -> str:
    """A paragraph's text from its sentence list, stripped.

    HotpotQA sentences carry their own leading spaces (``["A.", " B."]``), 2Wiki
    sentences do not (``["A.", "B."]``): sentences are concatenated, with one space
    added only where neither side already has whitespace. Use this wherever a
    paragraph given as sentences must map to :func:`paragraph_doc_id`.
    """
    parts: list[str] = []
    for sentence in sentences:
        if parts and sentence and not parts[-1][-1:].isspace() and not sentence[0].isspace():
            parts.append(" ")
        if sentence:
            parts.append(sentence)
    return "".join(parts).strip()


def paragraph_doc_id(title: str, text: str) -> str:
    """The doc id of a dataset paragraph (HotpotQA, MuSiQue, 2Wiki, HippoRAG corpus).

    ``"p-" + sha256(f"{title}\\n{normalize_whitespace(text)}")[:12]``: depends only on
    ``title`` (as given) and ``text`` (whitespace-normalized), so the same paragraph
    gets the same id whichever dataset file or question it comes from.

    Args:
        title: the paragraph's title, exactly as in the dataset.
        text: the paragraph's raw text (before sanitization).

    Returns:
        ``p-`` followed by 12 lowercase hex digits.
    """
    key = f"{title}\n{normalize_whitespace(text)}"
    return "p-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def file_doc_id(path: Path, root: Path) -> str:
    """A file's POSIX path relative to ``root`` (ingestion adds the root's label).

    Args:
        path: the file.
        root: the path the user named (a folder, or the file itself).

    Returns:
        The relative POSIX path (``notes/a.md``); when ``root`` is the file itself
        (or ``path`` is not under ``root``), the file's name.
    """
    if path == root:
        return path.name
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def chunk_id(doc_id: str, position: int) -> str:
    """The id of the chunk at ``position`` (0-based) of ``doc_id``: ``{doc_id}#{position}``."""
    return f"{doc_id}#{position}"


def doc_of(chunk_or_doc_id: str) -> str:
    """The document id of a chunk id: ``doc#N`` -> ``doc``; any other id is its own document.

    The one inverse of :func:`chunk_id`: only a trailing ``#`` followed by digits is
    a chunk position, so a document id that itself holds ``#`` maps to itself.
    """
    head, sep, tail = chunk_or_doc_id.rpartition("#")
    return head if sep and head and tail.isdigit() else chunk_or_doc_id


def is_chunk_form(doc_id: str) -> bool:
    """Whether ``doc_id`` reads as a chunk id (``doc#N``): such an id would be taken for
    chunk N of document ``doc`` by :func:`doc_of`, so ingestion refuses it."""
    return doc_of(doc_id) != doc_id


_REFERENCE = re.compile(r"&(?:(amp|lt|gt|quot)|#x([0-9a-fA-F]{1,6})|#([0-9]{1,7}));")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"'}


def unescaped_id(text: str) -> str:
    """``text`` with the references an id may be shown with (``&amp; &lt; &gt; &quot;``
    and numeric ``&#x…;``/``&#…;``) turned back into characters.

    Ids are shown to a policy escaped; ingestion refuses an id whose unescaped
    form is another document's id (``zz/R&amp;D.txt`` beside ``zz/R&D.txt``), since
    a copied id could then name either. References beyond U+10FFFF or to a
    surrogate are left as written.
    """

    def back(m: re.Match[str]) -> str:
        if m.group(1):
            return _NAMED[m.group(1)]
        code = int(m.group(2), 16) if m.group(2) else int(m.group(3))
        return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else m.group(0)

    return _REFERENCE.sub(back, text) if "&" in text else text


def content_hash(text: str) -> str:
    """The first 16 hex digits of sha256 of ``text`` (UTF-8): equal text, equal hash."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
