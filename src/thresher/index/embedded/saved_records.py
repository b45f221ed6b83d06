"""Chunk records saved beside a generation's shared read copy: reads without chromadb.

A search reads the text and metadata of the chunks it returns. For a small index
(at most ``retrieval.exact_dense_max_chunks`` chunks, the same bound as the saved
vectors of :mod:`thresher.index.embedded.exact_dense`) every record is saved once,
when the shared read copy is made (:mod:`thresher.index.embedded.read_copy`), into
one SQLite file (``records.sqlite3``, Python's own ``sqlite3``):

- ``record(id, doc_id, document, metadata)``: each chunk's id, its document's id,
  its text (chromadb's *document*) and its chromadb metadata as JSON, keys in the
  order chromadb returned them (an index on ``doc_id`` serves whole documents).

With the BM25 and grep side indexes and the saved vectors, that is everything a
search, a read or a grep of a small index needs, so a command that only searches
never imports chromadb (0.7 CPU s of a CLI search) and never starts its client.
Read with ``immutable=1``, like the grep side index (:mod:`thresher.index.sqlite_files`):
nothing is locked or written.
A chunk is rebuilt by :func:`thresher.index.records.chunk_from_record`, exactly as
from chromadb's answer.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from thresher.corpus.document import Chunk
from thresher.index.records import chunk_from_record
from thresher.index.sqlite_files import ThreadConnections, read_meta

__all__ = ["RECORDS", "SavedRecords", "save_records"]

RECORDS = "records.sqlite3"
_FORMAT = "1"
_PAGE = 5000
_ASK = 500  # ids per SELECT (well under SQLite's bound on parameters)


def save_records(collection: Any, folder: Path) -> int:
    """Write every record of the chromadb ``collection`` into ``folder`` (:data:`RECORDS`,
    written under a temporary name and renamed); returns how many."""
    target = folder / RECORDS
    temp = folder / f"{RECORDS}.tmp-{os.getpid()}"
    temp.unlink(missing_ok=True)
    db = sqlite3.connect(temp)
    count = 0
    try:
        db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
            "CREATE TABLE record(id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, document TEXT,"
            " metadata TEXT NOT NULL) WITHOUT ROWID;"
        )
        offset = 0
        while True:
            page = collection.get(include=["documents", "metadatas"], limit=_PAGE, offset=offset)
            if not page["ids"]:
                break
            rows = [
                (cid, str((meta or {}).get("doc_id", "")), text, json.dumps(meta or {}))
                for cid, text, meta in zip(
                    page["ids"], page["documents"], page["metadatas"], strict=True
                )
            ]
            db.executemany("INSERT INTO record VALUES (?, ?, ?, ?)", rows)
            count += len(rows)
            offset += len(rows)
        db.execute("CREATE INDEX record_doc ON record(doc_id)")
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)", [("format", _FORMAT), ("count", str(count))]
        )
        db.commit()
    finally:
        db.close()
    os.replace(temp, target)
    return count


class SavedRecords:
    """A read-only handle on one ``records.sqlite3`` (thread-safe: one connection per thread)."""

    def __init__(self, path: Path, count: int) -> None:
        self.path = path
        self.count = count
        self._connections = ThreadConnections(path)

    @classmethod
    def open(cls, folder: Path | None, count: int) -> SavedRecords | None:
        """The records saved in ``folder``, or None when there are none, they are of
        another format, damaged, or hold another number of chunks than ``count``."""
        if folder is None:
            return None
        meta = read_meta(folder / RECORDS)
        if meta is None or meta.get("format") != _FORMAT or meta.get("count") != str(count):
            return None
        return cls(folder / RECORDS, count)

    def _db(self) -> sqlite3.Connection:
        return self._connections.get()

    def chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        """The chunks with these ids (unknown ids are left out)."""
        out: dict[str, Chunk] = {}
        db = self._db()
        for start in range(0, len(ids), _ASK):
            part = list(ids[start : start + _ASK])
            marks = ",".join("?" * len(part))
            rows = db.execute(
                f"SELECT id, document, metadata FROM record WHERE id IN ({marks})", part
            ).fetchall()
            for cid, text, meta in rows:
                out[cid] = chunk_from_record(cid, text, json.loads(meta))
        return out

    def document(self, doc_id: str) -> list[Chunk]:
        """Every chunk of ``doc_id`` (any order; empty when it has none)."""
        rows = (
            self._db()
            .execute("SELECT id, document, metadata FROM record WHERE doc_id = ?", (doc_id,))
            .fetchall()
        )
        return [chunk_from_record(cid, text, json.loads(meta)) for cid, text, meta in rows]
