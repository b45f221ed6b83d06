"""The grep side index: chunk texts in corpus order and a trigram index over them.

One SQLite file (``grep.sqlite3``, Python's own ``sqlite3``), written once with
the generation and only read afterwards:

- ``chunk(pos, text)``: each chunk's text (what chromadb's ``$regex`` searches),
  ``pos`` being its place in corpus order;
- ``grams``: an FTS5 table (``tokenize='trigram'``, positions kept, no content)
  over each text in the form of :func:`thresher.index.grep.plan.indexed_form`,
  its rowid the chunk's ``pos``;
- ``meta``: the format, the normal form's version and the chunk count.

Readers open it with ``immutable=1``: no lock, no journal, nothing written, so
read-only folders work. :func:`grep_indexed` uses it to
answer most patterns without reading every text, and :func:`scan_texts` checks
every text when it cannot.
"""

from __future__ import annotations

import functools
import itertools
import os
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from thresher.config import GrepConfig
from thresher.index.grep.guard import bounded, rust_pattern
from thresher.index.grep.plan import (
    Query,
    checking_pattern,
    fts_query,
    has_unknown_characters,
    indexed_form,
    required_trigrams,
)
from thresher.index.sqlite_files import ThreadConnections, read_meta

__all__ = ["GrepIndex", "FILE", "grep_indexed", "scan_texts"]

FILE = "grep.sqlite3"
_FORMAT = "2"  # 2: positions kept (detail=full), queried by phrase
_NORMAL_FORM = "1"  # bumped when normalize() changes: older side indexes are then ignored
_BATCH = 2000
_CHECK_BATCH = 256  # candidates read and checked at a time
_VERIFY_BUDGET = 50_000  # candidates checked at most before chromadb's scan answers instead
_TEXT_TIMEOUT_S = 0.25  # the longest the check of one text may take


