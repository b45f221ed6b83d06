"""What one load read and skipped: :class:`LoadStats` and the skip reasons, by name.

Filled in by :func:`thresher.corpus.loaders.iter_documents`; shown at the end of
``thresher index`` (``files:`` in ``--json``): per skip reason a count, the
counts by extension (what a person scans: "``.png`` 80, ``.svg`` 30"), and the
first paths.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EXAMPLES", "SKIP_REASONS", "LoadStats", "extension"]

#: how each skip reason is shown to a person (in this order)
SKIP_REASONS = {
    "unsupported": "unsupported type",
    "binary": "binary",
    "undecodable": "undecodable",
    "unreadable": "unreadable",
    "unreadable_folder": "folder that cannot be listed",
    "path_too_long": "path longer than the system allows",
    "changed": "changed since the folder was listed",
    "too_large": "too large",
    "empty": "empty",
    "ignored": "ignored (.thresherignore)",
    "excluded": "excluded (--exclude)",
    "not_included": "not matched by --include",
    "outside_link": "link outside the folders named",
    "folder_link": "link to a folder",
    "index": "index folder",
    "tool_folder": "tool folder",
    "hidden": "hidden",
    "not_records": "JSON that holds no documents",
    "no_text": "PDF without a text layer",
    "needs_extra": "needs an optional extra",
    "same_file": "same file read twice",
    "bad_name": "name not valid UTF-8",
    "duplicate": "duplicate passage",
    "beir_queries": "BEIR queries and judgments",
    "no_context": "question without paragraphs",
}
#: how many paths are kept per skip reason
EXAMPLES = 5
#: a record's location after its file's path (``:LINE``, ``[INDEX]``)
_LOCATION = re.compile(r"(:\d+|\[\d+\])$")
_COMPRESSED = frozenset({".gz", ".bz2", ".xz", ".zst", ".z"})


def extension(where: str) -> str:
    """What a skipped entry is, by its path: ``folder`` (a path ending in a separator),
    its extension in lowercase (two for a compressed file: ``.tar.gz``), else
    ``no extension``; a record's location (``file:LINE``) counts as its file."""
    if where.endswith(("/", os.sep)):
        return "folder"
    name = os.path.basename(_LOCATION.sub("", where))
    stem, suffix = os.path.splitext(name.lower())
    if suffix in _COMPRESSED:
        inner = os.path.splitext(stem)[1]
        suffix = inner + suffix if inner else suffix
    return suffix or "no extension"


@dataclass(slots=True)
class LoadStats:
    """What one :func:`~thresher.corpus.loaders.iter_documents` call read and skipped.

    Attributes:
        files: files read.
        documents: documents yielded.
        questions: dataset question records read.
        skipped: counts by reason: ``hidden`` and ``unsupported`` (folder entries),
            ``beir_queries`` (the queries file of a BEIR folder), ``empty`` (no text
            after sanitization), ``duplicate`` (a dataset paragraph or id-less record
            already yielded), ``no_context`` (a dataset question without paragraphs),
            ``too_large`` (a document over the size limit), and the reasons of
            :mod:`thresher.corpus.walk` and :mod:`thresher.corpus.decode`; every
            key of :data:`SKIP_REASONS`.
        examples: the first :data:`EXAMPLES` paths (or ``file:LINE``) per reason
            (a folder's ends with a path separator).
        extensions: per reason, counts by :func:`extension`.
    """

    files: int = 0
    documents: int = 0
    questions: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    extensions: dict[str, dict[str, int]] = field(default_factory=dict)

    def skip(self, reason: str, n: int = 1, where: str = "") -> None:
        """Count ``n`` skipped items for ``reason`` (``where``: the path, kept as an example)."""
        self.skipped[reason] = self.skipped.get(reason, 0) + n
        if where:
            counts = self.extensions.setdefault(reason, {})
            kind = extension(where)
            counts[kind] = counts.get(kind, 0) + n
        shown = self.examples.setdefault(reason, [])
        if where and len(shown) < EXAMPLES:
            shown.append(where)

    def to_dict(self) -> dict[str, Any]:
        """``files`` read, ``documents``, ``questions``, and ``skipped``: reason ->
        ``{"count", "examples", "extensions"}`` (extensions most frequent first), in
        the order of :data:`SKIP_REASONS`."""
        order = [r for r in SKIP_REASONS if r in self.skipped]
        order += sorted(r for r in self.skipped if r not in SKIP_REASONS)
        return {
            "files": self.files,
            "documents": self.documents,
            "questions": self.questions,
            "skipped": {
                r: {
                    "count": self.skipped[r],
                    "examples": list(self.examples.get(r, [])),
                    "extensions": dict(
                        sorted(self.extensions.get(r, {}).items(), key=lambda kv: (-kv[1], kv[0]))
                    ),
                }
                for r in order
            },
        }
