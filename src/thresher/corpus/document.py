"""The two records everything else passes around: a source document and its chunks.

Plain frozen dataclasses with ``to_dict``/``from_dict`` for serialization; how a
chunk is shown to a model is decided elsewhere (``harness``/``policies``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Document", "Chunk"]


@dataclass(frozen=True, slots=True)
class Document:
    """One source document before chunking.

    Attributes:
        doc_id: stable id (same input, same id, on any machine).
        title: human title (file stem, record title, paragraph title).
        text: sanitized text.
        source: where it came from (relative path, ``file.jsonl:LINE``, dataset name).
        metadata: free-form JSON-safe extras carried onto every chunk.
        sanitized: counts of what sanitization removed, by kind.
        origin: the path of the file it was read from, under its root's real
            path ('' when it came from elsewhere); ingestion records it so that
            re-indexing a path deletes only documents that came from under that
            path. Not part of the document's content (its hash).
        root: for a document read from a text file, the real path of the folder
            it was read under (the folder named, or a named file's folder), and
            ``doc_id`` is its path relative to that folder; ingestion labels it
            with the index's label for that folder
            (:mod:`thresher.index.ingest.roots`). '' for records and paragraphs,
            whose ids are their own.
        pages: for a paged document (a PDF), the offset in ``text`` where each
            page starts (page 1 first); chunking gives every chunk the pages it
            spans (``metadata["page"]``, ``metadata["page_end"]``). Empty for
            text without pages.
        code: for a Markdown or reStructuredText file, the ``(start, end)`` offsets
            in ``text`` of its code blocks (:func:`thresher.corpus.markup.code_ranges`);
            chunking gives every chunk the parts of them it holds
            (``metadata["code"]``). Empty for other documents.
    """

    doc_id: str
    title: str
    text: str
    source: str
    metadata: dict[str, Any] = field(default_factory=dict)
    sanitized: dict[str, int] = field(default_factory=dict)
    origin: str = ""
    root: str = ""
    pages: tuple[int, ...] = ()
    code: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable unit of a document.

    Attributes:
        chunk_id: stable id, ``{doc_id}#{position}``.
        doc_id: the document this chunk belongs to.
        position: 0-based order of the chunk within its document.
        title: the document's title.
        text: the chunk's text.
        start, end: character offsets of ``text`` in the document text.
        content_hash: sha256 (hex, 16 chars) of ``text``: equal text, equal hash.
        source: the document's source.
        ingested_at: ISO-8601 UTC time of ingestion ('' before ingestion).
        metadata: the document's metadata.
    """

    chunk_id: str
    doc_id: str
    position: int
    title: str
    text: str
    start: int
    end: int
    content_hash: str
    source: str = ""
    ingested_at: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of every field."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Chunk:
        """Inverse of :meth:`to_dict` (unknown keys are ignored)."""
        names = cls.__dataclass_fields__.keys()
        return cls(**{k: v for k, v in data.items() if k in names})
