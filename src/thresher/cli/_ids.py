"""Finding the id a person meant: near misses and filesystem paths (``thresher read``)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

__all__ = ["near_ids", "id_of_path"]


def near_ids(wanted: str, known: Sequence[str], n: int = 3) -> list[str]:
    """Up to ``n`` ids of ``known`` close to ``wanted`` (:func:`difflib.get_close_matches`),
    also matching on the last path segment (``beta.md`` finds ``sub/beta.md``)."""
    close = difflib.get_close_matches(wanted, known, n=n, cutoff=0.6)
    tail = wanted.rsplit("/", 1)[-1]
    by_tail = [k for k in known if k.rsplit("/", 1)[-1] == tail and k not in close]
    return (close + by_tail)[:n]


def id_of_path(text: str, known: Sequence[str]) -> str | None:
    """The document id a filesystem path was indexed under, when it can be told.

    A file's id is its path relative to the folder named at ingest (maybe with a
    label before it), so the id is a tail of the path: the longest tail of
    ``text`` (as written, then resolved) that is a known id.
    """
    path = Path(text)
    if not path.is_file():
        return None
    ids = set(known)
    for parts in (path.parts, path.resolve().parts):
        for start in range(len(parts)):
            tail = "/".join(parts[start:])
            if tail in ids:
                return tail
    return None
