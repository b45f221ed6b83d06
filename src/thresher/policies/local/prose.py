"""What bridge extraction reads of a chunk: its prose, not its markup or code (pure).

A follow-up query is made of a name a retained chunk states, and a name read in
markup leads nowhere: a CSS class ("termy"), a hex colour ("#D3D7CF"), an
anchor attribute (``{ #settings }``), a word of a code sample. The planner reads
every anchor through :func:`anchor_prose`: the chunk's code blocks (its
``metadata["code"]``, marked at ingestion), and in a Markdown or
reStructuredText file's chunk (a ``.txt`` file's holding ````literals````
too) also inline code (unless the question states it)
and markup an older index still holds, become breaks no name spans
(:func:`thresher.corpus.markup.prose`). Text without any of these is read
unchanged. :func:`is_release_notes` tells a changelog's chunk, whose bridges
the planner trusts less (``Constants.changelog_weight``).
"""

from __future__ import annotations

from typing import Any

from thresher.corpus.document import Chunk
from thresher.corpus.filetypes import file_kind
from thresher.corpus.markup import MARKUP_KINDS, is_changelog, prose

__all__ = ["anchor_prose", "is_release_notes"]


def _code(metadata: dict[str, Any]) -> tuple[tuple[int, int], ...]:
    """A chunk's code ranges (``metadata["code"]``), well-formed ones only."""
    found = metadata.get("code") if metadata else None
    if not isinstance(found, list):
        return ()
    return tuple(
        (int(r[0]), int(r[1]))
        for r in found
        if isinstance(r, list | tuple) and len(r) == 2 and all(isinstance(x, int) for x in r)
    )


def _is_markup(doc_id: str, text: str) -> bool:
    """Whether the chunk is a Markdown or reStructuredText file's: by its path, or a
    ``.txt`` file's holding reStructuredText's inline literal (````name````)."""
    name = doc_id.rsplit("/", 1)[-1]
    if "." not in name:
        return False
    kind = file_kind(name)
    return kind in MARKUP_KINDS or (kind == "text" and "``" in text)


def anchor_prose(chunk: Chunk, question_lower: str) -> str:
    """The text of ``chunk`` bridges are read from (see the module docstring);
    ``question_lower``: the question lowercased (inline code it states is kept)."""
    text = chunk.text
    markup = _is_markup(chunk.doc_id, text)
    code = _code(chunk.metadata)
    if not code and not markup and "#" not in text:
        return text
    return prose(text, code, markup=markup, named=question_lower if markup and "`" in text else "")


def is_release_notes(doc_id: str, title: str) -> bool:
    """Whether the chunk's document is release notes
    (:func:`thresher.corpus.markup.is_changelog`)."""
    return is_changelog(doc_id, title)
