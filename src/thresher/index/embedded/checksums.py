"""The files of a generation, as committed: sizes and checksums, checked when read.

At commit every file of a generation but its manifest is listed in ``files.json``
with its size and SHA-256 (:func:`record_files`). Opening checks what is cheap:
that every listed file is there with its size (:func:`check_sizes`: a ``stat``
each), and the checksums of the BM25 id map (:data:`ID_MAP`: a map rotated
consistently keeps every size and returns other documents). A mismatch, or a
generation without a listing, is an :class:`~thresher.errors.IndexDamagedError`:
one line naming the file and the fix (re-index).
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
#: every open (``ids.json`` is size-checked only)
ID_MAP = ("bm25/ids.utf8", "bm25/ids.offsets.npy", "bm25/ids.sorted.npy")
_UNLISTED = frozenset({"manifest.json", FILES})


def _listed(rel: str) -> bool:
    """Whether a generation's file (path relative to it) is listed: all but the
    manifest and the listing."""
    return rel not in _UNLISTED


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
    """The listing of ``generation`` (None: it has none).

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
