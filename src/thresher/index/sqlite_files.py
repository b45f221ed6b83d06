"""Read-only SQLite side files: immutable connections, one per thread.

The grep side index (:mod:`thresher.index.grep.side_index`) and the saved chunk
records (:mod:`thresher.index.embedded.records_file`) are SQLite files written
once, under a temporary name then renamed, and afterwards only read, by several
threads at a time. Both open them the same way: ``mode=ro&immutable=1`` (nothing is
locked or written, so a read-only folder works), one connection per thread, and a
``meta(key, value)`` table that says which format and how many chunks a file holds.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

__all__ = ["ThreadConnections", "connect_immutable", "read_meta"]


def connect_immutable(path: Path) -> sqlite3.Connection:
    """A read-only connection to ``path`` that takes no lock and writes nothing."""
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


def read_meta(path: Path) -> dict[str, str] | None:
    """The ``meta`` table of the file at ``path``; None when it is missing or damaged."""
    if not path.is_file():
        return None
    try:
        db = connect_immutable(path)
        try:
            return dict(db.execute("SELECT key, value FROM meta").fetchall())
        finally:
            db.close()
    except sqlite3.Error:
        return None


class ThreadConnections:
    """One immutable connection to ``path`` per thread, opened on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        """This thread's connection."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = connect_immutable(self.path)
        return db

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
