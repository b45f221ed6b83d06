"""A generation's chunk records: ``records.sqlite3``, the embedded index's chunks.

One SQLite file (Python's own ``sqlite3``), written once with the generation and
only read afterwards:

- ``record(pos, id, doc_id, document, metadata)``: each chunk's place in corpus
  order, its id, its document's id, its text and its flat metadata as JSON
  (:func:`thresher.index.records.chunk_metadata`, keys in that order); indexes on
  ``id`` and ``doc_id`` serve reads by chunk and by document;
- ``meta``: the format and the chunk count.

Readers open it with ``immutable=1`` (:mod:`thresher.index.sqlite_files`): nothing is
locked or written, so read-only folders work. A chunk is rebuilt by
:func:`thresher.index.records.chunk_from_record`; a ``where`` is evaluated on the
stored metadata (:mod:`thresher.index.embedded.where`).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from thresher.corpus.document import Chunk
from thresher.index.embedded.where import matches
from thresher.index.records import chunk_from_record
from thresher.index.sqlite_files import ThreadConnections, read_meta

__all__ = ["RECORDS", "Row", "RecordsFile", "write_records"]

RECORDS = "records.sqlite3"
_FORMAT = "3"  # 3: rows in corpus order, the embedded index's own records
_ASK = 500  # ids per SELECT (well under SQLite's bound on parameters)
_BATCH = 5000

#: one stored chunk: id, doc_id, text, metadata as JSON
Row = tuple[str, str, str, str]


def write_records(path: Path, rows: Iterable[Row]) -> int:
    """Write ``rows`` (corpus order) into ``path`` (under a temporary name, then renamed);
    returns how many."""
    temp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    temp.unlink(missing_ok=True)
    db = sqlite3.connect(temp)
    count = 0
    try:
        db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
            "CREATE TABLE record(pos INTEGER PRIMARY KEY, id TEXT NOT NULL, doc_id TEXT NOT NULL,"
            " document TEXT NOT NULL, metadata TEXT NOT NULL);"
        )
        batch: list[tuple[int, str, str, str, str]] = []
        for row in rows:
            batch.append((count, *row))
            count += 1
            if len(batch) >= _BATCH:
                db.executemany("INSERT INTO record VALUES (?, ?, ?, ?, ?)", batch)
                batch = []
        db.executemany("INSERT INTO record VALUES (?, ?, ?, ?, ?)", batch)
        db.execute("CREATE UNIQUE INDEX record_id ON record(id)")
        db.execute("CREATE INDEX record_doc ON record(doc_id)")
        db.executemany(
            "INSERT INTO meta VALUES (?, ?)", [("format", _FORMAT), ("count", str(count))]
        )
        db.commit()
    finally:
        db.close()
    os.replace(temp, path)
    return count


class RecordsFile:
    """A read-only handle on one ``records.sqlite3`` (thread-safe: one connection per thread)."""

    def __init__(self, path: Path, count: int) -> None:
        self.path = path
        self.count = count
        self._connections = ThreadConnections(path)

    @classmethod
    def open(cls, path: Path, count: int) -> RecordsFile | None:
        """The records at ``path``, or None when they are missing, of another format,
        damaged, or hold another number of chunks than ``count``."""
        meta = read_meta(path)
        if meta is None or meta.get("format") != _FORMAT or meta.get("count") != str(count):
            return None
        return cls(path, count)

    def _db(self) -> sqlite3.Connection:
        return self._connections.get()

    def chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        """The chunks with these ids (unknown ids are left out)."""
        out: dict[str, Chunk] = {}
        for cid, _doc, text, meta in self.rows(ids):
            out[cid] = chunk_from_record(cid, text, json.loads(meta))
        return out

    def rows(self, ids: Sequence[str]) -> Iterator[Row]:
        """The stored rows of these ids (unknown ids are left out; any order)."""
        db = self._db()
        for start in range(0, len(ids), _ASK):
            part = list(ids[start : start + _ASK])
            marks = ",".join("?" * len(part))
            yield from db.execute(
                f"SELECT id, doc_id, document, metadata FROM record WHERE id IN ({marks})", part
            )

    def document(self, doc_id: str) -> list[Chunk]:
        """Every chunk of ``doc_id`` (any order; empty when it has none)."""
        rows = (
            self._db()
            .execute("SELECT id, document, metadata FROM record WHERE doc_id = ?", (doc_id,))
            .fetchall()
        )
        return [chunk_from_record(cid, text, json.loads(meta)) for cid, text, meta in rows]

    def matching(self, where: Mapping[str, Any]) -> set[str]:
        """The ids of the chunks whose metadata satisfies ``where``."""
        cursor = self._db().execute("SELECT id, metadata FROM record")
        out: set[str] = set()
        while rows := cursor.fetchmany(_BATCH):
            out.update(cid for cid, meta in rows if matches(where, json.loads(meta)))
        return out
