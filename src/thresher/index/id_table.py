"""Chunk ids on disk, memory-mapped: a million ids open in milliseconds and share pages.

Three files beside the BM25 index (``ids.json`` is kept too, for older readers):

- ``ids.utf8``: every id's UTF-8 bytes, one after another, in corpus order;
- ``ids.offsets.npy``: int64 offsets into it (``n + 1`` of them);
- ``ids.sorted.npy``: the positions ordered by id (UTF-8 byte order is code point
  order), for looking a position up by id with a binary search.

:class:`IdTable` is a ``Sequence[str]`` (position -> id) and :meth:`IdTable.positions`
a ``Mapping[str, int]`` (id -> position); both read the mapped files on demand.
A table remembers the positions it has found and the ids it has decoded (at most
:data:`FOUND_MAX` of each): the same few thousand ids come back on every search and
every episode, and a dict lookup costs a fraction of a binary search through the
mapped bytes, or of slicing and decoding them.
"""

from __future__ import annotations

import json
import mmap
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import cast, overload

import numpy as np

__all__ = ["IdTable", "save_ids", "load_ids", "names_at", "positions_of"]

_DATA, _OFFSETS, _SORTED = "ids.utf8", "ids.offsets.npy", "ids.sorted.npy"
#: the most positions a table remembers (about 100 bytes each)
FOUND_MAX = 200_000


def save_ids(folder: Path, ids: Sequence[str]) -> None:
    """Write ``ids`` (corpus order) as an id table and as ``ids.json``."""
    encoded = [cid.encode("utf-8") for cid in ids]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    (folder / _DATA).write_bytes(b"".join(encoded))
    np.save(folder / _OFFSETS, offsets)
    np.save(folder / _SORTED, np.asarray(sorted(range(len(encoded)), key=encoded.__getitem__)))
    (folder / "ids.json").write_text(json.dumps(list(ids)), encoding="utf-8")


def load_ids(folder: Path) -> IdTable | None:
    """The id table in ``folder``, memory-mapped; None when it has none (an older index)."""
    if not all((folder / name).is_file() for name in (_DATA, _OFFSETS, _SORTED)):
        return None
    return IdTable(folder)


class IdTable(Sequence[str]):
    """Chunk ids by position, read from the mapped files."""

    def __init__(self, folder: Path) -> None:
        # offsets and order in memory (16 bytes a chunk: a lookup is one index, not a page
        # fault through numpy's memmap); the ids' bytes stay mapped
        self._offsets = np.load(folder / _OFFSETS)
        self._sorted = np.load(folder / _SORTED)
        self._n = len(self._offsets) - 1
        # id -> position of the ids found so far (the files never change: never stale;
        # a dict's get and set are atomic, so readers on several threads may share it)
        self._found: dict[str, int] = {}
        # position -> id of the positions read so far (the same sharing rules)
        self._names: dict[int, str] = {}
        with (folder / _DATA).open("rb") as fh:
            size = (folder / _DATA).stat().st_size
            self._data: bytes | mmap.mmap = (
                mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            )

    def __len__(self) -> int:
        return self._n

    def _bytes(self, i: int) -> bytes:
        start, end = self._offsets[i : i + 2].tolist()
        return self._data[start:end]

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += self._n
        name = self._names.get(i)
        if name is not None:
            return name
        if not 0 <= i < self._n:
            raise IndexError(i)
        name = self._bytes(i).decode("utf-8")
        if len(self._names) < FOUND_MAX:
            self._names[i] = name
        return name

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def take(self, positions: Sequence[int]) -> list[str]:
        """The ids at ``positions`` (``table[i]`` for each), the remembered ones looked up
        in one pass without a Python call per id."""
        names: list[str | None] = list(map(self._names.get, positions))
        if None in names:
            for j, (i, name) in enumerate(zip(positions, names, strict=True)):
                if name is None:
                    names[j] = self[i]
        return cast("list[str]", names)

    def find_all(self, chunk_ids: Iterable[str]) -> list[int | None]:
        """:meth:`find` of each of ``chunk_ids``, in order, the remembered ones looked up
        in one pass without a Python call per id."""
        asked = chunk_ids if isinstance(chunk_ids, list) else list(chunk_ids)
        found: list[int | None] = list(map(self._found.get, asked))
        if None in found:
            for j, (chunk_id, at) in enumerate(zip(asked, found, strict=True)):
                if at is None and isinstance(chunk_id, str):
                    found[j] = self.find(chunk_id)
        return found

    def find(self, chunk_id: str) -> int | None:
        """The position of ``chunk_id``, or None (remembered, else a binary search over
        the sorted order)."""
        found = self._found.get(chunk_id)
        if found is not None:
            return found
        found = self._search(chunk_id)
        if found is not None and len(self._found) < FOUND_MAX:
            self._found[chunk_id] = found
        return found

    def _search(self, chunk_id: str) -> int | None:
        key = chunk_id.encode("utf-8")
        low, high = 0, len(self)
        while low < high:
            mid = (low + high) // 2
            if self._bytes(int(self._sorted[mid])) < key:
                low = mid + 1
            else:
                high = mid
        if low < len(self) and self._bytes(int(self._sorted[low])) == key:
            return int(self._sorted[low])
        return None

    def starting_with(self, prefix: str) -> list[int]:
        """The positions of the ids that start with ``prefix``, in id order (a binary
        search to the first, then the run of ids after it in the sorted order)."""
        key = prefix.encode("utf-8")
        low, high = 0, len(self)
        while low < high:
            mid = (low + high) // 2
            if self._bytes(int(self._sorted[mid])) < key:
                low = mid + 1
            else:
                high = mid
        out: list[int] = []
        while low < len(self):
            at = int(self._sorted[low])
            if not self._bytes(at).startswith(key):
                break
            out.append(at)
            low += 1
        return out

    def positions(self) -> Mapping[str, int]:
        """Chunk id -> position, looked up in the table."""
        return _Positions(self)


def names_at(ids: Sequence[str], positions: Sequence[int]) -> list[str]:
    """``[ids[i] for i in positions]``, through :meth:`IdTable.take` for a table."""
    if isinstance(ids, IdTable):
        return ids.take(positions)
    return list(map(ids.__getitem__, positions))


def positions_of(positions: Mapping[str, int], chunk_ids: Iterable[str]) -> list[int | None]:
    """``[positions.get(c) for c in chunk_ids]``, through :meth:`IdTable.find_all` for a
    table's :meth:`IdTable.positions`."""
    if isinstance(positions, _Positions):
        return positions.table.find_all(chunk_ids)
    return list(map(positions.get, chunk_ids))


class _Positions(Mapping[str, int]):
    def __init__(self, table: IdTable) -> None:
        self._table = table

    @property
    def table(self) -> IdTable:
        return self._table

    def __getitem__(self, chunk_id: str) -> int:
        found = self._table.find(chunk_id) if isinstance(chunk_id, str) else None
        if found is None:
            raise KeyError(chunk_id)
        return found

    def get(self, chunk_id: str, default: int | None = None) -> int | None:  # type: ignore[override]
        found = self._table.find(chunk_id) if isinstance(chunk_id, str) else None
        return default if found is None else found

    def __contains__(self, chunk_id: object) -> bool:
        return isinstance(chunk_id, str) and self._table.find(chunk_id) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)
