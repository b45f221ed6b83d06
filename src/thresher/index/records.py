"""How a chunk is stored as a record, and read back.

Shared by both backends (the embedded index's records file, a Chroma collection).
A record is the chunk id, the chunk text (chromadb's *document*: what grep
searches) and a flat metadata dict:

- ``doc_id, position, title, start, end, content_hash, source, ingested_at``;
- each user metadata key ``k`` as ``meta:k`` when its value is a str, int,
  float or bool, else as ``meta_json:k`` holding its JSON encoding.

What is embedded and BM25-indexed is :func:`indexed_text`: title and text, so a
chunk that never names its subject can still be found by its document's title.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from thresher.corpus.document import Chunk

__all__ = ["chunk_metadata", "chunk_from_record", "indexed_text"]

_SCALAR_PREFIX = "meta:"
_JSON_PREFIX = "meta_json:"


def indexed_text(title: str, text: str) -> str:
    """The text embedded and BM25-indexed for a chunk: ``title`` then ``text``."""
    return f"{title}\n{text}" if title else text


def chunk_metadata(chunk: Chunk) -> dict[str, str | int | float | bool]:
    """The flat metadata of ``chunk`` (see module docs)."""
    meta: dict[str, str | int | float | bool] = {
        "doc_id": chunk.doc_id,
        "position": chunk.position,
        "title": chunk.title,
        "start": chunk.start,
        "end": chunk.end,
        "content_hash": chunk.content_hash,
        "source": chunk.source,
        "ingested_at": chunk.ingested_at,
    }
    for key, value in chunk.metadata.items():
        scalar = isinstance(value, str | int | bool) or (
            isinstance(value, float) and math.isfinite(value)
        )
        if scalar:
            meta[_SCALAR_PREFIX + str(key)] = value
        else:
            meta[_JSON_PREFIX + str(key)] = json.dumps(value, ensure_ascii=False, default=str)
    return meta


def chunk_from_record(chunk_id: str, document: str | None, meta: Mapping[str, Any]) -> Chunk:
    """Rebuild a :class:`Chunk` from a record's id, document and metadata."""
    user: dict[str, Any] = {}
    for key, value in meta.items():
        if key.startswith(_SCALAR_PREFIX):
            user[key[len(_SCALAR_PREFIX) :]] = value
        elif key.startswith(_JSON_PREFIX):
            user[key[len(_JSON_PREFIX) :]] = json.loads(value)
    return Chunk(
        chunk_id=chunk_id,
        doc_id=str(meta["doc_id"]),
        position=int(meta["position"]),
        title=str(meta.get("title", "")),
        text=document or "",
        start=int(meta.get("start", 0)),
        end=int(meta.get("end", 0)),
        content_hash=str(meta.get("content_hash", "")),
        source=str(meta.get("source", "")),
        ingested_at=str(meta.get("ingested_at", "")),
        metadata=user,
    )