class GrepIndex:
    """A read-only handle on one ``grep.sqlite3`` (thread-safe: one connection per thread)."""

    def __init__(self, path: Path, count: int) -> None:
        self.path = path
        self.count = count
        self._connections = ThreadConnections(path)

    @staticmethod
    def build(path: str | Path, texts: Iterable[str]) -> int:
        """Write the side index of ``texts`` (corpus order) to ``path``; returns the count.

        Written to a temporary file and renamed, so a reader never sees half of one.
        """
        target = Path(path)
        temp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
        temp.unlink(missing_ok=True)
        db = sqlite3.connect(temp)
        try:
            db.executescript(
                "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                "CREATE TABLE chunk(pos INTEGER PRIMARY KEY, text TEXT NOT NULL);"
                "CREATE VIRTUAL TABLE grams USING fts5(shape, content='', detail=full,"
                " tokenize='trigram case_sensitive 1');"
            )
            count = 0
            batch: list[tuple[int, str]] = []
            for text in texts:
                batch.append((count, text))
                count += 1
                if len(batch) >= _BATCH:
                    _insert(db, batch)
                    batch = []
            _insert(db, batch)
            db.execute("INSERT INTO grams(grams) VALUES('optimize')")
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [("format", _FORMAT), ("normal_form", _NORMAL_FORM), ("count", str(count))],
            )
            db.commit()
        finally:
            db.close()
        with open(temp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(temp, target)
        return count

    @classmethod
    def open(cls, path: str | Path, count: int) -> GrepIndex | None:
        """The side index at ``path``, or None when it is missing, of another format, or
        holds another number of chunks than ``count`` (then grep scans with chromadb)."""
        target = Path(path)
        meta = read_meta(target)
        if meta is None:
            return None
        fits = meta.get("format") == _FORMAT and meta.get("normal_form") == _NORMAL_FORM
        if not fits or meta.get("count") != str(count):
            return None
        return cls(target, count)

    def _db(self) -> sqlite3.Connection:
        return self._connections.get()

    def candidates(self, query: Query) -> Iterator[int]:
        """Positions (ascending) of the chunks whose text may satisfy ``query``; every
        position when ``query`` is None."""
        if query is None:
            yield from range(self.count)
            return
        match = fts_query(query)
        if "\x00" in match:  # FTS5 cannot take a NUL in a string: every chunk is a candidate
            yield from range(self.count)
            return
        cursor = self._db().execute(
            "SELECT rowid FROM grams WHERE grams MATCH ? ORDER BY rowid", (match,)
        )
        while rows := cursor.fetchmany(_BATCH):
            for (pos,) in rows:
                yield pos

    def texts(self, positions: Sequence[int]) -> list[tuple[int, str]]:
        """``(pos, text)`` of the chunks at ``positions`` (ascending), in that order."""
        if not positions:
            return []
        low, high = positions[0], positions[-1]
        db = self._db()
        if high - low + 1 <= 2 * len(positions):  # dense: one range read
            rows = db.execute(
                "SELECT pos, text FROM chunk WHERE pos BETWEEN ? AND ? ORDER BY pos", (low, high)
            ).fetchall()
            wanted = set(positions)
            return [r for r in rows if r[0] in wanted]
        marks = ",".join("?" * len(positions))
        return db.execute(
            f"SELECT pos, text FROM chunk WHERE pos IN ({marks}) ORDER BY pos", list(positions)
        ).fetchall()

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        self._connections.close()


def _insert(db: sqlite3.Connection, batch: list[tuple[int, str]]) -> None:
    db.executemany("INSERT INTO chunk VALUES (?, ?)", batch)
    db.executemany(
        "INSERT INTO grams(rowid, shape) VALUES (?, ?)", [(p, indexed_form(t)) for p, t in batch]
    )


class _Unsure(Exception):
    """The fast path cannot answer for this pattern or text: scan with chromadb."""


@functools.lru_cache(maxsize=256)
def _checker(pattern: str) -> Any:
    import regex

    try:
        return regex.compile(checking_pattern(pattern), regex.V0)
    except (ValueError, regex.error) as exc:
        raise _Unsure(str(exc)) from exc


def grep_indexed(
    index: GrepIndex,
    ids: Sequence[str],
    pattern: str,
    config: GrepConfig,
    limit: int,
    exclude: Collection[str],
    scan: Callable[[], tuple[list[str], int]],
) -> tuple[list[str], int, bool]:
    """Grep through the side index: candidates by trigram, each checked by the ``regex``
    module as chromadb's engine would (:func:`thresher.index.grep.plan.checking_pattern`).

    Candidates are read in corpus order; counting stops once ``limit`` hits are found
    and ``config.count_cap`` chunks have matched (then more may match: ``capped``).
    ``scan`` (chromadb's full scan, exact) answers instead when the pattern cannot be
    checked here, a candidate holds a character Python's Unicode database does not
    know, the check of one text runs too long, or more than ``_VERIFY_BUDGET``
    candidates would be read.

    Args:
        index: the side index; ``ids[pos]`` is the chunk id at each position.
        pattern: the user's pattern (Python syntax; checked by the guard first).
        config: the guard's bounds, ``timeout_s`` and ``count_cap``.
        limit, exclude: as for :func:`thresher.index.grep.guard.grep_ids`.
        scan: the exact fallback; returns (first ``limit`` ids, total).

    Returns:
        (matching chunk ids in corpus order, at most ``limit``; how many matched,
        after exclusion; whether counting stopped early).

    Raises:
        PatternRejectedError: refused by the guard, or the search ran longer than
            ``config.timeout_s``.
    """
    rust_pattern(pattern, config)  # the guard: refuses what chromadb would read otherwise

    def run() -> tuple[list[str], int, bool] | None:
        try:
            checker = _checker(pattern)
            return _check_candidates(
                index,
                ids,
                checker,
                pattern,
                config,
                limit,
                exclude if isinstance(exclude, AbstractSet) else set(exclude),
            )
        except _Unsure:
            return None

    found = bounded(run, config.timeout_s, pattern)
    if found is not None:
        return found
    hits, total = scan()
    return hits, total, False


def scan_texts(index: GrepIndex, ids: Sequence[str], pattern: str) -> list[str]:
    """The ids (``ids[pos]``) of every chunk whose text matches ``pattern`` (Python syntax,
    checked by the guard first), each text checked by the ``regex`` module as Rust's
    engine would read it (:func:`thresher.index.grep.plan.checking_pattern`): the exact
    scan :func:`grep_indexed` falls back on, run under the caller's time bound.

    Raises:
        PatternRejectedError: the ``regex`` module cannot read the pattern.
    """
    from thresher.errors import PatternRejectedError

    try:
        checker = _checker(pattern)
    except _Unsure as exc:
        raise PatternRejectedError(
            f"grep pattern {pattern!r} cannot be checked ({exc}); simplify it"
        ) from exc
    out: list[str] = []
    for start in range(0, index.count, _BATCH):
        rows = index.texts(list(range(start, min(start + _BATCH, index.count))))
        out.extend(ids[pos] for pos, text in rows if checker.search(text) is not None)
    return out


def _check_candidates(
    index: GrepIndex,
    ids: Sequence[str],
    checker: Any,
    pattern: str,
    config: GrepConfig,
    limit: int,
    excluded: AbstractSet[str],
) -> tuple[list[str], int, bool]:
    cap = max(config.count_cap, 1)
    want = max(limit, 0)
    hits: list[str] = []
    count = read = 0
    candidates = index.candidates(required_trigrams(pattern))
    while batch := list(itertools.islice(candidates, _CHECK_BATCH)):
        read += len(batch)
        if read > _VERIFY_BUDGET:
            raise _Unsure("too many candidates")
        rows = index.texts(batch)
        if has_unknown_characters("\n".join(text for _, text in rows)):  # one look a batch
            raise _Unsure("a character Python's Unicode database does not know")
        for n, (pos, text) in enumerate(rows, start=1):
            try:
                matched = checker.search(text, timeout=_TEXT_TIMEOUT_S) is not None
            except TimeoutError as exc:
                raise _Unsure("the check of one text ran too long") from exc
            if not matched or ids[pos] in excluded:
                continue
            count += 1
            if len(hits) < want:
                hits.append(ids[pos])
            if count >= cap and len(hits) >= want:
                more = n < len(rows) or next(candidates, None) is not None
                return hits, count, more
    return hits, count, False
