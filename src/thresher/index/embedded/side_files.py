"""The files of a generation, as committed: sizes and checksums, checked when read.

At commit every file of a generation but its manifest (``chroma/``, ``bm25/``,
``grep.sqlite3``) is listed in ``files.json`` with its size and SHA-256
(:func:`record_files`). Opening checks what is cheap, that every listed file is
there with its size (:func:`check_sizes`: a ``stat`` each), and the checksums of
the files it reads whole anyway: the BM25 id map (:data:`ID_MAP`: a map rotated
consistently keeps every size and returns other documents) and, when a read copy
is made from it. chromadb's own files (``chroma/``) are not listed: chromadb
keeps writing them after the commit (its log applied to the vector segments, its
database's write-ahead log checkpointed), so their bytes and sizes are its own
to change; opening checks only that its database is there and is an SQLite
file (:func:`check_chroma`). A listing that names them, as the first listings
did, is read without them. A mismatch is an
:class:`~thresher.errors.IndexDamagedError`: one line naming the file and the fix
(re-index). A generation committed before ``files.json`` existed has none and is
opened unchecked, as before.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from thresher.errors import IndexDamagedError

__all__ = [
    "FILES",
    "ID_MAP",
    "FileRecord",
    "record_files",
    "read_files",
    "check_sizes",
    "verify",
]

FILES = "files.json"
#: the BM25 id map's files (position -> chunk id) a reader maps, checked by checksum at
#: every open (``ids.json``, kept for older readers, is size-checked only)
ID_MAP = ("bm25/ids.utf8", "bm25/ids.offsets.npy", "bm25/ids.sorted.npy")
_UNLISTED = frozenset({"manifest.json", FILES})


CHROMA = "chroma/"
_SQLITE_MAGIC = b"SQLite format 3\x00"


def _listed(rel: str) -> bool:
    """Whether a generation's file (path relative to it) is listed: all but the
    manifest, the listing and chromadb's files (chromadb rewrites them)."""
    return rel not in _UNLISTED and not rel.startswith(CHROMA)


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One committed file: its size in bytes and the SHA-256 of its bytes (hex)."""

    size: int
    sha256: str


def _digest(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def record_files(generation: Path) -> dict[str, FileRecord]:
    """List every file of ``generation`` (but the manifest) in its ``files.json``
    (written and fsynced); returns the listing, by path relative to the generation."""
    files: dict[str, FileRecord] = {}
    for folder, _dirs, names in os.walk(generation):
        for name in names:
            path = Path(folder) / name
            rel = path.relative_to(generation).as_posix()
            if _listed(rel):
                files[rel] = FileRecord(path.stat().st_size, _digest(path))
    data = {rel: {"size": r.size, "sha256": r.sha256} for rel, r in sorted(files.items())}
    with (generation / FILES).open("w", encoding="utf-8") as fh:
        json.dump({"files": data}, fh, indent=0)
        fh.flush()
        os.fsync(fh.fileno())
    return files


def _damaged(generation: Path, what: str) -> IndexDamagedError:
    index_dir = generation.parent
    return IndexDamagedError(
        f"the index at {index_dir} is damaged: {generation.name}/{what}; "
        f"rebuild it with `thresher index PATH --index {index_dir}`"
    )


def read_files(generation: Path) -> dict[str, FileRecord] | None:
    """The listing of ``generation`` (None: committed before listings were kept).

    Raises:
        IndexDamagedError: ``files.json`` is there but unreadable.
    """
    path = generation / FILES
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise _damaged(generation, f"{FILES} is unreadable ({exc})") from exc
    try:
        return {
            rel: FileRecord(int(r["size"]), str(r["sha256"]))
            for rel, r in json.loads(text)["files"].items()
            if _listed(rel)
        }
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _damaged(generation, f"{FILES} is unreadable ({exc})") from exc


def check_sizes(generation: Path, files: Mapping[str, FileRecord]) -> None:
    """Every listed file is there with its committed size (a ``stat`` each).

    Raises:
        IndexDamagedError: naming the first file missing or of another size.
    """
    for rel, record in files.items():
        try:
            size = os.stat(generation / rel).st_size
        except OSError:
            raise _damaged(generation, f"{rel} is missing") from None
        if size != record.size:
            raise _damaged(generation, f"{rel} has {size} bytes, {record.size} when it was written")


def check_chroma(generation: Path) -> None:
    """The generation's chromadb database is there and starts as an SQLite file.

    Raises:
        IndexDamagedError: ``chroma/chroma.sqlite3`` is missing, unreadable or not SQLite.
    """
    rel = f"{CHROMA}chroma.sqlite3"
    try:
        with (generation / rel).open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError:
        raise _damaged(generation, f"{rel} is missing or unreadable") from None
    if head != _SQLITE_MAGIC:
        raise _damaged(generation, f"{rel} is not an SQLite database")


def verify(generation: Path, files: Mapping[str, FileRecord], names: Iterable[str]) -> None:
    """The listed files among ``names`` (paths relative to the generation, or folders
    ending in ``/``) hold the bytes they were committed with.

    Raises:
        IndexDamagedError: naming the first file whose checksum differs (or missing).
    """
    wanted = list(names)
    for rel, record in files.items():
        if not any(rel == n or (n.endswith("/") and rel.startswith(n)) for n in wanted):
            continue
        try:
            digest = _digest(generation / rel)
        except OSError:
            raise _damaged(generation, f"{rel} is missing or unreadable") from None
        if digest != record.sha256:
            raise _damaged(generation, f"{rel} is not the file that was written (checksum)")
